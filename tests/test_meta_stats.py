"""The statistics of ``textgen_metrics.meta`` against Google's mt-metrics-eval (vendored, unmodified,
under tests/reference/mt_metrics_eval) and SciPy, on generated tables with ties, missing scores
and constant groups, and mt-metrics-eval's own tests' cases."""

from __future__ import annotations

import math
import statistics as pystats
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from textgen_metrics.meta.evaluate import assign_ranks, meta_evaluate, williams_p_value
from textgen_metrics.stats import agreement as S
from textgen_metrics.stats import resample

sys.path.insert(0, str(Path(__file__).parent / "reference"))
from mt_metrics_eval import pce as ref_pce  # noqa: E402
from mt_metrics_eval import stats as ref  # noqa: E402
from mt_metrics_eval import tau_optimization as ref_tau  # noqa: E402
from mt_metrics_eval.data_ranks import AssignRanks  # noqa: E402

TABLES = 60
_AVG = {"none": "none", "item": "item", "system": "sys"}


def _table(rng: np.random.Generator, n_sys: int | None = None, n_items: int | None = None):
    """A full systems x items grid (rows system-major, as mt-metrics-eval packs them) of small
    integer scores (many ties), some missing metric and human scores, some constant items."""
    n_sys = n_sys or int(rng.integers(2, 7))
    n_items = n_items or int(rng.integers(2, 12))
    h = rng.integers(0, 4, (n_sys, n_items)).astype(float)
    m = rng.integers(0, 6, (n_sys, n_items)) + rng.choice([0.0, 0.5], (n_sys, n_items))
    h[:, rng.random(n_items) < 0.2] = 2.0  # constant human scores on some items
    m[:, rng.random(n_items) < 0.1] = 1.0  # constant metric scores on some items
    hl, ml = h.ravel().tolist(), m.ravel().tolist()
    for i in np.flatnonzero(rng.random(h.size) < 0.1):
        hl[i] = None
    for i in np.flatnonzero(rng.random(h.size) < 0.1):
        ml[i] = None
    systems = [f"s{s}" for s in range(n_sys) for _ in range(n_items)]
    items = [f"i{i}" for _ in range(n_sys) for i in range(n_items)]
    return n_sys, hl, ml, items, systems


def _ref_inputs(hl, ml):
    """mt-metrics-eval filters on the gold score only: a row without the metric's score gets a
    None gold (and any metric value), which removes it exactly as meta_evaluate does."""
    gold = [h if m is not None else None for h, m in zip(hl, ml, strict=True)]
    metric = [0.0 if m is None else m for m in ml]
    return gold, metric


def _one(result, stat):
    [entry] = [e for e in result["results"] if e["statistic"] == stat]
    return entry


REF_FUNCS = {
    "pearson": lambda c, avg: c.Pearson(avg),
    "spearman": lambda c, avg: c.Spearman(avg),
    "kendall": lambda c, avg: c.Kendall(avg),
    "kendall_c": lambda c, avg: c.KendallVariants(avg, "c"),
    "kendall_23": lambda c, avg: c.KendallVariants(avg, "23"),
    "acc23": lambda c, avg: c.KendallVariants(avg, "acc23"),
}


