"""chrF and chrF++ equal sacrebleu's CHRF on generated corpora, per example and corpus, with
every option; the numpy n-gram counts equal a Counter reference; signature and interval equal
sacrebleu's."""

import random
from collections import Counter

import numpy as np
import pytest
from sacrebleu.metrics import CHRF

import textgen_metrics
from mt_corpus import mt_corpus, sacre_refs
from textgen_metrics.ngrams import char_codes, match_statistics, word_codes

KINDS = ("english", "unicode", "cjk", "japanese", "korean", "empty")
OPTIONS = [dict(), dict(word_order=2), dict(word_order=1, char_order=4, beta=1),
           dict(lowercase=True, whitespace=True), dict(eps_smoothing=True, word_order=2),
           dict(char_order=0, word_order=3), dict(char_order=8, beta=3, eps_smoothing=True, lowercase=True)]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_corpus_and_sentence_chrf_equal_sacrebleu(options):
    preds, refs = mt_corpus(300, seed=len(str(options)), kinds=KINDS)
    metric = CHRF(**options)
    want = metric.corpus_score(preds, sacre_refs(refs))
    got = textgen_metrics.chrf(preds, refs, **options)
    assert got["score"] == want.score
    assert got["signature"] == metric.get_signature().format()
    per = textgen_metrics.chrf(preds, refs, use_aggregator=False, **options)["score"]
    assert per == [metric.sentence_score(p, rs).score for p, rs in zip(preds, refs, strict=True)]


def test_statistics_equal_sacrebleus_segment_statistics():
    preds, refs = mt_corpus(200, seed=2, kinds=KINDS)
    for options in OPTIONS[:3]:
        metric = CHRF(**options)
        want = metric._extract_corpus_statistics(preds, sacre_refs(refs))
        assert textgen_metrics.lexical.chrf.chrf_statistics(preds, refs, **options).stats == want


def _reference_counts(hyp, ref, order):
    """sacrebleu's _get_match_statistics with Counters, per order."""
    out = []
    for n in range(1, order + 1):
        h = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
        r = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
        out.append([sum(h.values()) if r else 0, sum(r.values()), sum(min(c, r[g]) for g, c in h.items())])
    return out


@pytest.mark.parametrize("alphabet, order, pairs", [(3, 6, 300), (5000, 6, 200), (40, 4, 5000)])
def test_numpy_counts_equal_counters(alphabet, order, pairs):
    """Small alphabets (many repeats), a large one (the codes are renumbered between orders), and
    more pairs than one batch holds."""
    rng = random.Random(alphabet)
    hyps = [[str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 30))] for _ in range(pairs)]
    refs = [h[: rng.randint(0, len(h))] + [str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 12))]
            if rng.random() < 0.7 else [str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 30))]
            for h in hyps]
    vocab = {}
    got = match_statistics(word_codes(hyps, vocab), word_codes(refs, vocab), order)
    want = np.array([_reference_counts(h, r, order) for h, r in zip(hyps, refs, strict=True)])
    assert got.shape == (pairs, order, 3) and (got == want).all()
    texts_h = ["".join(chr(0x4E00 + int(t) % 500) for t in h) for h in hyps[:200]]
    texts_r = ["".join(chr(0x4E00 + int(t) % 500) for t in r) for r in refs[:200]]
    got = match_statistics(char_codes(texts_h), char_codes(texts_r), order)
    want = np.array([_reference_counts(h, r, order) for h, r in zip(texts_h, texts_r, strict=True)])
    assert (got == want).all()


@pytest.mark.parametrize("seed, n_resamples", [(12345, 1000), (7, 300)])
def test_chrf_interval_equals_sacrebleu_confidence(monkeypatch, seed, n_resamples):
    preds, refs = mt_corpus(120, seed=seed % 100, kinds=("english", "cjk", "empty"))
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    metric = CHRF(word_order=2)
    want = metric.corpus_score(preds, sacre_refs(refs), n_bootstrap=n_resamples)
    got = textgen_metrics.chrf(preds, refs, word_order=2, confidence_level=0.95, n_resamples=n_resamples, seed=seed,
                               interval="sacrebleu")
    assert got["score_ci"] == [float(want._mean - want._ci), float(want._mean + want._ci)]
    assert got["signature"] == metric.get_signature().format()


def test_hugging_face_outputs_and_evaluate_module(repo_root):
    import evaluate

    chrf = evaluate.load("./metrics/chrf")
    preds, refs = mt_corpus(40, seed=1, kinds=("english",))
    got = chrf.compute(predictions=preds, references=refs, word_order=2)
    assert {k: got[k] for k in ("char_order", "word_order", "beta")} == {"char_order": 6, "word_order": 2, "beta": 2}
    assert got["score"] == textgen_metrics.chrf(preds, refs, word_order=2)["score"]


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(char_order=-1), ValueError, "char_order"),
    (dict(char_order=0, word_order=0), ValueError, "char_order: char_order and word_order are both 0"),
    (dict(beta=float("nan")), ValueError, "beta"),
    (dict(lowercase="yes"), TypeError, "lowercase: expected True or False"),
    (dict(confidence_level=0), ValueError, "confidence_level"),
    (dict(predictions=["a", None]), TypeError, r"predictions\[1\]"),
    (dict(references=[[]]), ValueError, r"references\[0\]: empty list"),
])
def test_bad_input_is_named(kwargs, exc, message):
    args = dict(predictions=["a b"], references=["a b"])
    args.update(kwargs)
    with pytest.raises(exc, match=message):
        textgen_metrics.chrf(**args)
