"""The probes of a judge audit, run through a real judge: each probe is one or more runs of the
metric itself (its ``statistics`` over the rows, with the judge's concurrency, cache, rate
budget, batch mode, re-asks and usage, like any scoring run), then a statistic of
:mod:`textgen_metrics.stats.audit` over what the runs gave.

- the plain run: the metric over the rows as given. Every probe starts from it, so after a
  scoring run with the same judge cache it sends nothing.
- position (a comparison: a metric whose inputs are ``predictions`` and ``baselines``; the
  prediction is read first): ``pairwise_preference`` asks both orders itself, so both verdicts
  of each pair come from the plain run's details (no further request). Any other comparison is
  run once more on the swapped rows (baselines as predictions): at most one request per pair
  beyond the plain run, for a metric that asks one request per pair. A verdict is read from the
  score mapped to [0, 1]: above 0.5 the prediction ("a") wins, below the baseline ("b"), 0.5 a
  tie; in the swapped run the other way round. A pair whose prediction equals its baseline
  (pairwise preference: a tie without a judge call) is no pair to audit and is left out.
- verbosity: the metric over the rows with :data:`FILLER` appended to each prediction (after a
  blank line): 28 words that restate nothing and add no content, so any change of score is the
  length's (and the filler's tone: it claims nothing about quality).
- repeat: ``K - 1`` more runs of the plain run, run ``r`` through ``judge.repeated(r)``: every
  request asked again with the repeat number in its cache key (never folded into the plain
  answer by the cache or by in-flight sharing), at the judge's temperature as given (a judge at
  temperature 0 with a fixed seed may well answer the same every time: that is its repeat
  variance).
- calibration: the plain run's scores mapped to [0, 1] over the metric's range against people's
  0/1 labels (for a comparison: gold "a" is 1, "b" 0).
- alt_test (several annotators rated the same rows, one column each): the plain run's values
  against theirs, by :func:`textgen_metrics.stats.audit.alt_test` (Calderon et al. 2025): for a
  comparison the judge's verdict ("a", "b" or "tie", read from the score as the position probe
  reads it) against each annotator's ("a"/"b"/"tie", 1/0), alignment by accuracy; otherwise the
  judge's score in the metric's own units against the annotators' scores on the same scale,
  alignment by negative RMSE. No request beyond the plain run.

Unusable answers (a request the engine gave up on after its re-asks) leave that example without
a score in that run: it is counted (``Run.unscored``) and left out of the statistics, never
scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ..judges import Judge
from ..llm.metrics import JudgedMetric
from ..llm.pairwise import PairwisePreference
from ..stats import audit as stats

__all__ = ["FILLER", "Target", "Run", "position_probe", "verbosity_probe",
           "repeat_probe", "calibration_probe", "alt_test_probe", "annotator_values", "padded", "swapped",
           "gold_labels", "binary_labels", "is_comparison", "asks_both_orders"]

# appended to each prediction by the verbosity probe: no fact, no claim of quality, no instruction
FILLER = ("The points above are the whole of this answer; nothing more is added here, and the answer above "
          "stands as it was written, to be read in full.")
_SEPARATOR = "\n\n"
_FROM_PREDICTION = {"win": "a", "loss": "b", "tie": "tie"}


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of the metric: per-example scores (None: unscored), details and errors; the
    requests it sent and the answers the cache gave."""

    label: str
    scores: list[float | None]
    details: list[dict[str, Any]]
    errors: list[str | None]
    requests: int
    cached: int

    @property
    def unscored(self) -> int:
        return sum(e is not None for e in self.errors)

    def summary(self) -> dict[str, Any]:
        return {"run": self.label, "requests": self.requests, "cached": self.cached, "unscored": self.unscored}


@dataclasses.dataclass(frozen=True)
class Target:
    """What the probes run: the metric class, its options (without the judge), its checked
    input columns and the judge."""

    metric: type[JudgedMetric]
    options: Mapping[str, Any]
    inputs: Mapping[str, list[Any]]
    judge: Judge

    def make(self, judge: Judge | None = None) -> JudgedMetric:
        return self.metric(**{**self.options, "judge": judge or self.judge, "on_error": "record"})

    @property
    def score_range(self) -> tuple[float, float]:
        metric = self.make()
        low, high = getattr(metric.options, "score_range", None) or self.metric.score_range
        return float(low), float(high)

    @property
    def comparison(self) -> bool:
        return is_comparison(self.metric)

    @property
    def asks_both_orders(self) -> bool:
        return asks_both_orders(self.metric)

    def run(self, label: str, inputs: Mapping[str, list[Any]] | None = None, judge: Judge | None = None) -> Run:
        metric = self.make(judge)
        got = metric.statistics(dict(inputs if inputs is not None else self.inputs))
        return Run(label, list(got.columns[metric.score_key]), list(got.columns["details"]),
                   list(got.columns["error"]), int(got.totals.get("requests", 0)), int(got.totals.get("cached", 0)))


