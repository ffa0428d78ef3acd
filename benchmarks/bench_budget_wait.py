"""Waiting for a concurrency lease of a judge budget: asked again and again (a poll every 5 ms,
slowing to every 50 ms: the budget before issue 27's lease wait) against waiting where the budget
lives and being woken when a lease comes back (``Budget.acquire`` now).

Each budget (``LocalBudget`` in this process, ``RemoteBudget`` at a ``BudgetServer``,
``RayBudget`` at its actor on a local Ray) holds one lease; four threads, each an event loop with
six requests at once, share 80 requests, each holding its lease 10 ms. With one lease, every
grant but the first follows a release: the time from a release to the next grant is the
budget's hand-over, and the lease asks the budget answered per request admitted are its load.
The polling client is the old ``acquire`` loop on the same holders (their ``acquire`` operation
is kept), so only the waiting differs (the Ray actor is the new threaded one for both).
"""

import asyncio
import os
import statistics
import sys
import threading
import time

from common import print_table

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

THREADS, PER_THREAD, TOTAL, HOLD = 4, 6, 80, 0.01


class _Polling:
    """The old ``Budget.acquire``: ask, and while every lease is taken ask again after 5 ms,
    half as often again each time, at most every 50 ms."""

    async def acquire(self, tokens=0):
        from textgen_metrics.judges.budget import Lease

        poll = 0.005
        while True:
            lease, wait = await self._acall("acquire", int(tokens))
            if lease is not None:
                held = Lease(lease, int(tokens))
                if self.renews:
                    held.keeper = asyncio.ensure_future(self._keep(held))
                if wait > 0:
                    await asyncio.sleep(wait)
                return held
            if wait > 0:
                await asyncio.sleep(wait)
                poll = 0.005
            else:
                await asyncio.sleep(poll)
                poll = min(poll * 1.5, 0.05)


def _workload(client_for_thread):
    """Run the requests; (seconds, the gaps from each release to the next grant)."""
    lock = threading.Lock()
    left = [TOTAL]
    events = []

    def claim():
        with lock:
            if left[0] == 0:
                return False
            left[0] -= 1
            return True

    async def thread_main(i):
        budget = client_for_thread(i)

        async def one():
            while claim():
                lease = await budget.acquire(0)
                events.append(("grant", time.monotonic()))
                await asyncio.sleep(HOLD)
                events.append(("release", time.monotonic()))
                await budget.release(lease)

        await asyncio.gather(*(one() for _ in range(PER_THREAD)))

    threads = [threading.Thread(target=lambda i=i: asyncio.run(thread_main(i))) for i in range(THREADS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    events.sort(key=lambda e: e[1])
    gaps = [b[1] - a[1] for a, b in zip(events, events[1:], strict=False) if a[0] == "release" and b[0] == "grant"]
    assert len(gaps) == TOTAL - 1, "one lease: grants and releases alternate"
    return seconds, gaps


def _row(kind, how, stats, seconds, gaps):
    gaps_ms = sorted(g * 1000 for g in gaps)
    p90 = gaps_ms[int(0.9 * (len(gaps_ms) - 1))]
    return [kind, how, stats["granted"], f"{stats['asks'] / stats['granted']:.2f}",
            f"{statistics.median(gaps_ms):.2f}", f"{statistics.mean(gaps_ms):.2f}", f"{p90:.2f}",
            f"{TOTAL / seconds:.1f}"]


def _measure(kind, make, polling_client, waiting_client, rows, out):
    for how, client in (("poll (before)", polling_client), ("wait (now)", waiting_client)):
        budget = make()
        try:
            seconds, gaps = _workload(lambda i, budget=budget, client=client: client(budget, i))
            stats = budget.stats()
        finally:
            if hasattr(budget, "close"):
                budget.close()
        assert stats["granted"] == TOTAL and stats["in_flight"] == 0, stats
        rows.append(_row(kind, how, stats, seconds, gaps))
        out[f"{kind}_{how.split()[0]}"] = _figures(stats, seconds, gaps)


def _figures(stats, seconds, gaps):
    return {"asks_per_request": round(stats["asks"] / stats["granted"], 2),
            "release_to_grant_ms_median": round(statistics.median(gaps) * 1000, 3),
            "release_to_grant_ms_mean": round(statistics.mean(gaps) * 1000, 3),
            "requests_per_second": round(TOTAL / seconds, 1)}


def main():
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from textgen_metrics.judges.budget import BudgetServer, LocalBudget, RayBudget, RemoteBudget

    class PollingLocal(_Polling, LocalBudget):
        pass

    class PollingRemote(_Polling, RemoteBudget):
        pass

    class PollingRay(_Polling, RayBudget):
        pass

    rows, out = [], {}
    # LocalBudget: one budget for every thread of the process (the polling one is a LocalBudget
    # with the old acquire)
    for how, cls in (("poll (before)", PollingLocal), ("wait (now)", LocalBudget)):
        budget = cls(concurrency=1)
        seconds, gaps = _workload(lambda i, budget=budget: budget)
        stats = budget.stats()
        rows.append(_row("LocalBudget", how, stats, seconds, gaps))
        out[f"LocalBudget_{how.split()[0]}"] = _figures(stats, seconds, gaps)

    # RemoteBudget: a client per thread (as a worker process each), one BudgetServer
    _measure("RemoteBudget", lambda: BudgetServer(concurrency=1),
             lambda server, i: PollingRemote(server.address, server.token),
             lambda server, i: server.client(), rows, out)

    # RayBudget: the actor on a local Ray, its clients in this process's threads
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.path.join(ROOT, "src")}})
    try:
        _measure("RayBudget", lambda: RayBudget.create(concurrency=1),
                 lambda budget, i: PollingRay(budget.name, budget.namespace),
                 lambda budget, i: budget, rows, out)
    finally:
        ray.shutdown()

    print_table(f"Waiting for a lease: 1 lease, {THREADS} threads x {PER_THREAD} requests at once, {TOTAL} "
                f"requests holding it {int(HOLD * 1000)} ms", rows,
                header=("budget", "waiting", "granted", "lease asks per request", "release to grant ms: median",
                        "mean", "p90", "requests/s"))
    return out


if __name__ == "__main__":
    main()
