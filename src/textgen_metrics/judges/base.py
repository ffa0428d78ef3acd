"""The judge engine shared by every backend.

A backend implements one hook, ``_acomplete(messages, request, ctx, tally) -> Completion``,
and counts each request it sends on ``tally``. The engine runs many requests concurrently
(``concurrency`` in flight), sends identical requests that are in flight at the same time only
once, and decides what an answer is worth:

- An answer cut off by the token limit (``Completion.truncated``) is never parsed: it is asked
  again once with a larger budget and the instruction to keep reasons short; cut off again, the
  request fails with "the answer was cut off at N tokens".
- Every other answer goes through one parser (``parsing.parse_answer``) and the request's own
  check (e.g. the item indices of a verdict list); an unusable answer is asked again with the
  error shown to the judge, up to ``max_parse_attempts``. An answer that repeats itself
  (``JudgeRunawayError``: a list longer than its text could hold) is asked again from the
  start with the error in the task, its looping answer not shown, and repeats discouraged while
  decoding (``frequency_penalty``, where the backend has one).
- Only an answer that parsed and validated is cached, under the request as first asked, so a
  rerun asks again exactly the requests that failed and makes no call for the others.
- What goes wrong with one request in the judge's own domain becomes that request's ``error``,
  the other requests unaffected: a ``JudgeError`` raised by the backend (each backend raises one
  for the failures of one request: its transport, an HTTP error, a body that is no answer, a chat
  template that cannot render the conversation, a model out of memory; ``CallableJudge`` wraps
  whatever the user's function raises in one), an answer that stays unusable (a
  ``JudgeParseError`` of the parser or of the request's check), an answer cut off twice.
  Only ``JudgeFatalError`` — a failure that would repeat for every request: no API key, an
  unreachable server, rejected credentials, an unknown model — leaves the engine, at once.
  Any other exception is a bug of the package's own code (a backend building its request body, a
  prompt's check, the parser, the engine): it is not turned into an error of the request, it
  raises with its traceback and stops the run.
- Every error text and every kept answer passes through the judge's redactor: the API key
  never reaches a result, a log line or the cache, even when a server echoes it. An exception
  kept (``JudgeResult.cause``) or raised (``JudgeFatalError``) is a redacted copy, its chain of
  causes too (``redaction.redacted_error``).
- ``first_answer_timeout`` (seconds; off by default, the Spaces set it): a run whose judge has
  answered nothing that long after the run began stops with one ``JudgeFatalError`` (a server
  that accepts connections and never answers), however many requests wait on it. Any answer
  shows the server alive, also the answer to a cheap probe sent beside the first requests (an
  HTTP backend's ``_probe``): a local server slow to answer its first request (llama.cpp on a
  CPU reads a long prompt for seconds, one request at a time) is waited for, as long as each
  request's own ``timeout`` allows.

Rate limits (``requests_per_minute``, ``tokens_per_minute``; ``budget.py``): every request sent,
retries and re-asks included, is admitted by the judge's ``budget`` first, and a server's
Retry-After pauses every user of that budget. ``share(budget=..., cache=...)`` gives a copy of
the judge on a budget and a cache shared with other workers (a cluster); a judge pickles
without its locks, sessions or loaded model, which come back when first needed.

Token usage is counted per result and in total: ``requests`` is every request sent (retries
and re-asks included), ``retries`` the transport retries among them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import logging
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, ClassVar, TypeVar

from .budget import Budget, BudgetError, LocalBudget, estimate_tokens
from .cache import AnswerCache, cache_key, resolve_cache
from .options import EngineOptions, JudgeOptions, check_options
from .parsing import JudgeParseError, JudgeRunawayError, parse_answer
from .redaction import Redactor, redacted_error, url_credentials

__all__ = ["Completion", "JudgeRequest", "JudgeResult", "Usage", "Judge", "JudgeError",
           "JudgeFatalError", "JudgeSession", "run_sync", "Message"]

logger = logging.getLogger("textgen_metrics.judges")

Message = dict[str, Any]  # {"role": "system" | "user" | "assistant", "content": str}
T = TypeVar("T")


class JudgeError(RuntimeError):
    """A judge request failed for good: the answer stayed unusable, or the backend failed."""


class JudgeFatalError(JudgeError):
    """A failure that would repeat for every request (no API key, an unreachable server,
    rejected credentials, an unknown model): it stops the run at once."""


@dataclasses.dataclass
class Completion:
    """One answer of a backend, as it came."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None  # "stop", "length" (cut off by the token limit), ...
    logprobs: list[dict[str, Any]] | None = None  # [{"token", "logprob", "top_logprobs": [...]}]
    cached_prompt_tokens: int = 0  # of prompt_tokens, those the provider read from its prompt cache
    # the model the server says it ran (an answer's "model"): a server may serve a name it was asked
    # for with another model, or with another version of it, from one day to the next
    model: str | None = None

    @property
    def truncated(self) -> bool:
        """The answer stopped at the token limit, not where the judge ended it."""
        return str(self.finish_reason or "").lower() in ("length", "max_tokens")


