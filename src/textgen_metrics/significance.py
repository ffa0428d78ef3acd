"""Bootstrap confidence intervals and paired significance tests, as sacrebleu computes them.

Everything here works on per-example *statistics* (:class:`CorpusStatistics`): the sufficient
statistics of a corpus metric (BLEU's lengths and n-gram counts, chrF's n-gram counts, TER's
edits and reference length), whose sum gives the corpus score, or the per-example scores of a
metric whose aggregate is their mean (``kind="mean"``). Resampling the statistics, not the
scores, is what makes an interval of a corpus score right (a corpus BLEU is not a mean).

Resampling follows sacrebleu 2.x (``sacrebleu/significance.py``) step for step, so that, for
the same seed and number of resamples, the numbers are sacrebleu's:

- indices: ``numpy.random.default_rng(seed).choice(n, size=(n_resamples, n), replace=True)``
  (drawn here as the same stream of ``rng.integers(0, n, ...)`` in chunks of rows, so that memory
  stays bounded however many examples there are); a corpus metric's statistics are summed as
  ``float32``, as sacrebleu does;
- a corpus metric's interval is, by default (``interval="percentile"``), the percentile
  interval: the order statistics at ``(1 - level) / 2`` and ``(1 + level) / 2`` of the scores of
  the resamples (indices ``n // 40`` and ``n - n // 40 - 1`` at 0.95), their statistics summed in
  float64. Each bound is the score of some resample, so the interval never leaves the metric's
  range;
- with ``interval="sacrebleu"`` it is sacrebleu's ``--confidence`` interval, kept for parity:
  float32 sums, and the mean of the resampled scores plus and minus half the distance between
  the same two order statistics (sacrebleu only has level 0.95). That interval is symmetric
  around the mean, so on a few examples it can leave the range (a BLEU of [0.34, 1.34]);
- the paired bootstrap p-value (Koehn 2004, as Moses' script and sacrebleu): the share of
  resamples whose absolute difference, centred on the mean of those differences, exceeds the
  observed one, ``(c + 1) / (n + 1)`` (for the metrics sacrebleu does not have, a resampled
  difference equal to the observed one counts too, so that identical systems get p = 1
  rather than sacrebleu's 1/(n+1));
- paired approximate randomization (Riezler and Maxwell 2005, as multeval and sacrebleu): each
  trial swaps the two systems' outputs of a random half of the examples;
  ``rng.integers(2, size=(trials, n), dtype=bool)`` picks them.

A mean metric's interval is the percentile interval between the same two order statistics (a
mean of bounded scores keeps its bounds that way); its resamples are summed in float64.

Every interval holds its own score. A sample whose examples all have the same statistics (one
example, identical examples) has every resample equal to itself: its interval is its score,
both bounds, the very number the metric reports (a resample summed in another order could end
an ulp away: seven examples of 6/7 average to 0.8571428571428571, their numpy mean to
0.857142857142857). Statistics are summed as float32 only where sacrebleu's numbers are what is
matched (BLEU, chrF and TER: ``CorpusStatistics.sacrebleu``; sacrebleu's interval and paired
tests), as float64 for every other metric; sacrebleu's own rules keep sacrebleu's numbers,
degenerate samples included. This is
the one bootstrap of the package: every interval of every module (``<key>_ci``, ROUGE's
``bootstrap_samples``, G-Eval's and pairwise preference's, ``bootstrap_ci``) draws its resamples
and takes its order statistics here.

The paired tests (``compare``) keep sacrebleu's rule for the intervals of BLEU's, chrF's and
TER's systems and of their difference (``PairedTest``'s ``mean ± ci``), which the parity tests
hold; every other metric's are percentile intervals.

The defaults are named once, here: 1,000 resamples and seed 12345 (sacrebleu's), level 0.95,
10,000 randomization trials, the percentile interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

from .validation import check_number

__all__ = ["DEFAULT_SEED", "DEFAULT_RESAMPLES", "DEFAULT_TRIALS", "DEFAULT_CONFIDENCE", "DEFAULT_INTERVAL", "INTERVALS",
           "CorpusStatistics", "Interval",
           "PairedResult", "check_interval_options", "check_interval_method", "corpus_interval",
           "bootstrap_ci", "paired_bootstrap", "paired_randomization", "paired_test", "sum_statistics",
           "percentile_interval", "held_in_range"]

DEFAULT_SEED = 12345       # sacrebleu's SACREBLEU_SEED default
DEFAULT_RESAMPLES = 1000   # sacrebleu's --confidence-n and --paired-bs-n defaults
DEFAULT_TRIALS = 10000     # sacrebleu's --paired-ar-n default
DEFAULT_CONFIDENCE = 0.95  # the level of sacrebleu's intervals (and of compare's, by default)
# a corpus metric's interval: "percentile" (within the metric's range) or "sacrebleu" (its
# --confidence interval, mean ± half the percentile spread: kept for parity, it can leave the range)
INTERVALS = ("percentile", "sacrebleu")
DEFAULT_INTERVAL = "percentile"

# resampled indices drawn at once (rows x examples): 32 MiB of int64, whatever the corpus size
_CHUNK_CELLS = 1 << 22


def check_interval_options(confidence_level: Any, n_resamples: Any, seed: Any,
                           resamples_name: str = "n_resamples", optional: bool = False) -> None:
    """ValueError/TypeError naming the option: a level strictly between 0 and 1, a positive
    whole number of resamples, a seed that is a non-negative integer. ``optional=True`` also
    takes ``confidence_level=None`` (no interval) and ``seed=None`` (the LLM-guided metrics')."""
    if not (optional and confidence_level is None):
        check_number("confidence_level", confidence_level, minimum=0.0, maximum=1.0, min_open=True, max_open=True)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"{resamples_name}: {n_resamples!r} must be a positive integer")
    if not (optional and seed is None) and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed: {seed!r} must be a non-negative integer")


