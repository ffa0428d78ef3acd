"""``meta_evaluate``: how well each score agrees with people, at the WMT metrics task's standard
(Google's mt-metrics-eval), with a bootstrap interval on every number, a paired permutation test
between every two metrics, and WMT's significance ranks.

The statistics are :mod:`textgen_metrics.stats.agreement` (each names its reference); the resampling
is :mod:`textgen_metrics.stats.resample`. Input checks are all here, before any computation.

Levels and grouping (docs/meta_evaluation.md): at ``segment`` level rows are correlated, pooled
(``group_by="none"``) or within each item / system with the mean over groups (mt-metrics-eval's
``average_by``); a group on which the statistic is undefined is left out and counted. At
``system`` level each system's score is its mean over the items on which every system has both
that metric's score and a human score (mt-metrics-eval takes complete matrices), and the human
score its mean over the same items.

Intervals resample items (every row of an item together; without ``items`` each row is its own
item). On 100+ items a 95% interval covers the truth 93-97% of the time (the tests check it on
simulated tables); on few items percentile intervals are too narrow and cover less.

Comparisons: mt-metrics-eval's ``PermutationSigDiff`` (rows swapped between the two metrics'
z-scores; at system level the systems' scores are swapped, and for ``spa`` the cells of the
systems x items matrix, as mt-metrics-eval does), except ``acc_eq``, which uses the pairs test
(``PairwisePermutationSigDiff``) as WMT23-25 do: re-calibrating the tie threshold on each of
1,000 draws is what makes the score-swapping test take hours there. Label statistics swap the
labels themselves. Ranks: mt-metrics-eval's ``AssignRanks`` at p <= 0.05.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..significance import DEFAULT_SEED
from ..stats import agreement as stats
from ..stats import resample
from ..stats.agreement import LABEL_STATISTICS, SEGMENT_NONE_ONLY, STATISTICS
from ..stats.correlation import pearson as _pearson1
from ..stats.correlation import spearman as _spearman1

__all__ = ["meta_evaluate", "assign_ranks", "williams_p_value"]

LEVELS = ("segment", "system")
GROUPINGS = ("none", "item", "system")


# -- input checks ---------------------------------------------------------------------------------

def _as_list(name: str, values: Any) -> list[Any]:
    if values is None or isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name}: expected a list with one value per row, got {type(values).__name__}")
    return list(values)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v))


def _numbers(name: str, values: list[Any]) -> np.ndarray:
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if _missing(v):
            continue
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name}[{i}]: expected a number (or None for a missing score), got "
                            f"{type(v).__name__} {v!r}")
        if not math.isfinite(v):
            raise ValueError(f"{name}[{i}]: {v!r} is not a finite number")
        out[i] = float(v)
    return out


def _labels(name: str, values: list[Any]) -> list[Any]:
    for i, v in enumerate(values):
        if _missing(v):
            continue
        try:
            hash(v)
        except TypeError:
            raise TypeError(f"{name}[{i}]: a label must be a string, number or bool, got "
                            f"{type(v).__name__}") from None
    return values


def _codes(name: str, values: list[Any], sort: bool) -> tuple[np.ndarray, list[Any]]:
    for i, v in enumerate(values):
        if v is None:
            raise ValueError(f"{name}[{i}]: missing; every row needs one")
        try:
            hash(v)
        except TypeError:
            raise TypeError(f"{name}[{i}]: expected a string or number, got {type(v).__name__}") from None
    names = list(dict.fromkeys(values))
    if sort:
        try:
            names = sorted(names)
        except TypeError:
            names = sorted(names, key=lambda v: (type(v).__name__, str(v)))
    index = {v: i for i, v in enumerate(names)}
    return np.array([index[v] for v in values], dtype=np.int64), names


def _check_statistics(statistics: Any) -> list[str]:
    names = [statistics] if isinstance(statistics, str) else _as_list("statistics", statistics)
    if not names:
        raise ValueError(f"statistics: empty; choose from {', '.join(STATISTICS)}")
    for s in names:
        if s not in STATISTICS:
            raise ValueError(f"statistics: unknown statistic {s!r}; choose from {', '.join(STATISTICS)}")
    return list(dict.fromkeys(names))


# -- one metric against one human column ---------------------------------------------------------

class _Rows:
    """The rows one metric and one human column both have, with their item, system and group."""

    def __init__(self, h: Any, m: Any, item: np.ndarray, system: np.ndarray, group: np.ndarray) -> None:
        self.h, self.m, self.item, self.system, self.group = h, m, item, system, group

    def take(self, rows: np.ndarray) -> _Rows:
        h = self.h[rows] if isinstance(self.h, np.ndarray) else [self.h[i] for i in rows]
        m = self.m[rows] if isinstance(self.m, np.ndarray) else [self.m[i] for i in rows]
        return _Rows(h, m, self.item[rows], self.system[rows], self.group[rows])


def _mean_of_groups(vals: np.ndarray, sizes: np.ndarray) -> tuple[float, int, int, int]:
    defined = ~np.isnan(vals)
    value = float(vals[defined].mean()) if defined.any() else math.nan
    return value, int(sizes[defined].sum()), int(defined.sum()), int((~defined).sum())


def _segment_point(stat: str, r: _Rows) -> dict[str, Any]:
    """``value`` (NaN: undefined), ``n``, ``groups``, ``groups_skipped`` (+ ``threshold``)."""
    if stat in LABEL_STATISTICS:
        lay = stats.layout(r.group)
        vals = np.array([stats.label_value(stat, [r.h[i] for i in lay.order[lay.group == g]],
                                           [r.m[i] for i in lay.order[lay.group == g]])
                         for g in range(lay.sizes.size)])
        value, n, groups, skipped = _mean_of_groups(vals, lay.sizes)
        return {"value": value, "n": n, "groups": groups, "groups_skipped": skipped}
    if stat in SEGMENT_NONE_ONLY:
        h, m = stats.system_residuals(r.h, r.system), stats.system_residuals(r.m, r.system)
        one = _pearson1 if stat == "partial_pearson" else _spearman1
        v = one(h, m)
        ok = v is not None
        return {"value": v if ok else math.nan, "n": len(h) if ok else 0, "groups": int(ok),
                "groups_skipped": int(not ok)}
    lay = stats.layout(r.group)
    valid = lay.valid
    H, M = stats.pad(r.h, lay), stats.pad(r.m, lay)
    if stat == "pdp":
        parts = stats.pdp_parts(H, M, valid)
        used = lay.sizes >= 2
        v = float(stats.pdp_value(parts.sum(axis=0)))
        ok = not math.isnan(v)
        return {"value": v, "n": int(lay.sizes[used].sum()) if ok else 0, "groups": int(used.sum()) if ok else 0,
                "groups_skipped": int((~used).sum()) if ok else int(lay.sizes.size)}
    if stat == "acc_eq":
        pairs = stats.acc_eq_pairs(H, M, valid)
        swept, threshold = stats.acc_eq_sweep(pairs)
        used = lay.sizes >= 2
        return {"value": float(swept[0]), "threshold": float(threshold[0]), "n": int(lay.sizes[used].sum()),
                "groups": int(used.sum()), "groups_skipped": int((~used).sum())}
    if lay.sizes.size == 1 and stat in ("pearson", "spearman"):
        v1 = (_pearson1 if stat == "pearson" else _spearman1)(r.h, r.m)
        vals = np.array([math.nan if v1 is None else v1])
    else:
        vals = stats.group_values(stat, H, M, valid)
    value, n, groups, skipped = _mean_of_groups(vals, lay.sizes)
    return {"value": value, "n": n, "groups": groups, "groups_skipped": skipped}


def _system_matrix(r: _Rows, n_systems: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human and metric ``systems x common items`` matrices, and the common items' codes. Each
    cell is the mean of its rows (one row per cell in a well-formed table)."""
    items = np.unique(r.item)
    index = np.searchsorted(items, r.item)
    cells = np.zeros((n_systems, items.size))
    np.add.at(cells, (r.system, index), 1.0)
    common = (cells > 0).all(axis=0)
    hs, ms = np.zeros_like(cells), np.zeros_like(cells)
    np.add.at(hs, (r.system, index), r.h)
    np.add.at(ms, (r.system, index), r.m)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (hs / cells)[:, common], (ms / cells)[:, common], items[common]


