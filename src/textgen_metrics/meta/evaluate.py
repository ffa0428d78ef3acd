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
from ..stats.correlation import pearson as _pearson1
from ..stats.statistic import STATISTICS, Draws, Rows, Statistic, system_matrix

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


def _check_arguments(statistics: Any, level: str, group_by: str, items: Any, systems: Any, confidence_level: Any,
                     n_resamples: Any, n_permutations: Any, seed: Any) -> list[Statistic]:
    """The declared statistics named (each once), checked with the level, the grouping, the
    columns they need and the draws' arguments."""
    if level not in LEVELS:
        raise ValueError(f"level: {level!r} is not one of {list(LEVELS)}")
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by: {group_by!r} is not one of {list(GROUPINGS)}")
    names = [statistics] if isinstance(statistics, str) else _as_list("statistics", statistics)
    if not names:
        raise ValueError(f"statistics: empty; choose from {', '.join(STATISTICS)}")
    for s in names:
        if s not in STATISTICS:
            raise ValueError(f"statistics: unknown statistic {s!r}; choose from {', '.join(STATISTICS)}")
    resample.check_interval(confidence_level, n_resamples, seed)
    if not isinstance(n_permutations, int) or isinstance(n_permutations, bool) or n_permutations < 1:
        raise ValueError(f"n_permutations: {n_permutations!r} must be a positive integer (spa's permutation count)")
    declared = [STATISTICS[s] for s in dict.fromkeys(names)]
    for d in declared:
        if level not in d.levels:
            other = d.levels[0]
            raise ValueError(f"statistics: {d.name!r} is a {other}-level statistic; pass level={other!r}")
        if d.pooled_only and group_by != "none":
            raise ValueError(f"statistics: {d.name!r} controls for the system itself; pass group_by='none'")
        if d.pooled_only and systems is None:
            raise ValueError(f"systems: {d.name!r} controls for the system; pass systems (one per row)")
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
    return declared


def _check_lengths(columns: dict[str, list[Any]], dims: dict[str, list[Any]], human_named: bool, items: Any,
                   systems: Any) -> None:
    lengths = {**{f"human[{k!r}]" if human_named else "human": len(v) for k, v in dims.items()},
               **{f"scores[{k!r}]": len(v) for k, v in columns.items()}}
    if items is not None:
        lengths["items"] = len(_as_list("items", items))
    if systems is not None:
        lengths["systems"] = len(_as_list("systems", systems))
    if len(set(lengths.values())) > 1:
        raise ValueError("inputs differ in length (" + ", ".join(f"{k}={v}" for k, v in lengths.items())
                         + "); every column needs one value per row")


def _check_cells(item_codes: np.ndarray, system_codes: np.ndarray) -> None:
    """At system level: one row per item and system."""
    seen: dict[tuple[int, int], int] = {}
    for i, key in enumerate(zip(item_codes.tolist(), system_codes.tolist(), strict=True)):
        if key in seen:
            raise ValueError(f"items/systems: rows {seen[key]} and {i} have the same item and system; "
                             "level='system' needs one row per item and system")
        seen[key] = i


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
    ``statistics``: names from :data:`textgen_metrics.stats.statistic.STATISTICS`.
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
    human_named = isinstance(human, Mapping)
    dims = ({str(k): _as_list(f"human[{k!r}]", v) for k, v in human.items()} if isinstance(human, Mapping)
            else {"human": _as_list("human", human)})
    if not dims:
        raise ValueError("human: empty mapping; give at least one human column")
    n_rows = len(next(iter(dims.values())))
    _check_lengths(columns, dims, human_named, items, systems)
    declared = _check_arguments(statistics, level, group_by, items, systems, confidence_level, n_resamples,
                                n_permutations, seed)

    labels_only = all(d.labels for d in declared)
    read = _labels if labels_only else _numbers
    values = {k: read(f"scores[{k!r}]", v) for k, v in columns.items()}
    human_values = {k: read(f"human[{k!r}]" if human_named else "human", v) for k, v in dims.items()}
    item_codes, _ = (_codes("items", list(items), sort=False) if items is not None
                     else (np.arange(n_rows, dtype=np.int64), []))
    system_codes, system_names = (_codes("systems", list(systems), sort=True) if systems is not None
                                  else (np.zeros(n_rows, dtype=np.int64), []))
    if level == "system":
        _check_cells(item_codes, system_codes)
    group_codes = {"none": np.zeros(n_rows, dtype=np.int64), "item": item_codes, "system": system_codes}[group_by]

    results: list[dict[str, Any]] = []
    baselines: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    n_items = int(item_codes.max()) + 1 if n_rows else 0
    for dim, hv in human_values.items():
        present_h = np.array([not _missing(v) for v in hv], dtype=bool)
        const = _constant_rows(hv, present_h, labels_only, item_codes, system_codes, group_codes)
        rows_of, masks, missing = _metric_rows(hv, present_h, values, labels_only, item_codes, system_codes,
                                               group_codes)
        for measure in declared:
            block = _evaluate_statistic(measure, dim, level, group_by, rows_of, masks, missing, len(system_names),
                                        n_items, confidence_level, n_resamples, n_permutations, seed, compare)
            baseline = _baseline(measure, dim, level, group_by, const, len(system_names), n_permutations, seed)
            for entry in block[0]:
                entry["includes_baseline"] = _includes(entry["ci"], baseline["value"])
            results.extend(block[0])
            baselines.append(baseline)
            comparisons.extend(block[1])
    out: dict[str, Any] = {"rows": n_rows, "results": results, "baselines": baselines, "comparisons": comparisons}
    if level == "system":
        out["incomplete_systems"] = _incomplete_systems(item_codes, system_codes, system_names)
    return out


