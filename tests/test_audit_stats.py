"""The audit statistics on verdicts already made: position_audit against LLMBar's own
statistics.json (every stored judge, protocol and split), each statistic against a plain
reference (scikit-learn's kappa and isotonic regression, an ANOVA written out for ICC(1,1),
loops for Brier, ECE and the bins), the intervals seeded, and judges with planted defects
simulated over many seeds: each defect flagged in at least 90% of them, a clean judge in at most
5%. (Speed: benchmarks/bench_audit.py, never a timed assert here.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import cohen_kappa_score

from textgen_metrics.meta.data import load_set
from textgen_metrics.stats.audit import (
    calibration_audit,
    icc_1_1,
    isotonic_fit,
    isotonic_predict,
    position_audit,
    repeat_audit,
    repeats_needed,
    verbosity_audit,
)

LLMBAR_SETS = ("llmbar_natural", "llmbar_adversarial", "mtbench_llmbar")


def _published(text):
    """A statistics.json figure such as "77 / 100 = 77.0%" as a share."""
    return float(text.split("=")[-1].strip().rstrip("%")) / 100


def _llmbar_cases():
    for name in LLMBAR_SETS:
        data = load_set(name)
        for judge in data.judges:
            for split, published in judge.statistics.items():
                rows = [i for i, r in enumerate(data.rows) if split == "all" or r["split"] == split]
                yield (f"{name}/{judge.evaluator}/{judge.protocol}/{split}",
                       [judge.verdicts[i] for i in rows], [data.rows[i]["gold"] for i in rows], published)


def test_position_audit_equals_every_llmbar_statistics_json():
    """LLMBar's evaluate.py wrote statistics.json from these verdicts: accuracy per order
    (correct_False, correct_True), positional agreement (equal) and the kappa between the orders
    (kappa_agreement) are those of position_audit with missing="as_verdict", for every stored
    judge and protocol (PaLM2 and LLaMA2 have pairs without a verdict)."""
    cases = list(_llmbar_cases())
    assert len(cases) == 12 + 12 * 4 + 4
    with_missing = 0
    for label, verdicts, gold, published in cases:
        out = position_audit([f for f, _ in verdicts], [s for _, s in verdicts], gold, missing="as_verdict",
                             n_resamples=200, seed=1)
        with_missing += out["missing"] > 0
        assert out["pairs"] == len(verdicts), label
        assert out["accuracy_first"]["value"] == pytest.approx(_published(published["correct_False"]), abs=1e-12), label
        assert out["accuracy_second"]["value"] == pytest.approx(_published(published["correct_True"]), abs=1e-12), label
        assert out["positional_agreement"]["value"] == pytest.approx(_published(published["equal"]), abs=1e-12), label
        assert out["kappa"]["value"] == pytest.approx(published["kappa_agreement"], abs=1e-12), label
        for key in ("accuracy_first", "accuracy_second", "positional_agreement", "kappa"):
            low, high = out[key]["ci"]
            assert low <= out[key]["value"] + 1e-12 and out[key]["value"] - 1e-12 <= high, (label, key)
    assert with_missing >= 5  # the quirk of "no verdict" is exercised, not only clean files


VERDICTS = ("a", "b", "tie", None)


def _random_verdicts(rng, n, p=(0.45, 0.35, 0.1, 0.1)):
    return [VERDICTS[i] for i in rng.choice(4, size=n, p=p)]


def test_position_audit_point_values_by_hand():
    rng = np.random.default_rng(3)
    first, second = _random_verdicts(rng, 300), _random_verdicts(rng, 300)
    gold = [("a", "b")[i] for i in rng.integers(0, 2, 300)]
    out = position_audit(first, second, gold, n_resamples=0)
    kept = [i for i in range(300) if first[i] is not None and second[i] is not None]
    assert out["pairs"] == len(kept) and out["missing"] == 300 - len(kept)
    f, s, g = [first[i] for i in kept], [second[i] for i in kept], [gold[i] for i in kept]
    assert out["positional_agreement"]["value"] == pytest.approx(np.mean([x == y for x, y in zip(f, s, strict=True)]))
    favour = [{"a": 1, "b": 0, "tie": 0.5}[x] for x in f] + [{"a": 0, "b": 1, "tie": 0.5}[y] for y in s]
    assert out["first_position_rate"]["value"] == pytest.approx(np.mean(favour))
    assert out["accuracy_first"]["value"] == pytest.approx(np.mean([x == y for x, y in zip(f, g, strict=True)]))
    assert out["accuracy_second"]["value"] == pytest.approx(np.mean([x == y for x, y in zip(s, g, strict=True)]))
    assert out["kappa"]["value"] == pytest.approx(cohen_kappa_score(f, s), abs=1e-12)
    assert all(out[k]["ci"] is None for k in ("kappa", "first_position_rate")) and out["flagged"] is False
    # without gold: no accuracy; with gold None for some pairs: those pairs have no accuracy
    assert position_audit(first, second, n_resamples=0)["accuracy_first"] == {"value": None, "ci": None}
    part = [g if i % 2 else None for i, g in enumerate(gold)]
    half = position_audit(first, second, part, n_resamples=0)["accuracy_first"]["value"]
    assert half == pytest.approx(np.mean([first[i] == part[i] for i in kept if part[i] is not None]))


def test_position_audit_intervals_are_seeded_and_flag_a_first_position_preference():
    rng = np.random.default_rng(5)
    n = 400
    truth = rng.integers(0, 2, n)
    honest = [("a", "b")[t] for t in truth]
    second_honest = list(honest)
    # the judge says "first shown" on 30% of the swapped order's pairs: "b" against the original order
    second_biased = ["b" if rng.random() < 0.3 else v for v in second_honest]
    clean = position_audit(honest, second_honest, honest, seed=7)
    biased = position_audit(honest, second_biased, honest, seed=7)
    assert clean["first_position_rate"] == {"value": 0.5, "ci": [0.5, 0.5]} and not clean["flagged"]
    assert biased["first_position_rate"]["value"] > 0.55 and biased["flagged"]
    assert biased["first_position_rate"]["ci"][0] > 0.5
    again = position_audit(honest, second_biased, honest, seed=7)
    assert again == biased  # seeded: the same intervals
    assert position_audit(honest, second_biased, honest, seed=8)["kappa"]["ci"] != biased["kappa"]["ci"]
    with pytest.raises(ValueError, match=r"first\[1\]: 'x' is not a verdict"):
        position_audit(["a", "x"], ["a", "b"])
    with pytest.raises(ValueError, match="missing"):
        position_audit(["a"], ["a"], missing="drop")
    with pytest.raises(ValueError, match="gold"):
        position_audit(["a"], ["a"], ["tie"])
    with pytest.raises(ValueError, match="give one of each per pair"):
        position_audit(["a"], ["a", "b"])


def test_the_multinomial_resampling_is_the_index_resampling():
    """Rows of few kinds are resampled as multinomial counts, others by index: the same
    bootstrap distribution (here: the same interval to within Monte Carlo error)."""
    from textgen_metrics.stats import audit as stats

    rng = np.random.default_rng(11)
    rows = np.column_stack([np.ones(500), rng.integers(0, 2, 500).astype(float)])
    few = stats._resampled_sums(rows, 4000, 1)[:, 1] / 500
    limit = stats._MULTINOMIAL_KINDS
    try:
        stats._MULTINOMIAL_KINDS = 0
        many = stats._resampled_sums(rows, 4000, 1)[:, 1] / 500
    finally:
        stats._MULTINOMIAL_KINDS = limit
    assert np.quantile(few, [0.025, 0.975]) == pytest.approx(np.quantile(many, [0.025, 0.975]), abs=0.01)
    assert few.mean() == pytest.approx(rows[:, 1].mean(), abs=0.003)


def test_verbosity_by_hand():
    original = [1.0, 0.5, 0.0, None, 0.0, 1.0]
    padded = [1.0, 1.0, 0.5, 1.0, None, 0.5]
    out = verbosity_audit(original, padded, seed=1)
    assert out["examples"] == 4 and out["missing"] == 2
    assert out["mean_shift"]["value"] == pytest.approx((0 + 0.5 + 0.5 - 0.5) / 4)
    assert out["changed_share"]["value"] == pytest.approx(1 / 4)  # 0.0 -> 0.5 crosses 0.5; 1.0 -> 0.5 does not
    # on a 1-5 scale the threshold is the middle (3)
    scaled = verbosity_audit([1, 2, 3, 5], [2, 4, 3, 5], score_range=(1, 5), n_resamples=0)
    assert scaled["changed_share"]["value"] == 0.25 and scaled["mean_shift"]["value"] == 0.75
    lifted = verbosity_audit([0.2] * 50 + [0.6] * 50, [0.3] * 50 + [0.7] * 50, seed=2)
    assert lifted["flagged"] and lifted["mean_shift"]["ci"] == pytest.approx([0.1, 0.1])


def _icc_anova(x):
    """ICC(1,1) written out from the one-way ANOVA table (Shrout and Fleiss 1979)."""
    n, k = x.shape
    grand = x.mean()
    msb = k * sum((row.mean() - grand) ** 2 for row in x) / (n - 1)
    msw = sum(((row - row.mean()) ** 2).sum() for row in x) / (n * (k - 1))
    return (msb - msw) / (msb + (k - 1) * msw)


def test_repeat_audit_icc_flips_spread_and_repeats_needed():
    rng = np.random.default_rng(2)
    truth = rng.random(120)
    x = np.clip(truth[:, None] + rng.normal(0, 0.15, (120, 4)), 0, 1)
    assert icc_1_1(x) == pytest.approx(_icc_anova(x), rel=1e-10)
    out = repeat_audit(x.tolist(), seed=3)
    assert out["icc"]["value"] == pytest.approx(_icc_anova(x), rel=1e-10) and out["repeats"] == 4
    flips = np.mean([len({v >= 0.5 for v in row}) > 1 for row in x])
    assert out["flip_rate"]["value"] == pytest.approx(flips) and out["flagged"]
    assert out["spread"]["value"] == pytest.approx(np.mean(x.std(axis=1)))
    low, high = out["icc"]["ci"]
    assert low < out["icc"]["value"] < high
    # an example unscored in one repeat is left out and counted
    rows = x.tolist()
    rows[0][2] = None
    assert repeat_audit(rows, n_resamples=0)["missing"] == 1
    # a judge that never flips: one repeat is enough, nothing flagged
    steady = repeat_audit([[0.9, 0.9, 0.9], [0.1, 0.1, 0.1], [0.7, 0.7, 0.7]], seed=1)
    assert steady["repeats_needed"] == 1 and not steady["flagged"] and steady["flip_rate"]["ci"] == [0.0, 0.0]
    assert steady["icc"]["value"] == 1.0


def test_repeats_needed_is_the_binomial_majority():
    # each example positive with chance 2/3: a majority of m is right with P(Bin(m, 2/3) > m/2)
    def right(m, p=2 / 3):
        return sum(math.comb(m, j) * p ** j * (1 - p) ** (m - j) for j in range(m // 2 + 1, m + 1))

    needed = next(m for m in range(1, 100, 2) if right(m) >= 0.95)
    assert repeats_needed([2 / 3] * 10) == needed == 23
    assert repeats_needed([1.0] * 9 + [2 / 3]) == 1  # 0.9 + 0.1 * 0.667 >= 0.95
    assert repeats_needed([0.5] * 4) == 99  # a coin: no number of repeats is enough (the cap)
    assert repeats_needed([]) == 1


def test_isotonic_fit_equals_scikit_learn():
    rng = np.random.default_rng(4)
    for n in (1, 2, 7, 200):
        x = np.round(rng.random(n), 1)  # ties in x, as a judge's scores have
        y = (rng.random(n) < x).astype(float)
        w = rng.random(n) + 0.1
        new = np.concatenate([rng.random(50) * 1.4 - 0.2, x])
        for weights in (None, w):
            ref = IsotonicRegression(out_of_bounds="clip").fit(x, y, sample_weight=weights)
            ours = isotonic_predict(isotonic_fit(x, y, weights), new)
            assert ours == pytest.approx(ref.predict(new), abs=1e-12), (n, weights is None)


def test_calibration_by_hand():
    rng = np.random.default_rng(6)
    n = 300
    p = np.round(rng.random(n), 2)
    y = (rng.random(n) < p ** 2).astype(int)  # overconfident: the judge's p is too high
    probs = p.tolist()
    probs[0] = None
    labels = y.tolist()
    labels[1] = None
    out = calibration_audit(probs, labels, seed=9)
    keep = np.array([i not in (0, 1) for i in range(n)])
    pk, yk = p[keep], y[keep]
    assert out["examples"] == n - 2 and out["missing"] == 2
    assert out["brier"]["value"] == pytest.approx(np.mean((pk - yk) ** 2))
    ece = 0.0
    for b, entry in enumerate(out["bins"]):
        inside = np.minimum((pk * 10).astype(int), 9) == b
        assert entry["count"] == inside.sum() and entry["range"] == [b / 10, (b + 1) / 10]
        if inside.any():
            assert entry["mean_p"] == pytest.approx(pk[inside].mean())
            assert entry["share"] == pytest.approx(yk[inside].mean())
            ece += inside.sum() / len(pk) * abs(pk[inside].mean() - yk[inside].mean())
        else:
            assert entry["mean_p"] is None and entry["share"] is None
    assert out["ece"]["value"] == pytest.approx(ece)
    # the recalibration: isotonic on a seeded half, measured on the other half
    order = np.random.default_rng(9).permutation(len(pk))
    fit, measured = order[: len(pk) // 2], order[len(pk) // 2:]
    recal = IsotonicRegression(out_of_bounds="clip").fit(pk[fit], yk[fit]).predict(pk[measured])
    ym = yk[measured]
    bins = np.minimum((recal * 10).astype(int), 9)
    ref = sum((bins == b).sum() / len(ym) * abs(recal[bins == b].mean() - ym[bins == b].mean())
              for b in range(10) if (bins == b).any())
    assert out["ece_recalibrated"]["value"] == pytest.approx(ref)
    assert out["ece_recalibrated"]["value"] < out["ece"]["value"]  # recalibrating helps an overconfident judge
    assert out["recalibration"] == {"fitted": len(pk) // 2, "measured": len(pk) - len(pk) // 2}
    with pytest.raises(ValueError, match=r"labels\[0\]"):
        calibration_audit([0.5], [2])
    with pytest.raises(ValueError, match="outside"):
        calibration_audit([1.5], [1])


# -- judges with planted defects, simulated ------------------------------------------------------
# Each pair has a hidden quality per answer; a judge perceives quality (+ a length bonus per 100
# words), adds noise per call, says "first shown" on a share of requests whatever it read (drawn
# per request: the same request gets the same), and gives an unusable answer to a share of
# requests (the same request always). test_audit_probes.Planted is the same judge behind the
# engine, answering by task id.
# Sizes: small enough that the intervals' power matters (at 200 pairs, 100 seeds, 500 resamples:
# position 0.04 was flagged in 98% of seeds, a length bonus of 0.06 in 89%, noise of 0.02 in 77%,
# an unusable share of 0.002 in 82%).
DEFECTS = {"clean": {}, "position": {"position": 0.05}, "length": {"length": 0.1}, "noise": {"noise": 0.04},
           "unusable": {"unusable": 0.01}}
TIE = 0.01  # perceived differences below this are ties
FILLER_WORDS = 28  # the words probes.FILLER adds


def _order_verdicts(d, draws, params, rng):
    """The verdicts of one run against the original order, (first, second), from the perceived
    difference d (prediction minus baseline) and the persistent draws of each request."""
    out = []
    for order, sign in ((0, 1.0), (1, -1.0)):
        shown = sign * d + params.get("noise", 0.0) * rng.standard_normal(len(d))  # shown A minus shown B
        a_wins = np.where(np.abs(shown) < TIE, 2, np.where(shown > 0, 0, 1))  # 0: A, 1: B, 2: tie
        a_wins = np.where(draws["bias"][order] < params.get("position", 0.0), 0, a_wins)
        original = a_wins if order == 0 else np.where(a_wins == 2, 2, 1 - a_wins)
        verdicts = np.array(["a", "b", "tie"], dtype=object)[original]
        verdicts[draws["unusable"][order] < params.get("unusable", 0.0)] = None
        out.append(verdicts)
    return out


def _pair_scores(first, second):
    """pairwise_preference's score: a verdict held in both orders stands, else a tie; None where
    either order is unusable."""
    value = {"a": 1.0, "b": 0.0, "tie": 0.5}
    return [None if f is None or s is None else (value[f] if f == s else 0.5)
            for f, s in zip(first, second, strict=True)]


def simulate(defect, seed, n=200, repeats=3, n_resamples=1000):
    """The flags an audit raises on one simulated judge: {probe: flagged}, "unusable": any
    verdict unusable."""
    params = DEFECTS[defect]
    rng = np.random.default_rng(seed)
    quality, words = rng.random((n, 2)), rng.integers(3, 40, (n, 2))

    def perceived(extra):
        return (quality[:, 0] + params.get("length", 0.0) * (words[:, 0] + extra) / 100
                - quality[:, 1] - params.get("length", 0.0) * words[:, 1] / 100)

    def draws():
        return {"bias": rng.random((2, n)), "unusable": rng.random((2, n))}

    plain_draws, padded_draws = draws(), draws()
    runs = [_order_verdicts(perceived(0), plain_draws, params, rng) for _ in range(repeats)]
    padded = _order_verdicts(perceived(FILLER_WORDS), padded_draws, params, rng)
    gold = np.where(quality[:, 0] > quality[:, 1], "a", "b").tolist()
    scores = [_pair_scores(*r) for r in runs]
    kw = {"n_resamples": n_resamples, "seed": seed}
    position = position_audit(runs[0][0].tolist(), runs[0][1].tolist(), gold, **kw)
    verbosity = verbosity_audit(scores[0], _pair_scores(*padded), **kw)
    repeat = repeat_audit([list(r) for r in zip(*scores, strict=True)], **kw)
    unscored = sum(s is None for run in [*scores, _pair_scores(*padded)] for s in run)
    return {"position": position["flagged"], "verbosity": verbosity["flagged"], "repeat": repeat["flagged"],
            "unusable": unscored > 0}


# the probe each defect must trip
TRIPS = {"position": "position", "length": "verbosity", "noise": "repeat", "unusable": "unusable"}
SEEDS = 200


@pytest.fixture(scope="module")
def flag_rates():
    rates = {}
    for defect in DEFECTS:
        flags = [simulate(defect, seed) for seed in range(SEEDS)]
        rates[defect] = {probe: sum(f[probe] for f in flags) / SEEDS for probe in flags[0]}
    return rates


@pytest.mark.parametrize("defect", sorted(TRIPS))
def test_each_planted_defect_is_flagged_in_at_least_90_percent_of_seeds(flag_rates, defect):
    assert flag_rates[defect][TRIPS[defect]] >= 0.9, flag_rates[defect]


def test_a_clean_judge_is_flagged_in_at_most_5_percent_of_seeds(flag_rates):
    assert all(rate <= 0.05 for rate in flag_rates["clean"].values()), flag_rates["clean"]
