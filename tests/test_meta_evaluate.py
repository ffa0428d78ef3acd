"""``meta_evaluate``: its dict, its input errors, interval determinism and coverage, the permutation
comparisons against mt-metrics-eval's ``PermutationSigDiff`` (vendored under tests/reference) and
the ranks."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

import textgen_metrics
from textgen_metrics.meta.evaluate import meta_evaluate
from textgen_metrics.stats import resample

sys.path.insert(0, str(Path(__file__).parent / "reference"))
from mt_metrics_eval import stats as ref  # noqa: E402
from mt_metrics_eval.data_ranks import AssignRanks  # noqa: E402


def _grid(rng, n_sys=4, n_items=30, n_metrics=3, noise=1.0):
    h = rng.normal(size=(n_sys, n_items)) + rng.normal(size=(n_sys, 1))
    scores = {f"m{k}": (h + rng.normal(size=h.shape) * noise * (k + 1)).ravel().tolist() for k in range(n_metrics)}
    items = [i for _ in range(n_sys) for i in range(n_items)]
    systems = [f"s{s}" for s in range(n_sys) for _ in range(n_items)]
    return scores, h.ravel().tolist(), items, systems


# -- the dict ------------------------------------------------------------------------------------------

def test_result_shape_and_public_name():
    scores, human, items, systems = _grid(np.random.default_rng(0))
    scores["m1"][5] = None
    out = textgen_metrics.meta_evaluate(scores, {"quality": human}, items=items, systems=systems,
                                        statistics=("pearson", "acc_eq"), n_resamples=50, seed=3)
    assert out["rows"] == len(human)
    assert len(out["results"]) == 2 * 3 and len(out["comparisons"]) == 2 * 3
    for e in out["results"]:
        assert set(e) >= {"metric", "human", "level", "group_by", "statistic", "value", "ci", "n", "groups",
                          "groups_skipped", "missing", "rank"}
        assert e["human"] == "quality" and isinstance(e["value"], float) and e["ci"][0] <= e["value"] <= e["ci"][1]
        assert ("threshold" in e) == (e["statistic"] == "acc_eq")
        assert e["missing"] == (1 if e["metric"] == "m1" else 0)
        assert e["n"] == len(human) - e["missing"]
    for c in out["comparisons"]:
        assert c["delta"] >= 0 and 0 <= c["p_value"] <= 1
        assert set(c) == {"human", "level", "group_by", "statistic", "a", "b", "delta", "p_value"}


def test_undefined_value_is_none_with_reason_never_nan():
    out = meta_evaluate({"flat": [1.0] * 6, "ok": [1, 2, 3, 4, 5, 7]}, [1, 2, 3, 4, 5, 6], n_resamples=20, seed=1)
    flat = [e for e in out["results"] if e["metric"] == "flat"]
    assert all(e["value"] is None and e["ci"] is None and "constant" in e["reason"] and e["rank"] is None
               for e in flat)
    ok = [e for e in out["results"] if e["metric"] == "ok"]
    assert all(isinstance(e["value"], float) and not math.isnan(e["value"]) and e["rank"] == 1 for e in ok)
    assert out["comparisons"] == []  # only one metric has a value


def test_human_none_rows_unused_and_missing_counts_metric_only():
    out = meta_evaluate({"m": [1, None, 3, 4, 2]}, [1, 2, None, 4, 3], statistics="pearson", n_resamples=0)
    e = out["results"][0]
    assert e["n"] == 3 and e["missing"] == 1
    assert e["value"] == pytest.approx(scipy.stats.pearsonr([1, 4, 2], [1, 4, 3]).statistic)


def test_groups_counted_and_skipped():
    # item 0 constant in the human score, item 1 a single row: both skipped
    h = [1, 1, 1, 5, 2, 3, 4]
    m = [1, 2, 3, 5, 3, 1, 2]
    items = [0, 0, 0, 1, 2, 2, 2]
    e = meta_evaluate({"m": m}, h, items=items, group_by="item", statistics="pearson",
                      n_resamples=0)["results"][0]
    assert (e["groups"], e["groups_skipped"], e["n"]) == (1, 2, 3)
    assert e["value"] == pytest.approx(scipy.stats.pearsonr([2, 3, 4], [3, 1, 2]).statistic)


# -- bad input -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"scores": [1, 2]}, TypeError, "scores: expected a mapping"),
    ({"scores": {}}, ValueError, "scores: empty"),
    ({"scores": {"m": [1, 2, 3]}}, ValueError, "inputs differ in length (human=4, scores['m']=3)"),
    ({"items": [1, 2]}, ValueError, "items=2"),
    ({"scores": {"m": [1, "x", 3, 4]}}, TypeError, "scores['m'][1]: expected a number (or None for a missing score), "
                                                   "got str 'x'"),
    ({"scores": {"m": [1, 2, True, 4]}}, TypeError, "scores['m'][2]: expected a number"),
    ({"scores": {"m": [1, 2, 3, math.inf]}}, ValueError, "scores['m'][3]: inf is not a finite number"),
    ({"human": [1, 2, "good", 4]}, TypeError, "human[2]: expected a number"),
    ({"human": {"q": [1, 2, [3], 4]}}, TypeError, "human['q'][2]: expected a number"),
    ({"statistics": ("pearson", "tau")}, ValueError, "statistics: unknown statistic 'tau'; choose from pearson, "
                                                     "spearman, kendall, kendall_c"),
    ({"statistics": ()}, ValueError, "statistics: empty"),
    ({"level": "corpus"}, ValueError, "level: 'corpus' is not one of ['segment', 'system']"),
    ({"group_by": "doc"}, ValueError, "group_by: 'doc' is not one of ['none', 'item', 'system']"),
    ({"group_by": "item"}, ValueError, "group_by='item' needs items"),
    ({"group_by": "system"}, ValueError, "group_by='system' needs systems"),
    ({"statistics": "spa"}, ValueError, "statistics: 'spa' is a system-level statistic; pass level='system'"),
    ({"statistics": "pairwise_accuracy"}, ValueError, "'pairwise_accuracy' is a system-level statistic"),
    ({"level": "system", "items": [0, 0, 1, 1]}, ValueError, "level='system' needs items and systems (one per row): "
                                                             "systems missing"),
    ({"level": "system", "items": [0, 1, 0, 1], "systems": ["a", "a", "b", "b"], "group_by": "item"}, ValueError,
     "group_by: 'item' applies at segment level"),
    ({"level": "system", "items": [0, 0, 1, 1], "systems": ["a", "a", "b", "b"]}, ValueError,
     "items/systems: rows 0 and 1 have the same item and system"),
    ({"level": "system", "items": [0, 1, 0, 1], "systems": ["a", "a", "b", "b"], "statistics": "kappa"}, ValueError,
     "statistics: 'kappa' is a segment-level statistic; pass level='segment'"),
    ({"statistics": "partial_pearson"}, ValueError, "systems: 'partial_pearson' controls for the system; pass systems"),
    ({"statistics": "partial_spearman", "systems": list("aabb"), "items": [0, 1, 0, 1], "group_by": "item"},
     ValueError, "statistics: 'partial_spearman' controls for the system itself; pass group_by='none'"),
    ({"items": [0, None, 1, 1]}, ValueError, "items[1]: missing; every row needs one"),
    ({"systems": ["a", ["b"], "a", "b"]}, TypeError, "systems[1]: expected a string or number, got list"),
    ({"confidence_level": 1.0}, ValueError, "confidence_level: 1.0 must lie strictly between 0 and 1"),
    ({"n_resamples": -1}, ValueError, "n_resamples: -1 must be a non-negative integer"),
    ({"n_resamples": 10.0}, ValueError, "n_resamples: 10.0 must be a non-negative integer"),
    ({"seed": "x"}, TypeError, "seed: expected an integer or None, got str"),
    ({"human": "1234"}, TypeError, "human: expected a list with one value per row, got str"),
])
def test_bad_input_errors_name_argument_and_row(kwargs, error, message):
    args = {"scores": {"m": [1, 2, 3, 4]}, "human": [1, 2, 4, 3]}
    args.update(kwargs)
    scores, human = args.pop("scores"), args.pop("human")
    with pytest.raises(error) as info:
        meta_evaluate(scores, human, **args)
    assert message in str(info.value)


def test_label_statistics_take_labels_and_reject_them_for_numbers():
    out = meta_evaluate({"judge": ["yes", "no", "yes", "yes"]}, ["yes", "no", "no", "yes"],
                        statistics=("accuracy", "kappa"), n_resamples=0)
    assert [e["value"] for e in out["results"]] == [0.75, pytest.approx(0.5)]
    with pytest.raises(TypeError, match=r"scores\['judge'\]\[0\]: expected a number"):
        meta_evaluate({"judge": ["yes", "no", "yes", "yes"]}, ["yes", "no", "no", "yes"],
                      statistics=("accuracy", "pearson"))


# -- intervals -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("level", "group_by", "stat"), [
    ("segment", "none", "pearson"), ("segment", "none", "kendall"), ("segment", "item", "spearman"),
    ("segment", "item", "acc_eq"), ("segment", "system", "pdp"), ("segment", "none", "partial_pearson"),
    ("system", "none", "pearson"), ("system", "none", "spa")])
def test_intervals_deterministic_with_seed(level, group_by, stat):
    scores, human, items, systems = _grid(np.random.default_rng(1), n_metrics=1)
    run = lambda seed, n=200: meta_evaluate(scores, human, items=items, systems=systems, level=level,  # noqa: E731
                                            group_by=group_by, statistics=stat, n_resamples=n, seed=seed,
                                            compare=False)["results"][0]
    first, again, other = run(7), run(7), run(8)
    assert first["ci"] == again["ci"] and first["ci"] != other["ci"]
    assert first["ci"][0] <= first["value"] <= first["ci"][1]
    if stat == "spa":  # its permutation count is n_permutations: its value needs no resample
        assert run(7, 0)["value"] == first["value"] and run(7, 0)["ci"] is None
    else:
        assert run(7, 0)["ci"] is None and run(7, 0)["value"] == first["value"]


def test_bootstrap_resamples_items_together():
    """A resample draws whole items: with group_by='item' it is the count-weighted mean of the
    per-item values, computed here by brute force on the first resamples."""
    scores, human, items, systems = _grid(np.random.default_rng(2), n_sys=5, n_items=12, n_metrics=1)
    per_item = []
    for i in range(12):
        rows = [r for r in range(len(items)) if items[r] == i]
        per_item.append(scipy.stats.kendalltau([human[r] for r in rows], [scores["m0"][r] for r in rows]).statistic)
    counts = next(resample.item_counts(12, 500, 5))
    boot = counts @ np.array(per_item) / counts.sum(axis=1)
    expected = resample.interval(boot, 0.9)
    out = meta_evaluate(scores, human, items=items, systems=systems, group_by="item", statistics="kendall",
                        n_resamples=500, seed=5, confidence_level=0.9, compare=False)["results"][0]
    assert out["ci"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("group_by", "stat"), [("none", "pearson"), ("system", "pearson"), ("none", "spearman"),
                                                 ("none", "kendall"), ("system", "kendall")])
def test_bootstrap_equals_materialised_resamples(group_by, stat):
    """Each resample's value (moments for Pearson, one batched call for ranks) equals the
    statistic on the resample's rows written out, an item's rows as often as it was drawn."""
    scores, human, items, systems = _grid(np.random.default_rng(3), n_sys=4, n_items=15, n_metrics=1)
    h, m = np.array(human), np.array(scores["m0"])
    item, system = np.array(items), np.array(systems)
    fn = {"pearson": scipy.stats.pearsonr, "spearman": scipy.stats.spearmanr, "kendall": scipy.stats.kendalltau}[stat]
    boot = []
    for counts in resample.item_counts(15, 300, 6):
        for row in counts:
            rows = np.concatenate([np.flatnonzero(item == i).repeat(int(c)) for i, c in enumerate(row)])
            if group_by == "none":
                boot.append(fn(h[rows], m[rows]).statistic)
            else:
                boot.append(np.mean([fn(h[rows][system[rows] == s], m[rows][system[rows] == s]).statistic
                                     for s in sorted(set(systems))]))
    out = meta_evaluate(scores, human, items=items, systems=systems, group_by=group_by, statistics=stat,
                        n_resamples=300, seed=6, compare=False)["results"][0]
    assert out["ci"] == pytest.approx(resample.interval(np.array(boot), 0.95), abs=1e-12)


def test_coverage_pearson_pooled():
    """95% intervals (500 resamples) of pooled Pearson on 120 items from a bivariate normal
    (rho 0.5) hold rho 93-97% of the time over 1000 simulated tables."""
    rng = np.random.default_rng(20)
    rho, n, sims = 0.5, 120, 1000
    data = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=(sims, n))
    hits = 0
    for s in range(sims):
        e = meta_evaluate({"m": data[s, :, 1].tolist()}, data[s, :, 0].tolist(), statistics="pearson",
                          n_resamples=500, seed=s, compare=False)["results"][0]
        hits += e["ci"][0] <= rho <= e["ci"][1]
    assert 0.93 <= hits / sims <= 0.97


def test_coverage_kendall_spearman_by_item():
    """Grouped by item (8 systems each, 120 items): the mean of per-item Kendall / Spearman has
    expectation 2/pi asin(rho) / (6/(pi(n+1)))(asin(rho) + (n-2) asin(rho/2)) (Moran 1948);
    its 95% intervals (500 resamples) hold it 93-97% of the time over 1000 simulated tables."""
    rng = np.random.default_rng(21)
    rho, n_sys, n_items, sims = 0.6, 8, 120, 1000
    truth = {"kendall": 2 / math.pi * math.asin(rho),
             "spearman": 6 / (math.pi * (n_sys + 1)) * (math.asin(rho) + (n_sys - 2) * math.asin(rho / 2))}
    items = [i for _ in range(n_sys) for i in range(n_items)]
    data = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=(sims, n_sys * n_items))
    hits = dict.fromkeys(truth, 0)
    for s in range(sims):
        out = meta_evaluate({"m": data[s, :, 1].tolist()}, data[s, :, 0].tolist(), items=items, group_by="item",
                            statistics=tuple(truth), n_resamples=500, seed=s, compare=False)
        for e in out["results"]:
            hits[e["statistic"]] += e["ci"][0] <= truth[e["statistic"]] <= e["ci"][1]
    for stat, count in hits.items():
        assert 0.93 <= count / sims <= 0.97, stat


# -- comparisons and ranks --------------------------------------------------------------------------------

PSD_GOLD = [1, 2, 3, 4, 5, 5, 7, 8]
PSD_M1 = [1, 2, 3, 3, 7, 3, 5, 5]
PSD_M2 = [2, 1, 2, 6, 8, 8, 7, 6]


@pytest.mark.parametrize(("group_by", "stat", "fn"), [
    ("none", "pearson", scipy.stats.pearsonr), ("system", "pearson", scipy.stats.pearsonr),
    ("item", "pearson", scipy.stats.pearsonr), ("item", "kendall", scipy.stats.kendalltau),
    ("none", "spearman", scipy.stats.spearmanr)])
def test_permutation_p_equals_permutation_sig_diff(group_by, stat, fn):
    """stats_test.PermutationSigDiffTest's table (4 systems x 2 items): the same p-value as
    PermutationSigDiff after numpy.random.seed(seed), with its early stop off."""
    items, systems = [0, 1] * 4, [s for s in range(4) for _ in range(2)]
    avg = {"none": "none", "item": "item", "system": "sys"}[group_by]
    corr1, corr2 = ref.Correlation(4, PSD_GOLD, PSD_M1), ref.Correlation(4, PSD_GOLD, PSD_M2)
    for seed in (0, 1):  # mt-metrics-eval's loop is slow: 400 draws each
        out = meta_evaluate({"m1": PSD_M1, "m2": PSD_M2}, PSD_GOLD, items=items, systems=systems,
                            group_by=group_by, statistics=stat, n_resamples=400, seed=seed)
        [c] = out["comparisons"]
        values = {e["metric"]: e["value"] for e in out["results"]}
        hi, lo = (corr2, corr1) if c["a"] == "m2" else (corr1, corr2)
        np.random.seed(seed)
        p, delta, k, _ = ref.PermutationSigDiff(lo, hi, fn, avg, 400, ref.PermutationSigDiffParams(block_size=400,
                                                                                                 early_min=-1,
                                                                                                 early_max=2))
        assert k == 400
        assert c["p_value"] == p
        assert c["delta"] == pytest.approx(delta, abs=1e-12) == pytest.approx(values[c["a"]] - values[c["b"]])


@pytest.mark.parametrize("group_by", ["none", "item"])
def test_pearson_moment_path_equals_permutation_sig_diff(group_by, monkeypatch):
    """Large tables' Pearson comparisons take the moment path (all pairs from one product; here
    forced from 40 rows): still PermutationSigDiff's p-values for the same seed."""
    from textgen_metrics.stats import statistic

    monkeypatch.setattr(statistic, "_FAST_ROWS", 40)
    rng = np.random.default_rng(33)
    h = rng.normal(size=(4, 15))
    scores = {f"m{k}": (h + rng.normal(size=h.shape) * (1 + 0.1 * k)).ravel().tolist() for k in range(3)}
    items, systems = [i for _ in range(4) for i in range(15)], [s for s in range(4) for _ in range(15)]
    out = meta_evaluate(scores, h.ravel().tolist(), items=items, systems=systems, group_by=group_by,
                        statistics="pearson", n_resamples=150, seed=4)
    corrs = {name: ref.Correlation(4, h.ravel().tolist(), values) for name, values in scores.items()}
    for c in out["comparisons"]:
        np.random.seed(4)
        p, delta, _, _ = ref.PermutationSigDiff(corrs[c["b"]], corrs[c["a"]], scipy.stats.pearsonr,
                                                {"none": "none", "item": "item"}[group_by], 150,
                                                ref.PermutationSigDiffParams(block_size=150, early_min=-1,
                                                                             early_max=2))
        assert c["p_value"] == p
        assert c["delta"] == pytest.approx(delta, abs=1e-12)
    assert any(0.02 < c["p_value"] < 0.98 for c in out["comparisons"])  # not only the trivial ends