def _tail(n: int, confidence_level: float) -> int:
    """The index of the lower order statistic, ``floor(n * (1 - level) / 2)``, computed exactly
    from the level's decimal form (``n // 40`` at 0.95, as sacrebleu)."""
    return math.floor(n * (1 - Fraction(str(confidence_level))) / 2)


def sum_statistics(stats: Sequence[Sequence[Any]]) -> Any:
    """The statistics summed as sacrebleu sums them (``utils.sum_of_lists``: in order, in the
    numbers' own types; one example's list comes back as it is)."""
    from sacrebleu import utils

    sum_of_lists: Any = utils.sum_of_lists
    return sum_of_lists(stats)


@dataclass(frozen=True)
class CorpusStatistics:
    """Per-example statistics of one system and the function from their sum to the score.

    ``stats``: one list of numbers per example. ``score``: summed statistics (a list, or a
    numpy row) -> the score. ``kind``: ``"corpus"`` (resampled as sacrebleu: float32 sums,
    sacrebleu's interval) or ``"mean"`` (one statistic per example, the score its mean:
    float64, percentile interval). ``divisor``: what the metric's result divides ``score`` by
    (100 for BLEU, which sacrebleu scores on 0-100 and the result reports in [0, 1]); every
    score, interval and difference reported here is divided by it, last. ``sign``: the
    metric's signature for a bootstrap (``sign(n_bootstrap=, seed=, test=, ci=)``).
    ``sacrebleu``: a metric sacrebleu has (BLEU, chrF, TER), whose p-values count only the
    resampled differences *larger* than the observed one, as sacrebleu's, so that two systems
    with the same outputs get p = 1/(n+1); for the other metrics ties count too (p = 1 then).
    """

    stats: list[list[Any]]
    score: Callable[[Any], Any]
    kind: str = "corpus"
    divisor: float = 1.0
    sign: Callable[..., str] | None = None
    sacrebleu: bool = False

    @property
    def dtype(self) -> str:
        """What a resample's statistics are summed as: sacrebleu's float32 for the metrics whose
        numbers are sacrebleu's, float64 for every other."""
        return "float32" if self.sacrebleu else "float64"

    def alike(self) -> bool:
        """Every example has the same statistics (one example, identical examples): every
        resample is the sample itself."""
        first = list(self.stats[0]) if self.stats else []
        return all(list(s) == first for s in self.stats)

    @classmethod
    def of_means(cls, values: Sequence[float], sign: Callable[..., str] | None = None) -> CorpusStatistics:
        """The statistics of a metric whose aggregate is the mean of ``values``."""
        n = len(values)
        return cls([[float(v)] for v in values], lambda s: float(s[0]) / n, "mean", sign=sign)

    def __len__(self) -> int:
        return len(self.stats)

    def corpus_score(self) -> float:
        """The score of the whole corpus: the statistics summed as sacrebleu sums them (in
        Python numbers, in order)."""
        if self.kind == "mean":
            return math.fsum(s[0] for s in self.stats) / len(self.stats)
        return float(self.score(sum_statistics([list(s) for s in self.stats])))

    def resample(self, n_resamples: int, seed: int | None, dtype: str | None = None) -> Any:
        """The score of each of ``n_resamples`` resamples of the examples (seeded as sacrebleu):
        a list of a corpus metric's scores (its statistics summed as ``dtype``, by default
        :attr:`dtype`), a numpy array of a mean metric's means."""
        if self.kind == "mean":
            import numpy as np

            return np.concatenate([self.resampled(idxs) for idxs in _index_chunks(len(self), n_resamples, seed)])
        return [s for idxs in _index_chunks(len(self), n_resamples, seed) for s in self.resampled_scores(idxs, dtype)]

    def resampled_scores(self, idxs: Any, dtype: str | None = None) -> list[Any]:
        """A corpus metric's score of each resample (a row of ``idxs``), as sacrebleu's
        ``_bootstrap_resample`` computes them: statistics as ``dtype`` (by default
        :attr:`dtype`: sacrebleu's float32 for its metrics), each resample summed."""
        import numpy as np

        arr = np.array(self.stats, dtype=dtype or self.dtype)
        score = self.score
        return [score(arr[idx].sum(0)) for idx in idxs]

    def resampled(self, idxs: Any) -> Any:
        """The score of each resample as a numpy array (sacrebleu's ``np.array([...])`` of the
        scores; a mean metric's means in float64)."""
        import numpy as np

        if self.kind == "mean":
            values = np.asarray([s[0] for s in self.stats], dtype=np.float64)
            return values[idxs].mean(axis=1)
        return np.array(self.resampled_scores(idxs))


