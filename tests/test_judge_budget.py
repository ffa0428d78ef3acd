"""Rate limits on judges (``judges/budget.py``): one budget of requests per minute, tokens per
minute and requests in flight, held for the sum of several worker processes that share it
(``BudgetServer`` / ``RemoteBudget``), with a 429's Retry-After pausing every worker. Measured
where it counts: at a loopback chat server that records when each request arrives.

The adherence asserts are about counts per window, with the documented tolerance (5%)."""

import asyncio
import json
import multiprocessing
import pickle
import socket
import time

import pytest

import budget_worker
from budget_worker import answer
from chat_server import AnthropicServer, AzureServer, ChatServer, GeminiServer, _tokens
from textgen_metrics.cli import build_parser, build_run
from textgen_metrics.judges import (
    AnthropicJudge,
    AzureOpenAIJudge,
    CallableJudge,
    GeminiJudge,
    JudgeFatalError,
    OpenAIJudge,
    cluster_judge,
)
from textgen_metrics.judges.budget import _OP_LINE, _TOKEN_LINE, BudgetServer, BudgetState, LocalBudget, RemoteBudget

SECRET = "sk-budget-SECRET-77"
RPM = 600  # 10 requests a second: a few seconds hold enough requests to measure


class Recorder:
    """A chat server's fault function that records each request's arrival (and can inject faults)."""

    def __init__(self, faults=None):
        self.times = []
        self.bodies = []
        self.faults = faults or {}  # the n-th request (from 0) -> a fault

    def __call__(self, body, task):
        n = len(self.times)
        self.times.append(time.monotonic())
        self.bodies.append(body)
        return self.faults.get(n)


def serve(recorder, latency=0.0):
    return ChatServer(answer, latency=latency, fault_fn=recorder)


def judge_at(srv, **kw):
    kw.setdefault("backoff", 0.01)
    return OpenAIJudge("judge-model", base_url=srv.url, api_key=SECRET, **kw)


