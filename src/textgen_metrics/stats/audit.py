"""The statistics of a judge audit, on verdicts and scores already made: no judge is needed, so
stored answers (LLMBar's) are audited as a live judge's are. Each statistic is ``{"value",
"ci"}``: the value on the rows given and a percentile bootstrap interval over pairs or examples
(``confidence_level``, ``n_resamples``, ``seed``: 12345 by default, as everywhere in the package;
``seed=None`` draws fresh resamples,
``n_resamples=0`` gives ``ci`` None). A value that is undefined (no row, kappa without expected
disagreement) is None; a resample on which it is undefined is left out of the interval.

- :func:`position_audit` (docs/audit.md, position): ``first[i]`` and ``second[i]`` are the
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

- :func:`alt_test`: the alternative annotator test of Calderon, Reichart and Dror (ACL 2025,
  "The Alternative Annotator Test for LLM-as-a-Judge", arXiv 2501.10970), as their reference
  implementation computes it (``alt_test`` in ``alt_test_example.ipynb`` of
  github.com/nitaytech/AltTest): can the judge stand in for one of several annotators who rated
  the same rows? See its docstring.

Thresholds apply to scores mapped to [0, 1] over ``score_range``, so that 0.5 is the middle of a
1-5 scale as of a 0-1 share.

Resampling: each probe reduces every row to a few numbers (features) whose sums over the rows
give every statistic, so a resample is its count of each row times the features. Resampling
``n`` rows with replacement is drawing the counts of each distinct row from a multinomial: where
rows are of few kinds (verdicts, pairwise scores) the counts are drawn so, which costs the same
for 10,000 pairs as for 100; otherwise resample ``r`` draws row ``r`` of
``numpy.random.default_rng(seed).integers(0, n, size=(n_resamples, n))`` (in chunks) and costs
one matrix product. The interval is ``numpy.quantile`` (linear) at ``(1 - level) / 2`` and
``1 - (1 - level) / 2`` of the defined resampled values, as ``stats.resample.interval``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..significance import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from .resample import check_interval, item_counts
from .resample import interval as _interval

__all__ = ["position_audit", "verbosity_audit", "repeat_audit", "calibration_audit", "alt_test", "isotonic_fit",
           "isotonic_predict", "icc_1_1", "repeats_needed", "to_unit", "benjamini_yekutieli", "MISSING",
           "MAX_REPEATS", "ECE_BINS", "ALT_KINDS", "ALT_MIN_ROWS", "Statistic"]

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

Features = Callable[[np.ndarray], np.ndarray]  # sums (resamples x features) -> values (resamples,)


# -- checks ----------------------------------------------------------------------------------------
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
    chunks = [counts @ rows for counts in item_counts(n, n_resamples, seed)]  # the one resampler's draws
    return np.concatenate(chunks) if chunks else np.empty((0, width))


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
                   *, missing: str = "omit", confidence_level: float = DEFAULT_CONFIDENCE,
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED) -> dict[str, Any]:
    """The position audit of pairwise verdicts (module docstring): ``{"positional_agreement",
    "first_position_rate", "accuracy_first", "accuracy_second", "kappa"}`` each ``{"value",
    "ci"}``, ``"flagged"`` (the interval of ``first_position_rate`` excludes 0.5), ``"pairs"``
    (pairs used) and ``"missing"`` (pairs with an unusable verdict: left out under ``"omit"``,
    kept under ``"as_verdict"``). Without ``gold`` the accuracies are None."""
    if missing not in MISSING:
        raise ValueError(f"missing: {missing!r} is not one of {list(MISSING)}")
    check_interval(confidence_level, n_resamples, seed)
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
                    score_range: tuple[float, float] = (0.0, 1.0), confidence_level: float = DEFAULT_CONFIDENCE,
                    n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED) -> dict[str, Any]:
    """The verbosity audit: ``original[i]`` and ``padded[i]`` are example ``i``'s scores without
    and with the filler (None: unscored). ``{"mean_shift", "changed_share"}`` each ``{"value",
    "ci"}``, ``"flagged"`` (the interval of ``mean_shift`` excludes 0), ``"examples"`` (used) and
    ``"missing"`` (left out: a score missing in either run)."""
    check_interval(confidence_level, n_resamples, seed)
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
                 score_range: tuple[float, float] = (0.0, 1.0), confidence_level: float = DEFAULT_CONFIDENCE,
                 n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED) -> dict[str, Any]:
    """The repeat audit: ``scores[i]`` holds example ``i``'s ``K`` scores, one per repeat (None:
    unscored). ``{"icc", "flip_rate", "spread"}`` each ``{"value", "ci"}``, ``"repeats_needed"``,
    ``"flagged"`` (the interval of ``flip_rate`` excludes 0), ``"examples"`` (those scored in
    every repeat), ``"missing"`` (left out) and ``"repeats"`` (``K``)."""
    check_interval(confidence_level, n_resamples, seed)
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
                      confidence_level: float = DEFAULT_CONFIDENCE, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int | None = DEFAULT_SEED) -> dict[str, Any]:
    """The calibration audit: ``probabilities[i]`` in [0, 1] (None: unscored), ``labels[i]``
    0 or 1 (None: no label). ``{"brier", "ece", "ece_recalibrated"}`` each ``{"value", "ci"}``,
    ``"bins"`` (per bin: ``range``, ``count``, ``mean_p``, ``share``: None where empty),
    ``"examples"``, ``"missing"`` and ``"recalibration"`` (``{"fitted", "measured"}``: rows of each
    half). ``ece_recalibrated`` needs 2 rows or more (None below)."""
    check_interval(confidence_level, n_resamples, seed)
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


# -- alt-test ---------------------------------------------------------------------------------------
ALT_KINDS = ("auto", "labels", "scores")
ALT_MIN_ROWS = 30  # the reference's min_instances_per_human: the t-test's normality needs 30 rows
_ALT_SCORING = {"labels": "accuracy", "scores": "neg_rmse"}


def benjamini_yekutieli(p_values: Sequence[float] | np.ndarray, alpha: float) -> np.ndarray:
    """Which nulls the Benjamini-Yekutieli step-up procedure rejects at false discovery rate
    ``alpha`` (a boolean per p-value): the largest ``k`` with ``p_(k) <= k / m * alpha / H_m``
    (``H_m = 1 + 1/2 + ... + 1/m``) and every p-value up to ``p_(k)``; a NaN p-value is never
    rejected. On a 2-d array, each row on its own (one row per resample)."""
    p = np.asarray(p_values, dtype=np.float64)
    flat = p.ndim == 1
    p2 = p[None, :] if flat else p
    m = p2.shape[1]
    if m == 0:
        return np.zeros(p.shape, dtype=bool)
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    thresholds = np.arange(1, m + 1) / m * (alpha / harmonic)
    ordered = np.sort(p2, axis=1)  # NaN last: never at or under a threshold
    ok = ordered <= thresholds[None, :]
    last = np.where(ok.any(axis=1), m - 1 - np.argmax(ok[:, ::-1], axis=1), -1)
    cut = np.where(last >= 0, ordered[np.arange(len(ordered)), np.maximum(last, 0)], -np.inf)
    with np.errstate(invalid="ignore"):
        out: np.ndarray = p2 <= cut[:, None]
    return out[0] if flat else out


def _p_less(t: float, df: float) -> float:
    """``P(T < t)`` for Student's t with ``df`` degrees of freedom (``scipy.stats.t.cdf``)."""
    from .agreement import t_sf

    if math.isnan(t) or df < 1:
        return math.nan
    return t_sf(-t, df)


