"""gate / assert_gate (SPEC "Quality gates"): verdicts from the interval over items, repeats
averaged within an item, adaptive repeats, the unscored policy, ceilings, every metric."""

import math

import numpy as np
import pytest

import gate_sim as G
import textgen_metrics as tm
from textgen_metrics import CallableJudge
from textgen_metrics.gates.gate import decide
from textgen_metrics.registry import METRICS
from textgen_metrics.significance import percentile_interval
from textgen_metrics.stats import gates as S

N = 60


def noisy(mean, sd=0.1, seed=1, n=N, **kw):
    true = G.true_scores(n, mean, seed=seed)
    return true, CallableJudge(G.NoisyJudge(true, sd, seed, **kw), model="noisy-sim")


def g_eval_gate(threshold, judge, n=N, **kw):
    return tm.gate("g_eval", threshold, judge=judge, options=G.G_EVAL, predictions=G.predictions(n), **kw)


def test_clear_cases_pass_and_fail_and_a_borderline_one_is_inconclusive():
    _, judge = noisy(0.8)
    assert g_eval_gate(60, judge).verdict == "pass"
    assert g_eval_gate(95, judge).verdict == "fail"
    result = g_eval_gate(80, judge, max_repeats=2)
    assert result.verdict == "inconclusive"
    low, high = result.ci
    assert low < 80 <= high and result.reasons == ("still undecided after max_repeats=2",)


def test_repeats_are_averaged_within_the_item_never_pooled_as_items():
    true, judge = noisy(0.7, sd=0.2)
    result = g_eval_gate(50, judge, repeats=4, n_resamples=300)
    assert (result.n, result.repeats, result.requests) == (N, 4, 4 * N)
    means = [np.mean([round(100 * G.draw(true, 1, i, k, 0.2)) for k in range(4)]) for i in range(N)]
    assert result.score == pytest.approx(np.mean(means))
    assert list(result.ci) == pytest.approx(percentile_interval(means, 0.95, 300, 12345))
    pooled = percentile_interval([round(100 * G.draw(true, 1, i, k, 0.2)) for i in range(N) for k in range(4)],
                                 0.95, 300, 12345)
    assert pooled[1] - pooled[0] < 0.8 * (result.ci[1] - result.ci[0])  # what pooling would have claimed


def test_auto_asks_more_only_while_undecided():
    _, judge = noisy(0.8)
    clear = g_eval_gate(50, judge)
    assert (clear.repeats, clear.requests) == (1, N)
    borderline = g_eval_gate(80, judge, max_repeats=3)
    assert (borderline.repeats, borderline.requests) == (3, 3 * N)


def test_auto_spends_the_error_over_the_looks():
    assert S.look_level(0.95, 5) == pytest.approx(0.99)
    assert S.look_level(0.95, 1) == pytest.approx(0.95)
    # a small simulation: true mean 0.05 below the threshold, no false pass over 60 gates
    passes = 0
    for seed in range(60):
        target = G.SimTarget(G.true_scores(100, 0.55, seed=seed), 0.1, seed)
        result = decide(target, 0.6, True, 5, 0.95, "inconclusive", 0.1, 200, seed)
        passes += result.verdict == "pass"
    assert passes <= 3


def test_unscored_items_are_neither_a_pass_nor_a_fail():
    _, judge = noisy(0.8, fail_items=range(3))  # 3 of 60 items: 5%
    kept = g_eval_gate(60, judge)
    assert (kept.verdict, kept.n, kept.unscored) == ("pass", N - 3, 3)
    assert kept.reasons == ("3 unscored item(s) left out",)
    strict = g_eval_gate(60, judge, max_unscored=0.01)
    assert strict.verdict == "inconclusive" and "more than max_unscored=0.01" in strict.reasons[0]
    failing = g_eval_gate(60, judge, unscored="fail")
    assert failing.verdict == "fail" and failing.repeats == 1


def test_a_lower_is_better_metric_is_gated_on_a_ceiling():
    refs = ["the cat sat on the mat"] * 20
    good = tm.gate("ter", 20, predictions=refs, references=refs)
    assert good.lower_is_better and good.verdict == "pass" and good.score == 0.0
    bad = tm.gate("ter", 20, predictions=["a dog ran"] * 20, references=refs)
    assert bad.verdict == "fail"
    judge = G.schema_judge()  # bias scores 1.0 with the stand-in: over a 0.5 ceiling
    assert tm.gate("bias", 0.5, judge=judge, predictions=["x"] * 5, lower_is_better=False).verdict == "pass"


@pytest.mark.parametrize("name", ["ter", "bias", "toxicity", "hallucination"])
def test_the_metrics_whose_lower_score_is_better_declare_it_and_are_gated_on_a_ceiling(name):
    spec = METRICS[name]
    assert spec.lower_is_better and not any(METRICS[m].lower_is_better for m in ("faithfulness", "chrf", "g_eval"))
    if not spec.judge:
        return  # TER: the test above
    inputs = {c: JUDGED_INPUTS[c] for c in spec.columns}
    result = tm.gate(name, 0.5, judge=G.schema_judge(), **inputs)  # the stand-in finds every item at fault: 1.0
    assert result.lower_is_better and result.score == 1.0 and result.verdict == "fail"
    assert "ceiling 0.5" in result.describe()