def in_processes(judge, shares, pad=0):
    """Run the pickled ``judge`` in one spawned process per share of rows; their reports."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    blob = pickle.dumps(judge)
    procs = [ctx.Process(target=budget_worker.run_to_queue, args=(blob, rows, queue, pad)) for rows in shares]
    for p in procs:
        p.start()
    reports = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
    return reports


def rate(times):
    """Requests per second between the first arrival and the last."""
    return (len(times) - 1) / (times[-1] - times[0])


def most_in_window(times, seconds):
    return max(sum(1 for u in times if t <= u < t + seconds) for t in times)


# -- the bookkeeping alone --------------------------------------------------------------------------
def test_state_spaces_requests_and_never_bursts_after_idle():
    state = BudgetState(requests_per_minute=60)  # one a second
    lease, wait = state.acquire(0, now=100.0)
    assert lease is not None and wait == 0.0
    lease, wait = state.acquire(0, now=100.0)  # the next slot is a second away: not booked yet
    assert lease is None and wait > 0.9
    lease, wait = state.acquire(0, now=100.98)  # within the horizon: booked, told to wait
    assert lease is not None and wait == pytest.approx(0.02)
    # an hour idle gives no credit: the next two are still a second apart
    first, wait = state.acquire(0, now=4000.0)
    assert first is not None and wait == 0.0
    second, wait = state.acquire(0, now=4000.0)
    assert second is None and wait > 0.9


def test_state_tokens_are_corrected_by_what_was_used():
    state = BudgetState(tokens_per_minute=6000)  # 100 tokens a second
    lease, _ = state.acquire(500, now=0.0)  # estimated 500 tokens: 5 s of budget
    assert state.acquire(10, now=1.0)[0] is None
    state.release(lease, 500, 100, now=1.0)  # it used 100: 1 s of budget, which has passed
    assert state.acquire(10, now=1.0)[0] is not None


def test_state_leases_of_a_dead_holder_run_out():
    state = BudgetState(concurrency=2, lease_seconds=5)
    a, _ = state.acquire(0, now=0.0)
    b, _ = state.acquire(0, now=0.0)
    assert state.acquire(0, now=1.0)[0] is None  # both taken
    state.renew([a], now=4.0)  # a's holder is alive; b's died
    assert state.acquire(0, now=6.0)[0] is not None  # b ran out
    assert state.acquire(0, now=6.0)[0] is None  # a still held
    assert state.stats(now=6.0)["expired"] == 1


def test_state_pause_holds_back_every_booking():
    state = BudgetState(requests_per_minute=6000)
    state.pause(2.0, now=10.0)
    lease, wait = state.acquire(0, now=10.5)
    assert lease is None and wait == pytest.approx(1.5 - state.horizon / 2)


def test_state_queue_hands_a_freed_lease_to_the_oldest_waiter():
    """Requests that find every lease taken queue for one: ``wake`` names the oldest ticket when
    a lease comes back, a newcomer and a younger ticket do not jump the queue."""
    state = BudgetState(concurrency=1, lease_seconds=None)
    woken = []
    state.wake = woken.append
    held, _, _ = state.admit(0, None, None, now=0.0)
    assert held is not None
    lease, wait, a = state.admit(0, None, None, now=0.0)
    assert lease is None and wait == 0.0 and a is not None
    _, _, b = state.admit(0, None, None, now=0.0)
    assert b is not None and list(state.queue) == [a, b] and woken == []
    state.release(held, 0, None, now=1.0)
    assert woken == [[a]]  # the oldest only
    assert state.acquire(0, now=1.0) == (None, 0.0)  # a newcomer waits behind the queue
    assert state.admit(0, b, None, now=1.0)[0] is None  # and so does the younger ticket
    lease, _, ticket = state.admit(0, a, None, now=1.0)
    assert lease is not None and ticket is None and list(state.queue) == [b]
    state.release(lease, 0, None, now=2.0)
    assert woken[-1] == [b]
    state.forget(b, now=2.0)
    assert state.queue == {} and state.stats(now=2.0)["queued"] == 2


def test_state_a_dead_holders_lease_running_out_wakes_the_queue():
    state = BudgetState(concurrency=1, lease_seconds=5)
    woken = []
    state.wake = woken.append
    state.admit(0, None, None, now=0.0)  # its holder dies: never renewed
    _, _, ticket = state.admit(0, None, 10.0, now=1.0)
    assert state.next_deadline(now=1.0) == pytest.approx(4.0)  # when the waiter must look again
    state.stats(now=5.5)  # any call after the lease ran out
    assert woken == [[ticket]] and state.expired == 1
    assert state.admit(0, ticket, 10.0, now=5.5)[0] is not None


def test_state_a_ticket_not_asked_again_leaves_the_queue():
    """A waiter gone with its worker stops asking: its ticket runs out after ``hold`` and the
    one behind it moves up."""
    state = BudgetState(concurrency=1, lease_seconds=None)
    woken = []
    state.wake = woken.append
    lease, _, _ = state.admit(0, None, None, now=0.0)
    _, _, gone = state.admit(0, None, 2.0, now=0.0)
    _, _, alive = state.admit(0, None, 10.0, now=0.0)
    state.release(lease, 0, None, now=1.0)
    assert woken == [[gone]]
    assert state.admit(0, alive, 10.0, now=1.5)[0] is None  # gone's turn still
    lease, _, _ = state.admit(0, alive, 10.0, now=2.5)  # gone's ticket ran out at 2.0
    assert lease is not None and state.queue == {}


def test_state_a_queued_ticket_keeps_its_place_through_a_rate_wait():
    state = BudgetState(requests_per_minute=60, concurrency=1, lease_seconds=None)
    first, _, _ = state.admit(0, None, None, now=0.0)
    _, _, ticket = state.admit(0, None, None, now=0.0)
    state.release(first, 0, None, now=0.1)
    lease, wait, same = state.admit(0, ticket, None, now=0.1)  # its turn, but its slot is 0.9 s away
    assert lease is None and wait > 0.8 and same == ticket
    assert state.admit(0, None, None, now=1.0)[0] is None  # a newcomer at the slot: still behind it
    assert state.admit(0, ticket, None, now=1.0)[0] is not None


# -- one process ------------------------------------------------------------------------------------
def test_judge_without_limits_has_no_budget():
    with serve(Recorder()) as srv:
        j = judge_at(srv)
        assert j.rate_budget is None and j.limits() == {"requests_per_minute": None, "tokens_per_minute": None,
                                                   "concurrency": 8}


@pytest.mark.parametrize("bad", [0, -5, "fast", True, float("inf")])
def test_bad_limits_name_the_argument(bad):
    with pytest.raises(ValueError, match="requests_per_minute"):
        CallableJudge(lambda m: "{}", requests_per_minute=bad)
    with pytest.raises(ValueError, match="tokens_per_minute"):
        CallableJudge(lambda m: "{}", tokens_per_minute=bad)


def test_requests_per_minute_held_in_one_process():
    rec = Recorder()
    with serve(rec) as srv:
        j = judge_at(srv, concurrency=8, requests_per_minute=RPM)
        results = j.judge(budget_worker.requests(range(30)))
    assert all(r.ok for r in results) and len(rec.times) == 30
    assert rate(rec.times) == pytest.approx(RPM / 60, rel=0.05)


def test_judge_option_strings_reach_the_budget():
    """``--judge-option requests_per_minute=600`` on the command line reaches the judge's budget."""
    with serve(Recorder()) as srv:
        args = build_parser().parse_args([
            "score", "data.jsonl", "--metrics", "bias", "--judge", "openai:judge-model", "--judge-url", srv.url,
            "--judge-option", "requests_per_minute=600", "--judge-option", "tokens_per_minute=90000.5",
            "--judge-option", "concurrency=4", "--judge-option", f"api_key={SECRET}"])
        j = build_run(args, resolve=True).judge
    assert j.limits() == {"requests_per_minute": 600.0, "tokens_per_minute": 90000.5, "concurrency": 4}
    assert isinstance(j.rate_budget, LocalBudget)


