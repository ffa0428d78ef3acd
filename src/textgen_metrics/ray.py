"""Ray Data front end (extra ``ray``): per-row score columns and exact corpus results of a
``ray.data.Dataset``, for any metric of the registry.

- :class:`Scorer`: a callable class for ``ds.map_batches(Scorer, fn_constructor_kwargs={...},
  compute=ray.data.ActorPoolStrategy(...))`` (Ray Data's default batches, or
  ``batch_format="pandas"``) that adds
  ``<metric>.<key>`` columns; its metrics (BERTScore's model, a local judge) are made once per
  actor.
- :func:`score`: such a ``map_batches``, the Dataset with the score columns.
- :func:`evaluate`: ``{metric: result dict}``, equal to the library's result over the
  Dataset's rows in their order: each batch's statistics are computed by a worker, the driver
  merges them in the Dataset's order (Ray Data told to keep it for this run) and scores them
  (:mod:`textgen_metrics.scaleout`).

Where the batches run (``compute``): as Ray tasks (``"tasks"``) in Ray's worker processes,
which Ray starts once and keeps, each making the run's metrics at its first batch and keeping
them for later batches and calls (:meth:`~textgen_metrics.run.Run.metrics_here`): a call
starts nothing; or on a pool of actors started for the call (``"actors"``), each making the
metrics once, freed when the call ends. ``"auto"`` (the default) takes actors where a worker
would load a model (:func:`~textgen_metrics.scaleout.loads_model`: BERTScore's per-row scores,
a local judge), tasks otherwise. :func:`evaluate` sends its tasks itself, on references to the
Dataset's blocks, ``concurrency`` at a time (Ray Data's ``map_batches`` scheduling cost about
1 s per call and 0.2 s between two batches of a worker); ``score`` and the actors are Ray
Data's ``map_batches``.

A worker that dies is replaced and its batch run again (a task is retried by Ray; an actor is
restarted and its tasks retried by Ray Data): a batch's statistics reach the driver once,
from the run that finished, so no row is lost or counted twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import ray.data

from .run import Run
from .scaleout import (
    COUNT,
    STATS,
    batch_statistics,
    is_input_error,
    lasting_shared_judge,
    loads_model,
    merge,
    pool_shared_judge,
    score_columns,
    shared_judge,
)

__all__ = ["Scorer", "score", "evaluate"]


class Scorer:
    """``batch -> batch`` with a column ``<metric>.<key>`` per score of each metric, in the batch's
    own format: Ray Data's default (``{column: NumPy array}``; a list column of equal-length
    lists may come as a 2-D array) or ``batch_format="pandas"``. Arguments as :func:`evaluate`'s.

    The judge's ``requests_per_minute``, ``tokens_per_minute`` and ``concurrency`` hold for all
    the pool's actors together, whatever its ``concurrency``: each actor finds (the first one
    makes) one Ray actor named after the judge's settings that hands out the budget
    (:func:`~textgen_metrics.scaleout.pool_shared_judge`); ``share_budget=False`` gives each
    actor its own."""

    def __init__(self, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
                 options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
                 judge_options: Mapping[str, Any] | None = None, share_budget: bool = True) -> None:
        run = Run.build(metrics, columns, options, judge, judge_options, front_end=True)
        self.run = pool_shared_judge(run, share_budget)
        self.run.metrics_here("ray")  # made once per actor, when it starts

    def __call__(self, batch: pd.DataFrame | dict[str, np.ndarray]) -> pd.DataFrame | dict[str, np.ndarray]:
        return _with_scores(self.run, batch)


def _with_scores(run: Run, batch: Any) -> Any:
    """The batch with its score columns (float64, NaN where an example has no score): a pandas
    DataFrame as a DataFrame, Ray Data's ``{column: NumPy array}`` as such a dict."""
    columns = score_columns(run, batch, "ray")
    if isinstance(batch, Mapping):
        out = dict(batch)
        out.update((name, np.array([np.nan if v is None else v for v in values], dtype=np.float64))
                   for name, values in columns.items())
        return out
    frame = batch.copy()
    for name, values in columns.items():
        frame[name] = pd.Series(values, index=batch.index, dtype="float64")
    return frame


def _scored(batch: pd.DataFrame, run: Run) -> pd.DataFrame:
    """:class:`Scorer` as a task: the run's metrics of this worker process (made at its first
    batch, kept for the next ones and the next calls)."""
    return _with_scores(run, batch)