class Interval(NamedTuple):
    """A confidence interval with the number of examples it rests on and of those left out."""

    low: float | None
    high: float | None
    scored: int
    unscored: int = 0

    def as_list(self) -> list[float | None]:
        return [self.low, self.high]


def _index_chunks(n: int, n_resamples: int, seed: int | None) -> Any:
    """The rows of ``default_rng(seed).choice(n, size=(n_resamples, n))`` (sacrebleu's draws), a
    few at a time: ``choice`` with replacement draws ``integers(0, n)`` in row order, so chunks of
    rows drawn in turn are the same numbers, in bounded memory."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, n_resamples, rows):
        yield rng.integers(0, n, size=(min(rows, n_resamples - start), n))


def _sacrebleu_interval(scores: list[Any], confidence_level: float) -> tuple[float, float]:
    """sacrebleu's ``Score.estimate_ci`` (its ``--confidence``): sorted scores, the exact mean
    (``statistics.mean``), plus and minus half the spread of the two order statistics."""
    raw = sorted(scores)
    n = len(raw)
    lo = _tail(n, confidence_level)
    half = 0.5 * (raw[n - lo - 1] - raw[lo])
    mean = statistics.mean(raw)
    return float(mean - half), float(mean + half)


def _numpy_interval(scores: Any, confidence_level: float) -> tuple[float, float]:
    """sacrebleu's ``significance.estimate_ci`` (its paired tests): the same rule, with numpy's
    sort and mean."""
    import numpy as np

    s = np.sort(scores)
    n = len(s)
    lo = _tail(n, confidence_level)
    half = 0.5 * (s[n - lo - 1] - s[lo])
    mean = s.mean()
    return float(mean - half), float(mean + half)


def _percentile_interval(scores: Any, confidence_level: float) -> tuple[float, float]:
    import numpy as np

    s = np.sort(np.asarray(scores, dtype=np.float64))
    n = len(s)
    lo = _tail(n, confidence_level)
    return float(s[lo]), float(s[n - lo - 1])


Bounds = tuple[float, float] | None
# how far past its range a bound may be and still be rounding: a score's sums and ratios in float64
# leave the range by a few units in the last place (BLEU's 100.00000000000004), a score that is
# really out of a declared range (TER above 100, a BERTScore below 0) by far more
_ROUNDING = 1e-12


def held_in_range(low: float, high: float, bounds: Bounds) -> tuple[float, float]:
    """The interval ``(low, high)`` with each bound that leaves ``bounds`` (the metric's
    ``score_range``) by rounding alone (at most 1e-12 of the range's width) put back on it: the
    one rule every metric's interval follows, so that a score that cannot pass 1 has no interval
    that does. A bound further out is left as it is: some metrics' declared range is their usual
    one, not a hard one (TER passes 100 when the prediction is longer than the reference)."""
    if bounds is None:
        return low, high
    floor, ceiling = bounds
    slack = _ROUNDING * max(1.0, abs(ceiling - floor))

    def held(v: float) -> float:
        if floor - slack <= v < floor:
            return float(floor)
        if ceiling < v <= ceiling + slack:
            return float(ceiling)
        return v

    return held(low), held(high)


def check_interval_method(name: str, value: Any) -> str:
    """``value`` if it is one of :data:`INTERVALS`, else a ValueError naming ``name``."""
    if value not in INTERVALS:
        raise ValueError(f"{name}: {value!r} is not one of {list(INTERVALS)}")
    return str(value)


def corpus_interval(stats: CorpusStatistics, confidence_level: float = DEFAULT_CONFIDENCE,
                    n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    interval: str = DEFAULT_INTERVAL, score: float | None = None,
                    bounds: Bounds = None) -> tuple[float, float]:
    """The bootstrap interval of ``stats``' score, on the metric's own scale.

    A mean metric: the percentile interval of the resampled means. A corpus metric, by default
    (``interval="percentile"``): the percentile interval of the resamples' scores (float64
    sums), which stays within the metric's range; with ``interval="sacrebleu"``: sacrebleu's
    ``corpus_score(n_bootstrap=n_resamples)`` interval with ``SACREBLEU_SEED=seed``, the
    resamples' mean plus and minus half the percentile spread, which can leave the range.
    Examples all alike (one example, identical ones): every resample is the sample, and the
    interval is its score for both bounds (``score``, the metric's own number where it has one;
    else the statistics'), except in sacrebleu's interval of BLEU, chrF and TER (its numbers).
    ``bounds``: the metric's range, on the reported scale (:func:`held_in_range`; not applied to
    sacrebleu's interval, whose numbers are sacrebleu's).
    """
    check_interval_options(confidence_level, n_resamples, seed)
    check_interval_method("interval", interval)
    if not len(stats):
        raise ValueError("predictions: no examples to resample")
    if not (interval == "sacrebleu" and stats.kind == "corpus" and stats.sacrebleu) and stats.alike():
        own = stats.corpus_score() / stats.divisor if score is None else float(score)
        return own, own
    if stats.kind == "mean":
        low, high = _percentile_interval(stats.resample(n_resamples, seed), confidence_level)
    elif interval == "sacrebleu":
        low, high = _sacrebleu_interval(stats.resample(n_resamples, seed), confidence_level)
    else:
        low, high = _percentile_interval(stats.resample(n_resamples, seed, "float64"), confidence_level)
    if interval == "sacrebleu" and stats.kind == "corpus":
        return low / stats.divisor, high / stats.divisor
    return held_in_range(low / stats.divisor, high / stats.divisor, bounds)


def percentile_interval(values: Sequence[float | None], confidence_level: float = DEFAULT_CONFIDENCE,
                        n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED,
                        bounds: Bounds = None) -> tuple[float, float] | tuple[None, None]:
    """The percentile bootstrap interval of the mean of ``values`` (None left out; ``(None,
    None)`` when none is left), unchecked: ``seed=None`` draws a fresh one. What every mean's
    interval in the package is; ``bounds``: the metric's range (:func:`held_in_range`)."""
    kept = [float(v) for v in values if v is not None]
    if not kept:
        return None, None
    stats = CorpusStatistics.of_means(kept)
    if stats.alike():  # every resample is the sample: its mean, as the metric reports it
        score = stats.corpus_score()
        return score, score
    return held_in_range(*_percentile_interval(stats.resample(n_resamples, seed), confidence_level), bounds)


