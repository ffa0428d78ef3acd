"""Every lexical and semantic result carries a signature; every module takes confidence_level,
n_resamples and seed, from the library and through its evaluate script."""

import math

import pytest

import textgen_metrics
from mt_corpus import mt_corpus
from textgen_metrics import registry
from textgen_metrics.metric import CorpusMetric
from textgen_metrics.significance import CorpusStatistics, percentile_interval

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
        assert got[f"{key}_ci"] == list(percentile_interval(per[key], 0.95, 500, 9))
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


# -- the corpus metrics' default interval stays in range (SPEC: "Interval defaults stay within the
# metric's range"); sacrebleu's symmetric one is the explicit interval="sacrebleu" ----------------------
CORPUS_METRICS = [("bleu", "bleu", (0.0, 1.0)), ("google_bleu", "google_bleu", (0.0, 1.0)),
                  ("chrf", "score", (0.0, 100.0)), ("ter", "score", (0.0, float("inf")))]


def generated_corpora():
    """Many corpora: generated ones of 2 to 40 examples (English, CJK, empty lines, several
    references), and the degenerate ones: one example, identical examples, all predictions empty,
    every prediction equal to its reference."""
    out = []
    for seed in range(24):
        n = (2, 3, 5, 9, 17, 40)[seed % 6]
        out.append(mt_corpus(n, seed=100 + seed, kinds=("english", "english", "cjk", "empty"), max_refs=3))
    one_pred, one_refs = mt_corpus(12, seed=7, kinds=("english",), max_refs=2)
    for i in range(6):
        out.append(([one_pred[i]], [one_refs[i]]))
        for k in (2, 3, 7, 11):
            out.append(([one_pred[i]] * k, [one_refs[i]] * k))
    out.append(([""] * 5, one_refs[:5]))
    out.append((["the cat sat on the mat"] * 3, ["the cat sat on the mat"] * 3))
    out.append((["a b c d e f", "g h i j k"], [["a b c d e f"], ["g h i j k l m n o p q"]]))
    return out


CORPORA = generated_corpora()


@pytest.mark.parametrize("name, main, bounds", CORPUS_METRICS, ids=[m[0] for m in CORPUS_METRICS])
def test_default_corpus_interval_stays_in_range_and_holds_its_score(name, main, bounds):
    fn = getattr(textgen_metrics, name)
    for k, (preds, refs) in enumerate(CORPORA):
        got = fn(preds, refs, confidence_level=0.95, n_resamples=200, seed=k)
        low, high = got[f"{main}_ci"]
        # each bound is some resample's score: in range, up to sacrebleu's own rounding (a perfect
        # BLEU is exp(log(100)) / 100 = 1.0000000000000004, the score of such a corpus too)
        assert bounds[0] <= low <= got[main] <= high <= bounds[1] + 1e-12, (k, preds, refs, got)
        assert "|interval:percentile|" in got["signature"]
        if len(set(zip(preds, map(str, refs), strict=True))) == 1:  # every resample is the corpus itself
            assert low == high == got[main], (k, got)