def _statistics(batch: pd.DataFrame, run: Run) -> pd.DataFrame:
    """``batch -> one row``: the batch's number of rows and its metrics' statistics (JSON), or
    its first bad value (:func:`~textgen_metrics.scaleout.batch_statistics`)."""
    return pd.DataFrame({COUNT: [len(batch)], STATS: [batch_statistics(run, batch, "ray")]})


def _rows_statistics(run: Run, bounds: list[tuple[int, int]], *blocks: Any) -> tuple[int, str]:
    """A task of :func:`evaluate`: the statistics of rows ``bounds[i]`` of each block, in order,
    as one batch (its number of rows, :func:`~textgen_metrics.scaleout.batch_statistics`)."""
    from ray.data.block import BlockAccessor

    parts = [BlockAccessor.for_block(block).slice(start, stop, copy=False) for block, (start, stop)
             in zip(blocks, bounds, strict=True)]
    batch = BlockAccessor.for_block(parts[0]).to_pandas() if len(parts) == 1 else pd.concat(
        [BlockAccessor.for_block(p).to_pandas() for p in parts], ignore_index=True)
    return len(batch), batch_statistics(run, batch, "ray")


class _InActor:
    """A task function (``task``) in an actor: its metrics made when the actor starts."""

    task: Any

    def __init__(self, run: Run) -> None:
        self.run = run
        run.metrics_here("ray")

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return type(self).task(batch, self.run)


class _Scores(_InActor):
    task = staticmethod(_scored)


class _Statistics(_InActor):
    task = staticmethod(_statistics)


COMPUTE = ("auto", "tasks", "actors")


def _compute(compute: str, concurrency: int | tuple[int, int], run: Run, per_row: bool) -> str:
    """``"tasks"`` or ``"actors"``: ``compute`` checked, ``"auto"`` resolved (actors where a
    worker process would load a model, :func:`~textgen_metrics.scaleout.loads_model`)."""
    if compute not in COMPUTE:
        raise ValueError(f"compute: {compute!r} is not one of {list(COMPUTE)}")
    sizes = concurrency if isinstance(concurrency, tuple) else (concurrency,)
    if (not 1 <= len(sizes) <= 2 or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes)
            or sizes[0] > sizes[-1]):
        raise ValueError(f"concurrency: {concurrency!r} must be a positive integer or (min, max) with min <= max")
    if compute == "auto":
        return "actors" if loads_model(run, per_row) else "tasks"
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


def _check_schema(ds: ray.data.Dataset, run: Run) -> None:
    schema = ds.schema(fetch_if_missing=False)
    if schema is not None:
        run.check_table(schema.names)


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
    run = Run.build(metrics, columns, options, judge, judge_options, front_end=True)
    _check_schema(ds, run)
    how = _compute(compute, concurrency, run, per_row=True)
    run = lasting_shared_judge(run, "ray", share_budget)
    run, _ = run.pinned(_columns(ds, run))
    return _map(ds, how, concurrency, _scored, _Scores, {"run": run}, batch_size, num_cpus)


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
    starts once and keeps: each process makes the run's metrics at its first batch and keeps
    them for its next batches and calls (no start per call). This function submits those tasks
    itself, on the Dataset's blocks as Ray Data hands them over (their references: the rows
    never pass through the driver), ``concurrency`` at a time, the next one as soon as one
    ends; ``"actors"`` starts a pool of ``concurrency`` actors for the call (``map_batches``),
    each making the metrics once, freed when the call ends; ``"auto"`` (default): actors where a
    worker would load a model (a local judge such as ``"hf:..."``), else tasks.

    What a metric decides once per run (G-Eval's evaluation steps, when not given) is asked
    once, by the driver, before the workers start, and handed to every worker, as the library's
    one run has it. A value no metric can score raises the library's error, naming the row of
    the Dataset (no further batches are sent once one is found).
    """
    run = Run.build(metrics, columns, options, judge, judge_options, front_end=True)
    _check_schema(ds, run)
    how = _compute(compute, concurrency, run, per_row=False)
    _check_batch_size(batch_size)
    with shared_judge(run, "ray", share_budget) as run:
        run, usage = run.pinned(_columns(ds, run))
        with _in_order(ds):
            if how == "tasks":
                high = concurrency[1] if isinstance(concurrency, tuple) else concurrency
                parts = _run_tasks(ds, run, high, batch_size, num_cpus)
            else:
                rows = _map(ds, how, concurrency, _statistics, _Statistics, {"run": run}, batch_size,
                            num_cpus).take_all()
                parts = [(i, int(row[COUNT]), str(row[STATS])) for i, row in enumerate(rows)]
    return run.result_dicts(merge(parts), usage)


@contextlib.contextmanager
def _in_order(ds: ray.data.Dataset) -> Iterator[None]:
    """Ray Data told to hand over the Dataset's blocks in its order (for this run only)."""
    execution = ds.context.execution_options
    keep = execution.preserve_order
    execution.preserve_order = True
    try:
        yield
    finally:
        execution.preserve_order = keep


def _columns(ds: ray.data.Dataset, run: Run) -> list[str]:
    """The Dataset's columns where a metric of the run decides something per run from the
    inputs it is given (its schema read if not known yet), else none."""
    if not run.asks_once():
        return []
    schema = ds.schema()
    return list(schema.names) if schema is not None else []


def _check_batch_size(batch_size: int | None) -> None:
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"batch_size: {batch_size!r} must be a positive integer or None (one batch per block)")


