"""The Python reference of the compiled TER kernel (``_native/tercom.hpp``, ``_native.ter_edits``):
the product's former implementation, kept only as the reference that tests/test_tercom_kernel.py
holds the kernel equal to (test_ter.py holds the kernel equal to sacrebleu itself).

Translation edit rate with shifts: sacrebleu 2.x's Tercom algorithm (``metrics/lib_ter.py``),
same edits to the last one, several times faster than sacrebleu's Python.

The algorithm is sacrebleu's: greedy shifts of hypothesis phrases (at most 10 words, at most 50
positions away) chosen as Tercom ranks them (largest drop of the edit distance, then the longest
phrase, the earliest start, the earliest target), until no shift helps or 1,000 candidate
shifts have been tried; the edit distance is a beam search around the length-scaled diagonal
(25 cells each side), with Tercom's preferences among equal-cost operations. What differs is
how the same numbers are found:

- Words become integers once per sentence pair.
- A matrix row holds costs only; the operations of the one optimal path are recomputed from
  the costs while tracing back (sacrebleu stores an (operation, cost) tuple per cell).
- A candidate shift whose edit distance cannot make it the best one is abandoned as soon as a
  computed row proves it: every path to the last cell passes through each row, and costs only
  grow along a path, so the smallest cost of a row bounds the final distance from below. A
  candidate can only matter if its drop is positive and at least the best drop so far (on a tie
  the later tie-breakers decide), so rows above ``pre_score - max(best_drop, 1)`` end its
  computation. Candidates are counted exactly as sacrebleu counts them, so its 1,000-candidate
  limit stops at the same shift.
- Phrase pairs are found from each hypothesis word's positions in the reference, in sacrebleu's
  order; the error sums over a phrase come from prefix sums.

Rows of hypothesis prefixes are cached in a trie, as sacrebleu does; a row depends only on the
prefix (the beam depends on the hypothesis length, which shifts keep), so the cache changes no
number. Tests hold the edits equal to sacrebleu's on generated sentences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import add as _add
from operator import sub as _sub
from typing import Any

__all__ = ["translation_edit_rate"]

_MAX_SHIFT_SIZE = 10
_MAX_SHIFT_DIST = 50
_BEAM_WIDTH = 25
_MAX_CACHE_SIZE = 10000
_MAX_SHIFT_CANDIDATES = 1000
_INF = int(1e16)

_NOP, _SUB, _INS, _DEL = 0, 1, 2, 3


class _EditDistance:
    """sacrebleu's ``BeamEditDistance`` for one reference and one hypothesis length, rows of
    costs only, with early abandonment past a cost bound."""

    def __init__(self, ref: list[int], n_hyp: int) -> None:
        self.ref = ref
        m = self.m = len(ref)
        self.n = n_hyp
        self.initial = list(range(m + 1))  # insertions of the reference's words
        self.ratio = m / n_hyp if n_hyp else 1
        self.beam = (math.ceil(self.ratio / 2 + _BEAM_WIDTH) if _BEAM_WIDTH < self.ratio / 2
                     else _BEAM_WIDTH)
        self.cache: dict[int, Any] = {}
        self.cache_size = 0
        # _gaps[_zero + t] == abs(t): sliced to |j - k| for j = 0..m
        self._zero = m + n_hyp + 1
        self._gaps = [abs(t) for t in range(-self._zero, self._zero + m + 2)]
        self.spans = [(0, m + 1)] + [self._span(i) for i in range(1, n_hyp + 1)]

    def _span(self, i: int) -> tuple[int, int]:
        """The columns ``[lo, hi)`` of row ``i`` inside the beam (the others cost infinity)."""
        pseudo_diag = math.floor(i * self.ratio)
        lo = max(0, pseudo_diag - self.beam)
        hi = self.m + 1 if i == self.n else min(self.m + 1, pseudo_diag + self.beam)
        return lo, hi

    def _row(self, i: int, prev: list[int], w: int) -> list[int]:
        """Row ``i`` of the matrix (hypothesis word ``w``) from row ``i - 1``."""
        m = self.m
        lo, hi = self.spans[i]
        if lo == 0:
            left = prev[0] + 1  # sacrebleu: a deletion, whatever it costs
            cur = [left]
            lo = 1
        else:
            left = _INF
            cur = [_INF] * lo
        append = cur.append
        # cell j from its diagonal (prev[j-1]), upper (prev[j]) and left neighbours
        for diag, up, r in zip(prev[lo - 1:hi - 1], prev[lo:hi], self.ref[lo - 1:hi - 1], strict=True):
            c = diag if r == w else diag + 1
            if up < c:
                c = up + 1 if up + 1 < c else c
            if left + 1 < c:
                c = left + 1
            if c > _INF:
                c = _INF
            append(c)
            left = c
        if hi <= m:
            cur.extend([_INF] * (m + 1 - hi))
        return cur

    def bound(self, i: int, row: list[int]) -> int:
        """A lower bound of the final distance from row ``i``: a cell's cost plus the length
        difference of what remains of the two texts (each unit of it an insertion or a
        deletion on any path to the last cell). Cells outside the beam cost infinity already."""
        lo, hi = self.spans[i]
        k = self.m - self.n + i  # the column from which the rest needs no insertion or deletion
        at = self._zero - k
        low: int = min(map(_add, row[lo:hi], self._gaps[at + lo:at + hi]))
        return low

    def _hopeless(self, i: int, row: list[int], bound: int, base: list[list[int]] | None, tail: int) -> bool:
        """Whether row ``i`` proves the distance above ``bound``: by :meth:`bound`, or, once
        the words from ``tail`` on are those of the hypothesis whose rows are ``base``, because
        the rest of the matrix is a min-plus function of this row, so the distance cannot fall
        below ``base``'s by more than the largest amount by which a cell of this row is lower
        than ``base``'s."""
        if self.bound(i, row) > bound:
            return True
        if base is None or i < tail or not i:
            return False
        lo, hi = self.spans[i]
        gain: int = max(map(_sub, base[i][lo:hi], row[lo:hi]))
        return base[-1][-1] - gain > bound

    def distance(self, words: list[int], bound: int = _INF, base: list[list[int]] | None = None,
                 tail: int = 0) -> tuple[int, list[list[int]] | None]:
        """(edit distance, all rows), or (a number above ``bound``, None) when a row shows
        that the distance exceeds ``bound``. ``base``: the rows of a hypothesis whose words
        from ``tail`` on are those of ``words``."""
        node = self.cache
        rows = [self.initial]
        for w in words:
            hit = node.get(w)
            if hit is None:
                break
            node, row = hit
            rows.append(row)
        start = len(rows) - 1
        if start and self._hopeless(start, rows[-1], bound, base, tail):
            return bound + 1, None
        add = self.cache_size < _MAX_CACHE_SIZE
        n = self.n
        for i in range(start + 1, n + 1):
            w = words[i - 1]
            row = self._row(i, rows[-1], w)
            rows.append(row)
            if add:
                if w not in node:
                    node[w] = ({}, row)
                    self.cache_size += 1
                    add = self.cache_size < _MAX_CACHE_SIZE
                node = node[w][0]
            if self._hopeless(i, row, bound, base, tail):
                return bound + 1, None
        return rows[-1][-1], rows

    def trace(self, words: list[int], rows: list[list[int]]) -> list[int]:
        """The operations of sacrebleu's optimal path (its ``trace``), recomputed from the
        costs: at each cell, the first of substitution/match, deletion, insertion that gives
        the cell's cost (sacrebleu's order of preference)."""
        ref = self.ref
        ops = []
        i, j = self.n, self.m
        while i > 0 or j > 0:
            if i == 0:
                op = _INS
            elif j == 0:
                op = _DEL
            else:
                prev, cur = rows[i - 1], rows[i]
                same = words[i - 1] == ref[j - 1]
                best, op = _INF, -1
                if best > prev[j - 1] + (0 if same else 1):
                    best, op = prev[j - 1] + (0 if same else 1), (_NOP if same else _SUB)
                if best > prev[j] + 1:
                    best, op = prev[j] + 1, _DEL
                if best > cur[j - 1] + 1:
                    op = _INS
                if op < 0:
                    raise RuntimeError("TER: no path within the beam")  # sacrebleu raises too
            ops.append(op)
            if op == _NOP or op == _SUB:
                i -= 1
                j -= 1
            elif op == _INS:
                j -= 1
            else:
                i -= 1
        ops.reverse()
        return ops


