"""Property tests: the compiled core (textgen_metrics._native) against the Python references.

The references are the reference packages themselves where they exist (nltk's Porter stemmer,
word_tokenize and WordNet reader, rouge-score's tokenizer and LCS, sacrebleu's 13a tokenizer, Python's
str.lower and str.split) and otherwise the product's former pure-Python kernels kept in
tests/reference_kernels.py (LCS, BLEU/GLEU statistics, 13a and Treebank rules) and
tests/reference_rouge.py.
Inputs: random Unicode texts (every plane, combining marks, case-special letters, whitespace of
all kinds), empty texts, single tokens and 5,000-word texts.
"""

from __future__ import annotations

import os
import random
import sys
import warnings

import pytest
from nltk.stem.porter import PorterStemmer
from rouge_score import rouge_scorer
from rouge_score import tokenize as rs_tokenize

import reference_kernels as ref_k
import reference_rouge as ref_r
from corpus import WORDS, pairs
from textgen_metrics import _native
from textgen_metrics.lexical.rouge import RougeScorer

WORDNET = "/usr/share/wordnet"
SPECIAL = ["\u0130", "\u0131", "\u212a", "\u017f", "\u03a3", "\u03c3", "\u0307", "\u00df", "\ufb01",
           "\u1e9e", "\u2160", "\u00c9", "\u0345", "\u1f88", "\u00a0", "\u2028", "\u3000", "\x1c", "\x85"]


def random_word(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.55:
        return rng.choice(WORDS)
    if r < 0.7:
        return "".join(rng.choice("aeiouybcdfgklmnprstvwxz") for _ in range(rng.randint(1, 12)))
    if r < 0.85:
        return "".join(rng.choice(SPECIAL + list("abcXYZ09")) for _ in range(rng.randint(1, 6)))
    plane = rng.choice([0x7F, 0x2FF, 0x2FFF, 0xFFFF, 0x10FFFF])
    out = []
    for _ in range(rng.randint(1, 6)):
        c = rng.randint(0, plane)
        if 0xD800 <= c < 0xE000:
            c = 0x41
        out.append(chr(c))
    return "".join(out)


def random_text(rng: random.Random, n_words: int) -> str:
    seps = [" ", " ", " ", "\n", "  ", "\t", ", ", ". ", "\u00a0", "\u3000", "-", "\n\n"]
    return "".join(random_word(rng) + rng.choice(seps) for _ in range(n_words)).rstrip(" ")


def texts(seed: int, n: int, long_words: int = 5000) -> list[str]:
    """Random Unicode texts: empty, single tokens, short, and a few of ``long_words`` words."""
    rng = random.Random(seed)
    out = ["", " ", "\n", "a", "A", "\u0130", "x\ny", "running", "...", "\u4e2d\u6587"]
    for i in range(n):
        if i % 50 == 49:
            out.append(random_text(rng, long_words))
        elif i % 7 == 0:
            out.append(random_word(rng))
        else:
            out.append(random_text(rng, rng.randint(0, 60)))
    return out


def related(rng: random.Random, text: str) -> str:
    """A text sharing material with ``text``: words dropped, replaced, lines swapped."""
    lines = []
    for line in text.split("\n"):
        toks = [t for t in line.split(" ") if rng.random() > 0.25]
        for _ in range(rng.randint(0, 3)):
            if toks:
                toks[rng.randrange(len(toks))] = random_word(rng)
        lines.append(" ".join(toks))
    if len(lines) > 1 and rng.random() < 0.4:
        rng.shuffle(lines)
    return "\n".join(lines)


# -- lower-casing and stemming ------------------------------------------------------------------

def test_lower_equals_str_lower_on_every_code_point():
    chars = [chr(c) for c in range(0x110000)]
    got = _native.lower(chars)
    assert [c for c, g in zip(chars, got, strict=True) if g != c.lower()] == []


def test_lower_equals_str_lower_on_texts_with_final_sigma_contexts():
    rng = random.Random(3)
    alphabet = ["\u03a3", "\u03a3", "\u0391", "a", " ", "'", "\u0307", "\u00ad", ".", "\u0130", "1"]
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20000)]
    samples += texts(4, 300, long_words=2000)
    assert _native.lower(samples) == [s.lower() for s in samples]


