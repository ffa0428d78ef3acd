"""Reference (slow, pure Python) LCS kernels: the product's former implementation, kept only as
the reference that tests/test_native.py holds the compiled core equal to.

Longest common subsequence kernels.

``lcs_length`` and ``lcs_indices`` use the bit-parallel LCS of Allison and Dix (1986) /
Crochemore et al. (2001): one row of the dynamic-programming table is a Python integer whose
zero bits mark the columns where the row's LCS grows, so a row costs a few big-integer
operations instead of a Python loop over the columns. Cell ``(i, j)`` of the classic table is
``j - popcount(row_i & (2**j - 1))``, which lets ``lcs_indices`` walk back through the table
exactly as rouge-score's ``_backtrack_norec`` does (same tie-breaking, same LCS path).

``wlcs_mark`` is the weighted LCS of the official ROUGE-1.5.5 script (``wlcs_inner`` and
``markLCS``), floating-point operations in the same order.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


__all__ = ["lcs_length", "lcs_masks", "lcs_rows", "lcs_indices", "lcs_table", "union_lcs_indices", "wlcs_mark"]


def _masks(seq: Sequence[Hashable]) -> tuple[dict[Hashable, int], int]:
    masks = {}
    bit = 1
    for tok in seq:
        masks[tok] = masks.get(tok, 0) | bit
        bit <<= 1
    return masks, bit - 1


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of the token sequences ``a`` and ``b``."""
    if not a or not b:
        return 0
    if len(a) < len(b):
        a, b = b, a  # fewer bits per row
    masks, full = _masks(b)
    get = masks.get
    v = full
    for tok in a:
        m = get(tok)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def lcs_masks(can: Sequence[Hashable]) -> tuple[dict[Hashable, int], int]:
    """The per-token bit masks of ``can`` and the all-ones row, reusable across ``lcs_rows``."""
    return _masks(can)


def lcs_rows(ref: Sequence[Hashable], can: Sequence[Hashable], masks: tuple[dict[Hashable, int], int] | None = None) -> list[int]:
    """Bit rows of the LCS table of ``ref`` (rows) against ``can`` (columns); row 0 first."""
    masks, full = masks or _masks(can)
    get = masks.get
    v = full
    rows = [v]
    append = rows.append
    for tok in ref:
        m = get(tok)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
        append(v)
    return rows


def lcs_table(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[list[int]]:
    """The full ``(len(ref)+1) x (len(can)+1)`` LCS table (for tests and small inputs)."""
    rows = lcs_rows(ref, can)
    return [[j - (r & ((1 << j) - 1)).bit_count() for j in range(len(can) + 1)] for r in rows]


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable], masks: tuple[dict[Hashable, int], int] | None = None) -> list[int]:
    """Indices into ``ref`` of the LCS that rouge-score's ``lcs_ind`` returns, in order.

    rouge-score walks back from ``(len(ref), len(can))``: diagonal on a match, left when
    ``t[i][j-1] > t[i-1][j]``, else up. With ``D = t[i][j] - t[i-1][j]`` (0 or 1) and no match,
    left happens exactly when ``D = 1``, and then ``D`` stays 1 along the row until the walk
    reaches a column where ``can`` holds ``ref[i-1]``; so a whole run of left steps is one jump
    to the highest such column below ``j`` (a bit-length of the token's mask). ``masks`` (from
    ``lcs_masks(can)``) saves rebuilding them when ``can`` is reused.
    """
    if not ref or not can:
        return []
    if masks is None:
        masks = _masks(can)
    rows = lcs_rows(ref, can, masks)
    get = masks[0].get
    i, j = len(ref), len(can)
    out = []
    while i > 0 and j > 0:
        mk = get(ref[i - 1])
        if mk:
            if (mk >> (j - 1)) & 1:
                out.append(i - 1)
                j -= 1
            else:
                low = (1 << j) - 1
                if (rows[i - 1] & low).bit_count() > (rows[i] & low).bit_count():
                    # D = 1: left to the nearest match of ref[i-1], then diagonal
                    j = (mk & (low >> 1)).bit_length() - 1
                    out.append(i - 1)
        i -= 1
    out.reverse()
    return out


