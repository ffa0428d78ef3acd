"""textgen_metrics.spark on a real Spark cluster on loopback: ``local-cluster[2,1,1024]`` (a master,
a worker and two executor JVMs, each with its Python workers), started and stopped by this module.
Results are compared with the library on one machine over the same rows: the lexical metrics
(corpus scores from merged statistics, intervals), BERTScore, two LLM-guided metrics whose judge
is a loopback OpenAI-compatible server; per-row score columns; a worker killed mid-run."""

import os
import random
import sys
import time
from pathlib import Path

import pytest

import textgen_metrics
from chat_server import ChatServer
from scaleout_judge import (
    Jitter,
    KillAfter,
    KillOnce,
    StepsPerProcess,
    assert_limits_shared,
    assert_resumed_from_the_cache,
    columns,
    random_table,
    respond,
    rows,
)
from textgen_metrics.errors import InputTypeError
from textgen_metrics.registry import get_metric

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

LEXICAL = ["rouge", "bleu", "google_bleu", "chrf", "ter", "meteor", "bertscore"]
OPTIONS = {"rouge": {"use_stemmer": True, "confidence_level": 0.9, "n_resamples": 200},
           "bleu": {"confidence_level": 0.95, "n_resamples": 200, "seed": 7},
           "chrf": {"word_order": 2}, "ter": {"confidence_level": 0.95, "n_resamples": 100}}
SCHEMA = "id long, prediction string, references array<string>, query string, contexts array<string>"


@pytest.fixture(scope="module")
def spark():
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # the master, worker and executors on loopback
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    # the executors' Python workers import this worktree's package and the stand-in judges here
    path = os.pathsep.join([str(SRC), str(HERE)])
    session = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("textgen-metrics-test")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.executorEnv.PYTHONPATH", path)
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "9")  # several batches a partition
               # a lost task runs again (Spark's default on a cluster), whatever an earlier module's
               # session set: PySpark's builder keeps the options it was given for the next session
               .config("spark.task.maxFailures", "4")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    deadline = time.monotonic() + 90
    while len(executors(session)) < 3 and time.monotonic() < deadline:  # the driver and two executors
        time.sleep(0.2)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="module")
def server():
    with ChatServer(respond) as srv:
        yield srv


def frame(spark, data, partitions):
    tuples = [(r["id"], r["prediction"], r["references"], r["query"], r["contexts"]) for r in data]
    return spark.createDataFrame(spark.sparkContext.parallelize(tuples, partitions), SCHEMA)


def library(name, data, **options):
    spec = get_metric(name)
    given = {c: v for c, v in columns(data).items() if c in (*spec.columns, *spec.optional_columns)}
    return getattr(textgen_metrics, name)(**given, **options)


def executors(session):
    """The block managers' "host:port" of the driver and each executor registered."""
    status = session.sparkContext._jsc.sc().getExecutorMemoryStatus().keys().toList()
    return [status.apply(i) for i in range(status.size())]


def test_two_executors_on_loopback(spark):
    found = executors(spark)
    assert len(found) == 3  # the driver and two executors
    assert {f.split(":")[0] for f in found} <= {"127.0.0.1", "localhost"}  # all on loopback


def test_evaluate_lexical_and_bertscore_equal_the_library(spark):
    from textgen_metrics import spark as tgm_spark

    data = rows(90, seed=1)
    got = tgm_spark.evaluate(frame(spark, data, 4), LEXICAL, options=OPTIONS)
    for name in LEXICAL:
        assert got[name] == library(name, data, **OPTIONS.get(name, {})), name
    assert "bs:200|seed:7" in got["bleu"]["signature"] and len(got["bleu"]["bleu_ci"]) == 2