def wordnet_words() -> list[str]:
    words = set()
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, f"index.{pos}"), encoding="utf-8") as f:
            for line in f:
                if not line.startswith(" "):
                    words.update(line.split()[0].split("_"))
    return sorted(words)


def test_porter_equals_nltk_on_every_wordnet_word_and_random_unicode_words():
    stemmer = PorterStemmer()
    rng = random.Random(5)
    words = wordnet_words()
    words += [random_word(rng) for _ in range(30000)]
    words += ["".join(rng.choice("aeiouyyslzd*eding") for _ in range(rng.randint(0, 10))) for _ in range(30000)]
    words += ["", "a", "Y", "yy", "ies", "IES", "\u0130S", "Dying", "SKIES", "x" * 300]
    got = _native.porter_stem(words)
    bad = [(w, g) for w, g in zip(words, got, strict=True) if g != stemmer.stem(w)]
    assert bad == []


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_tokenizer_equals_rouge_score_on_random_unicode(use_stemmer):
    stemmer = PorterStemmer() if use_stemmer else None
    tok = _native.RougeTokenizer(use_stemmer)
    sample = texts(7 + use_stemmer, 600)
    assert tok.tokenize_batch(sample, False) == [rs_tokenize.tokenize(t, stemmer) for t in sample]
    lines = tok.tokenize_batch(sample, True)
    assert lines == [[rs_tokenize.tokenize(s, stemmer) for s in t.split("\n") if len(s)] for t in sample]


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_tokenizer_tells_apart_words_that_share_their_first_bytes(use_stemmer):
    # the tokenizer's word table keeps a word's first 8 bytes and its length (up to 254) in its
    # slot and the rest in an arena: words that agree on a prefix, differ only in length, run past
    # 254 bytes or differ in their last byte must stay apart, across the table's growth
    stemmer = PorterStemmer() if use_stemmer else None
    rng = random.Random(11)
    stems = ["abcdefgh", "abcdefg", "abcdefghi", "a" * 253, "a" * 254, "a" * 255, "a" * 600]
    words = list(stems)
    for _ in range(30000):
        base = rng.choice(stems)
        tail = "".join(rng.choice("abz09") for _ in range(rng.randint(0, 4)))
        words.append(base + tail)
        words.append(base[:rng.randint(1, len(base))] + tail)
    sample = [" ".join(rng.sample(words, 40)) for _ in range(3000)]
    tok = _native.RougeTokenizer(use_stemmer)
    assert tok.tokenize_batch(sample, False) == [rs_tokenize.tokenize(t, stemmer) for t in sample]


def test_rouge_scorer_reused_over_growing_batches_equals_a_fresh_scorer():
    # a batch sizes the word table for its text up front; a scorer fed a small batch, then larger
    # ones, moves the words it holds into a bigger table, where no word may take another's token
    types = ["rouge1", "rouge2", "rougeL"]
    reused = RougeScorer(types, use_stemmer=True)
    for n, seed in ((5, 51), (300, 52), (3000, 53)):
        data = pairs(n, seed=seed)
        preds = [p for p, _ in data]
        refs = [[r] for _, r in data]
        assert reused._score_raw(preds, refs, 1) == RougeScorer(types, use_stemmer=True)._score_raw(preds, refs, 1)


# -- LCS kernels ------------------------------------------------------------------------------

def token_seqs(seed: int, n: int, max_len: int = 90):
    rng = random.Random(seed)
    for _ in range(n):
        alphabet = [random_word(rng) for _ in range(rng.randint(1, 10))]
        yield ([rng.choice(alphabet) for _ in range(rng.randint(0, max_len))],
               [rng.choice(alphabet) for _ in range(rng.randint(0, max_len))])


def test_lcs_length_and_indices_equal_the_references_short_and_multi_word():
    for a, b in list(token_seqs(1, 400)) + list(token_seqs(2, 40, max_len=700)):
        assert _native.lcs_length(a, b) == ref_k.lcs_length(a, b)
        assert _native.lcs_indices(a, b) == ref_k.lcs_indices(a, b) == rouge_scorer.lcs_ind(a, b)


def test_union_lcs_indices_equal_the_reference():
    rng = random.Random(11)
    for _ in range(300):
        alphabet = [random_word(rng) for _ in range(rng.randint(1, 10))]

        def sents(hi, alphabet=alphabet):
            return [[rng.choice(alphabet) for _ in range(rng.randint(0, hi))] for _ in range(rng.randint(0, 6))]

        refs, cans = sents(rng.choice([10, 30, 150])), sents(rng.choice([10, 30, 150]))
        assert _native.union_lcs_indices(refs, cans) == ref_k.union_lcs_indices(refs, cans)


