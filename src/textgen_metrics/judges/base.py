"""The judge engine shared by every backend.

A backend implements one hook, ``_acomplete(messages, request, ctx) -> Completion``. The base
class runs many requests concurrently (``concurrency`` in flight), sends identical requests
that are in flight at the same time only once, caches each completion,
parses and validates every answer with one parser, and asks again with the error shown to the
judge when an answer is unusable, up to ``max_parse_attempts``. A request that still fails gets
a ``JudgeResult`` with ``error`` set; the other requests are unaffected. Token usage is counted
per result and in total.
"""

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import threading
from typing import Any, Optional

from .cache import cache_key, resolve_cache
from .parsing import JudgeParseError, parse_answer

__all__ = ["Completion", "JudgeRequest", "JudgeResult", "Usage", "Judge", "JudgeError", "run_sync"]


class JudgeError(RuntimeError):
    """A judge call failed for good (after the transport retries)."""


@dataclasses.dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: Optional[str] = None
    logprobs: Optional[list] = None  # [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]


@dataclasses.dataclass
class JudgeRequest:
    """One question to the judge: chat messages and the JSON schema of the expected answer."""

    messages: list
    schema: Optional[dict] = None
    name: str = "answer"
    logprobs: bool = False
    top_logprobs: Optional[int] = None


@dataclasses.dataclass
class JudgeResult:
    value: Any = None
    text: Optional[str] = None
    error: Optional[str] = None
    attempts: int = 0
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    logprobs: Optional[list] = None

    @property
    def ok(self):
        return self.error is None


class Usage:
    """Requests sent, answers served from the cache, tokens; cost from an optional price table
    ``{model: (price per 1M prompt tokens, price per 1M completion tokens)}``."""

    FIELDS = ("requests", "cached", "prompt_tokens", "completion_tokens")

    def __init__(self, **counts):
        for f in self.FIELDS:
            setattr(self, f, counts.get(f, 0))
        self._lock = threading.Lock()

    def add(self, other):
        with self._lock:
            for f in self.FIELDS:
                setattr(self, f, getattr(self, f) + getattr(other, f))

    def as_dict(self, model=None, prices=None):
        out = {f: getattr(self, f) for f in self.FIELDS}
        if prices and model in prices:
            p_in, p_out = prices[model]
            out["cost"] = (self.prompt_tokens * p_in + self.completion_tokens * p_out) / 1e6
        return out

    def __repr__(self):
        return "Usage(" + ", ".join(f"{f}={getattr(self, f)}" for f in self.FIELDS) + ")"


def run_sync(coro):
    """Run a coroutine to completion from sync code, also inside a running event loop
    (Jupyter, Gradio), where it runs on a private loop in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


REPAIR_PROMPT = (
    "Your previous answer could not be used: {error}. Reply again with only the JSON value, "
    "exactly in the required format, and nothing else."
)


class Judge:
    """Base of the judge backends. Subclasses set ``backend`` and implement ``_acomplete``."""

    backend = "base"

    def __init__(self, model, concurrency=1, cache=None, max_parse_attempts=3, prices=None):
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"concurrency: {concurrency!r} must be a positive integer")
        if not isinstance(max_parse_attempts, int) or max_parse_attempts < 1:
            raise ValueError(f"max_parse_attempts: {max_parse_attempts!r} must be a positive integer")
        self.model = model
        self.concurrency = concurrency
        self.cache = resolve_cache(cache)
        self.max_parse_attempts = max_parse_attempts
        self.prices = prices
        self.usage = Usage()

    # -- backend hooks ---------------------------------------------------------------------
    def settings(self, request):
        """Generation settings that change an answer (part of the cache key)."""
        return {"schema": request.schema, "logprobs": request.logprobs, "top_logprobs": request.top_logprobs}

    def _open(self):
        """An async context manager giving the per-run context (an HTTP session...)."""
        return contextlib.nullcontext(None)

    async def _acomplete(self, messages, request, ctx):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- engine ----------------------------------------------------------------------------
    async def _complete(self, messages, request, ctx, sem, result, inflight):
        key = cache_key(self.backend, self.model, messages, self.settings(request))
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                result.cached += 1
                return Completion(**hit)
        task = inflight.get(key)
        if task is not None:
            # the same request is already on its way: share its answer instead of a second call
            completion = await task
            result.cached += 1
            return completion
        task = asyncio.ensure_future(self._send(messages, request, ctx, sem, key))
        inflight[key] = task
        task.add_done_callback(lambda _: inflight.pop(key, None))
        completion = await task
        result.requests += 1
        result.prompt_tokens += completion.prompt_tokens or 0
        result.completion_tokens += completion.completion_tokens or 0
        return completion

    async def _send(self, messages, request, ctx, sem, key):
        async with sem:
            completion = await self._acomplete(messages, request, ctx)
        if self.cache is not None:
            self.cache.put(key, dataclasses.asdict(completion))
        return completion

    async def _ajudge_one(self, request, ctx, sem, inflight):
        result = JudgeResult()
        messages = list(request.messages)
        error = None
        try:
            for attempt in range(1, self.max_parse_attempts + 1):
                result.attempts = attempt
                completion = await self._complete(messages, request, ctx, sem, result, inflight)
                result.text = completion.text
                result.logprobs = completion.logprobs
                try:
                    result.value = parse_answer(completion.text, request.schema)
                    result.error = None
                    return result
                except JudgeParseError as e:
                    error = str(e)
                    if completion.finish_reason == "length":
                        error += " (the answer was cut off by the token limit)"
                    messages = messages + [
                        {"role": "assistant", "content": completion.text or ""},
                        {"role": "user", "content": REPAIR_PROMPT.format(error=error)},
                    ]
            result.error = f"invalid answer after {self.max_parse_attempts} attempts: {error}"
        except JudgeError as e:
            result.error = str(e)
        finally:
            self.usage.add(Usage(**{f: getattr(result, f) for f in Usage.FIELDS}))
        return result

    @contextlib.asynccontextmanager
    async def session(self):
        """A context for many requests asked in any order (multi-stage metrics): all share the
        backend context and the ``concurrency`` limit. ``await session.ask(request)``."""
        sem = asyncio.Semaphore(self.concurrency)
        async with self._open() as ctx:
            yield _Session(self, ctx, sem, {})

    async def ajudge(self, requests):
        """Answer every request (list of JudgeRequest), ``concurrency`` calls in flight."""
        requests = list(requests)
        async with self.session() as session:
            return list(await asyncio.gather(*(session.ask(r) for r in requests)))

    def judge(self, requests):
        """Sync ``ajudge``."""
        return run_sync(self.ajudge(requests))

    def usage_dict(self, usage=None):
        return (usage or self.usage).as_dict(self.model, self.prices)

    def __repr__(self):
        return f"{type(self).__name__}(model={self.model!r}, concurrency={self.concurrency})"


class _Session:
    __slots__ = ("judge", "ctx", "sem", "inflight")

    def __init__(self, judge, ctx, sem, inflight):
        self.judge, self.ctx, self.sem, self.inflight = judge, ctx, sem, inflight

    async def ask(self, request):
        return await self.judge._ajudge_one(request, self.ctx, self.sem, self.inflight)
