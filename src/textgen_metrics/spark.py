"""PySpark front end (extra ``spark``): per-row score columns and exact corpus results of a
Spark DataFrame, for any metric of the registry.

- :func:`score`: the DataFrame with a column ``<metric>.<key>`` per score (``mapInPandas``; a
  name with a dot is selected with backticks: ``df.select("`rouge.rougeL`")``);
- :func:`evaluate`: ``{metric: result dict}``, equal to the library's result over the
  DataFrame's rows in their order. Each Arrow batch of a partition becomes one row (its first
  row's ``monotonically_increasing_id``, its number of rows, its statistics as JSON); the
  driver sorts those by id, places and sums the statistics, and scores them
  (:mod:`textgen_metrics.run`, :mod:`textgen_metrics.scaleout`).

The metrics (BERTScore's model, a local judge) are made once per executor Python worker
(Spark reuses its Python workers between tasks). A task whose worker dies is run again by Spark
(``spark.task.maxFailures``); only the finished attempt's rows reach the driver, so no row is
lost or counted twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StructField, StructType

from .run import Run
from .scaleout import (
    COUNT,
    ORDER,
    STATS,
    batch_statistics,
    is_input_error,
    lasting_shared_judge,
    merge,
    score_columns,
    shared_judge,
)

__all__ = ["score", "evaluate"]

_ROW = "__textgen_metrics_row"


def _run(df: DataFrame, metrics: Sequence[str] | str, columns: Mapping[str, str] | None,
         options: Mapping[str, Mapping[str, Any]] | None, judge: Any,
         judge_options: Mapping[str, Any] | None) -> Run:
    run = Run.build(metrics, columns, options, judge, judge_options, front_end=True)
    run.check_table(df.columns)
    return run


def score(df: DataFrame, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
          options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
          judge_options: Mapping[str, Any] | None = None, share_budget: bool = True) -> DataFrame:
    """``df`` with a double column ``<metric>.<key>`` per score (null where the metric gives a
    row none); the arguments as :func:`evaluate`'s. The judge's budget server lasts as long as
    the driver, since the DataFrame runs later."""
    run = lasting_shared_judge(_run(df, metrics, columns, options, judge, judge_options), "server", share_budget,
                               host=_driver_host(df))
    run, _ = run.pinned(df.columns)
    names = run.score_names()
    schema = StructType(list(df.schema.fields) + [StructField(n, DoubleType(), True) for n in names])

    def scored(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            out = batch.copy()
            for name, values in score_columns(run, batch, "spark").items():
                out[name] = pd.Series(values, index=batch.index, dtype="float64")
            yield out

    return df.mapInPandas(scored, schema)


def evaluate(df: DataFrame, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
             options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
             judge_options: Mapping[str, Any] | None = None, share_budget: bool = True) -> dict[str, dict[str, Any]]:
    """``{metric: result dict}`` over the rows of ``df``, each equal to the library function's
    result over the same rows in the DataFrame's order (``textgen_metrics.<metric>(...)``).

    ``metrics``: names of the registry; ``columns``: a metric input (``predictions``,
    ``references``, ``queries``, ``contexts``, ``sources``) to a column of ``df``, as the command
    line's ``--column`` (unmapped inputs are read from the column of that name or its singular);
    ``options``: ``{metric: {option: value}}``; ``judge`` (and ``judge_options``): the judge of
    the LLM-guided metrics, made once per executor Python worker (a string such as
    ``"openai:<model>"`` travels best). ``share_budget`` (default): the judge's
    ``requests_per_minute``, ``tokens_per_minute`` and ``concurrency`` hold for all executors
    together (a budget server in the driver, on the address Spark's driver binds:
    ``spark.driver.host``; a Retry-After pauses every executor); ``False``: each Python worker
    holds them on its own.

    What a metric decides once per run (G-Eval's evaluation steps, when not given) is asked
    once, by the driver, and handed to every executor, as the library's one run has it. A value
    no metric can score raises the library's error, naming the row of the DataFrame (the
    partition that found it stops; the driver raises once the others are done).
    """
    with shared_judge(_run(df, metrics, columns, options, judge, judge_options), "server",
                      share_budget, host=_driver_host(df)) as run:
        run, usage = run.pinned(df.columns)
        return _evaluate(df, run, usage)


def _driver_host(df: DataFrame) -> str:
    """The address executors reach the driver at (where its budget server listens)."""
    conf = df.sparkSession.sparkContext.getConf()
    return conf.get("spark.driver.host", "127.0.0.1") or "127.0.0.1"


def _evaluate(df: DataFrame, run: Run, usage: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:

    needed = sorted({f for fields in run.fields(df.columns).values() for f in fields.values()})

    def statistics(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            if len(batch):
                order = int(batch[_ROW].iloc[0])
                stats = batch_statistics(run, batch[needed], "spark")
                yield pd.DataFrame({ORDER: [order], COUNT: [len(batch)], STATS: [stats]})
                if is_input_error(stats):
                    return  # the driver raises it: the rest of this partition is not needed

    # Numbered and read with every column of the DataFrame, the needed ones picked in Python: a
    # select before would let Spark's optimizer prune the columns below a repartition, whose
    # round-robin sort then orders the rows by fewer columns, in another order than the
    # DataFrame's own (TER's float sums, in row order, then differ in the last digit).
    numbered = df.withColumn(_ROW, F.monotonically_increasing_id())
    rows = numbered.mapInPandas(statistics, f"{ORDER} long, {COUNT} long, {STATS} string").collect()
    return run.result_dicts(merge((row[ORDER], int(row[COUNT]), str(row[STATS])) for row in rows), usage)
