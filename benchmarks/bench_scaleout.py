"""Past one machine (textgen_metrics.ray, textgen_metrics.spark), as ratios measured in one run:

1. the adapters' overhead at one worker against the bare library on the same rows (ROUGE, BLEU,
   chrF over WordNet-gloss summaries): the in-process core alone (statistics of batches, JSON,
   the merge, the score), Ray with one task at a time (``compute="auto"``: tasks that
   ``evaluate`` sends on the Dataset's blocks, in Ray's worker processes, kept between calls;
   best of 3, and the first call, whose worker imports the package), with one actor
   (``compute="actors"``: Ray Data's ``map_batches`` on an actor started per call), Spark with
   one task at a time (goal <= 1.15x);
2. throughput of faithfulness with 1, 2 and 4 workers (Ray tasks; Spark tasks of a ``local[4]``
   session, one partition per worker) on a latency-bound judge (the loopback server of
   ``latency_server.py``, a fixed latency per request; each worker's judge asks ``CONCURRENCY``
   requests at once): speed-up against one worker. Two workloads: 320 examples in 16 batches of
   20 (a batch judged in about 1 s), and 960 examples in 8 batches of 120 (about 6 s a batch),
   where fixed costs per call and per batch weigh less.

3. the judge's budget on every path that takes a judge (``python benchmarks/bench_scaleout.py
   budget`` runs this part alone): ``Scorer`` in ``map_batches`` (``concurrency`` actors),
   ``textgen_metrics.ray.evaluate``, ``textgen_metrics.spark.evaluate`` (tasks of ``local[4]``),
   at 1, 2 and 4 workers, with a judge of ``requests_per_minute=BUDGET_RPM`` at a loopback chat
   server that records each arrival: requests per second against the limit, and the most in
   any ``WINDOW``-second window against ``WINDOW * limit / 60 + 1``; with ``share_budget=False``
   (each worker holding the limit alone, as every ``Scorer`` actor did before) for comparison.

Every run's result is checked equal to the library's. The clusters run on this machine, bound to
127.0.0.1; their start is not timed. Before each timed throughput call the same call runs on k
rows (its time is reported: it starts what the call needs).
"""

from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_judges import Server  # noqa: E402
from common import print_table  # noqa: E402
from textdata import pairs  # noqa: E402

ROWS = 20_000          # rows of the overhead comparison
TOKENS = 60            # tokens per summary
LEXICAL = ["rouge", "bleu", "chrf"]
JUDGED_ROWS = 320      # faithfulness examples (two requests each) of the throughput comparison
BATCHES = 16           # batches of them
LATENCY = 0.1          # seconds per judge request
CONCURRENCY = 4        # requests in flight per worker
WORKERS = (1, 2, 4)
LARGE_ROWS, LARGE_BATCHES = 960, 8  # the second workload: longer batches


def _library(rows: list[dict], metrics: list[str]) -> dict:
    import textgen_metrics

    preds = [r["prediction"] for r in rows]
    refs = [r["references"] for r in rows]
    return {m: getattr(textgen_metrics, m)(predictions=preds, references=refs) for m in metrics}


def _core(rows: list[dict], metrics: list[str], batch: int) -> dict:
    from textgen_metrics import scaleout
    from textgen_metrics.run import Run

    run = Run.build(metrics)
    parts = []
    for start in range(0, len(rows), batch):
        part = rows[start:start + batch]
        columns = {"prediction": [r["prediction"] for r in part], "references": [r["references"] for r in part]}
        parts.append((start, len(part), scaleout.pack(run.statistics(columns))))
    return run.result_dicts(scaleout.merge(parts))


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _cpu() -> float:
    """CPU seconds of this process and every process it started (the local Ray instance: its
    raylet, GCS and worker processes; exited ones not counted)."""
    import psutil

    total = time.process_time()
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def _cpu_timed(fn):
    start = _cpu()
    out = fn()
    return _cpu() - start, out