@pytest.mark.parametrize("group_by", ["none", "item", "system"])
def test_segment_statistics_equal_mt_metrics_eval(group_by):
    rng = np.random.default_rng({"none": 1, "item": 2, "system": 3}[group_by])
    checked = 0
    for _ in range(TABLES):
        n_sys, hl, ml, items, systems = _table(rng)
        names = (*REF_FUNCS, "pdp", "acc_eq")
        out = meta_evaluate({"m": ml}, hl, items=items, systems=systems, group_by=group_by, statistics=names,
                            n_resamples=0, compare=False)
        gold, metric = _ref_inputs(hl, ml)
        corr = ref.Correlation(n_sys, gold, metric)
        avg = _AVG[group_by]
        for stat, fn in REF_FUNCS.items():
            value, _, used = fn(corr, avg)
            e = _one(out, stat)
            if used == 0:
                assert e["value"] is None and e["reason"] and e["groups"] == 0, (stat, e)
            else:
                assert e["value"] == pytest.approx(value, abs=1e-12), stat
                assert e["groups"] == used
                assert e["groups"] + e["groups_skipped"] == len({g for g, h, m in zip(
                    {"none": [0] * len(hl), "item": items, "system": systems}[group_by], hl, ml, strict=True)
                    if h is not None and m is not None})
                checked += 1
        value, _, used = corr.Pearson(avg, pdp=True)
        e = _one(out, "pdp")
        assert (e["value"] is None) if used == 0 or math.isnan(value) else e["value"] == pytest.approx(value, abs=1e-12)
        e = _one(out, "acc_eq")
        if any(g is not None for g in gold):
            tau, threshold, res = ref.KendallWithTiesOpt(gold, metric, "acc23", n_sys, avg, sample_rate=1.0)
            assert e["value"] == pytest.approx(tau, abs=1e-12)
            # the threshold: the reference's, or one it scores the same within its float rounding
            i = res.thresholds.index(e["threshold"])
            assert e["threshold"] == threshold or res.taus[i] == pytest.approx(tau, abs=1e-12)
        assert e["missing"] == sum(h is not None and m is None for h, m in zip(hl, ml, strict=True))
    assert checked > TABLES * 3


def test_large_groups_kendall_equals_scipy():
    """Groups over 128 rows count pairs by merging (O(n log^2 n)), not by broadcasting."""
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(130, 400))
        h = rng.integers(0, 7, n).astype(float)
        m = rng.integers(0, 30, n).astype(float)
        out = meta_evaluate({"m": m.tolist()}, h.tolist(), statistics=("kendall", "kendall_c", "kendall_23", "acc23"),
                            n_resamples=0, compare=False)
        assert _one(out, "kendall")["value"] == pytest.approx(scipy.stats.kendalltau(h, m).statistic, abs=1e-12)
        assert _one(out, "kendall_c")["value"] == pytest.approx(
            scipy.stats.kendalltau(h, m, variant="c").statistic, abs=1e-12)
        assert _one(out, "kendall_23")["value"] == pytest.approx(ref.KendallVariants(h, m, "23")[0], abs=1e-12)
        assert _one(out, "acc23")["value"] == pytest.approx(ref.KendallVariants(h, m, "acc23")[0], abs=1e-12)



def test_narrow_groups_rank_by_counting_to_the_bit_of_rankdata():
    """Groups up to 32 cells rank by counting, wider ones by sorting: both are scipy's rankdata
    (average ranks) on every valid cell, to the bit, ties and padding included (a batch with a NaN
    takes the sorting path)."""
    rng = np.random.default_rng(6)
    checked = 0
    for width in (1, 2, 3, 13, 16, 32, 33, 40):
        sizes = rng.integers(1, width + 1, size=7)
        valid = np.arange(width)[None, :] < sizes[:, None]
        x = rng.integers(0, 5, size=(3, 7, width)).astype(float) / 4  # many ties
        x[1] = rng.normal(size=(7, width))
        for batch in (x, np.where(rng.random(x.shape) < 0.05, np.nan, x)):
            ranks = S._rank_rows(batch, valid)
            for b in range(batch.shape[0]):
                for g in range(7):
                    cells = batch[b, g, valid[g]]
                    if np.isnan(cells).any():
                        continue  # scipy ranks NaN differently; ours only needs to stay finite
                    assert ranks[b, g, valid[g]].tolist() == scipy.stats.rankdata(cells).tolist()
                    checked += 1
    assert checked > 250

