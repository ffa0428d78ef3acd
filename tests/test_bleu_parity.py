"""BLEU and Google BLEU parity over generated inputs.

Corpus BLEU: sacrebleu corpus_bleu (13a, no smoothing), exactly (ours = sacrebleu score / 100).
Sentence BLEU: nltk sentence_bleu on the same tokens, weights and smoothing, exactly.
Google BLEU: nltk corpus_gleu / sentence_gleu on the same tokens, exactly.
"""

import math
import random
import warnings

import pytest
import sacrebleu
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
from nltk.translate.gleu_score import corpus_gleu, sentence_gleu

import textgen_metrics
from corpus import multi_references
from textgen_metrics.tokenizers import Tokenizer13a

tok = Tokenizer13a()


def data(n, seed):
    """Predictions with a varying number of references (1-4), including empty and short ones."""
    rng = random.Random(seed)
    out = multi_references(n, seed=seed)
    extra = [("", ["a b c"]), ("a", ["a"]), ("a b", ["a b", ""]), ("the the the", ["the cat"]),
             ("\u4e2d\u6587 \u6587\u672c", ["\u4e2d\u6587"]), ("x y z w", ["x y z w"])]
    out = out + extra
    rng.shuffle(out)
    return [p for p, _ in out], [r for _, r in out]


def sacre_refs(refs):
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_corpus_bleu_equals_sacrebleu(seed):
    preds, refs = data(300, seed)
    want = sacrebleu.corpus_bleu(preds, sacre_refs(refs), tokenize="13a", smooth_method="none")
    got = textgen_metrics.bleu(preds, refs)
    assert got["bleu"] == want.score / 100
    assert got["translation_length"] == want.sys_len and got["reference_length"] == want.ref_len
    assert got["brevity_penalty"] == want.bp
    for ours, theirs, c, t in zip(got["precisions"], want.precisions, want.counts, want.totals, strict=True):
        assert ours == c / t
        assert abs(ours * 100 - theirs) < 1e-9


def test_corpus_bleu_orders_and_zero_matches_equal_sacrebleu():
    preds, refs = data(200, 8)
    for order in (1, 2, 3, 5):
        want = sacrebleu.metrics.BLEU(tokenize="13a", smooth_method="none", max_ngram_order=order)
        w = want.corpus_score(preds, sacre_refs(refs))
        assert textgen_metrics.bleu(preds, refs, max_order=order)["bleu"] == w.score / 100
    # no 4-gram match anywhere: sacrebleu gives 0
    got = textgen_metrics.bleu(["a b c d", "e f"], ["a b c x", "e f"])
    want = sacrebleu.corpus_bleu(["a b c d", "e f"], [["a b c x", "e f"]], tokenize="13a", smooth_method="none")
    assert got["bleu"] == want.score / 100 == 0.0


def nltk_tokens(preds, refs):
    return [tok(p) for p in preds], [[tok(r) for r in rs] for rs in refs]


@pytest.mark.parametrize("weights, smooth", [
    (None, False), (None, True), ((0.4, 0.3, 0.2, 0.1), False), ((0.5, 0.5), True), ((1.0,), False)])
def test_sentence_bleu_equals_nltk(weights, smooth):
    preds, refs = data(300, 11)
    hyps, refss = nltk_tokens(preds, refs)
    got = textgen_metrics.bleu(preds, refs, weights=weights, smooth=smooth, use_aggregator=False)
    w = weights or (0.25, 0.25, 0.25, 0.25)
    fn = SmoothingFunction().method2 if smooth else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (h, rs) in enumerate(zip(hyps, refss, strict=True)):
            want = sentence_bleu(rs, h, weights=w, smoothing_function=fn)
            assert got["bleu"][i] == want, (i, preds[i], refs[i])


def test_corpus_bleu_with_weights_equals_nltk_corpus_bleu():
    preds, refs = data(300, 12)
    hyps, refss = nltk_tokens(preds, refs)
    for weights in [(0.4, 0.3, 0.2, 0.1), (0.5, 0.5)]:
        got = textgen_metrics.bleu(preds, refs, weights=weights)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert got["bleu"] == corpus_bleu(refss, hyps, weights=weights)


def test_smooth_corpus_bleu_is_add_one_on_sacrebleu_statistics():
    preds, refs = data(100, 13)
    stats = sacrebleu.corpus_bleu(preds, sacre_refs(refs), tokenize="13a")
    got = textgen_metrics.bleu(preds, refs, smooth=True)
    p = [(c + 1.0) / (t + 1.0) for c, t in zip(stats.counts, stats.totals, strict=True)]
    geo = math.exp(sum(0.25 * math.log(x) for x in p))
    assert got["bleu"] == geo * stats.bp and got["precisions"] == p


@pytest.mark.parametrize("min_len, max_len", [(1, 4), (1, 2), (2, 3), (3, 3)])
def test_google_bleu_equals_nltk(min_len, max_len):
    preds, refs = data(300, 21 + max_len)
    hyps, refss = nltk_tokens(preds, refs)
    got = textgen_metrics.google_bleu(preds, refs, min_len=min_len, max_len=max_len)
    assert got["google_bleu"] == corpus_gleu(refss, hyps, min_len=min_len, max_len=max_len)
    per = textgen_metrics.google_bleu(preds, refs, min_len=min_len, max_len=max_len, use_aggregator=False)
    for i, (h, rs) in enumerate(zip(hyps, refss, strict=True)):
        assert per["google_bleu"][i] == sentence_gleu(rs, h, min_len=min_len, max_len=max_len)
