"""Every lexical and semantic result carries a signature; every module takes confidence_level,
n_resamples and seed, from the library and through its evaluate script."""

import pytest

import textgen_metrics
from mt_corpus import mt_corpus
from textgen_metrics.significance import mean_interval

PREDS, REFS = mt_corpus(60, seed=12, kinds=("english",), max_refs=2)


@pytest.mark.parametrize("name, main", [("rouge", "rouge1"), ("meteor", "meteor"), ("bleu", "bleu"),
                                        ("google_bleu", "google_bleu"), ("chrf", "score"), ("ter", "score")])
def test_every_lexical_result_has_a_signature_and_takes_intervals(name, main):
    fn = getattr(textgen_metrics, name)
    plain = fn(PREDS, REFS)
    assert isinstance(plain["signature"], str) and "nrefs:var" in plain["signature"]
    got = fn(PREDS, REFS, confidence_level=0.9, n_resamples=250, seed=4)
    low, high = got[f"{main}_ci"]
    assert low <= got[main] <= high and low < high
    assert got[main] == plain[main]
    assert "bs:250" in got["signature"] and "seed:4" in got["signature"] and "ci:0.9" in got["signature"]
    assert got == fn(PREDS, REFS, confidence_level=0.9, n_resamples=250, seed=4)
    assert got[f"{main}_ci"] != fn(PREDS, REFS, confidence_level=0.9, n_resamples=250, seed=5)[f"{main}_ci"]


def test_mean_metric_interval_is_the_percentile_bootstrap_of_the_per_example_scores():
    per = textgen_metrics.rouge(PREDS, REFS, rouge_types=["rouge2", "rougeL"], use_aggregator=False)
    got = textgen_metrics.rouge(PREDS, REFS, rouge_types=["rouge2", "rougeL"], confidence_level=0.95,
                                n_resamples=500, seed=9, return_precision_recall=True)
    for key in ("rouge2", "rougeL"):
        assert got[f"{key}_ci"] == list(mean_interval(per[key], 0.95, 500, 9))
        assert f"{key}_precision_ci" in got
    lists = textgen_metrics.meteor(PREDS, REFS, use_aggregator=False, confidence_level=0.95, n_resamples=200)
    assert len(lists["meteor"]) == len(PREDS) and len(lists["meteor_ci"]) == 2
    # ROUGE's own bootstrap_samples intervals are unchanged
    legacy = textgen_metrics.rouge(PREDS, REFS, bootstrap_samples=100, seed=3, confidence_level=0.9)
    assert "rouge1_low" in legacy and "rouge1_ci" not in legacy


def test_signatures_record_the_settings():
    rouge = textgen_metrics.rouge(PREDS, REFS, tokenizer="unicode", use_stemmer=True)
    assert "tok:unicode+porter" in rouge["signature"]
    assert "alpha:0.8" in textgen_metrics.meteor(PREDS, REFS, alpha=0.8)["signature"]
    assert textgen_metrics.meteor(["a"], ["a"])["signature"].startswith("meteor|tok:treebank|alpha:0.9|")


def test_bertscore_signature_and_intervals():
    got = textgen_metrics.bertscore(PREDS[:8], REFS[:8], confidence_level=0.95, n_resamples=200)
    assert len(got["f1"]) == 8 and got["f1_ci"][0] <= sum(got["f1"]) / 8 <= got["f1_ci"][1]
    assert got["signature"] == (f"bertscore|hashcode:{got['hashcode']}|nrefs:var|bs:200|seed:12345"
                                f"|version:{textgen_metrics.__version__}")


@pytest.mark.parametrize("name", ["rouge", "meteor", "bleu", "google_bleu", "chrf", "ter"])
def test_evaluate_modules_pass_the_interval_options(name, repo_root):
    import evaluate

    metric = evaluate.load(f"./metrics/{name}")
    got = metric.compute(predictions=PREDS[:20], references=REFS[:20], confidence_level=0.95, n_resamples=100)
    assert any(k.endswith("_ci") for k in got) and "signature" in got
    with pytest.raises(ValueError, match="confidence_level"):
        metric.compute(predictions=PREDS[:2], references=REFS[:2], confidence_level=95)