def _common_matrices(n_sys, hl, ml):
    h = np.array([np.nan if v is None else v for v in hl]).reshape(n_sys, -1)
    m = np.array([np.nan if v is None else v for v in ml]).reshape(n_sys, -1)
    keep = ~(np.isnan(h) | np.isnan(m)).any(axis=0)
    return h[:, keep], m[:, keep]


def test_system_level_statistics_equal_references():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(TABLES):
        n_sys, hl, ml, items, systems = _table(rng, n_items=int(rng.integers(8, 30)))
        names = ("pearson", "spearman", "kendall", "pairwise_accuracy", "spa", "pdp")
        out = meta_evaluate({"m": ml}, hl, items=items, systems=systems, level="system", statistics=names,
                            n_resamples=1000, seed=4, compare=False)
        hm, mm = _common_matrices(n_sys, hl, ml)
        if hm.shape[1] == 0:
            assert all(e["value"] is None for e in out["results"])
            continue
        hs, ms = hm.mean(axis=1), mm.mean(axis=1)
        gold, metric = list(hs), list(ms)
        corr = ref.Correlation(n_sys, gold, metric)
        for stat, (value, _, used) in (("pearson", corr.Pearson()), ("spearman", corr.Spearman()),
                                       ("kendall", corr.Kendall()), ("pdp", corr.Pearson(pdp=True))):
            e = _one(out, stat)
            assert (e["value"] is None) if used == 0 else e["value"] == pytest.approx(value, abs=1e-12), stat
        agree, pairs = ref.Agreement(gold, metric)
        assert _one(out, "pairwise_accuracy")["value"] == pytest.approx(agree / pairs, abs=1e-15)
        # spa: PairwiseConfidenceError with its default 1000 permutations and seed 4, bit for bit
        expected = ref.PairwiseConfidenceError(list(hm.ravel()), list(mm.ravel()), n_sys)[0]
        assert _one(out, "spa")["value"] == expected
        assert _one(out, "spa")["n"] == n_sys
        checked += 1
    assert checked > TABLES // 2


def test_spa_systems_in_sorted_order_and_pce_seed():
    rng = np.random.default_rng(6)
    # few items of small integers: permuted sums often equal the observed one, and then the
    # one-sided count (null >= observed) depends on which system of a pair comes first
    h, m = rng.integers(0, 3, (5, 6)).astype(float), rng.integers(0, 3, (5, 6)).astype(float)
    names = ["zeta", "alpha", "mid", "beta", "omega"]
    rows = [(names[s], i) for s in range(5) for i in range(6)]
    out = meta_evaluate({"m": m.ravel().tolist()}, h.ravel().tolist(), items=[i for _, i in rows],
                        systems=[s for s, _ in rows], level="system", statistics="spa", n_resamples=0,
                        n_permutations=500, seed=11,
                        compare=False)
    order = np.argsort(names)
    expected = ref_pce.compute_one_minus_pce(ref_pce.compute_pairwise_p_values(h[order], 500, seed=11),
                                             ref_pce.compute_pairwise_p_values(m[order], 500, seed=11))
    assert out["results"][0]["value"] == expected
    unsorted = ref_pce.compute_one_minus_pce(ref_pce.compute_pairwise_p_values(h, 500, seed=11),
                                             ref_pce.compute_pairwise_p_values(m, 500, seed=11))
    assert unsorted != expected  # the order matters, so the test above checks it


def test_spa_equals_pce_on_a_wmt_sized_grid_with_ties():
    """15 systems x 200 items, human scores rounded (many permuted sums tie the observed one, so
    the float32 rounding of each sum must be pce's own)."""
    rng = np.random.default_rng(15)
    h = rng.normal(size=(15, 200)) + rng.normal(size=(15, 1))
    m = h + rng.normal(size=h.shape)
    human, metric = h.round(1).ravel().tolist(), m.round(2).ravel().tolist()
    out = meta_evaluate({"m": metric}, human, items=[i for _ in range(15) for i in range(200)],
                        systems=[f"s{s:02d}" for s in range(15) for _ in range(200)], level="system", statistics="spa",
                        n_resamples=1000, seed=4, compare=False)
    assert out["results"][0]["value"] == ref.PairwiseConfidenceError(human, metric, 15)[0]


