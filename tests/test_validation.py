"""Bad options and bad texts: every one a clear error that names the option, or the argument and
the example index, raised before any scoring."""

import math

import pytest

import textgen_metrics
from textgen_metrics.validation import check_bool, check_number

P, R = ["the cat sat on the mat"], ["the cat is on the mat"]
INF, NAN = math.inf, math.nan


@pytest.mark.parametrize("fn, kwargs, exc, message", [
    ("rouge", dict(rouge_types=["rougeW"], rouge_w_weight=INF), ValueError,
     "rouge_w_weight: inf is not a finite number"),
    ("rouge", dict(rouge_types=["rougeW"], rouge_w_weight=NAN), ValueError,
     "rouge_w_weight: nan is not a finite number"),
    ("rouge", dict(rouge_w_weight=1.0), ValueError, "rouge_w_weight: 1.0 must be greater than 1"),
    ("rouge", dict(rouge_w_weight="1.5"), TypeError, "rouge_w_weight: expected a number, got '1.5'"),
    ("rouge", dict(bootstrap_samples=INF), ValueError, "bootstrap_samples: inf is not a finite number"),
    ("rouge", dict(bootstrap_samples=2.5), TypeError, "bootstrap_samples: expected an integer, got 2.5"),
    ("rouge", dict(bootstrap_samples=-1), ValueError, "bootstrap_samples: -1 must be at least 0"),
    ("rouge", dict(bootstrap_samples=10, confidence_level=NAN), ValueError, "confidence_level: nan is not a finite"),
    ("rouge", dict(bootstrap_samples=10, confidence_level=1.0), ValueError,
     r"confidence_level: 1.0 must be in \(0, 1\)"),
    ("bleu", dict(weights=[INF, 0.5]), ValueError, "weights: .* must be a non-empty sequence of finite non-negative"),
    ("bleu", dict(weights=[0.5, NAN]), ValueError, "weights: .* finite non-negative"),
    ("bleu", dict(weights=[-0.5, 1.5]), ValueError, "weights: .* finite non-negative"),
    ("meteor", dict(alpha=NAN), ValueError, "alpha: nan is not a finite number"),
    ("meteor", dict(alpha=1.5), ValueError, r"alpha: 1.5 must be in \[0, 1\]"),
    ("meteor", dict(beta=NAN), ValueError, "beta: nan is not a finite number"),
    ("meteor", dict(beta=INF), ValueError, "beta: inf is not a finite number"),
    ("meteor", dict(beta=-1), ValueError, "beta: -1 must be at least 0"),
    ("meteor", dict(gamma=INF), ValueError, "gamma: inf is not a finite number"),
    ("meteor", dict(gamma="0.5"), TypeError, "gamma: expected a number"),
    ("bertscore", dict(nthreads=-1), ValueError, "nthreads: -1 must be at least 0"),
    ("bertscore", dict(nthreads=2.0), TypeError, "nthreads: expected an integer"),
])
def test_non_finite_and_out_of_range_options_name_the_option(fn, kwargs, exc, message):
    with pytest.raises(exc, match=message):
        getattr(textgen_metrics, fn)(P, R, **kwargs)


def test_check_helpers():
    assert check_bool("x", True) is True and check_bool("x", 0) is False
    import numpy as np

    assert check_bool("x", np.bool_(True)) is True
    for bad in ("true", None, 2, 1.0, [True]):
        with pytest.raises(TypeError, match="x: expected True or False"):
            check_bool("x", bad)
    assert check_number("n", 3, minimum=1, integer=True) == 3
    assert check_number("n", np.int64(3), integer=True) == 3
    with pytest.raises(TypeError, match="n: expected a number, got True"):
        check_number("n", True)


SURROGATE = "caf\udce9 au lait"  # what a Latin-1 file read as UTF-8 with surrogateescape leaves


@pytest.mark.parametrize("fn", ["rouge", "bleu", "google_bleu", "meteor", "bertscore"])
def test_a_lone_surrogate_names_argument_index_and_character(fn):
    f = getattr(textgen_metrics, fn)
    with pytest.raises(ValueError, match=r"predictions\[1\]: lone surrogate '\\udce9' at character 3"):
        f(["fine", SURROGATE], ["fine", "fine"])
    with pytest.raises(ValueError, match=r"references\[0\]: lone surrogate"):
        f(["fine"], [SURROGATE])
    with pytest.raises(ValueError, match=r"references\[0\]\[1\]: lone surrogate '\\udce9' at character 3"):
        f(["fine"], [["fine", SURROGATE]])
    # valid non-ASCII text is no error
    f(["café au lait"], ["café noir"])


def test_a_lone_surrogate_in_an_llm_metric_is_caught_before_the_judge():
    calls = []
    with pytest.raises(ValueError, match=r"contexts\[0\]\[1\]: lone surrogate"):
        textgen_metrics.faithfulness(predictions=["an answer"], contexts=[["ok", SURROGATE]],
                                     judge=lambda m: calls.append(m) or "{}")
    assert calls == []


def test_a_lone_surrogate_through_evaluate(repo_root):
    import evaluate

    rouge = evaluate.load("./metrics/rouge")
    with pytest.raises(ValueError, match=r"predictions\[0\]: lone surrogate"):
        rouge.compute(predictions=[SURROGATE], references=["x"])


@pytest.mark.parametrize("fn", ["rouge", "bleu", "google_bleu", "meteor", "bertscore"])
def test_all_empty_lists_are_a_clear_error(fn):
    with pytest.raises(ValueError, match="predictions: no examples"):
        getattr(textgen_metrics, fn)([], [])


def test_check_reference_sets_returns_each_example_as_given_with_the_same_errors():
    from textgen_metrics.validation import check_reference_sets, check_references

    listed, tupled = ["b", "c"], ("d",)
    got = check_reference_sets("references", ["a", listed, tupled, iter(["e"])])
    assert got[0] == "a" and got[1] is listed and got[2] is tupled and got[3] == ["e"]
    assert check_references("references", ["a", listed, tupled, iter(["e"])]) == [["a"], ["b", "c"], ["d"], ["e"]]
    for bad, message in [([None], r"references\[0\]: expected str or list of str, got None"),
                         ([[]], r"references\[0\]: empty list"),
                         ([["x", 3]], r"references\[0\]\[1\]: expected str, got int")]:
        for check in (check_reference_sets, check_references):
            with pytest.raises((TypeError, ValueError), match=message):
                check("references", bad)


def test_rouge_scores_string_list_and_tuple_references_alike():
    preds = ["the cat sat on the mat", "a dog ran far away"]
    as_str = textgen_metrics.rouge(preds, ["the cat is on the mat", "the dog ran away"], use_aggregator=False)
    as_list = textgen_metrics.rouge(preds, [["the cat is on the mat"], ("the dog ran away",)], use_aggregator=False)
    assert as_str == as_list


def test_rouge_over_a_large_batch_sets_off_no_garbage_collection():
    # no container per example: 5,000 one-item lists would set off seven collections, the first of
    # them over every object made since the last (milliseconds in a process that just imported)
    import gc

    preds = [f"the cat number {i} sat on the mat" for i in range(5000)]
    refs = [f"a cat number {i} is on the mat" for i in range(5000)]
    collections = []
    gc.collect()
    gc.callbacks.append(lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)
    try:
        textgen_metrics.rouge(preds, refs, use_aggregator=False, use_stemmer=True)
    finally:
        gc.callbacks.pop()
    assert collections == []