def test_permutation_p_with_missing_uses_common_rows():
    rng = np.random.default_rng(30)
    h = rng.normal(size=60)
    a, b = (h + rng.normal(size=60)).tolist(), (h + 2 * rng.normal(size=60)).tolist()
    a[3], b[10] = None, None
    out = meta_evaluate({"a": a, "b": b}, h.tolist(), statistics="pearson", n_resamples=500, seed=9)
    [c] = out["comparisons"]
    keep = [i for i in range(60) if a[i] is not None and b[i] is not None]
    gold = [float(h[i]) for i in keep]
    ca, cb = ref.Correlation(1, gold, [a[i] for i in keep]), ref.Correlation(1, gold, [b[i] for i in keep])
    hi, lo = (ca, cb) if c["a"] == "a" else (cb, ca)
    np.random.seed(9)
    p, delta, _, _ = ref.PermutationSigDiff(lo, hi, scipy.stats.pearsonr, "none", 500,
                                            ref.PermutationSigDiffParams(block_size=500, early_min=-1, early_max=2))
    assert (c["p_value"], c["delta"]) == (p, pytest.approx(delta, abs=1e-12))


def test_acc_eq_pairs_test_is_consistent():
    """acc_eq compares by the pairs test (PairwisePermutationSigDiff): a clearly better metric
    gets a small p-value, two metrics equally good a large one, and mt-metrics-eval's
    own pairs test agrees in the conclusion (different random draws: not equal values)."""
    rng = np.random.default_rng(31)
    n_sys, n_items = 6, 40
    h = rng.integers(0, 5, (n_sys, n_items)).astype(float)
    good = (h + rng.normal(size=h.shape) * 0.5).round(1)
    bad = (h + rng.normal(size=h.shape) * 3).round(1)
    twin = (h + rng.normal(size=h.shape) * 0.5).round(1)  # as good as good
    items = [i for _ in range(n_sys) for i in range(n_items)]
    out = meta_evaluate({"good": good.ravel().tolist(), "bad": bad.ravel().tolist(), "twin": twin.ravel().tolist()},
                        h.ravel().tolist(), items=items, group_by="item", statistics="acc_eq", n_resamples=1000,
                        seed=2)
    p = {(c["a"], c["b"]): c["p_value"] for c in out["comparisons"]}
    gold = list(h.ravel())
    np.random.seed(0)
    ref_p, _, _, _ = ref.PairwisePermutationSigDiff(ref.Correlation(n_sys, gold, list(bad.ravel())),
                                                    ref.Correlation(n_sys, gold, list(good.ravel())), "acc23", "item",
                                                    k=200)
    assert ref_p < 0.05 and p[("good", "bad")] < 0.05
    twin_p = p.get(("good", "twin"), p.get(("twin", "good")))
    assert twin_p > 0.05
    ranks = {e["metric"]: e["rank"] for e in out["results"]}
    assert ranks["bad"] == 2 and ranks["good"] == ranks["twin"] == 1