def _system_values(stat: str, h: np.ndarray, m: np.ndarray, signs: np.ndarray | None) -> np.ndarray:
    """The statistic over systems for batches of system means (last axis: systems); ``h``/``m``
    for ``spa`` are the ``(..., systems, items)`` matrices instead."""
    if stat == "spa":
        assert signs is not None
        return stats.spa_values(h, m, signs)
    if stat == "pairwise_accuracy":
        return stats.pairwise_accuracy(h, m)
    stat = "pearson" if stat == "pdp" else stat  # pairwise differences of one group: Pearson
    shape = np.broadcast_shapes(h.shape, m.shape)
    hb = np.broadcast_to(h, shape).reshape(-1, shape[-1])
    mb = np.broadcast_to(m, shape).reshape(-1, shape[-1])
    valid = np.ones(hb.shape, dtype=bool)
    if stat == "acc_eq":
        out = np.empty(hb.shape[0])
        for i in range(hb.shape[0]):
            out[i] = stats.acc_eq_sweep(stats.acc_eq_pairs(hb[i:i + 1], mb[i:i + 1], valid[:1]))[0][0]
        return out.reshape(shape[:-1])
    return stats.group_values(stat, hb, mb, valid).reshape(shape[:-1])


# -- bootstrap -----------------------------------------------------------------------------------

