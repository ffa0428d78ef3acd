"""A judge over any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, TGI,
LM Studio, llama.cpp): asyncio + aiohttp, ``concurrency`` requests in flight.

- Retries with exponential back-off and jitter on 429 (honouring Retry-After), 5xx, time-outs,
  dropped connections and bodies that are not a chat completion, up to ``max_retries``.
- Failures that would repeat for every request stop the run at once (``JudgeFatalError``), with
  no retry: no API key for OpenAI's own server, a refused connection or an unknown host,
  HTTP 401/403 (credentials), HTTP 404 (the model or the URL).
- Error bodies are read, not guessed, whatever the status (400, 413, 422 or a 5xx): a refusal of
  the structured-output dialect steps down to the next one (below); a rejected ``temperature``
  is sent again without it; a prompt longer than the model's context is that request's error;
  any other 4xx is that request's error too, any other 5xx a fault retried with back-off.
- Structured output in the dialect the server speaks, strongest first (``DIALECTS``):

  =====================  ================================================  =========================
  ``json_schema``        ``response_format: {"type": "json_schema", ...}``  OpenAI (strict), vLLM,
                         (strict)                                           llama.cpp's llama-server,
                                                                            Ollama, LM Studio
  ``json_object_schema`` ``response_format: {"type": "json_object",         llama-cpp-python,
                         "schema": ...}``                                   llama.cpp
  ``guided_json``        ``guided_json: ...`` beside the messages           vLLM (older releases)
  ``json_object``        ``response_format: {"type": "json_object"}``       JSON mode, no schema
  ``text``               nothing: the prompt alone asks for JSON            any server
  =====================  ================================================  =========================

  A server's refusal of a dialect (its error message names the response format, e.g.
  llama-cpp-python's HTTP 500 "Input should be 'text' or 'json_object'") is never retried as a
  fault: the judge moves to the next dialect for the rest of its life, logs it once, and reports
  the dialect in use as ``judge_mode``; a later judge for the same server in the same process
  (a judge string makes one per call) starts at that dialect. ``response_format=`` fixes the dialect instead; a server
  that refuses a fixed dialect stops the run at once (``JudgeFatalError``).
- Token log-probabilities when a request asks for them (G-Eval weighting).
- The API key goes into the Authorization header only; it is removed from every error, log
  line, result and cache entry, also when a server echoes it in a body.
- Each request carries its task id in the ``X-Textgen-Task`` header (for proxies, logs and the
  test servers; servers ignore it).
- A base URL with a query or a fragment is refused: the path appended to it (``/chat/completions``)
  would land inside them. ``url_policy`` (a ``judges.http.URLPolicy``: a URL a Space's visitor
  typed) follows no redirect (a 3xx stops the run), quotes no reply body in an error (its HTTP
  status only) and, with ``public_only``, connects to public addresses only. ``allowance`` (an
  object with ``request()``, which raises ``JudgeFatalError`` once no request is left, and
  ``tokens(n)``): each request sent is booked with it, and the tokens of each answer.

Other wire formats subclass this one and override its hooks (``_url``, ``_headers``, ``_body``,
``_completion``, ``_fatal``, ``_retryable``, ``_retry_after``, ``_sent_mode``, ``_out_of_quota``):
Azure OpenAI and Gemini's OpenAI-compatible endpoint here, Anthropic's Messages API in
``judges/anthropic.py``. The transport loop, the retries and the reading of errors are shared.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import random
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any, ClassVar

from .base import Completion, Judge, JudgeError, JudgeFatalError, JudgeRequest, JudgeResult, Message, logger
from .batch import AzureBatchAPI, BatchAPI, BatchContext, BatchRun, OpenAIBatchAPI
from .http import URLPolicy, _error_body, _error_message, _HTTPClient, _short, transport_failure
from .options import AzureOptions, EngineOptions, OpenAIOptions
from .redaction import mask_url_credentials
from .schema import define_once

__all__ = ["OpenAIJudge", "AzureOpenAIJudge", "GeminiJudge", "classify_400", "DIALECTS"]

# the structured-output dialects, strongest first (see the module docstring)
DIALECTS = ("json_schema", "json_object_schema", "guided_json", "json_object", "text")
# what a hosted API speaks (its own format and OpenAI's JSON mode): no local-server dialects
_HOSTED = ("json_schema", "json_object", "text")
# (backend, base_url) -> the dialect that server was found to speak in this process: a new judge
# for the same server (a judge string makes one per call) starts there, not at a refusal
_LEARNED: dict[tuple[str, str], str] = {}


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (OpenAI, Azure) or ``Retry-After`` (seconds or
    an HTTP date); None without either."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
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


def _error_object(text: str) -> dict[str, Any] | None:
    """The error object of an error body: ``{"error": {...}}`` (OpenAI, Azure, Anthropic) or
    Gemini's ``[{"error": {...}}]``; None when the body holds none."""
    payload = _error_body(text)
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        error: dict[str, Any] = payload["error"]
        return error
    return None