def test_ranks_follow_assign_ranks_over_comparisons():
    rng = np.random.default_rng(32)
    for trial in range(4):
        scores, human, items, systems = _grid(rng, n_sys=3, n_items=40, n_metrics=5, noise=0.4)
        out = meta_evaluate(scores, human, items=items, systems=systems, statistics="pearson", n_resamples=300,
                            seed=trial)
        ordered = sorted(out["results"], key=lambda e: (-e["value"], e["metric"]))
        names = [e["metric"] for e in ordered]
        sig = np.zeros((5, 5))
        for c in out["comparisons"]:
            i, j = names.index(c["a"]), names.index(c["b"])
            assert i < j  # a is the higher-valued metric
            sig[i, j] = c["p_value"]
        assert [e["rank"] for e in ordered] == AssignRanks(sig, 0.05)
        assert len({e["rank"] for e in ordered}) > 1  # the noise levels differ enough to separate some


@pytest.mark.parametrize("stat", ["partial_pearson", "partial_spearman"])
def test_partial_correlations_batched_for_the_permutation_test_equal_the_point_statistic(stat):
    """The comparisons' batched partial correlation (every swap draw at once) gives each
    vector's partial correlation as the reported value computes it, ties and constants included."""
    import math

    from textgen_metrics.stats.statistic import STATISTICS, Rows

    rng = np.random.default_rng(11)
    n = 500
    systems = rng.integers(0, 7, n)
    h = rng.normal(size=n).round(1)
    batch = np.stack([h + rng.normal(size=n), (h + 2 * rng.normal(size=n)).round(0), np.ones(n),
                      rng.integers(0, 3, n).astype(float)])
    rows = Rows(h, batch[0], np.arange(n), systems, np.zeros(n, dtype=int))
    got = STATISTICS[stat].segment_batch(rows)(batch)
    for k, vector in enumerate(batch):
        v = STATISTICS[stat].segment(rows.with_metric(vector))["value"]
        assert got[k] == pytest.approx(0.0 if math.isnan(v) else v, abs=1e-12)
