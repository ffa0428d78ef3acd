"""One judge budget for a real Ray cluster: two raylets on this machine (``ray.cluster_utils``,
every node on 127.0.0.1), a named actor holding the budget (``RayBudget``), a task on each
node asking its share of requests at a loopback chat server that records each arrival. The
limits hold for the sum of both nodes; a 429's Retry-After pauses both; a shared folder cache
makes a rerun on the cluster send nothing."""

import os
import pickle
import time

import pytest
import ray

import budget_worker
from budget_worker import answer
from chat_server import ChatServer
from textgen_metrics.judges import OpenAIJudge, cluster_judge
from textgen_metrics.judges.budget import BudgetError, RayBudget

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
RPM = 600
MB = 1024 * 1024


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every node on 127.0.0.1
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 * MB,
                                                      "include_dashboard": False})
    c.add_node(num_cpus=1, object_store_memory=80 * MB)
    ray.init(address=c.address, runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([SRC, HERE])}},
             logging_level="ERROR", log_to_driver=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@ray.remote(num_cpus=1)
def work(blob, rows, pad=0):
    """A share of rows on one node (num_cpus=1 each: the two tasks run on the two nodes)."""
    report = budget_worker.run(blob, rows, pad)
    report["node"] = ray.get_runtime_context().get_node_id()
    return report


class Recorder:
    def __init__(self, faults=None):
        self.times, self.faults = [], faults or {}

    def __call__(self, body, task):
        self.times.append(time.monotonic())
        return self.faults.get(len(self.times) - 1)


def judge_at(srv, **kw):
    kw.setdefault("backoff", 0.01)
    return OpenAIJudge("judge-model", base_url=srv.url, api_key="sk-ray-SECRET", **kw)


def on_two_nodes(judge, shares, check=True):
    blob = pickle.dumps(judge)
    reports = ray.get([work.options(scheduling_strategy="SPREAD").remote(blob, rows) for rows in shares])
    if check:  # (a rerun from the cache is over too soon for the second task to need the second node)
        assert len({r["node"] for r in reports}) == 2  # really two raylets
    return reports


def test_requests_per_minute_held_across_two_nodes(cluster):
    rec = Recorder()
    budget = RayBudget.for_judge(judge_at(ChatServerStub, requests_per_minute=RPM, concurrency=16))
    try:
        with ChatServer(answer, fault_fn=rec) as srv:
            shared = judge_at(srv, concurrency=4).share(budget=budget)
            reports = on_two_nodes(shared, [range(0, 25), range(25, 50)])
        stats = budget.stats()
    finally:
        budget.close()
    assert [r["ok"] for r in reports] == [25, 25] and stats["granted"] == 50
    assert stats["concurrency"] == 16 and stats["requests_per_minute"] == RPM
    times = sorted(rec.times)
    assert (len(times) - 1) / (times[-1] - times[0]) == pytest.approx(RPM / 60, rel=0.05)
    assert max(sum(1 for u in times if t <= u < t + 2.0) for t in times) <= 2 * RPM / 60 * 1.05 + 1


def test_retry_after_pauses_both_nodes(cluster):
    rec = Recorder(faults={11: ("429", 1.0)})
    budget = RayBudget.create(requests_per_minute=RPM)
    try:
        with ChatServer(answer, fault_fn=rec) as srv:
            reports = on_two_nodes(judge_at(srv, concurrency=4).share(budget=budget), [range(0, 15), range(15, 30)])
        assert budget.stats()["pauses"] == 1
    finally:
        budget.close()
    assert sum(r["ok"] for r in reports) == 30 and len(rec.times) == 31
    t429 = rec.times[11]
    assert [t - t429 for t in rec.times if t429 + 0.3 < t < t429 + 0.95] == []  # 6 would have come
    assert len([t for t in rec.times if t >= t429 + 0.95]) >= 15