def is_comparison(metric: type[JudgedMetric]) -> bool:
    """A metric that compares a prediction with a baseline (its inputs name both)."""
    return {"predictions", "baselines"} <= set(metric.columns)


def asks_both_orders(metric: type[JudgedMetric]) -> bool:
    """The metric judges each pair in both orders itself, its details holding both verdicts
    (pairwise preference)."""
    return issubclass(metric, PairwisePreference)


def padded(inputs: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    """The inputs with :data:`FILLER` appended to each prediction."""
    return {**inputs, "predictions": [f"{p}{_SEPARATOR}{FILLER}" for p in inputs["predictions"]]}


def swapped(inputs: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    """The inputs of a comparison with predictions and baselines exchanged."""
    return {**inputs, "predictions": list(inputs["baselines"]), "baselines": list(inputs["predictions"])}


def _verdict(unit: float | None, swap: bool) -> str | None:
    if unit is None:
        return None
    if unit == 0.5:
        return "tie"
    return ("a" if unit > 0.5 else "b") if not swap else ("b" if unit > 0.5 else "a")


def _unit(scores: Sequence[float | None], span: tuple[float, float]) -> list[float | None]:
    low, high = span
    return [None if s is None else min(max((s - low) / (high - low), 0.0), 1.0) for s in scores]


def gold_labels(values: Sequence[Any]) -> list[str | None]:
    """People's verdicts on pairs: "a" (the prediction is the better) or "b"; 1/0 and True/False
    are read as "a"/"b"; None or an empty text: no label."""
    out: list[str | None] = []
    for i, v in enumerate(values):
        if v is None or (isinstance(v, str) and not v.strip()):
            out.append(None)
        elif isinstance(v, str) and v.strip().lower() in ("a", "b"):
            out.append(v.strip().lower())
        elif isinstance(v, (bool, int, float)) and v in (0, 1):
            out.append("a" if v else "b")
        elif isinstance(v, str) and v.strip() in ("0", "1"):
            out.append("a" if v.strip() == "1" else "b")
        else:
            raise ValueError(f"human labels: row {i + 1}: {v!r} is not a pair's gold label ('a' or 'b')")
    return out


_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no")


def binary_labels(values: Sequence[Any], comparison: bool) -> list[int | None]:
    """People's 0/1 labels (1, 0, True, False, "yes", "no" and their texts; a comparison's gold
    "a" is 1, "b" 0); None or an empty text: no label."""
    if comparison:
        return [None if g is None else int(g == "a") for g in gold_labels(values)]
    out: list[int | None] = []
    for i, v in enumerate(values):
        text = v.strip().lower() if isinstance(v, str) else None
        if v is None or text == "":
            out.append(None)
        elif isinstance(v, (bool, int, float)) and v in (0, 1):
            out.append(int(v))
        elif text in _TRUE or text in _FALSE:
            out.append(int(text in _TRUE))
        else:
            raise ValueError(f"human labels: row {i + 1}: {v!r} is not a 0/1 label")
    return out


def _both_orders(plain: Run) -> tuple[list[str | None], list[str | None], list[int]]:
    """(first, second, rows) from a run that asked both orders: each pair's verdicts read from
    its details; a pair without a judge call (prediction equal to baseline) left out."""
    first: list[str | None] = []
    second: list[str | None] = []
    rows: list[int] = []
    for i, (d, err) in enumerate(zip(plain.details, plain.errors, strict=True)):
        orders = d.get("orders") if err is None else None
        if err is None and not orders:
            continue  # identical texts: a tie no judge was asked about
        rows.append(i)
        if orders is None:
            first.append(None)
            second.append(None)
            continue
        by_side = {o["prediction_as"]: _FROM_PREDICTION[o["for_prediction"]] for o in orders}
        first.append(by_side.get("A"))
        second.append(by_side.get("B"))
    return first, second, rows


def position_probe(target: Target, plain: Run, gold: Sequence[str | None] | None, *, missing: str = "omit",
                   confidence_level: float, n_resamples: int, seed: int | None) -> tuple[dict[str, Any], list[Run]]:
    """The position audit of a comparison and the runs it added (none for a metric that asks
    both orders)."""
    if not target.comparison:
        return {"skipped": f"{target.metric.name} compares no two answers (no baselines): no position to swap"}, []
    extra: list[Run] = []
    if target.asks_both_orders:
        first, second, rows = _both_orders(plain)
    else:
        swap = target.run("position (swapped)", swapped(target.inputs))
        extra.append(swap)
        span = target.score_range
        first = [_verdict(u, False) for u in _unit(plain.scores, span)]
        second = [_verdict(u, True) for u in _unit(swap.scores, span)]
        rows = list(range(len(first)))
    labels = [gold[i] for i in rows] if gold is not None else None
    out = stats.position_audit(first, second, labels, missing=missing, confidence_level=confidence_level,
                               n_resamples=n_resamples, seed=seed)
    return out, extra


def verbosity_probe(target: Target, plain: Run, *, threshold: float, confidence_level: float, n_resamples: int,
                    seed: int | None) -> tuple[dict[str, Any], list[Run]]:
    """The verbosity audit: the plain scores against those of the padded predictions."""
    pad = target.run("verbosity (padded)", padded(target.inputs))
    out = stats.verbosity_audit(plain.scores, pad.scores, threshold=threshold, score_range=target.score_range,
                                confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    return {**out, "filler": FILLER}, [pad]


def repeat_probe(target: Target, plain: Run, repeats: int, *, threshold: float, confidence_level: float,
                 n_resamples: int, seed: int | None) -> tuple[dict[str, Any], list[Run]]:
    """The repeat audit: the plain run and ``repeats - 1`` more, each request asked anew."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 2:
        raise ValueError(f"repeats: {repeats!r} must be an integer of at least 2 (the plain run is the first)")
    runs = [target.run(f"repeat {r + 1}", judge=target.judge.repeated(r)) for r in range(1, repeats)]
    table = [list(row) for row in zip(plain.scores, *(r.scores for r in runs), strict=True)]
    out = stats.repeat_audit(table, threshold=threshold, score_range=target.score_range,
                             confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    return out, runs


def calibration_probe(target: Target, plain: Run, labels: Sequence[int | None], *, confidence_level: float,
                      n_resamples: int, seed: int | None) -> dict[str, Any]:
    """The calibration audit of the plain run's scores against people's 0/1 labels."""
    return stats.calibration_audit(_unit(plain.scores, target.score_range), labels,
                                   confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)


_PAIR_VERDICTS = {"a": "a", "b": "b", "tie": "tie", "1": "a", "0": "b"}


def annotator_values(column: str, values: Sequence[Any], comparison: bool) -> list[Any]:
    """One annotator's values from their column: for a comparison a verdict ("a", "b", "tie";
    1/0 and True/False as "a"/"b"), otherwise a score (a number, a number's text, True/False and
    yes/no as 1/0); None or an empty text: the annotator did not rate the row."""
    out: list[Any] = []
    for i, v in enumerate(values):
        text = v.strip().lower() if isinstance(v, str) else None
        if v is None or text == "":
            out.append(None)
        elif comparison:
            key = text if text is not None else (str(int(v)) if isinstance(v, (bool, int, float)) and v in (0, 1)
                                                 else None)
            if key not in _PAIR_VERDICTS:
                raise ValueError(f"annotator_columns: row {i + 1}, column {column!r}: {v!r} is not a verdict on a "
                                 "pair ('a', 'b' or 'tie')")
            out.append(_PAIR_VERDICTS[key])
        elif isinstance(v, bool):
            out.append(float(v))
        elif isinstance(v, (int, float)) and v == v and abs(v) != float("inf"):
            out.append(float(v))
        elif text in _TRUE or text in _FALSE:
            out.append(float(text in _TRUE))
        else:
            try:
                number = float(text) if text is not None else float("nan")
            except ValueError:
                number = float("nan")
            if number != number or abs(number) == float("inf"):
                raise ValueError(f"annotator_columns: row {i + 1}, column {column!r}: {v!r} is not a score (a "
                                 "number on the metric's scale)")
            out.append(number)
    return out


def alt_test_probe(target: Target, plain: Run, annotations: Mapping[str, Sequence[Any]], *, epsilon: float,
                   alpha: float, confidence_level: float, n_resamples: int, seed: int | None) -> dict[str, Any]:
    """The alt-test of the plain run's values against the annotators' (``annotations``: column
    name to that annotator's values, read by :func:`annotator_values`). Where the judge's unusable
    answers leave no annotator enough rows, the probe is skipped and says why."""
    if target.comparison:
        judge: list[Any] = [_verdict(u, False) for u in _unit(plain.scores, target.score_range)]
        kind = "labels"
    else:
        judge, kind = list(plain.scores), "scores"
    names = list(annotations)
    table = [list(row) for row in zip(*(annotations[c] for c in names), strict=True)]
    try:
        out = stats.alt_test(judge, table, epsilon=epsilon, alpha=alpha, kind=kind, annotators=names,
                             confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    except ValueError as err:
        if "no annotator has" not in str(err):
            raise
        return {"skipped": f"{err} (after the judge's unusable answers)", "epsilon": epsilon, "alpha": alpha}
    return {**out, "flagged": not out["passed"]}
