"""ROUGE behaviour: aggregation, options, edge cases, bad input."""

import math

import pytest

import textgen_metrics
from corpus import pairs
from textgen_metrics.lexical.rouge import RougeAggregator, RougeScorer

PREDS = ["the cat sat on the mat", "a quick brown fox", "", "hello\nworld again"]
REFS = ["the cat is on the mat", ["the quick brown fox", "a fast fox"], "nothing", "hello world\nagain"]


def test_aggregate_is_exact_mean_of_per_example_scores():
    data = pairs(300, seed=2)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    per = textgen_metrics.rouge(preds, refs, use_aggregator=False, use_stemmer=True)
    agg = textgen_metrics.rouge(preds, refs, use_stemmer=True)
    assert set(agg) == {"rouge1", "rouge2", "rougeL", "rougeLsum", "signature"}
    assert per.pop("signature") == agg["signature"]
    for key, values in per.items():
        assert len(values) == len(preds)
        assert agg[key] == math.fsum(values) / len(values)
        assert isinstance(agg[key], float)


def test_precision_recall_and_keys_in_order():
    out = textgen_metrics.rouge(PREDS, REFS, rouge_types=["rouge1", "rougeW"],
                                return_precision_recall=True, use_aggregator=False)
    assert list(out) == ["rouge1", "rouge1_precision", "rouge1_recall",
                         "rougeW", "rougeW_precision", "rougeW_recall", "signature"]
    assert out["rouge1_precision"][0] == 5 / 6 and out["rouge1_recall"][0] == 5 / 6
    assert out["rouge1"][2] == 0.0  # empty prediction


def test_multiple_references_keep_best_f_per_type():
    out = textgen_metrics.rouge(["a fast fox"], [["the quick brown fox", "a fast fox"]],
                                rouge_types=["rouge2"], use_aggregator=False)
    assert out["rouge2"] == [1.0]


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    data = pairs(120, seed=9)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    a = textgen_metrics.rouge(preds, refs, bootstrap_samples=200, seed=7)
    b = textgen_metrics.rouge(preds, refs, bootstrap_samples=200, seed=7)
    c = textgen_metrics.rouge(preds, refs, bootstrap_samples=200, seed=8)
    assert a == b and a != c
    plain = textgen_metrics.rouge(preds, refs)
    for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert a[t] == plain[t]
        assert a[f"{t}_low"] <= a[t] <= a[f"{t}_high"] and a[f"{t}_low"] < a[f"{t}_high"]


def test_streaming_aggregator_equals_batch_result():
    data = pairs(200, seed=4)
    scorer = RougeScorer(["rouge1", "rougeL", "rougeSU4"], use_stemmer=True)
    agg = RougeAggregator(scorer, return_precision_recall=True)
    for p, r in data:
        agg.add(p, r)
    assert agg.count == 200
    want = textgen_metrics.rouge([p for p, _ in data], [r for _, r in data],
                                 rouge_types=["rouge1", "rougeL", "rougeSU4"], use_stemmer=True,
                                 return_precision_recall=True)
    want.pop("signature")
    assert agg.result() == want


def test_empty_texts_score_zero_for_every_type():
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeW", "rougeS", "rougeSU4"]
    out = textgen_metrics.rouge(["", "a b", "", "!!!"], ["a b", "", "", "a"], rouge_types=types,
                                use_aggregator=False, return_precision_recall=True)
    for key, values in out.items():
        assert values == [0.0, 0.0, 0.0, 0.0] or key == "signature"


def test_unicode_tokenizer_scores_what_the_default_drops():
    pred, ref = ["\u4e2d\u6587\u6587\u672c"], ["\u4e2d\u6587"]
    assert textgen_metrics.rouge(pred, ref)["rouge1"] == 0.0
    got = textgen_metrics.rouge(pred, ref, tokenizer="unicode", rouge_types=["rouge1"])
    assert got["rouge1"] == pytest.approx(2 * 0.5 * 1.0 / 1.5)


def test_split_summaries_makes_sentences_without_newlines():
    pred = ["The cat sat. The dog ran."]
    ref = ["The dog ran. The cat sat."]
    plain = textgen_metrics.rouge(pred, ref, rouge_types=["rougeLsum"])["rougeLsum"]
    split = textgen_metrics.rouge(pred, ref, rouge_types=["rougeLsum"], split_summaries=True)["rougeLsum"]
    assert plain == 0.5 and split == 1.0