def _weighted_pearson(r: _Rows, counts: np.ndarray) -> np.ndarray:
    """Pearson within each group (then the mean over defined groups) of the resampled rows
    (``counts``: resamples x items of the table), from moments: each item's sums of 1, h, m,
    h^2, m^2 and h m per group are added up once, and a resample's sums are one product of its
    item counts with them (``resamples x items x (6 groups)``), however many rows an item has."""
    lay = stats.layout(r.group)
    g = lay.sizes.size
    # shift each group by one of its own values: a constant group is exactly 0
    first = lay.order[np.r_[0, np.cumsum(lay.sizes)[:-1]]]  # first row of each group
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


def _segment_boot(stat: str, r: _Rows, group_by: str, counts: np.ndarray) -> np.ndarray:
    """The statistic on each resample (``counts``: ``resamples x items`` of the table)."""
    if group_by == "item" and stat not in ("pdp", "acc_eq") and stat not in LABEL_STATISTICS:
        lay = stats.layout(r.group)
        vals = stats.group_values(stat, stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid)
        group_items = r.item[lay.order][np.r_[0, np.cumsum(lay.sizes)[:-1]]]
        ok = ~np.isnan(vals)
        w = counts[:, group_items[ok]]
        with np.errstate(invalid="ignore", divide="ignore"):
            out: np.ndarray = (w @ vals[ok]) / w.sum(axis=1)
        return out
    if group_by == "item" and stat in ("pdp", "acc_eq"):
        lay = stats.layout(r.group)
        H, M, valid = stats.pad(r.h, lay), stats.pad(r.m, lay), lay.valid
        group_items = r.item[lay.order][np.r_[0, np.cumsum(lay.sizes)[:-1]]]
        if stat == "pdp":
            parts = stats.pdp_parts(H, M, valid)
            return stats.pdp_value(counts[:, group_items] @ parts)
        pairs = stats.acc_eq_pairs(H, M, valid)
        return stats.acc_eq_sweep(pairs, counts[:, group_items[pairs.groups]])[0]
    if stat == "pearson":
        return _weighted_pearson(r, counts)
    row_w = counts[:, r.item]  # resamples x rows
    if group_by == "none" and (stat in ("spearman", "acc23", "kendall_23") or stat in stats.PAIR_COUNT_STATISTICS):
        # every resample one group of a padded resamples x rows matrix: one vectorised call
        reps = row_w.astype(np.int64)
        lengths = reps.sum(axis=1)
        width = int(lengths.max()) if lengths.size else 0
        valid = np.arange(width)[None, :] < lengths[:, None]
        grid = np.zeros((reps.shape[0], width), dtype=np.int64)
        base = np.arange(len(r.item))
        for i in range(reps.shape[0]):
            grid[i, :lengths[i]] = np.repeat(base, reps[i])
        batched: np.ndarray = stats.group_values(stat, r.h[grid], r.m[grid], valid)
        return batched
    out = np.empty(counts.shape[0])
    base = np.arange(len(r.item))
    for i in range(counts.shape[0]):
        rows = np.repeat(base, row_w[i].astype(np.int64))
        out[i] = _segment_point(stat, r.take(rows))["value"] if rows.size else math.nan
    return out


# -- permutation batches ---------------------------------------------------------------------------

def _segment_batch(stat: str, r: _Rows) -> Callable[[np.ndarray], np.ndarray]:
    """A function from a batch of metric vectors on ``r``'s rows to the statistic of each
    (undefined: 0, as ``PermutationSigDiff``)."""
    if stat in SEGMENT_NONE_ONLY:
        return _partial_batch(stat, r)
    lay = stats.layout(r.group)
    valid = lay.valid
    H = stats.pad(np.asarray(r.h, dtype=np.float64), lay) if stat not in LABEL_STATISTICS else None

    def run(batch: np.ndarray) -> np.ndarray:
        if stat in LABEL_STATISTICS or stat == "acc_eq":
            out = np.empty(batch.shape[0])
            for i in range(batch.shape[0]):
                m = list(batch[i]) if stat in LABEL_STATISTICS else batch[i]
                v = _segment_point(stat, _Rows(r.h, m, r.item, r.system, r.group))["value"]
                out[i] = 0.0 if math.isnan(v) else v
            return out
        assert H is not None
        M = stats.pad(batch, lay)
        if stat == "pdp":
            vals: np.ndarray = np.nan_to_num(stats.pdp_value(stats.pdp_parts(H, M, valid).sum(axis=-2)), nan=0.0)
            return vals
        g = stats.group_values(stat, H, M, valid)
        ok = ~np.isnan(g)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(ok, g, 0.0).sum(axis=-1) / ok.sum(axis=-1)
        out2: np.ndarray = np.where(ok.any(axis=-1), means, 0.0)
        return out2

    return run