def bootstrap_ci(scores: Sequence[float | None], confidence_level: float = DEFAULT_CONFIDENCE,
                 n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Interval:
    """Bootstrap interval of the mean of per-example ``scores``, examples without a score left
    out and counted.

    For any metric whose aggregate is the mean of per-example scores, LLM-guided ones included:
    the scores that are None (an example the judge could not score) are left out before
    resampling, so no judge is called again. Returns ``Interval(low, high, scored, unscored)``;
    ``low`` and ``high`` are None when no example has a score. Deterministic for a ``seed``.

    >>> bootstrap_ci([1.0, 0.0, None, 1.0, 1.0], n_resamples=200).unscored
    1
    """
    check_interval_options(confidence_level, n_resamples, seed)
    kept = [float(s) for s in scores if s is not None]
    unscored = len(scores) - len(kept)
    if not kept:
        return Interval(None, None, 0, unscored)
    low, high = percentile_interval(kept, confidence_level, n_resamples, seed)
    return Interval(low, high, len(kept), unscored)


@dataclass
class PairedResult:
    """The outcome of a paired test of system B against system A (the baseline)."""

    a: float
    b: float
    a_ci: list[float]
    b_ci: list[float]
    difference: float
    difference_ci: list[float]
    p_value: float

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "a_ci": self.a_ci, "b_ci": self.b_ci,
                "difference": self.difference, "difference_ci": self.difference_ci,
                "p_value": self.p_value}