def test_evaluate_judged_metrics_equal_the_library_with_each_request_sent_once(spark, server):
    from textgen_metrics import spark as tgm_spark

    data = rows(30, seed=2)
    judge_options = {"base_url": server.url, "api_key": "k"}
    options = {"faithfulness": {"return_details": True},
               "answer_relevance": {"confidence_level": 0.9, "n_resamples": 100}}
    expected = {name: library(name, data, judge="openai:judge-1", judge_options=judge_options, **options[name])
                for name in options}
    sent = server.count
    got = tgm_spark.evaluate(frame(spark, data, 3), list(options), options=options, judge="openai:judge-1",
                             judge_options=judge_options)
    assert got == expected
    requests = sum(r["judge_usage"]["requests"] for r in expected.values())
    # two requests per example and metric, each sent once: none twice, none lost
    assert server.count - sent == requests == 4 * len(data)


def test_score_adds_each_rows_scores(spark, server):
    from textgen_metrics import spark as tgm_spark

    data = rows(25, seed=3)
    df = frame(spark, data, 3).withColumnRenamed("prediction", "output")
    judge_options = {"base_url": server.url, "api_key": "k"}
    scored = tgm_spark.score(df, ["rouge", "bleu", "faithfulness"], columns={"predictions": "output"},
                             judge="openai:judge-1", judge_options=judge_options).collect()
    assert sorted(r["id"] for r in scored) == list(range(25))
    assert scored[0].asDict()["output"] == data[0]["prediction"]  # the input columns kept
    by_id = {r["id"]: r.asDict() for r in scored}
    for name, key in [("rouge", "rougeL"), ("rouge", "rouge2"), ("bleu", "bleu"), ("faithfulness", "faithfulness")]:
        extra = {"judge": "openai:judge-1", "judge_options": judge_options} if name == "faithfulness" else {}
        per_example = library(name, data, use_aggregator=False, **extra)[key]
        assert [by_id[i][f"{name}.{key}"] for i in range(25)] == per_example, (name, key)


def test_a_worker_killed_mid_run_changes_nothing(spark, tmp_path):
    from textgen_metrics import spark as tgm_spark

    data = rows(40, seed=5)
    marker = tmp_path / "killed"
    expected = {name: library(name, data, judge=KillOnce()) for name in ("faithfulness", "answer_relevance")}
    expected["bleu"] = library("bleu", data)
    got = tgm_spark.evaluate(frame(spark, data, 4), ["bleu", "faithfulness", "answer_relevance"],
                             judge=KillOnce(str(marker)))
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a Python worker died
    assert got == expected


def test_bad_column_and_option_fail_before_any_work(spark):
    from textgen_metrics import spark as tgm_spark

    df = frame(spark, rows(3), 1)
    with pytest.raises(ValueError, match=r"no column 'answer' for rouge's predictions"):
        tgm_spark.evaluate(df, ["rouge"], columns={"predictions": "answer"})
    with pytest.raises(ValueError, match="n_gram"):
        tgm_spark.score(df, ["rouge"], options={"rouge": {"n_gram": 3}})


def test_the_judges_limits_hold_for_all_executors_together(spark):
    """A judge's ``concurrency`` and ``requests_per_minute`` are the cluster's by default (a
    budget server in the driver hands them out); ``share_budget=False`` gives each Python worker
    its own."""
    from textgen_metrics import spark as tgm_spark

    data = rows(20, seed=6)
    df = frame(spark, data, 4).cache()
    df.count()
    assert_limits_shared(
        lambda judge_options, share: tgm_spark.evaluate(df, ["faithfulness"], judge="openai:judge-1",
                                                        judge_options=judge_options,
                                                        share_budget=share)["faithfulness"],
        lambda judge_options: library("faithfulness", data, judge="openai:judge-1", judge_options=judge_options),
        len(data))


def test_a_worker_killed_after_some_answers_resends_only_what_was_never_validated(spark, tmp_path):
    """With a judge cache every worker shares, the retried batch of a killed worker reads the
    answers validated before the kill: no validated answer is asked again, none is lost, and the
    result equals the library's."""
    from textgen_metrics import spark as tgm_spark

    data = rows(24, seed=8)
    marker, log = tmp_path / "killed", tmp_path / "answered"
    judge_options = {"cache": f"dir:{tmp_path / 'cache'}", "concurrency": 1}
    got = tgm_spark.evaluate(frame(spark, data, 4), ["faithfulness"], judge=KillAfter(str(marker), str(log), after=5),
                             judge_options=judge_options, share_budget=False)["faithfulness"]
    assert_resumed_from_the_cache(got, library("faithfulness", data, judge=KillAfter()), marker, log, len(data))


