"""Rate limits for judges: one budget of requests per minute, tokens per minute and requests in
flight, held for every user of it: the requests of one judge (``LocalBudget``), of every worker
process of a Ray cluster (``RayBudget``, a named actor on the head node, which no worker node's
loss takes) or of any processes that reach a small TCP service (``BudgetServer`` and its client
``RemoteBudget``: Spark executors, multiprocessing; the server reads a caller's access token, at
most ``_TOKEN_LINE`` bytes, before anything else, and no line past ``_OP_LINE`` bytes).

How a request is admitted (``Budget.acquire`` before it is sent, ``Budget.release`` after):

- **Requests per minute** and **tokens per minute** are booked on a virtual schedule (the generic
  cell rate algorithm): a request may start at ``max(now, next request slot, next token slot,
  end of a pause)``; booking it moves the request slot ``60 / requests_per_minute`` seconds on
  and the token slot ``estimate * 60 / tokens_per_minute`` seconds on. No credit builds up while
  the budget is idle, so no burst goes over the limit after a quiet spell: over any window of
  ``W`` seconds at most ``W * requests_per_minute / 60 + 1`` requests start.
- The token **estimate** of a request is its prompt's characters / 4 plus its answer budget
  (``max_tokens``, else 256); ``release`` corrects the schedule with the tokens the server
  reported (prompt + completion), so a steady run is held to what it really used.
- **Concurrency**: a request holds one of ``concurrency`` leases from ``acquire`` to
  ``release``. A remote lease is time-limited (``lease_seconds``) and renewed by its holder
  while the request runs: a worker that dies with leases in hand (a killed Ray actor, a lost
  executor) gives them back when they run out, never holds them for good.
- **Waiting for a lease**: a request that finds every lease taken does not ask again and again.
  It takes a ticket in the budget's queue and waits where the budget lives; a lease given back
  (or run out: the holder also wakes at the earliest lease deadline) goes to the oldest ticket
  at once. ``LocalBudget`` wakes the waiting request's future in its own event loop
  (``call_soon_threadsafe``: any thread, any loop); ``BudgetServer`` and the Ray actor answer an
  ``admit`` after up to ``MAX_WAIT`` seconds (1.5) of waiting on a condition, with a lease or
  with "none yet", upon which the client asks again with its ticket (a long poll: one ask per
  1.5 s of waiting at most, not one per 5 to 50 ms). A ticket not asked again for
  ``MAX_WAIT + 5`` seconds (its worker gone) leaves the queue. Releases, renewals and pauses
  never wait behind these asks: the server answers each connection in a thread of its own
  (``RemoteBudget`` sends its waiting asks from threads of their own), the Ray actor is threaded
  and runs waiting asks in a concurrency group of their own.
- **Pause**: ``pause(seconds)`` (a 429 whose Retry-After says how long) moves every slot past
  the pause: every user of the budget waits, not only the one that got the 429.
- A booking is made at most ``horizon`` seconds ahead of its start (0.05 s); a request whose
  slot is further away asks again later. A pause therefore holds back everything but at most
  ``horizon`` seconds of requests already booked.

The budget's clock is its holder's (the actor's, the server's): callers are told how long to
wait, never a time, so machines' clocks need not agree.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import json
import math
import os
import secrets
import socket
import socketserver
import sys
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["Budget", "BudgetState", "Lease", "LocalBudget", "RemoteBudget", "BudgetServer", "RayBudget",
           "BudgetError", "estimate_tokens"]

DEFAULT_ANSWER_TOKENS = 256  # the answer's share of a token estimate when a request names no budget
MAX_WAIT = 1.5  # seconds a remote holder keeps a request waiting for a lease before it answers "none yet"
_WAIT_CAP = 10.0  # the most a holder waits in one call, whatever a client asks
_TICKET_GRACE = 5.0  # seconds a queued ticket outlives its last ask (then its waiter is taken for gone)
_REMOTE_WAITERS = 64  # a RemoteBudget's threads (and connections) waiting at the server at once, per process
_TOKEN_LINE = 256  # bytes of a budget server's first line (the access token) read before it is checked
_OP_LINE = 64 * 1024  # bytes of any later line (an operation: a few numbers and lease ids)
_RAY_WAITERS = 256  # the budget actor's threads for requests waiting for a lease (its other calls have their own)


class BudgetError(RuntimeError):
    """The budget cannot be reached (its server or actor is gone): nothing can be admitted."""


def _limit(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: {value!r} must be a positive number, or None for no limit")
    return float(value)


def _slots(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: {value!r} must be a positive integer, or None for no limit")
    return value


def estimate_tokens(messages: Any, max_tokens: int | None) -> int:
    """What a request may cost in tokens before it is sent: its text's characters / 4 (about a
    token each for English) plus the answer's budget."""
    chars = 0
    for m in messages or []:
        content = m.get("content") if isinstance(m, dict) else m
        chars += len(content) if isinstance(content, str) else len(json.dumps(content, default=str))
    return chars // 4 + 1 + (max_tokens if max_tokens else DEFAULT_ANSWER_TOKENS)


