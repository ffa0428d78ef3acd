"""One metric against people: ``agreement(judge_scores, human_scores)`` and the correlations and
label statistics it reports, the one-metric case of :mod:`textgen_metrics.meta`'s study.

For scores (G-Eval's 1 to 5, a faithfulness share, any number): Spearman's rho, Kendall's
tau-b and Pearson's r, each with a percentile bootstrap confidence interval. For labels (a
pairwise verdict, "yes"/"no", classes): Cohen's kappa (optionally weighted) and accuracy, with
intervals too. An example whose judge score is ``None`` (the judge failed on it) is left out
and counted in ``judge_missing``; one without a human score likewise in ``human_missing``.

The scores' statistics are meta-evaluation's (:data:`textgen_metrics.stats.statistic.STATISTICS`'s
``spearman``, ``kendall`` and ``pearson``) on the rows it builds for one metric with no grouping
(one item per example), so each is computed once in the package: the values by the statistic's
segment level, the intervals by its resampled form over
:func:`textgen_metrics.stats.resample.item_counts`' stream (resample ``r`` is row ``r`` of
``numpy.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``), the same as
``meta_evaluate(..., group_by="none")`` with the same seed gives. This module keeps the one-group
forms that statistic calls (:func:`pearson`, :func:`spearman`) and the labels' statistics.

The point estimates equal SciPy's ``pearsonr``, ``spearmanr`` and ``kendalltau`` (variant b) of
``(judge, human)`` and scikit-learn's ``cohen_kappa_score`` and ``accuracy_score``, value for
value (the tests compare them on generated data). They are written on NumPy, following SciPy
1.17's own sequence of operations, so that neither library is a dependency of this package; where
a statistic is undefined (a constant column, fewer than two examples, kappa with no expected
disagreement), where SciPy and scikit-learn give NaN, the value here is ``None``. A resample on
which a statistic is undefined is left out of that interval; ``None`` when no resample defines it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..significance import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from .resample import check_interval, item_counts
from .resample import interval as _interval

if TYPE_CHECKING:
    from .statistic import Rows

__all__ = ["agreement", "pearson", "spearman", "kendall_tau", "cohen_kappa"]

_KINDS = ("auto", "scores", "labels")
_WEIGHTS = (None, "linear", "quadratic")


# -- point estimates (SciPy's and scikit-learn's definitions) ------------------------------

def _float(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def pearson(x: ArrayLike, y: ArrayLike) -> float | None:
    """Pearson's r as ``scipy.stats.pearsonr(x, y).statistic``; None where SciPy gives NaN."""
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xa.size < 2 or (xa == xa[0]).all() or (ya == ya[0]).all():
        return None
    xm = xa - np.mean(xa, axis=-1, keepdims=True)
    ym = ya - np.mean(ya, axis=-1, keepdims=True)
    xmax = np.max(np.abs(xm), axis=-1, keepdims=True)
    ymax = np.max(np.abs(ym), axis=-1, keepdims=True)
    normxm = xmax * np.linalg.norm(xm / xmax, ord=2, axis=-1, keepdims=True)
    normym = ymax * np.linalg.norm(ym / ymax, ord=2, axis=-1, keepdims=True)
    r = np.clip(np.vecdot(xm / normxm, ym / normym, axis=-1), -1.0, 1.0)  # type: ignore[call-overload]
    return _float(np.round(r) if xa.size == 2 else r)  # exactly 1 or -1 for two points, as SciPy


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (1-based; ties share the mean of their ranks), as ``scipy.stats.rankdata``."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(first)
    counts = np.diff(np.r_[starts, values.size])
    mid = (starts + 1) + (counts - 1) / 2
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = np.repeat(mid, counts)
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float | None:
    """Spearman's rho as ``scipy.stats.spearmanr(x, y).statistic``: the correlation
    (``numpy.corrcoef``) of the average ranks; None where SciPy gives NaN."""
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xa.size < 2 or (xa == xa[0]).all() or (ya == ya[0]).all():
        return None
    rs = np.corrcoef(np.column_stack((_ranks(xa), _ranks(ya))), rowvar=False)
    return _float(rs[1, 0])


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float | None:
    """Kendall's tau-b as ``scipy.stats.kendalltau(x, y).statistic``; None where SciPy gives NaN:
    meta-evaluation's ``kendall`` on one group (``y`` as the human score, ``x`` the metric's)."""
    return _score_value("kendall", _one_group(np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64)))