_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclasses.dataclass
class JudgeRequest:
    """One question to the judge.

    ``task`` is a stable id of the kind of question (``"faithfulness/claims"``): the cache,
    logs and stand-in judges in tests key on it, never on the prompt's wording. ``check`` is a
    further validation of the parsed value (raising ``JudgeParseError``; its return value is
    kept). ``items`` is the number of items the answer must hold, when known (it sizes a local
    model's token budget). ``max_tokens`` overrides the judge's answer budget for this request.
    ``frequency_penalty`` (OpenAI's: each token's logit lowered by this times the times it was
    written) is set by the engine only when it asks again an answer that looped.
    """

    messages: list[Message]
    schema: dict[str, Any] | None = None
    task: str = "answer"
    logprobs: bool = False
    top_logprobs: int | None = None
    check: Callable[[Any], Any] | None = dataclasses.field(default=None, compare=False, repr=False)
    items: int | None = None
    max_tokens: int | None = None
    frequency_penalty: float | None = None

    @property
    def schema_name(self) -> str:
        """``task`` as a response-format name (letters, digits, ``_`` and ``-``, at most 64)."""
        return _SCHEMA_NAME.sub("_", self.task)[:64] or "answer"


@dataclasses.dataclass
class JudgeResult:
    """What became of one request: ``value`` (validated) or ``error``, and its cost."""

    value: Any = None
    text: str | None = None
    error: str | None = None
    task: str = "answer"
    attempts: int = 0
    requests: int = 0
    retries: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    logprobs: list[dict[str, Any]] | None = None
    cached_prompt_tokens: int = 0
    model: str | None = None  # the model the server said it ran (for a cached answer: when it was asked)
    # the failure as an exception: a redacted copy (its type, message and causes; no secret)
    cause: BaseException | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def sent(self, retry: bool = False) -> None:
        """Count one request sent to the backend (``retry``: a repeat after a transport failure)."""
        self.requests += 1
        if retry:
            self.retries += 1


