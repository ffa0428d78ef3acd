"""The core of the cluster front ends (:mod:`textgen_metrics.ray`, :mod:`textgen_metrics.spark`):
metric statistics of a part of a table, per-row score columns, and the exact merge on the driver.

A :class:`Plan` is what every worker needs: the metric names (the registry's), ``columns`` (a
metric input to a column name, as the command line's ``--column``), ``options``
(``{metric: {option: value}}``, checked by each metric's ``Options`` before any work, as the
library checks them) and the judge of the LLM-guided metrics. A worker turns a batch of rows (a
pandas DataFrame or ``{column: values}``) into

- each metric's :class:`~textgen_metrics.metric.Stats` (:meth:`BatchScorer.statistics`), which
  travel as JSON (:func:`pack`) with the batch's place in the table (an order key and the
  number of rows); the driver sorts the batches by their key, places each at the rows it is
  (:meth:`Stats.placed`) and sums them: the merged statistics are those of the whole table in
  its order, whatever the partitioning, and :func:`results` scores them into the result dicts
  the library returns on one machine (corpus scores from summed sufficient statistics, the
  same signatures, the same intervals for the same seed);
- per-row score columns ``<metric>.<key>`` (:meth:`BatchScorer.score_columns`: ``rouge.rougeL``,
  ``faithfulness.faithfulness``), each metric's per-example values of that batch.

A batch with a value no metric can score sends that error (:func:`batch_statistics`) in place of
its statistics; :func:`merge` raises it with the row's index in the whole table, which only the
driver knows. What a metric decides once per run (G-Eval's steps) is decided by the driver
before any worker starts (:func:`pin_runs`) and travels in the plan's options.

Nothing here tests a metric's name: what a metric computes where is its own declaration (a
metric whose examples are scored together, BERTScore, gives its inputs as statistics and is
scored on the driver, as :class:`~textgen_metrics.metric.ScoredTogether` says). The metric
objects of a plan are made once per worker process (:func:`process_scorer`), so that a costly
setup (BERTScore's model, a local judge) is paid once per actor or executor process.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import json
import math
import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .errors import InputError, InputTypeError, OptionError
from .metric import Metric, Stats
from .registry import column_fields, get_metric

__all__ = ["Plan", "make_plan", "BatchScorer", "process_scorer", "shared_judge", "lasting_shared_judge",
           "loads_model", "score_names", "pack", "batch_statistics", "batch_input_error", "is_input_error",
           "pin_runs", "merge", "results", "resolve_fields", "ORDER", "COUNT", "STATS"]

# the columns of a batch's statistics as a row: its order key, its number of rows, its statistics (JSON)
ORDER, COUNT, STATS = "order", "count", "stats"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What every worker of a cluster job needs; picklable when the judge is (a string is)."""

    metrics: tuple[str, ...]
    columns: dict[str, str]
    options: dict[str, dict[str, Any]]
    judge: Any = None
    judge_options: dict[str, Any] | None = None

    @property
    def fingerprint(self) -> str:
        """A hash of the plan, the key of a worker process's metric objects."""
        text = json.dumps([self.metrics, self.columns, self.options, self.judge, self.judge_options],
                          sort_keys=True, default=_stable)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def specs(self) -> list[type[Metric]]:
        return [get_metric(name) for name in self.metrics]

    def metric_options(self, spec: type[Metric], judge: Any) -> dict[str, Any]:
        """The keyword options of ``spec``'s object (with the judge of the LLM-guided metrics)."""
        opts = dict(self.options.get(spec.name, {}))
        if spec.judge and judge is not None:
            opts.setdefault("judge", judge)
        return opts

    def driver_metrics(self) -> dict[str, Metric]:
        """The metric objects that score the merged statistics (the judge is not resolved: the
        statistics carry the judge's model and mode)."""
        return {spec.name: spec(**self.metric_options(spec, self.judge)) for spec in self.specs()}