class BudgetState:
    """The bookkeeping of one budget, with no clock of its own (every call gets ``now``) and no
    lock (its holder serializes calls). Every front (local, actor, server) wraps one.

    Requests that find every lease taken queue for one (``admit``): each gets a ticket, and a
    lease that comes free goes to the oldest ticket first. The holder learns when to wake whom
    from ``wake`` (set by the holder, called under its lock with the tickets whose turn it is,
    whenever a lease is released or runs out or a ticket leaves the queue) and ``next_deadline``
    (when the next lease or ticket runs out: a dead worker's lease frees itself then)."""

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 concurrency: int | None = None, lease_seconds: float | None = 30.0,
                 horizon: float = 0.05) -> None:
        self.requests_per_minute = _limit("requests_per_minute", requests_per_minute)
        self.tokens_per_minute = _limit("tokens_per_minute", tokens_per_minute)
        self.concurrency = _slots("concurrency", concurrency)
        self.lease_seconds = _limit("lease_seconds", lease_seconds)
        self.horizon = float(horizon)
        self.next_request = -math.inf  # the first time the next request may start
        self.next_token = -math.inf  # the time the tokens booked so far are paid for
        self.paused_until = -math.inf
        self.leases: dict[str, float] = {}  # lease id -> when it runs out (inf: never)
        self.queue: dict[str, float] = {}  # ticket -> when it is dropped unless asked again, oldest first
        self._ticket_check = math.inf  # no ticket runs out before this (a lower bound)
        self._ids = itertools.count()
        self.wake: Callable[[list[str]], None] | None = None  # the holder's: wake these tickets' waiters
        self.granted = 0  # requests booked, for reports and tests
        self.pauses = 0
        self.expired = 0  # leases that ran out in their holder's hands (a dead worker)
        self.queued = 0  # requests that waited in the queue for a lease
        self.asks = 0  # calls that asked for a lease (acquire, admit), counted by the holder

    def limits(self) -> dict[str, Any]:
        return {"requests_per_minute": self.requests_per_minute, "tokens_per_minute": self.tokens_per_minute,
                "concurrency": self.concurrency}

    def _expire(self, now: float) -> None:
        freed = False
        if self.lease_seconds is not None:
            dead = [k for k, until in self.leases.items() if until < now]
            for k in dead:
                del self.leases[k]
            self.expired += len(dead)
            freed = bool(dead)
        if now >= self._ticket_check:  # a waiter that stopped asking (gone with its worker)
            gone = [t for t, until in self.queue.items() if until < now]
            for t in gone:
                del self.queue[t]
            self._ticket_check = min(self.queue.values(), default=math.inf)
            freed = freed or bool(gone)
        if freed:
            self._wake_due()

    def _free(self) -> int:
        return sys.maxsize if self.concurrency is None else self.concurrency - len(self.leases)

    def _wake_due(self) -> None:
        """Tell the holder whose turn it is: the oldest tickets, one per free lease."""
        free = self._free()
        if self.wake is not None and self.queue and free > 0:
            self.wake(list(itertools.islice(self.queue, free)))

    def _turn(self, ticket: str | None) -> bool:
        """A free lease for ``ticket`` (None: a newcomer, behind every ticket)."""
        free = self._free()
        if free <= 0:
            return False
        if ticket is None or ticket not in self.queue:
            return len(self.queue) < free
        return ticket in itertools.islice(self.queue, free)

    def _start(self, now: float) -> float:
        return max(now, self.next_request, self.next_token, self.paused_until)

    def _book(self, start: float, tokens: int) -> None:
        if self.requests_per_minute is not None:
            self.next_request = start + 60.0 / self.requests_per_minute
        if self.tokens_per_minute is not None:
            self.next_token = max(self.next_token, start) + tokens * 60.0 / self.tokens_per_minute
        self.granted += 1

    def _until(self, now: float) -> float:
        return now + self.lease_seconds if self.lease_seconds is not None else math.inf

    def _grant(self, tokens: int, now: float) -> tuple[str | None, float]:
        start = self._start(now)
        if start > now + self.horizon:
            return None, start - now - self.horizon / 2
        self._book(start, tokens)
        lease = f"{os.getpid()}-{next(self._ids)}"
        self.leases[lease] = self._until(now)
        return lease, start - now

    def acquire(self, tokens: int, now: float) -> tuple[str | None, float]:
        """``(lease id, seconds to wait before sending)``, or ``(None, seconds before asking
        again)`` when every lease is taken (0: the caller asks again when it likes; requests
        queued by ``admit`` come first) or the request's slot is further than ``horizon``."""
        self._expire(now)
        if not self._turn(None):
            return None, 0.0
        return self._grant(tokens, now)

    def admit(self, tokens: int, ticket: str | None, hold: float | None,
              now: float) -> tuple[str | None, float, str | None]:
        """``acquire`` with a place in the queue for a lease: ``(lease id, seconds to wait,
        ticket)``. A request that finds every lease taken gets a ticket (or keeps the one it
        gave) and ``(None, 0.0, ticket)``: its holder waits until ``wake`` names the ticket, then
        it asks again with it. ``hold``: seconds the ticket stays queued if not asked again (None:
        until ``forget``); a booking further off than ``horizon`` keeps its ticket for that long
        too (``(None, seconds, ticket)``)."""
        self._expire(now)
        if self._turn(ticket):
            lease, wait = self._grant(tokens, now)
            if lease is not None:
                if ticket is not None and self.queue.pop(ticket, None) is not None:
                    self._wake_due()  # (the places behind it move up)
                return lease, wait, None
            if ticket is None or ticket not in self.queue:
                return None, wait, ticket  # a lease is free: only the rate holds it back
        else:
            wait = 0.0
        if ticket is None:
            ticket = f"w{os.getpid()}-{next(self._ids)}"
            self.queued += 1
        until = math.inf if hold is None else now + wait + hold
        self.queue[ticket] = until
        self._ticket_check = min(self._ticket_check, until)
        return None, wait, ticket

    def forget(self, ticket: str | None, now: float) -> None:
        """A waiter gone (its request cancelled): its ticket leaves the queue."""
        if ticket is not None and self.queue.pop(ticket, None) is not None:
            self._wake_due()

    def next_deadline(self, now: float) -> float | None:
        """Seconds until the next lease or queued ticket runs out (None: none will)."""
        soonest = min(self._ticket_check, min(self.leases.values(), default=math.inf))
        return None if soonest == math.inf else max(0.0, soonest - now)

    def again(self, lease: str, tokens: int, now: float) -> tuple[bool, float]:
        """Book one more request under a lease held (a retry of the same request):
        ``(booked, seconds to wait)``; not booked: ask again after that many seconds."""
        self._expire(now)
        start = self._start(now)
        if start > now + self.horizon:
            return False, start - now - self.horizon / 2
        self._book(start, tokens)
        self.leases[lease] = self._until(now)  # (back, if it had run out meanwhile)
        return True, start - now

    def release(self, lease: str, estimate: int, used: int | None, now: float) -> None:
        """The lease back; ``used`` (tokens the server reported, None: unknown) corrects what
        ``estimate`` booked. The oldest ticket waiting is woken."""
        if self.leases.pop(lease, None) is not None:
            self._wake_due()
        if used is not None and self.tokens_per_minute is not None:
            self.next_token += (used - estimate) * 60.0 / self.tokens_per_minute

    def renew(self, leases: list[str], now: float) -> None:
        for lease in leases:
            if lease in self.leases:
                self.leases[lease] = self._until(now)

    def pause(self, seconds: float, now: float) -> None:
        if seconds > 0:
            self.paused_until = max(self.paused_until, now + seconds)
            self.pauses += 1

    def stats(self, now: float) -> dict[str, Any]:
        self._expire(now)
        return dict(self.limits(), granted=self.granted, pauses=self.pauses, expired=self.expired,
                    in_flight=len(self.leases), waiting=len(self.queue), queued=self.queued, asks=self.asks,
                    paused_for=max(0.0, self.paused_until - now))