def test_partial_correlations_equal_scipy_on_residuals():
    rng = np.random.default_rng(7)
    for _ in range(TABLES):
        n_sys, hl, ml, items, systems = _table(rng, n_items=int(rng.integers(3, 15)))
        out = meta_evaluate({"m": ml}, hl, items=items, systems=systems,
                            statistics=("partial_pearson", "partial_spearman"), n_resamples=0, compare=False)
        keep = [i for i, (h, m) in enumerate(zip(hl, ml, strict=True)) if h is not None and m is not None]
        res_h, res_m = [], []
        for i in keep:
            same = [j for j in keep if systems[j] == systems[i]]
            res_h.append(hl[i] - pystats.fmean([hl[j] for j in same]))
            res_m.append(ml[i] - pystats.fmean([ml[j] for j in same]))
        for stat, fn in (("partial_pearson", scipy.stats.pearsonr), ("partial_spearman", scipy.stats.spearmanr)):
            e = _one(out, stat)
            constant = len(set(res_h)) < 2 or len(set(res_m)) < 2
            if constant:
                assert e["value"] is None
            else:
                assert e["value"] == pytest.approx(fn(res_h, res_m).statistic, abs=1e-12)


def test_labels_accuracy_and_kappa_equal_sklearn_per_group():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(8)
    for _ in range(TABLES):
        n = int(rng.integers(4, 40))
        h = rng.choice(["a", "b", "c"], n).tolist()
        m = [x if rng.random() < 0.6 else str(rng.choice(["a", "b", "c"])) for x in h]
        items = rng.integers(0, 3, n).tolist()
        out = meta_evaluate({"m": m}, h, items=items, group_by="item", statistics=("accuracy", "kappa"),
                            n_resamples=0, compare=False)
        accs, kappas = [], []
        for g in sorted(set(items)):
            hh = [x for x, i in zip(h, items, strict=True) if i == g]
            mm = [x for x, i in zip(m, items, strict=True) if i == g]
            accs.append(sklearn_metrics.accuracy_score(hh, mm))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # one label only: scikit-learn warns and gives NaN
                k = sklearn_metrics.cohen_kappa_score(mm, hh)
            if not math.isnan(k):
                kappas.append(k)
        assert _one(out, "accuracy")["value"] == pytest.approx(np.mean(accs), abs=1e-12)
        if kappas:
            assert _one(out, "kappa")["value"] == pytest.approx(np.mean(kappas), abs=1e-12)
        else:
            assert _one(out, "kappa")["value"] is None


# -- mt-metrics-eval's own tests' cases --------------------------------------------------------------

def test_stats_test_pearson_case():
    """stats_test.CorrelationTest.testPearson: 2 systems x 3 items."""
    gold, metric = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 3, 7]
    items, systems = [0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 1, 1]
    corr = ref.Correlation(2, gold, metric)
    for group_by, avg in _AVG.items():
        out = meta_evaluate({"m": metric}, gold, items=items, systems=systems, group_by=group_by,
                            statistics="pearson", n_resamples=0, compare=False)
        assert out["results"][0]["value"] == pytest.approx(corr.Pearson(avg)[0], abs=1e-12)
    assert [round(meta_evaluate({"m": metric}, gold, items=items, systems=systems, group_by=g, statistics="pearson",
                                n_resamples=0, compare=False)["results"][0]["value"], 3)
            for g in ("none", "system", "item")] == [0.776, 0.760, 1.0]  # the published figures