def test_default_interval_is_the_percentile_of_sacrebleus_resamples():
    """The default interval: the 2.5th and 97.5th percentile order statistics of the scores of
    sacrebleu's resamples (its indices for the seed, its statistics, its formula; float64 sums)."""
    import numpy as np
    from sacrebleu.metrics import BLEU, CHRF, TER

    from mt_corpus import sacre_refs

    preds, refs = mt_corpus(30, seed=5, kinds=("english", "cjk", "empty"), max_refs=2)
    for name, main, sacre, divisor in [("bleu", "bleu", BLEU(), 100.0), ("chrf", "score", CHRF(), 1.0),
                                       ("ter", "score", TER(), 1.0)]:
        stats = np.array(sacre._extract_corpus_statistics(preds, sacre_refs(refs)), dtype="float64")
        idxs = np.random.default_rng(3).choice(len(preds), size=(500, len(preds)), replace=True)
        scores = sorted(sacre._compute_score_from_stats(list(stats[i].sum(0))).score for i in idxs)
        got = getattr(textgen_metrics, name)(preds, refs, confidence_level=0.95, n_resamples=500, seed=3)
        assert got[f"{main}_ci"] == [scores[500 // 40] / divisor, scores[500 - 500 // 40 - 1] / divisor], name


def test_sacrebleus_symmetric_interval_is_an_explicit_option_that_can_leave_the_range():
    preds = ["The cat sat on the mat.", "It is raining today."]
    refs = [["The cat sat on the mat."], ["Today it rains heavily."]]
    sacre = textgen_metrics.bleu(preds, refs, confidence_level=0.95, interval="sacrebleu")
    default = textgen_metrics.bleu(preds, refs, confidence_level=0.95)
    assert sacre["bleu_ci"][1] > 1.0  # mean ± half the spread: past BLEU's range
    assert 0.0 <= default["bleu_ci"][0] <= default["bleu"] <= default["bleu_ci"][1] <= 1.0 + 1e-12  # see above
    assert "interval" not in sacre["signature"] and default["signature"] == sacre["signature"].replace(
        "|version:", "|interval:percentile|version:")
    assert "interval" not in textgen_metrics.bleu(preds, refs)["signature"]  # no interval, no field
    with pytest.raises(ValueError, match=r"interval: 'normal' is not one of \['percentile', 'sacrebleu'\]"):
        textgen_metrics.chrf(preds, refs, confidence_level=0.95, interval="normal")
    # the same option in the evaluate script, the command line's --option and the Spaces' help
    from textgen_metrics.registry import get_metric

    for name in ("bleu", "google_bleu", "chrf", "ter"):
        spec = get_metric(name)
        assert spec.option_kinds()["interval"] == "str" and "sacrebleu" in spec.option_help()["interval"]
        assert spec.parse_option("interval", "sacrebleu") == "sacrebleu"
    assert not get_metric("rouge").takes("interval")


def test_evaluate_script_takes_the_interval_option(repo_root):
    import evaluate

    preds = ["The cat sat on the mat.", "It is raining today."]
    refs = [["The cat sat on the mat."], ["Today it rains heavily."]]
    metric = evaluate.load(str(repo_root / "metrics" / "bleu"))
    got = metric.compute(predictions=preds, references=refs, confidence_level=0.95, interval="sacrebleu")
    assert got["bleu_ci"] == textgen_metrics.bleu(preds, refs, confidence_level=0.95, interval="sacrebleu")["bleu_ci"]
    assert metric.compute(predictions=preds, references=refs, confidence_level=0.95)["bleu_ci"][1] <= 1.0 + 1e-12


# -- every metric's interval holds its own score, degenerate samples included (issue #37, item 5) -----
DEGENERATE_PAIRS = [("the cat sat on the mat today", "the cat sat on a mat today"), ("a b c", "a b d"),
                    ("zz", "zz yy"), ("", "something")]


def _holds_its_scores(out, alike, where):
    """Each ``<key>_ci`` holds ``<key>`` (per-example scores, BERTScore's default: their mean); a
    sample of examples all alike has its score for both bounds."""
    intervals = {k[:-3]: v for k, v in out.items() if k.endswith("_ci")}
    assert intervals, where
    for key, (low, high) in intervals.items():
        score = out[key]
        if isinstance(score, list):
            score = math.fsum(score) / len(score)
        assert low <= score <= high, (where, key, score, low, high)
        if alike:
            assert low == high == score, (where, key, score, low, high)


def _degenerate_samples(columns):
    for pred, ref in DEGENERATE_PAIRS:
        for n in (1, 2, 3, 7, 10):
            yield (pred, n), {c: [pred if c == "predictions" else ref] * n for c in columns}


@pytest.mark.parametrize("name", [n for n, m in registry.METRICS.items() if not m.judge])
def test_every_interval_holds_its_own_score_one_example_and_identical_examples(name):
    """Seven examples of ROUGE-1 6/7 average to 0.8571428571428571, their resamples' numpy mean
    to 0.857142857142857: every resample is the sample, and the interval is the score itself."""
    spec = registry.METRICS[name]
    intervals = ({}, {"interval": "percentile"}) if spec.corpus else ({},)
    for where, inputs in _degenerate_samples(spec.columns):
        for extra in intervals:
            out = spec.function()(**inputs, confidence_level=0.95, n_resamples=100, **extra)
            _holds_its_scores(out, True, (where, extra))


def test_every_llm_interval_holds_its_own_score_one_example_and_identical_examples():
    """The LLM-guided metrics on a judge that answers every request by its schema (identical
    examples: identical requests, identical scores)."""
    from chat_server import ChatServer, schema_answer

    with ChatServer(lambda body: schema_answer(body)) as srv:
        judge = textgen_metrics.OpenAIJudge("judge-m", base_url=srv.url, api_key="k", concurrency=4)
        for name, spec in registry.METRICS.items():
            if not spec.judge:
                continue
            options = {"criteria": "Clarity: the text is easy to read."} if name == "g_eval" else {}
            columns = {**spec.columns, **{c: k for c, k in spec.optional_columns.items() if c == "contexts"}}
            for where, inputs in _degenerate_samples(columns):
                if where[0] == "" or where[1] not in (1, 7):
                    continue
                if "contexts" in inputs:
                    inputs["contexts"] = [["The cat sat on a mat."]] * where[1]
                out = spec.function()(**inputs, judge=judge, confidence_level=0.95, n_resamples=100, **options)
                _holds_its_scores(out, True, (name, where))


def _fixed_corpus():
    """A corpus metric of one statistic per example, its score their sum over the count: the
    stand-in for a new corpus metric, whose resamples sacrebleu has no numbers for. Defined when
    a test asks for it (a class registers itself when defined: at module level it would sit in
    the registry, beside the package's metrics, for every test collected with this file)."""

    class _FixedCorpus(CorpusMetric):
        name = "fixed_corpus_trial"
        columns = {"predictions": "text"}

        def example_statistics(self, inputs):
            return {"value": [0.8 for _ in inputs["predictions"]]}

        def aggregate(self, stats):
            return {"fixed_corpus_trial": math.fsum(stats.columns["value"]) / stats.count}

        def per_example_values(self, stats):
            return {"fixed_corpus_trial": list(stats.columns["value"])}

        def resampling(self, stats):
            return CorpusStatistics([[v, 1] for v in stats.columns["value"]], lambda row: row[0] / row[1])

    return _FixedCorpus


def test_a_new_corpus_metric_resamples_in_float64_and_its_intervals_hold_its_score():
    """float32 sums (sacrebleu's, for BLEU, chrF and TER) gave one example of 0.8 the interval
    [0.800000011920929, 0.800000011920929], which leaves out 0.8."""
    from textgen_metrics.metric import metric_classes

    try:
        fn = _fixed_corpus().function()
        for n in (1, 3, 7):
            for interval in ("percentile", "sacrebleu"):
                out = fn(["x"] * n, confidence_level=0.95, n_resamples=50, interval=interval)
                score = out["fixed_corpus_trial"]  # 0.8; three of them: 2.4000000000000004 / 3
                assert out["fixed_corpus_trial_ci"] == [score, score] and (n > 1 or score == 0.8), out
            compared = textgen_metrics.compare("fixed_corpus_trial", ["x"] * n, ["y"] * n, n_resamples=50)
            scores = compared["scores"]["fixed_corpus_trial"]
            assert scores["a_ci"] == [scores["a"]] * 2 and scores["b_ci"] == [scores["b"]] * 2
            assert scores["difference_ci"] == [0.0, 0.0]
        assert CorpusStatistics([[0.8, 1]], lambda row: row[0]).dtype == "float64"
        assert CorpusStatistics([[0.8, 1]], lambda row: row[0], sacrebleu=True).dtype == "float32"
    finally:
        metric_classes().pop("fixed_corpus_trial", None)