def _best(fn, repeat=3):
    runs = [_timed(fn) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[0][1]


def _throughput(ray, spark, tgm_ray, tgm_spark, server, n_rows: int, n_batches: int, actors: bool = False) -> dict:
    """Faithfulness over ``n_rows`` examples in ``n_batches`` batches with 1, 2 and 4 workers
    (with ``actors``, Ray's actors too: ``compute="actors"``)."""
    import textgen_metrics

    judged = [{"prediction": f"Answer {i}: the capital of France is Paris, with many museums.",
               "contexts": [f"Context {i}: Paris is the capital of France."]} for i in range(n_rows)]
    judge_options = {"base_url": server.url, "api_key": "unused", "concurrency": CONCURRENCY}
    # each worker holds its own 4 in flight: the adapters' scaling, not the cluster budget's
    # (bench_cluster_budget.py measures that one)
    common = {"judge": "openai:bench", "judge_options": judge_options, "share_budget": False}
    expected_f = textgen_metrics.faithfulness(predictions=[r["prediction"] for r in judged],
                                              contexts=[r["contexts"] for r in judged],
                                              judge=common["judge"], judge_options=judge_options)
    jds = ray.data.from_items(judged, override_num_blocks=n_batches).materialize()
    jdf = spark.createDataFrame([(r["prediction"], r["contexts"]) for r in judged],
                                "prediction string, contexts array<string>").cache()
    jdf.count()
    rows_out = []
    engines = ["ray", *(["ray actors"] if actors else []), "spark"]
    times: dict[str, dict[int, float]] = {e: {} for e in engines}
    starts: dict[str, dict[int, float]] = {e: {} for e in engines}
    for k in WORKERS:
        # the same call on one row per worker (one short batch each) first
        few_ds = jds.limit(k).repartition(k).materialize()  # k blocks of one row
        starts["ray"][k], _ = _timed(lambda k=k, few_ds=few_ds: tgm_ray.evaluate(
            few_ds, ["faithfulness"], concurrency=k, batch_size=1, **common))
        t, got = _timed(lambda k=k: tgm_ray.evaluate(jds, ["faithfulness"], concurrency=k,
                                                     batch_size=n_rows // n_batches, **common))
        assert got["faithfulness"] == expected_f
        times["ray"][k] = t
        if actors:
            starts["ray actors"][k], _ = _timed(lambda k=k, few_ds=few_ds: tgm_ray.evaluate(
                few_ds, ["faithfulness"], concurrency=k, batch_size=1, compute="actors", **common))
            t, got = _timed(lambda k=k: tgm_ray.evaluate(jds, ["faithfulness"], concurrency=k, compute="actors",
                                                         batch_size=n_rows // n_batches, **common))
            assert got["faithfulness"] == expected_f
            times["ray actors"][k] = t
        part = jdf.repartition(k).cache()
        part.count()
        few = jdf.limit(k).repartition(k).cache()
        few.count()
        starts["spark"][k], _ = _timed(lambda few=few: tgm_spark.evaluate(few, ["faithfulness"], **common))
        t, got = _timed(lambda part=part: tgm_spark.evaluate(part, ["faithfulness"], **common))
        assert got["faithfulness"] == expected_f
        times["spark"][k] = t
    for engine in engines:
        for k in WORKERS:
            t = times[engine][k]
            rows_out.append((f"{engine}, {k} worker{'s' if k > 1 else ''}", f"{t:.2f}",
                             f"{times[engine][1] / t:.2f}x", f"{starts[engine][k]:.2f}"))
    print_table(f"Past one machine: faithfulness, {n_rows} examples in {n_batches} batches, judge latency "
                f"{LATENCY * 1000:.0f} ms, {CONCURRENCY} requests in flight per worker",
                rows_out, ("workers", "seconds", "speed-up vs 1", "the same call on k rows first (s)"))
    return {e: {str(k): {"seconds": t, "start_s": starts[e][k], "speedup": times[e][1] / t}
                for k, t in ts.items()} for e, ts in times.items()}


BUDGET_RPM, BUDGET_ROWS, WINDOW = 600, 60, 6.0  # 10 requests a second; faithfulness: 120 requests


def _arrivals(times: list[float]) -> tuple[float, int]:
    """Requests per second between the first and the last arrival, and the most in a window."""
    times = sorted(times)
    rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0
    return rate, max(sum(1 for u in times if t <= u < t + WINDOW) for t in times)


def _budget(ray, spark, tgm_ray, tgm_spark) -> dict:
    """The budget held on each path at 1, 2 and 4 workers (section 3 of the module's docstring)."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
    import textgen_metrics
    from chat_server import ChatServer
    from scaleout_judge import KillOnce, respond, rows
    from textgen_metrics.judges import OpenAIJudge
    from textgen_metrics.ray import Scorer

    data = rows(BUDGET_ROWS, seed=21)
    want = textgen_metrics.faithfulness(predictions=[r["prediction"] for r in data],
                                        contexts=[r["contexts"] for r in data], judge=KillOnce(),
                                        use_aggregator=False)["faithfulness"]
    times: list[float] = []
    table, out = [], {}
    with ChatServer(respond, fault_fn=lambda body, task: times.append(time.monotonic())) as srv:
        def judge() -> OpenAIJudge:
            return OpenAIJudge("bench", base_url=srv.url, api_key="unused", concurrency=8,
                               requests_per_minute=BUDGET_RPM)

        ds = ray.data.from_items(data, override_num_blocks=12).materialize()
        tuples = [(r["id"], r["prediction"], r["contexts"]) for r in data]
        schema = "id long, prediction string, contexts array<string>"
        per_row = {"faithfulness": {"use_aggregator": False}}
        paths = {
            "Scorer in map_batches": lambda k, share: sorted(
                (r["id"], r["faithfulness.faithfulness"]) for r in ds.map_batches(
                    Scorer, fn_constructor_kwargs={"metrics": ["faithfulness"], "judge": judge(),
                                                   "share_budget": share},
                    concurrency=k, num_cpus=0.5, batch_size=5, batch_format="pandas").take_all()),
            "ray.evaluate": lambda k, share: tgm_ray.evaluate(
                ds, ["faithfulness"], options=per_row, judge=judge(), concurrency=k, batch_size=5, num_cpus=0.5,
                share_budget=share)["faithfulness"]["faithfulness"],
            "spark.evaluate": lambda k, share: tgm_spark.evaluate(
                spark.createDataFrame(spark.sparkContext.parallelize(tuples, k), schema), ["faithfulness"],
                options=per_row, judge=judge(), share_budget=share)["faithfulness"]["faithfulness"],
        }
        for path, call in paths.items():
            for k in WORKERS:
                for share in (True, False):
                    if not share and k == 1:
                        continue
                    label = f"{path}, {k} worker{'s' if k > 1 else ''}{'' if share else ', share_budget=False'}"
                    times.clear()
                    got = call(k, share)
                    if path.startswith("Scorer"):
                        assert [i for i, _ in got] == list(range(len(data)))
                        got = [v for _, v in got]
                    assert got == want, label
                    rate, busiest = _arrivals(times)
                    table.append((label, f"{rate:.1f}", f"{BUDGET_RPM / 60:.0f}", str(busiest),
                                  str(int(WINDOW * BUDGET_RPM / 60 + 1))))
                    out[label] = {"rate_per_s": rate, "busiest_window": busiest, "requests": len(times)}
    print_table(f"Past one machine: the judge's budget on every path ({BUDGET_ROWS} faithfulness rows, "
                f"{2 * BUDGET_ROWS} requests, requests_per_minute={BUDGET_RPM})", table,
                ("path, workers", "requests/s", "limit/s", f"most in {WINDOW:.0f} s", "allowed"))
    return out


def _environment() -> None:
    """Both clusters on 127.0.0.1, their Python workers on this Python and this source tree
    (before Ray and PySpark are imported)."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    src = os.path.join(os.path.dirname(HERE), "src")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)


def main(only: str | None = None) -> dict:
    _environment()
    import ray
    from pyspark.sql import SparkSession

    from textgen_metrics import ray as tgm_ray
    from textgen_metrics import spark as tgm_spark

    rows = [{"prediction": p, "references": [r]} for r, p in pairs(ROWS, TOKENS, seed=3)]
    batch = ROWS // 8
    ray.init(address="local", num_cpus=4, include_dashboard=False, object_store_memory=300 * 2**20, log_to_driver=False)
    spark = (SparkSession.builder.master("local[4]").appName("bench-scaleout")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false").config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(batch)).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    out: dict = {}
    try:
        if only == "budget":
            out["budget"] = _budget(ray, spark, tgm_ray, tgm_spark)
            return out
        # -- 1. overhead at one worker ----------------------------------------------------------
        ds = ray.data.from_items(rows, override_num_blocks=8).materialize()
        df = spark.createDataFrame([(r["prediction"], r["references"]) for r in rows],
                                   "prediction string, references array<string>").coalesce(1).cache()
        df.count()
        tgm_spark.evaluate(df.limit(10), LEXICAL)  # warm-up: the Python worker, its imports
        t_lib, expected = _best(lambda: _library(rows, LEXICAL))
        t_core, got_core = _best(lambda: _core(rows, LEXICAL, batch))
        ray_runs = [_timed(lambda: tgm_ray.evaluate(ds, LEXICAL, concurrency=1, batch_size=batch))
                    for _ in range(3)]
        t_ray_first, got_ray = ray_runs[0]
        t_ray = min(t for t, _ in ray_runs)
        t_actor, got_actor = _best(lambda: tgm_ray.evaluate(ds, LEXICAL, concurrency=1, batch_size=batch,
                                                            compute="actors"))
        t_spark, got_spark = _best(lambda: tgm_spark.evaluate(df, LEXICAL))
        # CPU time, less disturbed than wall time by other jobs on the machine (the least of 3)
        cpu_lib = min(_cpu_timed(lambda: _library(rows, LEXICAL))[0] for _ in range(3))
        cpu_ray = min(_cpu_timed(lambda: tgm_ray.evaluate(ds, LEXICAL, concurrency=1, batch_size=batch))[0]
                      for _ in range(3))
        cpu_idle, _ = _cpu_timed(lambda: time.sleep(t_ray))  # what the Ray instance spends idle meanwhile
        assert got_core == expected and got_ray == expected and got_actor == expected and got_spark == expected
        assert all(got == expected for _, got in ray_runs)
        table = [("library, one process", f"{t_lib:.2f}", "1.00x"),
                 ("scaleout core, in process", f"{t_core:.2f}", f"{t_core / t_lib:.2f}x"),
                 ("textgen_metrics.ray, 1 task (default)", f"{t_ray:.2f}", f"{t_ray / t_lib:.2f}x"),
                 ("textgen_metrics.ray, 1 task, first call", f"{t_ray_first:.2f}", f"{t_ray_first / t_lib:.2f}x"),
                 ("textgen_metrics.ray, 1 actor", f"{t_actor:.2f}", f"{t_actor / t_lib:.2f}x"),
                 ("textgen_metrics.spark, 1 task", f"{t_spark:.2f}", f"{t_spark / t_lib:.2f}x"),
                 ("CPU seconds: library, one process", f"{cpu_lib:.2f}", "1.00x"),
                 ("CPU seconds: textgen_metrics.ray, 1 task (driver + Ray's processes)", f"{cpu_ray:.2f}",
                  f"{cpu_ray / cpu_lib:.2f}x"),
                 ("CPU seconds: the same processes idle for as long", f"{cpu_idle:.2f}", f"{cpu_idle / cpu_lib:.2f}x")]
        print_table(f"Past one machine: overhead at one worker ({ROWS} rows, {', '.join(LEXICAL)}; goal <= 1.15x)",
                    table, ("contender", "seconds", "time vs library"))
        out["overhead"] = {"rows": ROWS, "library_s": t_lib, "core_ratio": t_core / t_lib,
                           "ray_ratio": t_ray / t_lib, "ray_first_call_ratio": t_ray_first / t_lib,
                           "ray_actor_ratio": t_actor / t_lib, "spark_ratio": t_spark / t_lib,
                           "ray_cpu_ratio": cpu_ray / cpu_lib, "ray_idle_cpu_ratio": cpu_idle / cpu_lib}

        # -- 2. throughput on a latency-bound judge ---------------------------------------------
        server = Server(LATENCY, "--faithfulness")
        try:
            out["throughput"] = _throughput(ray, spark, tgm_ray, tgm_spark, server, JUDGED_ROWS, BATCHES,
                                            actors=True)
            out["throughput_large"] = _throughput(ray, spark, tgm_ray, tgm_spark, server, LARGE_ROWS, LARGE_BATCHES)
        finally:
            server.stop()
        # -- 3. the judge's budget on every path -------------------------------------------------
        out["budget"] = _budget(ray, spark, tgm_ray, tgm_spark)
    finally:
        spark.stop()
        ray.shutdown()
    return out


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