@pytest.mark.parametrize("case", ["test_zero_threshold_is_best", "test_nonzero_threshold_is_best"])
def test_tau_optimization_cases(case):
    metric = [0, 2, 6, 8]
    human = [1, 2, 3, 4] if case == "test_zero_threshold_is_best" else [1, 1, 1, 4]
    expected = ref_tau.tau_optimization(metric, human, ref_tau.TauSufficientStats.acc_23)
    out = meta_evaluate({"m": metric}, human, statistics="acc_eq", n_resamples=0, compare=False)["results"][0]
    assert (out["value"], out["threshold"]) == (expected.best_tau, expected.best_threshold)
    assert expected.best_threshold == (0 if case == "test_zero_threshold_is_best" else 4)


def test_tau_optimization_regression_example():
    metric = [[0, 5, 2, 3, 2], [None, 2, 1, 5, 3], [9, 1, 5, 3, 8], [9, 3, 4, 4, 1], [None] * 5]
    human = [[1, 5, 2, 1, 1], [4, 2, 2, 1, 4], [5, 9, 2, 8, 7], [7, 6, None, 3, 2], [None] * 5]
    expected = ref_tau.tau_optimization(metric, human, ref_tau.TauSufficientStats.acc_23)
    items = [r for r in range(5) for _ in range(5)]
    out = meta_evaluate({"m": sum(metric, [])}, sum(human, []), items=items, group_by="item", statistics="acc_eq",
                        n_resamples=0, compare=False)["results"][0]
    assert out["threshold"] == expected.best_threshold == 1
    assert out["value"] == pytest.approx(expected.best_tau, abs=1e-15)
    assert out["groups"] == 4 and out["groups_skipped"] == 0  # the all-None item has no row


def test_acc_eq_sweep_values_at_every_threshold():
    """Every candidate's value equals tau_optimization's list (the sweep, not only its maximum)."""
    rng = np.random.default_rng(9)
    for _ in range(20):
        m = rng.integers(0, 6, (4, 6)).astype(float)
        h = rng.integers(0, 3, (4, 6)).astype(float)
        res = ref_tau.tau_optimization(m, h, ref_tau.TauSufficientStats.acc_23)
        lay = S.layout(np.repeat(np.arange(4), 6))
        pairs = S.acc_eq_pairs(S.pad(h.ravel(), lay), S.pad(m.ravel(), lay), lay.valid)
        for t, tau in zip(res.thresholds, res.taus, strict=True):
            tied = pairs.gap <= t
            verdict = np.where(tied, pairs.after, pairs.before)
            per_group = np.bincount(pairs.group, weights=verdict) / pairs.pairs_per_group
            assert per_group.mean() == pytest.approx(tau, abs=1e-12)


def test_pce_test_case_deterministic():
    """pce_test: p-values are deterministic; ours equal pce's for the same seed."""
    scores = np.random.default_rng(10).random((10, 100))
    signs = S.spa_signs(100, 1000, 4)
    ours = S.p_values(scores, signs)
    theirs = ref_pce.compute_pairwise_p_values(scores)
    assert np.array_equal(ours, theirs[np.triu_indices(10, 1)])


def _pce_on_resamples(h, ms, n_perm, n_resamples, seed):
    """pce's 1 - PCE of each metric on each resample of the items, resample r the columns of
    row r of default_rng(seed).integers drawn 8 rows at a time (spa_resampled's draws)."""
    rng = np.random.default_rng(seed)
    out = np.empty((len(ms), n_resamples))
    r = 0
    for start in range(0, n_resamples, 8):
        for idx in rng.integers(0, h.shape[1], size=(min(8, n_resamples - start), h.shape[1])):
            hp = ref_pce.compute_pairwise_p_values(h[:, idx], n_perm, seed=seed)
            for k, m in enumerate(ms):
                out[k, r] = ref_pce.compute_one_minus_pce(hp, ref_pce.compute_pairwise_p_values(m[:, idx], n_perm,
                                                                                                seed=seed))
            r += 1
    return out