def test_retries_take_budget_slots_too():
    """A request sent again after a 500 is a request: it waits for a slot of its own."""
    rec = Recorder(faults={0: "500", 1: "500"})
    with serve(rec) as srv:
        j = judge_at(srv, concurrency=1, requests_per_minute=RPM)
        start = time.monotonic()
        [res] = j.judge(budget_worker.requests([0]))
    assert res.ok and res.retries == 2 and len(rec.times) == 3
    assert j.rate_budget.stats()["granted"] == 3
    assert rec.times[2] - start >= 2 * 60 / RPM  # the third slot is two intervals after the first


def test_waiting_for_the_budget_is_not_a_silent_server():
    """``first_answer_timeout`` counts from the first request admitted: a budget paused by other
    workers' 429 for longer than it does not make a live server look dead."""
    rec = Recorder()
    with serve(rec) as srv:
        budget = LocalBudget(requests_per_minute=RPM)
        j = judge_at(srv, first_answer_timeout=0.4).share(budget=budget)

        async def no_probe(ctx):  # only the requests' own answers tell (as for a backend without a probe)
            return False

        j._probe = no_probe
        budget.pause(1.0)
        start = time.monotonic()
        results = j.judge(budget_worker.requests(range(3)))
    assert all(r.ok for r in results) and rec.times[0] - start >= 0.95


@pytest.mark.parametrize("server_class, make", [
    (AzureServer, lambda url: AzureOpenAIJudge("judge-deployment", endpoint=url, api_key=SECRET, backoff=0.01)),
    (AnthropicServer, lambda url: AnthropicJudge("claude-x", base_url=url, api_key=SECRET, backoff=0.01)),
    (GeminiServer, lambda url: GeminiJudge("gemini-x", base_url=url, api_key=SECRET, backoff=0.01)),
], ids=["azure", "anthropic", "gemini"])
def test_each_wire_formats_retry_after_pauses_the_budget(server_class, make):
    """Azure's retry-after-ms, Anthropic's retry-after, Gemini's RetryInfo in the body: each
    pauses the whole budget (here two judges of one process sharing it)."""
    rec = Recorder(faults={4: ("429", 0.8)})
    with server_class(answer, fault_fn=rec) as srv:
        budget = LocalBudget(requests_per_minute=RPM)
        a, b = make(srv.url).share(budget=budget), make(srv.url).share(budget=budget)

        async def both():
            return await asyncio.gather(a.ajudge(budget_worker.requests(range(0, 8))),
                                        b.ajudge(budget_worker.requests(range(8, 16))))

        results = asyncio.run(both())
    assert all(r.ok for rs in results for r in rs) and budget.stats()["pauses"] == 1
    t429 = rec.times[4]
    assert [t for t in rec.times if t429 + 0.15 < t < t429 + 0.75] == []


def test_a_long_request_keeps_its_lease():
    """A request that runs longer than ``lease_seconds`` keeps its lease (its holder renews it):
    the concurrency limit holds however slow the server is."""
    with serve(Recorder(), latency=0.8) as srv, BudgetServer(concurrency=1, lease_seconds=0.3) as budget:
        j = judge_at(srv, concurrency=2).share(budget=budget.client())
        results = j.judge(budget_worker.requests(range(2)))
        assert all(r.ok for r in results) and srv.max_in_flight == 1
        assert budget.stats()["expired"] == 0