def tied_pairs(values: np.ndarray) -> int:
    """The pairs of equal values (of equal rows, for a 2-D array): Kendall's tie counts."""
    _, counts = np.unique(values, return_counts=True, axis=0)
    return int((counts * (counts - 1) // 2).sum())


def _weight_matrix(k: int, weights: str | None) -> np.ndarray:
    if weights is None:
        w = np.ones((k, k), dtype=np.float64)
        w.flat[:: k + 1] = 0
        return w
    w = np.zeros((k, k), dtype=np.float64)
    w += np.arange(k)
    out: np.ndarray = np.abs(w - w.T) if weights == "linear" else (w - w.T) ** 2
    return out


def _kappa_from_confusion(confusion: np.ndarray, weights: str | None) -> np.ndarray:
    """Cohen's kappa of each confusion matrix (rows: ``confusion[r]``), as scikit-learn's."""
    k = confusion.shape[-1]
    sum0 = confusion.sum(axis=-2)
    sum1 = confusion.sum(axis=-1)
    expected = sum0[..., :, None] * sum1[..., None, :] / sum0.sum(axis=-1)[..., None, None]
    w = _weight_matrix(k, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (w * confusion).sum(axis=(-2, -1)) / (w * expected).sum(axis=(-2, -1))
    kappa: np.ndarray = 1 - ratio
    return kappa


def cohen_kappa(a: Sequence[Any], b: Sequence[Any], weights: str | None = None) -> float | None:
    """Cohen's kappa as ``sklearn.metrics.cohen_kappa_score(a, b, weights=weights)`` (labels in
    sorted order for the linear and quadratic weights); None where scikit-learn gives NaN."""
    codes_a, codes_b, labels = _label_codes(list(a), list(b))
    k = len(labels)
    if not codes_a.size:
        return None
    confusion = np.bincount(codes_a * k + codes_b, minlength=k * k).reshape(k, k).astype(np.float64)
    sum0, sum1 = np.sum(confusion, axis=0), np.sum(confusion, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    w = _weight_matrix(k, weights)
    denominator = np.sum(w * expected)
    if denominator == 0:
        return None
    return _float(1 - np.sum(w * confusion) / denominator)


def _label_codes(a: list[Any], b: list[Any]) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    try:
        labels = sorted(set(a) | set(b))
    except TypeError:
        raise TypeError("labels: judge and human labels mix types that cannot be ordered (e.g. numbers and "
                        "strings); give labels of one type") from None
    index = {label: i for i, label in enumerate(labels)}
    return (np.array([index[v] for v in a], dtype=np.int64), np.array([index[v] for v in b], dtype=np.int64),
            labels)


# -- scores: meta-evaluation's statistics on one group ---------------------------------------

# agreement's result key -> the statistic of STATISTICS that gives it
_SCORE_STATISTICS = {"spearman": "spearman", "kendall_tau": "kendall", "pearson": "pearson"}


def _one_group(human: np.ndarray, metric: np.ndarray) -> Rows:
    """The rows meta-evaluation builds for one metric with no grouping: one item per example."""
    from .statistic import Rows  # statistic imports this module's pearson and spearman

    item = np.arange(human.size)
    zeros = np.zeros(human.size, dtype=np.int64)
    return Rows(human, metric, item, zeros, zeros)


def _score_value(name: str, rows: Rows) -> float | None:
    from .statistic import STATISTICS  # statistic imports this module's pearson and spearman

    return _float(STATISTICS[name].segment(rows)["value"]) if rows.item.size else None


def _score_statistics(judge: np.ndarray, human: np.ndarray, n_resamples: int, confidence_level: float,
                      seed: int | None) -> dict[str, Any]:
    """Each score statistic's value and (with resamples) interval: meta-evaluation's segment level
    for one metric, ungrouped, resampling the examples as it resamples items.

    Spearman's rows hold the judge in the human's place: its one-group value is ``np.corrcoef``'s
    covariance divided by the second column's standard deviation, then by the first's, so
    ``spearmanr(judge, human)`` (this function's value, SciPy's order of the arguments) and
    meta-evaluation's ``spearmanr(human, metric)`` can differ in the last bit (on about one input
    in six); its resampled form (the Pearson of the ranks) is symmetric. Kendall's tau-b divides
    by the metric's untied pairs first, as ``kendalltau(judge, human)``; Pearson is symmetric."""
    from .statistic import STATISTICS  # statistic imports this module's pearson and spearman

    values: dict[str, Any] = {}
    intervals: dict[str, Any] = {}
    for key, name in _SCORE_STATISTICS.items():
        rows = _one_group(judge, human) if name == "spearman" else _one_group(human, judge)
        values[key] = _score_value(name, rows)
        if not (n_resamples and judge.size):
            continue
        if values[key] is None:  # undefined on the examples (a constant, one example): on every resample
            intervals[f"{key}_ci"] = None
            continue
        statistic = STATISTICS[name]
        boot = np.concatenate([statistic.segment_resampled(rows, "none", counts)
                               for counts in item_counts(judge.size, n_resamples, seed)])
        intervals[f"{key}_ci"] = _interval(boot, confidence_level)
    return {**values, **intervals}


# -- labels: resampling ------------------------------------------------------------------------

def _label_intervals(a: np.ndarray, b: np.ndarray, k: int, weights: str | None, n_resamples: int,
                     confidence_level: float, seed: int | None) -> dict[str, list[float] | None]:
    kappas, accuracies = [], []
    cell = a * k + b
    onehot = np.zeros((a.size, k * k))
    onehot[np.arange(a.size), cell] = 1
    for w in item_counts(a.size, n_resamples, seed):
        confusion = (w @ onehot).reshape(-1, k, k)
        kappas.append(_kappa_from_confusion(confusion, weights))
        accuracies.append((w * (a == b)).sum(axis=1) / w.sum(axis=1))
    return {"cohen_kappa": _interval(np.concatenate(kappas), confidence_level),
            "accuracy": _interval(np.concatenate(accuracies), confidence_level)}


# -- the public function -----------------------------------------------------------------------

def _as_list(name: str, values: Any) -> list[Any]:
    if values is None:
        raise ValueError(f"{name}: missing (got None); pass a list with one entry per example")
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name}: expected a list with one entry per example, got {type(values).__name__}")
    return list(values)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def agreement(judge_scores: Sequence[Any], human_scores: Sequence[Any], *, kind: str = "auto",
              kappa_weights: str | None = None, confidence_level: float = DEFAULT_CONFIDENCE,
              n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED) -> dict[str, Any]:
    """How well ``judge_scores`` agree with ``human_scores`` (one entry per example each).

    ``kind``: ``"scores"`` (numbers: Spearman, Kendall tau-b, Pearson), ``"labels"`` (any
    hashable labels: Cohen's kappa and accuracy) or ``"auto"`` (labels when any value is a
    string or a bool, scores otherwise; give ``"labels"`` for integer classes).
    ``kappa_weights``: None, ``"linear"`` or ``"quadratic"`` (for ordered labels, as
    scikit-learn's ``weights``). Examples whose judge score (or human score) is None are left
    out and counted in ``judge_missing`` (``human_missing``).

    Returns ``{"kind", "n" (examples used), "judge_missing", "human_missing", <statistic>,
    <statistic>_ci: [low, high] ..., "confidence_level", "n_resamples", "seed"}``; a statistic
    that is undefined on the data (a constant column, fewer than two examples) is None.
    Intervals: percentile bootstrap over examples, seeded (``seed=None``: a fresh one each
    call); ``n_resamples=0`` leaves them out.
    """
    judge, human = _as_list("judge_scores", judge_scores), _as_list("human_scores", human_scores)
    if len(judge) != len(human):
        raise ValueError(f"inputs differ in length (judge_scores={len(judge)}, human_scores={len(human)}); "
                         "each needs one entry per example")
    if kind not in _KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {list(_KINDS)}")
    if kappa_weights not in _WEIGHTS:
        raise ValueError(f"kappa_weights: {kappa_weights!r} is not one of {list(_WEIGHTS)}")
    check_interval(confidence_level, n_resamples, seed)
    pairs = [(i, j, h) for i, (j, h) in enumerate(zip(judge, human, strict=True)) if j is not None and h is not None]
    judge_missing = sum(j is None for j in judge)
    human_missing = sum(h is None and j is not None for j, h in zip(judge, human, strict=True))
    if kind == "auto":
        kind = "labels" if any(isinstance(v, (str, bool)) for _, j, h in pairs for v in (j, h)) else "scores"
    out: dict[str, Any] = {"kind": kind, "n": len(pairs), "judge_missing": judge_missing,
                           "human_missing": human_missing}
    if kind == "scores":
        for name, column in (("judge_scores", 1), ("human_scores", 2)):
            for p in pairs:
                v = p[column]
                if not _is_number(v):
                    raise TypeError(f"{name}[{p[0]}]: expected a number (or None), got {type(v).__name__}; "
                                    "for labels pass kind='labels'")
                if not math.isfinite(v):
                    raise ValueError(f"{name}[{p[0]}]: {v!r} is not a finite number")
        x = np.array([p[1] for p in pairs], dtype=np.float64)
        y = np.array([p[2] for p in pairs], dtype=np.float64)
        out.update(_score_statistics(x, y, n_resamples, confidence_level, seed))
    else:
        for name, column in (("judge_scores", 1), ("human_scores", 2)):
            for p in pairs:
                try:
                    hash(p[column])
                except TypeError:
                    raise TypeError(f"{name}[{p[0]}]: a label must be a string, number or bool, got "
                                    f"{type(p[column]).__name__}") from None
        a_codes, b_codes, labels = _label_codes([p[1] for p in pairs], [p[2] for p in pairs])
        kappa = cohen_kappa([p[1] for p in pairs], [p[2] for p in pairs], kappa_weights) if pairs else None
        accuracy = float(np.mean(a_codes == b_codes)) if pairs else None
        out.update(cohen_kappa=kappa, accuracy=accuracy, labels=labels, kappa_weights=kappa_weights)
        if n_resamples and pairs:
            out.update({f"{k}_ci": v for k, v in _label_intervals(
                a_codes, b_codes, len(labels), kappa_weights, n_resamples, confidence_level, seed).items()})
    out.update(confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    return out