@pytest.mark.parametrize("max_table_cells", [None, 1, 97])
def test_weighted_lcs_equals_the_reference_with_and_without_the_full_table(max_table_cells):
    for k, (a, b) in enumerate(token_seqs(13, 200, max_len=120)):
        weight = 1.2 if k % 2 else 1.7
        powers = [i ** weight for i in range(max(len(a), len(b)) + 3)]
        want = [0] * len(a)
        ref_k.wlcs_mark(a, b, want, powers)
        assert _native.wlcs_hits(a, b, weight, max_table_cells) == want
    assert _native.WLCS_FULL == 2**30  # the default, as the docstrings give it


# -- ROUGE scores ---------------------------------------------------------------------------

ALL_TYPES = ["rouge1", "rouge2", "rouge3", "rouge4", "rouge9", "rougeL", "rougeLsum", "rougeW",
             "rougeS", "rougeS0", "rougeS4", "rougeSU", "rougeSU4"]
LINEAR_TYPES = ["rouge1", "rouge2", "rouge3", "rouge9", "rougeL", "rougeLsum", "rougeS4", "rougeSU4"]


def score_pairs(seed: int, n: int, long_words: int):
    rng = random.Random(seed)
    sample = texts(seed, n, long_words=long_words)
    out = []
    for t in sample:
        r = rng.random()
        out.append((related(rng, t) if r < 0.7 else rng.choice(sample), t))
    return out


def assert_same(got, want, context):
    for t, s in want.items():
        assert (got[t].precision, got[t].recall, got[t].fmeasure) == (s.precision, s.recall, s.fmeasure), (t, context)


@pytest.mark.parametrize("use_stemmer", [False, True])
@pytest.mark.parametrize("types, long_words", [(ALL_TYPES, 400), (LINEAR_TYPES, 5000)])
def test_rouge_scores_equal_the_python_reference(use_stemmer, types, long_words):
    ours = RougeScorer(types, use_stemmer=use_stemmer)
    ref = ref_r.RougeScorer(types, use_stemmer=use_stemmer)
    data = score_pairs(20 + use_stemmer + long_words, 250, long_words)
    batch = ours.score_batch([p for p, _ in data], [[t] for _, t in data])
    for i, (pred, target) in enumerate(data):
        want = ref.score(target, pred)
        assert_same({t: batch[t][i] for t in types}, want, (pred[:80], target[:80]))


@pytest.mark.parametrize("tokenizer, split", [("unicode", False), ("whitespace", False), (None, True),
                                              ("callable", False)])
def test_rouge_scores_equal_the_python_reference_for_other_tokenizers_and_multi_references(tokenizer, split):
    if tokenizer == "callable":
        tokenizer = lambda s: s.lower().split()  # noqa: E731
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeW", "rougeSU4"]
    ours = RougeScorer(types, use_stemmer=True, tokenizer=tokenizer, split_summaries=split)
    ref = ref_r.RougeScorer(types, use_stemmer=True, tokenizer=tokenizer, split_summaries=split)
    rng = random.Random(31)
    data = score_pairs(30, 150, 300)
    preds = [p for p, _ in data]
    refs = [[t] + [related(rng, t) for _ in range(rng.randint(0, 3))] for _, t in data]
    batch = ours.score_batch(preds, refs)
    for i, (pred, targets) in enumerate(zip(preds, refs, strict=True)):
        assert_same({t: batch[t][i] for t in types}, ref.score_multi(targets, pred), (pred[:80], targets))


def test_rouge_scores_do_not_depend_on_threads_and_equal_rouge_score():
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    data = pairs(600, seed=41)
    preds = [p for p, _ in data]
    refs = [[r] for _, r in data]
    one = RougeScorer(types, use_stemmer=True)._score_raw(preds, refs, 1)
    three = RougeScorer(types, use_stemmer=True)._score_raw(preds, refs, 3)
    assert one == three
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=True)
    for i, (p, r) in enumerate(data):
        want = scorer.score(r, p)
        for k, t in enumerate(types):
            assert (one[3 * k][i], one[3 * k + 1][i], one[3 * k + 2][i]) == tuple(want[t])


