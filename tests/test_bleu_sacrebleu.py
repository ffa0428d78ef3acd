"""BLEU with sacrebleu's options: every tokenizer, every smoothing method, effective order,
lower-casing, signatures and bootstrap intervals, each equal to sacrebleu 2.x on generated
corpora (English-like, random Unicode, Chinese, Japanese, Korean, empty lines, 1-4 references)."""

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU

import textgen_metrics
from mt_corpus import mt_corpus, sacre_refs
from textgen_metrics.tokenizers import BLEU_TOKENIZERS

KINDS = {"13a": ("english", "unicode", "empty"), "intl": ("english", "unicode", "cjk", "empty"),
         "none": ("english", "unicode", "empty"), "char": ("cjk", "unicode", "english", "empty"),
         "zh": ("cjk", "english", "unicode", "empty"), "ja-mecab": ("japanese", "english", "empty"),
         "ko-mecab": ("korean", "english", "empty")}


@pytest.mark.parametrize("tokenizer", BLEU_TOKENIZERS)
@pytest.mark.parametrize("smooth_method", ["none", "floor", "add-k", "exp"])
def test_corpus_bleu_equals_sacrebleu_for_every_tokenizer_and_smoothing(tokenizer, smooth_method):
    preds, refs = mt_corpus(240, seed=len(tokenizer) + len(smooth_method), kinds=KINDS[tokenizer])
    metric = BLEU(tokenize=tokenizer, smooth_method=smooth_method)
    want = metric.corpus_score(preds, sacre_refs(refs))
    got = textgen_metrics.bleu(preds, refs, tokenizer=tokenizer, smooth_method=smooth_method)
    assert got["bleu"] == want.score / 100
    assert got["brevity_penalty"] == want.bp
    assert (got["translation_length"], got["reference_length"]) == (want.sys_len, want.ref_len)
    assert [round(p * 100, 9) for p in got["precisions"][:1]] == [round(c / t * 100, 9) for c, t in
                                                                 zip(want.counts[:1], want.totals[:1], strict=True)]
    assert got["signature"] == metric.get_signature().format()


@pytest.mark.parametrize("smooth_method, smooth_value, effective_order", [
    ("exp", None, True), ("floor", 0.3, False), ("floor", None, True), ("add-k", 2, True), ("none", None, True)])
def test_sentence_bleu_equals_sacrebleu(smooth_method, smooth_value, effective_order):
    preds, refs = mt_corpus(300, seed=5, kinds=("english", "unicode", "cjk", "empty"))
    kwargs = dict(smooth_method=smooth_method, smooth_value=smooth_value, effective_order=effective_order)
    metric = BLEU(**kwargs)
    got = textgen_metrics.bleu(preds, refs, use_aggregator=False, **kwargs)
    for i, (p, rs) in enumerate(zip(preds, refs, strict=True)):
        want = metric.sentence_score(p, rs)
        assert got["bleu"][i] == want.score / 100, (i, p, rs)
        assert got["brevity_penalty"][i] == want.bp
    corpus = textgen_metrics.bleu(preds, refs, **kwargs)
    assert corpus["bleu"] == metric.corpus_score(preds, sacre_refs(refs)).score / 100


@pytest.mark.parametrize("tokenizer", ["none", "13a", "intl", "char", "zh"])
def test_lowercase_works_with_every_tokenizer(tokenizer):
    preds, refs = mt_corpus(200, seed=9, kinds=("english", "unicode"))
    preds = [p.upper() if i % 2 else p for i, p in enumerate(preds)]
    want = sacrebleu.corpus_bleu(preds, sacre_refs(refs), tokenize=tokenizer, lowercase=True, smooth_method="none")
    got = textgen_metrics.bleu(preds, refs, tokenizer=tokenizer, lowercase=True)
    assert got["bleu"] == want.score / 100
    assert "case:lc" in got["signature"]
    assert got["bleu"] != textgen_metrics.bleu(preds, refs, tokenizer=tokenizer)["bleu"]


