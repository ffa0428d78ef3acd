"""Clipped n-gram match counts of many (hypothesis, reference) pairs at once, with numpy.

For every pair and every order n = 1..N: the number of hypothesis n-grams, the number of
reference n-grams, and the clipped matches ``sum over n-grams g of min(count_hyp(g),
count_ref(g))``, exactly the ``[hyp, ref, match]`` statistics chrF takes from ``Counter``
objects in sacrebleu (``CHRF._get_match_statistics``).

Why not ``Counter``s: building one Counter per text and order, and looping over it in Python,
is where sacrebleu's chrF spends its time. Here the symbols (characters, or word ids) of a batch
of texts become one integer array; an n-gram is the integer ``g(n) = g(n-1) * A + symbol`` (A
the alphabet size; re-numbered densely when the next order would not fit in 62 bits), which
is an exact, collision-free code. Tagging each n-gram of pair p as ``(p * B + g) * 2 + side``
and sorting the tags once per order puts every n-gram's hypothesis occurrences next to its
reference occurrences; run lengths give the two counts and their minimum. Integers only:
the counts equal the ``Counter`` ones, which tests check against sacrebleu and a Python
reference on generated text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["match_statistics", "char_codes", "word_codes"]

_LIMIT = 1 << 62
_BATCH = 4096  # pairs per batch: bounds the memory and keeps every key within 62 bits


def char_codes(texts: Sequence[str]) -> tuple[Any, Any]:
    """(code points of the concatenated texts as int64, the texts' lengths)."""
    import numpy as np

    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    joined = "".join(texts).encode("utf-32-le", "surrogatepass")
    return np.frombuffer(joined, dtype=np.uint32).astype(np.int64), lengths


def word_codes(token_lists: Sequence[Sequence[str]], vocabulary: dict[str, int]) -> tuple[Any, Any]:
    """(ids of the concatenated tokens, from and added to ``vocabulary``; the lists' lengths)."""
    import numpy as np

    setdefault = vocabulary.setdefault
    ids = [setdefault(t, len(vocabulary)) for tokens in token_lists for t in tokens]
    lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
    return np.asarray(ids, dtype=np.int64), lengths


def _ranges(starts: Any, counts: Any) -> tuple[Any, Any]:
    """(owner index of each element, ``starts[owner] + k``) for ranges of ``counts`` elements."""
    import numpy as np

    total = int(counts.sum())
    owner = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    return owner, starts[owner] + (np.arange(total) - first[owner])


def _batch(hyp_codes: Any, hyp_lengths: Any, ref_codes: Any, ref_lengths: Any, order: int) -> Any:
    import numpy as np

    n_pairs = len(hyp_lengths)
    out = np.zeros((n_pairs, order, 3), dtype=np.int64)
    codes = np.concatenate([hyp_codes, ref_codes])
    alphabet = np.unique(codes)
    codes = np.searchsorted(alphabet, codes)  # dense symbols 0..A-1
    size = max(len(alphabet), 1)
    hyp_starts = np.cumsum(hyp_lengths) - hyp_lengths
    ref_starts = np.cumsum(ref_lengths) - ref_lengths + len(hyp_codes)
    gram = codes.copy()  # the n-gram starting at each position (garbage where it crosses texts)
    bound = size         # every value of ``gram`` lies below it
    for n in range(1, order + 1):
        if n > 1:
            if n_pairs * bound * size >= _LIMIT:  # renumber the (n-1)-grams densely first
                uniq, gram = np.unique(gram, return_inverse=True)
                bound = len(uniq)
            gram = gram[:-1] * size + codes[n - 1:]
            bound *= size
        hyp_total = np.maximum(hyp_lengths - n + 1, 0)
        ref_total = np.maximum(ref_lengths - n + 1, 0)
        out[:, n - 1, 0] = np.where(ref_total > 0, hyp_total, 0)
        out[:, n - 1, 1] = ref_total
        h_pair, h_pos = _ranges(hyp_starts, hyp_total)
        r_pair, r_pos = _ranges(ref_starts, ref_total)
        if not len(h_pos) or not len(r_pos):
            continue
        tags = np.concatenate([(h_pair * bound + gram[h_pos]) * 2,
                               (r_pair * bound + gram[r_pos]) * 2 + 1])
        tags.sort()
        starts = np.flatnonzero(np.concatenate([[True], tags[1:] != tags[:-1]]))
        runs = tags[starts]
        lengths = np.diff(np.append(starts, len(tags)))
        both = np.flatnonzero((runs[:-1] >> 1) == (runs[1:] >> 1))  # a hyp run, then its ref run
        matched = np.minimum(lengths[both], lengths[both + 1])
        out[:, n - 1, 2] = np.bincount((runs[both] >> 1) // bound, weights=matched,
                                       minlength=n_pairs).astype(np.int64)
    return out


def match_statistics(hyp: tuple[Any, Any], ref: tuple[Any, Any], order: int) -> Any:
    """``[hyp n-grams, ref n-grams, clipped matches]`` for each pair and order 1..``order``.

    ``hyp`` and ``ref`` are ``(codes, lengths)`` from :func:`char_codes` or
    :func:`word_codes`, pair i being the i-th hypothesis and the i-th reference. As sacrebleu's
    chrF statistics, the hypothesis count of an order is 0 when the reference has no n-gram of
    that order. Returns an int64 array of shape ``(pairs, order, 3)``.
    """
    import numpy as np

    hyp_codes, hyp_lengths = hyp
    ref_codes, ref_lengths = ref
    n_pairs = len(hyp_lengths)
    if n_pairs <= _BATCH:
        return _batch(hyp_codes, hyp_lengths, ref_codes, ref_lengths, order)
    hyp_ends = np.cumsum(hyp_lengths)
    ref_ends = np.cumsum(ref_lengths)
    parts = []
    for a in range(0, n_pairs, _BATCH):
        b = min(a + _BATCH, n_pairs)
        h0 = hyp_ends[a - 1] if a else 0
        r0 = ref_ends[a - 1] if a else 0
        parts.append(_batch(hyp_codes[h0:hyp_ends[b - 1]], hyp_lengths[a:b],
                            ref_codes[r0:ref_ends[b - 1]], ref_lengths[a:b], order))
    return np.concatenate(parts)