def test_rouge_s_any_gap_equals_pair_counting_on_long_texts():
    """rougeS with any gap never lists the O(n^2) pairs; check it against the listing on texts of
    1,500 tokens with a small vocabulary (many repeated pairs)."""
    rng = random.Random(51)
    vocab = [random_word(rng) for _ in range(40)]
    for _ in range(3):
        a = " ".join(rng.choice(vocab) for _ in range(1500))
        b = " ".join(rng.choice(vocab) for _ in range(1200))
        want = ref_r.RougeScorer(["rougeS", "rougeSU"], tokenizer="whitespace").score(a, b)
        got = RougeScorer(["rougeS", "rougeSU"], tokenizer="whitespace").score(a, b)
        assert_same(got, want, "long")


def test_each_rouge_type_scores_the_same_alone_and_beside_every_other_type():
    # the types of one scorer run one after another on one thread's scratch: a kernel that left
    # another's buffers changed would score a type differently beside the others
    rng = random.Random(61)
    data = score_pairs(61, 150, 400)
    preds = [p for p, _ in data]
    refs = [[t] + [related(rng, t) for _ in range(rng.randint(0, 2))] for _, t in data]
    for types in (ALL_TYPES, ALL_TYPES[::-1]):
        together = RougeScorer(types, use_stemmer=True)._score_raw(preds, refs, 1)
        for k, t in enumerate(types):
            assert together[3 * k:3 * k + 3] == RougeScorer([t], use_stemmer=True)._score_raw(preds, refs, 1), t


# -- the core's codes ----------------------------------------------------------------------------

def test_the_cores_codes_are_enumerations_and_a_bare_int_is_refused():
    from textgen_metrics.lexical.rouge import parse_rouge_type

    kinds = {parse_rouge_type(t)[0] for t in ALL_TYPES}
    assert set(_native.ROUGE_KINDS) == kinds
    assert sorted(_native.ROUGE_KINDS.values(), key=int) == sorted(_native.RougeKind.__members__.values(), key=int)
    with pytest.raises(TypeError):
        _native.RougeCore([(1, -1)], False, 1.2)
    core = _native.RougeCore([(_native.RougeKind.L, -1)], False, 1.2)
    with pytest.raises(TypeError):
        core.score(["a b"], ["a b"], 0, 1)
    with pytest.raises(TypeError):
        _native.bleu_core().tokenize(["a b"], 0, False)
    assert core.score(["a b"], ["a b"], _native.RougeInput.TEXT, 1) == [[1.0], [1.0], [1.0]]


def test_an_unknown_code_is_an_error_not_another_kind():
    # pybind11 enums can be made from any int: the core checks every code it is given
    with pytest.raises(ValueError, match="types: unknown ROUGE kind 99; RougeKind has N, L, LSUM, W, S and SU"):
        _native.RougeCore([(_native.RougeKind.N, 1), (_native.RougeKind(99), -1)], False, 1.2)
    with pytest.raises(ValueError, match="unknown ROUGE kind -1"):
        _native.RougeCore([(_native.RougeKind(-1), -1)], False, 1.2)
    core = _native.RougeCore([(_native.RougeKind.N, 1)], False, 1.2)
    with pytest.raises(ValueError, match="mode: unknown RougeInput 7"):
        core.score(["a"], ["a"], _native.RougeInput(7), 1)
    bleu = _native.bleu_core()
    with pytest.raises(ValueError, match="tokenizer: unknown BleuInput 9"):
        bleu.bleu_stats(["a"], [["a"]], _native.BleuInput(9), False, 4, 1)
    with pytest.raises(ValueError, match="tokenizer: unknown BleuInput 3"):
        bleu.gleu_stats(["a"], [["a"]], _native.BleuInput(3), False, 1, 4, 1)
    with pytest.raises(ValueError, match="tokenizer: TOKENS tokenises no text"):
        bleu.tokenize(["a"], _native.BleuInput.TOKENS, False)


# -- METEOR's WordNet index --------------------------------------------------------------------