def _p_value(sample_stats: Any, real_difference: float, strict: bool = True) -> float:
    """sacrebleu's ``_compute_p_value``: ``(count(stats > real) + 1) / (len + 1)``; with
    ``strict=False`` the ties count as well (``>=``)."""
    import numpy as np

    if strict:
        c = int(np.sum(sample_stats > real_difference))
    else:
        c = int(np.sum(sample_stats >= real_difference))
    return min(1.0, (c + 1) / (len(sample_stats) + 1))


def _check_pair(a: CorpusStatistics, b: CorpusStatistics) -> int:
    if len(a) != len(b):
        raise ValueError(f"predictions_b: {len(b)} examples, but predictions_a has {len(a)}; "
                         "a paired test needs the same examples")
    if not len(a):
        raise ValueError("predictions_a: no examples to compare")
    return len(a)


def _bootstrap_scores(a: CorpusStatistics, b: CorpusStatistics, n_resamples: int,
                      seed: int) -> tuple[Any, Any]:
    """Both systems' scores on the same resamples."""
    import numpy as np

    chunks = [(a.resampled(idxs), b.resampled(idxs)) for idxs in _index_chunks(len(a), n_resamples, seed)]
    return np.concatenate([x for x, _ in chunks]), np.concatenate([y for _, y in chunks])


def _result(a: CorpusStatistics, b: CorpusStatistics, score_a: float, score_b: float, scores_a: Any, scores_b: Any,
            confidence_level: float, p_value: float) -> PairedResult:
    """The scores, their intervals and the difference, on the metric's own scale: sacrebleu's
    rule for its metrics (parity), else percentile intervals, a system whose examples are all
    alike getting its own score (and the difference of two such, the difference)."""
    sacrebleu = a.kind == "corpus" and a.sacrebleu
    rule = _numpy_interval if sacrebleu else _percentile_interval
    div = a.divisor

    def ci(scores: Any) -> list[float]:
        low, high = rule(scores, confidence_level)
        return [low / div, high / div]

    a_out, b_out = float(score_a) / div, float(score_b) / div
    a_ci, b_ci, diff_ci = ci(scores_a), ci(scores_b), ci(scores_b - scores_a)
    if not sacrebleu:
        alike_a, alike_b = a.alike(), b.alike()
        a_ci = [a_out, a_out] if alike_a else a_ci
        b_ci = [b_out, b_out] if alike_b else b_ci
        diff_ci = [b_out - a_out] * 2 if alike_a and alike_b else diff_ci
    return PairedResult(a_out, b_out, a_ci, b_ci, b_out - a_out, diff_ci, p_value)


