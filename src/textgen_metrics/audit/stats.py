"""The statistics of a judge audit, on verdicts and scores already made: no judge is needed, so
stored answers (LLMBar's) are audited as a live judge's are. Each statistic is ``{"value",
"ci"}``: the value on the rows given and a percentile bootstrap interval over pairs or examples
(``confidence_level``, ``n_resamples``, ``seed``; ``seed=None`` draws fresh resamples,
``n_resamples=0`` gives ``ci`` None). A value that is undefined (no row, kappa without expected
disagreement) is None; a resample on which it is undefined is left out of the interval.

- :func:`position_audit` (SPEC "Judge audits", position): ``first[i]`` and ``second[i]`` are the
  verdicts on pair ``i`` asked in the original order and in the swapped order, both read against
  the original order (``"a"``, ``"b"``, ``"tie"``; None: no usable answer); ``gold[i]`` is
  ``"a"`` or ``"b"``. ``positional_agreement``: the share of pairs with the same verdict in both
  orders (LLMBar's ``equal``); ``first_position_rate``: the share of usable verdicts that favour
  the answer shown first (``"a"`` in the original order, ``"b"`` in the swapped one; a tie counts
  half, as it favours neither: 0.5 means no position preference); ``accuracy_first`` /
  ``accuracy_second``: the share of verdicts of that order equal to the gold label (pairs with a
  gold label); ``kappa``: Cohen's kappa between the two orders' verdicts (scikit-learn's
  ``cohen_kappa_score``). ``missing="omit"`` leaves out every pair with an unusable verdict
  (counted in ``missing``); ``missing="as_verdict"`` keeps them, "no verdict" being a verdict of
  its own, as LLMBar's ``evaluate.py`` computes its ``statistics.json``: equal when both orders
  have none, never equal to the gold label. One quirk of that file is reproduced on purpose:
  its kappa codes each verdict as 1 for output 1 and 0 for anything else
  (``int(w) if w in ("0", "1") else 0``), so under ``"as_verdict"`` kappa is over "a" against
  "not a" (a missing verdict falls with "b"); under ``"omit"`` it is over "a", "b" and "tie".
  Flagged when the interval of ``first_position_rate`` excludes 0.5.
- :func:`verbosity_audit`: the paired shift of a score when a content-free filler is appended
  to the judged text (``mean_shift``, in the score's own units) and the share of examples whose
  verdict at ``threshold`` changes (``changed_share``). Flagged when the interval of
  ``mean_shift`` excludes 0.
- :func:`repeat_audit`: ``K`` scores per example; ``icc``: ICC(1,1) (Shrout and Fleiss 1979,
  one-way random effects, single rating: ``(MSB - MSW) / (MSB + (K - 1) MSW)``); ``flip_rate``:
  the share of examples whose verdict (score at or above ``threshold``) is not the same in all
  ``K``; ``spread``: the mean over examples of the scores' standard deviation (population);
  ``repeats_needed``: the fewest repeats (odd, at most :data:`MAX_REPEATS`) whose majority
  verdict agrees with each example's more likely verdict 95% of the time, on average over the
  examples, each example's chance of a positive verdict read from its ``K`` repeats (a judge
  that never flips needs 1; :data:`MAX_REPEATS` means that many or more). Flagged when the
  interval of ``flip_rate`` excludes 0.
- :func:`calibration_audit`: probabilities (the judge's score mapped to [0, 1] over the metric's
  range) against 0/1 labels: ``brier`` (mean of ``(p - y)^2``), ``ece`` over 10 equal-width bins
  (``[0, 0.1)``, ..., ``[0.9, 1.0]``; ``sum_b n_b / N * |mean p_b - share of 1s_b|``), ``bins``
  (count, mean p and share of 1s per bin) and ``ece_recalibrated``: the ECE, on a seeded half of
  the rows, of an isotonic recalibration fitted on the other half (:func:`isotonic_fit`, the
  pool-adjacent-violators algorithm, equal to scikit-learn's ``IsotonicRegression(
  out_of_bounds="clip")``); its interval resamples the measured half with the fit held fixed.

Thresholds apply to scores mapped to [0, 1] over ``score_range``, so that 0.5 is the middle of a
1-5 scale as of a 0-1 share.

Resampling: each probe reduces every row to a few numbers (features) whose sums over the rows
give every statistic, so a resample is its count of each row times the features. Resampling
``n`` rows with replacement is drawing the counts of each distinct row from a multinomial: where
rows are of few kinds (verdicts, pairwise scores) the counts are drawn so, which costs the same
for 10,000 pairs as for 100; otherwise resample ``r`` draws row ``r`` of
``numpy.random.default_rng(seed).integers(0, n, size=(n_resamples, n))`` (in chunks) and costs
one matrix product. The interval is ``numpy.quantile`` (linear) at ``(1 - level) / 2`` and
``1 - (1 - level) / 2`` of the defined resampled values, as ``meta.resample.interval``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["position_audit", "verbosity_audit", "repeat_audit", "calibration_audit", "isotonic_fit",
           "isotonic_predict", "icc_1_1", "repeats_needed", "to_unit", "MISSING", "MAX_REPEATS", "ECE_BINS",
           "Statistic"]

Statistic = dict[str, Any]  # {"value": float | None, "ci": [low, high] | None}
MISSING = ("omit", "as_verdict")
ECE_BINS = 10
MAX_REPEATS = 99
STABLE = 0.95  # the chance a majority of repeats must have to agree with the more likely verdict
_VERDICT_CODES = {"a": 0, "b": 1, "tie": 2}
_NONE = 3
_GOLD_CODES = {"a": 0, "b": 1}
_NO_GOLD = 2
_MULTINOMIAL_KINDS = 512  # rows of at most this many kinds are resampled as multinomial counts
_MAX_CELLS = 1 << 22  # resamples x rows of counts held at once (32 MiB of float64)

Features = Callable[[np.ndarray], np.ndarray]  # sums (resamples x features) -> values (resamples,)


# -- checks ----------------------------------------------------------------------------------------
def _check_interval(confidence_level: Any, n_resamples: Any, seed: Any) -> None:
    if (isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float))
            or not 0 < confidence_level < 1):
        raise ValueError(f"confidence_level: {confidence_level!r} must be a number strictly between 0 and 1")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 0:
        raise ValueError(f"n_resamples: {n_resamples!r} must be 0 (no intervals) or a positive integer")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed: {seed!r} must be a non-negative integer or None")


def _check_threshold(threshold: Any) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise ValueError(f"threshold: {threshold!r} must be a number in [0, 1] (on the score mapped to [0, 1])")
    return float(threshold)


def _check_range(score_range: Any) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in score_range)
    except (TypeError, ValueError):
        raise ValueError(f"score_range: {score_range!r} must be two numbers (low, high)") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"score_range: {score_range!r} must be two finite numbers, low < high")
    return low, high


def _verdict_codes(values: Sequence[Any], name: str) -> np.ndarray:
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if v is None:
            out[i] = _NONE
            continue
        code = _VERDICT_CODES.get(v.lower()) if isinstance(v, str) else None
        if code is None:
            raise ValueError(f"{name}[{i}]: {v!r} is not a verdict; expected 'a', 'b', 'tie' or None")
        out[i] = code
    return out


def _gold_codes(values: Sequence[Any] | None, n: int) -> np.ndarray:
    if values is None:
        return np.full(n, _NO_GOLD, dtype=np.int64)
    if len(values) != n:
        raise ValueError(f"gold: {len(values)} labels for {n} pairs")
    out = np.empty(n, dtype=np.int64)
    for i, v in enumerate(values):
        code = _GOLD_CODES.get(v.lower()) if isinstance(v, str) else (None if v is not None else _NO_GOLD)
        if code is None:
            raise ValueError(f"gold[{i}]: {v!r} is not a gold label; expected 'a', 'b' or None")
        out[i] = code
    return out


_NUMBER_TYPES = (float, int)


def _plain(values: Sequence[Any]) -> bool:
    """Only None and finite floats and ints (no bool): what one conversion reads right."""
    return all(v is None or (type(v) in _NUMBER_TYPES and math.isfinite(v)) for v in values)


def _scores(values: Sequence[Any], name: str) -> np.ndarray:
    """Scores as float64, NaN where None."""
    if _plain(values):  # one conversion (None becomes NaN)
        return np.array(values, dtype=np.float64).reshape(len(values))
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        if v is None:
            out[i] = np.nan
        elif isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise ValueError(f"{name}[{i}]: {v!r} is not a finite number or None")
        else:
            out[i] = float(v)
    return out


def to_unit(scores: np.ndarray, score_range: tuple[float, float]) -> np.ndarray:
    """Scores mapped to [0, 1] over ``score_range`` (clipped)."""
    low, high = score_range
    out: np.ndarray = np.clip((scores - low) / (high - low), 0.0, 1.0)
    return out


# -- resampling --------------------------------------------------------------------------------------
def _few_kinds(rows: np.ndarray) -> bool:
    """Whether the rows may be of at most ``_MULTINOMIAL_KINDS`` kinds: no column has more
    distinct values (a cheap test that spares sorting rows of continuous scores)."""
    return all(len(np.unique(rows[:, c])) <= _MULTINOMIAL_KINDS for c in range(rows.shape[1]))


def _resampled_sums(rows: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """The column sums of each of ``n_resamples`` bootstrap resamples of ``rows`` (rows x
    features): multinomial counts of each distinct row where rows are of few kinds, else the
    counts of ``integers(0, n, size=(n_resamples, n))``, row by row, times the rows."""
    n, width = rows.shape
    rng = np.random.default_rng(seed)
    if _few_kinds(rows):
        kinds, inverse = np.unique(rows, axis=0, return_inverse=True)
        if len(kinds) <= _MULTINOMIAL_KINDS:
            freq = np.bincount(inverse.ravel(), minlength=len(kinds)) / n
            counts = rng.multinomial(n, freq, size=n_resamples).astype(np.float64)
            out: np.ndarray = counts @ kinds
            return out
    out = np.empty((n_resamples, width), dtype=np.float64)
    step = max(1, _MAX_CELLS // n)
    for start in range(0, n_resamples, step):
        count = min(step, n_resamples - start)
        idx = rng.integers(0, n, size=(count, n))
        offsets = (np.arange(count) * n)[:, None]
        counts = np.bincount((idx + offsets).ravel(), minlength=count * n).reshape(count, n).astype(np.float64)
        out[start:start + count] = counts @ rows
    return out


def _interval(values: np.ndarray, confidence_level: float) -> list[float] | None:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return [float(low), float(high)]


def _value(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _estimates(rows: np.ndarray, statistics: Mapping[str, Features], confidence_level: float, n_resamples: int,
               seed: int | None) -> dict[str, Statistic]:
    """Each statistic's value on ``rows`` and its interval over the same resamples."""
    if rows.shape[0] == 0:
        return {name: {"value": None, "ci": None} for name in statistics}
    total = rows.sum(axis=0)[None, :]
    sums = _resampled_sums(rows, n_resamples, seed) if n_resamples else None
    out: dict[str, Statistic] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, fn in statistics.items():
            value = _value(float(fn(total)[0]))
            ci = _interval(fn(sums), confidence_level) if sums is not None and value is not None else None
            out[name] = {"value": value, "ci": ci}
    return out