_STATISTICS_TASK = ray.remote(_rows_statistics)


def _segments(ds: ray.data.Dataset) -> Iterator[tuple[Any, int, int]]:
    """``(block, start, stop)``: the Dataset's rows as runs of rows of its blocks, in its order
    (references to blocks in Ray's object store; each block's rows from its metadata)."""
    for bundle in ds.iter_internal_ref_bundles():
        slices = getattr(bundle, "slices", None) or (None,) * len(bundle.blocks)
        for entry, part in zip(bundle.blocks, slices, strict=True):
            ref, meta = (entry.ref, entry.metadata) if hasattr(entry, "ref") else entry  # older Ray: a tuple
            start, stop = (part.start_offset, part.end_offset) if part is not None else (0, meta.num_rows)
            if stop is None:  # rows not in the metadata: the block's length, asked of the store
                from ray.data.block import BlockAccessor

                stop = BlockAccessor.for_block(ray.get(ref)).num_rows()
            if stop > start:
                yield ref, int(start), int(stop)


def _batches(segments: Iterator[tuple[Any, int, int]], batch_size: int | None
             ) -> Iterator[tuple[list[Any], list[tuple[int, int]]]]:
    """The tasks' batches, in order: ``batch_size`` rows each (the last fewer), cut from the
    blocks' runs of rows and joined across blocks; ``None``: one batch per block."""
    refs: list[Any] = []
    bounds: list[tuple[int, int]] = []
    rows = 0
    for ref, start, stop in segments:
        if batch_size is None:
            yield [ref], [(start, stop)]
            continue
        while start < stop:
            take = min(stop - start, batch_size - rows)
            refs.append(ref)
            bounds.append((start, start + take))
            rows, start = rows + take, start + take
            if rows == batch_size:
                yield refs, bounds
                refs, bounds, rows = [], [], 0
    if refs:
        yield refs, bounds


def _run_tasks(ds: ray.data.Dataset, run: Run, concurrency: int, batch_size: int | None,
               num_cpus: float) -> list[tuple[int, int, str]]:
    """The batches' ``(order, rows, statistics)`` from Ray tasks, at most ``concurrency`` at a
    time: the next batch is sent as one ends (a task whose worker dies is run again by Ray:
    its result is the run that finished). Once a batch holds a bad value no more are sent;
    those in flight finish, so that every batch before it is there to place it."""
    task = _STATISTICS_TASK.options(num_cpus=num_cpus, max_retries=3)  # four tries, as Spark's maxFailures
    run_ref = ray.put(run)
    pending: dict[Any, int] = {}
    done: list[tuple[int, int, str]] = []
    bad = False

    def finish_one() -> None:
        nonlocal bad
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            order = pending.pop(ref)
            count, text = ray.get(ref)
            done.append((order, int(count), text))
            bad = bad or is_input_error(text)

    try:
        for order, (refs, bounds) in enumerate(_batches(_segments(ds), batch_size)):
            while len(pending) >= concurrency:
                finish_one()
            if bad:
                break
            pending[task.remote(run_ref, bounds, *refs)] = order
        while pending:
            finish_one()
    finally:
        for ref in pending:  # a failure: what is still running is not needed
            ray.cancel(ref)
    return done
