"""Judges on a cluster: is one budget held for the sum of the workers, and what does the shared
cache save on a rerun?

1. The budget: 120 requests per minute per worker is what each worker would hold alone (a
   per-worker limit, as Ray Data's HTTP stage has): four workers then send four times the limit.
   With one budget (``BudgetServer`` for four processes; ``RayBudget`` for a task on each node of
   a two-raylet Ray cluster) the sum is held. Measured at a loopback chat server that records when
   each request arrives: the rate between the first and the last arrival, against the limit, and
   the most requests in any one-second window.
2. The shared cache (``cache="dir:<folder>"``): 400 requests at a server answering each 50 ms
   after it came, four worker processes; then the same run again (every
   answer from the folder), and a run whose first worker was killed halfway, resumed.
"""

import multiprocessing
import os
import pickle
import sys
import tempfile
import time

from common import print_table

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

RPM = 1200  # 20 requests a second
PER_WORKER = 30
WORKERS = 4
CACHE_ROWS, CACHE_WORKERS, LATENCY = 400, 4, 0.05


def _rate(times):
    times = sorted(times)
    return (len(times) - 1) / (times[-1] - times[0]) * 60, max(sum(1 for u in times if t <= u < t + 1.0)
                                                                   for t in times)


def _recorder():
    times = []

    def record(body, task):
        times.append(time.monotonic())
        return None

    return times, record


def _processes(judge, shares):
    import budget_worker

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    blob = pickle.dumps(judge)
    procs = [ctx.Process(target=budget_worker.run_to_queue, args=(blob, rows, queue)) for rows in shares]
    for p in procs:
        p.start()
    reports = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(30)
    assert all(not r["errors"] for r in reports), reports
    return reports


def _shares(n, workers, start=0):
    return [range(start + w * n, start + (w + 1) * n) for w in range(workers)]


def budget_held():
    from budget_worker import answer
    from chat_server import ChatServer
    from textgen_metrics.judges import BudgetServer, OpenAIJudge

    rows = []
    # per-worker limits: each process holds the limit alone
    times, record = _recorder()
    with ChatServer(answer, fault_fn=record) as srv:
        judge = OpenAIJudge("bench", base_url=srv.url, api_key="unused", concurrency=4, requests_per_minute=RPM)
        _processes(judge, _shares(PER_WORKER, WORKERS))
    rate, peak = _rate(times)
    rows.append([f"{WORKERS} processes, a limit each (per-worker)", len(times), f"{rate:.0f}",
                 f"{100 * rate / RPM:.1f}%", peak])
    # one budget for four processes
    times, record = _recorder()
    with ChatServer(answer, fault_fn=record) as srv, BudgetServer(requests_per_minute=RPM) as budget:
        judge = OpenAIJudge("bench", base_url=srv.url, api_key="unused", concurrency=4).share(budget=budget.client())
        _processes(judge, _shares(PER_WORKER, WORKERS))
    rate, peak = _rate(times)
    shared_pct = 100 * rate / RPM
    rows.append([f"{WORKERS} processes, one BudgetServer", len(times), f"{rate:.0f}", f"{shared_pct:.1f}%", peak])
    ray_pct = _ray_budget(rows)
    print_table(f"One judge budget for all workers (limit {RPM} requests/minute; a 1 s window allows "
                f"{RPM // 60} + 1)", rows, header=("workers", "requests", "requests/minute", "of the limit",
                                                  "most in 1 s"))
    return {"limit_rpm": RPM, "budget_server_pct": round(shared_pct, 2), "ray_budget_pct": ray_pct,
            "per_worker_limits_pct": round(float(rows[0][3].rstrip("%")), 1)}


def _ray_budget(rows):
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    import ray
    from ray.cluster_utils import Cluster

    from budget_worker import answer
    from chat_server import ChatServer
    from textgen_metrics.judges import OpenAIJudge, RayBudget

    mb = 1024 * 1024
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 * mb,
                                                            "include_dashboard": False})
    cluster.add_node(num_cpus=1, object_store_memory=80 * mb)
    path = os.pathsep.join([os.path.join(ROOT, "src"), os.path.join(ROOT, "tests")])
    ray.init(address=cluster.address, runtime_env={"env_vars": {"PYTHONPATH": path}}, logging_level="ERROR",
             log_to_driver=False)
    try:
        import budget_worker

        work = ray.remote(num_cpus=1)(budget_worker.run)
        times, record = _recorder()
        budget = RayBudget.create(requests_per_minute=RPM)
        with ChatServer(answer, fault_fn=record) as srv:
            judge = OpenAIJudge("bench", base_url=srv.url, api_key="unused", concurrency=4).share(budget=budget)
            blob = pickle.dumps(judge)
            n = PER_WORKER * WORKERS // 2
            reports = ray.get([work.options(scheduling_strategy="SPREAD").remote(blob, rows)
                               for rows in _shares(n, 2)])
            assert all(not r["errors"] for r in reports)
        budget.close()
    finally:
        ray.shutdown()
        cluster.shutdown()
    rate, peak = _rate(times)
    pct = 100 * rate / RPM
    rows.append(["2 Ray nodes, one RayBudget (a named actor)", len(times), f"{rate:.0f}", f"{pct:.1f}%", peak])
    return round(pct, 2)


def cache_saves():
    import budget_worker
    from budget_worker import answer
    from chat_server import ChatServer
    from textgen_metrics.judges import OpenAIJudge

    rows = []
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = ChatServer(answer, latency=LATENCY)
        try:
            def run(folder, label):
                judge = OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=8,
                                    cache=f"dir:{folder}")
                before = _count(server)
                start = time.perf_counter()
                reports = _processes(judge, _shares(CACHE_ROWS // CACHE_WORKERS, CACHE_WORKERS))
                seconds = time.perf_counter() - start
                judging = max(r["seconds"] for r in reports)
                sent = _count(server) - before
                rows.append([label, sent, f"{seconds:.2f}", f"{judging:.3f}"])
                return sent, seconds, judging

            first = run(os.path.join(tmp, "a"), f"first run, {CACHE_WORKERS} processes")
            rerun = run(os.path.join(tmp, "a"), "the same run again (shared folder)")
            # a worker killed halfway through its share, then the whole run resumed
            folder = os.path.join(tmp, "b")
            judge = OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=8, cache=f"dir:{folder}")
            ctx = multiprocessing.get_context("spawn")
            before = _count(server)
            victim = ctx.Process(target=budget_worker.run, args=(pickle.dumps(judge), range(CACHE_ROWS)))
            victim.start()
            while _count(server) - before < CACHE_ROWS // 2:
                time.sleep(0.01)
            victim.kill()
            victim.join()
            killed_sent = _count(server) - before
            resumed = run(folder, f"resumed after a worker was killed at {killed_sent} sent")
        finally:
            server.close()
    print_table(f"The shared cache: {CACHE_ROWS} requests, {int(LATENCY * 1000)} ms each at the server",
                rows, header=("run", "requests sent", "seconds (with process start)", "seconds judging"))
    out.update(first_requests=first[0], first_seconds=round(first[1], 3), first_judging=round(first[2], 3))
    out.update(rerun_requests=rerun[0], rerun_seconds=round(rerun[1], 3), rerun_judging=round(rerun[2], 3))
    out.update(killed_after=killed_sent, resumed_requests=resumed[0],
               resent_twice=killed_sent + resumed[0] - CACHE_ROWS)
    return out


def _count(server):
    """Requests the server has had so far."""
    return server.count


def main():
    return {"budget": budget_held(), "cache": cache_saves()}


if __name__ == "__main__":
    main()