def _alignment(ops: list[int]) -> tuple[dict[int, int], list[int], list[int]]:
    """sacrebleu's ``trace_to_alignment`` of the flipped trace (insertions and deletions
    swapped): (reference position -> hypothesis position, reference errors, hypothesis errors)."""
    pos_hyp = pos_ref = -1
    hyp_err: list[int] = []
    ref_err: list[int] = []
    align: dict[int, int] = {}
    for op in ops:
        if op == _NOP or op == _SUB:
            pos_hyp += 1
            pos_ref += 1
            align[pos_ref] = pos_hyp
            e = 0 if op == _NOP else 1
            hyp_err.append(e)
            ref_err.append(e)
        elif op == _DEL:  # flipped: an insertion
            pos_hyp += 1
            hyp_err.append(1)
        else:  # an insertion, flipped: a deletion
            pos_ref += 1
            align[pos_ref] = pos_hyp
            ref_err.append(1)
    return align, ref_err, hyp_err


def _prefix(values: list[int]) -> list[int]:
    out = [0]
    total = 0
    for v in values:
        total += v
        out.append(total)
    return out


def _perform_shift(words: list[int], start: int, length: int, target: int) -> list[int]:
    if target < start:
        return words[:target] + words[start:start + length] + words[target:start] + words[start + length:]
    if target > start + length:
        return words[:start] + words[start + length:target] + words[start:start + length] + words[target:]
    return (words[:start] + words[start + length:length + target] + words[start:start + length]
            + words[length + target:])