def _partial_batch(stat: str, r: _Rows) -> Callable[[np.ndarray], np.ndarray]:
    """The partial correlation (controlling for the system) of each metric vector of a batch, all
    at once: each vector's system means from one product with the rows' one-hot systems, the
    residuals' Pearson (or the Pearson of their ranks) with the human residuals (which are the
    same for every vector). Equal scores of one system keep equal residuals, so ties stay ties."""
    _, codes = np.unique(np.asarray(r.system), return_inverse=True)
    n = codes.size
    onehot = np.zeros((n, int(codes.max()) + 1 if n else 0))
    onehot[np.arange(n), codes] = 1.0
    counts = onehot.sum(axis=0)
    human = stats.system_residuals(np.asarray(r.h, dtype=np.float64), np.asarray(r.system))[None, :]
    valid = np.ones((1, n), dtype=bool)
    if stat == "partial_spearman":
        human = stats._rank_rows(human, valid)

    def run(batch: np.ndarray) -> np.ndarray:
        batch = np.asarray(batch, dtype=np.float64)
        resid = batch - ((batch @ onehot) / counts) @ onehot.T
        ok = np.broadcast_to(valid, resid.shape)
        if stat == "partial_spearman":
            resid = stats._rank_rows(resid, ok)
        out: np.ndarray = np.nan_to_num(stats._pearson_rows(np.broadcast_to(human, resid.shape), resid, ok), nan=0.0)
        return out

    return run


# -- ranks, Williams -------------------------------------------------------------------------------

def assign_ranks(p_values: np.ndarray, threshold: float = 0.05) -> list[int]:
    """WMT's ranks (mt-metrics-eval's ``AssignRanks``) from ``p_values[i, j]`` (``i < j``; metrics
    sorted by decreasing value): the one-sided p-value that metric ``i`` beats metric ``j``. A
    metric starts a new rank when any metric since the current rank began beats it at
    ``p <= threshold``."""
    n = p_values.shape[0]
    ranks, current, start = [0] * n, 1, 0
    for i in range(n):
        if (p_values[start:i, i] <= threshold).any():
            current += 1
            start = i
        ranks[i] = current
    return ranks


def williams_p_value(human: Sequence[float], a: Sequence[float], b: Sequence[float],
                     one_sided: bool = True) -> float | None:
    """Williams' test (mt-metrics-eval's ``WilliamsSigDiff`` with Pearson): the p-value that the
    Pearson correlations of ``a`` and ``b`` with ``human`` differ, given how ``a`` and ``b``
    correlate; None where a correlation is undefined or there are fewer than 4 rows."""
    h, x, y = (np.asarray(v, dtype=np.float64) for v in (human, a, b))
    r1, r2, r12 = _pearson1(h, x), _pearson1(h, y), _pearson1(x, y)
    if r1 is None or r2 is None or r12 is None or h.size < 4:
        return None
    p = stats.williams_test(r1, r2, r12, h.size, one_sided)
    return None if math.isnan(p) else float(p)


# -- the public function ---------------------------------------------------------------------------

_REASONS = {
    "segment": "undefined on every group (constant scores or fewer than two rows in each)",
    "system": "undefined over the systems (fewer than two systems with a common item, or constant system scores)",
}