def test_lowercase_works_with_a_callable_tokenizer():
    preds, refs = mt_corpus(200, seed=10, kinds=("english",))
    preds = [p.upper() if i % 3 else p for i, p in enumerate(preds)]
    lower_preds, lower_refs = [p.lower() for p in preds], [[r.lower() for r in rs] for rs in refs]

    def split(text):
        return text.split()

    for use_aggregator in (True, False):
        got = textgen_metrics.bleu(preds, refs, tokenizer=split, lowercase=True, use_aggregator=use_aggregator)
        want = textgen_metrics.bleu(lower_preds, lower_refs, tokenizer=split, use_aggregator=use_aggregator)
        assert got["bleu"] == want["bleu"]
        assert got["bleu"] != textgen_metrics.bleu(preds, refs, tokenizer=split, use_aggregator=use_aggregator)["bleu"]
        assert "case:lc" in got["signature"] and "tok:callable:" in got["signature"]


def test_signatures_name_the_settings():
    preds, refs = ["a b c d"], [["a b c d", "a b"]]
    sig = textgen_metrics.bleu(preds, refs)["signature"]
    assert sig == f"nrefs:2|case:mixed|eff:no|tok:13a|smooth:none|version:{sacrebleu.__version__}"
    assert "smooth:lin-och" in textgen_metrics.bleu(preds, refs, smooth=True)["signature"]
    sig = textgen_metrics.bleu(preds, refs, weights=[0.5, 0.5])["signature"]
    assert "smooth:nltk-method0" in sig and "weights:0.5,0.5" in sig
    assert "smooth:nltk-method2" in textgen_metrics.bleu(preds, refs, smooth=True, use_aggregator=False)["signature"]
    assert "|ngram:2|" in textgen_metrics.bleu(preds, refs, max_order=2)["signature"]
    mixed = textgen_metrics.bleu(["a", "b"], [["a"], ["b", "c"]], tokenizer="char")["signature"]
    assert mixed.startswith("nrefs:var|") and "tok:char" in mixed
    ja = textgen_metrics.bleu(["今日は"], ["今日は"], tokenizer="ja-mecab")["signature"]
    assert "tok:ja-mecab-0.996-IPA" in ja
    gleu = textgen_metrics.google_bleu(preds, refs, min_len=2)["signature"]
    assert gleu.startswith("google_bleu|nrefs:2|tok:13a|ngram:2-4|version:")


@pytest.mark.parametrize("seed, n_resamples", [(12345, 1000), (3, 200), (0, 57)])
@pytest.mark.parametrize("smooth_method", ["none", "exp"])
def test_bleu_interval_equals_sacrebleu_confidence(monkeypatch, seed, n_resamples, smooth_method):
    preds, refs = mt_corpus(150, seed=seed + 1, kinds=("english", "cjk", "empty"))
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    metric = BLEU(smooth_method=smooth_method)
    want = metric.corpus_score(preds, sacre_refs(refs), n_bootstrap=n_resamples)
    got = textgen_metrics.bleu(preds, refs, smooth_method=smooth_method, confidence_level=0.95,
                               n_resamples=n_resamples, seed=seed, interval="sacrebleu")
    assert got["bleu_ci"] == [float(want._mean - want._ci) / 100, float(want._mean + want._ci) / 100]
    assert got["signature"] == metric.get_signature().format()
    assert "bs:" in got["signature"] and f"seed:{seed}" in got["signature"]