def _shift(words_h: list[int], ed: _EditDistance, positions: dict[int, list[int]],
           checked: int) -> tuple[int, list[int], int]:
    """sacrebleu's ``_shift``: the best shift (drop, shifted words) and the candidates
    counted so far; candidates that cannot be chosen are abandoned early."""
    pre_score, rows = ed.distance(words_h)
    assert rows is not None
    align, ref_err, hyp_err = _alignment(ed.trace(words_h, rows))
    hyp_sum = _prefix(hyp_err)
    ref_sum = _prefix(ref_err)
    ref = ed.ref
    n_h, n_r = len(words_h), len(ref)
    best: tuple[int, int, int, int] | None = None
    best_words = words_h
    for start_h in range(n_h):
        for start_r in positions.get(words_h[start_h], ()):
            if abs(start_r - start_h) > _MAX_SHIFT_DIST:
                continue
            length = 0
            while (length < _MAX_SHIFT_SIZE and words_h[start_h + length] == ref[start_r + length]):
                length += 1
                # the phrase words_h[start_h:start_h+length] == ref[start_r:start_r+length]
                if (hyp_sum[start_h + length] - hyp_sum[start_h] and ref_sum[start_r + length] - ref_sum[start_r]
                        and not start_h <= align[start_r] < start_h + length):
                    prev_idx = -1
                    for offset in range(-1, length):
                        if start_r + offset == -1:
                            idx = 0
                        elif start_r + offset in align:
                            idx = align[start_r + offset] + 1
                        else:
                            break
                        if idx == prev_idx:
                            continue
                        prev_idx = idx
                        checked += 1
                        shifted = _perform_shift(words_h, start_h, length, idx)
                        need = max(best[0], 1) if best is not None else 1
                        # from ``tail`` on, the shifted words are words_h's
                        tail = (start_h + length if idx < start_h else idx if idx > start_h + length
                                else length + idx)
                        score, _ = ed.distance(shifted, pre_score - need, rows, tail)
                        if score > pre_score - need:
                            continue  # its drop is below the best one: sacrebleu drops it too
                        key = (pre_score - score, length, -start_h, -idx)
                        if best is None or key > best:
                            best, best_words = key, shifted
                    if checked >= _MAX_SHIFT_CANDIDATES:  # sacrebleu stops after this phrase
                        return (0, words_h, checked) if best is None else (best[0], best_words, checked)
                if n_h == start_h + length or n_r == start_r + length:
                    break
    if best is None:
        return 0, words_h, checked
    return best[0], best_words, checked


def translation_edit_rate(words_hyp: Sequence[str], words_ref: Sequence[str]) -> tuple[int, int]:
    """(number of edits, reference length) of ``words_hyp`` against ``words_ref``: sacrebleu's
    ``lib_ter.translation_edit_rate``, the same numbers."""
    n_ref = len(words_ref)
    n_hyp = len(words_hyp)
    if n_ref == 0:
        return n_hyp, 0
    vocab: dict[str, int] = {}
    ref = [vocab.setdefault(w, len(vocab)) for w in words_ref]
    hyp = [vocab.setdefault(w, len(vocab)) for w in words_hyp]
    positions: dict[int, list[int]] = {}
    for j, w in enumerate(ref):
        positions.setdefault(w, []).append(j)
    ed = _EditDistance(ref, n_hyp)
    shifts = 0
    checked = 0
    words = hyp
    while True:
        delta, shifted, checked = _shift(words, ed, positions, checked)
        if checked >= _MAX_SHIFT_CANDIDATES or delta <= 0:
            break
        shifts += 1
        words = shifted
    distance, _ = ed.distance(words)
    return shifts + distance, n_ref
