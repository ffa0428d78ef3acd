"""A judge over Anthropic's Messages API (``POST {base_url}/v1/messages``), spoken over aiohttp:
no ``anthropic`` SDK is needed.

What differs from the OpenAI wire format, and how it is handled:

- Authentication: the key goes in the ``x-api-key`` header, with ``anthropic-version:
  2023-06-01``. ``api_key`` and ``base_url`` fall back to ``ANTHROPIC_API_KEY`` and
  ``ANTHROPIC_BASE_URL`` (as the SDK reads them; the base URL is the host, without ``/v1``).
- The system prompt is a top-level ``system`` field; ``messages`` hold only user and assistant
  turns. ``max_tokens`` is required: the judge's ``max_tokens``, else 4096 (the most every
  Claude model since Claude 3 accepts). ``seed`` and log-probabilities do not exist there, so
  G-Eval scores from Claude are the integers the judge gives.
- Structured output, decided here: the answer is asked for as a forced tool call
  (``tools=[{"name": <task>, "input_schema": <schema>}]`` and ``tool_choice`` naming it), which
  every Claude model since Claude 3 supports, so the answer arrives as a JSON object shaped by
  the schema (properties in the schema's order: the reason before the verdict). The tool input
  is validated by the same parser as every other backend. A server that refuses tools (HTTP 400
  about ``tools`` or ``tool_choice``, e.g. a proxy) gets plain requests from then on
  (``judge_mode`` ``text``): the prompts already state the JSON format, and the answer is
  parsed and repaired as any text answer.
- ``stop_reason: "max_tokens"`` is a cut-off answer: never used, asked again with a larger
  budget (the engine's rule for every backend). ``"refusal"`` is that request's error.
- Errors: Anthropic's body ``{"type": "error", "error": {"type", "message"}}``. Retried: 408,
  409, 429, 5xx and 529 (``overloaded_error``), waiting what ``retry-after`` says, else until
  the soonest ``anthropic-ratelimit-*-reset`` of a limit with nothing ``-remaining``, else with
  exponential back-off. Fatal at once: no key for api.anthropic.com (naming
  ``ANTHROPIC_API_KEY``), 401 ``authentication_error``, 402 ``billing_error``, 403
  ``permission_error``, 404 ``not_found_error`` (naming the model), a 429 whose
  ``error.details.error_code`` is ``enforced_spend_limit_reached`` (no retry helps before the
  next month), refused connections and unknown hosts.
- Usage: ``input_tokens`` plus the prompt-cache reads and writes as prompt tokens,
  ``output_tokens`` as completion tokens; the reads (``cache_read_input_tokens``) also as
  ``cached_prompt_tokens``.
- Prompt caching: the task text before the data blocks is its own content block marked
  ``cache_control`` (``prompt_cache=True``, the default).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any

from .base import Completion, JudgeError, JudgeFatalError, JudgeRequest, Message
from .batch import AnthropicBatchAPI
from .openai import OpenAIJudge, _error_object, _retry_after, _served
from .options import AnthropicOptions, check_options
from .schema import define_once

__all__ = ["AnthropicJudge", "ANTHROPIC_VERSION"]

ANTHROPIC_VERSION = "2023-06-01"
_LIMITS = ("requests", "tokens", "input-tokens", "output-tokens")


def _reset_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds until the soonest ``anthropic-ratelimit-<limit>-reset`` (RFC 3339) of a limit
    whose ``-remaining`` is 0; None when no exhausted limit says when it resets."""
    now = datetime.datetime.now(datetime.timezone.utc)
    waits = []
    for limit in _LIMITS:
        remaining = headers.get(f"anthropic-ratelimit-{limit}-remaining")
        reset = headers.get(f"anthropic-ratelimit-{limit}-reset")
        if remaining is None or reset is None or remaining.strip() != "0":
            continue
        try:
            when = datetime.datetime.fromisoformat(reset.strip().replace("Z", "+00:00"))
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        waits.append(max(0.0, (when - now).total_seconds()))
    return min(waits) if waits else None


_DATA_START = "\n\n<<<DATA "


def _cached_prefix(content: str) -> str | list[dict[str, Any]]:
    """The first user message as two text blocks, the task (the same for every example of a
    prompt) marked for Anthropic's prompt cache (``cache_control``), then the data blocks; a
    message without data blocks stays as it is."""
    cut = content.find(_DATA_START)
    if cut <= 0:
        return content
    return [{"type": "text", "text": content[:cut], "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": content[cut + 2:]}]


