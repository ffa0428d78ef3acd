"""The compiled TER kernel (``_native.ter_edits``, ``_native/tercom.hpp``) equals its Python
reference (tests/tercom_reference.py, the product's former implementation, itself held equal to
sacrebleu in test_ter.py) on generated sentence pairs: few distinct words (many shift candidates),
lengths 0 to 80, pairs long and unequal enough for the beam to matter, repeated phrases, pairs
that reach sacrebleu's 1,000-candidate limit and pairs that fill the row cache; several
references, threads, empty texts and bad input."""

import contextlib
import random

import pytest

import tercom_reference as ref_ter
from textgen_metrics import _native


@contextlib.contextmanager
def counting(monkeypatch):
    """Per reference call: the candidates the reference's shift search checked and the rows its
    cache held, in ``seen`` (one dict per translation_edit_rate call)."""
    seen: list[dict] = []
    shift = ref_ter._shift

    def counted(words, ed, positions, checked):
        out = shift(words, ed, positions, checked)
        if not seen or seen[-1]["ed"] is not ed:
            seen.append({"ed": ed})
        seen[-1]["checked"] = out[2]
        seen[-1]["cache"] = ed.cache_size
        return out

    with monkeypatch.context() as m:
        m.setattr(ref_ter, "_shift", counted)
        yield seen


def assert_equal_to_reference(pairs, **kwargs):
    got = _native.ter_edits([h for h, _ in pairs], [[r] for _, r in pairs], **kwargs)
    for (hyp, ref), edits in zip(pairs, got, strict=True):
        assert edits == ref_ter.translation_edit_rate(hyp, ref), (hyp, ref)


def small_vocab_pairs(rng, n):
    out = []
    for _ in range(n):
        vocab = [chr(ord("a") + k) for k in range(rng.randint(1, 6))]
        out.append(([rng.choice(vocab) for _ in range(rng.randint(0, 80))],
                    [rng.choice(vocab) for _ in range(rng.randint(0, 80))]))
    return out


def shifted_pairs(rng, n):
    """A reference and a hypothesis made from it by moving phrases, repeating some and editing
    a few words: the shifts Tercom looks for."""
    out = []
    for _ in range(n):
        vocab = [f"w{k}" for k in range(rng.randint(3, 30))]
        ref = [rng.choice(vocab) for _ in range(rng.randint(1, 80))]
        hyp = ref[:]
        for _ in range(rng.randint(1, 6)):
            r = rng.random()
            i = rng.randrange(len(hyp) + 1)
            if r < 0.5 and hyp:  # move a phrase
                k = rng.randint(1, min(12, len(hyp)))
                s = rng.randrange(len(hyp) - k + 1)
                phrase = hyp[s:s + k]
                del hyp[s:s + k]
                t = rng.randrange(len(hyp) + 1)
                hyp[t:t] = phrase
            elif r < 0.65:  # repeat a phrase
                hyp[i:i] = hyp[max(0, i - 3):i]
            elif r < 0.8 and hyp:
                del hyp[rng.randrange(len(hyp))]
            elif r < 0.9 and hyp:
                hyp[rng.randrange(len(hyp))] = rng.choice(vocab)
            else:
                hyp.insert(i, rng.choice(vocab + ["new"]))
        out.append((hyp[:80], ref))
    return out


def beam_pairs(rng):
    """Long and very unequal: a beam of 25 cells each side of the scaled diagonal, wider when the
    reference is over 50 times longer than the hypothesis."""
    out = []
    for n_ref, n_hyp in [(150, 2), (120, 1), (200, 3), (90, 20), (3, 120), (1, 90), (130, 130), (110, 60)]:
        vocab = [str(k) for k in range(rng.choice([3, 8, 40]))]
        ref = [rng.choice(vocab) for _ in range(n_ref)]
        hyp = ref[:]
        rng.shuffle(hyp)
        hyp = (hyp + [rng.choice(vocab) for _ in range(n_hyp)])[:n_hyp]
        out.append((hyp, ref))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_small_vocabularies_equal_the_reference(seed):
    assert_equal_to_reference(small_vocab_pairs(random.Random(seed), 25))