def test_spa_resampled_equals_pce_on_every_resample():
    """The compiled sign-flip counts (four Russians tables) give pce's 1 - PCE on each resample,
    exactly, where every float32 sum is exact whatever its order (scores on a grid of quarters,
    so ties of all kinds, identical systems included), over sizes that are and are not multiples
    of the kernel's blocks (4 items) and slices (32 rows)."""
    rng = np.random.default_rng(21)
    for n_sys, n_items, n_metrics, n_perm in [(2, 5, 1, 37), (3, 9, 2, 100), (5, 33, 3, 250), (8, 64, 4, 64),
                                              (15, 41, 2, 300), (4, 1, 1, 10), (7, 130, 5, 129)]:
        h = rng.integers(0, 8, (n_sys, n_items)) / 4.0
        ms = rng.integers(0, 8, (n_metrics, n_sys, n_items)) / 4.0
        if n_sys > 2:
            h[1] = h[2]  # two systems people could not tell apart
            ms[0, 1] = ms[0, 2]
        seed = int(rng.integers(0, 1000))
        got = S.spa_resampled(h, ms, S.spa_signs(n_items, n_perm, seed), 20, seed)
        assert np.array_equal(got, _pce_on_resamples(h, ms, n_perm, 20, seed)), (n_sys, n_items)


def test_spa_resampled_near_pce_on_continuous_scores():
    """On continuous scores only the float32 sums' order differs from pce's product: a count moves
    only where a permutation's difference ties the observed one to the last bit."""
    rng = np.random.default_rng(22)
    h = rng.normal(size=(15, 300)) + rng.normal(size=(15, 1))
    ms = h + rng.normal(size=(4, 15, 300))
    got = S.spa_resampled(h, ms, S.spa_signs(300, 500, 3), 10, 3)
    assert np.abs(got - _pce_on_resamples(h, ms, 500, 10, 3)).max() <= 2e-4


def test_spa_interval_is_the_percentile_of_pce_on_the_resamples():
    """meta_evaluate's spa interval: the percentile interval of pce's value on each resample."""
    rng = np.random.default_rng(23)
    n_sys, n_items = 6, 40
    h = rng.integers(0, 10, (n_sys, n_items)) / 2.0
    ms = (h + rng.integers(-3, 4, (2, n_sys, n_items))) / 1.0
    items = [i for _ in range(n_sys) for i in range(n_items)]
    systems = [f"s{s}" for s in range(n_sys) for _ in range(n_items)]
    out = meta_evaluate({"a": ms[0].ravel().tolist(), "b": ms[1].ravel().tolist()}, h.ravel().tolist(), items=items,
                        systems=systems, level="system", statistics="spa", n_resamples=200, n_permutations=200,
                        seed=4, compare=False)
    boot = _pce_on_resamples(h, ms, 200, 200, 4)
    for k, name in enumerate("ab"):
        entry = next(e for e in out["results"] if e["metric"] == name)
        assert entry["ci"] == resample.interval(boot[k], 0.95)


def test_williams_equals_mt_metrics_eval():
    rng = np.random.default_rng(12)
    for _ in range(30):
        n = int(rng.integers(5, 60))
        gold = rng.normal(size=n)
        a = gold + rng.normal(size=n)
        b = gold + 2 * rng.normal(size=n)
        c1, c2 = ref.Correlation(1, list(gold), list(a)), ref.Correlation(1, list(gold), list(b))
        for one_sided in (True, False):
            p, _, _ = ref.WilliamsSigDiff(c1, c2, scipy.stats.pearsonr, one_sided)
            assert williams_p_value(gold, a, b, one_sided) == pytest.approx(p, rel=1e-9, abs=1e-14)
    assert williams_p_value([1, 2, 3], [1, 2, 3], [3, 2, 1]) is None


def test_t_sf_equals_scipy():
    for t in (-5.0, -0.3, 0.0, 0.7, 1.96, 4.2, 30.0):
        for df in (1, 2, 5, 17, 200):
            assert S.t_sf(t, df) == pytest.approx(scipy.stats.t.sf(t, df), rel=1e-10, abs=1e-300)