def _one_sided_t(n: float, total: float, squares: float, epsilon: float) -> float:
    """The p-value of ``scipy.stats.ttest_1samp(d, epsilon, alternative="less")`` from the count,
    sum and sum of squares of ``d``: NaN below 2 rows, ``t = -inf`` (p 0) or ``+inf`` (p 1) when
    every ``d`` is the same and not ``epsilon``, NaN when it is."""
    if n < 2:
        return math.nan
    mean = total / n
    var = max((squares - total * total / n) / (n - 1), 0.0)
    diff = mean - epsilon
    if var == 0.0:
        return math.nan if diff == 0 else (0.0 if diff < 0 else 1.0)
    return _p_less(diff / math.sqrt(var / n), n - 1)


def _is_number(v: Any) -> bool:
    return (not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, float, np.integer, np.floating))
            and math.isfinite(v))


def _alt_kind(kind: Any, judge: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    if kind not in ALT_KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {list(ALT_KINDS)}")
    if kind != "auto":
        return str(kind)
    values = [v for v in judge if v is not None] + [v for r in rows for v in r if v is not None]
    return "scores" if values and all(_is_number(v) for v in values) else "labels"


def _alt_cells(judge: Sequence[Any], rows: Sequence[Sequence[Any]], kind: str,
               names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(judge values, rows x annotators values): float64 with NaN where missing for scores; for
    labels int64 codes (one per distinct value, judge and annotators alike), -1 where missing."""
    n, m = len(rows), len(names)
    if kind == "scores":
        f = np.full(n, np.nan)
        a = np.full((n, m), np.nan)
        for i, v in enumerate(judge):
            if v is not None:
                if not _is_number(v):
                    raise ValueError(f"judge[{i}]: {v!r} is not a finite number or None (kind='scores'; give "
                                     "kind='labels' for categories)")
                f[i] = float(v)
        for i, r in enumerate(rows):
            for j, v in enumerate(r):
                if v is not None:
                    if not _is_number(v):
                        raise ValueError(f"annotations[{i}][{j}] (annotator {names[j]!r}): {v!r} is not a finite "
                                         "number or None (kind='scores'; give kind='labels' for categories)")
                    a[i, j] = float(v)
        return f, a
    codes: dict[Any, int] = {}

    def code(v: Any, where: str) -> int:
        if v is None:
            return -1
        try:
            return codes.setdefault(v, len(codes))
        except TypeError:
            raise ValueError(f"{where}: {v!r} is not a label (labels are compared for equality: a text, a number, "
                             "True or False)") from None

    fc = np.array([code(v, f"judge[{i}]") for i, v in enumerate(judge)], dtype=np.int64).reshape(n)
    ac = np.array([[code(v, f"annotations[{i}][{j}] (annotator {names[j]!r})") for j, v in enumerate(r)]
                   for i, r in enumerate(rows)], dtype=np.int64).reshape(n, m)
    return fc, ac


def _alignment(f: np.ndarray, a: np.ndarray, valid: np.ndarray, j: int, idx: np.ndarray,
               kind: str) -> tuple[np.ndarray, np.ndarray]:
    """On rows ``idx``: the judge's and annotator ``j``'s alignment with the other annotators who
    rated the row, as comparable arrays. Labels: the counts of the others they equal (the
    reference's accuracy is that count over the same number of others, so the counts compare as
    the accuracies do). Scores: the reference's ``neg_rmse``, ``-sqrt(mean((x - a_k)^2))``, its
    squares summed in the annotators' order as ``np.mean`` of a short list sums them."""
    fj, aj = f[idx], a[idx, j]
    if kind == "labels":
        judge_hits = np.zeros(len(idx))
        own_hits = np.zeros(len(idx))
        for k in range(a.shape[1]):
            if k != j:
                other, rated = a[idx, k], valid[idx, k]
                judge_hits += rated & (other == fj)
                own_hits += rated & (other == aj)
        return judge_hits, own_hits
    judge_sq = np.zeros(len(idx))
    own_sq = np.zeros(len(idx))
    others = np.zeros(len(idx))
    for k in range(a.shape[1]):
        if k != j:
            rated = valid[idx, k]
            other = np.where(rated, a[idx, k], 0.0)
            judge_sq = judge_sq + np.where(rated, (fj - other) ** 2, 0.0)
            own_sq = own_sq + np.where(rated, (aj - other) ** 2, 0.0)
            others += rated
    return -np.sqrt(judge_sq / others), -np.sqrt(own_sq / others)


def alt_test(judge: Sequence[Any], annotations: Sequence[Sequence[Any]], *, epsilon: float = 0.2,
             alpha: float = 0.05, kind: str = "auto", annotators: Sequence[str] | None = None,
             min_rows: int = ALT_MIN_ROWS, min_annotators_per_row: int = 2,
             confidence_level: float = DEFAULT_CONFIDENCE, n_resamples: int = DEFAULT_RESAMPLES,
             seed: int | None = DEFAULT_SEED) -> dict[str, Any]:
    """The alternative annotator test (Calderon, Reichart and Dror, ACL 2025, arXiv 2501.10970),
    as the authors' ``alt_test`` computes it (github.com/nitaytech/AltTest,
    ``alt_test_example.ipynb``): can the judge stand in for an annotator?

    ``judge[i]``: the judge's value on row ``i`` (None: no usable answer); ``annotations[i][j]``:
    annotator ``j``'s value on row ``i`` (None: not rated). ``kind``: ``"labels"`` (alignment:
    accuracy, the share of the other annotators the value equals), ``"scores"`` (alignment: the
    negative RMSE to the other annotators' scores) or ``"auto"`` (scores when every value is a
    number, else labels; on 0/1 values both give the same test, as ``-sqrt(1 - accuracy)`` orders
    the rows as accuracy does; categories coded as numbers need ``kind="labels"``).

    The rows used are those the judge answered and at least ``min_annotators_per_row`` (2)
    annotators rated. Leaving out one annotator ``j`` at a time, on each row ``i`` that ``j``
    rated: ``S_f`` is the judge's alignment with the other annotators who rated the row, ``S_h``
    annotator ``j``'s; ``W^f_i = [S_f >= S_h]``, ``W^h_i = [S_h >= S_f]`` (a tie counts for
    both). The one-sided paired t-test of ``H0: p_f <= p_h - epsilon`` is
    ``ttest_1samp(W^h - W^f, epsilon, alternative="less")``; its rejection means the judge is
    at least as good a representative of the others as ``j``, allowing ``epsilon`` for the
    judge's lower cost. An annotator with fewer than ``min_rows`` (30) such rows is skipped, as
    the reference skips it (its t-test's normality needs 30; listed with ``"skipped"``). The
    p-values of the annotators tested are corrected together by Benjamini-Yekutieli at
    ``alpha`` (:func:`benjamini_yekutieli`).

    Returns ``{"winning_rate", "advantage_probability"}`` each ``{"value", "ci"}``:
    ``winning_rate`` (omega) = the share of the annotators tested whose null is rejected (the
    judge "beats" them); ``advantage_probability`` (rho) = the mean over those annotators of the
    share of rows with ``W^f = 1``; the intervals are percentile bootstrap intervals over rows
    (the whole test redone on each resample, with the annotators tested held fixed; ``ci`` None
    with ``n_resamples=0``). ``"passed"``: ``winning_rate >= 0.5``. ``"wins"`` and ``"tested"``:
    the annotators beaten and tested. ``"per_annotator"``: per annotator ``{"annotator", "rows",
    "judge_advantage"`` (mean ``W^f``), ``"annotator_advantage"`` (mean ``W^h``), ``"p_value",
    "rejected"}`` or ``{"annotator", "rows", "skipped"}``. Also ``"epsilon", "alpha", "kind",
    "alignment"`` (``"accuracy"`` or ``"neg_rmse"``), ``"rows"`` (used), ``"missing"`` (rows
    without a judge value) and ``"min_rows"``.
    """
    check_interval(confidence_level, n_resamples, seed)
    for name, value, low, high in (("epsilon", epsilon, 0.0, 1.0), ("alpha", alpha, 0.0, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value < high \
                or (name == "alpha" and value == 0):
            raise ValueError(f"{name}: {value!r} must be a number in {'[0, 1)' if name == 'epsilon' else '(0, 1)'}")
    for name, value, least in (("min_rows", min_rows, 2), ("min_annotators_per_row", min_annotators_per_row, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name}: {value!r} must be an integer of at least {least}")
    if isinstance(judge, (str, bytes)) or isinstance(annotations, (str, bytes)):
        raise ValueError("judge and annotations: give one value per row (judge) and one row of values per row "
                         "(annotations), not a text")
    rows = [list(r) if not isinstance(r, (str, bytes, Mapping)) and isinstance(r, (Sequence, np.ndarray))
            else r for r in annotations]
    if len(judge) != len(rows):
        raise ValueError(f"judge and annotations: {len(judge)} judge values for {len(rows)} rows of annotations; "
                         "give one of each per row")
    m = len(annotators) if annotators is not None else (len(rows[0]) if rows and isinstance(rows[0], list) else 0)
    for i, r in enumerate(rows):
        if not isinstance(r, list):
            raise ValueError(f"annotations[{i}]: {r!r} is not a row of annotators' values (a list, None where an "
                             "annotator did not rate the row)")
        if len(r) != m:
            raise ValueError(f"annotations[{i}]: {len(r)} values for {m} annotators; give one per annotator (None "
                             "where an annotator did not rate the row)")
    names = [str(a) for a in annotators] if annotators is not None else [f"annotator {j + 1}" for j in range(m)]
    if len(set(names)) != len(names):
        raise ValueError(f"annotators: {names} repeats a name")
    if m < 2:
        raise ValueError(f"annotations: {m} annotator{'s' if m != 1 else ''}; the alt-test compares the judge with "
                         "each of at least 2 annotators who rated the same rows (3 or more advised)")
    resolved = _alt_kind(kind, judge, rows)
    f, a = _alt_cells(judge, rows, resolved, names)
    missing = (f == -1) if resolved == "labels" else np.isnan(f)
    valid = (a != -1) if resolved == "labels" else ~np.isnan(a)
    kept = ~missing & (valid.sum(axis=1) >= min_annotators_per_row)
    per: list[dict[str, Any]] = []
    tested: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # annotator, rows, W^f, W^h
    for j in range(m):
        idx = np.flatnonzero(kept & valid[:, j])
        if len(idx) < min_rows:
            per.append({"annotator": names[j], "rows": int(len(idx)),
                        "skipped": f"{len(idx)} rows rated with the judge and another annotator; the alt-test "
                                   f"needs {min_rows} per annotator"})
            continue
        s_f, s_h = _alignment(f, a, valid, j, idx, resolved)
        w_f, w_h = (s_f >= s_h).astype(np.float64), (s_h >= s_f).astype(np.float64)
        d = w_h - w_f
        n = float(len(d))
        p = _one_sided_t(n, float(d.sum()), float((d * d).sum()), float(epsilon))
        per.append({"annotator": names[j], "rows": int(len(idx)), "judge_advantage": float(w_f.mean()),
                    "annotator_advantage": float(w_h.mean()), "p_value": _value(p), "rejected": False})
        tested.append((j, idx, w_f, w_h))
    if not tested:
        counts = ", ".join(f"{e['annotator']!r}: {e['rows']}" for e in per)
        raise ValueError(f"annotations: no annotator has {min_rows} rows rated with the judge and at least one other "
                         f"annotator ({counts}); the alt-test needs {min_rows} per annotator (min_rows)")
    results = [p for p in per if "skipped" not in p]
    p_values = np.array([np.nan if e["p_value"] is None else e["p_value"] for e in results])
    rejected = benjamini_yekutieli(p_values, float(alpha))
    for entry, r in zip(results, rejected.tolist(), strict=True):
        entry["rejected"] = bool(r)
    wins = int(rejected.sum())
    omega = wins / len(tested)
    rho = float(np.mean([e["judge_advantage"] for e in results]))
    omega_ci = rho_ci = None
    if n_resamples:
        omega_ci, rho_ci = _alt_intervals(tested, len(f), float(epsilon), float(alpha), confidence_level,
                                          n_resamples, seed)
    return {"winning_rate": {"value": omega, "ci": omega_ci}, "advantage_probability": {"value": rho, "ci": rho_ci},
            "passed": bool(omega >= 0.5), "wins": wins, "tested": len(tested), "per_annotator": per,
            "epsilon": float(epsilon), "alpha": float(alpha), "kind": resolved, "alignment": _ALT_SCORING[resolved],
            "rows": int(kept.sum()), "missing": int(missing.sum()), "min_rows": min_rows}


def _alt_intervals(tested: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]], n_rows: int, epsilon: float,
                   alpha: float, confidence_level: float, n_resamples: int,
                   seed: int | None) -> tuple[list[float] | None, list[float] | None]:
    """Percentile bootstrap intervals of the winning rate and the advantage probability: rows
    resampled, each tested annotator's t-test redone on its rows in the resample (per row and
    annotator: rated, ``d``, ``d^2``, ``W^f``), Benjamini-Yekutieli over them."""
    used = np.unique(np.concatenate([idx for _, idx, _, _ in tested]))
    position = np.full(n_rows, -1)
    position[used] = np.arange(len(used))
    features = np.zeros((len(used), 4 * len(tested)))
    for t, (_, idx, w_f, w_h) in enumerate(tested):
        d = w_h - w_f
        at = position[idx]
        features[at, 4 * t] = 1.0
        features[at, 4 * t + 1] = d
        features[at, 4 * t + 2] = d * d
        features[at, 4 * t + 3] = w_f
    sums = _resampled_sums(features, n_resamples, seed)
    memo: dict[tuple[float, float, float], float] = {}
    p = np.empty((n_resamples, len(tested)))
    share = np.empty((n_resamples, len(tested)))
    for t in range(len(tested)):
        n, total, squares, ahead = (sums[:, 4 * t + c] for c in range(4))
        for r in range(n_resamples):
            key = (float(n[r]), float(total[r]), float(squares[r]))
            if key not in memo:
                memo[key] = _one_sided_t(*key, epsilon)
            p[r, t] = memo[key]
        with np.errstate(divide="ignore", invalid="ignore"):
            share[:, t] = np.where(n > 0, ahead / n, np.nan)
    omega = benjamini_yekutieli(p, alpha).sum(axis=1) / len(tested)
    with np.errstate(invalid="ignore"):
        rho = share.mean(axis=1)
    return _interval(omega.astype(np.float64), confidence_level), _interval(rho, confidence_level)