def meta_evaluate(scores: Mapping[str, Sequence[Any]], human: Sequence[Any] | Mapping[str, Sequence[Any]], *,
                  items: Sequence[Any] | None = None, systems: Sequence[Any] | None = None,
                  level: str = "segment", group_by: str = "none",
                  statistics: Sequence[str] = ("pearson", "spearman", "kendall"),
                  confidence_level: float = 0.95, n_resamples: int = 1000, n_permutations: int = 1000,
                  seed: int | None = DEFAULT_SEED, compare: bool = True) -> dict[str, Any]:
    """How well each score in ``scores`` (name -> one value per row; None or NaN: missing)
    agrees with ``human`` (one value per row, or dimension name -> one value per row; None: the
    row is not used for that dimension).

    ``items`` / ``systems``: each row's item (the source segment, document or prompt) and
    system; ``group_by="item"`` and the bootstrap's item resampling need ``items``,
    ``group_by="system"`` and ``partial_*`` need ``systems``, ``level="system"`` needs both.
    ``statistics``: names from :data:`textgen_metrics.stats.agreement.STATISTICS`.
    ``n_resamples``: bootstrap resamples (0: no intervals), also the draws of the comparisons'
    permutation tests; ``n_permutations``: ``spa``'s own permutation count (part of its value, as
    WMT's 1,000), so ``spa``'s value needs no interval; ``seed`` (default 12345, as the command
    line and the reports) makes every random draw repeatable, None asks for fresh randomness.

    Returns ``{"rows", "results": [...], "baselines": [...], "comparisons": [...]}`` (and
    ``incomplete_systems`` at system level: each system that lacks some of the table's items,
    with how many): one result per human
    dimension, statistic and metric (``value`` and ``ci`` plain floats or None with a
    ``reason``; ``n`` rows used, ``groups``, ``groups_skipped``, ``missing`` rows without this
    metric's score, ``rank``; ``threshold`` for ``acc_eq``; ``includes_baseline``: whether the
    interval holds the baseline's value), one baseline per human dimension and statistic (the
    value of a constant metric, None with a ``reason`` where it is undefined), and one comparison per pair of
    metrics with a value (``a`` the higher, ``delta`` >= 0, one-sided ``p_value``).
    """
    if not isinstance(scores, Mapping):
        raise TypeError(f"scores: expected a mapping of metric name to one score per row, got {type(scores).__name__}")
    if not scores:
        raise ValueError("scores: empty; give at least one metric's scores")
    columns = {str(k): _as_list(f"scores[{k!r}]", v) for k, v in scores.items()}
    dims = ({str(k): _as_list(f"human[{k!r}]", v) for k, v in human.items()} if isinstance(human, Mapping)
            else {"human": _as_list("human", human)})
    if not dims:
        raise ValueError("human: empty mapping; give at least one human column")
    n_rows = len(next(iter(dims.values())))
    lengths = {**{f"human[{k!r}]" if isinstance(human, Mapping) else "human": len(v) for k, v in dims.items()},
               **{f"scores[{k!r}]": len(v) for k, v in columns.items()}}
    if items is not None:
        lengths["items"] = len(_as_list("items", items))
    if systems is not None:
        lengths["systems"] = len(_as_list("systems", systems))
    if len(set(lengths.values())) > 1:
        raise ValueError("inputs differ in length (" + ", ".join(f"{k}={v}" for k, v in lengths.items())
                         + "); every column needs one value per row")
    if level not in LEVELS:
        raise ValueError(f"level: {level!r} is not one of {list(LEVELS)}")
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by: {group_by!r} is not one of {list(GROUPINGS)}")
    names = _check_statistics(statistics)
    resample.check_interval(confidence_level, n_resamples, seed)
    if not isinstance(n_permutations, int) or isinstance(n_permutations, bool) or n_permutations < 1:
        raise ValueError(f"n_permutations: {n_permutations!r} must be a positive integer (spa's permutation count)")
    for s in names:
        declared = STATISTICS[s]
        if level not in declared.levels:
            other = declared.levels[0]
            raise ValueError(f"statistics: {s!r} is a {other}-level statistic; pass level={other!r}")
        if declared.pooled_only and group_by != "none":
            raise ValueError(f"statistics: {s!r} controls for the system itself; pass group_by='none'")
        if declared.pooled_only and systems is None:
            raise ValueError(f"systems: {s!r} controls for the system; pass systems (one per row)")
    if level == "system":
        if group_by != "none":
            raise ValueError(f"group_by: {group_by!r} applies at segment level; at level='system' use 'none'")
        if items is None or systems is None:
            raise ValueError("level='system' needs items and systems (one per row): "
                             f"{'items' if items is None else 'systems'} missing")
    if group_by == "item" and items is None:
        raise ValueError("group_by='item' needs items (one per row)")
    if group_by == "system" and systems is None:
        raise ValueError("group_by='system' needs systems (one per row)")

    numeric = any(s not in LABEL_STATISTICS for s in names)
    labels_only = not numeric
    values = {k: (_labels if labels_only else _numbers)(f"scores[{k!r}]", v) for k, v in columns.items()}
    human_values = {k: (_labels if labels_only else _numbers)(
        f"human[{k!r}]" if isinstance(human, Mapping) else "human", v) for k, v in dims.items()}
    item_codes, _ = (_codes("items", list(items), sort=False) if items is not None
                     else (np.arange(n_rows, dtype=np.int64), []))
    system_codes, system_names = (_codes("systems", list(systems), sort=True) if systems is not None
                                  else (np.zeros(n_rows, dtype=np.int64), []))
    if level == "system":
        seen: dict[tuple[int, int], int] = {}
        for i, key in enumerate(zip(item_codes.tolist(), system_codes.tolist(), strict=True)):
            if key in seen:
                raise ValueError(f"items/systems: rows {seen[key]} and {i} have the same item and system; "
                                 "level='system' needs one row per item and system")
            seen[key] = i
    group_codes = {"none": np.zeros(n_rows, dtype=np.int64), "item": item_codes, "system": system_codes}[group_by]

    results: list[dict[str, Any]] = []
    baselines: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    n_items = int(item_codes.max()) + 1 if n_rows else 0
    for dim, hv in human_values.items():
        present_h = np.array([not _missing(v) for v in hv], dtype=bool)
        const = _constant_rows(hv, present_h, labels_only, item_codes, system_codes, group_codes)
        rows_of: dict[str, _Rows] = {}
        missing: dict[str, int] = {}
        masks: dict[str, np.ndarray] = {}
        for name, mv in values.items():
            present_m = np.array([not _missing(v) for v in mv], dtype=bool)
            mask = present_h & present_m
            masks[name] = mask
            missing[name] = int((present_h & ~present_m).sum())
            idx = np.flatnonzero(mask)
            h = np.asarray(hv)[idx] if not labels_only else [hv[i] for i in idx]
            m = np.asarray(mv)[idx] if not labels_only else [mv[i] for i in idx]
            rows_of[name] = _Rows(h, m, item_codes[idx], system_codes[idx], group_codes[idx])
        for stat in names:
            block = _evaluate_statistic(stat, dim, level, group_by, rows_of, masks, missing, len(system_names),
                                        n_items, confidence_level, n_resamples, n_permutations, seed, compare)
            baseline = _baseline(stat, dim, level, group_by, const, len(system_names), n_permutations, seed)
            for entry in block[0]:
                entry["includes_baseline"] = _includes(entry["ci"], baseline["value"])
            results.extend(block[0])
            baselines.append(baseline)
            comparisons.extend(block[1])
    out: dict[str, Any] = {"rows": n_rows, "results": results, "baselines": baselines, "comparisons": comparisons}
    if level == "system":
        out["incomplete_systems"] = _incomplete_systems(item_codes, system_codes, system_names)
    return out


