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
    hindi = "\u0939\u093f\u0928\u094d\u0926\u0940"
    assert tok(f"running cats {hindi}") == ["run", "cat", hindi]


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
        alphabet = string.printable + "\u00ab\u00bb\u201c\u201d\u2019\u2013\u0131"
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 50))))
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


def _random_unicode_texts(seed, n):
    rng = random.Random(seed)
    words = [w for text in corpus_texts()[:200] for w in text.split()]
    out = []
    for _ in range(n):
        parts = [rng.choice(words) if rng.random() < 0.7 else
                 "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(1, 8)))
                 for _ in range(rng.randint(0, 30))]
        out.append(rng.choice([" ", "\n", "\t", "\u3000"]).join(parts))
    return out + ["", " ", "a", "Running", "\u0130STANBUL sk\u0130es"]


def test_word_tokenizers_stem_as_nltk_porter():
    """whitespace and unicode stem through the core; the reference is nltk's stemmer on the
    tokens longer than 3 characters (unicode: ASCII letters only), as before the core."""
    stemmer = porter.PorterStemmer()
    texts = _random_unicode_texts(5, 800) + corpus_texts()
    plain = get_tokenizer("unicode")
    ws, uni = get_tokenizer("whitespace", use_stemmer=True), get_tokenizer("unicode", use_stemmer=True)
    for text in texts:
        assert ws(text) == [stemmer.stem(t) if len(t) > 3 else t for t in text.lower().split()], text
        assert uni(text) == [stemmer.stem(t) if len(t) > 3 and t.isascii() and t.isalpha() else t
                             for t in plain(text)], text


def test_porter_stemmer_equals_nltk():
    from textgen_metrics.tokenizers import PorterStemmer

    stemmer = porter.PorterStemmer()
    words = [w for text in _random_unicode_texts(6, 300) for w in text.split()]
    ours = PorterStemmer.shared()
    assert ours.stem_many(words) == [stemmer.stem(w) for w in words]
    assert [ours(w) for w in words[:300]] == [stemmer.stem(w) for w in words[:300]]


_BATCH_CASES = [(name, use_stemmer, lowercase)
                for name in ["rouge_score", "unicode", "whitespace", "13a", "none", "char", "zh", "intl", "treebank",
                             "tercom", "callable"]
                for use_stemmer, lowercase in [(False, False), (True, False), (False, True)]
                if not use_stemmer or name in ("rouge_score", "unicode", "whitespace")]


@pytest.mark.parametrize("name, use_stemmer, lowercase", _BATCH_CASES)
def test_batch_gives_every_texts_tokens(name, use_stemmer, lowercase):
    if name == "callable":
        name = lambda s: s.split("a")  # noqa: E731
    tok = get_tokenizer(name, use_stemmer, lowercase=lowercase)
    texts = _random_unicode_texts(7, 200)
    assert tok.batch(texts) == [tok(t) for t in texts]
    assert tok.batch([]) == []


def test_the_runtime_path_does_not_import_nltk():
    """Stemming, 13a and Treebank run in the core: a fresh process's first ROUGE call with the
    stemmer (and every tokenizer, BLEU and Google BLEU) imports no part of nltk."""
    import subprocess
    import sys

    code = ("import sys, textgen_metrics\n"
            "from textgen_metrics.tokenizers import TOKENIZERS, get_tokenizer\n"
            "textgen_metrics.rouge(['The cats were running'], ['a cat runs'], use_stemmer=True)\n"
            "before = sorted(m for m in sys.modules if m.split('.')[0] == 'nltk')\n"
            "for name in ('rouge_score', 'unicode', 'whitespace'):\n"
            "    get_tokenizer(name, use_stemmer=True)('Running cats')\n"
            "for name in ('13a', 'none', 'char', 'treebank'):\n"
            "    get_tokenizer(name)(\"They can't go, Mr. Smith's 1-2 dogs.\")\n"
            "textgen_metrics.bleu(['a b c'], ['a b d']); textgen_metrics.google_bleu(['a b c'], ['a b d'])\n"
            "print(before, sorted(m for m in sys.modules if m.split('.')[0] == 'nltk'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] []"
