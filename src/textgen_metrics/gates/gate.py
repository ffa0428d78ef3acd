"""``gate`` and ``assert_gate``: pass / fail / inconclusive of a metric against a threshold.

docs/gating.md. The verdict is read off the bootstrap interval of the score over items
(:mod:`.stats`): ``pass`` when its lower end is at or above the threshold, ``fail`` when its
upper end is below, ``inconclusive`` otherwise (a ceiling, the other way round, for a metric
whose lower score is better: TER). A judge's repeats on one item are averaged within the item.
``repeats="auto"`` asks one more repeat of every item only while the verdict is undecided, up
to ``max_repeats``, each look's interval at the level that spends the error evenly over the
looks (:func:`.stats.look_level`), so that stopping at the first decided look keeps the stated
error rates (checked by simulation: ``benchmarks/gates.py``). Unscored items (an answer that
stayed unusable, a timeout, an HTTP error) are never a pass or a fail of their own.

Unlike deepeval's ``assert_test`` (one run's score against the threshold) the verdict says
when the data cannot tell.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..run import resolve_judge
from ..significance import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    check_interval_options,
    percentile_interval,
)
from ..stats import gates as S
from .scoring import UNSCORED_POLICIES, make_target

__all__ = ["GateResult", "gate", "assert_gate", "VERDICTS"]

VERDICTS = ("pass", "fail", "inconclusive")


@dataclasses.dataclass(frozen=True)
class GateResult:
    """One gate's verdict and the figures behind it (:meth:`as_dict`: the documented dict)."""

    metric: str
    key: str
    verdict: str
    score: float | None
    ci: tuple[float | None, float | None]
    threshold: float
    n: int
    repeats: int
    requests: int
    unscored: int
    reasons: tuple[str, ...]
    signature: str | None
    judge_fingerprint: dict[str, Any] | None
    lower_is_better: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "key": self.key, "verdict": self.verdict, "score": self.score,
                "ci": list(self.ci), "threshold": self.threshold, "n": self.n, "repeats": self.repeats,
                "requests": self.requests, "unscored": self.unscored, "reasons": list(self.reasons),
                "signature": self.signature, "judge_fingerprint": self.judge_fingerprint,
                "lower_is_better": self.lower_is_better}

    def describe(self) -> str:
        """One line for an assertion or a log: verdict, score, interval, threshold, n."""
        low, high = (f"{v:.4f}" if v is not None else "-" for v in self.ci)
        bound = "ceiling" if self.lower_is_better else "threshold"
        score = "-" if self.score is None else f"{self.score:.4f}"
        why = f"; {'; '.join(self.reasons)}" if self.reasons else ""
        return (f"{self.metric}.{self.key}: {self.verdict} (score {score}, {self.n} items, interval [{low}, {high}], "
                f"{bound} {self.threshold}, {self.repeats} repeat(s), {self.unscored} unscored){why}")


def _check_number(name: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"{name}: {value!r} must be a number")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name}: {value!r} must lie in [{low}, {high}]")
    return float(value)


def _check_repeats(repeats: Any, max_repeats: Any) -> tuple[bool, int]:
    """(adaptive, the most repeats) of ``repeats`` ("auto" or K) and ``max_repeats``."""
    if isinstance(max_repeats, bool) or not isinstance(max_repeats, int) or max_repeats < 1:
        raise ValueError(f"max_repeats: {max_repeats!r} must be a positive integer")
    if repeats == "auto":
        return True, max_repeats
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats: {repeats!r} must be 'auto' or a positive integer")
    return False, repeats


@dataclasses.dataclass
class _Looks:
    """The repeats asked so far, per item, and what they cost."""

    rows: list[list[float | None]]
    requests: int = 0
    signature: str | None = None

    def add(self, values: list[float | None]) -> None:
        for row, value in zip(self.rows, values, strict=True):
            row.append(value)


def _verdict(target: Any, means: list[float | None], level: float, threshold: float, unscored: str,
             max_unscored: float, n_resamples: int, seed: int, corpus: tuple[float, Any] | None
             ) -> tuple[str, float | None, tuple[float | None, float | None], int, int, list[str]]:
    """(verdict, score, interval, n scored, unscored, reasons) of the item means at ``level``."""
    missing = sum(v is None for v in means)
    scored = [v for v in means if v is not None]
    reasons: list[str] = []
    score: float | None
    if corpus is not None:  # a corpus metric: its score of summed statistics and its own interval
        score, interval = corpus
        low, high = (interval[0], interval[1]) if interval else (None, None)
    else:
        score = sum(scored) / len(scored) if scored else None
        low, high = percentile_interval(scored, level, n_resamples, seed)
    verdict = S.verdict(low, high, threshold, target.lower_is_better)
    if missing and unscored == "fail":
        verdict = "fail"
        reasons.append(f"{missing} of {len(means)} items unscored (unscored='fail')")
    elif missing and missing > max_unscored * len(means):
        verdict = "inconclusive"
        reasons.append(f"{missing} of {len(means)} items unscored, more than max_unscored={max_unscored}")
    elif missing:
        reasons.append(f"{missing} unscored item(s) left out")
    if not scored:
        reasons.append("no item has a score")
    return verdict, score, (low, high), len(scored), missing, reasons