def _incomplete_systems(item_codes: np.ndarray, system_codes: np.ndarray, names: list[Any]) -> dict[str, int]:
    """Each system that lacks some of the table's items, with how many it lacks: at system level
    every system is averaged over the items all share, so one short system cuts every other."""
    n_items = np.unique(item_codes).size
    have = np.zeros(len(names), dtype=np.int64)
    for code in np.unique(np.stack([system_codes, item_codes]), axis=1)[0]:
        have[code] += 1
    return {str(names[i]): int(n_items - have[i]) for i in range(len(names)) if have[i] < n_items}


def _constant_rows(hv: Any, present: np.ndarray, labels: bool, item: np.ndarray, system: np.ndarray,
                   group: np.ndarray) -> _Rows:
    """The rows with a human score, scored by a constant metric: 0, or for labels the most common
    human label (the majority-class baseline)."""
    idx = np.flatnonzero(present)
    if labels:
        h = [hv[i] for i in idx]
        counts: dict[Any, int] = {}
        for v in h:
            counts[v] = counts.get(v, 0) + 1
        top = max(counts, key=lambda v: counts[v]) if counts else None
        return _Rows(h, [top] * len(h), item[idx], system[idx], group[idx])
    h_arr = np.asarray(hv)[idx]
    return _Rows(h_arr, np.zeros(idx.size), item[idx], system[idx], group[idx])


def _baseline(stat: str, dim: str, level: str, group_by: str, const: _Rows, n_systems: int, n_permutations: int,
              seed: int | None) -> dict[str, Any]:
    """The statistic's value for a constant metric (every row the same score), the level a metric
    must beat to say anything: the share of tied human pairs for ``acc23``/``acc_eq``, every system
    tied for ``spa``/``pairwise_accuracy``; None with a ``reason`` where it is undefined
    (correlations of a constant)."""
    entry: dict[str, Any] = {"human": dim, "level": level, "group_by": group_by, "statistic": stat, "value": None}
    if level == "segment":
        value = _segment_point(stat, const)["value"] if len(const.item) else math.nan
        if not math.isnan(value):
            entry["value"] = float(value)
    else:
        scratch: dict[str, Any] = {"value": None}
        _system_entry(stat, const, n_systems, scratch, 0.95, 0, n_permutations, seed, {})
        entry["value"] = scratch["value"]
    if entry["value"] is None:
        declared = STATISTICS[stat].baseline
        entry["reason"] = declared if declared.startswith("undefined") else "undefined for a constant metric"
    return entry


def _includes(ci: list[float] | None, value: float | None) -> bool | None:
    """Whether the interval holds the baseline's value (None: no interval or no baseline)."""
    if ci is None or value is None:
        return None
    return bool(ci[0] <= value <= ci[1])


