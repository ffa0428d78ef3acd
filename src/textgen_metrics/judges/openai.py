"""A judge over any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, TGI,
LM Studio, llama.cpp): asyncio + aiohttp, ``concurrency`` requests in flight.

- Retries with exponential back-off and jitter on 429 (honouring Retry-After), 5xx, time-outs
  and dropped connections, up to ``max_retries``.
- Structured output: ``response_format`` of type ``json_schema`` (strict); a server that
  refuses it (400/422) is asked with ``json_object``, then with plain text, and the judge
  remembers what the server accepts.
- Token log-probabilities when a request asks for them (G-Eval weighting).
- The API key goes into the Authorization header only: never into repr, errors, logs, the
  cache key or results.
"""

import asyncio
import contextlib
import email.utils
import json
import os
import random
import time

from .base import Completion, Judge, JudgeError

__all__ = ["OpenAIJudge"]

_FORMATS = ("json_schema", "json_object", "text")


def _retry_after(headers):
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
            return max(0.0, when - time.time())
        except (TypeError, ValueError):
            return None


def _strict_schema(schema):
    """OpenAI's strict mode wants every object closed and every property required."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if out.get("type") == "object":
        props = {k: _strict_schema(v) for k, v in out.get("properties", {}).items()}
        out["properties"] = props
        out["required"] = list(props)
        out["additionalProperties"] = False
    if "items" in out:
        out["items"] = _strict_schema(out["items"])
    return out


class OpenAIJudge(Judge):
    backend = "openai"

    def __init__(self, model, base_url=None, api_key=None, temperature=0.0, seed=None,
                 max_tokens=None, timeout=60, max_retries=5, concurrency=8, cache=None,
                 max_parse_attempts=3, prices=None, backoff=0.5, max_backoff=30.0):
        super().__init__(model, concurrency=concurrency, cache=cache,
                         max_parse_attempts=max_parse_attempts, prices=prices)
        if not isinstance(model, str) or not model:
            raise ValueError("model: give the model name the server serves, e.g. 'gpt-4o-mini'")
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.__api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.response_format_mode = _FORMATS[0]

    def __repr__(self):
        return f"OpenAIJudge(model={self.model!r}, base_url={self.base_url!r}, concurrency={self.concurrency})"

    def settings(self, request):
        s = super().settings(request)
        s.update(base_url=self.base_url, temperature=self.temperature, seed=self.seed,
                 max_tokens=self.max_tokens)
        return s

    def _open(self):
        return _Session(self.timeout)

    def _body(self, messages, request):
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.seed is not None:
            body["seed"] = self.seed
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if request.logprobs:
            body["logprobs"] = True
            if request.top_logprobs:
                body["top_logprobs"] = request.top_logprobs
        mode = self.response_format_mode
        if request.schema is not None and mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.name, "strict": True, "schema": _strict_schema(request.schema)}}
        elif request.schema is not None and mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _delay(self, attempt, retry_after=None):
        if retry_after is not None:
            return min(retry_after, self.max_backoff * 4)
        base = min(self.max_backoff, self.backoff * (2 ** attempt))
        return base * (0.5 + random.random() / 2)  # jitter

    async def _acomplete(self, messages, request, session):
        import aiohttp

        url = f"{self.base_url}/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self.__api_key:
            headers["Authorization"] = f"Bearer {self.__api_key}"
        last = "no attempt"
        attempt = 0
        while attempt <= self.max_retries:
            body = self._body(messages, request)
            try:
                async with session.post(url, json=body, headers=headers) as resp:
                    text = await resp.text()
                    status = resp.status
                    if status == 200:
                        try:
                            return _completion(json.loads(text))
                        except (ValueError, KeyError, IndexError, TypeError):
                            last = "the server sent a response that is not a chat completion"
                    elif status in (400, 422) and "response_format" in body:
                        # the server refuses this kind of structured output: step down, retry
                        i = _FORMATS.index(self.response_format_mode)
                        self.response_format_mode = _FORMATS[min(i + 1, len(_FORMATS) - 1)]
                        continue
                    elif status == 429 or status >= 500:
                        last = f"HTTP {status}"
                        if attempt < self.max_retries:
                            await asyncio.sleep(self._delay(attempt, _retry_after(resp.headers)))
                        attempt += 1
                        continue
                    else:
                        raise JudgeError(f"{self.base_url} answered HTTP {status}: {_short(text)}")
            except (asyncio.TimeoutError, aiohttp.ClientError) as e:
                last = f"{type(e).__name__}: {_short(str(e)) or 'timed out'}"
            if attempt < self.max_retries:
                await asyncio.sleep(self._delay(attempt))
            attempt += 1
        raise JudgeError(f"{self.base_url}: no usable answer after {self.max_retries + 1} tries ({last})")


def _short(text, n=200):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n] + "..."


def _completion(payload):
    choice = payload["choices"][0]
    content = choice["message"].get("content")
    if content is None:
        content = ""
    usage = payload.get("usage") or {}
    logprobs = None
    lp = choice.get("logprobs")
    if isinstance(lp, dict) and lp.get("content"):
        logprobs = [{"token": t.get("token"), "logprob": t.get("logprob"),
                     "top_logprobs": [{"token": x.get("token"), "logprob": x.get("logprob")}
                                      for x in (t.get("top_logprobs") or [])]}
                    for t in lp["content"]]
    return Completion(text=content, prompt_tokens=int(usage.get("prompt_tokens") or 0),
                      completion_tokens=int(usage.get("completion_tokens") or 0),
                      finish_reason=choice.get("finish_reason"), logprobs=logprobs)


class _Session(contextlib.AbstractAsyncContextManager):
    def __init__(self, timeout):
        self.timeout = timeout
        self.session = None

    async def __aenter__(self):
        import aiohttp

        self.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            connector=aiohttp.TCPConnector(limit=0),
        )
        return self.session

    async def __aexit__(self, *exc):
        await self.session.close()
        return False