def _excludes(stat: Statistic, point: float) -> bool:
    ci = stat["ci"]
    return ci is not None and (ci[0] > point or ci[1] < point)


def _ratio(num: int, den: int) -> Features:
    def fn(s: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.where(s[:, den] > 0, s[:, num] / s[:, den], np.nan)
        return out
    return fn


def _kappa(start: int, k: int) -> Features:
    """Cohen's kappa from the counts of a k x k confusion matrix at columns ``start`` ..:
    ``(N * trace - sum row * col) / (N^2 - sum row * col)`` (scikit-learn's
    ``1 - sum(w * C) / sum(w * E)`` with ``w = 1 - I``), NaN without expected disagreement."""
    def fn(s: np.ndarray) -> np.ndarray:
        conf = s[:, start:start + k * k].reshape(-1, k, k)
        n = conf.sum(axis=(1, 2))
        trace = np.trace(conf, axis1=1, axis2=2)
        chance = (conf.sum(axis=2) * conf.sum(axis=1)).sum(axis=1)
        den = n * n - chance
        out: np.ndarray = np.where(den > 0, (n * trace - chance) / den, np.nan)
        return out
    return fn


# -- position ---------------------------------------------------------------------------------------
def position_audit(first: Sequence[str | None], second: Sequence[str | None], gold: Sequence[str | None] | None = None,
                   *, missing: str = "omit", confidence_level: float = 0.95, n_resamples: int = 1000,
                   seed: int | None = None) -> dict[str, Any]:
    """The position audit of pairwise verdicts (module docstring): ``{"positional_agreement",
    "first_position_rate", "accuracy_first", "accuracy_second", "kappa"}`` each ``{"value",
    "ci"}``, ``"flagged"`` (the interval of ``first_position_rate`` excludes 0.5), ``"pairs"``
    (pairs used) and ``"missing"`` (pairs with an unusable verdict: left out under ``"omit"``,
    kept under ``"as_verdict"``). Without ``gold`` the accuracies are None."""
    if missing not in MISSING:
        raise ValueError(f"missing: {missing!r} is not one of {list(MISSING)}")
    _check_interval(confidence_level, n_resamples, seed)
    if len(first) != len(second):
        raise ValueError(f"first and second: {len(first)} and {len(second)} verdicts; give one of each per pair")
    f, s = _verdict_codes(first, "first"), _verdict_codes(second, "second")
    g = _gold_codes(gold, len(f))
    incomplete = (f == _NONE) | (s == _NONE)
    if missing == "omit":
        keep = ~incomplete
        f, s, g = f[keep], s[keep], g[keep]
        kf, ks, k = f, s, 3
    else:  # LLMBar's kappa: output 1 against anything else
        kf, ks, k = (f != 0).astype(np.int64), (s != 0).astype(np.int64), 2
    favour_first = np.array([1.0, 0.0, 0.5, 0.0])  # a, b, tie, none: the first order shows "a" first
    favour_second_shown = np.array([0.0, 1.0, 0.5, 0.0])  # the swapped order shows "b" first
    has_gold = (g != _NO_GOLD).astype(np.float64)
    confusion = np.zeros((len(f), k * k))
    confusion[np.arange(len(f)), kf * k + ks] = 1.0
    rows = np.column_stack([
        np.ones(len(f)), (f == s).astype(np.float64),
        favour_first[f] + favour_second_shown[s], (f != _NONE).astype(np.float64) + (s != _NONE),
        has_gold, ((f == g) & (g != _NO_GOLD)).astype(np.float64), ((s == g) & (g != _NO_GOLD)).astype(np.float64),
        confusion])
    stats = _estimates(rows, {"positional_agreement": _ratio(1, 0), "first_position_rate": _ratio(2, 3),
                              "accuracy_first": _ratio(5, 4), "accuracy_second": _ratio(6, 4),
                              "kappa": _kappa(7, k)}, confidence_level, n_resamples, seed)
    return {**stats, "flagged": _excludes(stats["first_position_rate"], 0.5), "pairs": int(len(f)),
            "missing": int(incomplete.sum())}


# -- verbosity --------------------------------------------------------------------------------------
def verbosity_audit(original: Sequence[float | None], padded: Sequence[float | None], *, threshold: float = 0.5,
                    score_range: tuple[float, float] = (0.0, 1.0), confidence_level: float = 0.95,
                    n_resamples: int = 1000, seed: int | None = None) -> dict[str, Any]:
    """The verbosity audit: ``original[i]`` and ``padded[i]`` are example ``i``'s scores without
    and with the filler (None: unscored). ``{"mean_shift", "changed_share"}`` each ``{"value",
    "ci"}``, ``"flagged"`` (the interval of ``mean_shift`` excludes 0), ``"examples"`` (used) and
    ``"missing"`` (left out: a score missing in either run)."""
    _check_interval(confidence_level, n_resamples, seed)
    t, span = _check_threshold(threshold), _check_range(score_range)
    if len(original) != len(padded):
        raise ValueError(f"original and padded: {len(original)} and {len(padded)} scores; give one of each "
                         "per example")
    x, y = _scores(original, "original"), _scores(padded, "padded")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    changed = (to_unit(x, span) >= t) != (to_unit(y, span) >= t)
    rows = np.column_stack([np.ones(len(x)), y - x, changed.astype(np.float64)])
    stats = _estimates(rows, {"mean_shift": _ratio(1, 0), "changed_share": _ratio(2, 0)}, confidence_level,
                       n_resamples, seed)
    return {**stats, "flagged": _excludes(stats["mean_shift"], 0.0), "examples": int(len(x)),
            "missing": int((~keep).sum())}


# -- repeats ----------------------------------------------------------------------------------------
def _icc(k: int) -> Features:
    def fn(s: np.ndarray) -> np.ndarray:
        n, total, squares, within = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
        grand = total / n
        msb = k * (squares - n * grand * grand) / (n - 1)
        msw = within / (n * (k - 1))
        den = msb + (k - 1) * msw
        out: np.ndarray = np.where((n > 1) & (den > 0), (msb - msw) / den, np.nan)
        return out
    return fn


def icc_1_1(scores: np.ndarray) -> float | None:
    """ICC(1,1) of an ``examples x K`` array of scores (no NaN); None where undefined."""
    scores = np.asarray(scores, dtype=np.float64)
    n, k = scores.shape
    if k < 2:
        raise ValueError("scores: ICC needs at least 2 ratings per example")
    means = scores.mean(axis=1)
    row = np.array([[n, means.sum(), (means * means).sum(), ((scores - means[:, None]) ** 2).sum()]], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _value(float(_icc(k)(row)[0]))


def _majority_agreement(p: float, m: int) -> float:
    """The chance that the majority of ``m`` (odd) verdicts, each positive with chance ``p``,
    is the more likely verdict."""
    q = max(p, 1.0 - p)
    if q == 1.0:
        return 1.0
    return math.fsum(math.comb(m, j) * q ** j * (1.0 - q) ** (m - j) for j in range(m // 2 + 1, m + 1))


def repeats_needed(positive_shares: Sequence[float], stable: float = STABLE) -> int:
    """The fewest odd repeats (at most :data:`MAX_REPEATS`) whose majority verdict is the more
    likely one with chance at least ``stable`` on average over the examples, each example's
    chance of a positive verdict given in ``positive_shares``; 1 for none."""
    shares = np.asarray(positive_shares, dtype=np.float64)
    if shares.size == 0:
        return 1
    kinds, counts = np.unique(shares, return_counts=True)
    for m in range(1, MAX_REPEATS + 1, 2):
        mean = math.fsum(c * _majority_agreement(float(p), m) for p, c in zip(kinds, counts, strict=True))
        if mean / shares.size >= stable:
            return m
    return MAX_REPEATS


def repeat_audit(scores: Sequence[Sequence[float | None]], *, threshold: float = 0.5,
                 score_range: tuple[float, float] = (0.0, 1.0), confidence_level: float = 0.95,
                 n_resamples: int = 1000, seed: int | None = None) -> dict[str, Any]:
    """The repeat audit: ``scores[i]`` holds example ``i``'s ``K`` scores, one per repeat (None:
    unscored). ``{"icc", "flip_rate", "spread"}`` each ``{"value", "ci"}``, ``"repeats_needed"``,
    ``"flagged"`` (the interval of ``flip_rate`` excludes 0), ``"examples"`` (those scored in
    every repeat), ``"missing"`` (left out) and ``"repeats"`` (``K``)."""
    _check_interval(confidence_level, n_resamples, seed)
    t, span = _check_threshold(threshold), _check_range(score_range)
    widths = {len(r) for r in scores}
    if len(widths) > 1:
        raise ValueError(f"scores: every example needs the same number of repeats, got {sorted(widths)}")
    k = widths.pop() if widths else 2
    if k < 2:
        raise ValueError(f"scores: {k} repeat per example; the repeat audit needs at least 2")
    if all(_plain(r) for r in scores):
        table = np.array(scores, dtype=np.float64).reshape(-1, k)
    else:
        table = np.array([_scores(r, f"scores[{i}]") for i, r in enumerate(scores)], dtype=np.float64).reshape(-1, k)
    keep = ~np.isnan(table).any(axis=1)
    table = table[keep]
    verdicts = to_unit(table, span) >= t
    positive = verdicts.mean(axis=1)
    flips = (positive > 0) & (positive < 1)
    means = table.mean(axis=1)
    deviations = table - means[:, None]
    rows = np.column_stack([np.ones(len(table)), means, means * means, (deviations ** 2).sum(axis=1),
                            flips.astype(np.float64), np.sqrt((deviations ** 2).mean(axis=1))])
    stats = _estimates(rows, {"icc": _icc(k), "flip_rate": _ratio(4, 0), "spread": _ratio(5, 0)}, confidence_level,
                       n_resamples, seed)
    return {**stats, "repeats_needed": repeats_needed(positive), "flagged": _excludes(stats["flip_rate"], 0.0),
            "examples": int(len(table)), "missing": int((~keep).sum()), "repeats": k}


# -- calibration ------------------------------------------------------------------------------------
def isotonic_fit(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
                 sample_weight: Sequence[float] | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The non-decreasing least-squares fit of ``y`` on ``x`` (the pool-adjacent-violators
    algorithm), as scikit-learn's ``IsotonicRegression().fit``: rows with equal ``x`` are first
    merged into their weighted mean; returns the distinct ``x`` (sorted) and the fitted values
    at them (:func:`isotonic_predict` interpolates between them)."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ws = np.ones_like(xs) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if not (xs.shape == ys.shape == ws.shape) or xs.ndim != 1 or xs.size == 0:
        raise ValueError("isotonic_fit: x, y (and sample_weight) must be 1-d, of one length, not empty")
    unique, inverse = np.unique(xs, return_inverse=True)
    weights = np.bincount(inverse, weights=ws, minlength=len(unique))
    means = np.bincount(inverse, weights=ws * ys, minlength=len(unique)) / weights
    values: list[float] = []  # the pooled blocks: value, weight, size
    block_w: list[float] = []
    sizes: list[int] = []
    for v, w in zip(means.tolist(), weights.tolist(), strict=True):
        values.append(v)
        block_w.append(w)
        sizes.append(1)
        while len(values) > 1 and values[-2] >= values[-1]:
            w2, w1 = block_w.pop(), block_w[-1]
            v2, v1 = values.pop(), values[-1]
            values[-1] = (v1 * w1 + v2 * w2) / (w1 + w2)
            block_w[-1] = w1 + w2
            size = sizes.pop()
            sizes[-1] += size
    return unique, np.repeat(np.array(values), sizes)


def isotonic_predict(model: tuple[np.ndarray, np.ndarray], x: Sequence[float] | np.ndarray) -> np.ndarray:
    """The fitted function at ``x``: linear between the fitted points, clipped at both ends
    (scikit-learn's ``out_of_bounds="clip"``)."""
    knots, fitted = model
    out: np.ndarray = np.interp(np.asarray(x, dtype=np.float64), knots, fitted)
    return out


def _bins_of(p: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.minimum((p * ECE_BINS).astype(np.int64), ECE_BINS - 1)
    return out


def _calibration_rows(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per row: 1, (p - y)^2, then per bin: one-hot, p one-hot, y one-hot."""
    onehot = np.zeros((len(p), ECE_BINS))
    onehot[np.arange(len(p)), _bins_of(p)] = 1.0
    return np.column_stack([np.ones(len(p)), (p - y) ** 2, onehot, onehot * p[:, None], onehot * y[:, None]])


def _ece(s: np.ndarray) -> np.ndarray:
    p_sums, y_sums = s[:, 2 + ECE_BINS:2 + 2 * ECE_BINS], s[:, 2 + 2 * ECE_BINS:2 + 3 * ECE_BINS]
    out: np.ndarray = np.where(s[:, 0] > 0, np.abs(p_sums - y_sums).sum(axis=1) / s[:, 0], np.nan)
    return out


def _labels(values: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        if v is None:
            out[i] = np.nan
        elif isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, float, np.integer, np.floating)) and v in (0, 1)):
            out[i] = float(v)
        else:
            raise ValueError(f"labels[{i}]: {v!r} is not a label; expected 0, 1 (or True, False) or None")
    return out


def calibration_audit(probabilities: Sequence[float | None], labels: Sequence[Any], *,
                      confidence_level: float = 0.95, n_resamples: int = 1000,
                      seed: int | None = None) -> dict[str, Any]:
    """The calibration audit: ``probabilities[i]`` in [0, 1] (None: unscored), ``labels[i]``
    0 or 1 (None: no label). ``{"brier", "ece", "ece_recalibrated"}`` each ``{"value", "ci"}``,
    ``"bins"`` (per bin: ``range``, ``count``, ``mean_p``, ``share``: None where empty),
    ``"examples"``, ``"missing"`` and ``"recalibration"`` (``{"fitted", "measured"}``: rows of each
    half). ``ece_recalibrated`` needs 2 rows or more (None below)."""
    _check_interval(confidence_level, n_resamples, seed)
    if len(probabilities) != len(labels):
        raise ValueError(f"probabilities and labels: {len(probabilities)} and {len(labels)} values")
    p, y = _scores(probabilities, "probabilities"), _labels(labels)
    if ((p < 0) | (p > 1)).any():
        i = int(np.flatnonzero((p < 0) | (p > 1))[0])
        raise ValueError(f"probabilities[{i}]: {p[i]!r} is outside [0, 1]")
    keep = ~(np.isnan(p) | np.isnan(y))
    p, y = p[keep], y[keep]
    rows = _calibration_rows(p, y)
    stats = _estimates(rows, {"brier": _ratio(1, 0), "ece": _ece}, confidence_level, n_resamples, seed)
    n = len(p)
    order = np.random.default_rng(seed).permutation(n)
    half = n // 2
    if half >= 1:
        fit, measured = order[:half], order[half:]
        model = isotonic_fit(p[fit], y[fit])
        recalibrated = np.clip(isotonic_predict(model, p[measured]), 0.0, 1.0)
        stats.update(_estimates(_calibration_rows(recalibrated, y[measured]), {"ece_recalibrated": _ece},
                                confidence_level, n_resamples, seed))
    else:
        stats["ece_recalibrated"] = {"value": None, "ci": None}
    totals = rows.sum(axis=0)
    bins = []
    for b in range(ECE_BINS):
        count = int(totals[2 + b])
        bins.append({"range": [b / ECE_BINS, (b + 1) / ECE_BINS], "count": count,
                     "mean_p": float(totals[2 + ECE_BINS + b] / count) if count else None,
                     "share": float(totals[2 + 2 * ECE_BINS + b] / count) if count else None})
    return {**stats, "bins": bins, "examples": int(n), "missing": int((~keep).sum()),
            "recalibration": {"fitted": int(half), "measured": int(n - half)}}
