"""The statistics of meta-evaluation, on NumPy, vectorised over groups and over batches of
metric vectors: how well one score agrees with people's on a table of rows.

Each statistic follows Google's mt-metrics-eval (commit 68a481a; ``stats.py``, ``pce.py``,
``tau_optimization.py``) or SciPy where it has it; the tests hold them equal on generated tables
(``tests/reference/mt_metrics_eval`` is a verbatim copy of the reference):

- ``pearson``, ``spearman``: ``scipy.stats.pearsonr`` / ``spearmanr`` (average ranks), None
  where mt-metrics-eval's ``AverageCorrelation`` sets NaN (a constant vector, fewer than 2 rows).
- ``kendall`` (tau-b), ``kendall_c``, ``kendall_23``, ``acc23``: ``stats.KendallVariants`` with
  ``variant`` ``b``, ``c``, ``23``, ``acc23``, from the five pair counts (concordant, discordant,
  tied in the metric only, in the human score only, in both). Small groups count their pairs
  with one broadcast over a padded ``groups x rows x rows`` array; large ones with an
  ``O(n log^2 n)`` merge count of inversions (SciPy's Fenwick tree is compiled code; NumPy has
  no loop that fast, but it sorts and searches in bulk).
- ``acc_eq``: ``stats.KendallWithTiesOpt(variant="acc23", sample_rate=1.0)``: every
  within-group pair once, sorted by the metric's absolute difference, and the accuracy at every
  candidate threshold read from one cumulative sum (``tau_optimization.tau_optimization`` walks
  the same order pair by pair in Python). The threshold is the smallest that reaches the
  maximum, as ``numpy.nanargmax`` there; the sums are kept in integers (each group's pairs
  weighted by the least common multiple of the groups' pair counts over its own), so an exact tie
  between two thresholds is a tie here (the reference's float running sum may break it by
  rounding, at 1e-16).
- ``pdp``: ``stats.AverageCorrelation(pearsonr, pdp=True)`` pools every ordered within-group pair
  (diagonal included) into one Pearson. Those differences have mean 0, and
  ``sum_ij (h_j - h_i)(m_j - m_i) = 2 n S_hm``, so the pooled Pearson is
  ``sum_g n_g S_hm,g / sqrt(sum_g n_g S_hh,g * sum_g n_g S_mm,g)`` with ``S`` the centred sums of
  products within group ``g``: ``O(rows)`` instead of ``O(rows^2)``, equal to 1e-12.
- ``spa``: ``pce.compute_pairwise_p_values`` (the same float32 signs from
  ``numpy.random.default_rng(seed)``, the same one-sided ``null >= observed`` count) and
  ``pce.compute_one_minus_pce``; the signs are drawn once per call and reused for every matrix of
  the batch, as ``pce`` reuses them for every system pair.
- ``pairwise_accuracy``: ``stats.Agreement`` over the system pairs divided by their number (Kocmi
  et al. 2021: the share of pairs whose order the metric and people agree on; a pair both tie
  agrees).
- ``partial_pearson`` / ``partial_spearman``: Pearson / Spearman after subtracting from each
  score its system's mean, the mean taken as ``math.fsum(values) / n`` (correctly rounded
  sum, as ``statistics.fmean``), so the residuals do not depend on the order of the rows.
- ``accuracy``, ``kappa``: the share of equal labels; Cohen's kappa as
  :func:`textgen_metrics.stats.correlation.cohen_kappa` (scikit-learn's).
- ``williams_test``: ``stats.WilliamsTest``, with Student's t tail from the regularised
  incomplete beta function (continued fraction), so that SciPy is not needed.

These are the primitives; :mod:`textgen_metrics.stats.statistic` declares each statistic as an
object that calls them. Undefined values are NaN inside this module;
:mod:`textgen_metrics.meta.evaluate` turns them into None with a reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._native import PERM_BITS, pair_counts, perm_counts
from .correlation import cohen_kappa, tied_pairs

__all__ = ["Layout", "layout", "pad", "group_values", "kendall_counts", "acc_eq_pairs", "acc_eq_sweep",
           "AccEqPairs", "pdp_parts", "pdp_value", "spa_signs", "spa_values", "spa_resampled", "p_values",
           "pairwise_accuracy", "system_residuals", "williams_test", "t_sf", "label_value", "swap_ranks"]

_PAIR_VARIANTS = ("kendall", "kendall_c", "kendall_23", "acc23")  # KendallVariants' variants, from pair counts
_SMALL = 128  # groups up to this size count their pairs by broadcasting
_SMALL_RANK = 32  # groups up to this size rank their cells by counting (_rank_rows_small)
_PAIR_CELLS = 1 << 23  # cells of a broadcast pair array held at once


# -- layout: rows grouped into a padded groups x rows matrix ----------------------------------

@dataclass(frozen=True)
class Layout:
    """Where each row goes in a padded ``groups x width`` matrix (rows in their table order
    within a group)."""

    order: np.ndarray  # rows sorted by group (stable)
    group: np.ndarray  # group index of each sorted row
    position: np.ndarray  # position within its group of each sorted row
    sizes: np.ndarray  # rows per group
    width: int

    @property
    def valid(self) -> np.ndarray:
        v = np.zeros((self.sizes.size, self.width), dtype=bool)
        v[self.group, self.position] = True
        return v


def layout(codes: np.ndarray) -> Layout:
    """The layout of rows whose group is ``codes`` (integers; groups ordered by code)."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, ordered.size]).astype(np.int64)
    group = np.repeat(np.arange(sizes.size), sizes)
    position = np.arange(ordered.size) - np.repeat(starts, sizes)
    return Layout(order, group, position, sizes, int(sizes.max()) if sizes.size else 0)


