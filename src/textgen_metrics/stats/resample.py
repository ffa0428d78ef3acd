"""Resampling for meta-evaluation: bootstrap intervals over items and the paired permutation
test between two metrics.

- Bootstrap: resample ``r`` draws the items of row ``r`` of
  ``numpy.random.default_rng(seed).integers(0, items, size=(n_resamples, items))`` (drawn in
  chunks of rows, the same chunks every call), every row of a drawn item going with it; the
  interval is the percentile interval of the statistic over the resamples on which it is
  defined (``numpy.quantile``, linear interpolation). Callers turn the counts into weights
  wherever the statistic is a (weighted) mean of per-item parts, so most resamples cost one
  matrix product.
- Permutation test: mt-metrics-eval's ``stats.PermutationSigDiff``: both metrics z-scored
  (``scipy.stats.zscore``) on the rows both scored, and on each of ``k`` draws each row takes the
  other metric's score where ``numpy.random.RandomState(seed).binomial(1, 0.5, rows)`` says 1
  (draw ``i`` is row ``i`` of one ``(k, rows)`` draw, the same stream as ``k`` calls after
  ``numpy.random.seed(seed)``); the one-sided p-value is the share of draws whose difference is
  at least the observed one. mt-metrics-eval draws afresh for every pair of metrics; here the
  draws of a given row count are made once and shared by every pair with that many rows (each
  pair's test is the same as mt-metrics-eval's with that seed). Its early stop (a p-value
  outside [0.02, 0.5] after a block of 1,000) is not copied: every draw is used.
- The pairs test of ``acc_eq`` (mt-metrics-eval's ``PairwisePermutationSigDiff``, WMT23-25's
  ``perm_test="pairs"``): each metric's threshold fixed at its own optimum, each within-group
  pair's verdict (agrees with people or not) taken from one metric or the other at random, with
  ``+-1`` signs shared by all metric pairs, so all pairs cost one matrix product.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["check_interval", "item_counts", "interval", "permutation_draws", "zscore", "permutation_p",
           "pairs_p_values"]

_MAX_CELLS = 1 << 22  # resamples x items (or draws x rows) held at once


def check_interval(confidence_level: Any, n_resamples: Any, seed: Any) -> None:
    """The one check of an interval's arguments in the statistics (meta-evaluation, agreement,
    audits), naming the argument: a level strictly between 0 and 1, a whole number of resamples
    (0: the value without an interval), a seed that is a non-negative integer or None (fresh
    randomness)."""
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float)) \
            or not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level: {confidence_level!r} must lie strictly between 0 and 1")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise ValueError(f"n_resamples: {n_resamples!r} must be a non-negative integer (0: no intervals)")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"seed: expected an integer or None, got {type(seed).__name__}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed: {seed!r} must be a non-negative integer or None")


def item_counts(n_items: int, n_resamples: int, seed: int | None) -> Iterator[np.ndarray]:
    """Chunks of rows of item counts (``resamples x items``, float64), one seeded stream."""
    rng = np.random.default_rng(seed)
    rows = max(1, _MAX_CELLS // max(n_items, 1))
    for start in range(0, n_resamples, rows):
        count = min(rows, n_resamples - start)
        idx = rng.integers(0, n_items, size=(count, n_items))
        offsets = (np.arange(count) * n_items)[:, None]
        yield np.bincount((idx + offsets).ravel(), minlength=count * n_items).reshape(count, n_items).astype(
            np.float64)


def interval(values: np.ndarray, confidence_level: float) -> list[float] | None:
    """The percentile interval of the defined (non-NaN) values; None when none is defined."""
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return [float(low), float(high)]


def permutation_draws(k: int, rows: int, seed: int | None) -> Iterator[np.ndarray]:
    """Chunks of boolean swap masks (``draws x rows``), the stream ``PermutationSigDiff`` uses
    after ``numpy.random.seed(seed)``."""
    state = np.random.RandomState(seed)
    step = max(1, _MAX_CELLS // max(rows, 1))
    for start in range(0, k, step):
        yield state.binomial(1, 0.5, size=(min(step, k - start), rows)).astype(bool)


def zscore(x: np.ndarray) -> np.ndarray:
    """``scipy.stats.zscore(x)`` (population standard deviation)."""
    out: np.ndarray = (x - x.mean()) / x.std()
    return out


def permutation_p(statistic: Callable[[np.ndarray], np.ndarray], high: np.ndarray, low: np.ndarray,
                  draws: Callable[[], Iterator[np.ndarray]], transform: bool = True,
                  swapped: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None) -> float:
    """One-sided p-value that the metric ``high`` beats ``low`` (same rows): ``statistic`` maps a
    batch of score vectors (``batch x rows``) to their values (undefined: 0, as
    ``PermutationSigDiff``'s average of nothing); ``draws`` yields the swap masks. ``swapped``, where
    given, maps a batch of swap masks straight to the values of the two permuted vectors (``m2``,
    ``m1`` below), equal to ``statistic``'s on them, for a statistic that needs no permuted vector."""
    a, b = (zscore(high), zscore(low)) if transform else (high, low)
    observed = statistic(np.stack([a, b]))
    delta = observed[0] - observed[1]
    count = total = 0
    for swap in draws():
        # PermutationSigDiff: m1 = w*low + (1-w)*high, m2 = w*high + (1-w)*low; count c2 - c1 >= delta
        half = swap.shape[0]
        if swapped is None:
            values = statistic(np.concatenate([np.where(swap, a, b), np.where(swap, b, a)]))
            v2, v1 = values[:half], values[half:]
        else:
            v2, v1 = swapped(swap)
        count += int(((v2 - v1) >= delta).sum())
        total += half
    return count / total if total else float("nan")


def pairs_p_values(verdicts: np.ndarray, units: np.ndarray, pairs: list[tuple[int, int]], k: int,
                   seed: int | None) -> list[float]:
    """The pairs test for acc_eq: ``verdicts`` (``metrics x pairs``, 0/1 at each metric's own
    threshold) and ``units`` (per pair: an integer proportional to 1 / pairs of its group, so
    that a metric's acc_eq is proportional to ``verdicts @ units``); for each ``(high, low)`` the
    share of ``k`` sign draws whose signed difference is at least the observed one. Signs:
    ``numpy.random.default_rng(seed)``'s bits, one row per draw, shared by all metric pairs. The
    product runs in float32, exact while every sum stays below 2^24 (float64 otherwise)."""
    weighted = verdicts * units  # metrics x pairs, integers
    observed = weighted.sum(axis=1)
    kind = np.float32 if np.abs(weighted).sum(axis=1).max(initial=0) < 1 << 24 else np.float64
    weighted_k = weighted.astype(kind).T.copy()
    rng = np.random.default_rng(seed)
    n_pairs = verdicts.shape[1]
    step = max(1, _MAX_CELLS // max(n_pairs, 1))
    counts = np.zeros(len(pairs), dtype=np.int64)
    for start in range(0, k, step):
        rows = min(step, k - start)
        bits = np.unpackbits(rng.integers(0, 256, size=(rows, (n_pairs + 7) // 8), dtype=np.uint8), axis=1,
                             count=n_pairs)
        # signs s = 2 bits - 1, so s @ w = 2 (bits @ w) - sum(w)
        sums = 2 * (bits.astype(kind) @ weighted_k).astype(np.float64) - observed
        for i, (hi, lo) in enumerate(pairs):
            counts[i] += int((sums[:, hi] - sums[:, lo] >= observed[hi] - observed[lo]).sum())
    return [float(c) / k for c in counts]
