"""``multi_ref`` of rouge and bertscore: ``"best"`` (default) and ``"mean"``.

"mean" is held equal to the mean over an example's references of the reference packages' own
single-reference scores: rouge-score 0.1.2's ``RougeScorer.score(reference, prediction)`` (bit for
bit: P, R and F each averaged with ``math.fsum`` / count) and bert_score 0.3.13's scores of each
(prediction, reference) pair (1e-5, as tests/test_bertscore.py), over generated examples with one
to five references each; "best" stays rouge-score's ``score_multi`` and bert_score's maximum.
"""

import math

import pytest
from rouge_score import rouge_scorer

import textgen_metrics
from bert_score_reference import reference_score
from corpus import multi_references
from textgen_metrics.errors import OptionError
from textgen_metrics.lexical.rouge import Rouge, RougeAggregator, RougeScorer
from textgen_metrics.semantic.bertscore import BertScore, bertscore, default_model_path
from textgen_metrics.tokenizers import split_sentences

TYPES = ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]
FIELDS = ("precision", "recall", "fmeasure")


def data(n, seed):
    """``n`` examples with 1 to 5 references each (every count present)."""
    out = multi_references(n, seed=seed, max_refs=5)
    assert {len(refs) for _, refs in out} == {1, 2, 3, 4, 5}
    return [p for p, _ in out], [refs if len(refs) > 1 or i % 2 else refs[0] for i, (_, refs) in enumerate(out)]


def as_list(refs):
    return [refs] if isinstance(refs, str) else refs


def fmean(values):
    return math.fsum(values) / len(values)


def rouge_score_means(preds, refs, use_stemmer, transform=lambda t: t):
    """{type: {field: [per-example mean over references of rouge-score's score]}}."""
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
    out = {t: {f: [] for f in FIELDS} for t in TYPES}
    for pred, group in zip(preds, refs, strict=True):
        scores = [scorer.score(transform(r), transform(pred)) for r in as_list(group)]
        for t in TYPES:
            for f in FIELDS:
                out[t][f].append(fmean([getattr(s[t], f) for s in scores]))
    return out


def assert_rouge_equal(got, want):
    for t in TYPES:
        assert got[t] == want[t]["fmeasure"], t
        assert got[f"{t}_precision"] == want[t]["precision"], t
        assert got[f"{t}_recall"] == want[t]["recall"], t


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_mean_is_the_mean_of_rouge_scores_per_reference_scores(use_stemmer):
    preds, refs = data(240, seed=61 + use_stemmer)
    got = textgen_metrics.rouge(preds, refs, rouge_types=TYPES, use_stemmer=use_stemmer, multi_ref="mean",
                                return_precision_recall=True, use_aggregator=False)
    want = rouge_score_means(preds, refs, use_stemmer)
    assert_rouge_equal(got, want)
    # the same numbers from the scorer's own entry points
    scorer = RougeScorer(TYPES, use_stemmer=use_stemmer, multi_ref="mean")
    batch = scorer.score_batch(preds, refs)
    for i in range(0, len(preds), 7):
        one = scorer.score_multi(as_list(refs[i]), preds[i])
        for t in TYPES:
            assert one[t] == batch[t][i] == tuple(want[t][f][i] for f in FIELDS)


def test_rouge_mean_with_split_summaries_and_rouge_1_5_5_types():
    """split_summaries: rougeLsum over the split sentences, as rouge-score scores them once they
    are given one per line; rougeW/S/SU (and every input mode of the core: texts, sentence units,
    tokens) the mean of this package's single-reference scores."""
    preds, refs = data(150, seed=63)
    got = textgen_metrics.rouge(preds, refs, rouge_types=TYPES, split_summaries=True, multi_ref="mean",
                                return_precision_recall=True, use_aggregator=False)
    assert_rouge_equal(got, rouge_score_means(preds, refs, False, lambda t: "\n".join(split_sentences(t))))
    types = ["rougeL", "rougeLsum", "rougeW", "rougeS4", "rougeSU"]
    for kwargs in (dict(), dict(split_summaries=True), dict(tokenizer="unicode", use_stemmer=True)):
        single = RougeScorer(types, **kwargs)
        mean = RougeScorer(types, multi_ref="mean", **kwargs).score_batch(preds, refs)
        for i, (pred, group) in enumerate(zip(preds, refs, strict=True)):
            scores = [single.score(r, pred) for r in as_list(group)]
            for t in types:
                assert mean[t][i] == tuple(fmean([getattr(s[t], f) for s in scores]) for f in FIELDS), (t, kwargs)


def test_rouge_best_is_unchanged():
    preds, refs = data(120, seed=64)
    default = textgen_metrics.rouge(preds, refs, rouge_types=TYPES, use_aggregator=False, use_stemmer=True)
    best = textgen_metrics.rouge(preds, refs, rouge_types=TYPES, use_aggregator=False, use_stemmer=True,
                                 multi_ref="best")
    assert best == default
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
    for i, (pred, group) in enumerate(zip(preds, refs, strict=True)):
        want = scorer.score_multi(as_list(group), pred)
        for t in TYPES:
            assert default[t][i] == want[t].fmeasure
    assert "refs:best-f" in default["signature"]