class Usage:
    """Requests sent (retries and re-asks included), retries among them, answers served from
    the cache, tokens; cost from an optional price table ``{model: (price per 1M prompt
    tokens, price per 1M completion tokens)}``."""

    FIELDS = ("requests", "retries", "cached", "prompt_tokens", "completion_tokens", "cached_prompt_tokens")
    requests: int
    retries: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int  # of prompt_tokens, read from the provider's prompt cache (where it says)

    def __init__(self, **counts: int) -> None:
        for f in self.FIELDS:
            setattr(self, f, int(counts.get(f, 0)))
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in self.FIELDS}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    @classmethod
    def of(cls, obj: Any) -> Usage:
        return cls(**{f: getattr(obj, f) for f in cls.FIELDS})

    def add(self, other: Any) -> None:
        with self._lock:
            for f in self.FIELDS:
                setattr(self, f, getattr(self, f) + getattr(other, f))

    def since(self, before: Usage) -> Usage:
        return Usage(**{f: getattr(self, f) - getattr(before, f) for f in self.FIELDS})

    def as_dict(self, model: str | None = None,
                prices: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {f: getattr(self, f) for f in self.FIELDS}
        if prices and model in prices:
            p_in, p_out = prices[model]
            out["cost"] = (self.prompt_tokens * p_in + self.completion_tokens * p_out) / 1e6
        return out

    def __repr__(self) -> str:
        return "Usage(" + ", ".join(f"{f}={getattr(self, f)}" for f in self.FIELDS) + ")"


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
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
# the re-ask of a looping answer also discourages repeats while decoding (OpenAI's frequency_penalty,
# a per-row penalty in HFJudge): on Gemma 3 270M, 0.5 ended every loop tried by hand
RUNAWAY_PENALTY = 0.5
RESTART_PROMPT = ("An earlier answer to this task repeated itself ({error}). List each item once, and "
                  "end the list when the text has nothing more to give.")
BREVITY = ("Your previous answer was cut off by the length limit. Keep every reason to one short "
           "sentence so that the whole JSON answer fits.")


def _restarted(messages: list[Message], error: JudgeRunawayError) -> list[Message]:
    """The first conversation again, its last user message told what went wrong: a model shown
    its own looping answer tends to loop again (Gemma 3 270M did, every time it was shown)."""
    out = [dict(m) for m in messages]
    note = RESTART_PROMPT.format(error=error)
    last = max((i for i, m in enumerate(out) if m.get("role") == "user"), default=None)
    if last is None:
        out.append({"role": "user", "content": note})
    else:
        out[last]["content"] = f"{out[last]['content']}\n\n{note}"
    return out


def _with_brevity(messages: list[Message]) -> list[Message]:
    """The conversation with the keep-it-short instruction added to its system message."""
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{BREVITY}"
    else:
        out.insert(0, {"role": "system", "content": BREVITY})
    return out


# the admission of the request being sent by this task: (budget, lease, requests sent under it)
_ADMITTED: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("judge_admitted", default=None)
_KEEP: Any = object()


@dataclasses.dataclass
class _Served:
    """The model a judge's server said it ran in its latest answer, one record shared by the judge
    and its copies (``share``, ``repeated``): a gate's copy that asks tells the judge it came from."""

    model: str | None = None


class Judge:
    """Base of the judge backends. Subclasses set ``backend`` and implement ``_acomplete``."""

    backend = "base"
    # the constructor's keyword options (kinds, checks, help): each backend declares its own
    Options: ClassVar[type[EngineOptions]] = JudgeOptions
    repeat = 0  # an audit's repeat number (``repeated``): part of the cache key when not 0
    # attributes a pickle leaves out (a loaded model, a pipeline): made again when first needed
    _transient: tuple[str, ...] = ()

    def __init__(self, model: str, concurrency: int = 1, cache: Any = None, max_parse_attempts: int = 3,
                 prices: dict[str, tuple[float, float]] | None = None,
                 first_answer_timeout: float | None = None, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None) -> None:
        check_options(JudgeOptions, {"concurrency": concurrency, "max_parse_attempts": max_parse_attempts,
                                     "first_answer_timeout": first_answer_timeout})
        self.model = model
        self.concurrency = concurrency
        self.first_answer_timeout = first_answer_timeout
        # the rate limits; a budget admits each request (None: no limit but ``concurrency``)
        self.rate_budget: Budget | None = (LocalBudget(requests_per_minute, tokens_per_minute)
                                      if requests_per_minute is not None or tokens_per_minute is not None else None)
        self.requests_per_minute = None if self.rate_budget is None else self.rate_budget.state.requests_per_minute
        self.tokens_per_minute = None if self.rate_budget is None else self.rate_budget.state.tokens_per_minute
        self.cache: AnswerCache | None = resolve_cache(cache)
        self.max_parse_attempts = max_parse_attempts
        self.prices = prices
        self.usage = Usage()
        self.mode = "text"  # how answers are asked for; an API backend may step down at run time

    # -- backend hooks ---------------------------------------------------------------------
    def settings(self, request: JudgeRequest) -> dict[str, Any]:
        """Generation settings that change an answer (part of the cache key)."""
        return {"schema": request.schema, "logprobs": request.logprobs, "top_logprobs": request.top_logprobs}

    def request_key(self, request: JudgeRequest) -> str:
        """The cache key of ``request`` for this judge (never its API key). A judge made by
        :meth:`repeated` adds its repeat number, so that each repeat of a request is asked and
        cached apart; a judge without one keys every request as before."""
        settings = self.settings(request)
        if self.repeat:
            settings = {**settings, "repeat": self.repeat}
        return cache_key(self.backend, self.model, request.messages, settings)

    def repeated(self, number: int) -> Judge:
        """A copy of this judge (:meth:`share`: the same budget and cache) that asks every request
        anew as repeat ``number`` (an audit's repeats: each a distinct cache key, so that neither
        the cache nor in-flight sharing folds them into one answer). 0: the plain judge."""
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise ValueError(f"repeat: {number!r} must be a non-negative integer")
        out = self.share()
        out.repeat = number
        return out

    def secrets(self) -> list[str]:
        """Strings that must never appear in what the judge reports (API keys)."""
        return []

    def redactor(self) -> Redactor:
        """The redactor of this judge's secrets and of the password in its URL (``base_url``,
        where the backend has one): built once per set of secrets."""
        secrets = [*self.secrets(), *url_credentials(getattr(self, "base_url", None))]
        cached = self.__dict__.get("_redactor")
        if cached is None or cached[0] != secrets:
            cached = (secrets, Redactor(secrets))
            self.__dict__["_redactor"] = cached
        redactor: Redactor = cached[1]
        return redactor

    def redact(self, text: str | None) -> str | None:
        """``text`` with every secret of this judge, in any spelling, and every URL credential
        replaced (``redaction.Redactor``)."""
        return self.redactor()(text)

    def describe(self) -> str:
        """The judge in an error message ("the judge at http://...")."""
        return f"the judge {self.model!r}"

    def default_budget(self) -> int | None:
        """The answer budget (tokens) when a request names none; None: the server's default."""
        return None

    def grow_budget(self, request: JudgeRequest, completion: Completion) -> int:
        """The answer budget for asking again after a cut-off answer: twice what was cut."""
        used = request.max_tokens or self.default_budget() or completion.completion_tokens or 512
        return max(2 * used, 256)

    @property
    def judge_mode(self) -> str:
        """How answers are asked for, as reported in results (``judge_mode``)."""
        return self.mode

    def _open(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """An async context manager giving the per-run context (an HTTP session...)."""
        return contextlib.nullcontext(None)

    async def _acomplete(self, messages: list[Message], request: JudgeRequest, ctx: Any,
                         tally: JudgeResult) -> Completion:  # pragma: no cover - abstract
        raise NotImplementedError

    def set_mode(self, mode: str, why: str) -> None:
        """Record a change of how answers are asked for, logged once per change."""
        if mode != self.mode:
            logger.warning("judge %s: %s -> %s (%s)", self.model, self.mode, mode, self.redact(why))
            self.mode = mode

    # -- engine ----------------------------------------------------------------------------
    async def _ajudge_one(self, request: JudgeRequest, session: JudgeSession) -> JudgeResult:
        key = self.request_key(request)
        inflight = session.inflight
        shared = inflight.get(key)
        if shared is not None:
            # the same request is already on its way: share its outcome instead of a second call
            first = await asyncio.shield(shared)
            copy = dataclasses.replace(first, requests=0, retries=0, cached=1, prompt_tokens=0,
                                       completion_tokens=0, cached_prompt_tokens=0)
            self.usage.add(copy)
            session.usage.add(copy)
            return copy
        future: asyncio.Future[JudgeResult] = asyncio.get_running_loop().create_future()
        inflight[key] = future
        try:
            result = await self._judge_new(request, key, session)
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved here, raised to whoever shares it
            raise
        finally:
            inflight.pop(key, None)
        future.set_result(result)
        return result

    async def _judge_new(self, request: JudgeRequest, key: str, session: JudgeSession) -> JudgeResult:
        result = JudgeResult(task=request.task)
        fatal: JudgeFatalError | None = None
        try:
            if self._from_cache(key, request, result):
                return result
            await self._ask(request, key, session, result)
        except JudgeFatalError as e:  # its message the backend's, redacted; its causes now too
            copy = e if e is session.fatal else self.redacted(e)
            fatal = copy if isinstance(copy, JudgeFatalError) else JudgeFatalError(str(copy))
        except JudgeError as e:
            result.error, result.cause = self.redact(str(e)), self.redacted(e)
        finally:  # (any other exception is a bug: it leaves with its traceback)
            self.usage.add(result)
            session.usage.add(result)
        if fatal is not None:  # raised here, outside the handler: the original is nobody's context
            session.fatal = session.fatal or fatal  # no request of this session is sent after it
            raise fatal
        return result

    def redacted(self, error: BaseException) -> BaseException:
        """A copy of ``error`` and its chain of causes with every secret of this judge removed."""
        return redacted_error(error, self.redact)

    def _from_cache(self, key: str, request: JudgeRequest, result: JudgeResult) -> bool:
        if self.cache is None:
            return False
        hit = self.cache.get(key)
        if hit is None:
            return False
        try:
            completion = Completion(**hit)
            # redacted again: an entry stored before a secret's spelling was known to the redactor
            text = self.redact(completion.text) or ""
            value = self._accept(text, request)
        except (TypeError, JudgeParseError):
            return False  # an entry this version cannot use: ask again
        result.value, result.text, result.cached = value, text, 1
        result.model = self.redact(completion.model) if isinstance(completion.model, str) else None
        result.logprobs = self.redactor().logprobs(completion.logprobs)
        return True

    @staticmethod
    def _accept(text: str, request: JudgeRequest) -> Any:
        value = parse_answer(text, request.schema)
        return request.check(value) if request.check is not None else value

    async def _ask(self, request: JudgeRequest, key: str, session: JudgeSession, result: JudgeResult) -> None:
        messages = list(request.messages)
        current = request
        grown = False
        parse_errors = 0
        while True:
            result.attempts += 1
            async with session.sem:
                if session.fatal is not None:
                    raise session.fatal
                # a JudgeError is this request's (kept by _judge_new); any other exception is a bug
                completion = await self._admitted(messages, current, session, result)
            # the freed slot's next request goes out before this answer is parsed and checked
            await asyncio.sleep(0)
            result.prompt_tokens += _count(completion.prompt_tokens)
            result.completion_tokens += _count(completion.completion_tokens)
            result.cached_prompt_tokens += _count(completion.cached_prompt_tokens)
            text = self.redact(completion.text if isinstance(completion.text, str) else "") or ""
            result.text, result.logprobs = text, self.redactor().logprobs(completion.logprobs)
            result.model = self._note_served(completion.model)
            if completion.truncated:
                limit = _count(completion.completion_tokens) or current.max_tokens or self.default_budget()
                if grown:
                    result.error = (f"the answer was cut off at {limit} tokens (the token limit), also "
                                    "when asked again with a larger budget; nothing of it was used")
                    return
                grown = True
                current = dataclasses.replace(current, max_tokens=self.grow_budget(current, completion))
                messages = _with_brevity(messages)
                continue
            try:
                value = self._accept(text, request)
            except JudgeParseError as e:
                parse_errors += 1
                if parse_errors >= self.max_parse_attempts:
                    result.error = f"invalid answer after {parse_errors} attempts: {e}"
                    result.cause = self.redacted(e)
                    return
                if isinstance(e, JudgeRunawayError):  # from the start, the looping answer not shown
                    messages = _restarted(request.messages if not grown else _with_brevity(request.messages), e)
                    current = dataclasses.replace(current, frequency_penalty=RUNAWAY_PENALTY)
                else:
                    messages = messages + [{"role": "assistant", "content": text},
                                           {"role": "user", "content": REPAIR_PROMPT.format(error=e)}]
                continue
            result.value = value
            if self.cache is not None:
                self._store(self.cache, key, completion, text, result.logprobs)
            return

    def _store(self, cache: AnswerCache, key: str, completion: Completion, text: str, logprobs: Any) -> None:
        """Cache the completion's fields with every text in them redacted: the answer, its logprob
        tokens (also a secret spread over several tokens) and its finish reason, all of which a
        server may have echoed the key into."""
        entry = dict(vars(completion), text=text, logprobs=logprobs)  # a shallow copy: no asdict walk
        if isinstance(completion.finish_reason, str):
            entry["finish_reason"] = self.redact(completion.finish_reason)
        entry["model"] = self.redact(completion.model) if isinstance(completion.model, str) else None
        cache.stage(key, entry)

    @property
    def served_model(self) -> str | None:
        """The model the server said it ran in its latest live answer to this judge or a copy of
        it (None: no answer yet, or a backend whose answers name none). A judge replayed
        strictly compares it with the recording's (``gates.replay``)."""
        served = self.__dict__.get("_served")
        return served.model if isinstance(served, _Served) else None

    def _note_served(self, model: Any) -> str | None:
        """Keep the model a live answer names (redacted: a server may echo anything there)."""
        if not isinstance(model, str) or not model:
            return None
        served = self.redact(model)
        self.__dict__.setdefault("_served", _Served()).model = served
        return served

    # -- rate limits (budget.py) -------------------------------------------------------------
    def estimate_tokens(self, messages: list[Message], request: JudgeRequest) -> int:
        """The tokens a request may cost, booked before it is sent (corrected by its usage)."""
        return estimate_tokens(messages, request.max_tokens or self.default_budget())

    async def _admitted(self, messages: list[Message], request: JudgeRequest, session: JudgeSession,
                        tally: JudgeResult) -> Completion:
        """``_acomplete`` (watched by ``session.alive``) admitted by the budget: a lease and a slot
        first, the lease back after with the tokens the answer cost. The wait for the budget is not
        the server's: ``first_answer_timeout`` counts from the first request admitted."""
        budget = self.rate_budget
        if budget is None or getattr(self, "batch", False) is True:  # a batch API queues on its own limits
            return await session.alive(self._acomplete(messages, request, session.ctx, tally))
        try:
            lease = await budget.acquire(self.estimate_tokens(messages, request))
        except BudgetError as e:  # the budget's server or actor is gone: no request can be admitted
            raise JudgeFatalError(str(e)) from None
        if not session.admitted:
            session.admitted = True
            if not session.answered:
                session.started = asyncio.get_running_loop().time()
        admitted = [budget, lease, 0, messages, request]
        token = _ADMITTED.set(admitted)
        used: int | None = None
        try:
            completion = await session.alive(self._acomplete(messages, request, session.ctx, tally))
            with contextlib.suppress(JudgeError):
                used = (_count(completion.prompt_tokens) + _count(completion.completion_tokens)) or None
            return completion
        finally:
            _ADMITTED.reset(token)
            with contextlib.suppress(BudgetError):  # a lease not given back runs out by itself
                await asyncio.shield(budget.release(lease, used))

    async def _sending(self) -> None:
        """Called by a backend before each HTTP request it sends: the first is the one the
        budget admitted, each further one (a retry, a step down) waits for a slot of its own."""
        admitted = _ADMITTED.get()
        if admitted is None or admitted[0] is not self.rate_budget:  # (another judge's, up the call stack)
            return
        admitted[2] += 1
        if admitted[2] > 1:
            budget, lease, _, messages, request = admitted
            try:
                await budget.again(lease, self.estimate_tokens(messages, request))
            except BudgetError as e:
                raise JudgeFatalError(str(e)) from None

    def _pause_budget(self, seconds: float | None) -> None:
        """A server asked to wait ``seconds`` (Retry-After): every user of the budget waits."""
        if seconds is not None and seconds > 0 and self.rate_budget is not None:
            with contextlib.suppress(BudgetError):  # the budget gone: the next admission says so
                self.rate_budget.pause(seconds)

    def limits(self) -> dict[str, Any]:
        """``requests_per_minute``, ``tokens_per_minute`` and ``concurrency``: what a cluster
        budget for this judge holds for the sum of its workers (``RayBudget.for_judge``)."""
        return {"requests_per_minute": self.requests_per_minute, "tokens_per_minute": self.tokens_per_minute,
                "concurrency": self.concurrency}

    def share(self, budget: Any = _KEEP, cache: Any = _KEEP) -> Judge:
        """A copy of this judge that admits its requests through ``budget`` (a ``Budget``:
        ``RayBudget``, ``RemoteBudget``...; None: no limit but ``concurrency``) and keeps its
        answers in ``cache`` (anything ``cache=`` takes: ``"dir:/shared/path"``, a
        ``DirectoryCache``...). What is not given is kept. The copy counts its own usage."""
        if budget is not _KEEP and budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget: expected a textgen_metrics Budget or None, got {type(budget).__name__}")
        self.__dict__.setdefault("_served", _Served())  # the copy's answers tell this judge what it served
        out = object.__new__(type(self))  # a shallow copy in this process: its model, locks and cache shared
        out.__dict__.update(self.__dict__)
        out.__dict__.pop("_redactor", None)
        out.usage = Usage()
        if budget is not _KEEP:
            out.rate_budget = budget
        if cache is not _KEEP:
            out.cache = resolve_cache(cache)
        return out

    def __getstate__(self) -> dict[str, Any]:
        """A pickle for another process (a Ray or Spark worker): no lock, no loaded model, no
        cached redactor; the SQLite cache as its path, the budget as its address (or, a
        ``LocalBudget``, its limits). The API key travels (the worker needs it) and is never
        written anywhere by the package."""
        state = dict(self.__dict__)
        state.pop("_redactor", None)
        for name in self._transient:
            if name in state:
                state[name] = None
        for name, value in list(state.items()):
            if isinstance(value, _LOCKS):
                state[name] = _Lock(isinstance(value, _RLOCK))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            if isinstance(value, _Lock):
                state[name] = threading.RLock() if value.reentrant else threading.Lock()
        self.__dict__.update(state)

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[JudgeSession]:
        """A context for many requests asked in any order (multi-stage metrics): all share the
        backend context and the ``concurrency`` limit. ``await session.ask(request)``."""
        sem = asyncio.Semaphore(self.concurrency)
        probe: asyncio.Task[None] | None = None
        try:
            async with self._open() as ctx:
                session = JudgeSession(self, ctx, sem)
                if self.first_answer_timeout is not None:  # a server busy with a long queue still says so
                    probe = asyncio.ensure_future(self._probe_alive(session))
                yield session
        finally:
            if probe is not None:
                probe.cancel()
                await asyncio.gather(probe, return_exceptions=True)
            if self.cache is not None:
                self.cache.flush()  # the answers staged during the run (also when it stops early)

    async def _probe_alive(self, session: JudgeSession) -> None:
        with contextlib.suppress(Exception):  # a hint only: whatever it raises, the requests' answers tell
            if await self._probe(session.ctx):
                session.answered = True

    async def _probe(self, ctx: Any) -> bool:
        """Whether the backend answers at all (any answer), asked once per run beside the requests
        when ``first_answer_timeout`` is set: an HTTP server busy with a long queue of requests
        answers a cheap request at once, a server that accepts connections and never answers does
        not. False: no such probe (the requests' own answers tell)."""
        return False

    async def ajudge(self, requests: list[JudgeRequest]) -> list[JudgeResult]:
        """Answer every request, ``concurrency`` calls in flight. A ``JudgeFatalError`` stops
        every request and is raised."""
        requests = list(requests)
        async with self.session() as session:
            return await gather_or_cancel([session.ask(r) for r in requests])

    def judge(self, requests: list[JudgeRequest]) -> list[JudgeResult]:
        """Sync ``ajudge``."""
        return run_sync(self.ajudge(requests))

    def usage_dict(self, usage: Usage | None = None) -> dict[str, Any]:
        return (usage or self.usage).as_dict(self.model, self.prices)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, concurrency={self.concurrency})"


_RLOCK = type(threading.RLock())
_LOCKS = (type(threading.Lock()), _RLOCK)


class _Lock:
    """A lock in a pickled judge: made again where the judge is loaded."""

    def __init__(self, reentrant: bool) -> None:
        self.reentrant = reentrant


def _count(value: Any) -> int:
    """A token count as a backend gave it (an int, or a string of digits from a user's client)."""
    if isinstance(value, bool):
        raise JudgeError(f"token count {value!r} is not a number")
    if isinstance(value, int):
        return value
    if value is None:
        return 0
    try:
        return int(float(str(value).strip()))
    except ValueError:
        raise JudgeError(f"token count {value!r} is not a number") from None


async def gather_or_cancel(aws: list[Awaitable[T]]) -> list[T]:
    """``asyncio.gather`` that cancels the rest as soon as one raises, then raises that error."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    if not tasks:
        return []
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    failed = next((t for t in tasks if t.done() and not t.cancelled() and t.exception() is not None), None)
    if failed is not None:
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for t in tasks:  # retrieve every exception so that none is reported as never retrieved
            if t.done() and not t.cancelled():
                t.exception()
        raise failed.exception()  # type: ignore[misc]
    return [t.result() for t in tasks]


class JudgeSession:
    """Requests asked within one ``Judge.session()``: one backend context, one limit."""

    __slots__ = ("judge", "ctx", "sem", "inflight", "fatal", "answered", "started", "usage", "admitted")

    def __init__(self, judge: Judge, ctx: Any, sem: asyncio.Semaphore) -> None:
        self.judge, self.ctx, self.sem = judge, ctx, sem
        self.usage = Usage()  # what the requests of this session cost (the judge's ``usage``: of all its sessions)
        self.inflight: dict[str, asyncio.Future[JudgeResult]] = {}
        self.fatal: JudgeFatalError | None = None  # once set, nothing more is sent
        self.answered = False  # a backend call has returned an answer (of any worth)
        self.started = asyncio.get_running_loop().time()
        self.admitted = False  # a request has been admitted by the judge's rate budget (if it has one)

    async def ask(self, request: JudgeRequest) -> JudgeResult:
        return await self.judge._ajudge_one(request, self)

    async def alive(self, call: Coroutine[Any, Any, T]) -> T:
        """The backend ``call``'s outcome; with ``first_answer_timeout``, a run that has had no
        answer that long after it began stops here (``JudgeFatalError``)."""
        limit = self.judge.first_answer_timeout
        if limit is None or self.answered:
            value = await call
        else:
            task = asyncio.ensure_future(call)
            remaining = self.started + limit - asyncio.get_running_loop().time()
            done, _ = await asyncio.wait({task}, timeout=max(remaining, 0.0))
            if not done and not self.answered:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise JudgeFatalError(self.judge.redact(
                    f"{self.judge.describe()} has answered no request within {limit:g} s: check that the server "
                    "is running and serving the model") or "")
            value = await task  # another request's answer came meanwhile: the server is alive, wait on
        self.answered = True
        return value