def wlcs_mark(model: Sequence[Hashable], peer: Sequence[Hashable], hit_mask: list[int], powers: Sequence[float]) -> None:
    """ROUGE-1.5.5 ``wlcs_inner`` + ``markLCS``: mark in ``hit_mask`` the model positions on
    the weighted LCS of ``model`` and ``peer``.

    ``powers[k]`` is ``k ** weight`` (``wlcsWeight``); it must cover ``min(len) + 1`` entries.
    """
    m = len(model)
    n = len(peer)
    if m == 0 or n == 0:
        return
    # c: weighted scores, l: length of the consecutive run ending at (i, j), b: move
    c_prev = [0.0] * (n + 1)
    l_prev = [0] * (n + 1)
    moves = []
    for i in range(1, m + 1):
        tok = model[i - 1]
        c_cur = [0.0] * (n + 1)
        l_cur = [0] * (n + 1)
        b_cur = bytearray(n + 1)  # 1 diagonal, 2 up, 3 left
        for j in range(1, n + 1):
            if tok == peer[j - 1]:
                k = l_prev[j - 1]
                c_cur[j] = c_prev[j - 1] + powers[k + 1] - powers[k]
                b_cur[j] = 1
                l_cur[j] = k + 1
            elif c_prev[j] >= c_cur[j - 1]:
                c_cur[j] = c_prev[j]
                b_cur[j] = 2
            else:
                c_cur[j] = c_cur[j - 1]
                b_cur[j] = 3
        moves.append(b_cur)
        c_prev = c_cur
        l_prev = l_cur
    i, j = m, n
    while i and j:
        move = moves[i - 1][j]
        if move == 1:
            i -= 1
            j -= 1
            hit_mask[i] = 1
        elif move == 2:
            i -= 1
        else:
            j -= 1


def union_lcs_indices(ref_sents: Sequence[Sequence[Hashable]], can_sents: Sequence[Sequence[Hashable]]) -> list[list[int]]:
    """For each sentence of ``ref_sents``: the sorted union over ``can_sents`` of the LCS indices
    rouge-score's ``_union_lcs`` finds (the summary-level LCS of ROUGE-Lsum).

    Per sentence pair this is ``lcs_indices``, restricted to the reference positions whose token
    occurs in the candidate sentence: at the other rows the table does not change and the walk
    only goes up, so neither the rows nor the walk need to visit them. A pair is skipped when
    the candidate holds none of the tokens whose positions are still missing from the union
    (it could add nothing), and a reference sentence stops once its union is complete.
    """
    cans = []
    vocab = set()
    for c in can_sents:
        if c:
            masks, full = _masks(c)
            cans.append((len(c), masks, full))
            vocab.update(masks)
    out = []
    for r in ref_sents:
        reachable = [i for i, tok in enumerate(r) if tok in vocab]
        union = set()
        add = union.add
        seen = -1
        for length, masks, full in cans:
            if len(union) != seen:
                seen = len(union)
                if seen == len(reachable):
                    break
                # a pair can only add positions whose token it holds: skip the pairs that
                # hold none of the tokens still missing from the union
                missing = {r[i] for i in reachable if i not in union}
            if missing.isdisjoint(masks.keys()):
                continue
            get = masks.get
            pos = []
            ms = []
            for i, tok in enumerate(r):
                m = get(tok)
                if m:
                    pos.append(i)
                    ms.append(m)
            if not pos:
                continue
            v = full
            rows = [v]
            for m in ms:
                u = v & m
                v = ((v + u) | (v ^ u)) & full  # v - u == v ^ u: u is a subset of v
                rows.append(v)
            j = length
            k = len(pos)
            while k and j:
                k -= 1
                m = ms[k]
                if (m >> (j - 1)) & 1:
                    add(pos[k])
                    j -= 1
                else:
                    low = (1 << j) - 1
                    if (rows[k] & low).bit_count() > (rows[k + 1] & low).bit_count():
                        j = (m & (low >> 1)).bit_length() - 1
                        add(pos[k])
        out.append(sorted(union))
    return out