@pytest.mark.parametrize("seed", range(4))
def test_moved_and_repeated_phrases_equal_the_reference(seed):
    assert_equal_to_reference(shifted_pairs(random.Random(100 + seed), 40))


def test_long_unequal_pairs_equal_the_reference():
    assert_equal_to_reference(beam_pairs(random.Random(7)))


def test_the_candidate_limit_and_a_full_cache_equal_the_reference(monkeypatch):
    # two words alternating, long: thousands of candidate shifts, each a new hypothesis whose rows
    # the cache keeps until it holds 10,000
    rng = random.Random(11)
    pairs = [(["a", "b"] * 40, ["b", "a"] * 40), (["a"] * 40 + ["b"] * 40, ["b", "a"] * 40)]
    pairs += [([rng.choice("ab") for _ in range(80)], [rng.choice("ab") for _ in range(80)]) for _ in range(4)]
    pairs += [([rng.choice("abc") for _ in range(60)], ["a", "b", "c"] * 20) for _ in range(4)]
    with counting(monkeypatch) as seen:
        assert_equal_to_reference(pairs)
    assert sum(s["checked"] >= ref_ter._MAX_SHIFT_CANDIDATES for s in seen) >= 3
    assert sum(s["cache"] >= ref_ter._MAX_CACHE_SIZE for s in seen) >= 2
    assert any(s["checked"] < ref_ter._MAX_SHIFT_CANDIDATES for s in seen)


def test_empty_texts():
    pairs = [([], []), ([], ["a"]), (["a"], []), (["a", "b", "c"], []), ([], ["a", "b", "c"]), (["a"], ["a"]),
             (["a", "b"], ["b", "a"]), (["x"], ["y"])]
    assert_equal_to_reference(pairs)
    assert _native.ter_edits([[], ["a", "b"]], [[[]], [[]]]) == [(0, 0), (2, 0)]


def test_several_references_give_the_fewest_edits_and_the_total_length():
    rng = random.Random(3)
    hyps, refs = [], []
    for hyp, ref in shifted_pairs(rng, 30):
        others = [r for _, r in shifted_pairs(rng, rng.randint(0, 3))]
        hyps.append(hyp)
        refs.append([ref] + others)
    got = _native.ter_edits(hyps, refs)
    for hyp, rs, (edits, length) in zip(hyps, refs, got, strict=True):
        each = [ref_ter.translation_edit_rate(hyp, r) for r in rs]
        assert (edits, length) == (min(e for e, _ in each), sum(n for _, n in each))
    assert _native.ter_edits([["a"]], [[]]) == [(10**16, 0)]  # no reference: sacrebleu's starting value


def test_threads_and_batches_give_the_same_edits():
    rng = random.Random(5)
    pairs = small_vocab_pairs(rng, 20) + shifted_pairs(rng, 40)
    hyps, refs = [h for h, _ in pairs], [[r] for _, r in pairs]
    one = _native.ter_edits(hyps, refs)
    assert _native.ter_edits(hyps, refs, num_threads=3) == one
    assert _native.ter_edits(hyps, refs, num_threads=None) == one
    assert [_native.ter_edits([h], [r])[0] for h, r in zip(hyps, refs, strict=True)] == one
    # words are strings compared by value, Unicode included
    assert (_native.ter_edits([["é", "日本", "a"]], [[["a", "é", "日本"]]])
            == [ref_ter.translation_edit_rate(["é", "日本", "a"], ["a", "é", "日本"])])


def test_bad_input_is_named():
    with pytest.raises(TypeError, match=r"hypotheses\[1\]: expected str, got int"):
        _native.ter_edits([["a", 1]], [[["a"]]])
    with pytest.raises(TypeError, match=r"references\[0\]: expected str"):
        _native.ter_edits([["a"]], [[[None]]])
    with pytest.raises(ValueError, match="references: 2 examples, hypotheses: 1"):
        _native.ter_edits([["a"]], [[["a"]], [["b"]]])
