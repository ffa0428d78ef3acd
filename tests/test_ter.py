"""TER equals sacrebleu's TER: the edits of every sentence pair (realistic, repetitive, long,
empty), corpus and sentence scores with every option, signature and interval."""

import itertools
import random

import pytest
from sacrebleu.metrics import TER
from sacrebleu.metrics.lib_ter import translation_edit_rate as sacrebleu_edits

import textgen_metrics
from corpus import pairs
from mt_corpus import mt_corpus, sacre_refs
from textgen_metrics import _native

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
    # the compiled kernel, one batch, one reference each: (edits, reference length) per pair
    pairs_ = sentence_pairs(seed)
    got = _native.ter_edits([hyp for hyp, _ in pairs_], [[ref] for _, ref in pairs_])
    for (hyp, ref), edits in zip(pairs_, got, strict=True):
        assert edits == sacrebleu_edits(hyp, ref), (hyp, ref)


def assert_ter_equals_sacrebleu(preds, refs, options):
    """Corpus score, edits, reference length and signature, and every sentence score, as
    sacrebleu's TER gives them."""
    metric = TER(**options)
    want = metric.corpus_score(preds, sacre_refs(refs))
    got = textgen_metrics.ter(preds, refs, **options)
    assert (got["score"], got["num_edits"], got["ref_length"]) == (want.score, want.num_edits, want.ref_length)
    assert got["signature"] == metric.get_signature().format()
    per = textgen_metrics.ter(preds, refs, use_aggregator=False, **options)
    sentences = [metric.sentence_score(p, rs) for p, rs in zip(preds, refs, strict=True)]
    assert per["score"] == [s.score for s in sentences]
    assert per["num_edits"] == [s.num_edits for s in sentences]
    assert per["ref_length"] == [s.ref_length for s in sentences]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_corpus_and_sentence_ter_equal_sacrebleu(options):
    preds, refs = mt_corpus(150, seed=len(str(options)), kinds=("english", "cjk", "unicode", "empty"), max_refs=3)
    assert_ter_equals_sacrebleu(preds, refs, options)


ALL_OPTIONS = [dict(normalized=n, no_punct=p, asian_support=a, case_sensitive=c)
               for n, p, a, c in itertools.product([False, True], repeat=4)]
HAIL_MARY = "The priest absolved him and told him to say ten Hail Mary's."

# pieces of text where the Tercom tokenizer's rules meet: possessives before punctuation (not
# idempotent with normalized), apostrophes, XML entities (one escaped twice), numbers with
# periods, commas and dashes, hyphenated line ends, CJK, kana runs, Asian and full-width
# punctuation, Hangul, capitals
_PIECES = ["Mary's", "Hail Mary's.", "the dog's,", "dogs'", "it's", "'s", "O'Neil's!", "don't", "rock 'n' roll",
           "James's?", "Mary's\n", "&amp;", "&quot;hi&quot;", "&lt;b&gt;", "&amp;quot;", "&amp;lt;", "1,000",
           "3.14", "1990-2000", "-5", "e.g.", "U.S.", "Mr.", "(yes)", '"quoted"', "a/b", "x-ray", "end.", "why?",
           "no!", "semi;", "colon:", "[x]", "{y}", "50%", "#1", "@home", "~", "^", "_", "`", "|",
           "東京は", "日本語の文章です", "中文，标点。", "カタカナ", "ひらがなとカタカナ", "「引用」", "、", "。",
           "！", "？", "（括弧）", "ｶﾀｶﾅ", "㍿", "ＡＢＣ", "，", "．", "：", "；", "한국어", "입니다.", "丶",
           "⺀", "㇀",
           "The", "THE", "priest", "absolved", "him", "and", "told", "say", "ten", "word", "\n-", "\n", "\t"]


def _tercom_text(rng: random.Random) -> str:
    out = ""
    for _ in range(rng.randint(0, 14)):
        out += rng.choice(["", " ", " ", " ", "  "]) + rng.choice(_PIECES)
    return out + rng.choice(["", "", ".", " .", "'s.", " ", "\n"])


def _tercom_variant(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.3 and words:
            del words[rng.randrange(len(words))]
        elif r < 0.6 and len(words) > 1:
            i, j = rng.randrange(len(words)), rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        elif r < 0.8 and words:
            i = rng.randrange(len(words))
            words[i] = words[i].upper() if rng.random() < 0.5 else words[i].lower()
        else:
            words.insert(rng.randint(0, len(words)), rng.choice(_PIECES))
    return " ".join(words)


def tercom_corpus(n: int, seed: int) -> tuple[list[str], list[list[str]]]:
    """Predictions with 1..3 references: a prediction is one of its references as it is (the
    possessive quirk shows on identical texts), a variant of one, or another text."""
    rng = random.Random(seed)
    preds, refs = [], []
    for _ in range(n):
        rs = [_tercom_text(rng) for _ in range(rng.randint(1, 3))]
        r = rng.random()
        preds.append(rs[0] if r < 0.4 else _tercom_variant(rng, rng.choice(rs)) if r < 0.8 else _tercom_text(rng))
        refs.append(rs)
    return preds, refs


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
def test_every_option_combination_equals_sacrebleu_on_tokenizer_edge_cases(options):
    preds, refs = tercom_corpus(120, seed=sum(v << k for k, v in enumerate(options.values())))
    assert_ter_equals_sacrebleu(preds, refs, options)


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
def test_sacrebleus_twice_tokenized_references_score_an_identical_pair(options):
    # sacrebleu tokenizes a reference twice, a hypothesis once; with normalized, "Mary's." is
    # "mary's ." after one pass and "mary 's ." after two: two edits in fourteen words
    got = textgen_metrics.ter([HAIL_MARY], [HAIL_MARY], **options)
    want = TER(**options).corpus_score([HAIL_MARY], [[HAIL_MARY]])
    assert (got["score"], got["num_edits"], got["ref_length"]) == (want.score, want.num_edits, want.ref_length)
    if options["normalized"]:
        assert got["num_edits"] == 2 and got["score"] > 0
        assert got["score"] == 100 * (2 / (13 if options["no_punct"] else 14))
    else:
        assert got["score"] == 0.0


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
    got = textgen_metrics.ter(preds, refs, confidence_level=0.95, n_resamples=400, seed=11, interval="sacrebleu")
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