def test_assert_gate_raises_with_the_figures_unless_it_passes():
    _, judge = noisy(0.8)
    assert tm.assert_gate("g_eval", 60, judge=judge, options=G.G_EVAL, predictions=G.predictions(N)).verdict == "pass"
    with pytest.raises(AssertionError, match=r"g_eval.g_eval: inconclusive .*threshold 80"):
        tm.assert_gate("g_eval", 80, judge=judge, options=G.G_EVAL, predictions=G.predictions(N), max_repeats=1)
    result = tm.assert_gate("g_eval", 80, judge=judge, options=G.G_EVAL, predictions=G.predictions(N),
                            max_repeats=1, inconclusive="pass")
    assert result.verdict == "inconclusive"


LEXICAL_INPUTS = {"predictions": ["the cat sat on the mat", "a dog ran"] * 5,
                  "references": ["the cat sat on the mat", "the dog ran fast"] * 5}
JUDGED_INPUTS = {"predictions": ["the cat sat"] * 5, "references": ["the cat sat on the mat"] * 5,
                 "contexts": [["the cat sat"]] * 5, "queries": ["where is the cat"] * 5, "baselines": ["a dog"] * 5,
                 "sources": ["the cat sat on the mat"] * 5}


@pytest.mark.parametrize("name", [n for n in METRICS if n != "bertscore"])
def test_every_metric_of_the_library_gates(name):
    spec = METRICS[name]
    if spec.judge:
        inputs = {c: JUDGED_INPUTS[c] for c in spec.columns}
        options = {"criteria": "Correct"} if name == "g_eval" else None
        threshold = spec.score_range[1] if spec.lower_is_better else spec.score_range[0]
        result = tm.gate(name, threshold, judge=G.schema_judge(), options=options, **inputs)
        assert result.judge_fingerprint["metric"] == name and result.requests > 0
    else:
        result = tm.gate(name, spec.score_range[1] if spec.lower_is_better else spec.score_range[0], **LEXICAL_INPUTS)
        assert result.repeats == 1 and result.requests == 0 and result.judge_fingerprint is None
        plain = METRICS[name].function()(**LEXICAL_INPUTS)
        assert result.score == pytest.approx(plain[result.key])
    assert result.verdict == "pass" and result.n == (5 if spec.judge else 10)
    assert result.signature


def test_bertscore_gates_on_the_packaged_model():
    result = tm.gate("bertscore", 0.5, key="f1", **LEXICAL_INPUTS)
    assert result.verdict == "pass" and result.key == "f1" and 0.5 < result.score <= 1.0


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_a_corpus_metric_keeps_its_corpus_score_and_its_own_interval(name):
    result = tm.gate(name, 0.0, confidence_level=0.9, n_resamples=300, seed=7, **LEXICAL_INPUTS)
    plain = METRICS[name].function()(**LEXICAL_INPUTS, confidence_level=0.9, n_resamples=300, seed=7)
    assert result.score == plain[result.key] and list(result.ci) == plain[f"{result.key}_ci"]
    assert result.ci[0] < result.ci[1]


def test_the_result_dict_has_specs_fields():
    result = tm.gate("rouge", 0.2, key="rougeL", **LEXICAL_INPUTS)
    assert list(result.as_dict())[:13] == ["metric", "key", "verdict", "score", "ci", "threshold", "n", "repeats",
                                           "requests", "unscored", "reasons", "signature", "judge_fingerprint"]
    assert result.key == "rougeL" and math.isfinite(result.score)


@pytest.mark.parametrize("arguments, match", [
    ({"threshold": "high"}, "threshold: 'high' must be a number"),
    ({"repeats": 0}, "repeats: 0 must be 'auto' or a positive integer"),
    ({"max_repeats": 0}, "max_repeats: 0 must be a positive integer"),
    ({"unscored": "skip"}, "unscored: 'skip' is not one of"),
    ({"max_unscored": 2}, r"max_unscored: 2 must lie in \[0.0, 1.0\]"),
    ({"key": "rouge9"}, "key: 'rouge9' is not a score of rouge"),
    ({"judge_replay": "always"}, "judge_replay: 'always' is not one of"),
    ({"judge_replay": "strict"}, "judge_recording: judge_replay='strict' needs the recording's path"),
    ({"options": {"confidence_level": 0.9}}, "options: 'confidence_level' is set by the gate itself"),
])
def test_bad_arguments_are_errors_naming_the_argument(arguments, match):
    given = {"threshold": 0.5, **arguments}
    with pytest.raises(ValueError, match=match):
        tm.gate("rouge", **given, **LEXICAL_INPUTS)


def test_bad_inputs_name_the_column_and_row():
    with pytest.raises(ValueError, match="predictions"):
        tm.gate("rouge", 0.5, predictions=["a", None], references=["a", "b"])
    with pytest.raises(ValueError, match="metric: 'rogue' is not a metric of the library"):
        tm.gate("rogue", 0.5, predictions=["a"], references=["a"])
    with pytest.raises(TypeError, match="contexts: not an input of rouge"):
        tm.gate("rouge", 0.5, predictions=["a"], references=["a"], contexts=[["a"]])