def paired_bootstrap(a: CorpusStatistics, b: CorpusStatistics, n_resamples: int = DEFAULT_RESAMPLES,
                     seed: int = DEFAULT_SEED, confidence_level: float = DEFAULT_CONFIDENCE) -> PairedResult:
    """Paired bootstrap resampling test of B against A: sacrebleu's ``--paired-bs`` (and Moses'
    ``bootstrap-hypothesis-difference-significance.pl``).

    Both systems are scored on the same ``n_resamples`` resamples of the examples. The p-value
    is sacrebleu's, for ``SACREBLEU_SEED=seed``; the intervals of A and of B are sacrebleu's
    ``μ ± ci`` of each system in that test, and ``difference_ci`` the same rule over the
    resampled differences B - A.
    """
    check_interval_options(confidence_level, n_resamples, seed)
    _check_pair(a, b)
    score_a, score_b = a.corpus_score(), b.corpus_score()
    scores_a, scores_b = _bootstrap_scores(a, b, n_resamples, seed)
    import numpy as np

    sample_diffs = np.abs(scores_b - scores_a)
    p = _p_value(sample_diffs - sample_diffs.mean(), abs(score_a - score_b), a.sacrebleu)
    return _result(a, b, score_a, score_b, scores_a, scores_b, confidence_level, p)


def paired_randomization(a: CorpusStatistics, b: CorpusStatistics, n_trials: int = DEFAULT_TRIALS,
                         seed: int = DEFAULT_SEED, confidence_level: float = DEFAULT_CONFIDENCE,
                         n_resamples: int = DEFAULT_RESAMPLES) -> PairedResult:
    """Paired approximate randomization test of B against A: sacrebleu's ``--paired-ar``.

    Each of ``n_trials`` trials swaps the outputs of A and B on a random half of the examples
    and scores both pseudo-systems; the p-value, ``(count(|trial difference| > |observed|) + 1)
    / (n_trials + 1)``, is sacrebleu's for ``SACREBLEU_SEED=seed``. sacrebleu's command line
    reports no interval with this test; here the intervals come from a paired bootstrap of
    ``n_resamples`` resamples with the same seed (those of :func:`paired_bootstrap`).
    """
    check_interval_options(confidence_level, n_trials, seed, "n_resamples")
    check_interval_options(confidence_level, n_resamples, seed)
    n = _check_pair(a, b)
    import numpy as np

    score_a, score_b = a.corpus_score(), b.corpus_score()
    rng = np.random.default_rng(seed)
    pos_sel = rng.integers(2, size=(n_trials, n), dtype=bool)
    neg_sel = ~pos_sel
    # sacrebleu multiplies the selectors with the statistics as Python lists, which numpy turns
    # into int64 (counts) or float64 (TER's average reference length) arrays
    stats_a = np.array(a.stats)
    stats_b = np.array(b.stats)
    shuf_a = pos_sel @ stats_a + neg_sel @ stats_b
    shuf_b = neg_sel @ stats_a + pos_sel @ stats_b
    score = a.score
    trial_a = np.array([score(x) for x in shuf_a])
    trial_b = np.array([score(x) for x in shuf_b])
    p = _p_value(np.abs(trial_a - trial_b), abs(score_a - score_b), a.sacrebleu)
    scores_a, scores_b = _bootstrap_scores(a, b, n_resamples, seed)
    return _result(a, b, score_a, score_b, scores_a, scores_b, confidence_level, p)


def paired_test(a: CorpusStatistics, b: CorpusStatistics, method: str = "bootstrap",
                n_resamples: int | None = None, seed: int = DEFAULT_SEED,
                confidence_level: float = DEFAULT_CONFIDENCE) -> PairedResult:
    """:func:`paired_bootstrap` (``method="bootstrap"``, default 1,000 resamples) or
    :func:`paired_randomization` (``"randomization"``, default 10,000 trials)."""
    if method == "bootstrap":
        return paired_bootstrap(a, b, n_resamples or DEFAULT_RESAMPLES, seed, confidence_level)
    if method == "randomization":
        return paired_randomization(a, b, n_resamples or DEFAULT_TRIALS, seed, confidence_level)
    raise ValueError(f"method: {method!r} is not one of 'bootstrap', 'randomization'")
