"""Ray Data front end (extra ``ray``): per-row score columns and exact corpus results of a
``ray.data.Dataset``, for any metric of the registry.

- :class:`Scorer`: a callable class for ``ds.map_batches(Scorer, fn_constructor_kwargs={...},
  concurrency=..., batch_format="pandas")`` that adds ``<metric>.<key>`` columns; its metrics
  (BERTScore's model, a local judge) are made once per actor.
- :func:`score`: that ``map_batches``, the Dataset with the score columns.
- :func:`evaluate`: ``{metric: result dict}``, equal to the library's result over the
  Dataset's rows in their order: each batch's statistics are computed by an actor, the driver
  merges them in the Dataset's order (Ray Data told to keep it for this run) and scores them
  (:mod:`textgen_metrics.scaleout`).

A worker that dies is replaced and its batch run again by Ray Data (actors restart and their
tasks are retried, its defaults): a batch's statistics reach the driver once, from the run that
finished, so no row is lost or counted twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import ray.data

from .scaleout import (
    COUNT,
    STATS,
    Plan,
    check_table,
    lasting_shared_judge,
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
        out = batch.copy()
        for name, values in self.scorer.score_columns(batch).items():
            out[name] = pd.Series(values, index=batch.index, dtype="float64")
        return out


class _Statistics:
    """``batch -> one row``: the batch's number of rows and its metrics' statistics (JSON)."""

    def __init__(self, plan: Plan) -> None:
        self.scorer = process_scorer(plan, "ray")

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({COUNT: [len(batch)], STATS: [pack(self.scorer.statistics(batch))]})


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
          batch_size: int | None = None, num_cpus: float = 1, share_budget: bool = True) -> ray.data.Dataset:
    """``ds`` with a column ``<metric>.<key>`` per score (lazy, as ``map_batches``); the
    arguments as :func:`evaluate`'s. A score column holds each row's per-example score (None
    where the metric gives the row none). The judge's budget (a named actor) lasts until the
    driver's job ends, since the Dataset runs later."""
    plan = make_plan(metrics, columns, options, judge, judge_options)
    _check_schema(ds, plan)
    plan = lasting_shared_judge(plan, "ray", share_budget)
    return ds.map_batches(Scorer, fn_constructor_kwargs={"metrics": plan.metrics, "columns": plan.columns,
                                                         "options": plan.options, "judge": plan.judge,
                                                         "judge_options": plan.judge_options},
                          compute=_actors(concurrency), batch_format="pandas", batch_size=batch_size,
                          num_cpus=num_cpus)


def evaluate(ds: ray.data.Dataset, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
             options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
             judge_options: Mapping[str, Any] | None = None, concurrency: int | tuple[int, int] = 1,
             batch_size: int | None = None, num_cpus: float = 1,
             share_budget: bool = True) -> dict[str, dict[str, Any]]:
    """``{metric: result dict}`` over the rows of ``ds``, each equal to the library function's
    result over the same rows in the Dataset's order (``textgen_metrics.<metric>(...)``).

    ``metrics``: names of the registry; ``columns``: a metric input (``predictions``,
    ``references``, ``queries``, ``contexts``, ``sources``) to a column of ``ds``, as the command
    line's ``--column`` (unmapped inputs are read from the column of that name or its singular);
    ``options``: ``{metric: {option: value}}``; ``judge`` (and ``judge_options``): the judge of
    the LLM-guided metrics, made once per actor (a string such as ``"openai:<model>"`` travels
    best); ``concurrency``: the actors (or ``(min, max)``); ``batch_size``: rows per batch;
    ``num_cpus``: each actor's CPUs (a fraction packs more actors whose judge mostly waits).
    Leave CPUs for the stages before (a read): actors holding every CPU of the cluster wait
    for a read that cannot start. ``share_budget`` (default): the judge's
    ``requests_per_minute``, ``tokens_per_minute`` and ``concurrency`` hold for all actors
    together (a named actor hands out the budget, and a Retry-After pauses every actor);
    ``False``: each actor holds them on its own.
    """
    plan = make_plan(metrics, columns, options, judge, judge_options)
    _check_schema(ds, plan)
    with shared_judge(plan, "ray", share_budget) as plan:
        parts = ds.map_batches(_Statistics, fn_constructor_kwargs={"plan": plan}, compute=_actors(concurrency),
                               batch_format="pandas", batch_size=batch_size, num_cpus=num_cpus)
        execution = parts.context.execution_options
        keep = execution.preserve_order
        execution.preserve_order = True  # the batches come back in the Dataset's order, for this run
        try:
            rows = parts.take_all()
        finally:
            execution.preserve_order = keep
    return results(plan, merge((i, int(row[COUNT]), str(row[STATS])) for i, row in enumerate(rows)))
