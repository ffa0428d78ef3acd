"""regression / assert_no_regression (SPEC "Quality gates"): paired per item, a paired bootstrap
interval and a paired permutation p-value, Holm over metrics and keys, the minimum detectable
drop before any judge call."""

import itertools
import statistics

import numpy as np
import pytest

import gate_sim as G
import textgen_metrics as tm
from textgen_metrics import CallableJudge
from textgen_metrics.stats import gates as S

N = 120


def two_sides(drop, n=N, sd=0.05, seed=3):
    """A judge over 2n items: the baseline's are items 0..n-1, the candidate's n..2n-1, each
    candidate item ``drop`` below its baseline item (on the judge's 0-1 scale)."""
    base = G.true_scores(n, 0.7, seed=seed)
    true = np.concatenate([base, np.clip(base - drop, 0, 1)])
    judge = CallableJudge(G.NoisyJudge(true, sd, seed), model="noisy-sim")
    return judge, G.predictions(n), [f"[item {n + i}] an answer" for i in range(n)]


def run(judge, baseline, candidate, **kw):
    return tm.regression("g_eval", baseline=baseline, candidate=candidate, judge=judge, options={"g_eval": G.G_EVAL},
                         n_permutations=2000, n_resamples=400, **kw)


def test_a_paired_drop_is_found_and_no_change_is_not_called_a_regression():
    judge, baseline, candidate = two_sides(0.1)
    dropped = run(judge, baseline, candidate)
    assert dropped["verdict"] == "regressed" and dropped["delta"] == pytest.approx(-10, abs=2)
    assert dropped["ci"][1] < 0 and dropped["p_value"] < 0.01 and dropped["n"] == N
    judge, baseline, candidate = two_sides(0.0)
    same = run(judge, baseline, candidate, margin=5)
    assert same["verdict"] == "not_regressed" and same["ci"][0] > -5


def test_repeats_of_each_side_are_averaged_within_the_item():
    judge, baseline, candidate = two_sides(0.1, n=30)
    result = run(judge, baseline, candidate, repeats=3)
    assert result["requests"] == 2 * 3 * 30 and result["n"] == 30


def test_the_permutation_p_value_is_the_exact_sign_flip_test_within_its_resampling_error():
    rng = np.random.default_rng(0)
    d = rng.normal(-0.3, 1.0, 12)
    flips = np.array(list(itertools.product((-1, 1), repeat=12)))
    exact = np.mean((flips * d).mean(axis=1) <= d.mean() + 1e-12)
    assert S.sign_flip_p(d, 0.0, 20000, 1) == pytest.approx(exact, abs=0.01)


def test_holm_is_the_step_down_adjustment():
    assert S.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert S.holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])


def test_several_metrics_and_keys_are_holm_adjusted():
    refs = ["the cat sat on the mat today", "a dog ran in the park"] * 15
    base = list(refs)
    cand = ["the cat sat on a mat", "a dog ran"] * 15
    result = tm.regression(["rouge", "chrf"], keys={"rouge": ["rouge1", "rougeL"]}, baseline=base, candidate=cand,
                           references=refs, n_permutations=500, n_resamples=200)
    rows = result["results"]
    assert [(r["metric"], r["key"]) for r in rows] == [("rouge", "rouge1"), ("rouge", "rougeL"), ("chrf", "score")]
    assert [r["p_adjusted"] for r in rows] == pytest.approx(S.holm([r["p_value"] for r in rows]))
    assert result["verdict"] == "regressed" and all(r["verdict"] == "regressed" for r in rows)


def test_a_lower_is_better_metric_regresses_when_it_rises():
    refs = ["the cat sat on the mat"] * 20
    result = tm.regression("ter", baseline=refs, candidate=["a dog sat"] * 20, references=refs,
                           n_permutations=500, n_resamples=200)
    assert result["delta"] < 0 and result["verdict"] == "regressed"


def test_plan_gives_the_minimum_detectable_drop_before_any_judge_call():
    def no_call(messages, task):
        raise AssertionError("planning called the judge")

    judge = CallableJudge(no_call, model="noisy-sim")
    plan = tm.regression("g_eval", baseline=G.predictions(200), candidate=G.predictions(200), judge=judge,
                         options={"g_eval": G.G_EVAL}, plan=True, sd=0.2)
    assert plan["plan"] and plan["requests"] == 0 and plan["mde"] == pytest.approx(S.mde(0.2, 200, 0.05))
    normal = statistics.NormalDist()
    assert S.mde(0.2, 200, 0.05, 3) == pytest.approx((normal.inv_cdf(1 - 0.05 / 3) + normal.inv_cdf(0.8))
                                                     * 0.2 / 200 ** 0.5)
    wide = tm.regression("g_eval", baseline=["a"] * 50, candidate=["b"] * 50, judge=judge,
                         options={"g_eval": G.G_EVAL}, plan=True)
    assert wide["sd"] == 100 and "score range" in wide["sd_source"]


def test_assert_no_regression_fails_only_on_a_regression_unless_strict():
    judge, baseline, candidate = two_sides(0.1)
    with pytest.raises(AssertionError, match=r"g_eval.g_eval: regressed \(delta -"):
        tm.assert_no_regression("g_eval", baseline=baseline, candidate=candidate, judge=judge,
                                options={"g_eval": G.G_EVAL}, n_permutations=500, n_resamples=200)
    judge, baseline, candidate = two_sides(0.0, n=20, sd=0.2)
    kept = tm.assert_no_regression("g_eval", baseline=baseline, candidate=candidate, judge=judge,
                                   options={"g_eval": G.G_EVAL}, n_permutations=500, n_resamples=200)
    assert kept["verdict"] == "inconclusive" and "80% power" in kept["reasons"][0]
    with pytest.raises(AssertionError, match="inconclusive"):
        tm.assert_no_regression("g_eval", strict=True, baseline=baseline, candidate=candidate, judge=judge,
                                options={"g_eval": G.G_EVAL}, n_permutations=500, n_resamples=200)


@pytest.mark.parametrize("arguments, error, match", [
    ({"candidate": ["a"]}, ValueError, "candidate: 1 predictions for 2 baseline predictions"),
    ({"margin": -1}, ValueError, "margin: -1 must be a number >= 0"),
    ({"repeats": "auto"}, ValueError, "repeats: 'auto' must be a positive integer"),
    ({"predictions": ["a", "b"]}, TypeError, "predictions: pass baseline= and candidate="),
    ({"metrics": []}, ValueError, "metrics: name at least one metric"),
    ({"options": {"use_stemmer": True}}, ValueError, "options: 'use_stemmer' is not a metric of this regression"),
])
def test_bad_arguments_name_the_argument(arguments, error, match):
    given = {"metrics": "rouge", "baseline": ["a", "b"], "candidate": ["a", "b"], "references": ["a", "b"],
             **arguments}
    with pytest.raises(error, match=match):
        tm.regression(**given)
