"""Aggregation of per-example scores: exact means and seeded bootstrap intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .significance import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, percentile_interval

__all__ = ["mean", "bootstrap_interval", "RunningMean"]


def mean(values: Iterable[float | None]) -> float | None:
    """Correctly rounded mean (``math.fsum``) of the non-None values; None when there are none:
    the package's one exact mean (every mean metric's aggregate, ROUGE's, the reports')."""
    vals = list(values)
    if None in vals:
        vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return math.fsum(vals) / len(vals)  # type: ignore[arg-type]  # (the Nones are gone)


class RunningMean:
    """Mean of a stream in O(1) memory, as exact as ``mean`` (fsum's partials)."""

    __slots__ = ("_partials", "count")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self.count = 0

    def add(self, x: float) -> None:
        # Shewchuk's algorithm, as math.fsum, kept incremental.
        partials = self._partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]
        self.count += 1

    @property
    def value(self) -> float | None:
        if not self.count:
            return None
        return math.fsum(self._partials) / self.count


def bootstrap_interval(values: Iterable[float | None], samples: int = DEFAULT_RESAMPLES,
                       confidence_level: float = DEFAULT_CONFIDENCE, seed: int | None = DEFAULT_SEED
                       ) -> tuple[float, float] | tuple[None, None]:
    """Percentile bootstrap interval of the mean: ``(low, high)``; deterministic for a seed.

    The package's one bootstrap (:func:`textgen_metrics.significance.percentile_interval`, the
    resamples and order statistics of every other interval), with its checks named as ROUGE's
    ``bootstrap_samples``.
    """
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level: {confidence_level!r} must lie strictly between 0 and 1")
    if int(samples) < 1:
        raise ValueError(f"bootstrap_samples: {samples!r} must be a positive integer")
    return percentile_interval(list(values), confidence_level, int(samples), seed)