def test_g_eval_steps_are_written_once_by_the_driver_for_every_batch(spark):
    """A judge that writes other steps in every process: the driver asks for G-Eval's steps once
    and every batch of every executor is scored by them, as in the library's one run."""
    from textgen_metrics import spark as tgm_spark

    data = rows(24, seed=8)
    options = {"g_eval": {"criteria": "Fluency: the text reads well."}}
    df = frame(spark, data, 3).drop("references")
    df = df.withColumn("references", df["query"])  # G-Eval takes one reference text
    expected = library("g_eval", [dict(r, references=r["query"]) for r in data], judge=StepsPerProcess(),
                       **options["g_eval"])
    got = tgm_spark.evaluate(df, ["g_eval"], options=options, judge=StepsPerProcess())
    assert got == {"g_eval": expected}
    assert f"process {os.getpid()}, steps 1" in got["g_eval"]["evaluation_steps"][0]  # the driver's
    scored = tgm_spark.score(df, ["g_eval"], options=options, judge=StepsPerProcess()).collect()
    per_row = library("g_eval", [dict(r, references=r["query"]) for r in data], judge=StepsPerProcess(),
                      use_aggregator=False, **options["g_eval"])
    assert [r["g_eval.g_eval"] for r in sorted(scored, key=lambda r: r["id"])] == per_row["g_eval"]


def test_a_bad_value_is_named_by_its_row_in_the_dataframe(spark, server):
    """The library's error for the same rows (argument, index in the whole DataFrame), raised by
    the driver, which alone knows where each partition's batches are."""
    from textgen_metrics import spark as tgm_spark

    data = rows(60, seed=9)
    data[37]["prediction"] = None
    judge_options = {"base_url": server.url, "api_key": "k"}
    with pytest.raises(InputTypeError) as alone:
        library("faithfulness", data, judge="openai:judge-1", judge_options=judge_options)
    with pytest.raises(InputTypeError) as got:
        tgm_spark.evaluate(frame(spark, data, 4), ["faithfulness"], judge="openai:judge-1",
                           judge_options=judge_options)
    assert (got.value.argument, got.value.index) == ("predictions", 37)
    assert str(got.value) == str(alone.value) == "predictions[37]: expected str, got None"


def test_random_tables_partitionings_and_arrival_orders_equal_the_library(spark):
    """Random tables (1 to 5 references a row: TER's fractional sums), each in a random number
    of partitions (Arrow batches of 9 rows within them), or repartitioned (Spark's round-robin
    order, which a column selection before the numbering used to change: the result then was
    not the library's over the DataFrame's rows), judged by a judge that answers after a random
    wait, so that the batches reach the driver in an order of their own: every metric's result
    dict equals the library's over the DataFrame's rows in its order, with ``==``."""
    from textgen_metrics import spark as tgm_spark

    rng = random.Random(4848)
    metrics = [m for m in LEXICAL if m != "bertscore"] + ["faithfulness"]
    options = {**OPTIONS, "faithfulness": {"use_aggregator": False}}
    judge = Jitter(0.01)
    for shuffled in (False, True, False, True):
        data = random_table(rng)
        if shuffled:  # one map task: the shuffle's order is the same at every read
            df = frame(spark, data, 1).repartition(rng.randint(2, 5))
            by_id = {r["id"]: r for r in data}
            data = [by_id[row["id"]] for row in df.collect()]  # (a select first would change the order)
            assert [r["id"] for r in data] != sorted(by_id)
        else:
            df = frame(spark, data, rng.randint(1, 6))
        got = tgm_spark.evaluate(df, metrics, options=options, judge=judge)
        for name in metrics:
            extra = {"judge": Jitter(0)} if name == "faithfulness" else {}
            assert got[name] == library(name, data, **options.get(name, {}), **extra), name