def _retry_info(text: str) -> float | None:
    """Google's ``RetryInfo`` in an error body (``"retryDelay": "32s"``), in seconds."""
    err = _error_object(text) or {}
    for detail in err.get("details") or []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = str(detail.get("retryDelay", "")).strip()
            try:
                return max(0.0, float(delay.rstrip("s")))
            except ValueError:
                return None
    return None


_UNSTRICT = ("maxLength", "minLength", "maxItems")  # bounds OpenAI's strict mode does not take


def _strict_schema(schema: Any, bounds: bool = False) -> Any:
    """OpenAI's strict mode wants every object closed and every property required; length bounds
    are kept only with ``bounds`` (the dialects of llama.cpp and vLLM, whose grammars hold a model
    to them)."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if bounds or k not in _UNSTRICT}
    if out.get("type") == "object":
        props = {k: _strict_schema(v, bounds) for k, v in out.get("properties", {}).items()}
        out["properties"] = props
        out["required"] = list(props)
        out["additionalProperties"] = False
    if "items" in out:
        out["items"] = _strict_schema(out["items"], bounds)
    return out


def classify_400(message: str) -> str:
    """What an HTTP 400/422 is about: ``"auth"`` (a key the server rejects: Gemini answers 400
    ``API key not valid``), ``"format"`` (the response format, or Anthropic's forced tool),
    ``"temperature"``, ``"context"`` (the prompt is too long) or ``"other"``."""
    m = message.lower()
    if any(w in m for w in ("api key not valid", "api_key_invalid", "invalid api key", "invalid x-api-key",
                            "incorrect api key")):
        return "auth"
    if any(w in m for w in ("context length", "context_length", "maximum context", "context window",
                            "too many tokens", "prompt is too long", "input is too long", "too long")):
        return "context"
    if "temperature" in m:
        return "temperature"
    if any(w in m for w in ("response_format", "response format", "json_schema", "json schema",
                            "structured output", "guided_json", "json_object", "json mode", "response_schema",
                            "responseschema", "tool_choice", "tool use", "tools are not supported")):
        return "format"
    return "other"


class OpenAIJudge(Judge):
    backend = "openai"
    Options: ClassVar[type[EngineOptions]] = OpenAIOptions
    env_key = "OPENAI_API_KEY"
    env_url: str | None = "OPENAI_BASE_URL"
    default_url = "https://api.openai.com/v1"
    key_hosts: tuple[str, ...] = ("api.openai.com",)  # servers that answer nothing without a key
    modes: tuple[str, ...] = DIALECTS  # how answers are asked for, best first; a refusal steps down
    batch_api: type[BatchAPI] | None = OpenAIBatchAPI  # the provider's batch wire format (batch=True)

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 temperature: float | None = 0.0, seed: int | None = None, max_tokens: int | None = None,
                 timeout: float = 60, max_retries: int = 5, concurrency: int = 8, cache: Any = None,
                 max_parse_attempts: int = 3, prices: dict[str, tuple[float, float]] | None = None,
                 backoff: float = 0.5, max_backoff: float = 30.0, response_format: str = "auto",
                 first_answer_timeout: float | None = None, batch: bool = False, batch_retry: str = "batch",
                 batch_poll_interval: float = 10.0, batch_max_poll_interval: float = 300.0,
                 batch_window: float = 0.5, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None, url_policy: URLPolicy | None = None,
                 allowance: Any = None) -> None:
        super().__init__(model, concurrency=concurrency, cache=cache, max_parse_attempts=max_parse_attempts,
                         prices=prices, first_answer_timeout=first_answer_timeout,
                         requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute)
        self._batch_options(batch, batch_retry, batch_poll_interval, batch_max_poll_interval, batch_window)
        if not isinstance(model, str) or not model:
            raise ValueError("model: give the model name the server serves, e.g. 'gpt-4o-mini'")
        if response_format != "auto":
            if response_format not in type(self).modes:
                raise ValueError(f"response_format: {response_format!r} is not one of "
                                 f"{['auto', *type(self).modes]}")
            self.modes = (response_format,)  # fixed: a refusal stops the run instead of stepping down
        self.response_format = response_format
        env_url = os.environ.get(self.env_url) if self.env_url else None
        self.base_url = _checked_base_url((base_url or env_url or self.default_url).rstrip("/"))
        if url_policy is not None and not isinstance(url_policy, URLPolicy):
            raise ValueError(f"url_policy: expected a textgen_metrics.judges.http.URLPolicy, got "
                             f"{type(url_policy).__name__}")
        if url_policy is not None and batch:
            raise ValueError("url_policy: not with batch=True (the batch API is the provider's own)")
        self.url_policy = url_policy
        self.allowance = allowance
        self.__api_key = api_key if api_key is not None else os.environ.get(self.env_key)
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        if not self.__api_key and host in self.key_hosts:
            raise JudgeFatalError(f"no API key for {self.base_url}: set {self.env_key} or pass api_key=")
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.mode = _LEARNED.get((self.backend, self.base_url), self.modes[0])
        if self.mode not in self.modes:
            self.mode = self.modes[0]
        self.send_temperature = temperature is not None

    def _batch_options(self, batch: Any, retry: Any, poll: Any, max_poll: Any, window: Any) -> None:
        """Batch mode (``judges/batch.py``): the provider's batch API at half the price."""
        if not isinstance(batch, bool):
            raise ValueError(f"batch: {batch!r} must be True or False")
        if batch and self.batch_api is None:
            raise ValueError(f"batch: {type(self).__name__} has no batch API; batch=True is for OpenAIJudge, "
                             "AzureOpenAIJudge and AnthropicJudge")
        if retry not in ("batch", "live"):
            raise ValueError(f"batch_retry: {retry!r} is not one of ['batch', 'live']")
        for name, value in (("batch_poll_interval", poll), ("batch_max_poll_interval", max_poll),
                            ("batch_window", window)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name}: {value!r} must be a number of seconds > 0")
        if batch and self.first_answer_timeout is not None:
            raise ValueError("first_answer_timeout: not with batch=True (a batch may take up to 24 h)")
        self.batch, self.batch_retry = batch, retry
        self.batch_poll_interval, self.batch_max_poll_interval = float(poll), float(max_poll)
        self.batch_window = float(window)
        self.live_concurrency = self.concurrency  # the live requests' limit (batch_retry="live")
        if batch:  # every request of a stage waits in the batch at once
            self.concurrency = 1 << 30

    @property
    def _api_key(self) -> str | None:
        """The API key, for the wire hooks of subclasses (never reported: see ``secrets``)."""
        return self.__api_key

    @property
    def response_format_mode(self) -> str:
        return self.mode

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(model={self.model!r}, base_url={mask_url_credentials(self.base_url)!r}, "
                f"concurrency={self.concurrency})")

    def secrets(self) -> list[str]:
        return [self.__api_key] if self.__api_key else []

    def describe(self) -> str:
        return f"the judge at {self.base_url} (model {self.model!r})"

    def settings(self, request: JudgeRequest) -> dict[str, Any]:
        s = super().settings(request)
        s.update(base_url=self.base_url, temperature=self.temperature, seed=self.seed,
                 max_tokens=self.max_tokens)
        return s

    def default_budget(self) -> int | None:
        return self.max_tokens

    @property
    def judge_mode(self) -> str:
        dropped = self.temperature is not None and not self.send_temperature
        return self.mode + (", temperature not sent" if dropped else "") + (", batch" if self.batch else "")

    def _open(self) -> contextlib.AbstractAsyncContextManager[Any]:
        if self.batch and self.batch_api is not None:
            return BatchContext(self, self.batch_api(self))
        return _HTTPClient(self.timeout, self.url_policy)

    # -- the wire format (Azure, Gemini and Anthropic override these) ------------------------
    def _url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _headers(self, request: JudgeRequest) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "X-Textgen-Task": request.task}
        if self.__api_key:
            headers["Authorization"] = f"Bearer {self.__api_key}"
        return headers

    def _body(self, messages: list[Message], request: JudgeRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.send_temperature:
            body["temperature"] = self.temperature
        if self.seed is not None:
            body["seed"] = self.seed
        budget = request.max_tokens or self.max_tokens
        if budget is not None:
            body["max_tokens"] = budget
        if request.frequency_penalty:
            body["frequency_penalty"] = request.frequency_penalty
        if request.logprobs:
            body["logprobs"] = True
            if request.top_logprobs:
                body["top_logprobs"] = request.top_logprobs
        if request.schema is not None:
            mode = self.mode
            if mode == "json_schema":
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": request.schema_name, "strict": True, "schema": define_once(_strict_schema(request.schema))}}
            elif mode == "json_object_schema":
                body["response_format"] = {"type": "json_object", "schema": _strict_schema(request.schema, True)}
            elif mode == "guided_json":
                body["guided_json"] = _strict_schema(request.schema, True)
            elif mode == "json_object":
                body["response_format"] = {"type": "json_object"}
        return body

    def _sent_mode(self, body: dict[str, Any]) -> str | None:
        """The structured-output dialect a request body asks for (None: plain text)."""
        rf = body.get("response_format")
        if isinstance(rf, dict):
            kind = rf.get("type")
            return "json_object_schema" if kind == "json_object" and "schema" in rf else kind
        return "guided_json" if "guided_json" in body else None

    def _completion(self, payload: Any) -> Completion:
        return _completion(payload)

    def _retryable(self, status: int) -> bool:
        """Statuses worth sending again after a pause: rate limits and server errors."""
        return status == 429 or status >= 500

    def _retry_after(self, status: int, headers: Mapping[str, str], text: str) -> float | None:
        """How long the server asks us to wait before the next try (None: back off as usual)."""
        wait = _retry_after(headers)
        return wait if wait is not None else _retry_info(text)

    def _out_of_quota(self, status: int, text: str) -> str | None:
        """A 429 that no retry can help (OpenAI's ``insufficient_quota``): its message, else None."""
        err = _error_object(text) or {}
        if status == 429 and "insufficient_quota" in (str(err.get("code")), str(err.get("type"))):
            return str(err.get("message") or "insufficient quota")
        return None

    def _refusal(self, body: dict[str, Any], text: str) -> bool:
        """A 5xx that is no fault: the server refuses the request's dialect (llama-cpp-python
        answers an unknown ``response_format`` with HTTP 500) or its prompt's length. Read as a
        400 is, never retried."""
        kind = classify_400(_error_message(text))
        return (kind == "format" and self._sent_mode(body) is not None) or kind == "context"

    def _step_down(self, sent: str, why: str) -> None:
        """Ask in the next dialect from now on, the server having refused ``sent``."""
        if sent not in self.modes or sent == self.modes[-1]:
            fixed = f"response_format={self.response_format!r}" if self.response_format != "auto" else sent
            raise JudgeFatalError(self.redact(
                f"{self.base_url} refuses the structured-output dialect {sent!r} ({why}); "
                + (f"{fixed} was fixed: pass response_format='auto' to step down to what the server speaks"
                   if self.response_format != "auto" else "and no weaker dialect is left")))
        if self.mode == sent:  # requests in flight together step down once
            self.set_mode(self.modes[self.modes.index(sent) + 1], why)
            _LEARNED[(self.backend, self.base_url)] = self.mode

    async def _probe(self, session: Any) -> bool:
        """A GET of the chat URL: any HTTP answer (405, 404...) shows a server that answers."""
        import aiohttp

        async with session.get(self._url(), headers=self._headers(JudgeRequest([], task="probe")),
                               timeout=aiohttp.ClientTimeout(total=self.first_answer_timeout),
                               allow_redirects=self.url_policy is None) as resp:
            await resp.read()
            return True

    # -- transport ---------------------------------------------------------------------------
    def _said(self, text: str, n: int = 300) -> str:
        """What an error quotes of a reply's body: its message, shortened; nothing under a
        ``url_policy`` (a typed URL's reply may be a page its typist may not read)."""
        return "reply not shown" if self.url_policy is not None else _short(_error_message(text), n)

    def _delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff * 4)
        growth: int = 2 ** attempt
        base = min(self.max_backoff, self.backoff * growth)
        return base * (0.5 + random.random() / 2)  # jitter

    def _fatal(self, status: int, message: str) -> JudgeFatalError | None:
        where = self.base_url
        if status == 401:
            hint = (f"the server needs an API key: set {self.env_key} or pass api_key="
                    if not self.__api_key else "the API key was rejected")
            return JudgeFatalError(f"{where}: authentication failed (HTTP 401: {message}); {hint}")
        if status == 402:
            return JudgeFatalError(f"{where}: payment required (HTTP 402: {message}); check the account's billing")
        if status == 403:
            return JudgeFatalError(f"{where}: access denied (HTTP 403: {message}); check the API key's "
                                   "permissions for this model")
        if status == 404:
            return JudgeFatalError(f"{where}: model {self.model!r} not found (HTTP 404: {message}); check the "
                                   "model name and that base_url ends where the API starts (e.g. .../v1)")
        return None

    async def _acomplete(self, messages: list[Message], request: JudgeRequest, session: Any,
                         tally: JudgeResult) -> Completion:
        import aiohttp

        if isinstance(session, BatchRun):  # batch mode: the request waits for its stage's batch
            if self.batch_retry == "live" and tally.attempts > 1:  # a re-ask, sent live
                async with session.live:
                    return await self._acomplete(messages, request, session.http, tally)
            return await session.ask(self._body(messages, request), request, tally)
        url = self._url()
        last = "no attempt"
        attempt = 0
        temperature_dropped = False
        while attempt <= self.max_retries:
            body = self._body(messages, request)
            wait: float | None = None
            await self._sending()  # the budget's slot for this request (rate limits; budget.py)
            if self.allowance is not None:
                self.allowance.request()
            tally.sent(retry=attempt > 0)
            try:
                async with session.post(url, json=body, headers=self._headers(request),
                                        allow_redirects=self.url_policy is None) as resp:
                    status = resp.status
                    raw = await resp.read()
                    text = raw.decode("utf-8", "replace")
                    if status == 200:
                        try:
                            payload = json.loads(raw.decode("utf-8"))
                            completion = self._completion(payload)
                        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                            last = ("the server sent a body that is not a chat completion"
                                    + ("" if self.url_policy is not None else f": {_short(text)!r}"))
                        else:
                            if self.allowance is not None:
                                self.allowance.tokens(completion.prompt_tokens + completion.completion_tokens)
                            return completion
                    elif 300 <= status < 400 and self.url_policy is not None:
                        raise JudgeFatalError(f"{self.base_url} answered HTTP {status}, a redirect, which a typed URL "
                                              "does not follow: give the server's own URL")
                    elif status in (400, 413, 422) or (status >= 500 and self._refusal(body, text)):
                        kind = classify_400(_short(_error_message(text))) if status != 413 else "context"
                        message = self._said(text)
                        if kind == "auth":  # Gemini rejects a key with HTTP 400
                            raise JudgeFatalError(self.redact(
                                f"{self.base_url}: authentication failed (HTTP {status}: {message}); the API key "
                                f"was rejected: check {self.env_key} or api_key="))
                        sent = self._sent_mode(body)
                        if kind == "format" and sent is not None:
                            self._step_down(sent, f"HTTP {status}: {message}")
                            continue  # the same request in the next dialect; not a retry of a fault
                        if kind == "temperature" and "temperature" in body and not temperature_dropped:
                            temperature_dropped = True
                            self.send_temperature = False
                            _log_once(self, "temperature", f"the server rejects temperature ({message}); "
                                                           "asking without it")
                            continue
                        if kind == "context":
                            raise JudgeError(f"the prompt is longer than the model's context (HTTP {status}: "
                                             f"{message})")
                        raise JudgeError(f"{self.base_url} answered HTTP {status}: {message}")
                    elif self._retryable(status):
                        quota = self._out_of_quota(status, text)
                        if quota is not None:
                            shown = "reply not shown" if self.url_policy is not None else _short(quota)
                            raise JudgeFatalError(self.redact(f"{self.base_url}: out of quota (HTTP {status}: "
                                                              f"{shown}); no retry can help"))
                        last = f"HTTP {status}: {self._said(text, 120)}"
                        wait = self._retry_after(status, resp.headers, text)
                        self._pause_budget(wait)  # every user of the budget waits, not only this request
                    else:
                        fatal = self._fatal(status, self._said(text))
                        if fatal is not None:
                            raise JudgeFatalError(self.redact(str(fatal)))
                        raise JudgeError(f"{self.base_url} answered HTTP {status}: {self._said(text)}")
            except (asyncio.TimeoutError, aiohttp.ClientError) as e:
                last = transport_failure(e, self.base_url)
            if attempt < self.max_retries:
                await asyncio.sleep(self._delay(attempt, wait))
            attempt += 1
        raise JudgeError(f"{self.base_url}: no usable answer after {self.max_retries + 1} tries ({last})")