def test_wordnet_index_synonyms_equal_nltk_synsets_lemma_names():
    from textgen_metrics.lexical.meteor import MeteorScorer
    from textgen_metrics.wordnet import load_wordnet

    wn = load_wordnet()
    scorer = MeteorScorer()
    stemmer = PorterStemmer()
    rng = random.Random(61)
    words = set()
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, f"{pos}.exc"), encoding="utf-8") as f:
            words.update(line.split()[0] for line in f if line.strip())
    base = wordnet_words()
    sample = rng.sample(sorted(words), 3000) + rng.sample(base, 6000)
    sample += [w + s for w in rng.sample(base, 1500) for s in ("s", "es", "ies", "ed", "ing", "er", "est", "men")]
    sample += [stemmer.stem(w) for w in rng.sample(base, 4000)] + [random_word(rng) for _ in range(2000)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for w in sample:
            want = {lemma.name() for ss in wn.synsets(w) for lemma in ss.lemmas() if "_" not in lemma.name()}
            assert scorer.synonyms(w) == sorted(want | {w}), w


def test_meteor_equals_nltk_on_random_unicode_texts():
    from nltk.translate.meteor_score import meteor_score

    import textgen_metrics
    from textgen_metrics.lexical.meteor import word_tokenize
    from textgen_metrics.wordnet import load_wordnet

    wn = load_wordnet()
    rng = random.Random(71)
    sample = texts(72, 200, long_words=800)
    preds = [related(rng, t) if rng.random() < 0.7 else rng.choice(sample) for t in sample]
    got = textgen_metrics.meteor(preds, sample, use_aggregator=False, num_threads=2)["meteor"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [meteor_score([word_tokenize(r)], word_tokenize(p), wordnet=wn)
                for p, r in zip(preds, sample, strict=True)]
    assert got == want


def test_wordnet_index_is_built_once_and_reused(tmp_path, monkeypatch):
    import subprocess

    from textgen_metrics import wordnet

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    code = ("from textgen_metrics.wordnet import wordnet_index, wordnet_index_path; "
            "i = wordnet_index(); print(wordnet_index_path(), i.n_forms)")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    path = first[0]
    assert path.startswith(str(tmp_path)) and os.path.isfile(path) and int(first[1]) > 100000
    mtime = os.stat(path).st_mtime_ns
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert second == first and os.stat(path).st_mtime_ns == mtime  # read, not rebuilt
    assert wordnet.wordnet_index_path().endswith(os.path.basename(path))


# -- BLEU / GLEU statistics and the 13a tokenizer ------------------------------------------------

def bleu_examples(seed: int, n: int):
    rng = random.Random(seed)
    sample = texts(seed, n, long_words=1500)
    preds, refs = [], []
    for t in sample:
        preds.append(related(rng, t) if rng.random() < 0.8 else rng.choice(sample))
        refs.append([t] + [related(rng, t) for _ in range(rng.randint(0, 3))])
    return preds, refs


def adversarial_13a_texts() -> list[str]:
    from test_tokenizers import _adversarial_texts

    return _adversarial_texts(1, 2000) + texts(81, 400, long_words=2000)


@pytest.mark.parametrize("lowercase", [False, True])
def test_13a_tokenizer_equals_the_python_tokenizer_and_sacrebleu(lowercase):
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a as Sacre

    from textgen_metrics.tokenizers import Tokenizer13a

    sample = adversarial_13a_texts()
    got = _native._core.BleuCore().tokenize(sample, _native.BleuInput.TEXT_13A, lowercase)
    assert got == [ref_k.Tokenizer13a(lowercase)(t) for t in sample]
    sacre = Sacre()
    assert got == [sacre((t.lower() if lowercase else t).rstrip()).split() for t in sample]
    # the product's tokenizer is the core's, one text or a batch at a time
    assert Tokenizer13a(lowercase).batch(sample) == got
    assert [Tokenizer13a(lowercase)(t) for t in sample[:500]] == got[:500]


def test_whitespace_split_equals_str_split():
    sample = adversarial_13a_texts()
    core = _native._core.BleuCore()
    split = _native.BleuInput.TEXT_SPLIT
    assert core.tokenize(sample, split, False) == [t.split() for t in sample]
    assert core.tokenize(sample, split, True) == [t.lower().split() for t in sample]


@pytest.mark.parametrize("max_order", [1, 2, 4, 6])
def test_bleu_statistics_equal_the_python_statistics(max_order):
    preds, refs = bleu_examples(90 + max_order, 300)
    tok = ref_k.Tokenizer13a()
    hyp_len, ref_len, correct, total = _native._core.BleuCore().bleu_stats(preds, refs, _native.BleuInput.TEXT_13A,
                                                                           False, max_order, 2)
    for i, (p, rs) in enumerate(zip(preds, refs, strict=True)):
        want = ref_k.BleuStats(tok(p), [tok(r) for r in rs], max_order)
        assert (hyp_len[i], ref_len[i], correct[i], total[i]) == (want.hyp_len, want.ref_len, want.correct, want.total)
    # tokens in: the same statistics
    toks = _native._core.BleuCore().bleu_stats([tok(p) for p in preds], [[tok(r) for r in rs] for rs in refs],
                                               _native.BleuInput.TOKENS, False, max_order, 1)
    assert toks == (hyp_len, ref_len, correct, total)


@pytest.mark.parametrize("min_len, max_len", [(1, 4), (2, 3), (3, 3), (1, 1)])
def test_gleu_statistics_equal_the_python_statistics(min_len, max_len):
    preds, refs = bleu_examples(100 + max_len, 300)
    preds += ["", "a"]
    refs += [[""], ["", "a"]]
    tok = ref_k.Tokenizer13a()
    tp, total = _native._core.BleuCore().gleu_stats(preds, refs, _native.BleuInput.TEXT_13A, False, min_len, max_len,
                                                    1)
    for i, (p, rs) in enumerate(zip(preds, refs, strict=True)):
        want = ref_k.gleu_counts(tok(p), [tok(r) for r in rs], min_len, max_len)
        assert ((tp[i], total[i]) if total[i] else None) == want


# -- Treebank tokenizer (METEOR's word_tokenize) -----------------------------------------------

def test_treebank_tables_equal_the_installed_regex_module():
    import re as _re

    import regex

    header = os.path.join(os.path.dirname(_native.__file__), "treebank_tables.hpp")
    with open(header, encoding="utf-8") as f:
        text = f.read()
    chars = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    for name, pattern in (("RX_WORD", r"\w"), ("RX_SPACE", r"\s"), ("RX_DIGIT", r"\d")):
        block = text.split(f"{name}[][2] = {{", 1)[1].split("};", 1)[0]
        table = [(int(a, 16), int(b, 16)) for a, b in _re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}", block)]
        members = sorted(ord(m.group()) for m in regex.finditer(pattern, chars))
        assert [c for a, b in table for c in range(a, b + 1)] == members, (
            f"{name}: regex {regex.__version__} differs; rerun tools/gen_treebank_tables.py")


def treebank_texts(seed: int, n: int) -> list[str]:
    from test_tokenizers import _adversarial_texts

    rng = random.Random(seed)
    parts = ["'", "''", '"', "`", "``", "'s", "'S", "n't", "N'T", "'ll", "'LL", "'ve", "'re", "'d", "'m", " ",
             ".", "..", "...", ",", ":", "\n", "\t", "(", "[", "{", "<", ">", "\u00bb", "\u201d", "\u2019",
             "\u00ab", "\u201c", "\u2018", "\u201e", "\u017f", "\u0130", "\u0131", "can", "not", "cannot", "CANNOT",
             "d", "'ye", "gimme", "gonna", "gotta", "lemme", "wanna", "'tis", "'Twas", "more'n", "x", "1", "\u0663",
             "\u2014", "\u2012", "--", "-", "*", "?", "!", ";", "&", "$", "\u00a0", "\x1c", "\u2028", "a.", "end.)",
             "\u00e9", "_"]
    out = _adversarial_texts(seed, 1000) + texts(seed, 300, long_words=5000)
    out += ["".join(rng.choice(parts) for _ in range(rng.randint(0, 15))) for _ in range(n)]
    out += [" ".join(rng.choice(parts) for _ in range(rng.randint(0, 15))) for _ in range(n)]
    return out


def test_treebank_tokenizer_equals_nltk_word_tokenize_and_the_python_rules():
    from nltk.tokenize import word_tokenize

    from textgen_metrics.tokenizers import TreebankWordTokenizer

    sample = treebank_texts(91, 15000)
    got = _native.treebank_tokenize(sample)
    bad = [t for t, g in zip(sample, got, strict=True) if g != word_tokenize(t, preserve_line=True)]
    assert bad == []
    python_rules = ref_k.TreebankWordTokenizer()
    assert [python_rules(t) for t in sample[::5]] == got[::5]
    assert TreebankWordTokenizer().batch(sample) == got