def test_rouge_w_weight_and_documented_quirks():
    scorer = RougeScorer(["rougeW", "rougeSU"], rouge_w_weight=2.0)
    s = scorer.score("a b c", "a b c")
    assert s["rougeW"].precision == 1.0
    assert s["rougeW"].recall == pytest.approx((9 / 81) ** 0.5)
    # SU leaves the last token's unigram out: a one-token text has no units at all
    assert RougeScorer(["rougeSU"]).score("a", "a")["rougeSU"].fmeasure == 0.0
    # a reference without tokens: the script divides by zero; here it scores 0
    assert RougeScorer(["rougeW"]).score("...", "a b")["rougeW"].fmeasure == 0.0


def test_signature_records_settings():
    sig = RougeScorer(["rougeW"], use_stemmer=True, tokenizer="unicode", rouge_w_weight=1.5).signature
    assert "tok:unicode+porter" in sig and "w:1.5" in sig and "version:" in sig


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(predictions=["a", 3], references=["a", "b"]), TypeError, r"predictions\[1\]: expected str, got int"),
    (dict(predictions=["a"], references=[None]), TypeError, r"references\[0\]: expected str or list of str, got None"),
    (dict(predictions=["a", "b"], references=["a"]), ValueError, "predictions=2, references=1"),
    (dict(predictions=["a"], references=[[]]), ValueError, r"references\[0\]: empty list"),
    (dict(predictions=["a"], references=[["a", None]]), TypeError, r"references\[0\]\[1\]: expected str, got None"),
    (dict(predictions="abc", references=["a"]), TypeError, "predictions: expected a list"),
    (dict(predictions=None, references=["a"]), ValueError, "predictions: missing"),
    (dict(predictions=[], references=[]), ValueError, "predictions: no examples"),
    (dict(predictions=["a"], references=["a"], rouge_types=["rouge0"]), ValueError,
     "rouge_types: unknown rouge type 'rouge0'"),
    (dict(predictions=["a"], references=["a"], rouge_w_weight=1.0), ValueError, "rouge_w_weight"),
    (dict(predictions=["a"], references=["a"], tokenizer="spacy"), ValueError, "tokenizer: unknown"),
    (dict(predictions=["a"], references=["a"], bootstrap_samples=-1), ValueError, "bootstrap_samples"),
    (dict(predictions=["a"], references=["a"], bootstrap_samples=5, confidence_level=1.5), ValueError,
     "confidence_level"),
])
def test_bad_input_names_argument_and_index(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        textgen_metrics.rouge(**kwargs)


def test_evaluate_module_checks_before_encoding_and_handles_mixed_references(repo_root):
    import evaluate

    rouge = evaluate.load("./metrics/rouge")
    with pytest.raises(TypeError,
                       match=r"predictions\[1\]: expected str, got NoneType|predictions\[1\]: expected str, got None"):
        rouge.compute(predictions=["a", None], references=["a", "b"])
    with pytest.raises(ValueError, match="references: missing"):
        rouge.compute(predictions=["a"])
    mixed = rouge.compute(predictions=["the cat", "the dog"], references=[["the cat", "a cat"], "the dog"],
                          use_aggregator=False)
    assert mixed["rouge1"] == [1.0, 1.0]
    rouge.add_batch(predictions=["the cat"], references=["the cat"])
    rouge.add_batch(predictions=["a dog"], references=["the dog"])
    result = rouge.compute(rouge_types=["rouge1"])
    assert result.pop("signature").startswith("rouge|tok:rouge_score|") and result == {"rouge1": 0.75}


def test_rouge_scorer_positional_order_is_rouge_scores():
    """rouge-score: RougeScorer(rouge_types, use_stemmer=False, split_summaries=False, tokenizer=None)."""
    import inspect

    from rouge_score import rouge_scorer

    theirs = list(inspect.signature(rouge_scorer.RougeScorer.__init__).parameters)[1:]
    ours = list(inspect.signature(RougeScorer.__init__).parameters)[1:]
    assert ours[:len(theirs)] == theirs == ["rouge_types", "use_stemmer", "split_summaries", "tokenizer"]
    text = "The cats sat. The dogs ran."
    target = "The dogs ran. The cats sat."
    # (rouge-score's own sentence splitting needs nltk's punkt model, a download: not run here)
    positional = RougeScorer(["rougeLsum"], True, True).score(target, text)["rougeLsum"]
    keywords = RougeScorer(["rougeLsum"], use_stemmer=True, split_summaries=True).score(target, text)["rougeLsum"]
    assert positional == keywords and positional.fmeasure == 1.0
    assert RougeScorer(["rougeLsum"], True, False).score(target, text)["rougeLsum"].fmeasure == 0.5
    # the fourth: a tokenizer, as rouge-score's (an object with .tokenize) or a callable here
    words = RougeScorer(["rouge1"], False, False, str.split).score("A b", "a b")["rouge1"].fmeasure
    assert words == 0.5 and rouge_scorer.RougeScorer(["rouge1"], False, False, None)