def _metric_rows(hv: Any, present_h: np.ndarray, values: dict[str, Any], labels: bool, item: np.ndarray,
                 system: np.ndarray, group: np.ndarray) -> tuple[dict[str, Rows], dict[str, np.ndarray],
                                                                dict[str, int]]:
    """Per metric: the rows it and the human column both have, which of the table's rows those
    are, and how many rows with a human score it lacks."""
    rows_of: dict[str, Rows] = {}
    missing: dict[str, int] = {}
    masks: dict[str, np.ndarray] = {}
    for name, mv in values.items():
        present_m = np.array([not _missing(v) for v in mv], dtype=bool)
        mask = present_h & present_m
        masks[name] = mask
        missing[name] = int((present_h & ~present_m).sum())
        idx = np.flatnonzero(mask)
        h = np.asarray(hv)[idx] if not labels else [hv[i] for i in idx]
        m = np.asarray(mv)[idx] if not labels else [mv[i] for i in idx]
        rows_of[name] = Rows(h, m, item[idx], system[idx], group[idx])
    return rows_of, masks, missing


def _incomplete_systems(item_codes: np.ndarray, system_codes: np.ndarray, names: list[Any]) -> dict[str, int]:
    """Each system that lacks some of the table's items, with how many it lacks: at system level
    every system is averaged over the items all share, so one short system cuts every other."""
    n_items = np.unique(item_codes).size
    have = np.zeros(len(names), dtype=np.int64)
    for code in np.unique(np.stack([system_codes, item_codes]), axis=1)[0]:
        have[code] += 1
    return {str(names[i]): int(n_items - have[i]) for i in range(len(names)) if have[i] < n_items}


def _constant_rows(hv: Any, present: np.ndarray, labels: bool, item: np.ndarray, system: np.ndarray,
                   group: np.ndarray) -> Rows:
    """The rows with a human score, scored by a constant metric: 0, or for labels the most common
    human label (the majority-class baseline)."""
    idx = np.flatnonzero(present)
    if labels:
        h = [hv[i] for i in idx]
        counts: dict[Any, int] = {}
        for v in h:
            counts[v] = counts.get(v, 0) + 1
        top = max(counts, key=lambda v: counts[v]) if counts else None
        return Rows(h, [top] * len(h), item[idx], system[idx], group[idx])
    h_arr = np.asarray(hv)[idx]
    return Rows(h_arr, np.zeros(idx.size), item[idx], system[idx], group[idx])


def _baseline(statistic: Statistic, dim: str, level: str, group_by: str, const: Rows, n_systems: int,
              n_permutations: int, seed: int | None) -> dict[str, Any]:
    """The statistic's value for a constant metric (every row the same score), the level a metric
    must beat to say anything: the share of tied human pairs for ``acc23``/``acc_eq``, every system
    tied for ``spa``/``pairwise_accuracy``; None with a ``reason`` where it is undefined
    (correlations of a constant)."""
    entry: dict[str, Any] = {"human": dim, "level": level, "group_by": group_by, "statistic": statistic.name,
                             "value": None}
    value = statistic.value_on(const, level, n_systems, n_permutations, seed)
    if not math.isnan(value):
        entry["value"] = float(value)
    else:
        declared = statistic.baseline
        entry["reason"] = declared if declared.startswith("undefined") else "undefined for a constant metric"
    return entry


def _includes(ci: list[float] | None, value: float | None) -> bool | None:
    """Whether the interval holds the baseline's value (None: no interval or no baseline)."""
    if ci is None or value is None:
        return None
    return bool(ci[0] <= value <= ci[1])


