"""The statistics of a quality gate and of a regression test (:mod:`textgen_metrics.gates`), over
items (rows).

The item is the unit: a judge's repeats on one item are averaged into the item's score before
anything is resampled (pooling them as independent items would turn 4 wins into 12). The
interval of a mean is the package's percentile bootstrap
(:func:`textgen_metrics.significance.percentile_interval`, the interval every mean result
carries); what the package has no public function for is here: the error spent over the looks of
adaptive repeats, the paired sign-flip permutation test, Holm's step-down adjustment and the
minimum detectable drop.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np

__all__ = ["item_means", "look_level", "verdict", "sign_flip_p", "holm", "mde", "POWER"]

POWER = 0.8  # the power the minimum detectable drop is stated at


def item_means(rows: Sequence[Sequence[float | None]]) -> list[float | None]:
    """Each item's mean over its scored repeats (None: no repeat of it was scored)."""
    out: list[float | None] = []
    for row in rows:
        kept = [float(v) for v in row if v is not None]
        out.append(math.fsum(kept) / len(kept) if kept else None)
    return out


def look_level(confidence_level: float, looks: int) -> float:
    """The interval's level at each of ``looks`` looks, the error spent evenly over them
    (Bonferroni): whichever look the verdict is taken at, the chance that any look's interval
    misses the true mean stays within ``1 - confidence_level``, so stopping at the first
    decided look keeps the stated error rates."""
    return 1.0 - (1.0 - confidence_level) / looks


def verdict(low: float | None, high: float | None, threshold: float, lower_is_better: bool) -> str:
    """pass / fail / inconclusive of an interval against a floor (or, lower is better, a ceiling)."""
    if low is None or high is None:
        return "inconclusive"
    if lower_is_better:
        return "pass" if high <= threshold else "fail" if low > threshold else "inconclusive"
    return "pass" if low >= threshold else "fail" if high < threshold else "inconclusive"


def sign_flip_p(differences: Sequence[float], shift: float, n_permutations: int, seed: int | None) -> float:
    """The one-sided paired permutation p-value of ``mean(differences) < shift`` (a drop below
    ``-margin``): the signs of ``differences - shift`` flipped at random, ``(1 + hits) / (1 +
    n_permutations)`` where a hit is a flipped mean at or below the observed one."""
    d = np.asarray(differences, dtype=np.float64) - shift
    if d.size == 0:
        return 1.0
    observed = d.mean()
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_permutations, 2000):  # chunks: memory stays small for long tables
        size = min(2000, n_permutations - start)
        signs = rng.integers(0, 2, size=(size, d.size), dtype=np.int8) * 2 - 1
        flipped = (signs * d).mean(axis=1)
        hits += int(np.count_nonzero(flipped <= observed + 1e-12))
    return (1 + hits) / (1 + n_permutations)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error over every metric and key)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def mde(sd: float, n: int, alpha: float, tests: int = 1, power: float = POWER) -> float:
    """The smallest mean drop a one-sided test at ``alpha / tests`` (Holm's first step) finds
    with ``power`` at paired-difference spread ``sd`` over ``n`` items (normal approximation)."""
    if n < 1:
        return math.inf
    normal = statistics.NormalDist()
    return (normal.inv_cdf(1 - alpha / tests) + normal.inv_cdf(power)) * sd / math.sqrt(n)