def test_intervals_of_hugging_face_options_and_google_bleu_are_deterministic():
    preds, refs = mt_corpus(120, seed=4, kinds=("english",))
    for kwargs in [dict(smooth=True), dict(weights=[0.4, 0.3, 0.2, 0.1])]:
        a = textgen_metrics.bleu(preds, refs, confidence_level=0.9, n_resamples=300, **kwargs)
        assert a == textgen_metrics.bleu(preds, refs, confidence_level=0.9, n_resamples=300, **kwargs)
        assert a["bleu_ci"][0] <= a["bleu"] <= a["bleu_ci"][1] and "ci:0.9" in a["signature"]
    g = textgen_metrics.google_bleu(preds, refs, confidence_level=0.95, n_resamples=300, seed=1)
    assert g["google_bleu_ci"][0] < g["google_bleu"] < g["google_bleu_ci"][1]
    assert g != textgen_metrics.google_bleu(preds, refs, confidence_level=0.95, n_resamples=300, seed=2)


@pytest.mark.parametrize("kwargs, message", [
    (dict(smooth_method="lin"), "smooth_method: 'lin' is not one of"),
    (dict(smooth_method="exp", smooth=True), "smooth_method: give sacrebleu's"),
    (dict(effective_order=True, weights=[1.0]), "smooth_method: give sacrebleu's"),
    (dict(smooth_value=-1), "smooth_value"),
    (dict(confidence_level=1.0), "confidence_level"),
    (dict(confidence_level=0.95, n_resamples=0), "n_resamples"),
    (dict(confidence_level=0.95, seed=-3), "seed"),
])
def test_bad_options_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        textgen_metrics.bleu(["a b"], ["a b"], **kwargs)


def _without_signature(result):
    return {k: v for k, v in result.items() if k != "signature"}


@pytest.mark.parametrize("tokenizer, lowercase", [("13a", False), ("13a", True), ("none", False), ("none", True)])
def test_texts_read_by_the_core_score_as_token_lists_and_on_any_number_of_threads(tokenizer, lowercase):
    """13a and none tokenise in the core; the same tokens handed in by a callable (token lists to
    the core) give the same statistics, and so does every thread count."""
    from textgen_metrics.tokenizers import get_tokenizer

    preds, refs = mt_corpus(300, seed=17 + lowercase, kinds=("english", "unicode", "empty"))
    inner = get_tokenizer(tokenizer, lowercase=lowercase, default="13a")

    def as_callable(text):
        return inner(text)

    for use_aggregator in (True, False):
        base = textgen_metrics.bleu(preds, refs, tokenizer=tokenizer, lowercase=lowercase,
                                    use_aggregator=use_aggregator)
        via_tokens = textgen_metrics.bleu(preds, refs, tokenizer=as_callable, use_aggregator=use_aggregator)
        assert _without_signature(via_tokens) == _without_signature(base)
        for threads in (2, 5, None):
            assert textgen_metrics.bleu(preds, refs, tokenizer=tokenizer, lowercase=lowercase, num_threads=threads,
                                        use_aggregator=use_aggregator) == base
        gleu = textgen_metrics.google_bleu(preds, refs, tokenizer=inner, use_aggregator=use_aggregator)
        via_tokens = textgen_metrics.google_bleu(preds, refs, tokenizer=as_callable, use_aggregator=use_aggregator)
        assert _without_signature(via_tokens) == _without_signature(gleu)
        assert textgen_metrics.google_bleu(preds, refs, tokenizer=inner, use_aggregator=use_aggregator,
                                           num_threads=3) == gleu
    stats = textgen_metrics.lexical.bleu.bleu_statistics(preds, refs, tokenizer=tokenizer, lowercase=lowercase)
    assert stats.stats == textgen_metrics.lexical.bleu.bleu_statistics(
        preds, refs, tokenizer=as_callable, num_threads=2).stats


@pytest.mark.parametrize("num_threads", [-1, 1.5, "2", True])
def test_bad_num_threads_is_named(num_threads):
    with pytest.raises(ValueError, match="num_threads"):
        textgen_metrics.bleu(["a b"], ["a b"], num_threads=num_threads)
    with pytest.raises(ValueError, match="num_threads"):
        textgen_metrics.google_bleu(["a b"], ["a b"], num_threads=num_threads)
