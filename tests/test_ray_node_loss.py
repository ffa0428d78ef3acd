"""A worker node lost mid-run on a real Ray cluster on loopback (``ray.cluster_utils``: a head and
a worker node, one CPU each, so that the run's two workers are on the two nodes): the node is
removed (its raylet and every process on it killed) while its requests are in flight; the head
node runs what is left (a new node joins after the test, for the next one). The run goes on:
the judge's budget lives on the head node (no worker node's loss can take it, nor end the run
as it did when it lived on the lost node), every row is scored once, the result equals the
library's, and a request the shared folder cache holds a validated answer to is not sent again
(only those in flight on the lost node, at most the budget's ``concurrency``, are)."""

import json
import os
import threading
import time
from pathlib import Path

import pytest

import textgen_metrics
from chat_server import ChatServer
from scaleout_judge import respond, rows

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
MB = 1024 * 1024
CONCURRENCY = 2  # the cluster's requests in flight: at most this many are lost with a node


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every node on 127.0.0.1
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE), os.environ.get("PYTHONPATH", "")])
    import ray
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 100 * MB,
                                                      "include_dashboard": False})
    c.add_node(num_cpus=1, object_store_memory=100 * MB)
    ray.init(address=c.address, log_to_driver=False, logging_level="ERROR")
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture
def server():
    with ChatServer(respond, latency=0.05) as srv:
        yield srv


def lose_a_worker_node(cluster, server, after, done):
    """A thread that removes the worker node once the server has seen ``after`` requests (at
    most 60 s later); the test adds a new node afterwards, in the main thread (Ray starts a node
    there only)."""
    def remove():
        deadline = time.monotonic() + 60
        while server.count < after and not done.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
        lost = next(iter(cluster.worker_nodes))
        budgets.append(budget_actors_nodes())  # where the run's budget is when the node goes
        cluster.remove_node(lost, allow_graceful=False)
        removed.append(lost)

    removed, budgets = [], []
    thread = threading.Thread(target=remove, daemon=True)
    thread.start()
    return thread, removed, budgets


def replace_the_lost_node(cluster, thread, done):
    """The end of a test: the thread done, a worker node again for the next test."""
    done.set()
    thread.join(120)
    if not cluster.worker_nodes:
        cluster.add_node(num_cpus=1, object_store_memory=100 * MB)
        cluster.wait_for_nodes()


def sent_twice(bodies):
    """How many requests the server got more than once (the same body)."""
    seen = [json.dumps(b, sort_keys=True) for b in bodies]
    return len(seen) - len(set(seen))


def judge_at(server, tmp_path):
    from textgen_metrics.judges import OpenAIJudge

    return OpenAIJudge("judge-1", base_url=server.url, api_key="sk-node-loss", concurrency=CONCURRENCY,
                       requests_per_minute=3000, cache=f"dir:{tmp_path / 'cache'}")


def expected(data):
    from scaleout_judge import KillOnce

    return textgen_metrics.faithfulness(predictions=[r["prediction"] for r in data],
                                        contexts=[r["contexts"] for r in data], judge=KillOnce(),
                                        use_aggregator=False)["faithfulness"]


def budget_actors_nodes():
    """The nodes of the cluster's living budget actors."""
    import ray

    return {a["Address"]["NodeID"] for a in ray._private.state.actors().values()
            if a["ActorClassName"].endswith("_BudgetActor") and a["State"] == "ALIVE"}


def test_evaluate_goes_on_when_a_worker_node_is_lost(cluster, server, tmp_path):
    import ray

    from textgen_metrics import ray as tgm_ray

    data = rows(48, seed=11)
    ds = ray.data.from_items(data, override_num_blocks=8).materialize()
    done = threading.Event()
    thread, removed, budgets = lose_a_worker_node(cluster, server, after=20, done=done)
    try:
        got = tgm_ray.evaluate(ds, ["faithfulness"], judge=judge_at(server, tmp_path), concurrency=2, batch_size=6,
                               options={"faithfulness": {"use_aggregator": False}})["faithfulness"]
    finally:
        replace_the_lost_node(cluster, thread, done)
    assert removed, "the worker node was not removed"
    assert budgets == [{cluster.head_node.node_id}]  # the driver's budget actor, on the head node
    assert got["faithfulness"] == expected(data)
    assert server.count >= 2 * len(data)  # every example's two requests
    assert sent_twice(server.bodies) <= CONCURRENCY  # only what was in flight on the lost node
    assert server.count - sent_twice(server.bodies) == 2 * len(data)


def test_a_scorer_pool_goes_on_when_the_node_that_made_its_budget_is_lost(cluster, server, tmp_path):
    """``map_batches(Scorer, concurrency=2)``: the actors spread over the two nodes (half a CPU
    each), each finding the one budget actor (the first made it, detached, on the head node);
    the worker node is lost, with its Scorer actor, which Ray Data starts again on the head
    node; the budget is there still."""
    import ray

    from textgen_metrics.ray import Scorer

    head = cluster.head_node.node_id
    data = rows(48, seed=12)
    ds = ray.data.from_items(data, override_num_blocks=8)
    done = threading.Event()
    thread, removed, _ = lose_a_worker_node(cluster, server, after=20, done=done)
    try:
        out = ds.map_batches(Scorer, fn_constructor_kwargs={"metrics": ["faithfulness"],
                                                            "judge": judge_at(server, tmp_path)},
                             concurrency=2, num_cpus=0.5, batch_size=6, batch_format="pandas").take_all()
        budget_nodes = budget_actors_nodes()
    finally:
        replace_the_lost_node(cluster, thread, done)
    assert removed, "the worker node was not removed"
    assert budget_nodes == {head}  # one budget for the pool, where no worker node's loss takes it
    by_id = {r["id"]: r["faithfulness.faithfulness"] for r in out}
    assert len(out) == len(data) and sorted(by_id) == list(range(len(data)))  # every row once
    assert [by_id[i] for i in range(len(data))] == expected(data)
    assert sent_twice(server.bodies) <= CONCURRENCY