# -- waiting for a lease: woken when one comes back, oldest first, no polling ------------------------
def in_threads(n, make):
    """Run ``make(i)`` (a coroutine) in each of ``n`` threads, each with an event loop of its own."""
    import threading

    errors = []

    def run(i):
        try:
            asyncio.run(make(i))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    return threads, errors


def wait_for(predicate, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_local_waiters_are_woken_in_order_without_polling():
    """Event loops in three threads wait for the one lease: while it is held each has asked once
    (a poll every 5 to 50 ms would have asked about ten times each in 0.4 s); each is woken when
    the one before it gives the lease back, in the order they came."""
    budget = LocalBudget(concurrency=1)
    order = []

    async def first():
        lease = await budget.acquire(0)
        wait_for(lambda: budget.stats()["waiting"] == 3)
        await asyncio.sleep(0.4)
        assert budget.stats()["asks"] == 4  # one each: nobody asked again while waiting
        await budget.release(lease)

    async def waiter(i):
        lease = await budget.acquire(0)
        order.append(i)
        await asyncio.sleep(0.01)
        await budget.release(lease)

    threads, errs = in_threads(1, lambda i: first())
    errors = [errs]
    wait_for(lambda: budget.stats()["in_flight"] == 1)
    for i in range(3):  # they queue one after the other
        more, errs = in_threads(1, lambda _, i=i: waiter(i))
        threads, errors = threads + more, errors + [errs]
        wait_for(lambda i=i: budget.stats()["waiting"] == i + 1)
    for t in threads:
        t.join(30)
    assert errors == [[]] * 4 and order == [0, 1, 2]
    stats = budget.stats()
    assert stats["granted"] == 4 and stats["asks"] == 7 and stats["in_flight"] == 0 and stats["waiting"] == 0


def hold_leases(budget_of, threads, requests, hold):
    """``threads`` threads, each with an event loop sending ``requests`` requests at once through
    ``budget_of(i)`` (its budget or a client of it), each holding its lease ``hold(rng)``
    seconds: (errors, requests done, the most leases held at once)."""
    import random
    import threading

    lock = threading.Lock()
    in_flight, peak, done = [0], [0], [0]

    async def worker(i):
        rng, budget = random.Random(i), budget_of(i)

        async def one():
            lease = await budget.acquire(1)
            with lock:
                in_flight[0] += 1
                peak[0] = max(peak[0], in_flight[0])
            await asyncio.sleep(hold(rng))
            with lock:
                in_flight[0] -= 1
                done[0] += 1
            await budget.release(lease)

        await asyncio.gather(*(one() for _ in range(requests)))

    started, errors = in_threads(threads, worker)
    for t in started:
        t.join(120)
    return errors, done[0], peak[0]


def test_local_concurrency_never_exceeded_by_many_loops():
    budget = LocalBudget(concurrency=3)
    errors, done, peak = hold_leases(lambda i: budget, 4, 25, lambda rng: rng.uniform(0.0, 0.01))
    stats = budget.stats()
    assert errors == [] and done == 100 and peak == 3
    assert stats["in_flight"] == 0 and stats["waiting"] == 0 and stats["granted"] == 100
    assert stats["asks"] <= 2 * 100  # a request asks at most twice: once to queue, once when woken


def test_a_cancelled_waiter_leaves_the_queue():
    budget = LocalBudget(concurrency=1)

    async def main():
        lease = await budget.acquire(0)
        gone = asyncio.ensure_future(budget.acquire(0))
        second = asyncio.ensure_future(budget.acquire(0))
        await asyncio.sleep(0.05)
        assert budget.stats()["waiting"] == 2
        gone.cancel()
        await asyncio.sleep(0.01)
        assert budget.stats()["waiting"] == 1
        await budget.release(lease)
        got = await asyncio.wait_for(second, 5)  # the lease goes to the next one, not to the cancelled one
        await budget.release(got)

    asyncio.run(main())
    assert budget.stats()["in_flight"] == 0 and budget.stats()["waiting"] == 0


def test_remote_waiter_gets_a_released_lease_without_polling():
    """A client of a budget server waiting for the one lease asks once (its ask waits at the
    server) and has the lease as soon as the holder, another client, gives it back."""
    with BudgetServer(concurrency=1) as server:
        holder, waiter = server.client(), server.client()
        events = []

        async def hold():
            lease = await holder.acquire(0)
            events.append("held")
            wait_for(lambda: server.stats()["waiting"] == 1)
            await asyncio.sleep(0.5)  # under MAX_WAIT: one ask covers the whole wait
            events.append("release")
            await holder.release(lease)

        async def wait():
            wait_for(lambda: "held" in events)
            lease = await waiter.acquire(0)
            events.append("granted")
            await waiter.release(lease)

        threads, errors = in_threads(1, lambda i: hold())
        more, errs = in_threads(1, lambda i: wait())
        for t in threads + more:
            t.join(30)
        stats = server.stats()
    assert errors == [] and errs == [] and events == ["held", "release", "granted"]
    assert stats["asks"] <= 3 and stats["granted"] == 2 and stats["in_flight"] == 0  # a poll: dozens


def test_remote_waiter_is_woken_when_a_dead_holders_lease_runs_out():
    """A lease whose holder died (never renewed, never given back) runs out after
    ``lease_seconds``; the request waiting at the server gets it then, without asking again."""
    with BudgetServer(concurrency=1, lease_seconds=1.0) as server:
        dead = server.client()
        lease, _, _ = dead._call("admit", 0, None, 0)  # taken, and never renewed
        assert lease is not None
        waiter = server.client()
        start = time.monotonic()

        async def wait():
            got = await waiter.acquire(0)
            await waiter.release(got)

        asyncio.run(wait())
        waited = time.monotonic() - start
        stats = server.stats()
    assert stats["expired"] == 1 and stats["granted"] == 2 and stats["asks"] <= 3  # the dead one's and one
    assert 0.9 < waited < 10


def test_remote_waiters_are_served_first_come_first_served():
    """Four clients (threads) queue at the server for the one lease, one after the other: they
    get it in that order."""
    with BudgetServer(concurrency=1) as server:
        first = server.client()
        lease, _, _ = first._call("admit", 0, None, 0)
        order = []

        async def waiter(i):
            client = server.client()
            got = await client.acquire(0)
            order.append(i)
            await asyncio.sleep(0.02)
            await client.release(got)

        threads, errors = [], []
        for i in range(4):
            more, errs = in_threads(1, lambda _, i=i: waiter(i))
            threads, errors = threads + more, errors + [errs]
            wait_for(lambda i=i: server.stats()["waiting"] == i + 1)
        first._call("release", lease, 0, None)
        for t in threads:
            t.join(30)
        stats = server.stats()
    assert errors == [[]] * 4 and order == [0, 1, 2, 3] and stats["in_flight"] == 0 and stats["waiting"] == 0


def test_remote_concurrency_held_with_many_waiting_in_many_threads():
    """Four threads, 20 requests each in flight at once, for 3 leases at one server: never more
    than 3 held, every request done, and few asks per request (each waits at the server)."""
    with BudgetServer(concurrency=3) as server:
        errors, done, peak = hold_leases(lambda i: server.client(), 4, 20, lambda rng: 0.005)
        stats = server.stats()
    assert errors == [] and done == 80 and peak == 3
    assert stats["in_flight"] == 0 and stats["waiting"] == 0 and stats["granted"] == 80
    assert stats["asks"] <= 3 * 80


def test_a_cancelled_remote_waiter_gives_back_what_it_gets():
    """A request given up while its ask waits at the server: the lease the server hands it
    afterwards comes back at once (not after ``lease_seconds``)."""
    with BudgetServer(concurrency=1, lease_seconds=30) as server:
        client = server.client()

        async def main():
            lease = await client.acquire(0)
            gone = asyncio.ensure_future(client.acquire(0))
            await asyncio.sleep(0.2)
            gone.cancel()
            await client.release(lease)  # the server hands it to the waiting ask, whose answer comes back
            for _ in range(300):
                stats = server.stats()
                if stats["in_flight"] == 0 and stats["granted"] == 2:
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(server.stats())

        asyncio.run(main())
        assert server.stats()["expired"] == 0


def test_share_wires_a_copy_and_keeps_the_rest(tmp_path):
    with serve(Recorder()) as srv:
        judge = judge_at(srv, requests_per_minute=RPM, cache=str(tmp_path / "c.sqlite"), max_tokens=16)
        server_budget = LocalBudget(requests_per_minute=60)
        copy = judge.share(budget=server_budget)
        assert copy.rate_budget is server_budget and copy.cache is judge.cache and copy.max_tokens == 16
        assert judge.rate_budget is not server_budget  # the original is untouched
        shared = judge.share(cache=f"dir:{tmp_path}/shared")
        assert shared.rate_budget is judge.rate_budget and type(shared.cache).__name__ == "DirectoryCache"
        assert judge.share(budget=None).rate_budget is None
        copy.judge(budget_worker.requests([0]))
        assert copy.usage.requests == 1 and judge.usage.requests == 0  # each counts its own
        with pytest.raises(TypeError, match="budget"):
            judge.share(budget=600)


# -- several processes, one budget ------------------------------------------------------------------
def test_requests_per_minute_held_for_the_sum_of_processes():
    rec = Recorder()
    with serve(rec) as srv, BudgetServer(requests_per_minute=RPM) as budget:
        shared = judge_at(srv, concurrency=4).share(budget=budget.client())
        reports = in_processes(shared, [range(0, 15), range(15, 30), range(30, 45)])
        assert budget.stats()["granted"] == 45
    assert [r["ok"] for r in reports] == [15, 15, 15] and len({r["pid"] for r in reports}) == 3
    assert len(rec.times) == 45
    rec.times.sort()
    assert rate(rec.times) == pytest.approx(RPM / 60, rel=0.05)
    assert most_in_window(rec.times, 2.0) <= 2 * RPM / 60 * 1.05 + 1


def test_each_process_alone_would_send_its_own_rate():
    """The control of the test above: the same judge, its limit per process (a LocalBudget sent
    to each), lets three processes send three times the rate."""
    rec = Recorder()
    with serve(rec) as srv:
        reports = in_processes(judge_at(srv, concurrency=4, requests_per_minute=RPM),
                               [range(0, 15), range(15, 30), range(30, 45)])
    assert [r["ok"] for r in reports] == [15, 15, 15]
    rec.times.sort()
    assert rate(rec.times) > 2 * RPM / 60


def test_retry_after_pauses_every_process():
    """The 12th request gets a 429 saying to wait 1 s: no process sends anything meanwhile."""
    rec = Recorder(faults={11: ("429", 1.0)})
    with serve(rec) as srv, BudgetServer(requests_per_minute=RPM) as budget:
        shared = judge_at(srv, concurrency=4).share(budget=budget.client())
        reports = in_processes(shared, [range(0, 12), range(12, 24), range(24, 36)])
        assert budget.stats()["pauses"] == 1
    assert sum(r["ok"] for r in reports) == 36 and len(rec.times) == 37
    t429 = rec.times[11]
    during = [t - t429 for t in rec.times if t429 + 0.3 < t < t429 + 0.95]
    assert during == []  # at 10 a second, 7 would have come without the pause
    resumed = [t - t429 for t in rec.times if t >= t429 + 0.95]
    assert len(resumed) >= 20 and resumed[0] < 1.3  # then on at the budget's pace


def test_tokens_per_minute_held_for_the_sum_of_processes():
    tpm = 12000  # 200 tokens a second; each request is about 29 tokens
    rec = Recorder()
    with serve(rec) as srv, BudgetServer(tokens_per_minute=tpm) as budget:
        shared = judge_at(srv, concurrency=4, max_tokens=8).share(budget=budget.client())
        reports = in_processes(shared, [range(0, 20), range(20, 40)], pad=40)
    assert sum(r["ok"] for r in reports) == 40
    order = sorted(range(len(rec.times)), key=lambda i: rec.times[i])
    times = [rec.times[i] for i in order]
    reply = _tokens(answer(None, budget_worker.TASK))
    used = [_tokens(" ".join(m["content"] for m in rec.bodies[i]["messages"])) + reply for i in order]
    # the tokens of every request but the last were paid for by the time the last one started
    spent = sum(used[:-1]) / (times[-1] - times[0])
    assert spent == pytest.approx(tpm / 60, rel=0.05)


def test_concurrency_held_for_the_sum_of_processes():
    rec = Recorder()
    with serve(rec, latency=0.15) as srv, BudgetServer(concurrency=3) as budget:
        shared = judge_at(srv, concurrency=4).share(budget=budget.client())
        reports = in_processes(shared, [range(0, 12), range(12, 24), range(24, 36)])
        assert srv.max_in_flight == 3  # 12 without the budget
        assert budget.stats()["in_flight"] == 0  # every lease back
    assert sum(r["ok"] for r in reports) == 36


def test_a_dead_workers_leases_come_back():
    """A process killed while its requests hang at the server holds leases no more than
    ``lease_seconds``: the next worker gets them."""
    ctx = multiprocessing.get_context("spawn")
    rec = Recorder(faults={0: ("hang", 30), 1: ("hang", 30)})
    with serve(rec) as srv, BudgetServer(concurrency=2, lease_seconds=1.0) as budget:
        blob = pickle.dumps(judge_at(srv, concurrency=2, timeout=60).share(budget=budget.client()))
        victim = ctx.Process(target=budget_worker.run, args=(blob, range(0, 4)))
        victim.start()
        deadline = time.monotonic() + 60
        while budget.stats()["in_flight"] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert budget.stats()["in_flight"] == 2
        victim.kill()
        victim.join()
        report = budget_worker.run(blob, range(10, 14))
        assert report["ok"] == 4
        assert budget.stats()["expired"] == 2


def test_a_budget_server_that_is_gone_stops_the_run():
    """The driver's budget server gone: no request can be admitted, one JudgeFatalError."""
    with serve(Recorder()) as srv:
        budget = BudgetServer(requests_per_minute=RPM)
        j = judge_at(srv).share(budget=budget.client())
        budget.close()
        with pytest.raises(JudgeFatalError, match="cannot reach the budget server"):
            j.judge(budget_worker.requests(range(3)))
        assert srv.count == 0


def test_cluster_judge_on_a_budget_server(tmp_path):
    """The driver's one call: the workers' judge shares a budget server holding the judge's
    limits, and the folder cache; the server ends with the block."""
    rec = Recorder()
    with serve(rec, latency=0.1) as srv:
        judge = judge_at(srv, concurrency=2, requests_per_minute=RPM)
        with cluster_judge(judge, on="server", cache=f"dir:{tmp_path}") as worker_judge:
            assert isinstance(worker_judge.rate_budget, RemoteBudget)
            assert worker_judge.rate_budget.limits() == {"requests_per_minute": RPM, "tokens_per_minute": None,
                                                         "concurrency": 2}
            reports = in_processes(worker_judge, [range(0, 6), range(6, 12)])
            address = worker_judge.rate_budget.address
        assert sum(r["ok"] for r in reports) == 12 and srv.max_in_flight <= 2  # 4 with a budget each
    with pytest.raises(OSError):
        socket.create_connection(address, timeout=2)
    with pytest.raises(ValueError, match="on: 'spark'"):
        with cluster_judge(judge, on="spark"):
            pass


def test_cluster_judge_leaves_a_local_models_batch_per_worker():
    from textgen_metrics.judges.cluster import cluster_limits

    class LocalModelJudge(CallableJudge):  # (its backend name is all that counts here)
        backend = "hf"

    local = LocalModelJudge(module_judge, concurrency=8)
    assert cluster_limits(local)["concurrency"] is None
    with cluster_judge(local, on="server") as worker_judge:
        assert worker_judge.rate_budget is None  # nothing to share: no budget
    limited = LocalModelJudge(module_judge, concurrency=8, requests_per_minute=RPM)
    with cluster_judge(limited, on="server") as worker_judge:
        assert worker_judge.rate_budget.limits()["concurrency"] is None


def test_remote_budget_refuses_a_wrong_token():
    with BudgetServer(requests_per_minute=RPM) as budget:
        wrong = RemoteBudget(budget.address, "not-the-token")
        with pytest.raises(Exception, match="refused the access token"):
            asyncio.run(wrong.acquire(1))


def _reply_to(sent: bytes, address) -> bytes:
    """What the budget server answers to ``sent`` (no newline at its end: a line still coming)."""
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(sent)
        return sock.makefile("rb").readline()


def test_budget_server_checks_the_token_before_reading_a_long_line():
    """A caller without the token is refused after the token line's few hundred bytes, though
    its line goes on (the server used to read a line of any length, 200 MB in, 200 MB held, and
    check the token after); a caller with it is refused an operation line past the cap, and a
    right client is served as before."""
    with BudgetServer(requests_per_minute=RPM) as budget:
        long_token = b'{"token": "' + b"x" * (_TOKEN_LINE + 1 - 11)  # one byte past the cap, no newline
        assert b"bad token" in _reply_to(long_token, budget.address)
        assert b"bad token" in _reply_to(b"not json at all\n", budget.address)
        token_line = json.dumps({"token": budget.token}).encode() + b"\n"
        long_op = token_line + b'{"op": "stats", "args": ["' + b"y" * (_OP_LINE + 1 - 26)
        with socket.create_connection(budget.address, timeout=10) as sock:
            sock.sendall(long_op)
            replies = sock.makefile("rb")
            assert json.loads(replies.readline()) == {"ok": True}
            assert b"longer than" in replies.readline()
            assert replies.readline() == b""  # and the connection is closed
        assert budget.client().limits()["requests_per_minute"] == RPM


# -- every judge ships to a worker ----------------------------------------------------------------
def module_judge(messages, task):
    return answer(None, task)


def test_cloudpickle_ships_a_judge_of_a_lambda():
    """Ray and Spark ship with cloudpickle, which takes what pickle cannot (a lambda)."""
    import cloudpickle

    judge = CallableJudge(lambda messages, task: answer(None, task), requests_per_minute=RPM)
    clone = pickle.loads(cloudpickle.dumps(judge))
    [res] = clone.judge(budget_worker.requests([0]))
    assert res.ok and clone.limits()["requests_per_minute"] == RPM


@pytest.mark.parametrize("server_class, make", [
    (ChatServer, lambda url, tmp: OpenAIJudge("m", base_url=url, api_key=SECRET, requests_per_minute=RPM,
                                              cache=f"dir:{tmp}/shared")),
    (AzureServer, lambda url, tmp: AzureOpenAIJudge("judge-deployment", endpoint=url, api_key=SECRET,
                                                    tokens_per_minute=10_000)),
    (GeminiServer, lambda url, tmp: GeminiJudge("gemini-x", base_url=url, api_key=SECRET, requests_per_minute=RPM)),
    (AnthropicServer, lambda url, tmp: AnthropicJudge("claude-x", base_url=url, api_key=SECRET,
                                                      requests_per_minute=RPM)),
    (ChatServer, lambda url, tmp: CallableJudge(module_judge, concurrency=3, requests_per_minute=RPM,
                                                cache=f"{tmp}/c.sqlite")),
], ids=["openai", "azure", "gemini", "anthropic", "callable"])
def test_every_judge_pickles_after_use_and_works_there(server_class, make, tmp_path):
    with server_class(answer) as srv:
        judge = make(srv.url, tmp_path)
        [first] = judge.judge(budget_worker.requests([0]))  # used: its locks, redactor and cache are live
        assert first.ok
        clone = pickle.loads(pickle.dumps(judge))
        assert type(clone) is type(judge) and clone.limits() == judge.limits()
        assert clone.secrets() == judge.secrets() and clone.rate_budget is not judge.rate_budget
        [res] = clone.judge(budget_worker.requests([1]))
        assert res.ok and res.value == {"verdict": "yes"}
        if judge.cache is not None:  # the clone opened the same cache: the first answer is there
            [again] = clone.judge(budget_worker.requests([0]))
            assert again.cached == 1


def test_local_model_judge_pickles_without_its_model(tmp_path):
    """HFJudge ships its settings, not its loaded model: the worker loads it again, and answers
    as the original did."""
    from test_hf_judge import TEMPLATES, ask, build, hf

    model = build(tmp_path, TEMPLATES["chatml"], "answer")
    judge = hf(model, batch_size=2, max_new_tokens=8, max_parse_attempts=1, requests_per_minute=6000)
    before = judge.judge([ask(i) for i in range(2)])
    assert judge._loaded is not None
    blob = pickle.dumps(judge)
    clone = pickle.loads(blob)
    assert clone._loaded is None and clone._pipe is None
    assert judge.share(budget=None)._loaded is judge._loaded  # in this process: the same model
    assert len(blob) < 100_000  # no weights in it
    after = clone.judge([ask(i) for i in range(2)])
    assert [(r.text, r.error) for r in after] == [(r.text, r.error) for r in before]
    assert clone._loaded is not None


def test_batch_mode_is_not_held_to_the_live_budget():
    """A batch (``batch=True``) goes to the provider's batch queue as one: the live requests per
    minute do not space its requests out (six requests at 6 a minute would take 50 s)."""
    from batch_server import OpenAIBatchServer

    with OpenAIBatchServer(answer) as server:
        judge = OpenAIJudge("gpt-4o-mini", base_url=server.url, api_key=server.key, batch=True,
                            batch_poll_interval=0.01, batch_window=0.05, requests_per_minute=6)
        reqs = budget_worker.requests(range(6))
        start = time.monotonic()
        results = judge.judge(reqs)
        assert all(r.ok for r in results), [r.error for r in results]
        assert server.sizes == [6]
        assert time.monotonic() - start < 10 and judge.rate_budget.stats()["granted"] == 0
