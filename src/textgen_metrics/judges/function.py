"""A judge from any ``messages -> str`` function (sync or async): the user's own client.

The function may also return a dict with ``text`` (or ``content``) and, optionally,
``prompt_tokens``, ``completion_tokens``, ``finish_reason`` and ``logprobs``.
"""

import asyncio
import concurrent.futures
import contextlib
import inspect

from .base import Completion, Judge, JudgeError

__all__ = ["CallableJudge"]


class CallableJudge(Judge):
    backend = "callable"

    def __init__(self, fn, concurrency=1, cache=None, max_parse_attempts=3, model=None, prices=None):
        if not callable(fn):
            raise TypeError(f"judge: expected a callable messages -> str, got {type(fn).__name__}")
        name = model or getattr(fn, "model", None) or getattr(fn, "__qualname__", None) or type(fn).__name__
        super().__init__(str(name), concurrency=concurrency, cache=cache,
                         max_parse_attempts=max_parse_attempts, prices=prices)
        self.fn = fn

    @contextlib.asynccontextmanager
    async def _open(self):
        if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(getattr(self.fn, "__call__", None)):
            yield None
        else:
            with concurrent.futures.ThreadPoolExecutor(self.concurrency) as pool:
                yield pool

    async def _acomplete(self, messages, request, pool):
        try:
            if pool is None:
                out = await self.fn(messages)
            else:
                out = await asyncio.get_running_loop().run_in_executor(pool, self.fn, messages)
        except Exception as e:  # the user's client failed: this request fails, others go on
            raise JudgeError(f"judge function raised {type(e).__name__}: {e}") from e
        if isinstance(out, Completion):
            return out
        if isinstance(out, dict):
            text = out.get("text", out.get("content"))
            return Completion(text=text if isinstance(text, str) else "",
                              prompt_tokens=int(out.get("prompt_tokens") or 0),
                              completion_tokens=int(out.get("completion_tokens") or 0),
                              finish_reason=out.get("finish_reason"), logprobs=out.get("logprobs"))
        if not isinstance(out, str):
            raise JudgeError(f"judge function returned {type(out).__name__}, expected str")
        return Completion(text=out)