class AnthropicJudge(OpenAIJudge):
    """A judge over Anthropic's Messages API (Claude). Same options as ``OpenAIJudge``; ``seed``
    is not sent (the API has none). ``prompt_cache`` (True): the fixed part of each prompt (the
    system rule and the task with its worked example, before the data) is marked for
    Anthropic's prompt cache; a prefix shorter than the model's minimum (1,024 or 2,048 tokens)
    is simply not cached. Cached reads are reported as ``cached_prompt_tokens``."""

    backend = "anthropic"
    Options = AnthropicOptions
    env_key = "ANTHROPIC_API_KEY"
    env_url = "ANTHROPIC_BASE_URL"
    default_url = "https://api.anthropic.com"
    key_hosts = ("api.anthropic.com",)
    modes = ("tool", "text")
    default_max_tokens = 4096
    batch_api = AnthropicBatchAPI

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 prompt_cache: bool = True, **options: Any) -> None:
        check_options(AnthropicOptions, {"prompt_cache": prompt_cache})
        self.prompt_cache = prompt_cache
        super().__init__(model, base_url=base_url, api_key=api_key, **options)

    def default_budget(self) -> int | None:
        return self.max_tokens or self.default_max_tokens

    # -- the wire format ---------------------------------------------------------------------
    def _url(self) -> str:
        base = self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url
        return f"{base}/v1/messages"

    def _headers(self, request: JudgeRequest) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "anthropic-version": ANTHROPIC_VERSION,
                   "X-Textgen-Task": request.task}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _body(self, messages: list[Message], request: JudgeRequest) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
        turns: list[dict[str, Any]] = [{"role": m["role"], "content": m["content"]} for m in messages
                                       if m.get("role") != "system"]
        if self.prompt_cache and turns and isinstance(turns[0]["content"], str):
            turns[0]["content"] = _cached_prefix(turns[0]["content"])
        body: dict[str, Any] = {"model": self.model, "max_tokens": request.max_tokens or self.default_budget(),
                                "messages": turns}
        if system:
            body["system"] = system
        if self.send_temperature:
            body["temperature"] = self.temperature
        if request.schema is not None and self.mode == "tool":
            body["tools"] = [{"name": request.schema_name, "input_schema": define_once(request.schema),
                              "description": "Give your answer: every field, in the order of the schema."}]
            body["tool_choice"] = {"type": "tool", "name": request.schema_name}
        return body

    def _sent_mode(self, body: dict[str, Any]) -> str | None:
        return "tool" if "tools" in body else None

    def _completion(self, payload: Any) -> Completion:
        blocks = payload["content"]
        if not isinstance(blocks, list):
            raise TypeError("content is not a list of blocks")
        stop = payload.get("stop_reason")
        if stop == "refusal":
            raise JudgeError("the model refused to answer (stop_reason refusal)")
        text = ""
        for block in blocks:
            if not isinstance(block, dict):
                raise TypeError("a content block is not an object")
            if block.get("type") == "tool_use":
                if not isinstance(block.get("input"), dict):
                    raise TypeError("tool input is not an object")
                text = json.dumps(block["input"], ensure_ascii=False)
                break
            if block.get("type") == "text":
                if not isinstance(block.get("text"), str):
                    raise TypeError("text block without text")
                text += block["text"]
        usage = payload.get("usage") or {}
        prompt = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                      "cache_read_input_tokens"))
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=int(usage.get("output_tokens") or 0),
                          finish_reason=stop, cached_prompt_tokens=int(usage.get("cache_read_input_tokens") or 0),
                          model=_served(payload))

    def _retryable(self, status: int) -> bool:
        return status in (408, 409, 429) or status >= 500

    def _retry_after(self, status: int, headers: Mapping[str, str], text: str) -> float | None:
        wait = _retry_after(headers)
        if wait is None and status == 429:
            wait = _reset_wait(headers)
        return wait

    def _out_of_quota(self, status: int, text: str) -> str | None:
        err = _error_object(text) or {}
        details = err.get("details")
        if status == 429 and isinstance(details, dict) and details.get("error_code") == "enforced_spend_limit_reached":
            return str(err.get("message") or "the monthly spend limit is reached")
        return None

    def _fatal(self, status: int, message: str) -> JudgeFatalError | None:
        if status == 404:
            return JudgeFatalError(f"{self.base_url}: model {self.model!r} not found (HTTP 404: {message}); check "
                                   "the model name (e.g. 'claude-3-5-haiku-latest') and that base_url is the host, "
                                   "without /v1/messages")
        return super()._fatal(status, message)
