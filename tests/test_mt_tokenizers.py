"""The tokenizers package: every sacrebleu tokenizer gives sacrebleu's tokens, one resolver maps
every name, a base class with ``__call__`` and ``signature``, lower-casing before any tokenizer."""

import random

import pytest
from sacrebleu.metrics.bleu import _get_tokenizer

from mt_corpus import mt_corpus
from test_tokenizers import _adversarial_texts
from textgen_metrics.tokenizers import (
    BLEU_TOKENIZERS,
    TOKENIZERS,
    CallableTokenizer,
    Lowercased,
    Tokenizer,
    get_bleu_tokenizer,
    get_tokenizer,
)

KINDS = ("english", "unicode", "cjk", "japanese", "korean", "empty")


def texts(seed):
    preds, refs = mt_corpus(400, seed, KINDS)
    rng = random.Random(seed)
    extra = ["1,000.5 dollars-2 e.g. U.S.", "end.", "3.14, 2-3 (x) [y] {z}", "a\u3000b\u2028c\x1cd\x85e",
             "  leading and trailing  ", "\u00bfQu\u00e9? \u00a1S\u00ed!", "\u2014dash\u2013", "\ud800 lone"]
    return preds + [r for rs in refs for r in rs] + extra + _adversarial_texts(seed, 100)[:300] + [
        "".join(chr(rng.randint(0x3000, 0x9FFF)) for _ in range(20)) for _ in range(50)]


@pytest.mark.parametrize("name", BLEU_TOKENIZERS)
def test_every_bleu_tokenizer_gives_sacrebleus_tokens(name):
    ours = get_tokenizer(name)
    theirs = _get_tokenizer(name)()
    assert ours.signature == theirs.signature()
    for text in texts(len(name)):
        if name.endswith("mecab") and "\ud800" in text:
            continue  # MeCab cannot encode a lone surrogate (sacrebleu raises too)
        # sacrebleu's BLEU: tokenizer(segment.rstrip()), then split on whitespace
        assert ours(text) == theirs(text.rstrip()).split(), repr(text)


@pytest.mark.parametrize("name", BLEU_TOKENIZERS)
def test_lowercase_applies_before_every_tokenizer_as_sacrebleu(name):
    ours = get_tokenizer(name, lowercase=True)
    theirs = _get_tokenizer(name)()
    assert ours.lowercase
    for text in texts(7)[:300]:
        if name.endswith("mecab") and "\ud800" in text:
            continue
        assert ours(text) == theirs(text.lower().rstrip()).split(), repr(text)


def test_one_resolver_for_every_name_and_one_base_class():
    for name in TOKENIZERS:
        tok = get_tokenizer(name)
        assert isinstance(tok, Tokenizer) and isinstance(tok.signature, str)
        assert isinstance(tok("Hello, World!"), list)
    assert get_tokenizer(None).name == "rouge_score" and get_bleu_tokenizer(None).name == "13a"
    assert get_tokenizer("default", default="13a").name == "13a"
    assert get_tokenizer("unicode", use_stemmer=True).signature == "unicode+porter"
    with pytest.raises(ValueError, match="use_stemmer: the '13a' tokenizer does not stem"):
        get_tokenizer("13a", use_stemmer=True)
    with pytest.raises(ValueError, match="tokenizer: unknown tokenizer 'spacy'"):
        get_bleu_tokenizer("spacy")


def test_lowercase_wraps_a_callable_and_none_but_not_the_word_family():
    tok = get_tokenizer(lambda s: s.split("-"), lowercase=True)
    assert isinstance(tok, Lowercased) and isinstance(tok.inner, CallableTokenizer)
    assert tok("A-B") == ["a", "b"]
    assert get_tokenizer("none", lowercase=True)("Ab CD") == ["ab", "cd"]
    assert not isinstance(get_tokenizer("whitespace", lowercase=True), Lowercased)  # lower-cases already
    assert get_tokenizer("13a", lowercase=True)("Hello, World") == ["hello", ",", "world"]


def test_tercom_tokenizer_is_sacrebleus():
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer as Sacre

    from textgen_metrics.tokenizers import TercomTokenizer

    for options in [(False, False, False, False), (True, False, True, False), (False, True, True, True)]:
        ours, theirs = TercomTokenizer(*options), Sacre(*options)
        for text in texts(3)[:400]:
            assert ours(text) == theirs(text.rstrip()).split(), (options, repr(text))
