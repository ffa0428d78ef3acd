"""TER equals sacrebleu's TER: the edits of every sentence pair (realistic, repetitive, long,
empty), corpus and sentence scores with every option, signature and interval."""

import random

import pytest
from sacrebleu.metrics import TER
from sacrebleu.metrics.lib_ter import translation_edit_rate as sacrebleu_edits

import textgen_metrics
from corpus import pairs
from mt_corpus import mt_corpus, sacre_refs
from textgen_metrics.lexical.tercom import translation_edit_rate

OPTIONS = [dict(), dict(case_sensitive=True), dict(normalized=True, asian_support=True),
           dict(no_punct=True), dict(normalized=True, no_punct=True, asian_support=True, case_sensitive=True)]


def sentence_pairs(seed):
    rng = random.Random(seed)
    # (sacrebleu needs minutes for the few texts of several hundred words that corpus.pairs makes)
    out = [(p.split(), r.split()) for p, r in pairs(150, seed=seed) if len(p.split()) + len(r.split()) < 300]
    vocab = ["a", "b", "c", "the", "x"]
    for _ in range(60):  # few distinct words: many shift candidates, the 1,000-candidate limit
        out.append(([rng.choice(vocab) for _ in range(rng.randint(0, 25))],
                    [rng.choice(vocab) for _ in range(rng.randint(0, 25))]))
    for _ in range(6):  # long and of very different lengths: the beam matters
        ref = [str(rng.randrange(40)) for _ in range(rng.randint(50, 90))]
        hyp = ref[:]
        rng.shuffle(hyp)
        hyp = hyp[: rng.randint(1, len(hyp))] + [str(rng.randrange(40)) for _ in range(rng.randint(0, 30))]
        out.append((hyp, ref))
    out += [([], []), ([], ["a"]), (["a"], []), (["a", "b"], ["b", "a"])]
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_edits_equal_sacrebleus_tercom(seed):
    for hyp, ref in sentence_pairs(seed):
        assert translation_edit_rate(hyp, ref) == sacrebleu_edits(hyp, ref), (hyp, ref)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_corpus_and_sentence_ter_equal_sacrebleu(options):
    preds, refs = mt_corpus(150, seed=len(str(options)), kinds=("english", "cjk", "unicode", "empty"), max_refs=3)
    metric = TER(**options)
    want = metric.corpus_score(preds, sacre_refs(refs))
    got = textgen_metrics.ter(preds, refs, **options)
    assert (got["score"], got["num_edits"], got["ref_length"]) == (want.score, want.num_edits, want.ref_length)
    assert got["signature"] == metric.get_signature().format()
    per = textgen_metrics.ter(preds, refs, use_aggregator=False, **options)
    sentences = [metric.sentence_score(p, rs) for p, rs in zip(preds, refs, strict=True)]
    assert per["score"] == [s.score for s in sentences]
    assert per["num_edits"] == [s.num_edits for s in sentences]


def test_hugging_face_option_names():
    preds, refs = ["Hello, world!", "What?"], [["hello world"], ["what"]]
    assert (textgen_metrics.ter(preds, refs, ignore_punct=True)
            == textgen_metrics.ter(preds, refs, no_punct=True))
    assert (textgen_metrics.ter(preds, refs, support_zh_ja_chars=True, normalized=True)
            == textgen_metrics.ter(preds, refs, asian_support=True, normalized=True))
    with pytest.raises(ValueError, match="ignore_punct: ignore_punct=False contradicts no_punct=True"):
        textgen_metrics.ter(preds, refs, no_punct=True, ignore_punct=False)


def test_ter_interval_equals_sacrebleu_confidence(monkeypatch):
    preds, refs = mt_corpus(100, seed=3, kinds=("english", "empty"), max_refs=2)
    monkeypatch.setenv("SACREBLEU_SEED", "11")
    metric = TER()
    want = metric.corpus_score(preds, sacre_refs(refs), n_bootstrap=400)
    got = textgen_metrics.ter(preds, refs, confidence_level=0.95, n_resamples=400, seed=11)
    assert got["score_ci"] == [float(want._mean - want._ci), float(want._mean + want._ci)]
    assert got["signature"] == metric.get_signature().format()


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(normalized="no"), TypeError, "normalized: expected True or False"),
    (dict(use_aggregator=None), TypeError, "use_aggregator"),
    (dict(confidence_level=0.95, n_resamples=2.5), ValueError, "n_resamples"),
    (dict(predictions=[]), ValueError, "predictions: no examples"),
])
def test_bad_input_is_named(kwargs, exc, message):
    args = dict(predictions=["a b"], references=["a b"])
    args.update(kwargs)
    if not args["predictions"]:
        args["references"] = []
    with pytest.raises(exc, match=message):
        textgen_metrics.ter(**args)