def _evaluate_statistic(stat: str, dim: str, level: str, group_by: str, rows_of: dict[str, _Rows],
                        masks: dict[str, np.ndarray], missing: dict[str, int], n_systems: int, n_items: int,
                        confidence_level: float, n_resamples: int, n_permutations: int, seed: int | None,
                        compare: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    out: dict[str, dict[str, Any]] = {}
    human_cache: dict[bytes, list[np.ndarray]] = {}  # spa: the signs and human p-values, per item set
    spa_boot = _spa_boots(rows_of, n_systems, n_resamples, n_permutations, seed, human_cache) \
        if stat == "spa" and level == "system" and n_resamples else {}
    for name, r in rows_of.items():
        entry: dict[str, Any] = {"metric": name, "human": dim, "level": level, "group_by": group_by,
                                 "statistic": stat, "value": None, "ci": None, "n": 0, "groups": 0,
                                 "groups_skipped": 0, "missing": missing[name], "rank": None}
        if stat == "acc_eq":
            entry["threshold"] = None
        if level == "segment":
            point = _segment_point(stat, r)
            entry.update({k: v for k, v in point.items() if k != "value"})
            value = point["value"]
            if math.isnan(value):
                entry["reason"] = "no rows with both scores" if len(r.item) == 0 else _REASONS["segment"]
                if stat == "acc_eq":
                    entry["threshold"] = None
            else:
                entry["value"] = value
                if n_resamples:
                    boot = np.concatenate([_segment_boot(stat, r, group_by, c)
                                           for c in resample.item_counts(n_items, n_resamples, seed)])
                    entry["ci"] = resample.interval(boot, confidence_level)
        else:
            _system_entry(stat, r, n_systems, entry, confidence_level, n_resamples, n_permutations, seed,
                          human_cache, spa_boot.get(name))
        out[name] = entry
    comps = _compare(stat, dim, level, group_by, rows_of, masks, out, n_systems, n_resamples, n_permutations, seed) \
        if compare and n_resamples else []
    return list(out.values()), comps


def _spa_boots(rows_of: dict[str, _Rows], n_systems: int, n_resamples: int, n_permutations: int,
               seed: int | None, human_cache: dict[bytes, list[np.ndarray]]) -> dict[str, np.ndarray]:
    """Each metric's spa on every resample of its common items (:func:`stats.spa_resampled`), the
    metrics that share their items and human matrix in one pass (the resamples and the human
    counts are theirs in common). The signs drawn here, and the human p-values, go into
    ``human_cache`` for the point values (:func:`_system_entry`)."""
    shared: dict[bytes, tuple[np.ndarray, list[tuple[str, np.ndarray]]]] = {}
    for name, r in rows_of.items():
        hmat, mmat, common = _system_matrix(r, n_systems)
        if common.size == 0 or n_systems < 2:
            continue
        shared.setdefault(common.tobytes() + hmat.tobytes(), (hmat, []))[1].append((name, mmat))
    out: dict[str, np.ndarray] = {}
    for key, (hmat, named) in shared.items():
        signs = stats.spa_signs(hmat.shape[1], n_permutations, seed)
        human_cache[key] = [signs, stats.p_values(hmat, signs)]
        boot = stats.spa_resampled(hmat, np.stack([m for _, m in named]), signs, n_resamples, seed)
        out.update((name, boot[k]) for k, (name, _) in enumerate(named))
    return out


def _system_entry(stat: str, r: _Rows, n_systems: int, entry: dict[str, Any], confidence_level: float,
                  n_resamples: int, n_permutations: int, seed: int | None,
                  human_cache: dict[bytes, list[np.ndarray]], spa_boot: np.ndarray | None = None) -> None:
    hmat, mmat, common = _system_matrix(r, n_systems)
    if common.size == 0 or n_systems < 2:
        entry.update(reason="fewer than two systems share an item on which all have both scores")
        return
    signs = None
    if stat == "spa":
        # the signs and the human p-values are the same for every metric on these items: once
        key = common.tobytes() + hmat.tobytes()
        if key not in human_cache:
            signs = stats.spa_signs(common.size, n_permutations, seed)
            human_cache[key] = [signs, stats.p_values(hmat, signs)]
        signs, human_p = human_cache[key]
        value = float(1.0 - np.abs(human_p - stats.p_values(mmat, signs)).mean())
    elif stat == "acc_eq":
        v, t = stats.acc_eq_sweep(stats.acc_eq_pairs(hmat.mean(axis=1)[None], mmat.mean(axis=1)[None],
                                                     np.ones((1, n_systems), dtype=bool)))
        value = float(v[0])
        entry["threshold"] = float(t[0])
    else:
        value = float(_system_values(stat, hmat.mean(axis=1), mmat.mean(axis=1), None))
    entry.update(n=n_systems, groups=1, groups_skipped=0)
    if math.isnan(value):
        entry.update(reason=_REASONS["system"], n=0, groups=0, groups_skipped=1, threshold=None) \
            if stat == "acc_eq" else entry.update(reason=_REASONS["system"], n=0, groups=0, groups_skipped=1)
        return
    entry["value"] = value
    if not n_resamples:
        return
    boot = []
    if signs is not None:
        assert spa_boot is not None  # _spa_boots: every metric with common items
        boot.append(spa_boot)
    else:
        for counts in resample.item_counts(common.size, n_resamples, seed):
            total = counts.sum(axis=1, keepdims=True)
            boot.append(_system_values(stat, counts @ hmat.T / total, counts @ mmat.T / total, None))
    entry["ci"] = resample.interval(np.concatenate(boot), confidence_level)


def _compare(stat: str, dim: str, level: str, group_by: str, rows_of: dict[str, _Rows],
             masks: dict[str, np.ndarray], out: dict[str, dict[str, Any]], n_systems: int, k: int,
             n_permutations: int, seed: int | None) -> list[dict[str, Any]]:
    """Every pair of metrics with a value: one-sided permutation p-values; sets ``rank``."""
    named = sorted((n for n, e in out.items() if e["value"] is not None), key=lambda n: (-out[n]["value"], n))
    comps: list[dict[str, Any]] = []
    p_matrix = np.ones((len(named), len(named)))
    draws_cache: dict[int, list[np.ndarray]] = {}

    def draws_for(rows: int) -> Callable[[], Iterator[np.ndarray]]:
        if rows not in draws_cache:
            draws_cache[rows] = list(resample.permutation_draws(k, rows, seed))
        return lambda: iter(draws_cache[rows])

    if stat == "acc_eq" and level == "segment":
        pvals = _acc_eq_pairs_test(named, rows_of, masks, k, seed)
    fast: dict[tuple[str, str], float] = {}
    same_rows = len({masks[n].tobytes() for n in named}) == 1
    if stat == "pearson" and level == "segment" and same_rows and len(named) > 1 \
            and int(masks[named[0]].sum()) >= _FAST_ROWS:
        fast = _pearson_permutations(named, rows_of, k, seed)
    for i, a in enumerate(named):
        for j in range(i + 1, len(named)):
            b = named[j]
            common = masks[a] & masks[b]
            ra, rb = _restrict(rows_of[a], masks[a], common), _restrict(rows_of[b], masks[b], common)
            va = out[a]["value"] if (common == masks[a]).all() else _value_on(stat, level, ra, n_systems,
                                                                                n_permutations, seed)
            vb = out[b]["value"] if (common == masks[b]).all() else _value_on(stat, level, rb, n_systems,
                                                                                n_permutations, seed)
            hi, lo, ri, rl = (a, b, ra, rb) if (va >= vb or math.isnan(vb)) else (b, a, rb, ra)
            delta = abs(va - vb) if not (math.isnan(va) or math.isnan(vb)) else None
            if delta is None:
                p = None
            elif stat == "acc_eq" and level == "segment":
                p = pvals[(hi, lo)]
            elif (hi, lo) in fast:
                p = fast[(hi, lo)]
            else:
                p = _permutation(stat, level, ri, rl, n_systems, n_permutations, seed, draws_for)
            if p is not None and hi == a:
                p_matrix[i, j] = p
            comps.append({"human": dim, "level": level, "group_by": group_by, "statistic": stat, "a": hi, "b": lo,
                          "delta": delta, "p_value": p})
    for name, rank in zip(named, assign_ranks(p_matrix), strict=True):
        out[name]["rank"] = rank
    return comps


_FAST_ROWS = 1000  # Pearson comparisons on this many rows or more take the moment path


def _pearson_permutations(named: list[str], rows_of: dict[str, _Rows], k: int,
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


def _restrict(r: _Rows, mask: np.ndarray, common: np.ndarray) -> _Rows:
    keep = common[np.flatnonzero(mask)]
    return r.take(np.flatnonzero(keep))


def _value_on(stat: str, level: str, r: _Rows, n_systems: int, n_permutations: int, seed: int | None) -> float:
    if level == "segment":
        return float(_segment_point(stat, r)["value"])
    hmat, mmat, common = _system_matrix(r, n_systems)
    if common.size == 0:
        return math.nan
    if stat == "spa":
        return float(_system_values(stat, hmat, mmat, stats.spa_signs(common.size, n_permutations, seed)))
    return float(_system_values(stat, hmat.mean(axis=1), mmat.mean(axis=1), None))


def _permutation(stat: str, level: str, hi: _Rows, lo: _Rows, n_systems: int, n_permutations: int,
                 seed: int | None, draws_for: Callable[[int], Callable[[], Iterator[np.ndarray]]]) -> float:
    labels = stat in LABEL_STATISTICS
    if level == "segment":
        # rows in group order (table order within a group), the order in which mt-metrics-eval's
        # _ReshapeAndFilter lays out the rows its swap draws follow
        order = np.argsort(hi.group, kind="stable")
        hi, lo = hi.take(order), lo.take(order)
        fn = _segment_batch(stat, hi)
        if labels:
            codes, inverse = np.unique(np.array(list(hi.m) + list(lo.m), dtype=object).astype(str), return_inverse=True)
            del codes
            a, b = inverse[:len(hi.m)].astype(np.float64), inverse[len(hi.m):].astype(np.float64)
            names = list(hi.m) + list(lo.m)
            lookup = {float(c): names[i] for i, c in enumerate(inverse)}

            def label_fn(batch: np.ndarray) -> np.ndarray:
                return fn(np.array([[lookup[float(v)] for v in row] for row in batch], dtype=object))

            return resample.permutation_p(label_fn, a, b, draws_for(a.size), transform=False)
        return resample.permutation_p(fn, np.asarray(hi.m, dtype=np.float64), np.asarray(lo.m, dtype=np.float64),
                                      draws_for(len(hi.item)))
    hmat, ma, _ = _system_matrix(hi, n_systems)
    _, mb, _ = _system_matrix(lo, n_systems)
    if stat == "spa":
        signs = stats.spa_signs(hmat.shape[1], n_permutations, seed)
        shape = hmat.shape

        def spa_fn(batch: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.nan_to_num(stats.spa_values(hmat, batch.reshape(-1, *shape), signs), nan=0.0)
            return out

        return resample.permutation_p(spa_fn, ma.ravel(), mb.ravel(), draws_for(ma.size))
    hm = hmat.mean(axis=1)

    def sys_fn(batch: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.nan_to_num(_system_values(stat, hm, batch, None), nan=0.0)
        return out

    return resample.permutation_p(sys_fn, ma.mean(axis=1), mb.mean(axis=1), draws_for(n_systems))


def _acc_eq_pairs_test(named: list[str], rows_of: dict[str, _Rows], masks: dict[str, np.ndarray], k: int,
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
            r = _restrict(rows_of[name], masks[name], common)
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