def test_concurrency_held_across_two_nodes_and_the_shared_cache(cluster, tmp_path):
    rec = Recorder()
    budget = RayBudget.create(concurrency=3)
    try:
        with ChatServer(answer, latency=0.1, fault_fn=rec) as srv:
            shared = judge_at(srv, concurrency=4).share(budget=budget, cache=f"dir:{tmp_path}/shared")
            reports = on_two_nodes(shared, [range(0, 12), range(12, 24)])
            assert srv.max_in_flight == 3  # 8 without the budget
            assert budget.stats()["in_flight"] == 0
            first = srv.count
            rerun = on_two_nodes(shared, [range(12, 24), range(0, 12)], check=False)
            assert srv.count == first == 24  # the rerun on the cluster: every answer from the shared folder
    finally:
        budget.close()
    assert [r["ok"] for r in reports] == [12, 12] and [r["usage"]["cached"] for r in rerun] == [12, 12]


def test_a_budget_actor_that_is_gone_is_a_clear_error(cluster):
    budget = RayBudget.create(requests_per_minute=RPM)
    copy = pickle.loads(pickle.dumps(budget))
    budget.close()
    with pytest.raises(BudgetError, match="budget"):
        copy.stats()


def test_cluster_judge_on_ray(cluster):
    """The driver's one call on Ray: a named actor with the judge's limits, ended with the block."""
    rec = Recorder()
    with ChatServer(answer, fault_fn=rec) as srv:
        judge = judge_at(srv, concurrency=4, requests_per_minute=RPM)
        with cluster_judge(judge, on="ray") as worker_judge:
            budget = worker_judge.rate_budget
            assert isinstance(budget, RayBudget) and budget.limits()["requests_per_minute"] == RPM
            reports = on_two_nodes(worker_judge, [range(0, 10), range(10, 20)])
            assert budget.stats()["granted"] == 20
    assert [r["ok"] for r in reports] == [10, 10]
    with pytest.raises(ValueError):
        ray.get_actor(budget.name, namespace=budget.namespace)  # the actor ended with the block


def test_waiters_on_the_actor_get_a_released_lease_in_order(cluster):
    """Three event loops (threads) queue at the actor for its one lease: each ask waits there,
    and the lease goes to them in the order they came as each gives it back."""
    import asyncio
    import threading

    budget = RayBudget.create(concurrency=1)
    try:
        lease, _, _ = budget._call("admit", 0, None, 0)
        order, threads = [], []

        def waiter(i):
            async def run():
                got = await budget.acquire(0)
                order.append(i)
                await asyncio.sleep(0.02)
                await budget.release(got)

            asyncio.run(run())

        for i in range(3):
            threads.append(threading.Thread(target=waiter, args=(i,)))
            threads[-1].start()
            deadline = time.monotonic() + 30
            while budget.stats()["waiting"] < i + 1:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        time.sleep(0.3)
        assert budget.stats()["asks"] == 4  # the first lease's and one each: nobody polls
        budget._call("release", lease, 0, None)
        for t in threads:
            t.join(30)
        stats = budget.stats()
    finally:
        budget.close()
    assert order == [0, 1, 2] and stats["in_flight"] == 0 and stats["waiting"] == 0 and stats["asks"] <= 7


def test_renewals_and_releases_never_queue_behind_waiters(cluster, monkeypatch):
    """Two nodes with ten requests each in flight for two leases, the actor given only two
    threads for waiting asks: the other asks queue at Ray, yet every renewal (every 0.2 s) and
    release gets through at once (a lease of 0.6 s would run out otherwise), and nothing stalls."""
    from textgen_metrics.judges import budget as budget_module

    monkeypatch.setattr(budget_module, "_RAY_WAITERS", 2)
    budget = RayBudget.create(concurrency=2, lease_seconds=0.6)
    try:
        with ChatServer(answer, latency=0.4) as srv:
            shared = judge_at(srv, concurrency=10).share(budget=budget)
            reports = on_two_nodes(shared, [range(0, 12), range(12, 24)])
            assert srv.max_in_flight == 2
        stats = budget.stats()
    finally:
        budget.close()
    assert [r["ok"] for r in reports] == [12, 12]
    assert stats["expired"] == 0 and stats["granted"] == 24 and stats["in_flight"] == 0
    assert stats["asks"] <= 3 * 24  # polling every 5 to 50 ms for ~5 s: hundreds


