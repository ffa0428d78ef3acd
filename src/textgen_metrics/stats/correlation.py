"""One metric against people: ``agreement(judge_scores, human_scores)`` and the correlations and
label statistics it reports (the one-metric case of :mod:`textgen_metrics.meta`'s study).

For scores (G-Eval's 1 to 5, a faithfulness share, any number): Spearman's rho, Kendall's
tau-b and Pearson's r, each with a percentile bootstrap confidence interval. For labels (a
pairwise verdict, "yes"/"no", classes): Cohen's kappa (optionally weighted) and accuracy, with
intervals too. An example whose judge score is ``None`` (the judge failed on it) is left out
and counted in ``judge_missing``; one without a human score likewise in ``human_missing``.

The point estimates equal SciPy's ``pearsonr``, ``spearmanr`` and ``kendalltau`` (variant b) and
scikit-learn's ``cohen_kappa_score`` and ``accuracy_score``, value for value (the tests compare
them on generated data). They are written here on NumPy, following SciPy 1.17's own sequence of
operations, so that neither library is a dependency of this package; where a statistic is
undefined (a constant column, fewer than two examples, kappa with no expected disagreement),
where SciPy and scikit-learn give NaN, the value here is ``None``.

The intervals resample examples with replacement: resample ``r`` is row ``r`` of
``numpy.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``. Each statistic is
computed on every resample at once from the resample's counts of each example (a weighted
form of the same statistic: ranks, ties and pairs counted with multiplicity), so the whole
interval costs a few matrix products instead of ``n_resamples`` calls. Kendall's tau counts
concordant minus discordant pairs as ``w' S w / 2`` with ``S[i, j] = sign(x_i - x_j) *
sign(y_i - y_j)``, built in column blocks: exact integers, ``O(n_resamples * n^2)`` time and
``O(n_resamples * n)`` memory. A resample on which the statistic is undefined is left out of
that interval; ``None`` when no resample defines it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..significance import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from .resample import check_interval, item_counts
from .resample import interval as _interval

__all__ = ["agreement", "pearson", "spearman", "kendall_tau", "cohen_kappa"]

_KINDS = ("auto", "scores", "labels")
_WEIGHTS = (None, "linear", "quadratic")
_BLOCK = 256  # columns of Kendall's sign matrix built at once


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


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(code of each value among the sorted distinct values, order grouping equal codes,
    start of each group in that order)."""
    _, inverse = np.unique(values, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, inverse[order][1:] != inverse[order][:-1]])
    return inverse, order, starts


def _group_counts(weights: np.ndarray, order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per resample (row), the total weight of each group of equal values."""
    return np.add.reduceat(weights[:, order], starts, axis=1)


def _concordance(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row of ``weights``: concordant minus discordant pairs, with multiplicity (exact)."""
    total = np.zeros(weights.shape[0], dtype=np.float64)
    for start in range(0, x.size, _BLOCK):
        block = slice(start, start + _BLOCK)
        signs = np.sign(x[:, None] - x[None, block]) * np.sign(y[:, None] - y[None, block])
        total += ((weights @ signs) * weights[:, block]).sum(axis=1)
    return total / 2


def _kendall_rows(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each resample given by a row of example counts (NaN: undefined)."""
    n = weights.sum(axis=1)
    tot = n * (n - 1) / 2
    ties = []
    for values in (x, y):
        m = _group_counts(weights, *_codes(values)[1:])
        ties.append((m * (m - 1) / 2).sum(axis=1))
    xtie, ytie = ties
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = _concordance(x, y, weights) / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau[(xtie == tot) | (ytie == tot)] = np.nan
    out: np.ndarray = np.clip(tau, -1.0, 1.0)
    return out


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float | None:
    """Kendall's tau-b as ``scipy.stats.kendalltau(x, y).statistic``; None where SciPy gives NaN."""
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xa.size < 2:
        return None
    size = xa.size
    tot = size * (size - 1) // 2
    xtie = tied_pairs(xa)
    ytie = tied_pairs(ya)
    if xtie == tot or ytie == tot:
        return None
    con_minus_dis = int(_concordance(xa, ya, np.ones((1, size)))[0])
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return _float(np.minimum(1.0, max(-1.0, tau)))


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


# -- resampling ------------------------------------------------------------------------------

Codes = tuple[np.ndarray, np.ndarray, np.ndarray]


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """Pearson's r of each resample (rows of ``w``), NaN where not ``defined``."""
    n = w.sum(axis=1, keepdims=True)
    dx = x - (w * x).sum(axis=1, keepdims=True) / n
    dy = y - (w * y).sum(axis=1, keepdims=True) / n
    vx, vy = (w * dx * dx).sum(axis=1), (w * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (w * dx * dy).sum(axis=1) / np.sqrt(vx * vy)
    r[~defined] = np.nan
    out: np.ndarray = np.clip(r, -1.0, 1.0)
    return out


def _weighted_ranks(codes: Codes, m: np.ndarray) -> np.ndarray:
    """Average ranks of each example within each resample, from the resample's count ``m`` of
    each distinct value (ties and repeats share their ranks)."""
    below = np.cumsum(m, axis=1) - m
    ranks: np.ndarray = (below + (m + 1) / 2)[:, codes[0]]
    return ranks


def _score_intervals(x: np.ndarray, y: np.ndarray, n_resamples: int, confidence_level: float,
                     seed: int | None) -> dict[str, list[float] | None]:
    parts: dict[str, list[np.ndarray]] = {"spearman": [], "kendall_tau": [], "pearson": []}
    xc, yc = _codes(x), _codes(y)
    for w in item_counts(x.size, n_resamples, seed):
        mx, my = _group_counts(w, *xc[1:]), _group_counts(w, *yc[1:])
        # a resample that drew a single distinct value of x or of y has no correlation
        defined = ((mx > 0).sum(axis=1) > 1) & ((my > 0).sum(axis=1) > 1)
        parts["pearson"].append(_weighted_pearson(x[None, :], y[None, :], w, defined))
        parts["spearman"].append(_weighted_pearson(_weighted_ranks(xc, mx), _weighted_ranks(yc, my), w, defined))
        parts["kendall_tau"].append(_kendall_rows(x, y, w))
    return {k: _interval(np.concatenate(v), confidence_level) for k, v in parts.items()}


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
        out.update(spearman=spearman(x, y), kendall_tau=kendall_tau(x, y), pearson=pearson(x, y))
        if n_resamples and x.size:
            cis = _score_intervals(x, y, n_resamples, confidence_level, seed)
            out.update({f"{k}_ci": v for k, v in cis.items()})
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
