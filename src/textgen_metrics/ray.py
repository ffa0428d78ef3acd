"""Ray Data front end (extra ``ray``): per-row score columns and exact corpus results of a
``ray.data.Dataset``, for any metric of the registry.

- :class:`Scorer`: a callable class for ``ds.map_batches(Scorer, fn_constructor_kwargs={...},
  compute=ray.data.ActorPoolStrategy(...), batch_format="pandas")`` that adds
  ``<metric>.<key>`` columns; its metrics (BERTScore's model, a local judge) are made once per
  actor.
- :func:`score`: such a ``map_batches``, the Dataset with the score columns.
- :func:`evaluate`: ``{metric: result dict}``, equal to the library's result over the
  Dataset's rows in their order: each batch's statistics are computed by a worker, the driver
  merges them in the Dataset's order (Ray Data told to keep it for this run) and scores them
  (:mod:`textgen_metrics.scaleout`).

Where the batches run (``compute``): as Ray tasks (``"tasks"``) in Ray's worker processes,
which Ray starts once and keeps, each making the plan's metrics at its first batch and keeping
them for later batches and calls (:func:`~textgen_metrics.scaleout.process_scorer`): a call
starts nothing; or on a pool of actors started for the call (``"actors"``), each making the
metrics once, freed when the call ends. ``"auto"`` (the default) takes actors where a worker
would load a model (:func:`~textgen_metrics.scaleout.loads_model`: BERTScore's per-row scores,
a local judge), tasks otherwise.

A worker that dies is replaced and its batch run again by Ray Data (a task is retried, an actor
restarted and its tasks retried: its defaults): a batch's statistics reach the driver once,
from the run that finished, so no row is lost or counted twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import ray.data

from .scaleout import (
    COUNT,
    STATS,
    BatchScorer,
    Plan,
    check_table,
    lasting_shared_judge,
    loads_model,
    make_plan,
    merge,
    pack,
    process_scorer,
    results,
    shared_judge,
)

__all__ = ["Scorer", "score", "evaluate"]


class Scorer:
    """``batch -> batch`` with a column ``<metric>.<key>`` per score of each metric (a pandas
    batch: ``batch_format="pandas"``). Arguments as :func:`evaluate`'s."""

    def __init__(self, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
                 options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
                 judge_options: Mapping[str, Any] | None = None) -> None:
        self.plan = make_plan(metrics, columns, options, judge, judge_options)
        self.scorer = process_scorer(self.plan, "ray")

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return _with_scores(self.scorer, batch)


def _with_scores(scorer: BatchScorer, batch: pd.DataFrame) -> pd.DataFrame:
    out = batch.copy()
    for name, values in scorer.score_columns(batch).items():
        out[name] = pd.Series(values, index=batch.index, dtype="float64")
    return out