def _stable(value: Any) -> str:
    """A value that is not JSON in a fingerprint: its pickle's hash (the same for a copy, as each
    task of a Spark job unpickles), else its repr."""
    try:
        return hashlib.sha256(pickle.dumps(value)).hexdigest()
    except Exception:  # an object that does not pickle: this object only
        return repr(value)


def make_plan(metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
              options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
              judge_options: Mapping[str, Any] | None = None) -> Plan:
    """A checked plan: known metrics, columns that are inputs of them, options each metric
    takes with valid values (an error naming the metric and the option), a judge where an
    LLM-guided metric is asked for."""
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    if not names:
        raise ValueError("metrics: name at least one metric")
    specs = [get_metric(name) for name in names]
    if len(set(names)) != len(names):
        raise ValueError(f"metrics: {names} names a metric twice")
    columns = dict(columns or {})
    inputs = {c for spec in specs for c in (*spec.columns, *spec.optional_columns)}
    for key, value in columns.items():
        if key not in inputs:
            raise ValueError(f"columns: {key!r} is not an input of {', '.join(names)} (their inputs: "
                             f"{', '.join(sorted(inputs))})")
        if not isinstance(value, str) or not value:
            raise ValueError(f"columns: {key!r} must map to a column name, got {value!r}")
    opts = {k: dict(v) for k, v in (options or {}).items()}
    unknown = sorted(set(opts) - set(names))
    if unknown:
        raise ValueError(f"options: {unknown[0]!r} is not among the metrics {list(names)}")
    if judge is None and any(spec.judge for spec in specs):
        missing = next(spec.name for spec in specs if spec.judge)
        if "judge" not in opts.get(missing, {}):
            raise ValueError(f"judge: {missing} needs a judge (judge='openai:<model>', a judge object or a "
                             "function messages -> str)")
    plan = Plan(names, columns, opts, judge, dict(judge_options) if judge_options is not None else None)
    for spec in specs:  # the library's keyword options: every field of the metric's Options
        known = [f.name for f in spec.option_fields()]
        for option in opts.get(spec.name, {}):
            if option not in known:
                raise OptionError(f"options of {spec.name}: {spec.name} has no option {option!r}; its options: "
                                  f"{', '.join(sorted(known))}", option)
    plan.driver_metrics()  # every Options checked here, before any worker starts
    return plan


def resolve_fields(spec: type[Metric], available: Iterable[str], columns: Mapping[str, str]) -> dict[str, str]:
    """``{input: column}`` of ``spec`` in a table with the columns ``available``: the mapped
    column, else the first of the input's spellings (``predictions`` or ``prediction``) the table
    has; an optional input only when mapped or present. A ValueError names what is missing."""
    have = list(available)
    out: dict[str, str] = {}
    for column in (*spec.columns, *spec.optional_columns):
        wanted = [columns[column]] if column in columns else list(column_fields(column))
        found = next((w for w in wanted if w in have), None)
        if found is not None:
            out[column] = found
        elif column in spec.columns or column in columns:
            looked = " or ".join(repr(w) for w in wanted)
            raise ValueError(f"columns: the data has no column {looked} for {spec.name}'s {column} (it has: "
                             f"{', '.join(map(str, have)) or 'none'}); map one with columns={{{column!r}: ...}}")
    return out


def check_table(plan: Plan, available: Iterable[str]) -> None:
    """Every metric's inputs are found among the table's columns (before any work is sent)."""
    have = list(available)
    for spec in plan.specs():
        resolve_fields(spec, have, plan.columns)


def pin_runs(plan: Plan, available: Iterable[str]) -> tuple[Plan, dict[str, dict[str, int]]]:
    """The plan with what a metric asks once per run (G-Eval's evaluation steps) asked once, by
    the driver, and given to every worker as an option, so that every batch runs alike (as the
    library's one run does; a judge asked in each worker could answer each differently, and
    the batches would not merge); with the judge's usage for it, by metric (:func:`results`
    counts it). ``available``: the table's columns (which inputs the run is given). A request
    that fails raises a :class:`~textgen_metrics.judges.JudgeError` before any worker starts."""
    have = list(available)
    options = {k: dict(v) for k, v in plan.options.items()}
    usage: dict[str, dict[str, int]] = {}
    judge: Any = None
    for spec in plan.specs():
        if not spec.pins_run:
            continue
        if judge is None:
            judge = _worker_judge(plan.judge, plan.judge_options, "driver")
        metric = spec(**plan.metric_options(spec, judge))
        pinned, used = metric.pin_run(list(resolve_fields(spec, have, plan.columns)))
        if pinned:
            options[spec.name] = {**options.get(spec.name, {}), **pinned}
            usage[spec.name] = used
    return (dataclasses.replace(plan, options=options) if usage else plan), usage