class ChatServerStub:
    """A URL for a judge that only gives its limits (it sends nothing)."""

    url = "http://127.0.0.1:9/v1"


def test_a_scorer_pool_of_four_actors_holds_one_budget(cluster):
    """The ``Scorer`` users put in their own ``map_batches``, with four actors (two a node): the
    four send at the judge's ``requests_per_minute`` together, not each at it (each actor held a
    budget of its own: 34.8 requests a second against a limit of 10). Every actor finds the one
    budget actor by the judge's settings; the server's arrivals hold the limit in every window."""
    from scaleout_judge import respond, rows
    from textgen_metrics.ray import Scorer

    rec = Recorder()
    data = rows(36, seed=3)  # faithfulness: two requests a row, 72 at 10 a second
    with ChatServer(respond, fault_fn=rec) as srv:
        judge = judge_at(srv, requests_per_minute=RPM, concurrency=8)
        out = ray.data.from_items(data, override_num_blocks=12).map_batches(
            Scorer, fn_constructor_kwargs={"metrics": ["faithfulness"], "judge": judge},
            concurrency=4, num_cpus=0.5, batch_size=3, batch_format="pandas").take_all()
    assert sorted(r["id"] for r in out) == list(range(len(data)))
    times = sorted(rec.times)
    assert len(times) == 2 * len(data)
    assert max(sum(1 for u in times if t <= u < t + 2.0) for t in times) <= 2 * RPM / 60 + 1


def test_the_budget_actor_lives_on_the_head_node_whoever_makes_it(cluster):
    """A budget made by a task on the worker node, as a ``Scorer`` actor makes its pool's, lives
    on the head node, where no worker node's loss can take it (Ray placed an actor near its
    maker: the lost node took the budget, and the run ended); detached, it outlives the task."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    head = cluster.head_node.node_id
    worker = next(iter(cluster.worker_nodes)).node_id

    @ray.remote(num_cpus=0)
    def make(name):
        RayBudget.create(requests_per_minute=RPM, name=name, detached=True)
        return ray.get_runtime_context().get_node_id()

    maker = ray.get(make.options(scheduling_strategy=NodeAffinitySchedulingStrategy(worker, soft=False))
                    .remote("budget-made-on-a-worker"))
    budget = RayBudget("budget-made-on-a-worker", namespace=ray.get_runtime_context().namespace)
    try:
        assert budget.limits()["requests_per_minute"] == RPM  # alive after the task that made it
        nodes = {a["Address"]["NodeID"] for a in ray._private.state.actors().values()
                 if a["Name"] == budget.name and a["State"] == "ALIVE"}
        assert maker == worker and nodes == {head}
    finally:
        budget.close()


def test_a_detached_budget_ends_when_idle_and_is_made_again_when_needed(cluster, monkeypatch):
    """A budget no driver ends (a ``Scorer`` pool's) ends itself once unused for
    ``IDLE_SECONDS`` with no lease out, and a user that finds it gone makes it again, with its
    name and limits."""
    from textgen_metrics.judges import budget as budget_module

    monkeypatch.setattr(budget_module, "IDLE_SECONDS", 1.0)
    budget = RayBudget.create(requests_per_minute=RPM, name="budget-idle", detached=True)
    copy = pickle.loads(pickle.dumps(budget))
    deadline = time.monotonic() + 30
    while "budget-idle" in ray.util.list_named_actors() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "budget-idle" not in ray.util.list_named_actors()  # ended itself
    try:
        assert copy.limits()["requests_per_minute"] == RPM  # made again by the copy that needed it
        assert "budget-idle" in ray.util.list_named_actors()
    finally:
        copy.close()