class Lease:
    """One request's admission: a concurrency lease and the tokens its booking estimated."""

    __slots__ = ("id", "estimate", "keeper")

    def __init__(self, lease_id: str, estimate: int) -> None:
        self.id, self.estimate = lease_id, estimate
        self.keeper: asyncio.Task[None] | None = None


class Budget:
    """What the judge engine asks of a budget. Subclasses implement ``_call(op, *args)``: one
    operation of ``BudgetState`` (``acquire``, ``admit``, ``forget``, ``again``, ``release``,
    ``renew``, ``pause``, ``stats``, ``limits``), done where the state lives, ``now`` supplied
    there; and ``_admit``: one ask for a lease that waits (up to ``MAX_WAIT``) while every lease
    is taken."""

    renews = False  # the holder renews its leases while a request runs (remote, time-limited leases)
    lease_seconds: float | None = None

    # -- what a subclass provides ---------------------------------------------------------
    def _call(self, op: str, *args: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _acall(self, op: str, *args: Any) -> Any:
        """``_call`` without holding up the event loop (a remote call runs in a thread)."""
        return await asyncio.to_thread(self._call, op, *args)

    async def _admit(self, tokens: int, ticket: str | None) -> tuple[str | None, float, str | None]:
        """``BudgetState.admit`` where the state lives, waiting there (up to ``MAX_WAIT``) while
        every lease is taken: ``(lease, wait, ticket)``; ``(None, 0.0, ticket)``: none came yet."""
        lease, wait, ticket = await self._acall("admit", tokens, ticket, MAX_WAIT)
        return lease, wait, ticket

    # -- the engine's side ----------------------------------------------------------------
    async def acquire(self, tokens: int = 0) -> Lease:
        """Wait for a lease and a slot for one request of about ``tokens`` tokens; return when
        it may be sent. While every lease is taken the request waits in the budget's queue,
        oldest first, and is woken when a lease comes free (no polling)."""
        tokens = int(tokens)
        ticket: str | None = None
        lease: str | None = None
        held: Lease | None = None
        try:
            while True:
                lease, wait, ticket = await self._admit(tokens, ticket)
                if lease is not None:
                    ticket = None  # (out of the queue)
                    break
                if wait > 0:  # the slot is further off: ask again nearer to it (the ticket keeps its place)
                    await asyncio.sleep(wait)
            held = Lease(lease, tokens)
            if self.renews:
                held.keeper = asyncio.ensure_future(self._keep(held))
            if wait > 0:
                await asyncio.sleep(wait)
            return held
        except asyncio.CancelledError:  # the request given up: its lease back, its place in the queue too
            with contextlib.suppress(Exception):  # a lease not given back runs out: the cancellation goes on
                await asyncio.shield(self._give_back(held, ticket))
            raise

    async def _give_back(self, held: Lease | None, ticket: str | None) -> None:
        if held is not None:
            await self.release(held)
        elif ticket is not None:
            await self._acall("forget", ticket)

    async def _waited(self, inner: asyncio.Future[Any]) -> tuple[str | None, float, str | None]:
        """The answer of an ``admit`` sent to the holder (``inner``); the caller given up meanwhile,
        what the holder gives afterwards goes back."""
        try:
            lease, wait, ticket = await asyncio.shield(inner)
        except asyncio.CancelledError:
            inner.add_done_callback(self._abandoned)
            raise
        return lease, wait, ticket

    def _abandoned(self, future: asyncio.Future[Any]) -> None:
        """A done callback for an ask given up while it waited at the holder: what it got back."""
        if future.cancelled() or future.exception() is not None:
            return
        lease, _, ticket = future.result()
        if lease is None and ticket is None:
            return
        with contextlib.suppress(RuntimeError):  # (the loop closing: a remote lease runs out by itself)
            task = asyncio.ensure_future(self._give_back(Lease(lease, 0) if lease is not None else None, ticket))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    async def again(self, lease: Lease, tokens: int | None = None) -> None:
        """Wait for a slot for one more request under ``lease`` (a retry of the same request)."""
        tokens = lease.estimate if tokens is None else int(tokens)
        while True:
            booked, wait = await self._acall("again", lease.id, tokens)
            if wait > 0:
                await asyncio.sleep(wait)
            if booked:
                lease.estimate += tokens
                return

    async def release(self, lease: Lease, used_tokens: int | None = None) -> None:
        """Give ``lease`` back; ``used_tokens``: the tokens the requests really cost (None: unknown,
        the estimate stands)."""
        if lease.keeper is not None:
            lease.keeper.cancel()
            lease.keeper = None
        await self._acall("release", lease.id, lease.estimate, used_tokens)

    def pause(self, seconds: float) -> None:
        """Hold back every request of every user of this budget for ``seconds`` (a 429's
        Retry-After)."""
        if seconds and seconds > 0:
            self._call("pause", float(seconds))

    def stats(self) -> dict[str, Any]:
        """The limits, requests granted, pauses, leases in flight, leases that ran out, and
        requests waiting for a lease (``waiting``; ``queued``: all that ever waited)."""
        stats: dict[str, Any] = self._call("stats")
        return stats

    def limits(self) -> dict[str, Any]:
        limits: dict[str, Any] = self._call("limits")
        return limits

    async def _keep(self, lease: Lease) -> None:
        period = (self.lease_seconds or 30.0) / 3
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.sleep(period)
                with contextlib.suppress(BudgetError):
                    await self._acall("renew", [lease.id])


_BACKGROUND: set[asyncio.Task[None]] = set()  # leases given back for asks given up (kept from the collector)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class LocalBudget(Budget):
    """A budget held in this process (every thread and event loop of it): what a judge made
    with ``requests_per_minute=`` or ``tokens_per_minute=`` uses. Sent to another process (a
    pickle), it is a new budget with the same limits there: for the sum of several processes use
    ``RayBudget`` or ``BudgetServer``."""

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 concurrency: int | None = None) -> None:
        self.state = BudgetState(requests_per_minute, tokens_per_minute, concurrency, lease_seconds=None)
        self._lock = threading.Lock()
        # the requests waiting for a lease: ticket -> (its event loop, the future that wakes it)
        self._waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = {}
        self.state.wake = self._wake

    def _call(self, op: str, *args: Any) -> Any:
        with self._lock:
            if op == "acquire":
                self.state.asks += 1
            return _apply(self.state, op, list(args))

    async def _acall(self, op: str, *args: Any) -> Any:
        return self._call(op, *args)  # a lock held for microseconds: no thread needed

    def _wake(self, tickets: list[str]) -> None:
        """(Under the lock.) Wake the waiters of ``tickets``, each in its own event loop."""
        for ticket in tickets:
            waiter = self._waiting.get(ticket)
            if waiter is not None:
                loop, future = waiter
                with contextlib.suppress(RuntimeError):  # (its loop closed: the ticket is forgotten below)
                    loop.call_soon_threadsafe(_resolve, future)

    async def _admit(self, tokens: int, ticket: str | None) -> tuple[str | None, float, str | None]:
        with self._lock:
            self.state.asks += 1
            lease, wait, ticket = self.state.admit(tokens, ticket, None, time.monotonic())
            if lease is not None or wait > 0 or ticket is None:
                return lease, wait, ticket
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            self._waiting[ticket] = (loop, future)
        try:  # a lease released (by any thread's loop) wakes the oldest ticket's future: no polling
            await future
        except BaseException:
            with self._lock:
                self._waiting.pop(ticket, None)
                self.state.forget(ticket, time.monotonic())
            raise
        with self._lock:
            self._waiting.pop(ticket, None)
        return None, 0.0, ticket

    def __getstate__(self) -> dict[str, Any]:
        return {"limits": self.state.limits()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state["limits"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"LocalBudget({self.state.limits()})"


_NOW_OPS = ("acquire", "admit", "forget", "again", "release", "renew", "pause", "stats")


def _apply(state: BudgetState, op: str, args: list[Any]) -> Any:
    if op == "limits":
        return state.limits()
    if op not in _NOW_OPS:
        raise ValueError(f"unknown budget operation {op!r}")
    return getattr(state, op)(*args, time.monotonic())


class _Holder:
    """A ``BudgetState`` behind a lock, for holders that answer each caller in a thread of its
    own (the budget server, the Ray actor): ``admit`` waits on a condition of its ticket, which
    ``release``, a lease running out or a ticket leaving the queue notifies, until a lease is
    its, its booking says how long to wait, or ``max_wait`` has passed."""

    def __init__(self, state: BudgetState) -> None:
        self.state = state
        self.lock = threading.Lock()
        self._waiting: dict[str, threading.Condition] = {}  # ticket -> its waiter's condition
        state.wake = self._wake

    def _wake(self, tickets: list[str]) -> None:
        for ticket in tickets:
            cond = self._waiting.get(ticket)
            if cond is not None:
                cond.notify()

    def call(self, op: str, args: list[Any]) -> Any:
        if op == "admit":
            return self.admit(*args)
        with self.lock:
            if op == "acquire":
                self.state.asks += 1
            return _apply(self.state, op, args)

    def admit(self, tokens: int, ticket: str | None, max_wait: float) -> list[Any]:
        if isinstance(max_wait, bool) or not isinstance(max_wait, (int, float)) or not max_wait >= 0:
            raise ValueError(f"max_wait: {max_wait!r} must be a number of seconds >= 0")
        max_wait = min(float(max_wait), _WAIT_CAP)
        end = time.monotonic() + max_wait
        with self.lock:
            self.state.asks += 1
            while True:
                now = time.monotonic()
                lease, wait, ticket = self.state.admit(int(tokens), ticket, max_wait + _TICKET_GRACE, now)
                if lease is not None or wait > 0 or ticket is None or now >= end:
                    return [lease, wait, ticket]
                timeout = end - now
                deadline = self.state.next_deadline(now)  # a dead worker's lease runs out then
                if deadline is not None:
                    timeout = min(timeout, deadline + 0.001)
                cond = self._waiting.setdefault(ticket, threading.Condition(self.lock))
                try:
                    cond.wait(timeout)
                finally:
                    self._waiting.pop(ticket, None)


# -- a budget over TCP: the driver runs the server, any process that reaches it is a client ------
class _Handler(socketserver.StreamRequestHandler):
    server: _TCPServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        """The first line must be the access token (read up to ``_TOKEN_LINE`` bytes, no more),
        every later one an operation of at most ``_OP_LINE`` bytes: a caller without the token,
        or a line past its cap, is answered with an error and the connection closed, before the
        server holds more than the cap in memory."""
        if not self._authed():
            return
        while True:
            line = self.rfile.readline(_OP_LINE + 1)
            if not line:
                return
            if len(line) > _OP_LINE:
                self._send({"error": f"a request longer than {_OP_LINE} bytes"})
                return
            try:
                msg = json.loads(line)
                result = self.server.holder.call(msg["op"], msg.get("args") or [])
            except (ValueError, KeyError, TypeError) as e:
                self._send({"error": f"{type(e).__name__}: {e}"})
                continue
            try:
                self._send({"result": result})
            except OSError:  # the client is gone: what it was given goes back
                if msg["op"] == "admit" and result[0] is not None:
                    self.server.holder.call("release", [result[0], 0, None])
                return

    def _authed(self) -> bool:
        line = self.rfile.readline(_TOKEN_LINE + 1)
        try:
            token = json.loads(line).get("token", "") if line.endswith(b"\n") else ""
        except (ValueError, AttributeError):
            token = ""
        if not hmac.compare_digest(str(token).encode(), self.server.token.encode()):
            with contextlib.suppress(OSError):
                self._send({"error": "bad token"})
            return False
        self._send({"ok": True})
        return True

    def _send(self, payload: dict[str, Any]) -> None:
        self.wfile.write(json.dumps(payload).encode() + b"\n")
        self.wfile.flush()


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: BudgetState, token: str) -> None:
        self.state, self.token, self.holder = state, token, _Holder(state)
        self.lock = self.holder.lock
        super().__init__(address, _Handler)


class RemoteBudget(Budget):
    """A client of a ``BudgetServer``: picklable (its address and access token), so every
    process a judge is shipped to speaks to the same budget. One connection per thread."""

    renews = True

    def __init__(self, address: tuple[str, int], token: str, lease_seconds: float = 30.0,
                 timeout: float = 30.0) -> None:
        self.address = (str(address[0]), int(address[1]))
        self.token = token
        self.lease_seconds = lease_seconds
        self.timeout = timeout
        self._local = threading.local()
        self._pool: ThreadPoolExecutor | None = None  # the threads that wait at the server for a lease
        self._pool_lock = threading.Lock()

    def _waiters(self) -> ThreadPoolExecutor:
        """Asks that wait (``admit``) run on threads of their own (a connection each), so that a
        release or a renewal never queues behind them."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(_REMOTE_WAITERS, thread_name_prefix="judge-budget-wait")
            return self._pool

    async def _admit(self, tokens: int, ticket: str | None) -> tuple[str | None, float, str | None]:
        future: Future[Any] = self._waiters().submit(self._call, "admit", tokens, ticket, MAX_WAIT)
        return await self._waited(asyncio.wrap_future(future))

    def _connect(self) -> tuple[socket.socket, Any]:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                sock = socket.create_connection(self.address, timeout=self.timeout)
            except OSError as e:
                raise BudgetError(f"budget: cannot reach the budget server at {self.address[0]}:{self.address[1]} "
                                  f"({e}); it runs in the driver, which must be alive") from None
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader = sock.makefile("rb")
            conn = (sock, reader)
            self._local.conn = conn
            reply = self._exchange(conn, {"token": self.token})
            if "error" in reply:
                self._drop()
                raise BudgetError(f"budget: the server at {self.address[0]}:{self.address[1]} refused the access "
                                  "token")
        return conn

    def _exchange(self, conn: tuple[socket.socket, Any], payload: dict[str, Any]) -> dict[str, Any]:
        sock, reader = conn
        sock.sendall(json.dumps(payload).encode() + b"\n")
        line = reader.readline()
        if not line:
            raise OSError("the budget server closed the connection")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with contextlib.suppress(OSError):
                conn[1].close()
                conn[0].close()

    def _call(self, op: str, *args: Any) -> Any:
        for attempt in (0, 1):  # a connection dropped since its last use: one more on a new one
            conn = self._connect()
            try:
                reply = self._exchange(conn, {"op": op, "args": list(args)})
            except (OSError, ValueError) as e:
                self._drop()
                if attempt:
                    raise BudgetError(f"budget: the budget server at {self.address[0]}:{self.address[1]} "
                                      f"failed ({e})") from None
                continue
            if "error" in reply:
                raise BudgetError(f"budget: {reply['error']}")
            return reply["result"]
        raise AssertionError("unreachable")  # pragma: no cover

    def __getstate__(self) -> dict[str, Any]:
        return {"address": self.address, "token": self.token, "lease_seconds": self.lease_seconds,
                "timeout": self.timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"RemoteBudget({self.address[0]}:{self.address[1]})"


class BudgetServer:
    """A budget served over TCP by the process that starts it (a Spark driver): every process
    that reaches ``host:port`` and holds the access token (a ``client()``, picklable) shares it.
    Binds to 127.0.0.1 unless told ``host=`` (the driver's address on a multi-machine cluster).
    ``with BudgetServer(...) as server:`` stops it at the end."""

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 concurrency: int | None = None, host: str = "127.0.0.1", port: int = 0,
                 lease_seconds: float = 30.0) -> None:
        self.state = BudgetState(requests_per_minute, tokens_per_minute, concurrency, lease_seconds=lease_seconds)
        self.lease_seconds = lease_seconds
        self.token = secrets.token_hex(16)
        self._server = _TCPServer((host, port), self.state, self.token)
        self.address: tuple[str, int] = self._server.server_address[:2]  # type: ignore[assignment]
        self._thread = threading.Thread(target=self._server.serve_forever, name="judge-budget", daemon=True)
        self._thread.start()
        self._finalizer = weakref.finalize(self, _TCPServer.shutdown, self._server)

    def client(self) -> RemoteBudget:
        return RemoteBudget(self.address, self.token, lease_seconds=self.lease_seconds)

    def stats(self) -> dict[str, Any]:
        with self._server.lock:
            stats: dict[str, Any] = self.state.stats(time.monotonic())
            return stats

    def close(self) -> None:
        self._finalizer()  # shutdown, once
        self._server.server_close()

    def __enter__(self) -> BudgetServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"BudgetServer({self.address[0]}:{self.address[1]}, {self.state.limits()})"


# -- a budget held by a named Ray actor ---------------------------------------------------------
HEAD_NODE = "node:__internal_head__"  # Ray's resource of the head node: the budget actor lives there
IDLE_SECONDS = 600.0  # a budget made by a worker (lifetime "detached") ends after this long unused


class _BudgetActor:
    """The Ray actor that holds a budget: a threaded actor, its state behind a lock. Requests
    waiting for a lease (``admit``) run in a concurrency group of their own, so that a release,
    a renewal or a pause never queues behind them. A detached one (made by a worker, which no
    driver ends) ends itself after ``idle_seconds`` without a call and with no lease out: its
    state is then no longer worth keeping (no credit builds up while a budget is idle), and a
    later user makes it again."""

    def __init__(self, limits: dict[str, Any], lease_seconds: float, idle_seconds: float | None = None) -> None:
        self.state = BudgetState(**limits, lease_seconds=lease_seconds)
        self.holder = _Holder(self.state)
        self.last_call = time.monotonic()
        if idle_seconds is not None:
            threading.Thread(target=self._end_when_idle, args=(idle_seconds,), name="judge-budget-idle",
                             daemon=True).start()

    def call(self, op: str, args: list[Any]) -> Any:
        self.last_call = time.monotonic()
        return self.holder.call(op, args)

    def _end_when_idle(self, idle_seconds: float) -> None:
        import ray

        while True:
            time.sleep(min(idle_seconds, 5.0))
            with self.holder.lock:
                idle = not self.state.leases and time.monotonic() - self.last_call >= idle_seconds
            if idle:
                ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
                return


class RayBudget(Budget):
    """A budget held by a named Ray actor, shared by every worker of the cluster: the driver
    makes it (``RayBudget.create(...)``, or ``RayBudget.for_judge(judge)`` with the judge's own
    limits), workers find it by name (a pickled ``RayBudget`` is its name and namespace). The
    actor lives on the head node, so that no worker node's loss takes it, as long as the
    driver's job (or until ``close()``). A budget made by workers (``detached=True``: the
    actors of a ``Scorer`` pool, each asking for the same name) outlives the worker that made
    it, ends itself when unused for ``IDLE_SECONDS``, and is made again, by its name and
    limits, by a user that finds it gone."""

    renews = True

    def __init__(self, name: str, namespace: str | None = None, lease_seconds: float = 30.0,
                 remake: dict[str, Any] | None = None) -> None:
        self.name, self.namespace, self.lease_seconds = name, namespace, lease_seconds
        self.remake = remake  # a detached budget's limits: made again if gone
        self._actor: Any = None

    @classmethod
    def create(cls, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
               concurrency: int | None = None, name: str | None = None, lease_seconds: float = 30.0,
               detached: bool = False) -> RayBudget:
        import ray

        limits = BudgetState(requests_per_minute, tokens_per_minute, concurrency).limits()  # checks them
        if not ray.is_initialized():
            ray.init()
        name = name or f"textgen-metrics-budget-{secrets.token_hex(6)}"
        namespace = ray.get_runtime_context().namespace
        budget = cls(name, namespace, lease_seconds, remake=limits if detached else None)
        budget._actor = budget._start(limits)
        ray.get(budget._actor.call.remote("limits", []))  # started and answering
        return budget

    def _start(self, limits: dict[str, Any]) -> Any:
        """The actor named ``self.name`` (made unless it exists), on the head node (a worker
        node's loss cannot take it); detached, with its idle end, where ``remake`` is set."""
        import ray

        remote: Any = ray.remote
        actor_class: Any = remote(concurrency_groups={"admit": _RAY_WAITERS})(_BudgetActor)
        where = {"resources": {HEAD_NODE: 0.001}} if HEAD_NODE in ray.cluster_resources() else {}  # type: ignore[no-untyped-call]
        lifetime = {"lifetime": "detached"} if self.remake is not None else {}
        return actor_class.options(num_cpus=0, max_concurrency=8, name=self.name, namespace=self.namespace,
                                   get_if_exists=True, **where, **lifetime).remote(
            limits, self.lease_seconds, IDLE_SECONDS if self.remake is not None else None)

    @classmethod
    def for_judge(cls, judge: Any, name: str | None = None, lease_seconds: float = 30.0) -> RayBudget:
        """A cluster budget with the judge's limits (``requests_per_minute``,
        ``tokens_per_minute`` and ``concurrency``), held for the sum of every worker."""
        return cls.create(**judge.limits(), name=name, lease_seconds=lease_seconds)

    def _handle(self) -> Any:
        if self._actor is None:
            import ray

            try:
                self._actor = ray.get_actor(self.name, namespace=self.namespace)
            except ValueError as e:
                if self.remake is not None:
                    self._actor = self._start(self.remake)
                    return self._actor
                raise BudgetError(f"budget: no Ray actor named {self.name!r} ({e}); the driver that made it "
                                  "must still be running") from None
        return self._actor

    def _gone(self, error: BaseException) -> BudgetError:
        return BudgetError(f"budget: the budget actor {self.name!r} is gone ({type(error).__name__})")

    def _again(self, error: BaseException, tried: int) -> None:
        """After the actor died under a call: a detached budget's next try makes it again (once);
        any other's is over (its driver ended it)."""
        if self.remake is None or tried:
            raise self._gone(error) from None
        self._actor = None

    def _call(self, op: str, *args: Any) -> Any:
        import ray

        for tried in (0, 1):
            try:
                return ray.get(self._handle().call.remote(op, list(args)))
            except ray.exceptions.RayActorError as e:
                self._again(e, tried)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _acall(self, op: str, *args: Any) -> Any:
        import ray

        for tried in (0, 1):
            ref = self._handle().call.remote(op, list(args))
            try:
                return await asyncio.wrap_future(ref.future())
            except ray.exceptions.RayActorError as e:
                self._again(e, tried)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _admit(self, tokens: int, ticket: str | None) -> tuple[str | None, float, str | None]:
        import ray

        for tried in (0, 1):
            ref = self._handle().call.options(concurrency_group="admit").remote("admit", [tokens, ticket, MAX_WAIT])
            try:
                return await self._waited(asyncio.wrap_future(ref.future()))
            except ray.exceptions.RayActorError as e:
                self._again(e, tried)
                ticket = None  # the queue it held a place in went with the actor
        raise AssertionError("unreachable")  # pragma: no cover

    def pause(self, seconds: float) -> None:
        """As ``Budget.pause``, sent without waiting for the actor's answer."""
        if seconds and seconds > 0:
            import ray

            with contextlib.suppress(ray.exceptions.RayActorError):
                self._handle().call.remote("pause", [float(seconds)])

    def close(self) -> None:
        """End the actor (the driver, when the job is done)."""
        import ray

        if ray.is_initialized():  # else the actor ended with the job (and a call would start a new Ray)
            with contextlib.suppress(Exception):  # whatever Ray raises for an actor already gone: it is gone
                ray.kill(self._handle())
        self._actor = None

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.name, "namespace": self.namespace, "lease_seconds": self.lease_seconds,
                "remake": self.remake}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"RayBudget({self.name!r})"