def _evaluate_statistic(statistic: Statistic, dim: str, level: str, group_by: str, rows_of: dict[str, Rows],
                        masks: dict[str, np.ndarray], missing: dict[str, int], n_systems: int, n_items: int,
                        confidence_level: float, n_resamples: int, n_permutations: int, seed: int | None,
                        compare: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    out: dict[str, dict[str, Any]] = {}
    cache: dict[bytes, list[np.ndarray]] = {}  # what a statistic draws once per item set (spa's signs)
    shared = statistic.shared_resamples(rows_of, n_systems, n_resamples, n_permutations, seed, cache) \
        if level == "system" and n_resamples else {}
    for name, r in rows_of.items():
        entry: dict[str, Any] = {"metric": name, "human": dim, "level": level, "group_by": group_by,
                                 "statistic": statistic.name, "value": None, "ci": None, "n": 0, "groups": 0,
                                 "groups_skipped": 0, "missing": missing[name], "rank": None}
        if statistic.thresholds:
            entry["threshold"] = None
        if level == "segment":
            _segment_entry(statistic, r, group_by, entry, n_items, confidence_level, n_resamples, seed)
        else:
            _system_entry(statistic, r, n_systems, entry, confidence_level, n_resamples, n_permutations, seed,
                          cache, shared.get(name))
        out[name] = entry
    comps = _compare(statistic, dim, level, group_by, rows_of, masks, out, n_systems, n_resamples, n_permutations,
                     seed) if compare and n_resamples else []
    return list(out.values()), comps


def _segment_entry(statistic: Statistic, r: Rows, group_by: str, entry: dict[str, Any], n_items: int,
                   confidence_level: float, n_resamples: int, seed: int | None) -> None:
    point = statistic.segment(r)
    entry.update({k: v for k, v in point.items() if k != "value"})
    value = point["value"]
    if math.isnan(value):
        entry["reason"] = "no rows with both scores" if len(r.item) == 0 else _REASONS["segment"]
        if statistic.thresholds:
            entry["threshold"] = None
        return
    entry["value"] = value
    if n_resamples:
        boot = np.concatenate([statistic.segment_resampled(r, group_by, c)
                               for c in resample.item_counts(n_items, n_resamples, seed)])
        entry["ci"] = resample.interval(boot, confidence_level)


def _system_entry(statistic: Statistic, r: Rows, n_systems: int, entry: dict[str, Any], confidence_level: float,
                  n_resamples: int, n_permutations: int, seed: int | None, cache: dict[bytes, list[np.ndarray]],
                  shared: np.ndarray | None) -> None:
    sm = system_matrix(r, n_systems)
    if sm.items.size == 0 or n_systems < 2:
        entry.update(reason="fewer than two systems share an item on which all have both scores")
        return
    value, threshold = statistic.system_point(sm, n_permutations, seed, cache)
    if threshold is not None:
        entry["threshold"] = threshold
    entry.update(n=n_systems, groups=1, groups_skipped=0)
    if math.isnan(value):
        entry.update(reason=_REASONS["system"], n=0, groups=0, groups_skipped=1)
        if statistic.thresholds:
            entry["threshold"] = None
        return
    entry["value"] = value
    if n_resamples:
        boot = shared if shared is not None else statistic.system_resampled(sm, n_resamples, seed)
        entry["ci"] = resample.interval(boot, confidence_level)


def _compare(statistic: Statistic, dim: str, level: str, group_by: str, rows_of: dict[str, Rows],
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

    at_once = statistic.segment_pair_tests(named, rows_of, masks, k, seed) if level == "segment" else {}
    for i, a in enumerate(named):
        for j in range(i + 1, len(named)):
            b = named[j]
            common = masks[a] & masks[b]
            ra, rb = rows_of[a].restrict(masks[a], common), rows_of[b].restrict(masks[b], common)
            va = out[a]["value"] if (common == masks[a]).all() else statistic.value_on(ra, level, n_systems,
                                                                                       n_permutations, seed)
            vb = out[b]["value"] if (common == masks[b]).all() else statistic.value_on(rb, level, n_systems,
                                                                                       n_permutations, seed)
            hi, lo, ri, rl = (a, b, ra, rb) if (va >= vb or math.isnan(vb)) else (b, a, rb, ra)
            delta = abs(va - vb) if not (math.isnan(va) or math.isnan(vb)) else None
            if delta is None:
                p = None
            elif (hi, lo) in at_once:
                p = at_once[(hi, lo)]
            else:
                p = _permutation(statistic, level, ri, rl, n_systems, n_permutations, seed, draws_for)
            if p is not None and hi == a:
                p_matrix[i, j] = p
            comps.append({"human": dim, "level": level, "group_by": group_by, "statistic": statistic.name,
                          "a": hi, "b": lo, "delta": delta, "p_value": p})
    for name, rank in zip(named, assign_ranks(p_matrix), strict=True):
        out[name]["rank"] = rank
    return comps


def _permutation(statistic: Statistic, level: str, hi: Rows, lo: Rows, n_systems: int, n_permutations: int,
                 seed: int | None, draws_for: Draws) -> float:
    if level == "segment":
        # rows in group order (table order within a group), the order in which mt-metrics-eval's
        # _ReshapeAndFilter lays out the rows its swap draws follow
        order = np.argsort(hi.group, kind="stable")
        return statistic.segment_permutation(hi.take(order), lo.take(order), draws_for)
    a, b = system_matrix(hi, n_systems), system_matrix(lo, n_systems)
    return statistic.system_permutation(a.human, a.metric, b.metric, n_permutations, seed, draws_for)
