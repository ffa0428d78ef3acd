"""One judge budget for a real Spark cluster: ``local-cluster[2,1,1024]`` (a standalone master,
a worker and two executor JVMs on 127.0.0.1, each with its own Python worker), the budget served
by the driver (``cluster_judge(on="server")``), a partition on each executor asking its rows at a
loopback chat server that records each arrival. The limit holds for the sum of both executors;
a 429's Retry-After pauses both."""

import os
import pickle
import sys
import time

import pytest

from budget_worker import answer
from chat_server import ChatServer
from textgen_metrics.judges import OpenAIJudge, cluster_judge
from textgen_metrics.judges.budget import BudgetServer

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
RPM = 600


@pytest.fixture(scope="module")
def spark():
    saved = {k: os.environ.get(k) for k in ("SPARK_LOCAL_IP", "PYSPARK_PYTHON")}
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # every JVM on loopback
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python: this one, with the package
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("judge-budget")
               .config("spark.executorEnv.PYTHONPATH", os.pathsep.join([SRC, HERE]))
               .config("spark.ui.enabled", "false").config("spark.task.maxFailures", "1").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def on_executors(spark, worker_judge, rows, partitions=2):
    """Each partition runs ``budget_worker.run`` with the pickled judge on an executor."""
    blob = pickle.dumps(worker_judge)

    def partition(it):
        import os

        import budget_worker

        report = budget_worker.run(blob, list(it))
        yield os.getpid(), report["ok"], report["errors"]

    out = spark.sparkContext.parallelize(rows, partitions).mapPartitions(partition).collect()
    assert len({pid for pid, _, _ in out}) == partitions  # one Python worker per executor
    return out


def recorder(faults=None):
    times = []

    def record(body, task):
        times.append(time.monotonic())
        return (faults or {}).get(len(times) - 1)

    return times, record


def test_requests_per_minute_held_across_two_executors(spark):
    times, record = recorder()
    with ChatServer(answer, fault_fn=record) as srv:
        judge = OpenAIJudge("judge-model", base_url=srv.url, api_key="sk-spark-SECRET", concurrency=4,
                            requests_per_minute=RPM, backoff=0.01)
        with cluster_judge(judge, on="server") as worker_judge:
            out = on_executors(spark, worker_judge, range(40))
            assert worker_judge.rate_budget.stats()["granted"] == 40
    assert [ok for _, ok, _ in out] == [20, 20]
    times.sort()
    assert (len(times) - 1) / (times[-1] - times[0]) == pytest.approx(RPM / 60, rel=0.05)


def test_retry_after_pauses_both_executors(spark):
    times, record = recorder({11: ("429", 1.0)})
    with ChatServer(answer, fault_fn=record) as srv:
        judge = OpenAIJudge("judge-model", base_url=srv.url, api_key="sk-spark-SECRET", concurrency=4,
                            requests_per_minute=RPM, backoff=0.01)
        with cluster_judge(judge, on="server") as worker_judge:
            out = on_executors(spark, worker_judge, range(30))
            assert worker_judge.rate_budget.stats()["pauses"] == 1
    assert sum(ok for _, ok, _ in out) == 30 and len(times) == 31
    t429 = times[11]
    assert [t - t429 for t in times if t429 + 0.3 < t < t429 + 0.95] == []  # 6 would have come
    assert len([t for t in times if t >= t429 + 0.95]) >= 15


def test_concurrency_held_across_two_executors_without_polling(spark):
    """Two leases for two executors with four requests each in flight: never more than two at
    the server, and the requests waiting for a lease wait at the budget server (a few asks each;
    asking every 5 to 50 ms over the run would be hundreds)."""
    with ChatServer(answer, latency=0.1) as srv, BudgetServer(concurrency=2) as budget:
        judge = OpenAIJudge("judge-model", base_url=srv.url, api_key="sk-spark-SECRET", concurrency=4,
                            backoff=0.01).share(budget=budget.client())
        out = on_executors(spark, judge, range(40))
        assert srv.max_in_flight == 2
        stats = budget.stats()
    assert [ok for _, ok, _ in out] == [20, 20]
    assert stats["granted"] == 40 and stats["in_flight"] == 0 and stats["queued"] > 0
    assert stats["asks"] <= 3 * 40