def score_names(plan: Plan) -> list[str]:
    """The per-row score columns of the plan, in order: ``<metric>.<key>``."""
    return [f"{name}.{key}" for name, metric in plan.driver_metrics().items() for key in metric.keys()]


def _cell(value: Any, kind: str) -> Any:
    """A table cell as the metric takes it: a missing one as None; Arrow's and pandas' arrays as
    lists; in a list column, a JSON list in a string (a CSV cell) as that list, a lone text as a
    list of one."""
    if (isinstance(value, float) and math.isnan(value)) or type(value).__name__ in ("NAType", "NaTType"):
        return None  # a missing cell (pandas' NA, NaN for a null of Arrow): the library's None
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if kind != "text" and isinstance(value, str):
        if value.startswith("["):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                parsed = None
            if isinstance(parsed, list):
                return parsed
        if kind == "list":
            return [value]
    return value


def _worker_judge(judge: Any, judge_options: Mapping[str, Any] | None, context: str) -> Any:
    """The judge a worker process gives its LLM-guided metrics: made once per process from the
    plan's (a string and its options, a judge object or a function). ``context`` says where
    (``"ray"``, ``"spark"``, ``"driver"``). A judge of ``judges.cluster_judge(...)`` arrives
    here already sharing the cluster's budget and cache (``judge.share(budget=..., cache=...)``);
    the one place where the adapters hand a judge to a worker."""
    if judge is None:
        return None
    from .scoring import resolve_judge

    return resolve_judge(judge, judge_options)


class BatchScorer:
    """A plan's metric objects in one worker process: statistics and per-row scores of batches."""

    def __init__(self, plan: Plan, context: str = "driver") -> None:
        self.plan = plan
        judge = _worker_judge(plan.judge, plan.judge_options, context) if any(
            spec.judge for spec in plan.specs()) else None
        self.metrics: dict[str, Metric] = {
            spec.name: spec(**plan.metric_options(spec, judge)) for spec in plan.specs()}
        # per-row scores need no interval: the same options without one
        self.row_metrics: dict[str, Metric] = {
            name: (m if m.options.confidence_level is None
                   else type(m)(dataclasses.replace(m.options, confidence_level=None)))
            for name, m in self.metrics.items()}

    def inputs(self, batch: Any) -> dict[str, dict[str, list[Any]]]:
        """``{metric: {input: values}}`` of a batch (a pandas DataFrame or ``{column: values}``)."""
        available = list(batch.columns) if hasattr(batch, "columns") else list(batch)
        out = {}
        for name, metric in self.metrics.items():
            fields = resolve_fields(type(metric), available, self.plan.columns)
            kinds = {**metric.columns, **metric.optional_columns}
            out[name] = {c: [_cell(v, kinds[c]) for v in _values(batch[f])] for c, f in fields.items()}
        return out

    def statistics(self, batch: Any) -> dict[str, Stats]:
        """Each metric's statistics of the batch's rows, in their order (not placed)."""
        return {name: self.metrics[name].statistics(given) for name, given in self.inputs(batch).items()}

    def score_columns(self, batch: Any) -> dict[str, list[Any]]:
        """``{"<metric>.<key>": values}``: each metric's per-example scores of the batch's rows
        (None where an example has none)."""
        out: dict[str, list[Any]] = {}
        try:
            statistics = self.statistics(batch)
        except InputError as e:
            raise batch_input_error(e, _rows(batch)) from None
        for name, stats in statistics.items():
            metric = self.row_metrics[name]
            if not stats.count:
                out.update({f"{name}.{key}": [] for key in metric.keys()})
                continue
            result = metric.score(stats)
            per_example = result.per_example
            out.update({f"{name}.{key}": list(per_example[key]) for key in result.keys})
        return out


