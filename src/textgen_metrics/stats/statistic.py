"""The meta-evaluation statistics as objects: each :class:`Statistic` declares what it is (its
name, its line of text, the levels it applies at, whether it compares labels, counts pairs with
their ties, calibrates a tie threshold or has a permutation count of its own, and what a constant
metric scores on it) and carries its computation: its value on a table's rows, on bootstrap
resamples of them, on batches of swapped metric vectors for the permutation test, and over
systems. :func:`textgen_metrics.meta.evaluate.meta_evaluate` asks the object, as mt-metrics-eval's
``tasks.Task`` declares a statistic and its ``Correlation`` object computes it; a new statistic
is one declaration here, not a branch in each of the evaluator's steps.

The families (one class each, a few hooks over the base's defaults):

- :class:`GroupStatistic`: a value per group from :func:`textgen_metrics.stats.agreement.group_values`
  (the name is its variant there, as mt-metrics-eval's ``KendallVariants(variant=...)``), the mean
  over groups; :class:`PairCount` the Kendall variants and ``acc23``, :class:`Correlation`
  Pearson and Spearman (SciPy's one-vector form on one group, Pearson's bootstrap from moments,
  and Pearson's comparisons of many metrics at once);
- :class:`Pdp`, :class:`AccEq` (tie-calibrated, with its threshold and the pairs test),
  :class:`Spa` (its own permutations, over the systems x items matrix),
  :class:`PairwiseAccuracy`, :class:`Partial` (controlling for the system) and
  :class:`LabelAgreement` (accuracy, kappa).

Undefined values are NaN here; the evaluator turns them into None with a reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import agreement as stats
from . import resample
from .correlation import pearson as _pearson1
from .correlation import spearman as _spearman1

__all__ = ["Statistic", "GroupStatistic", "PairCount", "Correlation", "Pdp", "AccEq", "Spa", "PairwiseAccuracy",
           "Partial", "LabelAgreement", "STATISTICS", "Rows", "SystemMatrix", "system_matrix", "Draws"]

Draws = Callable[[int], Callable[[], Iterator[np.ndarray]]]  # rows -> the shared permutation draws
Point = dict[str, Any]  # value (NaN: undefined), n, groups, groups_skipped (+ threshold)


class Rows:
    """The rows one metric and one human column both have, with their item, system and group."""

    def __init__(self, h: Any, m: Any, item: np.ndarray, system: np.ndarray, group: np.ndarray) -> None:
        self.h, self.m, self.item, self.system, self.group = h, m, item, system, group

    def take(self, rows: np.ndarray) -> Rows:
        h = self.h[rows] if isinstance(self.h, np.ndarray) else [self.h[i] for i in rows]
        m = self.m[rows] if isinstance(self.m, np.ndarray) else [self.m[i] for i in rows]
        return Rows(h, m, self.item[rows], self.system[rows], self.group[rows])

    def with_metric(self, m: Any) -> Rows:
        return Rows(self.h, m, self.item, self.system, self.group)

    def restrict(self, mask: np.ndarray, common: np.ndarray) -> Rows:
        """These rows (the table's rows where ``mask``) cut to the table's rows where ``common``."""
        return self.take(np.flatnonzero(common[np.flatnonzero(mask)]))


@dataclass(frozen=True)
class SystemMatrix:
    """Human and metric ``systems x common items`` matrices, and the common items' codes."""

    human: np.ndarray
    metric: np.ndarray
    items: np.ndarray


def system_matrix(r: Rows, n_systems: int) -> SystemMatrix:
    """The matrices of the items on which every system has both scores (mt-metrics-eval takes
    complete matrices). Each cell is the mean of its rows (one row per cell in a well-formed
    table)."""
    items = np.unique(r.item)
    index = np.searchsorted(items, r.item)
    cells = np.zeros((n_systems, items.size))
    np.add.at(cells, (r.system, index), 1.0)
    common = (cells > 0).all(axis=0)
    hs, ms = np.zeros_like(cells), np.zeros_like(cells)
    np.add.at(hs, (r.system, index), r.h)
    np.add.at(ms, (r.system, index), r.m)
    with np.errstate(invalid="ignore", divide="ignore"):
        return SystemMatrix((hs / cells)[:, common], (ms / cells)[:, common], items[common])


def _mean_of_groups(vals: np.ndarray, sizes: np.ndarray) -> Point:
    defined = ~np.isnan(vals)
    value = float(vals[defined].mean()) if defined.any() else math.nan
    return {"value": value, "n": int(sizes[defined].sum()), "groups": int(defined.sum()),
            "groups_skipped": int((~defined).sum())}


def _first_rows(lay: stats.Layout) -> np.ndarray:
    """The first row (in the layout's order) of each group."""
    out: np.ndarray = lay.order[np.r_[0, np.cumsum(lay.sizes)[:-1]]]
    return out


def _flat(h: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Batches of system vectors (last axis: systems) broadcast and flattened to one matrix each."""
    shape = np.broadcast_shapes(h.shape, m.shape)
    return (np.broadcast_to(h, shape).reshape(-1, shape[-1]), np.broadcast_to(m, shape).reshape(-1, shape[-1]),
            shape)


def _grouped(variant: str, h: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``group_values`` over the systems of each vector of a batch, one group per vector."""
    hb, mb, shape = _flat(h, m)
    out: np.ndarray = stats.group_values(variant, hb, mb, np.ones(hb.shape, dtype=bool)).reshape(shape[:-1])
    return out


@dataclass(frozen=True)
class Statistic:
    """A meta-evaluation statistic declared once, as mt-metrics-eval's tasks declare theirs: its
    name, what it measures (the reports' and ``--help``'s line), the levels it applies at, whether
    it compares labels, whether it controls for the system itself (segment level, all rows
    pooled), whether it counts pairs (ties included), whether it calibrates a tie threshold
    (reported as ``threshold``), whether it has a permutation count of its own
    (``n_permutations``), and what a constant metric scores on it (its baseline, computed as
    :meth:`value_on` the constant's rows).

    The base class holds the computations every family shares: a resample or a permutation batch
    as the value on each (a family with a faster form overrides it), the system level on the
    systems' mean scores, and the generic permutation tests."""

    name: str
    text: str
    levels: tuple[str, ...] = ("segment", "system")
    labels: bool = False
    pooled_only: bool = False
    counts_pairs: bool = False
    thresholds: bool = False
    permutations: bool = False
    baseline: str = "undefined: a constant has no correlation"

    # -- segment level ----------------------------------------------------------------------

    def segment(self, r: Rows) -> Point:
        """The value on ``r``'s rows (NaN: undefined), with the rows and groups it used."""
        raise NotImplementedError(f"statistic {self.name!r} has no segment-level form")

    def segment_resampled(self, r: Rows, group_by: str, counts: np.ndarray) -> np.ndarray:
        """The value on each resample (``counts``: ``resamples x items`` of the table)."""
        out = np.empty(counts.shape[0])
        row_w = counts[:, r.item].astype(np.int64)
        base = np.arange(len(r.item))
        for i in range(counts.shape[0]):
            rows = np.repeat(base, row_w[i])
            out[i] = self.segment(r.take(rows))["value"] if rows.size else math.nan
        return out

    def segment_batch(self, r: Rows) -> Callable[[np.ndarray], np.ndarray]:
        """A function from a batch of metric vectors on ``r``'s rows to the value of each
        (undefined: 0, as ``PermutationSigDiff``)."""

        def run(batch: np.ndarray) -> np.ndarray:
            out = np.empty(batch.shape[0])
            for i in range(batch.shape[0]):
                v = self.segment(r.with_metric(batch[i]))["value"]
                out[i] = 0.0 if math.isnan(v) else v
            return out

        return run

    def segment_permutation(self, hi: Rows, lo: Rows, draws_for: Draws) -> float:
        """``PermutationSigDiff``'s one-sided p-value that ``hi``'s metric beats ``lo``'s (rows in
        group order, the same rows)."""
        return resample.permutation_p(self.segment_batch(hi), np.asarray(hi.m, dtype=np.float64),
                                      np.asarray(lo.m, dtype=np.float64), draws_for(len(hi.item)))

    def segment_pair_tests(self, named: list[str], rows_of: dict[str, Rows], masks: dict[str, np.ndarray], k: int,
                           seed: int | None) -> dict[tuple[str, str], float]:
        """p-values of (higher, lower) metric pairs this statistic tests all at once (the rest go
        through :meth:`segment_permutation` one pair at a time)."""
        return {}

    # -- system level -----------------------------------------------------------------------

    def over_systems(self, h: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The value for batches of system means (last axis: systems)."""
        return _grouped(self.name, h, m)

    def system_point(self, sm: SystemMatrix, n_permutations: int, seed: int | None,
                     cache: dict[bytes, list[np.ndarray]]) -> tuple[float, float | None]:
        """``(value, threshold)`` over the systems (the threshold None where there is none)."""
        return float(self.over_systems(sm.human.mean(axis=1), sm.metric.mean(axis=1))), None

    def system_resampled(self, sm: SystemMatrix, n_resamples: int, seed: int | None) -> np.ndarray:
        """The value on each resample of the common items."""
        boot = []
        for counts in resample.item_counts(sm.items.size, n_resamples, seed):
            total = counts.sum(axis=1, keepdims=True)
            boot.append(self.over_systems(counts @ sm.human.T / total, counts @ sm.metric.T / total))
        return np.concatenate(boot)

    def shared_resamples(self, rows_of: dict[str, Rows], n_systems: int, n_resamples: int, n_permutations: int,
                         seed: int | None, cache: dict[bytes, list[np.ndarray]]) -> dict[str, np.ndarray]:
        """Resampled values this statistic computes for every metric at once (by name)."""
        return {}

    def system_permutation(self, human: np.ndarray, a: np.ndarray, b: np.ndarray, n_permutations: int,
                           seed: int | None, draws_for: Draws) -> float:
        """The one-sided p-value that metric matrix ``a`` beats ``b`` against ``human``: the
        systems' mean scores swapped."""
        hm = human.mean(axis=1)

        def run(batch: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.nan_to_num(self.over_systems(hm, batch), nan=0.0)
            return out

        return resample.permutation_p(run, a.mean(axis=1), b.mean(axis=1), draws_for(human.shape[0]))

    # -- either level -------------------------------------------------------------------------

    def value_on(self, r: Rows, level: str, n_systems: int, n_permutations: int, seed: int | None) -> float:
        """The value on ``r``'s rows at ``level`` (NaN: undefined): a comparison's value on the
        rows two metrics share, and the baseline's on a constant metric's rows."""
        if level == "segment":
            return float(self.segment(r)["value"]) if len(r.item) else math.nan
        sm = system_matrix(r, n_systems)
        if sm.items.size == 0 or n_systems < 2:
            return math.nan
        return self.system_point(sm, n_permutations, seed, {})[0]


@dataclass(frozen=True)
class GroupStatistic(Statistic):
    """A value per group (:func:`textgen_metrics.stats.agreement.group_values`), the mean over
    the groups on which it is defined (mt-metrics-eval's ``average_by``)."""

    def _per_group(self, r: Rows, lay: stats.Layout) -> np.ndarray:
        return stats.group_values(self.name, stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid)

    def segment(self, r: Rows) -> Point:
        lay = stats.layout(r.group)
        return _mean_of_groups(self._per_group(r, lay), lay.sizes)

    def segment_resampled(self, r: Rows, group_by: str, counts: np.ndarray) -> np.ndarray:
        if group_by == "item":
            # each group is one item: a resample's value is the count-weighted mean of the groups'
            lay = stats.layout(r.group)
            vals = stats.group_values(self.name, stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid)
            group_items = r.item[_first_rows(lay)]
            ok = ~np.isnan(vals)
            w = counts[:, group_items[ok]]
            with np.errstate(invalid="ignore", divide="ignore"):
                out: np.ndarray = (w @ vals[ok]) / w.sum(axis=1)
            return out
        if group_by == "none":
            # every resample one group of a padded resamples x rows matrix: one vectorised call
            reps = counts[:, r.item].astype(np.int64)
            lengths = reps.sum(axis=1)
            width = int(lengths.max()) if lengths.size else 0
            valid = np.arange(width)[None, :] < lengths[:, None]
            grid = np.zeros((reps.shape[0], width), dtype=np.int64)
            base = np.arange(len(r.item))
            for i in range(reps.shape[0]):
                grid[i, :lengths[i]] = np.repeat(base, reps[i])
            batched: np.ndarray = stats.group_values(self.name, r.h[grid], r.m[grid], valid)
            return batched
        return super().segment_resampled(r, group_by, counts)

    def segment_batch(self, r: Rows) -> Callable[[np.ndarray], np.ndarray]:
        lay = stats.layout(r.group)
        valid = lay.valid
        H = stats.pad(np.asarray(r.h, dtype=np.float64), lay)

        def run(batch: np.ndarray) -> np.ndarray:
            return _mean_or_zero(stats.group_values(self.name, H, stats.pad(batch, lay), valid))

        return run


@dataclass(frozen=True)
class PairCount(GroupStatistic):
    """A Kendall variant or ``acc23``: from the five pair counts of each group, ties included;
    ungrouped resamples of a few thousand rows counted all at once (:func:`_weighted_pair_values`)."""

    counts_pairs: bool = True

    def segment_resampled(self, r: Rows, group_by: str, counts: np.ndarray) -> np.ndarray:
        if group_by == "none" and stats._SMALL < len(r.item) <= _WEIGHTED_ROWS:
            return _weighted_pair_values(self.name, r, counts)
        return super().segment_resampled(r, group_by, counts)


@dataclass(frozen=True)
class Correlation(GroupStatistic):
    """Pearson's r, or Spearman's rho (``ranked``): on one group SciPy's one-vector form; Pearson's
    resamples from moments, Spearman's ungrouped ones from each value's count, and Pearson's
    comparisons of many metrics on the same rows at once."""

    ranked: bool = False

    def _per_group(self, r: Rows, lay: stats.Layout) -> np.ndarray:
        if lay.sizes.size == 1:
            v1 = (_spearman1 if self.ranked else _pearson1)(r.h, r.m)
            return np.array([math.nan if v1 is None else v1])
        return super()._per_group(r, lay)

    def segment_resampled(self, r: Rows, group_by: str, counts: np.ndarray) -> np.ndarray:
        if group_by == "none" and self.ranked:
            return _weighted_spearman(r, counts)
        if self.ranked or group_by == "item":
            return super().segment_resampled(r, group_by, counts)
        return _weighted_pearson(r, counts)

    def segment_permutation(self, hi: Rows, lo: Rows, draws_for: Draws) -> float:
        """Spearman's: each permuted vector's ranks read from the two metrics' comparison tables
        (:func:`~textgen_metrics.stats.agreement.swap_ranks`), not ranked again; the same draws,
        values and p-value as ranking every vector, to the bit."""
        lay = stats.layout(hi.group)
        a, b = resample.zscore(np.asarray(hi.m, dtype=np.float64)), resample.zscore(np.asarray(lo.m, dtype=np.float64))
        ranks = stats.swap_ranks(stats.pad(a, lay), stats.pad(b, lay), lay.valid) if self.ranked else None
        if ranks is None:
            return super().segment_permutation(hi, lo, draws_for)
        human = stats._rank_rows(stats.pad(np.asarray(hi.h, dtype=np.float64), lay), lay.valid)

        def swapped(swap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mask = stats.pad(swap.astype(np.float64), lay) > 0.5
            # m2 = where(swap, a, b); m1 = where(swap, b, a) = where(~swap, a, b)
            m2 = _mean_or_zero(stats._pearson_rows(human, ranks(mask), lay.valid))
            m1 = _mean_or_zero(stats._pearson_rows(human, ranks(~mask), lay.valid))
            return m2, m1

        # a and b are z-scored already, as permutation_p would
        return resample.permutation_p(self.segment_batch(hi), a, b, draws_for(len(hi.item)), transform=False,
                                      swapped=swapped)

    def segment_pair_tests(self, named: list[str], rows_of: dict[str, Rows], masks: dict[str, np.ndarray], k: int,
                           seed: int | None) -> dict[tuple[str, str], float]:
        same_rows = len({masks[n].tobytes() for n in named}) == 1
        if self.ranked or not same_rows or len(named) < 2 or int(masks[named[0]].sum()) < _FAST_ROWS:
            return {}
        return _pearson_permutations(named, rows_of, k, seed)


@dataclass(frozen=True)
class Pdp(Statistic):
    """Pairwise Difference Pearson: every group's centred sums pooled into one Pearson; over the
    systems (one group) it is Pearson's r of the system means."""

    def segment(self, r: Rows) -> Point:
        lay = stats.layout(r.group)
        parts = stats.pdp_parts(stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid)
        used = lay.sizes >= 2
        v = float(stats.pdp_value(parts.sum(axis=0)))
        ok = not math.isnan(v)
        return {"value": v, "n": int(lay.sizes[used].sum()) if ok else 0, "groups": int(used.sum()) if ok else 0,
                "groups_skipped": int((~used).sum()) if ok else int(lay.sizes.size)}

    def segment_resampled(self, r: Rows, group_by: str, counts: np.ndarray) -> np.ndarray:
        if group_by != "item":
            return super().segment_resampled(r, group_by, counts)
        lay = stats.layout(r.group)
        parts = stats.pdp_parts(stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid)
        return stats.pdp_value(counts[:, r.item[_first_rows(lay)]] @ parts)

    def segment_batch(self, r: Rows) -> Callable[[np.ndarray], np.ndarray]:
        lay = stats.layout(r.group)
        valid = lay.valid
        H = stats.pad(np.asarray(r.h, dtype=np.float64), lay)

        def run(batch: np.ndarray) -> np.ndarray:
            parts = stats.pdp_parts(H, stats.pad(batch, lay), valid).sum(axis=-2)
            out: np.ndarray = np.nan_to_num(stats.pdp_value(parts), nan=0.0)
            return out

        return run

    def over_systems(self, h: np.ndarray, m: np.ndarray) -> np.ndarray:
        return _grouped("pearson", h, m)  # the pairwise differences of one group: Pearson


@dataclass(frozen=True)
class AccEq(Statistic):
    """Tie-calibrated pairwise accuracy: ``acc23`` at the metric tie threshold that maximises it
    (reported); compared by the pairs test at segment level."""

    thresholds: bool = True

    def segment(self, r: Rows) -> Point:
        lay = stats.layout(r.group)
        pairs = stats.acc_eq_pairs(stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid)
        swept, threshold = stats.acc_eq_sweep(pairs)
        used = lay.sizes >= 2
        return {"value": float(swept[0]), "threshold": float(threshold[0]), "n": int(lay.sizes[used].sum()),
                "groups": int(used.sum()), "groups_skipped": int((~used).sum())}

    def segment_resampled(self, r: Rows, group_by: str, counts: np.ndarray) -> np.ndarray:
        if group_by != "item":
            return super().segment_resampled(r, group_by, counts)
        lay = stats.layout(r.group)
        pairs = stats.acc_eq_pairs(stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid)
        return stats.acc_eq_sweep(pairs, counts[:, r.item[_first_rows(lay)][pairs.groups]])[0]

    def segment_pair_tests(self, named: list[str], rows_of: dict[str, Rows], masks: dict[str, np.ndarray], k: int,
                           seed: int | None) -> dict[tuple[str, str], float]:
        return _acc_eq_pairs_test(named, rows_of, masks, k, seed)

    def over_systems(self, h: np.ndarray, m: np.ndarray) -> np.ndarray:
        hb, mb, shape = _flat(h, m)
        valid = np.ones((1, hb.shape[1]), dtype=bool)
        out = np.empty(hb.shape[0])
        for i in range(hb.shape[0]):
            out[i] = stats.acc_eq_sweep(stats.acc_eq_pairs(hb[i:i + 1], mb[i:i + 1], valid))[0][0]
        return out.reshape(shape[:-1])

    def system_point(self, sm: SystemMatrix, n_permutations: int, seed: int | None,
                     cache: dict[bytes, list[np.ndarray]]) -> tuple[float, float | None]:
        n_systems = sm.human.shape[0]
        v, t = stats.acc_eq_sweep(stats.acc_eq_pairs(sm.human.mean(axis=1)[None], sm.metric.mean(axis=1)[None],
                                                     np.ones((1, n_systems), dtype=bool)))
        return float(v[0]), float(t[0])


@dataclass(frozen=True)
class Spa(Statistic):
    """Soft pairwise accuracy: over the systems x items matrix with its own permutations (the
    signs and the human p-values drawn once per item set and kept in the call's ``cache``)."""

    levels: tuple[str, ...] = ("system",)
    permutations: bool = True

    def system_point(self, sm: SystemMatrix, n_permutations: int, seed: int | None,
                     cache: dict[bytes, list[np.ndarray]]) -> tuple[float, float | None]:
        signs, human_p = _spa_human(sm, n_permutations, seed, cache)
        return float(1.0 - np.abs(human_p - stats.p_values(sm.metric, signs)).mean()), None

    def shared_resamples(self, rows_of: dict[str, Rows], n_systems: int, n_resamples: int, n_permutations: int,
                         seed: int | None, cache: dict[bytes, list[np.ndarray]]) -> dict[str, np.ndarray]:
        """Each metric's spa on every resample of its common items (:func:`stats.spa_resampled`),
        the metrics that share their items and human matrix in one pass (the resamples and the
        human counts are theirs in common). The signs drawn here, and the human p-values, go into
        ``cache`` for the point values."""
        shared: dict[bytes, tuple[SystemMatrix, list[tuple[str, np.ndarray]]]] = {}
        for name, r in rows_of.items():
            sm = system_matrix(r, n_systems)
            if sm.items.size == 0 or n_systems < 2:
                continue
            shared.setdefault(_spa_key(sm), (sm, []))[1].append((name, sm.metric))
        out: dict[str, np.ndarray] = {}
        for key, (sm, named) in shared.items():
            signs = stats.spa_signs(sm.human.shape[1], n_permutations, seed)
            cache[key] = [signs, stats.p_values(sm.human, signs)]
            boot = stats.spa_resampled(sm.human, np.stack([m for _, m in named]), signs, n_resamples, seed)
            out.update((name, boot[k]) for k, (name, _) in enumerate(named))
        return out

    def system_permutation(self, human: np.ndarray, a: np.ndarray, b: np.ndarray, n_permutations: int,
                           seed: int | None, draws_for: Draws) -> float:
        """The cells of the systems x items matrix swapped, as mt-metrics-eval does for spa."""
        signs = stats.spa_signs(human.shape[1], n_permutations, seed)
        shape = human.shape

        def run(batch: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.nan_to_num(stats.spa_values(human, batch.reshape(-1, *shape), signs), nan=0.0)
            return out

        return resample.permutation_p(run, a.ravel(), b.ravel(), draws_for(a.size))


def _spa_key(sm: SystemMatrix) -> bytes:
    return sm.items.tobytes() + sm.human.tobytes()


def _spa_human(sm: SystemMatrix, n_permutations: int, seed: int | None,
               cache: dict[bytes, list[np.ndarray]]) -> list[np.ndarray]:
    """The signs and the human p-values, the same for every metric on these items: drawn once."""
    key = _spa_key(sm)
    if key not in cache:
        signs = stats.spa_signs(sm.items.size, n_permutations, seed)
        cache[key] = [signs, stats.p_values(sm.human, signs)]
    return cache[key]


@dataclass(frozen=True)
class PairwiseAccuracy(Statistic):
    """The share of system pairs ordered as people order them."""

    levels: tuple[str, ...] = ("system",)

    def over_systems(self, h: np.ndarray, m: np.ndarray) -> np.ndarray:
        return stats.pairwise_accuracy(h, m)


@dataclass(frozen=True)
class Partial(Statistic):
    """Pearson (or Spearman, ``ranked``) of the residuals after each score's system mean: all rows
    pooled, the system controlled for."""

    levels: tuple[str, ...] = ("segment",)
    pooled_only: bool = True
    ranked: bool = False

    def segment(self, r: Rows) -> Point:
        h, m = stats.system_residuals(r.h, r.system), stats.system_residuals(r.m, r.system)
        v = (_spearman1 if self.ranked else _pearson1)(h, m)
        ok = v is not None
        return {"value": v if ok else math.nan, "n": len(h) if ok else 0, "groups": int(ok),
                "groups_skipped": int(not ok)}

    def segment_batch(self, r: Rows) -> Callable[[np.ndarray], np.ndarray]:
        """Every metric vector of a batch at once: each vector's system means from one product with
        the rows' one-hot systems, the residuals' Pearson (or the Pearson of their ranks) with the
        human residuals (the same for every vector). Equal scores of one system keep equal
        residuals, so ties stay ties."""
        _, codes = np.unique(np.asarray(r.system), return_inverse=True)
        n = codes.size
        onehot = np.zeros((n, int(codes.max()) + 1 if n else 0))
        onehot[np.arange(n), codes] = 1.0
        counts = onehot.sum(axis=0)
        human = stats.system_residuals(np.asarray(r.h, dtype=np.float64), np.asarray(r.system))[None, :]
        valid = np.ones((1, n), dtype=bool)
        if self.ranked:
            human = stats._rank_rows(human, valid)

        def run(batch: np.ndarray) -> np.ndarray:
            batch = np.asarray(batch, dtype=np.float64)
            resid = batch - ((batch @ onehot) / counts) @ onehot.T
            ok = np.broadcast_to(valid, resid.shape)
            if self.ranked:
                resid = stats._rank_rows(resid, ok)
            pearson = stats._pearson_rows(np.broadcast_to(human, resid.shape), resid, ok)
            out: np.ndarray = np.nan_to_num(pearson, nan=0.0)
            return out

        return run


@dataclass(frozen=True)
class LabelAgreement(Statistic):
    """Accuracy or Cohen's kappa of labels, per group then the mean; the permutation test swaps
    the labels themselves."""

    levels: tuple[str, ...] = ("segment",)
    labels: bool = True

    def segment(self, r: Rows) -> Point:
        lay = stats.layout(r.group)
        vals = np.array([stats.label_value(self.name, [r.h[i] for i in lay.order[lay.group == g]],
                                           [r.m[i] for i in lay.order[lay.group == g]])
                         for g in range(lay.sizes.size)])
        return _mean_of_groups(vals, lay.sizes)

    def segment_permutation(self, hi: Rows, lo: Rows, draws_for: Draws) -> float:
        fn = self.segment_batch(hi)
        _, inverse = np.unique(np.array(list(hi.m) + list(lo.m), dtype=object).astype(str), return_inverse=True)
        a, b = inverse[:len(hi.m)].astype(np.float64), inverse[len(hi.m):].astype(np.float64)
        names = list(hi.m) + list(lo.m)
        lookup = {float(c): names[i] for i, c in enumerate(inverse)}

        def label_fn(batch: np.ndarray) -> np.ndarray:
            return fn(np.array([[lookup[float(v)] for v in row] for row in batch], dtype=object))

        return resample.permutation_p(label_fn, a, b, draws_for(a.size), transform=False)


_TIED = "the share of human pairs that are ties"
_DECLARED = (
    Correlation("pearson", "Pearson's r: linear correlation of the scores"),
    Correlation("spearman", "Spearman's rho: correlation of the ranks", ranked=True),
    PairCount("kendall", "Kendall's tau-b: share of concordant minus discordant pairs, ties corrected"),
    PairCount("kendall_c", "Kendall's tau-c (Stuart's), for tables with few distinct values"),
    PairCount("kendall_23", "WMT23's Kendall variant (ties in the human scores count as neither)",
              baseline="0: no pair ordered"),
    PairCount("acc23", "pairwise accuracy with ties (WMT23): share of pairs the metric orders (or ties) as people "
              "do", baseline=_TIED),
    AccEq("acc_eq", "tie-calibrated pairwise accuracy (WMT23-25): acc23 at the metric tie threshold that "
          "maximises it", baseline=_TIED),
    Pdp("pdp", "Pairwise Difference Pearson: Pearson's r of the score differences of every pair in a group"),
    Spa("spa", "soft pairwise accuracy (WMT24): agreement of the metric's and people's p-values for every "
        "system pair", baseline="every system pair tied"),
    PairwiseAccuracy("pairwise_accuracy", "system-level pairwise accuracy (Kocmi et al. 2021): share of system "
                     "pairs ordered as people", baseline=_TIED),
    Partial("partial_pearson", "partial Pearson's r controlling for the system (FRANK)"),
    Partial("partial_spearman", "partial Spearman's rho controlling for the system (FRANK)", ranked=True),
    LabelAgreement("accuracy", "share of rows whose label equals people's",
                   baseline="the share of the most common human label"),
    LabelAgreement("kappa", "Cohen's kappa: agreement beyond chance",
                   baseline="0 or undefined: a constant label agrees by chance alone"),
)
STATISTICS: dict[str, Statistic] = {s.name: s for s in _DECLARED}


# -- the fast paths' arithmetic ---------------------------------------------------------------------

_FAST_ROWS = 1000  # Pearson comparisons on this many rows or more take the moment path
_WEIGHTED_ROWS = 2048  # ungrouped pair counts of up to this many rows: from one product per resample chunk
_PAIR_BLOCK = 256  # columns of the pair sign matrix built at once


def _weighted_pearson(r: Rows, counts: np.ndarray) -> np.ndarray:
    """Pearson within each group (then the mean over defined groups) of the resampled rows
    (``counts``: resamples x items of the table), from moments: each item's sums of 1, h, m,
    h^2, m^2 and h m per group are added up once, and a resample's sums are one product of its
    item counts with them (``resamples x items x (6 groups)``), however many rows an item has."""
    lay = stats.layout(r.group)
    g = lay.sizes.size
    # shift each group by one of its own values: a constant group is exactly 0
    first = _first_rows(lay)
    group_of = np.empty(r.h.size, dtype=np.int64)
    group_of[lay.order] = lay.group
    h = r.h - r.h[first][group_of]
    m = r.m - r.m[first][group_of]
    feats = np.stack([np.ones_like(h), h, m, h * h, m * m, h * m], axis=1)  # rows x 6
    per_item = np.zeros((counts.shape[1] * g, 6))
    np.add.at(per_item, r.item * g + group_of, feats)
    sums = (counts @ per_item.reshape(counts.shape[1], g * 6)).reshape(-1, g, 6)
    n, sh, sm, s_hh, s_mm, s_hm = (sums[..., i] for i in range(6))
    with np.errstate(invalid="ignore", divide="ignore"):
        shh = s_hh - sh * sh / n
        smm = s_mm - sm * sm / n
        shm = s_hm - sh * sm / n
        rho = np.clip(shm / np.sqrt(shh * smm), -1.0, 1.0)
        # a group whose drawn rows hold one value of either score has no correlation: its
        # centred sum of squares is then rounding noise (relative 1e-16), far below this bound
        flat = (shh <= 1e-10 * s_hh) | (smm <= 1e-10 * s_mm)
    rho = np.where((n >= 2) & ~flat, rho, np.nan)
    ok = ~np.isnan(rho)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(ok, rho, 0.0).sum(axis=1) / ok.sum(axis=1)
    return out


def _mean_or_zero(g: np.ndarray) -> np.ndarray:
    """The mean of each row's defined group values (last axis: groups); 0 where none is defined,
    as ``PermutationSigDiff``'s average of nothing."""
    ok = ~np.isnan(g)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(ok, g, 0.0).sum(axis=-1) / ok.sum(axis=-1)
    out: np.ndarray = np.where(ok.any(axis=-1), means, 0.0)
    return out


def _drawn_counts(values: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code among the sorted distinct values (rows of a 2-D ``values``: distinct
    pairs), and each resample's count of each distinct value (``w``: resamples x rows)."""
    _, code = np.unique(values, axis=0 if values.ndim == 2 else None, return_inverse=True)
    code = code.reshape(-1)
    order = np.argsort(code, kind="stable")
    starts = np.flatnonzero(np.r_[True, code[order][1:] != code[order][:-1]])
    drawn: np.ndarray = np.add.reduceat(w[:, order], starts, axis=1)
    return code, drawn


def _weighted_spearman(r: Rows, counts: np.ndarray) -> np.ndarray:
    """Spearman's rho of one ungrouped group on every resample, from each row's count in it
    (``w``: resamples x rows), without repeating or sorting rows: a value's average rank in a
    resample is the count drawn below it plus (its own count + 1) / 2 (exact halves, the repeated
    rows' ranks), and rho is the count-weighted Pearson of those ranks (the repeated rows' to
    rounding, ~1e-15). Undefined (NaN) where a resample drew one value of either score. agreement()
    on 2,000 Likert pairs, 1,000 resamples: 0.67 s of CPU, where padding and sorting the repeated
    rows took 1.30 s."""
    w = counts[:, r.item]
    ranks, spread = [], []
    for values in (np.asarray(r.h, dtype=np.float64), np.asarray(r.m, dtype=np.float64)):
        code, drawn = _drawn_counts(values, w)
        below = np.cumsum(drawn, axis=1) - drawn
        ranks.append((below + (drawn + 1) / 2)[:, code])
        spread.append((drawn > 0).sum(axis=1) > 1)
    n = w.sum(axis=1, keepdims=True)
    dx = ranks[0] - (w * ranks[0]).sum(axis=1, keepdims=True) / n
    dy = ranks[1] - (w * ranks[1]).sum(axis=1, keepdims=True) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (w * dx * dy).sum(axis=1) / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    out: np.ndarray = np.where(spread[0] & spread[1], np.clip(rho, -1.0, 1.0), np.nan)
    return out


def _weighted_pair_values(name: str, r: Rows, counts: np.ndarray) -> np.ndarray:
    """A pair-count statistic of one group on every resample, from each row's count in it
    (``w``: resamples x rows), in exact integers: concordant minus discordant pairs are
    ``w' S w / 2`` with ``S[i, j] = sign(h_i - h_j) * sign(m_i - m_j)`` (built in column blocks,
    ``O(resamples * rows^2)`` in matrix products, where one count per resample costs a Python
    loop), the tied pairs of ``h``, of ``m`` and of both ``c (c - 1) / 2`` over each distinct
    value's count ``c``. The same counts as :func:`stats.group_values` on the repeated rows."""
    h, m = np.asarray(r.h, dtype=np.float64), np.asarray(r.m, dtype=np.float64)
    w = counts[:, r.item]
    s = np.zeros(w.shape[0])
    for start in range(0, h.size, _PAIR_BLOCK):
        block = slice(start, start + _PAIR_BLOCK)
        signs = np.sign(h[:, None] - h[None, block]) * np.sign(m[:, None] - m[None, block])
        s += ((w @ signs) * w[:, block]).sum(axis=1)
    ties, distinct = [], []
    for values in (h, m, np.column_stack((h, m))):
        _, c = _drawn_counts(values, w)
        ties.append((c * (c - 1) / 2).sum(axis=1))
        distinct.append((c > 0).sum(axis=1))
    htie, mtie, both = ties
    n = w.sum(axis=1)
    con_plus_dis = n * (n - 1) / 2 - htie - mtie + both
    con_minus_dis = s / 2
    pair_counts = np.stack([(con_plus_dis + con_minus_dis) / 2, (con_plus_dis - con_minus_dis) / 2, mtie - both,
                            htie - both, both], axis=-1)
    out: np.ndarray = stats._from_counts(name, pair_counts, np.minimum(distinct[0], distinct[1]), n)
    return out


def _pearson_permutations(named: list[str], rows_of: dict[str, Rows], k: int,
                          seed: int | None) -> dict[tuple[str, str], float]:
    """``PermutationSigDiff`` for Pearson, every pair of metrics at once (all on the same rows):
    a swapped vector's per-group Pearson needs only its sums, sums of squares and sums of
    products with the centred human scores, and each of those is the unswapped one plus the
    swapped rows' share, which is linear in the metric: one product of the swap draws with each
    metric's three per-row features gives them for every pair (the same draws and z-scores as
    :func:`textgen_metrics.stats.resample.permutation_p`; the values agree with its per-draw
    Pearson to rounding, ~1e-15)."""
    first = rows_of[named[0]]
    order = np.argsort(first.group, kind="stable")  # mt-metrics-eval's row layout
    lay = stats.layout(first.group[order])
    h = np.asarray(first.h, dtype=np.float64)[order]
    valid = lay.valid
    hp = stats.pad(h, lay)
    n = valid.sum(axis=1).astype(np.float64)
    hc = np.where(valid, hp - np.where(valid, hp, 0.0).sum(axis=1, keepdims=True) / n[:, None], 0.0)
    shh = (hc * hc).sum(axis=1)
    zs = np.stack([resample.zscore(np.asarray(rows_of[name].m, dtype=np.float64)[order]) for name in named])
    feats = np.stack([stats.pad(zs, lay), stats.pad(zs * zs, lay), stats.pad(zs, lay) * hc])  # 3, K, G, W
    totals = feats.sum(axis=-1)  # 3, K, G
    g, w = lay.sizes.size, lay.width
    flat = feats.transpose(2, 3, 0, 1).reshape(g, w, -1)  # G, W, 3K

    def pearson_mean(sums: np.ndarray) -> np.ndarray:  # sums: 3, ..., G
        with np.errstate(invalid="ignore", divide="ignore"):
            var = sums[1] - sums[0] ** 2 / n
            r = sums[2] / np.sqrt(shh * var)
        ok = (n >= 2) & (shh > 0) & (var > 1e-12 * sums[1]) & ~np.isnan(r)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(ok, np.clip(r, -1, 1), 0.0).sum(axis=-1) / ok.sum(axis=-1)
        out: np.ndarray = np.where(ok.any(axis=-1), mean, 0.0)
        return out

    pairs = [(i, j) for i in range(len(named)) for j in range(i + 1, len(named))]
    counts = np.zeros(len(pairs), dtype=np.int64)
    observed = pearson_mean(totals)  # K
    for swap in resample.permutation_draws(k, int(h.size), seed):
        sp = np.zeros((swap.shape[0], g, w))
        sp[:, lay.group, lay.position] = swap
        # per group and draw, the swapped rows' share of each feature: G batched (B x W) @ (W x 3K)
        share = np.matmul(sp.transpose(1, 0, 2), flat)  # G, B, 3K
        share = share.reshape(g, swap.shape[0], 3, len(named)).transpose(2, 1, 3, 0)  # 3, B, K, G
        for c, (hi, lo) in enumerate(pairs):  # named is sorted by value: the first is the higher
            # m2 takes the higher metric where swapped, m1 the lower
            m2 = totals[:, lo][:, None] + share[:, :, hi] - share[:, :, lo]
            m1 = totals[:, hi][:, None] - share[:, :, hi] + share[:, :, lo]
            counts[c] += int((pearson_mean(m2) - pearson_mean(m1) >= observed[hi] - observed[lo]).sum())
    out: dict[tuple[str, str], float] = {}
    for c, (x, y) in enumerate(pairs):
        out[(named[x], named[y])] = float(counts[c]) / k
    return out


def _acc_eq_pairs_test(named: list[str], rows_of: dict[str, Rows], masks: dict[str, np.ndarray], k: int,
                       seed: int | None) -> dict[tuple[str, str], float]:
    """The pairs test for every ordered (higher, lower) pair of metrics; metrics with the same rows
    share one product."""
    out: dict[tuple[str, str], float] = {}
    by_mask: dict[bytes, list[str]] = {}
    for name in named:
        by_mask.setdefault(masks[name].tobytes(), []).append(name)
    todo: list[tuple[list[str], np.ndarray]] = [(group, masks[group[0]]) for group in by_mask.values()]
    for i, a in enumerate(named):
        for b in named[i + 1:]:
            if masks[a].tobytes() != masks[b].tobytes():
                todo.append(([a, b], masks[a] & masks[b]))
    for group, common in todo:
        if len(group) < 2:
            continue
        verdicts, scale = [], None
        values = []
        for name in group:
            r = rows_of[name].restrict(masks[name], common)
            lay = stats.layout(r.group)
            H, M, valid = stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid
            pairs = stats.acc_eq_pairs(H, M, valid)
            value, threshold = stats.acc_eq_sweep(pairs)
            values.append(float(value[0]))
            tied = pairs.gap <= threshold[0]
            verdict = np.where(tied, pairs.after, pairs.before).astype(np.float64)
            # back in the order the pairs were enumerated, the same for every metric on these rows
            verdicts.append(_unsort(pairs, verdict))
            if scale is None:
                per = pairs.pairs_per_group
                lcm = 1
                for size in np.unique(per).tolist():
                    lcm = math.lcm(lcm, int(size))
                unit = (lcm // per).astype(np.float64) if lcm < 1 << 52 else 1.0 / per
                scale = _unsort(pairs, unit[pairs.group])
        assert scale is not None
        order = sorted(range(len(group)), key=lambda i: (-values[i], group[i]))
        pairs_idx = [(order[x], order[y]) for x in range(len(order)) for y in range(x + 1, len(order))]
        ps = resample.pairs_p_values(np.stack(verdicts), scale, pairs_idx, k, seed)
        for (hi, lo), p in zip(pairs_idx, ps, strict=True):
            out.setdefault((group[hi], group[lo]), p)
    return out


def _unsort(pairs: stats.AccEqPairs, per_pair: np.ndarray) -> np.ndarray:
    """``per_pair`` (in the sweep's order) back in the order the pairs were enumerated."""
    out = np.empty(per_pair.size)
    out[pairs.order] = per_pair
    return out