def test_assign_ranks_equals_mt_metrics_eval():
    rng = np.random.default_rng(13)
    for _ in range(200):
        n = int(rng.integers(1, 8))
        sig = np.triu(rng.choice([0.01, 0.04, 0.05, 0.06, 0.3], (n, n)), 1)
        assert assign_ranks(sig) == AssignRanks(sig, 0.05)


def test_inversions_equal_brute_force():
    rng = np.random.default_rng(14)
    for _ in range(50):
        r = rng.integers(0, 10, int(rng.integers(0, 70)))
        brute = sum(int(r[i] > r[j]) for i in range(r.size) for j in range(i + 1, r.size))
        assert S._inversions(r) == brute


def test_swap_ranks_equal_the_ranks_of_each_permuted_vector():
    """The permutation test's ranks read from the two metrics' comparison tables equal
    ``_rank_rows`` of every swapped vector to the bit: groups of 1 to 32 cells, ragged, ties within
    and across the metrics; NaN or wider groups are left to the counting path."""
    rng = np.random.default_rng(7)
    for trial in range(200):
        groups, width = int(rng.integers(1, 12)), int(rng.integers(1, 33))
        codes = np.repeat(np.arange(groups), rng.integers(1, width + 1, size=groups))
        rng.shuffle(codes)
        lay = S.layout(codes)
        levels = int(rng.integers(2, 6))
        a = rng.integers(0, levels, size=codes.size) / float(rng.integers(1, 4))
        b = rng.integers(0, levels, size=codes.size) / 3.0
        ranks = S.swap_ranks(S.pad(a, lay), S.pad(b, lay), lay.valid)
        swap = rng.random((5, codes.size)) < 0.5
        got = ranks(S.pad(swap.astype(float), lay) > 0.5)
        want = S._rank_rows(S.pad(np.where(swap, a, b), lay), lay.valid)
        assert np.array_equal(got[:, lay.valid], want[:, lay.valid]), trial
    wide = S.layout(np.zeros(33, dtype=int))
    assert S.swap_ranks(S.pad(np.arange(33.0), wide), S.pad(np.arange(33.0), wide), wide.valid) is None
    one = S.layout(np.zeros(3, dtype=int))
    assert S.swap_ranks(S.pad(np.array([1.0, np.nan, 2.0]), one), S.pad(np.ones(3), one), one.valid) is None


def test_spearmans_permutation_p_value_equals_permutation_ps():
    """Spearman's own permutation test (ranks from the comparison tables) gives
    ``resample.permutation_p``'s p-value, the same draws, to the bit."""
    from textgen_metrics.stats.resample import permutation_draws
    from textgen_metrics.stats.statistic import STATISTICS, Rows, Statistic

    spearman = STATISTICS["spearman"]
    rng = np.random.default_rng(11)
    for trial in range(40):
        items, systems = int(rng.integers(2, 30)), int(rng.integers(2, 17))
        n = items * systems
        group = np.repeat(np.arange(items), systems)
        h = rng.integers(1, 6, size=n).astype(float)
        hi = rng.integers(0, 7, size=n) / 6.0 + (h if trial % 2 else 0.0)
        lo = rng.integers(0, 7, size=n) / 6.0
        item, system = group.copy(), np.tile(np.arange(systems), items)
        r_hi, r_lo = Rows(h, hi, item, system, group), Rows(h, lo, item, system, group)
        seed = int(rng.integers(0, 1000))

        def draws_for(rows, seed=seed):
            return lambda: permutation_draws(300, rows, seed)

        fast = spearman.segment_permutation(r_hi, r_lo, draws_for)
        plain = Statistic.segment_permutation(spearman, r_hi, r_lo, draws_for)
        assert fast == plain, (trial, fast, plain)