def pad(values: np.ndarray, lay: Layout, fill: float = 0.0) -> np.ndarray:
    """``values`` (last axis: rows) into ``(..., groups, width)``; cells past a group's end hold
    ``fill``."""
    out = np.full(values.shape[:-1] + (lay.sizes.size, lay.width), fill, dtype=np.float64)
    out[..., lay.group, lay.position] = values[..., lay.order]
    return out


# -- per-group statistics over padded matrices -------------------------------------------------

def _centred(x: np.ndarray, valid: np.ndarray, n: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, x, 0.0).sum(axis=-1, keepdims=True) / n[..., None]
    out: np.ndarray = np.where(valid, x - mean, 0.0)
    return out


def _constant(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    high = np.where(valid, x, -np.inf).max(axis=-1)
    low = np.where(valid, x, np.inf).min(axis=-1)
    out: np.ndarray = high == low
    return out


def _pearson_rows(h: np.ndarray, m: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Pearson's r of each group (last axis: rows), NaN where undefined."""
    n = valid.sum(axis=-1)
    dh, dm = _centred(h, valid, n), _centred(m, valid, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dh * dm).sum(axis=-1) / np.sqrt((dh * dh).sum(axis=-1) * (dm * dm).sum(axis=-1))
    r = np.clip(r, -1.0, 1.0)
    r = np.where(n == 2, np.round(r), r)  # SciPy gives exactly +-1 for two points
    bad = (n < 2) | _constant(h, valid) | _constant(m, valid)
    out: np.ndarray = np.where(bad, np.nan, r)
    return out


def _rank_rows(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share the mean rank) within each group's valid cells, as
    ``scipy.stats.rankdata``; padding sorts last and gets ranks nobody reads."""
    xs = np.where(valid, x, np.inf)
    if xs.shape[-1] <= _SMALL_RANK and not np.isnan(xs).any():  # NaN: sorted last, one rank each
        return _rank_rows_small(xs)
    order = np.argsort(xs, axis=-1, kind="stable")
    s = np.take_along_axis(xs, order, axis=-1)
    width = s.shape[-1]
    idx = np.broadcast_to(np.arange(width), s.shape)
    first = np.ones(s.shape, dtype=bool)
    first[..., 1:] = s[..., 1:] != s[..., :-1]
    last = np.ones(s.shape, dtype=bool)
    last[..., :-1] = first[..., 1:]
    start = np.maximum.accumulate(np.where(first, idx, 0), axis=-1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, idx, width), axis=-1), axis=-1), axis=-1)
    ranks = np.empty(s.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, (start + end) / 2 + 1, axis=-1)
    return ranks


def _rank_rows_small(xs: np.ndarray) -> np.ndarray:
    """:func:`_rank_rows` of narrow groups by counting, not sorting: a cell's average rank is the
    cells below it plus half of (the cells equal to it, itself included, plus one), which is
    rankdata's ``(first + last) / 2 + 1`` to the bit (small integers and halves). One ``argsort``
    per row of a permutation batch costs more than the ``width ** 2`` comparisons of an int8
    broadcast up to about 32 cells (SummEval's 16 systems per document, 1,000 permutations: 0.53 s
    of CPU sorting, 0.23 s counting)."""
    width = xs.shape[-1]
    flat = xs.reshape(-1, width)
    out = np.empty(flat.shape, dtype=np.float64)
    step = max(1, _PAIR_CELLS // max(1, width * width))
    for start in range(0, flat.shape[0], step):
        block = flat[start:start + step]
        below, cell = block[:, None, :], block[:, :, None]
        lower = (below < cell).view(np.int8).sum(axis=-1, dtype=np.int16)
        up_to = (below <= cell).view(np.int8).sum(axis=-1, dtype=np.int16)
        out[start:start + step] = (lower + up_to + 1) / 2
    ranks: np.ndarray = out.reshape(xs.shape)
    return ranks


def swap_ranks(a: np.ndarray, b: np.ndarray, valid: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
    """For two metrics' padded scores ``a`` and ``b`` (``groups x width``, no NaN, groups of up to
    :data:`_SMALL_RANK` cells), a function from swap masks (``(batch, groups, width)`` bools) to
    :func:`_rank_rows` of ``where(swap, a, b)``, equal to it to the bit; None where the groups are
    wider or a score is NaN. A permutation test (``PermutationSigDiff``) ranks each permuted vector
    again: here a cell's rank is read from four comparison tables per group built once (which
    cells of ``a`` and of ``b`` lie below or at each of ``a`` and ``b``), added up for the swap
    mask by one matrix product per table (counts of at most the width: exact in float64).
    SummEval (16 systems a document, 1,000 permutations): 0.34 s of CPU a compared pair counting
    every permuted vector's cells, 0.095 s from the tables (cProfile, this 2-core machine)."""
    if a.shape[-1] > _SMALL_RANK or np.isnan(a).any() or np.isnan(b).any():
        return None
    ok = valid[:, None, :]

    def table(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``[y_j < x_i] + [y_j <= x_i]`` over the valid ``j`` (``groups x i x j``)."""
        below, at = y[:, None, :] < x[:, :, None], y[:, None, :] <= x[:, :, None]
        out: np.ndarray = (below & ok).astype(np.float64) + (at & ok)
        return out

    aa, ab, ba, bb = table(a, a), table(a, b), table(b, a), table(b, b)
    # twice a cell's rank, less one, is sum_j s_j (T_xa - T_xb)[i, j] + sum_j T_xb[i, j], x its own value
    from_a, base_a = np.ascontiguousarray((aa - ab).transpose(0, 2, 1)), ab.sum(axis=-1)
    from_b, base_b = np.ascontiguousarray((ba - bb).transpose(0, 2, 1)), bb.sum(axis=-1)

    def ranks(swap: np.ndarray) -> np.ndarray:
        s = np.ascontiguousarray(swap.transpose(1, 0, 2), dtype=np.float64)  # groups x batch x width
        when_a = (s @ from_a).transpose(1, 0, 2) + base_a
        when_b = (s @ from_b).transpose(1, 0, 2) + base_b
        out: np.ndarray = np.ascontiguousarray((np.where(swap, when_a, when_b) + 1) / 2)
        return out

    return ranks


def _distinct_rows(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    s = np.sort(np.where(valid, x, np.inf), axis=-1)
    first = np.ones(s.shape, dtype=bool)
    first[..., 1:] = s[..., 1:] != s[..., :-1]
    out: np.ndarray = (first & np.isfinite(s)).sum(axis=-1)
    return out


def _run_ties(s: np.ndarray, same: np.ndarray) -> np.ndarray:
    """Tied pairs per row of a sorted matrix, ``same[..., k]`` saying cell ``k + 1`` equals cell
    ``k``: each cell of a run of ``c`` adds ``(c - 1) / 2``."""
    width = s.shape[-1]
    idx = np.broadcast_to(np.arange(width), s.shape)
    first = np.ones(s.shape, dtype=bool)
    first[..., 1:] = ~same
    last = np.ones(s.shape, dtype=bool)
    last[..., :-1] = ~same
    start = np.maximum.accumulate(np.where(first, idx, 0), axis=-1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, idx, width), axis=-1), axis=-1), axis=-1)
    out: np.ndarray = (end - start).sum(axis=-1) // 2
    return out


def _pair_counts_small(h: np.ndarray, m: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``(..., groups, 5)``: concordant, discordant, tied in the metric only, in the human score
    only, in both; each unordered within-group pair once. ``con - dis`` is half the sum of
    ``sign(dh) * sign(dm)`` over all ordered pairs (an int8 broadcast, padding NaN so that its
    signs are 0); the ties come from sorting each group."""
    shape = np.broadcast_shapes(h.shape, m.shape)
    hn = np.broadcast_to(np.where(valid, h, np.nan), shape).reshape(-1, *shape[-2:])
    mn = np.broadcast_to(np.where(valid, m, np.nan), shape).reshape(-1, *shape[-2:])
    width = shape[-1]
    s_total = np.zeros(hn.shape[:-1], dtype=np.int64)
    step = max(1, _PAIR_CELLS // max(1, hn.shape[1] * width * width))
    for b in range(0, hn.shape[0], step):
        hb, mb = hn[b:b + step, :, :, None], mn[b:b + step, :, :, None]
        ht, mt = np.swapaxes(hb, -1, -2), np.swapaxes(mb, -1, -2)
        sh = (hb > ht).view(np.int8) - (hb < ht).view(np.int8)
        sm = (mb > mt).view(np.int8) - (mb < mt).view(np.int8)
        s_total[b:b + step] = (sh * sm).sum(axis=(-2, -1), dtype=np.int64)
    hs, ms = np.sort(hn, axis=-1), np.sort(mn, axis=-1)
    htie = _run_ties(hs, hs[..., 1:] == hs[..., :-1])
    mtie = _run_ties(ms, ms[..., 1:] == ms[..., :-1])
    order = np.lexsort((mn, hn), axis=-1)
    hj, mj = np.take_along_axis(hn, order, axis=-1), np.take_along_axis(mn, order, axis=-1)
    both = _run_ties(hj, (hj[..., 1:] == hj[..., :-1]) & (mj[..., 1:] == mj[..., :-1]))
    n = np.broadcast_to(valid.sum(axis=-1), hn.shape[:-1])
    tot = n * (n - 1) // 2
    con_plus_dis = tot - htie - mtie + both
    s_half = s_total // 2
    out = np.stack([(con_plus_dis + s_half) // 2, (con_plus_dis - s_half) // 2, mtie - both, htie - both, both],
                   axis=-1)
    return out.reshape(*shape[:-1], 5)


def _inversions(r: np.ndarray) -> int:
    """Pairs ``i < j`` with ``r[i] > r[j]`` (``r``: non-negative integers), by a bottom-up merge:
    at each width every right-block element counts the larger ones of its left block with one
    ``searchsorted`` over all blocks at once (keys offset by block)."""
    n = r.size
    a = r.astype(np.int64)
    span = int(a.max()) + 1 if n else 1
    idx = np.arange(n)
    total, width = 0, 1
    while width < n:
        block = idx // (2 * width)
        right = (idx // width) % 2 == 1
        keys = block * span + a
        left = keys[~right]
        below = np.searchsorted(left, keys[right], side="right")
        end = np.searchsorted(left, block[right] * span + span, side="left")
        total += int((end - below).sum())
        a = np.sort(keys) - block * span
        width *= 2
    return total


def kendall_counts(h: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The five pair counts of one group (any size), in ``O(n log^2 n)``: rows sorted by the
    metric then the human score, the discordant pairs are the inversions of the human ranks
    (as SciPy's ``kendalltau`` and mt-metrics-eval's ``_FenwickTreeSufficientStatistics``)."""
    n = h.size
    order = np.lexsort((h, m))
    _, ranks = np.unique(h[order], return_inverse=True)
    dis = _inversions(ranks.reshape(-1))
    mtie, htie = tied_pairs(m), tied_pairs(h)
    both = tied_pairs(np.column_stack((m, h)))
    tot = n * (n - 1) // 2
    con = tot - dis - mtie - htie + both
    return np.array([con, dis, mtie - both, htie - both, both], dtype=np.int64)


def _from_counts(stat: str, counts: np.ndarray, distinct: np.ndarray | None, n: np.ndarray) -> np.ndarray:
    con, dis, tm, th, both = (counts[..., i].astype(np.float64) for i in range(5))
    tot = con + dis + tm + th + both
    with np.errstate(invalid="ignore", divide="ignore"):
        if stat == "acc23":
            out = (con + both) / tot
        elif stat == "kendall_23":
            out = (con + both - dis - tm - th) / tot
        else:
            mtie, htie = tm + both, th + both
            undefined = (tot == 0) | (mtie == tot) | (htie == tot)
            if stat == "kendall":
                tau = (con - dis) / np.sqrt(tot - mtie) / np.sqrt(tot - htie)
            else:
                assert distinct is not None
                tau = 2 * (con - dis) / (n.astype(np.float64) ** 2 * (distinct - 1) / distinct)
            out = np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0))
    result: np.ndarray = np.where(tot == 0, np.nan, out)
    return result


def group_values(stat: str, h: np.ndarray, m: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The value of ``stat`` in each group: ``h`` (``groups x width``) against each metric matrix
    ``m`` (``(..., groups, width)``; batches broadcast); NaN where undefined."""
    if stat == "pearson":
        return _pearson_rows(h, m, valid)
    if stat == "spearman":
        return _pearson_rows(_rank_rows(h, valid), _rank_rows(m, valid), valid)
    if stat in _PAIR_VARIANTS:
        n = valid.sum(axis=-1)
        shape = np.broadcast_shapes(h.shape, m.shape)
        if valid.shape[-1] <= _SMALL:
            counts = _pair_counts_small(h, m, valid)
        else:
            hb, mb = np.broadcast_to(h, shape), np.broadcast_to(m, shape)
            counts = np.zeros(shape[:-1] + (5,), dtype=np.int64)
            for index in np.ndindex(shape[:-1]):
                row = valid[index[-1]]
                counts[index] = kendall_counts(hb[index][row], mb[index][row])
        distinct = None
        if stat == "kendall_c":
            distinct = np.minimum(_distinct_rows(np.broadcast_to(h, shape), valid),
                                  _distinct_rows(np.broadcast_to(m, shape), valid))
        return _from_counts(stat, counts, distinct, n)
    raise ValueError(f"statistic {stat!r} has no per-group form")


# -- pdp: Pairwise Difference Pearson ------------------------------------------------------------

def pdp_parts(h: np.ndarray, m: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per group ``(n S_hm, n S_hh, n S_mm)`` (last axis), whose sums over groups give the pooled
    pairwise-difference Pearson (see the module docstring)."""
    n = valid.sum(axis=-1)
    dh, dm = _centred(h, valid, n), _centred(m, valid, n)
    dh, dm = np.broadcast_arrays(dh, dm)
    parts = np.stack([(dh * dm).sum(axis=-1), (dh * dh).sum(axis=-1), (dm * dm).sum(axis=-1)], axis=-1)
    out: np.ndarray = np.where((n >= 2)[..., None], parts * n[..., None], 0.0)
    return out


def pdp_value(parts: np.ndarray) -> np.ndarray:
    """The pooled value from summed parts (last axis: the three sums); NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = parts[..., 0] / np.sqrt(parts[..., 1] * parts[..., 2])
    out: np.ndarray = np.where((parts[..., 1] > 0) & (parts[..., 2] > 0), np.clip(r, -1.0, 1.0), np.nan)
    return out


# -- acc_eq: tie-calibrated pairwise accuracy ---------------------------------------------------

@dataclass(frozen=True)
class AccEqPairs:
    """Every within-group pair of one metric against people, ordered for the threshold sweep."""

    group: np.ndarray  # group of each pair (indices into the groups that have pairs)
    gap: np.ndarray  # |metric difference|, ascending
    before: np.ndarray  # 1 where the pair counts as agreement untied (sign(dh) == sign(dm))
    after: np.ndarray  # 1 where it counts once tied by the threshold (dh == 0)
    pairs_per_group: np.ndarray  # pairs in each group with pairs
    groups: np.ndarray  # index (into the layout's groups) of each group with pairs
    order: np.ndarray  # position of each (sorted) pair in the enumeration order (group by group)


def acc_eq_pairs(h: np.ndarray, m: np.ndarray, valid: np.ndarray, max_pairs: int = 50_000_000) -> AccEqPairs:
    """All unordered within-group pairs of the padded ``h``, ``m`` (one metric), sorted by the
    metric's absolute difference (stable, as ``tau_optimization`` sorts them)."""
    n = valid.sum(axis=-1)
    per_group = n * (n - 1) // 2
    if int(per_group.sum()) > max_pairs:
        raise ValueError(f"statistic 'acc_eq': {int(per_group.sum())} within-group pairs exceed {max_pairs}; "
                         "group by item or system (WMT's acc_eq groups by item)")
    groups, gap, before, after = [], [], [], []
    width = valid.shape[-1]
    step = max(1, _PAIR_CELLS // max(1, width * width))
    iu, ju = np.triu_indices(width, 1)
    for start in range(0, valid.shape[0], step):
        sl = slice(start, start + step)
        hv, mv, vv = h[sl], m[sl], valid[sl]
        keep = vv[:, iu] & vv[:, ju]
        g = np.broadcast_to(np.arange(start, start + hv.shape[0])[:, None], keep.shape)[keep]
        dh = (hv[:, iu] - hv[:, ju])[keep]
        dm = (mv[:, iu] - mv[:, ju])[keep]
        groups.append(g)
        gap.append(np.abs(dm))
        before.append(np.sign(dh) == np.sign(dm))
        after.append(dh == 0)
    g_all = np.concatenate(groups) if groups else np.zeros(0, np.int64)
    gap_all = np.concatenate(gap) if gap else np.zeros(0)
    order = np.argsort(gap_all, kind="stable")
    used = np.flatnonzero(per_group > 0)
    remap = np.full(valid.shape[0], -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    return AccEqPairs(remap[g_all[order]], gap_all[order],
                      (np.concatenate(before) if before else np.zeros(0, bool))[order].astype(np.int64),
                      (np.concatenate(after) if after else np.zeros(0, bool))[order].astype(np.int64),
                      per_group[used].astype(np.int64), used, order)


def acc_eq_sweep(pairs: AccEqPairs, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(value, threshold)`` of acc_eq: the mean over groups (weighted by ``weights``, one row of
    group weights per resample; None: each group once) of the groups' acc23 at the threshold
    that maximises it; every metric difference is a candidate, and 0. NaN where no group has a
    pair.

    The sums are integers: each group's pairs count ``L / pairs_g`` with ``L`` the least common
    multiple of the groups' pair counts, so exact ties between thresholds stay ties (the smallest
    wins) and a resample is an integer gather, product and cumulative sum over the pairs whose
    tie changes the verdict (``numpy.take`` on int64: a resample of 100,000 such pairs takes
    about a millisecond)."""
    n_groups = pairs.pairs_per_group.size
    w = np.ones((1, n_groups)) if weights is None else np.atleast_2d(weights)
    if n_groups == 0 or pairs.gap.size == 0:
        return np.full(w.shape[0], np.nan), np.zeros(w.shape[0])
    change = pairs.after - pairs.before  # -1, 0 or 1 when the pair is tied
    ends = np.flatnonzero(np.r_[pairs.gap[1:] != pairs.gap[:-1], True])
    thresholds = np.r_[0.0, pairs.gap[ends]]
    moving = np.flatnonzero(change)  # pairs whose tie changes the accuracy
    upto = np.searchsorted(moving, ends, side="right")  # moving pairs up to each candidate
    # a candidate that ties no further moving pair scores as the one before it and never wins
    # (the first maximum does): keep the first candidate of each new count, threshold 0 first
    keep = (upto > 0) & np.r_[True, upto[1:] != upto[:-1]]
    thresholds, upto = np.r_[0.0, thresholds[1:][keep]], upto[keep]
    lcm = 1
    for size in np.unique(pairs.pairs_per_group).tolist():
        lcm = math.lcm(lcm, int(size))
        if lcm > 1 << 62:
            break
    counts = np.rint(w).astype(np.int64)
    # every partial sum is at most lcm * (the resample's groups): int64 holds it below 2^62
    bound = lcm * max(1, int(counts.sum(axis=1).max()))
    if np.array_equal(counts, w) and bound < 1 << 62:
        kind = np.int32 if bound < 1 << 31 else np.int64  # half the memory traffic where it fits
        unit = lcm // pairs.pairs_per_group
        step_moving = (change[moving] * unit[pairs.group[moving]]).astype(kind)
        base = np.bincount(pairs.group, weights=pairs.before, minlength=n_groups).astype(np.int64) * unit
        values = np.empty(w.shape[0])
        best = np.empty(w.shape[0])
        step = max(1, _PAIR_CELLS // max(1, moving.size))
        gidx = pairs.group[moving]
        wide = counts.astype(kind)
        # where no two moving pairs share a candidate, the candidates are the cumulative sums themselves
        direct = upto.size == moving.size  # then upto is 1, 2, ..., moving.size
        for start in range(0, w.shape[0], step):
            wb = counts[start:start + step]
            if direct:
                at = np.zeros((wb.shape[0], moving.size + 1), dtype=kind)
                np.take(wide[start:start + step], gidx, axis=1, out=at[:, 1:])
                at[:, 1:] *= step_moving
                np.cumsum(at[:, 1:], axis=1, out=at[:, 1:])
            else:
                cum = np.take(wide[start:start + step], gidx, axis=1)
                cum *= step_moving
                np.cumsum(cum, axis=1, out=cum)
                at = np.zeros((wb.shape[0], upto.size + 1), dtype=kind)
                np.take(cum, upto - 1, axis=1, out=at[:, 1:])
            i = np.argmax(at, axis=1)
            totals = at[np.arange(wb.shape[0]), i].astype(np.int64) + wb @ base
            with np.errstate(invalid="ignore", divide="ignore"):
                values[start:start + step] = totals / (lcm * wb.sum(axis=1))
            best[start:start + step] = thresholds[i]
        return values, best
    # weights that are not counts, or sums past int64's comfort: floats
    delta = change[moving] / pairs.pairs_per_group[pairs.group[moving]]
    fbase = np.bincount(pairs.group, weights=pairs.before, minlength=n_groups) / pairs.pairs_per_group
    values = np.empty(w.shape[0])
    best = np.empty(w.shape[0])
    step = max(1, _PAIR_CELLS // max(1, moving.size))
    for start in range(0, w.shape[0], step):
        wf = w[start:start + step]
        fcum = np.zeros((wf.shape[0], moving.size + 1))
        np.cumsum(np.take(wf, pairs.group[moving], axis=1) * delta, axis=1, out=fcum[:, 1:])
        ftotals = np.concatenate([np.zeros((wf.shape[0], 1)), fcum[:, upto]], axis=1)  # upto >= 1 here
        i = np.argmax(ftotals, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            values[start:start + step] = (ftotals[np.arange(wf.shape[0]), i] + wf @ fbase) / wf.sum(axis=1)
        best[start:start + step] = thresholds[i]
    return values, best


# -- system level: spa and pairwise accuracy ----------------------------------------------------

def spa_signs(n_items: int, n_permutations: int, seed: int | None) -> np.ndarray:
    """The +-1 float32 signs ``pce.compute_pairwise_p_values`` draws (same generator, same
    operations), ``n_permutations x n_items``."""
    rng = np.random.default_rng(seed)
    signs = rng.random(size=(n_permutations, n_items), dtype=np.float32)
    np.rint(signs, out=signs, casting="same_kind")
    signs *= 2.0
    signs -= 1.0
    return signs


def p_values(matrices: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Per matrix (``(..., systems, items)``) the upper-triangle p-values of ``pce``, as
    ``(..., pairs)`` (float64 counts / permutations), with its float32 arithmetic: its product
    (BLAS, as pce), its sums, and its ``null >= observed`` rule counted by the compiled core
    (``pair_counts``: the same float32 subtraction and comparison, without NumPy's pair arrays)."""
    # C order as pce's own copy: a float32 sum's rounding depends on the memory order, and
    # pce's ties (null == observed) on that rounding
    x = np.ascontiguousarray(matrices, dtype=np.float32)
    lead, (n_sys, n_items) = x.shape[:-2], x.shape[-2:]
    flat = x.reshape(-1, n_sys, n_items)
    sums = flat.sum(axis=-1)  # float32, as pce's np.sum
    test = sums[:, :, None] - sums[:, None, :]
    iu, ju = np.triu_indices(n_sys, 1)
    out = np.empty((flat.shape[0], iu.size))
    step = max(1, _PAIR_CELLS // max(1, signs.shape[0] * n_sys))
    for start in range(0, flat.shape[0], step):
        block = flat[start:start + step]
        partial = np.matmul(signs, block.reshape(-1, n_items).T)  # (permutations, matrices * systems)
        counts = pair_counts(np.ascontiguousarray(partial.T), test[start:start + step], block.shape[0], n_sys)
        out[start:start + step] = counts[:, iu, ju] / signs.shape[0]
    return out.reshape(*lead, iu.size)


def spa_values(human: np.ndarray, metrics: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Soft pairwise accuracy (``1 - PCE``) of each metric matrix (``(..., systems, items)``)
    against the human matrix (``(systems, items)`` or batched alike), systems in the given
    order."""
    ph, pm = p_values(human, signs), p_values(metrics, signs)
    out: np.ndarray = 1.0 - np.abs(ph - pm).mean(axis=-1)
    return out


def spa_resampled(human: np.ndarray, metrics: np.ndarray, signs: np.ndarray, n_resamples: int,
                  seed: int | None) -> np.ndarray:
    """Soft pairwise accuracy of each metric matrix (``(metrics, systems, items)``) against the
    human matrix (``(systems, items)``) on ``n_resamples`` resamples of the items, as
    ``(metrics, n_resamples)``: resample r takes the columns of row r of
    ``default_rng(seed).integers(0, items, (n_resamples, items))`` (drawn 8 rows at a time), and
    on them the value that :func:`spa_values` gives, the permutations' signs ``signs`` applied to
    the resampled columns in order, as pce would apply its own.

    The signed sums are the compiled core's (``_native/perm.hpp``: a table of the 64 signed sums
    per block of 6 items: a sixth of the additions of the float32 product and no
    multiplications, and the counting in the same pass; 3.8 ms per resample here where BLAS's
    product alone takes 5.5 ms, see ``perm.hpp`` and ``benchmarks/bench_meta.py``), each row's
    added in one fixed order: not pce's bits, which an interval does not need, but every
    resample's counts those of pce's rule (``null >= observed``) on float32 sums, exact ties
    (equal rows) included."""
    n_sys, n_items = human.shape
    stacked = np.concatenate([human[None], metrics]).reshape(-1, n_items)
    xt = np.ascontiguousarray(stacked.T, dtype=np.float32)  # item by item: one resample's column is a row
    width = PERM_BITS  # items per block of the kernel's tables
    blocks = (n_items + width - 1) // width
    bits = np.zeros((signs.shape[0], width * blocks), dtype=np.uint8)
    bits[:, :n_items] = signs > 0
    codes = (bits.reshape(signs.shape[0], blocks, width) << np.arange(width, dtype=np.uint8)).sum(
        axis=-1, dtype=np.uint8)  # bit k: the sign of the block's item k
    iu, ju = np.triu_indices(n_sys, 1)
    out = np.empty((metrics.shape[0], n_resamples))
    rng = np.random.default_rng(seed)
    r = 0
    for start in range(0, n_resamples, 8):
        for idx in rng.integers(0, n_items, size=(min(8, n_resamples - start), n_items)):
            counts = perm_counts(xt, idx, codes, metrics.shape[0] + 1, n_sys)[:, iu, ju] / signs.shape[0]
            for k in range(metrics.shape[0]):  # one 1-D mean each: pce's summation order, to the bit
                out[k, r] = 1.0 - np.abs(counts[0] - counts[k + 1]).mean()
            r += 1
    return out


def pairwise_accuracy(h: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Share of system pairs whose order (sign of the difference, ties included) the metric and
    people agree on; last axis: systems. NaN with fewer than two systems."""
    n = h.shape[-1]
    if n < 2:
        return np.full(np.broadcast_shapes(h.shape, m.shape)[:-1], np.nan)
    iu, ju = np.triu_indices(n, 1)
    agree = np.sign(h[..., iu] - h[..., ju]) == np.sign(m[..., iu] - m[..., ju])
    out: np.ndarray = agree.mean(axis=-1)
    return out


# -- partial correlation, labels, Williams -------------------------------------------------------

def system_residuals(values: np.ndarray, systems: np.ndarray) -> np.ndarray:
    """Each value minus its system's mean, the mean as ``math.fsum`` / count."""
    out = np.empty_like(values, dtype=np.float64)
    for code in np.unique(systems):
        rows = systems == code
        chunk = values[rows]
        out[rows] = chunk - math.fsum(chunk.tolist()) / chunk.size
    return out


def label_value(stat: str, human: Sequence[Any], metric: Sequence[Any]) -> float:
    """``accuracy`` or ``kappa`` of one group of labels; NaN where undefined."""
    if len(human) < 1:
        return math.nan
    if stat == "accuracy":
        return float(sum(bool(a == b) for a, b in zip(human, metric, strict=True))) / len(human)
    kappa = cohen_kappa(list(metric), list(human))
    return math.nan if kappa is None else kappa


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """Student's t survival function ``P(T > t)``, as ``scipy.stats.t.sf`` (to ~1e-14)."""
    if math.isnan(t):
        return math.nan
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t)) if math.isfinite(t) else 0.0
    return tail if t >= 0 else 1.0 - tail


def williams_test(r12: float, r13: float, r23: float, n: int, one_sided: bool = True) -> float:
    """Williams' test p-value that ``r12`` (metric 1 with people) and ``r13`` (metric 2 with
    people) differ, given ``r23`` (the two metrics with each other) on ``n`` rows: mt-metrics-eval's
    ``WilliamsTest`` (Graham and Baldwin 2014)."""
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r23 * r13
    rbar = (r12 + r13) / 2
    tnum = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    tden = math.sqrt(2 * (n - 1) / (n - 3) * k + rbar ** 2 * (1 - r23) ** 3)
    p = t_sf(abs(tnum / tden), n - 3)
    return p if one_sided else 2 * p
