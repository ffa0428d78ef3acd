import random

import pytest
from nltk.stem import porter
from rouge_score import tokenize as rs_tokenize

from corpus import ADVERSARIAL, pairs
from textgen_metrics.tokenizers import get_tokenizer, split_sentences


def corpus_texts():
    texts = [t for pair in pairs(300, seed=3) for t in pair] + ADVERSARIAL
    rng = random.Random(1)
    texts += ["".join(chr(rng.randint(0, 0x2FFF)) for _ in range(60)) for _ in range(100)]
    return texts


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_default_tokenizer_matches_rouge_score(use_stemmer):
    tok = get_tokenizer(None, use_stemmer)
    stemmer = porter.PorterStemmer() if use_stemmer else None
    for text in corpus_texts():
        assert tok(text) == rs_tokenize.tokenize(text, stemmer), text


def test_unicode_tokenizer_keeps_non_latin_scripts():
    tok = get_tokenizer("unicode")
    assert tok("\u0939\u093f\u0928\u094d\u0926\u0940 \u092a\u093e\u0920") == [
        "\u0939\u093f\u0928\u094d\u0926\u0940", "\u092a\u093e\u0920"]
    assert tok("\u4e2d\u6587\u6587\u672c") == ["\u4e2d", "\u6587", "\u6587", "\u672c"]
    assert tok("Caf\u00e9, NA\u00cfVE!") == ["caf\u00e9", "na\u00efve"]
    assert get_tokenizer(None)("\u4e2d\u6587 \u0939\u093f\u0928\u094d\u0926\u0940") == []


def test_unicode_tokenizer_stems_ascii_words_only():
    tok = get_tokenizer("unicode", use_stemmer=True)
    assert tok("running cats \u0939\u093f\u0928\u094d\u0926\u0940") == ["run", "cat", "\u0939\u093f\u0928\u094d\u0926\u0940"]


def test_whitespace_and_callable_tokenizers():
    assert get_tokenizer("whitespace")("Hello, World!  x") == ["hello,", "world!", "x"]
    assert get_tokenizer(lambda s: s.split("-"))("a-b") == ["a", "b"]

    class Tok:
        def tokenize(self, text):
            return list(text)

    assert get_tokenizer(Tok())("ab") == ["a", "b"]


def test_bad_tokenizers_are_named():
    with pytest.raises(ValueError, match="tokenizer: unknown tokenizer 'nope'"):
        get_tokenizer("nope")
    with pytest.raises(TypeError, match="tokenizer"):
        get_tokenizer(3)
    with pytest.raises(TypeError, match="tokenizer: a tokenizer must return a list of str"):
        get_tokenizer(lambda s: s)("abc")


def test_split_sentences_without_a_model():
    assert split_sentences("It rained. Then it stopped! Did it?\nYes") == [
        "It rained.", "Then it stopped!", "Did it?", "Yes"]
    assert split_sentences("  ") == []


def _adversarial_texts(seed, n):
    import string

    rng = random.Random(seed)
    special = ["cannot", "Cannot", "d'ye", "gimme", "gonna", "gotta", "lemme", "more'n", "wanna ",
               "'tis", "'Twas", "don't", "I'm", "they'll", "we're", "you've", "can't", "N'T", "''",
               "``", '"quoted"', "'single'", "(paren)", "[b]", "{c}", "<d>", "--", "...", "\u2026",
               "\u2014", "\u2013", "\u00abx\u00bb", "\u201cy\u201d", "\u2018z\u2019", "e.g.", "U.S.",
               "3.14", "1,000", "a:b", "x,y", "1-2", "end.", "end.)", "end.'", "\t", "\n", "\u0131s",
               "\u0130", "\u017f", "\u212a", "wannabe", "O'Neil", "&amp;", "&quot;", "<skipped>", "-\n"]
    texts = corpus_texts()
    for _ in range(n):
        texts.append(" ".join(rng.choice(special + ["the", "cat", "Sat"]) for _ in range(rng.randint(0, 20))))
        texts.append("".join(rng.choice(string.printable + "\u00ab\u00bb\u201c\u201d\u2019\u2013\u0131") for _ in range(rng.randint(0, 50))))
    return texts


def test_13a_tokenizer_matches_sacrebleu():
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a as Sacre

    ours, theirs = get_tokenizer_13a(), Sacre()
    for text in _adversarial_texts(1, 1500):
        assert ours(text) == theirs(text.rstrip()).split(), repr(text)


def get_tokenizer_13a():
    from textgen_metrics.tokenizers import get_bleu_tokenizer

    return get_bleu_tokenizer("13a")


def test_treebank_tokenizer_matches_nltk_word_tokenize():
    from nltk.tokenize import word_tokenize

    from textgen_metrics.tokenizers import TreebankWordTokenizer

    ours = TreebankWordTokenizer()
    for text in _adversarial_texts(2, 1500):
        assert ours(text) == word_tokenize(text, preserve_line=True), repr(text)