class AzureOpenAIJudge(OpenAIJudge):
    """Azure OpenAI: a deployment's chat-completions URL
    (``{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...``), the key in
    the ``api-key`` header (or a Microsoft Entra token as ``Authorization: Bearer``).

    ``endpoint``, ``api_key`` and ``api_version`` fall back to ``AZURE_OPENAI_ENDPOINT``,
    ``AZURE_OPENAI_API_KEY`` and ``OPENAI_API_VERSION``, as the ``openai`` SDK reads them; the
    token to ``AZURE_OPENAI_AD_TOKEN``. Without an API version, ``2024-10-21`` (generally
    available, with structured outputs). Everything else is the OpenAI judge's: concurrency,
    cache, retries honouring ``retry-after-ms`` and ``Retry-After``, the response-format
    step-down, the fatal errors (here a 404 names the deployment) and the redaction of the key.
    A request stopped by Azure's content filter is that request's error."""

    backend = "azure"
    Options = AzureOptions
    env_key = "AZURE_OPENAI_API_KEY"
    env_url = "AZURE_OPENAI_ENDPOINT"
    default_url = ""
    key_hosts = ()
    modes = _HOSTED
    default_api_version = "2024-10-21"
    batch_api = AzureBatchAPI

    def __init__(self, deployment: str, endpoint: str | None = None, api_version: str | None = None,
                 api_key: str | None = None, azure_ad_token: str | None = None, **options: Any) -> None:
        if not isinstance(deployment, str) or not deployment:
            raise ValueError("deployment: give the name of the Azure OpenAI deployment, e.g. 'gpt-4o-mini'")
        endpoint = endpoint or os.environ.get(self.env_url or "")
        if not endpoint:
            raise JudgeFatalError("no Azure OpenAI endpoint: set AZURE_OPENAI_ENDPOINT or pass endpoint= "
                                  "(https://<resource>.openai.azure.com)")
        endpoint = endpoint.rstrip("/")
        endpoint = endpoint[: -len("/openai")] if endpoint.endswith("/openai") else endpoint
        self.__ad_token = azure_ad_token if azure_ad_token is not None else os.environ.get("AZURE_OPENAI_AD_TOKEN")
        super().__init__(deployment, base_url=endpoint, api_key=api_key, **options)
        if not self._api_key and not self.__ad_token:
            raise JudgeFatalError(f"no API key for {self.base_url}: set AZURE_OPENAI_API_KEY or pass api_key= "
                                  "(or a Microsoft Entra token: azure_ad_token= or AZURE_OPENAI_AD_TOKEN)")
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION") or self.default_api_version
        self.deployment = deployment

    def secrets(self) -> list[str]:
        return super().secrets() + ([self.__ad_token] if self.__ad_token else [])

    def settings(self, request: JudgeRequest) -> dict[str, Any]:
        return dict(super().settings(request), api_version=self.api_version)

    def _url(self) -> str:
        deployment = urllib.parse.quote(self.deployment, safe="")
        query = urllib.parse.urlencode({"api-version": self.api_version})
        return f"{self.base_url}/openai/deployments/{deployment}/chat/completions?{query}"

    def _headers(self, request: JudgeRequest) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "X-Textgen-Task": request.task}
        if self._api_key:
            headers["api-key"] = self._api_key
        else:
            headers["Authorization"] = f"Bearer {self.__ad_token}"
        return headers

    def _completion(self, payload: Any) -> Completion:
        completion = _completion(payload)
        if completion.finish_reason == "content_filter":
            raise JudgeError("Azure's content filter stopped the answer (finish_reason content_filter)")
        return completion

    def _fatal(self, status: int, message: str) -> JudgeFatalError | None:
        if status == 404:
            return JudgeFatalError(f"{self.base_url}: deployment {self.deployment!r} not found (HTTP 404: {message}); "
                                   "give the deployment name (not the model name) and check AZURE_OPENAI_ENDPOINT "
                                   f"and the API version {self.api_version!r}")
        return super()._fatal(status, message)


