"""A judge from any ``messages -> str`` function (sync or async): the user's own client.

The function may also return a dict with ``text`` (or ``content``) and, optionally,
``prompt_tokens``, ``completion_tokens``, ``finish_reason`` and ``logprobs``. A function that
accepts a ``task`` keyword (or ``**kwargs``) is also given the request's stable task id, e.g.
``"faithfulness/claims"``: the way to answer by the kind of question rather than by the prompt's
wording. A function that accepts ``max_tokens`` is given the answer budget when the engine sets
one (after a cut-off answer, asked again with a larger budget: twice ``max_tokens``, the budget
the function uses by default when the judge is told it), else None. Whatever the function
raises or returns that is not an answer fails that request only, except ``JudgeFatalError``:
raised by the function, it stops the run at once (for failures that would repeat for every
request, such as rejected credentials; see ``judges.bedrock``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

from .base import Completion, Judge, JudgeError, JudgeFatalError, JudgeRequest, JudgeResult, Message
from .options import CallableOptions

__all__ = ["CallableJudge"]


def _takes(fn: Callable[..., Any], name: str) -> bool:
    """``fn`` accepts the keyword ``name`` (by name, or through ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
               or p.kind == p.VAR_KEYWORD for p in params)


def _takes_task(fn: Callable[..., Any]) -> bool:
    return _takes(fn, "task")


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


class CallableJudge(Judge):
    backend = "callable"
    Options = CallableOptions

    def __init__(self, fn: Callable[..., Any], concurrency: int = 1, cache: Any = None, max_parse_attempts: int = 3,
                 model: str | None = None, prices: dict[str, tuple[float, float]] | None = None,
                 max_tokens: int | None = None, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"judge: expected a callable messages -> str, got {type(fn).__name__}")
        name = model or getattr(fn, "model", None) or getattr(fn, "__qualname__", None) or type(fn).__name__
        super().__init__(str(name), concurrency=concurrency, cache=cache,
                         max_parse_attempts=max_parse_attempts, prices=prices,
                         requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute)
        self.fn = fn
        self._takes_task = _takes_task(fn)
        self._takes_budget = _takes(fn, "max_tokens")
        self.max_tokens = max_tokens

    def default_budget(self) -> int | None:
        """The budget the function answers with when given none (``max_tokens``): a cut-off answer
        is asked again with twice it."""
        return self.max_tokens

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[concurrent.futures.ThreadPoolExecutor | None]:
        if _is_async(self.fn):
            yield None
        else:
            with concurrent.futures.ThreadPoolExecutor(self.concurrency) as pool:
                yield pool

    async def _acomplete(self, messages: list[Message], request: JudgeRequest,
                         pool: concurrent.futures.ThreadPoolExecutor | None, tally: JudgeResult) -> Completion:
        keywords: dict[str, Any] = {}
        if self._takes_task:
            keywords["task"] = request.task
        if self._takes_budget:
            keywords["max_tokens"] = request.max_tokens
        call = functools.partial(self.fn, messages, **keywords)
        tally.sent()
        try:
            if pool is None:
                out = await call()
            else:
                out = await asyncio.get_running_loop().run_in_executor(pool, call)
        except JudgeFatalError as e:  # the function says no request can succeed: stop the run
            raise JudgeFatalError(self.redact(str(e)) or type(e).__name__) from None
        except Exception as e:  # the user's client failed: this request fails, others go on
            raise JudgeError(f"judge function raised {type(e).__name__}: {e}") from e
        if isinstance(out, Completion):
            return out
        if isinstance(out, dict):
            text = out.get("text", out.get("content"))
            if not isinstance(text, str):
                raise JudgeError(f"judge function returned a dict whose text is {type(text).__name__}, not str")
            return Completion(text=text, prompt_tokens=out.get("prompt_tokens") or 0,
                              completion_tokens=out.get("completion_tokens") or 0,
                              finish_reason=out.get("finish_reason"), logprobs=out.get("logprobs"))
        if not isinstance(out, str):
            raise JudgeError(f"judge function returned {type(out).__name__}, expected str")
        return Completion(text=out)