def _rows(batch: Any) -> int:
    """The number of rows of a batch (a pandas DataFrame or ``{column: values}``)."""
    return len(batch) if hasattr(batch, "columns") else len(next(iter(batch.values()), []))


def _values(column: Any) -> list[Any]:
    return column.tolist() if hasattr(column, "tolist") else list(column)


# this process's BatchScorers, the most recently used last; a worker process that lives on
# between calls (a Ray task's, a Spark Python worker) keeps the last few plans' metrics only
_PROCESS: dict[str, BatchScorer] = {}
_KEPT = 4


@contextlib.contextmanager
def shared_judge(plan: Plan, on: str, share: bool = True, host: str = "127.0.0.1") -> Iterator[Plan]:
    """The plan whose workers hold one judge budget for all of them, for the block.

    The judge's ``requests_per_minute``, ``tokens_per_minute`` and ``concurrency`` are the
    cluster's (SPEC: held for the sum of all workers): the driver resolves the judge and
    :func:`~textgen_metrics.judges.cluster.cluster_judge` (``on``: ``"ray"``, a named actor, or
    ``"server"``, a budget server in the driver) hands the workers a copy wired to that budget.
    A plan without an LLM-guided metric, or ``share=False`` (each worker holds the limits on
    its own), is left as it is."""
    if not share or plan.judge is None or not any(spec.judge for spec in plan.specs()):
        yield plan
        return
    from .judges import Judge
    from .judges.budget import RayBudget, RemoteBudget
    from .judges.cluster import cluster_judge
    from .scoring import resolve_judge

    judge = resolve_judge(plan.judge, plan.judge_options)
    if not isinstance(judge, Judge) or isinstance(judge.rate_budget, (RayBudget, RemoteBudget)):
        yield plan  # a judge of cluster_judge(...) already holds a budget its workers share
        return
    with cluster_judge(judge, on=on, host=host) as worker_judge:
        yield dataclasses.replace(plan, judge=worker_judge, judge_options=None)


def lasting_shared_judge(plan: Plan, on: str, share: bool = True, host: str = "127.0.0.1") -> Plan:
    """:func:`shared_judge` for a lazy result (``score``): the budget lasts until this process
    ends (a Ray actor ends with the driver's job, a budget server with the driver)."""
    stack = contextlib.ExitStack()
    shared = stack.enter_context(shared_judge(plan, on, share, host))
    atexit.register(stack.close)
    return shared


def process_scorer(plan: Plan, context: str) -> BatchScorer:
    """The plan's :class:`BatchScorer` of this process, made on first use (metrics loaded once)."""
    key = f"{context}:{plan.fingerprint}"
    scorer = _PROCESS.pop(key, None)
    if scorer is None:
        scorer = BatchScorer(plan, context)
        while len(_PROCESS) >= _KEPT:
            del _PROCESS[next(iter(_PROCESS))]  # the least recently used
    _PROCESS[key] = scorer
    return scorer


def loads_model(plan: Plan, per_row: bool) -> bool:
    """Whether a worker of ``plan`` loads a model: a metric that declares it
    (:attr:`~textgen_metrics.metric.Metric.loads_model`) where it runs on the workers (its
    per-row scores, ``per_row``; the statistics of a metric scored together are its inputs), or
    a judge that holds a model of its own (its backend leaves the model out of its pickle: a
    local transformers model). The Ray adapter runs such a plan on actors, freed when the call
    ends."""
    from . import judges

    for spec in plan.specs():
        if spec.loads_model and (per_row or not spec.scores_together):
            return True
        judge = plan.options.get(spec.name, {}).get("judge", plan.judge) if spec.judge else None
        if isinstance(judge, str):
            backend = judge.partition(":")[0]
            kind: Any = judges._load(backend) if backend in judges._CLASSES else None
        else:
            kind = type(judge) if isinstance(judge, judges.Judge) else None
        if getattr(kind, "_transient", ()):
            return True
    return False