class GeminiJudge(OpenAIJudge):
    """Google's Gemini API through its OpenAI-compatible endpoint
    (``https://generativelanguage.googleapis.com/v1beta/openai``), the key from
    ``GEMINI_API_KEY``. What differs from OpenAI is read here: errors come as a list
    (``[{"error": {...}}]``), a rejected key is HTTP 400 ``API key not valid`` (fatal, as a 401),
    and a 429 says how long to wait in the body (``google.rpc.RetryInfo``), not in a header.
    The same as ``OpenAIJudge(model, base_url=GeminiJudge.default_url, api_key=...)``."""

    backend = "gemini"
    env_key = "GEMINI_API_KEY"
    env_url = None
    default_url = "https://generativelanguage.googleapis.com/v1beta/openai"
    key_hosts = ("generativelanguage.googleapis.com",)
    modes = _HOSTED
    batch_api = None

    def _fatal(self, status: int, message: str) -> JudgeFatalError | None:
        if status == 404:
            return JudgeFatalError(f"{self.base_url}: model {self.model!r} not found (HTTP 404: {message}); "
                                   "check the model name, e.g. 'gemini-2.0-flash'")
        return super()._fatal(status, message)


def _checked_base_url(url: str) -> str:
    """``url`` when a path can be appended to it: a query (``?x=``) or a fragment (``#``) would
    swallow the ``/chat/completions`` appended after it, sending the request elsewhere."""
    parts = urllib.parse.urlsplit(url)
    if parts.query or parts.fragment or "?" in url or "#" in url:
        where = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"  # any user:password@ left out
        raise ValueError(f"base_url: {where} is followed by a query or a "
                         "fragment (? or #), which would swallow the path the judge appends (/chat/completions); "
                         "give the URL without them")
    return url