def _scored(batch: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """:class:`Scorer` as a task: the plan's metrics of this worker process (made at its first
    batch, kept for the next ones and the next calls)."""
    return _with_scores(process_scorer(plan, "ray"), batch)


def _statistics(batch: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """``batch -> one row``: the batch's number of rows and its metrics' statistics (JSON)."""
    return pd.DataFrame({COUNT: [len(batch)], STATS: [pack(process_scorer(plan, "ray").statistics(batch))]})


class _InActor:
    """A task function (``run``) in an actor: its metrics made when the actor starts."""

    run: Any

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        process_scorer(plan, "ray")

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return type(self).run(batch, self.plan)


class _Scores(_InActor):
    run = staticmethod(_scored)


class _Statistics(_InActor):
    run = staticmethod(_statistics)


COMPUTE = ("auto", "tasks", "actors")


def _compute(compute: str, concurrency: int | tuple[int, int], plan: Plan, per_row: bool) -> str:
    """``"tasks"`` or ``"actors"``: ``compute`` checked, ``"auto"`` resolved (actors where a
    worker process would load a model, :func:`~textgen_metrics.scaleout.loads_model`)."""
    if compute not in COMPUTE:
        raise ValueError(f"compute: {compute!r} is not one of {list(COMPUTE)}")
    sizes = concurrency if isinstance(concurrency, tuple) else (concurrency,)
    if (not 1 <= len(sizes) <= 2 or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes)
            or sizes[0] > sizes[-1]):
        raise ValueError(f"concurrency: {concurrency!r} must be a positive integer or (min, max) with min <= max")
    if compute == "auto":
        return "actors" if loads_model(plan, per_row) else "tasks"
    return compute


def _map(ds: ray.data.Dataset, compute: str, concurrency: int | tuple[int, int], task: Any, actor: type,
         kwargs: dict[str, Any], batch_size: int | None, num_cpus: float) -> ray.data.Dataset:
    """``map_batches`` of ``task`` (a function: Ray's worker processes, started once and kept
    between calls) or of ``actor`` (a pool of actors started for this call)."""
    if compute == "tasks":
        high = concurrency[1] if isinstance(concurrency, tuple) else concurrency
        return ds.map_batches(task, fn_kwargs=kwargs, compute=_tasks(high),
                              batch_format="pandas", batch_size=batch_size, num_cpus=num_cpus)
    return ds.map_batches(actor, fn_constructor_kwargs=kwargs, compute=_actors(concurrency),
                          batch_format="pandas", batch_size=batch_size, num_cpus=num_cpus)


def _tasks(size: int) -> Any:
    """At most ``size`` tasks at a time (``ray.data.TaskPoolStrategy``; older Ray releases keep it in
    ``ray.data._internal.compute``)."""
    strategy: Any = getattr(ray.data, "TaskPoolStrategy", None)
    if strategy is None:
        from ray.data._internal.compute import TaskPoolStrategy

        strategy = TaskPoolStrategy
    return strategy(size=size)


def _actors(concurrency: int | tuple[int, int]) -> ray.data.ActorPoolStrategy:
    """A pool of ``concurrency`` actors (or ``(min, max)``), each given at most two batches at a
    time: the next one waits at the actor while it works (no pause between batches), and no
    more, so that batches go to the actors that are free (batches of judged examples are long,
    and the actors start one after another)."""
    low, high = concurrency if isinstance(concurrency, tuple) else (concurrency, concurrency)
    return ray.data.ActorPoolStrategy(min_size=low, max_size=high, max_tasks_in_flight_per_actor=2)


def _check_schema(ds: ray.data.Dataset, plan: Plan) -> None:
    schema = ds.schema(fetch_if_missing=False)
    if schema is not None:
        check_table(plan, schema.names)


def score(ds: ray.data.Dataset, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
          options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
          judge_options: Mapping[str, Any] | None = None, concurrency: int | tuple[int, int] = 1,
          batch_size: int | None = None, num_cpus: float = 1, share_budget: bool = True,
          compute: str = "auto") -> ray.data.Dataset:
    """``ds`` with a column ``<metric>.<key>`` per score (lazy, as ``map_batches``); the
    arguments as :func:`evaluate`'s. A score column holds each row's per-example score (None
    where the metric gives the row none). The judge's budget (a named actor) lasts until the
    driver's job ends, since the Dataset runs later. ``compute="auto"`` runs actors where a
    metric's per-row scores load a model (BERTScore) or the judge is a local model."""
    plan = make_plan(metrics, columns, options, judge, judge_options)
    _check_schema(ds, plan)
    how = _compute(compute, concurrency, plan, per_row=True)
    plan = lasting_shared_judge(plan, "ray", share_budget)
    return _map(ds, how, concurrency, _scored, _Scores, {"plan": plan}, batch_size, num_cpus)


def evaluate(ds: ray.data.Dataset, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
             options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
             judge_options: Mapping[str, Any] | None = None, concurrency: int | tuple[int, int] = 1,
             batch_size: int | None = None, num_cpus: float = 1,
             share_budget: bool = True, compute: str = "auto") -> dict[str, dict[str, Any]]:
    """``{metric: result dict}`` over the rows of ``ds``, each equal to the library function's
    result over the same rows in the Dataset's order (``textgen_metrics.<metric>(...)``).

    ``metrics``: names of the registry; ``columns``: a metric input (``predictions``,
    ``references``, ``queries``, ``contexts``, ``sources``) to a column of ``ds``, as the command
    line's ``--column`` (unmapped inputs are read from the column of that name or its singular);
    ``options``: ``{metric: {option: value}}``; ``judge`` (and ``judge_options``): the judge of
    the LLM-guided metrics, made once per worker process (a string such as ``"openai:<model>"``
    travels best); ``concurrency``: the workers at once (or ``(min, max)`` actors);
    ``batch_size``: rows per batch; ``num_cpus``: each worker's CPUs (a fraction packs more
    workers whose judge mostly waits). Leave CPUs for the stages before (a read): workers
    holding every CPU of the cluster wait for a read that cannot start. ``share_budget``
    (default): the judge's ``requests_per_minute``, ``tokens_per_minute`` and ``concurrency``
    hold for all workers together (a named actor hands out the budget, and a Retry-After
    pauses every worker); ``False``: each worker holds them on its own.

    ``compute``: ``"tasks"`` runs the batches as Ray tasks in Ray's worker processes, which Ray
    starts once and keeps: each process makes the plan's metrics at its first batch and keeps
    them for its next batches and calls (no start per call); ``"actors"`` starts a pool of
    ``concurrency`` actors for the call, each making the metrics once, freed when the call
    ends; ``"auto"`` (default): actors where a worker would load a model (a local judge such as
    ``"hf:..."``), else tasks.
    """
    plan = make_plan(metrics, columns, options, judge, judge_options)
    _check_schema(ds, plan)
    how = _compute(compute, concurrency, plan, per_row=False)
    with shared_judge(plan, "ray", share_budget) as plan:
        parts = _map(ds, how, concurrency, _statistics, _Statistics, {"plan": plan}, batch_size, num_cpus)
        execution = parts.context.execution_options
        keep = execution.preserve_order
        execution.preserve_order = True  # the batches come back in the Dataset's order, for this run
        try:
            rows = parts.take_all()
        finally:
            execution.preserve_order = keep
    return results(plan, merge((i, int(row[COUNT]), str(row[STATS])) for i, row in enumerate(rows)))