def _ask(target: Any, asked: _Looks, number: int) -> None:
    more = target.repeat(number)
    asked.add(more.values)
    asked.requests += more.requests


def gate(metric: Any, threshold: float, *, judge: Any = None, key: str | None = None, repeats: Any = "auto",
         max_repeats: int = 5, confidence_level: float = DEFAULT_CONFIDENCE, unscored: str = "inconclusive",
         max_unscored: float = 0.1, seed: int = DEFAULT_SEED, options: Mapping[str, Any] | None = None,
         n_resamples: int = DEFAULT_RESAMPLES, judge_replay: str = "off", judge_recording: Any = None,
         lower_is_better: bool | None = None, judge_options: Mapping[str, Any] | None = None,
         **inputs: Any) -> GateResult:
    """The verdict of ``metric`` (a name of the library, or a Metric class) on ``inputs`` (its
    columns: ``predictions=``, ``references=``, ``contexts=``...) against ``threshold`` (a floor;
    a ceiling for a lower-is-better metric). ``lower_is_better``: None reads the metric's
    declaration (TER, bias, toxicity, hallucination: an error rate or a rate of faults); True or
    False overrides it (a metric of one's own that declares nothing). ``judge_options`` go to the judge's
    constructor when ``judge`` is a string (``base_url``, ``concurrency``, ``cache``...). See the
    module's docstring and docs/gating.md."""
    threshold = _check_number("threshold", threshold)
    check_interval_options(confidence_level, n_resamples, seed)
    max_unscored = _check_number("max_unscored", max_unscored, 0.0, 1.0)
    if unscored not in UNSCORED_POLICIES:
        raise ValueError(f"unscored: {unscored!r} is not one of {list(UNSCORED_POLICIES)}")
    adaptive, most = _check_repeats(repeats, max_repeats)
    if judge_options:
        judge = resolve_judge(judge, judge_options)
    target = make_target(metric, key, inputs, options, judge, judge_replay, judge_recording,
                         (confidence_level, n_resamples, seed))
    if lower_is_better is not None:
        if not isinstance(lower_is_better, bool):
            raise ValueError(f"lower_is_better: {lower_is_better!r} must be True, False or None")
        target.lower_is_better = lower_is_better
    result = decide(target, threshold, adaptive, most, confidence_level, unscored, max_unscored, n_resamples, seed)
    target.save_recording()
    return result


def decide(target: Any, threshold: float, adaptive: bool, most: int, confidence_level: float, unscored: str,
           max_unscored: float, n_resamples: int, seed: int) -> GateResult:
    """The verdict of ``target`` (a :class:`~.scoring.Target`, or anything with its ``repeat``,
    ``judged``, ``name``, ``key``, ``lower_is_better`` and ``fingerprint``: the benchmark's
    simulated judge), its repeats asked as ``adaptive`` / ``most`` say."""
    if not target.judged:  # deterministic: one repeat, one look
        adaptive, most = False, 1
    level = S.look_level(confidence_level, most if adaptive else 1)
    first = target.repeat(0)
    asked = _Looks([[v] for v in first.values], first.requests, first.signature)
    number = 1
    while number < most and not adaptive:  # repeats=K: every repeat, one look
        _ask(target, asked, number)
        number += 1

    def look() -> tuple[str, float | None, tuple[float | None, float | None], int, int, list[str]]:
        return _verdict(target, S.item_means(asked.rows), level, threshold, unscored, max_unscored, n_resamples,
                        seed, first.corpus)

    outcome = look()
    while adaptive and outcome[0] == "inconclusive" and number < most:  # "auto": another look
        _ask(target, asked, number)
        number += 1
        outcome = look()
    verdict, score, interval, n, missing, reasons = outcome
    if adaptive and verdict == "inconclusive" and number >= most:
        reasons.append(f"still undecided after max_repeats={most}")
    return GateResult(target.name, target.key, verdict, score, interval, threshold, n, number, asked.requests,
                      missing, tuple(reasons), asked.signature, target.fingerprint, target.lower_is_better)


def assert_gate(metric: Any, threshold: float, *, inconclusive: str = "fail", **arguments: Any) -> GateResult:
    """:func:`gate`, raising ``AssertionError`` (the figures in its message) unless it passes;
    ``inconclusive="pass"`` lets an inconclusive verdict through (the fixture's
    ``--gate-inconclusive``)."""
    if inconclusive not in ("fail", "pass"):
        raise ValueError(f"inconclusive: {inconclusive!r} is not one of ['fail', 'pass']")
    result = gate(metric, threshold, **arguments)
    if result.verdict == "fail" or (result.verdict == "inconclusive" and inconclusive == "fail"):
        raise AssertionError(result.describe())
    return result