def _log_once(judge: Judge, what: str, message: str) -> None:
    seen = judge.__dict__.setdefault("_logged", set())
    if what not in seen:
        seen.add(what)
        logger.warning("judge %s: %s", judge.model, judge.redact(message))


def _completion(payload: Any) -> Completion:
    choice = payload["choices"][0]
    message = choice["message"]
    if not isinstance(message, dict):
        raise TypeError("message is not an object")
    content = message.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise TypeError("content is not text")
    usage = payload.get("usage") or {}
    logprobs = None
    lp = choice.get("logprobs")
    if isinstance(lp, dict) and lp.get("content"):
        logprobs = [{"token": t.get("token"), "logprob": t.get("logprob"),
                     "top_logprobs": [{"token": x.get("token"), "logprob": x.get("logprob")}
                                      for x in (t.get("top_logprobs") or [])]}
                    for t in lp["content"]]
    details = usage.get("prompt_tokens_details")
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    return Completion(text=content, prompt_tokens=int(usage.get("prompt_tokens") or 0),
                      completion_tokens=int(usage.get("completion_tokens") or 0),
                      finish_reason=choice.get("finish_reason"), logprobs=logprobs, cached_prompt_tokens=cached,
                      model=_served(payload))


def _served(payload: Mapping[str, Any]) -> str | None:
    """The model a chat completion says it came from (OpenAI, vLLM, Ollama, Gemini: ``model``)."""
    model = payload.get("model")
    return model if isinstance(model, str) and model else None