def pack(stats: Mapping[str, Stats]) -> str:
    """A batch's statistics as one JSON text (every float's bits kept)."""
    return json.dumps({name: s.to_dict() for name, s in stats.items()}, ensure_ascii=False)


_INPUT_ERROR = "__input_error__"  # the key of a batch's input error in place of its statistics
_INPUT_ERRORS = {cls.__name__: cls for cls in (InputError, InputTypeError)}


def batch_statistics(scorer: BatchScorer, batch: Any) -> str:
    """:func:`pack` of the batch's statistics; for a batch with a value no metric can score,
    the :class:`~textgen_metrics.errors.InputError` as JSON, its index that of the batch's row:
    :func:`merge` raises it with the index of that row in the whole table, which only the
    driver knows."""
    try:
        return pack(scorer.statistics(batch))
    except InputError as e:
        return json.dumps({_INPUT_ERROR: {"type": type(e).__name__, "reason": e.reason, "argument": e.argument,
                                          "index": e.index, "item": e.item}}, ensure_ascii=False)


def is_input_error(text: str) -> bool:
    """Whether a batch's :func:`batch_statistics` is an input error."""
    return text.startswith('{"' + _INPUT_ERROR + '"')


def batch_input_error(error: InputError, rows: int) -> InputError:
    """``error`` of a batch of ``rows`` rows whose place in the table its worker does not know
    (a batch of per-row score columns), saying that its index is the batch's."""
    if error.index is None:
        return error
    reason = (f"{error.reason} (the index is the row's in a batch of {rows} rows; evaluate() names the "
              "row of the table)")
    return type(error)(reason, error.argument, error.index, error.item)


def merge(parts: Iterable[tuple[Any, int, str]]) -> dict[str, Stats]:
    """The statistics of the whole table from its batches ``(order key, rows, pack(...))``,
    in any order: sorted by key, each placed at its rows, summed (exact: see :class:`Stats`).
    Two batches with the same key are an error (a batch counted twice)."""
    ordered = sorted(parts, key=lambda p: p[0])
    for a, b in zip(ordered, ordered[1:], strict=False):
        if a[0] == b[0]:
            raise ValueError(f"statistics: two batches at order key {a[0]!r} (a batch counted twice)")
    merged: dict[str, Stats] = {}
    offset = 0
    for _, count, text in ordered:
        packed = json.loads(text)
        if _INPUT_ERROR in packed:  # the first bad row of the table, by its index in the table
            e = packed[_INPUT_ERROR]
            index = None if e["index"] is None else offset + int(e["index"])
            raise _INPUT_ERRORS.get(e["type"], InputError)(e["reason"], e["argument"], index, e["item"])
        for name, data in packed.items():
            stats = Stats.from_dict(data).placed(offset)
            merged[name] = merged[name] + stats if name in merged else stats
        offset += int(count)
    return merged


def results(plan: Plan, merged: Mapping[str, Stats],
            usage: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, dict[str, Any]]:
    """``{metric: result dict}`` of the merged statistics, as the library function returns it
    (``use_aggregator`` as given in the options); ``usage``: the judge's usage the driver had
    for a metric (:func:`pin_runs`), counted in its totals as the library counts it."""
    out = {}
    for name, metric in plan.driver_metrics().items():
        stats = merged.get(name)
        if stats is None:  # no rows at all: the metric's own error for no examples
            stats = Stats(name, metric.statistics_settings, metric.no_statistics())
        extra = (usage or {}).get(name)
        if extra and stats.count:
            totals = dict(stats.totals)
            for key, value in extra.items():
                totals[key] = totals.get(key, 0) + int(value)
            stats = dataclasses.replace(stats, totals=totals)
        out[name] = metric.score(stats).as_dict(getattr(metric.options, "use_aggregator", True))
    return out
