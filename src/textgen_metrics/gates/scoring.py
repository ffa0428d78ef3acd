"""Scores per item and repeat of one metric, for a gate or a regression test.

A :class:`Target` is one metric made ready to be asked: its class, the result key, its options,
its checked inputs and its judge (a copy for replay, :mod:`.replay`). :meth:`Target.repeat`
scores every item once more: repeat 0 with the judge as given (so it shares the judge cache with
a plain ``score`` of the same rows), repeat ``r`` with ``judge.repeated(r)``, whose requests
have cache keys of their own (as an audit's repeats). Lexical and semantic metrics are
deterministic: they are scored once, and a corpus metric (BLEU, chrF, TER) keeps its corpus
score and the interval of its own resampling (the score of summed statistics is not a mean).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..judges.base import Judge
from ..metric import Metric
from ..registry import METRICS
from ..significance import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from . import replay as R

__all__ = ["Target", "Scored", "make_target", "UNSCORED_POLICIES"]

UNSCORED_POLICIES = ("inconclusive", "fail")


@dataclasses.dataclass
class Scored:
    """One repeat of every item: the scores (None: unscored), the requests sent, the result's
    signature, and a corpus metric's (score, interval) of summed statistics."""

    values: list[float | None]
    requests: int
    signature: str | None = None
    corpus: tuple[float, list[float | None] | None] | None = None


@dataclasses.dataclass
class Target:
    """One metric ready to be scored, repeat by repeat (see the module's docstring)."""

    spec: type[Metric]
    key: str
    options: dict[str, Any]
    inputs: dict[str, Any]
    judge: Judge | None
    replay: str = "off"
    recording: str | None = None
    recorder: R.RecordingCache | None = None
    configuration: dict[str, Any] | None = None  # the judge fingerprint as configured (replay.judge_fingerprint)
    lower_is_better: bool = False

    def __post_init__(self) -> None:
        self.lower_is_better = self.spec.lower_is_better

    @property
    def fingerprint(self) -> dict[str, Any] | None:
        """The judge fingerprint, its ``model`` the one the server said it ran for the answers
        used so far (every answer passes through the target's recorder, live or cached)."""
        if self.configuration is None or self.recorder is None:
            return self.configuration
        return R.served(self.configuration, self.recorder.used.values())

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def judged(self) -> bool:
        return self.judge is not None

    def metric(self, repeat: int) -> Metric:
        options = dict(self.options)
        if self.judge is not None:
            options["judge"] = self.judge if repeat == 0 else self.judge.repeated(repeat)
        return self.spec(**options)

    def repeat(self, number: int) -> Scored:
        """Every item scored once more (repeat ``number``); a strict replay's missing request is
        a :class:`~.replay.ReplayMissError` naming the metric, the items and the repeat."""
        metric = self.metric(number)
        stats = metric.statistics(self.inputs)
        result = metric.score(stats)
        values = [None if v is None else float(v) for v in result.per_example[self.key]]
        requests = 0
        if self.judged:
            errors = stats.columns["error"]
            missing = [i for i, e in enumerate(errors) if e is not None and R.MISSING_NOTE in e]
            if missing:
                raise R.ReplayMissError(self.name, missing, number, str(self.recording))
            requests = int(result.extras["judge_usage"]["requests"])
        corpus = (result.aggregate[self.key], result.intervals.get(self.key)) if self.spec.corpus else None
        return Scored(values, requests, result.signature, corpus)

    def save_recording(self) -> None:
        """Write what a ``record`` replay used (nothing in the other modes)."""
        if (self.replay == "record" and self.recorder is not None and self.recording is not None
                and self.configuration is not None):
            R.write_recording(self.recording, self.name, self.recorder.entries, self.configuration)


def _spec(metric: Any) -> type[Metric]:
    if isinstance(metric, type) and issubclass(metric, Metric):
        return metric
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric: {metric!r} is not a metric of the library; one of {', '.join(sorted(METRICS))}")
    return METRICS[metric]


def make_target(metric: Any, key: str | None, inputs: Mapping[str, Any], options: Mapping[str, Any] | None,
                judge: Any, judge_replay: str, judge_recording: Any,
                interval: tuple[float, int, int | None] = (DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED)
                ) -> Target:
    """The metric, its key, its options and inputs checked once; its judge ready for replay.
    ``interval``: (confidence level, resamples, seed) of a corpus metric's own interval."""
    spec = _spec(metric)
    given = dict(options or {})
    for reserved in ("judge", "confidence_level", "use_aggregator"):
        if reserved in given:
            raise ValueError(f"options: {reserved!r} is set by the gate itself (pass judge= and "
                             "confidence_level= to the gate)")
    spec.check_options(given)
    if spec.corpus:  # the interval of its own resampling, at the gate's level
        level, resamples, seed = interval
        given.update(confidence_level=level, n_resamples=given.get("n_resamples", resamples),
                     seed=given.get("seed", seed))
    else:  # a mean's interval is the gate's, over item means
        given["confidence_level"] = None
    columns = {*spec.columns, *spec.optional_columns}
    for name in inputs:
        if name not in columns:
            raise TypeError(f"{name}: not an input of {spec.name}; it takes {', '.join(sorted(columns))}")
    for name in spec.columns:
        if inputs.get(name) is None:
            raise ValueError(f"{name}: missing; {spec.name} takes {', '.join(spec.columns)}")
    mode, path = R.check_replay(judge_replay, judge_recording)
    probe = spec(**given, **({"judge": judge} if spec.judge else {}))
    keys = probe.keys()
    chosen = keys[0] if key is None else key
    if chosen not in keys:
        raise ValueError(f"key: {key!r} is not a score of {spec.name}; its scores are {', '.join(keys)}")
    probe.check_inputs(dict(inputs))  # the errors of bad input now, before any judge call
    target = Target(spec, chosen, given, dict(inputs), None, mode, path)
    if not spec.judge:
        return target
    base: Judge = probe.resolved_judge  # type: ignore[attr-defined]
    target.configuration = R.judge_fingerprint(spec.name, getattr(spec, "prompts_version", ""), base)
    if mode == "strict" and path is not None:
        entries = R.check_fingerprint(path, R.read_recording(path), target.configuration, base.served_model)
        target.judge, target.recorder = R.strict_judge(base, entries)
    else:  # "record" writes what the recorder kept; "off" reads the served model off it
        target.judge, target.recorder = R.recording_judge(base)
    return target