def test_rouge_mean_aggregates_intervals_and_merged_parts():
    preds, refs = data(150, seed=65)
    per = textgen_metrics.rouge(preds, refs, multi_ref="mean", use_aggregator=False)
    agg = textgen_metrics.rouge(preds, refs, multi_ref="mean")
    for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert agg[t] == fmean(per[t])  # the mean of the per-example means
    assert "refs:mean" in agg["signature"] and "refs:best-f" not in agg["signature"]
    ci = textgen_metrics.rouge(preds, refs, multi_ref="mean", confidence_level=0.9, n_resamples=200)
    boot = textgen_metrics.rouge(preds, refs, multi_ref="mean", bootstrap_samples=200, seed=3)
    for t in ("rouge1", "rougeLsum"):
        assert ci[f"{t}_ci"][0] <= agg[t] <= ci[f"{t}_ci"][1]
        assert boot[t] == agg[t] and boot[f"{t}_low"] <= agg[t] <= boot[f"{t}_high"]
    # statistics of parts merge into the whole's result; the streaming aggregator agrees
    metric = Rouge(multi_ref="mean")
    parts = [metric.statistics({"predictions": preds[i:i + 40], "references": refs[i:i + 40]})
             for i in range(0, len(preds), 40)]
    assert metric.score(sum(parts[1:], parts[0])).as_dict(True) == agg
    stream = RougeAggregator(RougeScorer(multi_ref="mean"))
    stream.add_batch(preds[:70], refs[:70])
    for p, r in zip(preds[70:], refs[70:], strict=True):
        stream.add(p, r)
    assert stream.result() == {k: v for k, v in agg.items() if k != "signature"}
    # statistics of "best" and "mean" do not merge
    best, mean = Rouge(), Rouge(multi_ref="mean")
    inputs = {"predictions": preds[:3], "references": refs[:3]}
    with pytest.raises(ValueError, match="do not merge"):
        best.statistics(inputs) + mean.statistics(inputs)


@pytest.mark.parametrize("call", [
    lambda v: textgen_metrics.rouge(["a"], ["a"], multi_ref=v),
    lambda v: RougeScorer(["rouge1"], multi_ref=v),
    lambda v: textgen_metrics.bertscore(["a"], ["a"], multi_ref=v),
])
@pytest.mark.parametrize("value", ["avg", "Mean", None])
def test_bad_multi_ref_names_the_option_and_the_valid_values(call, value):
    with pytest.raises(OptionError, match=r"multi_ref: .* is not one of 'best', 'mean'") as e:
        call(value)
    assert repr(value) in str(e.value)


def test_every_front_end_reads_the_option():
    for cls in (Rouge, BertScore):
        assert cls.option_kinds()["multi_ref"] == "str"
        assert "mean" in cls.option_help()["multi_ref"]
        assert cls.parse_option("multi_ref", "mean") == "mean"  # the command line's --option
        assert getattr(textgen_metrics, cls.name).__signature__.parameters["multi_ref"].default == "best"


@pytest.fixture(scope="module")
def bert_data():
    preds, refs = data(28, seed=66)  # under 40: none of the corpus's long texts (CPU time)
    return preds, [as_list(r) for r in refs]


@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_mean_is_the_mean_of_bert_scores_per_reference_scores(bert_data, idf, tmp_path):
    preds, refs = bert_data
    kwargs = {}
    if idf:  # and a baseline: the pairs are rescaled as bert_score's, then averaged
        path = tmp_path / "baseline.tsv"
        path.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.5,0.25,0.4\n" for i in range(7)))
        kwargs = dict(rescale_with_baseline=True, baseline_path=str(path), lang="en")
    got = bertscore(preds, refs, idf=idf, batch_size=32, multi_ref="mean", **kwargs)
    # bert_score on every (prediction, reference) pair in one call: the idf weights come from the
    # same flattened references as for several references at once
    flat_preds = [p for p, group in zip(preds, refs, strict=True) for _ in group]
    flat_refs = [r for group in refs for r in group]
    theirs = reference_score(flat_preds, flat_refs, model_type=default_model_path(), num_layers=6, idf=idf,
                             batch_size=32, nthreads=1, **kwargs)
    at = 0
    worst = 0.0
    for i, group in enumerate(refs):
        for key, values in zip(("precision", "recall", "f1"), theirs, strict=True):
            worst = max(worst, abs(got[key][i] - fmean(values[at:at + len(group)])))
        at += len(group)
    assert worst <= 1e-5
    assert "refs:mean" in got["signature"]
    # best: bert_score's maximum, unchanged
    best = bertscore(preds, refs, idf=idf, batch_size=32, **kwargs)
    assert BertScore().options == BertScore(multi_ref="best").options
    assert "|refs:" not in best["signature"]
    at = 0
    for i, group in enumerate(refs):
        assert abs(best["f1"][i] - max(theirs[2][at:at + len(group)])) <= 1e-5
        at += len(group)


def test_bertscore_mean_with_all_layers_and_aggregate(bert_data):
    preds, refs = bert_data[0][:16], bert_data[1][:16]
    layers = bertscore(preds, refs, all_layers=True, multi_ref="mean")
    flat = bertscore([p for p, g in zip(preds, refs, strict=True) for _ in g], [r for g in refs for r in g],
                     all_layers=True)
    for layer in range(len(layers["f1"])):
        at = 0
        for i, group in enumerate(refs):
            assert layers["f1"][layer][i] == pytest.approx(fmean(flat["f1"][layer][at:at + len(group)]), abs=1e-6)
            at += len(group)
    metric = BertScore(multi_ref="mean", confidence_level=0.9, n_resamples=100)
    result = metric.score(metric.statistics({"predictions": preds, "references": refs}))
    agg, per = result.as_dict(True), result.as_dict(False)
    assert agg["f1"] == fmean(per["f1"]) and agg["f1_ci"][0] <= agg["f1"] <= agg["f1_ci"][1]
