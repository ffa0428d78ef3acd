"""The cluster front ends' own part (:mod:`textgen_metrics.ray`, :mod:`textgen_metrics.spark`):
a :class:`~textgen_metrics.run.Run`'s statistics of a batch as they travel from a worker to
the driver, their merge there, and the judge's budget shared by every worker.

A worker turns a batch of rows into each metric's statistics
(:meth:`~textgen_metrics.run.Run.statistics`), which travel as JSON (:func:`pack`: every
float's bits kept) with the batch's place in the table (an order key and its number of rows);
the driver merges them (:func:`merge`, by :func:`textgen_metrics.run.merge`: sorted by key,
placed, summed in the table's row order) and scores them
(:meth:`~textgen_metrics.run.Run.result_dicts`). A batch with a value no metric can score sends
that error (:func:`batch_statistics`) in place of its statistics; :func:`merge` raises it with
the row's index in the whole table, which only the driver knows.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .errors import InputError, InputTypeError
from .metric import Stats
from .run import Run, resolve_judge
from .run import _stable as stable_key
from .run import merge as merge_stats

__all__ = ["shared_judge", "lasting_shared_judge", "pool_shared_judge", "loads_model", "pack", "batch_statistics",
           "batch_input_error", "is_input_error", "merge", "score_columns", "ORDER", "COUNT", "STATS"]

# the columns of a batch's statistics as a row: its order key, its number of rows, its statistics (JSON)
ORDER, COUNT, STATS = "order", "count", "stats"


@contextlib.contextmanager
def shared_judge(run: Run, on: str, share: bool = True, host: str = "127.0.0.1") -> Iterator[Run]:
    """The run whose workers hold one judge budget for all of them, for the block.

    The judge's ``requests_per_minute``, ``tokens_per_minute`` and ``concurrency`` are the
    cluster's (held for the sum of all workers): the driver resolves the judge and
    :func:`~textgen_metrics.judges.cluster.cluster_judge` (``on``: ``"ray"``, a named actor, or
    ``"server"``, a budget server in the driver) hands the workers a copy wired to that budget.
    A run without an LLM-guided metric, or ``share=False`` (each worker holds the limits on
    its own), is left as it is."""
    if not share or run.judge is None or not run.needs_judge:
        yield run
        return
    from .judges import Judge
    from .judges.budget import RayBudget, RemoteBudget
    from .judges.cluster import cluster_judge

    judge = resolve_judge(run.judge, run.judge_options)
    if not isinstance(judge, Judge) or isinstance(judge.rate_budget, (RayBudget, RemoteBudget)):
        yield run  # a judge of cluster_judge(...) already holds a budget its workers share
        return
    with cluster_judge(judge, on=on, host=host) as worker_judge:
        yield dataclasses.replace(run, judge=worker_judge, judge_options=None)


def pool_shared_judge(run: Run, share: bool = True) -> Run:
    """The run of one actor of a pool a user started (``map_batches(Scorer, ...)``), its judge
    held by one budget for every actor of the pool: no driver of ours makes the budget, so each
    actor asks for a Ray actor named after the judge's settings, the same in every copy the pool
    unpickled (its pickle's hash); the first one makes it (on the head
    node, detached: the actor that made it may go, :class:`~textgen_metrics.judges.budget.RayBudget`).
    A judge that holds a shared budget already, no limit, ``share=False`` or no Ray here: as it is."""
    import ray

    if not share or run.judge is None or not run.needs_judge or not ray.is_initialized():
        return run
    from .judges import Judge
    from .judges.budget import RayBudget, RemoteBudget
    from .judges.cluster import cluster_limits

    judge = resolve_judge(run.judge, run.judge_options)
    if not isinstance(judge, Judge) or isinstance(judge.rate_budget, (RayBudget, RemoteBudget)):
        return run
    limits = cluster_limits(judge)
    if all(value is None for value in limits.values()):
        return run
    name = f"textgen-metrics-budget-{stable_key((run.judge, run.judge_options))[:20]}"
    budget = RayBudget.create(**limits, name=name, detached=True)
    return dataclasses.replace(run, judge=judge.share(budget=budget), judge_options=None)


def lasting_shared_judge(run: Run, on: str, share: bool = True, host: str = "127.0.0.1") -> Run:
    """:func:`shared_judge` for a lazy result (``score``): the budget lasts until this process
    ends (a Ray actor ends with the driver's job, a budget server with the driver)."""
    stack = contextlib.ExitStack()
    shared = stack.enter_context(shared_judge(run, on, share, host))
    atexit.register(stack.close)
    return shared


def loads_model(run: Run, per_row: bool) -> bool:
    """Whether a worker of ``run`` loads a model: a metric whose examples are scored together
    (:class:`~textgen_metrics.metric.ScoredTogether`: BERTScore's model) where its scoring runs
    on the workers (its per-row scores, ``per_row``; its statistics are its inputs, scored on
    the driver), or a judge that holds a model of its own (its backend leaves the model out of
    its pickle: a local transformers model). The Ray adapter runs such a run on actors, freed
    when the call ends."""
    from . import judges

    for spec in run.specs():
        if spec.scores_together and per_row:
            return True
        judge = run.options.get(spec.name, {}).get("judge", run.judge) if spec.judge else None
        kind = judges.judge_class(judge) if isinstance(judge, str) else type(judge)
        if getattr(kind, "_transient", ()):
            return True
    return False


def pack(stats: Mapping[str, Stats]) -> str:
    """A batch's statistics as one JSON text (every float's bits kept)."""
    return json.dumps({name: s.to_dict() for name, s in stats.items()}, ensure_ascii=False)


_INPUT_ERROR = "__input_error__"  # the key of a batch's input error in place of its statistics
_INPUT_ERRORS = {cls.__name__: cls for cls in (InputError, InputTypeError)}


def batch_statistics(run: Run, batch: Any, context: str) -> str:
    """:func:`pack` of the batch's statistics; for a batch with a value no metric can score,
    the :class:`~textgen_metrics.errors.InputError` as JSON, its index that of the batch's row:
    :func:`merge` raises it with the index of that row in the whole table, which only the
    driver knows."""
    try:
        return pack(run.statistics(batch, context))
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
    """The statistics of the whole table from its batches ``(order key, rows, pack(...))``, in
    any order (:func:`textgen_metrics.run.merge`); the first bad value by the table's order
    raised with its row's index in the table."""
    ordered = sorted(parts, key=lambda p: p[0])
    offset = 0
    decoded = []
    for key, count, text in ordered:
        packed = json.loads(text)
        if _INPUT_ERROR in packed:  # the first bad row of the table, by its index in the table
            e = packed[_INPUT_ERROR]
            index = None if e["index"] is None else offset + int(e["index"])
            raise _INPUT_ERRORS.get(e["type"], InputError)(e["reason"], e["argument"], index, e["item"])
        decoded.append((key, count, {name: Stats.from_dict(data) for name, data in packed.items()}))
        offset += int(count)
    return merge_stats(decoded)


def score_columns(run: Run, batch: Any, context: str) -> dict[str, list[Any]]:
    """The run's per-row score columns of a batch (:meth:`~textgen_metrics.run.Run.score_columns`);
    a bad value's error saying that its index is the batch's."""
    try:
        return run.score_columns(batch, context)
    except InputError as e:
        rows = len(batch) if hasattr(batch, "columns") else len(next(iter(batch.values()), []))
        raise batch_input_error(e, rows) from None
