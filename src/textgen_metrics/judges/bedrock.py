"""Amazon Bedrock, and any provider without a wire format here, through ``CallableJudge``.

``CallableJudge`` runs any function ``messages -> answer`` with the engine's concurrency, cache,
re-asks, cut-off handling, containment and usage. This module is that function for Bedrock's
Converse API, written against the ``converse`` method of a boto3 ``bedrock-runtime`` client that
you create (boto3 is not a dependency of this package, and nothing here opens a connection):

    import boto3
    import botocore.config
    from textgen_metrics.judges.bedrock import converse_judge

    client = boto3.client("bedrock-runtime", region_name="us-east-1",
                          config=botocore.config.Config(retries={"max_attempts": 10, "mode": "adaptive"}))
    judge = converse_judge(client, "anthropic.claude-3-5-haiku-20241022-v1:0", concurrency=8, cache=True)
    result = textgen_metrics.faithfulness(predictions=..., contexts=..., judge=judge)

It is also the recipe for any other SDK: a function that

1. takes the chat ``messages`` (and, if it wants them, the keywords ``task`` and ``max_tokens``:
   the request's stable task id and, after a cut-off answer, the larger budget to ask with);
2. calls the provider with them (system messages where the provider wants them);
3. returns the answer text, or a dict ``{"text", "prompt_tokens", "completion_tokens",
   "finish_reason"}`` where ``finish_reason`` is ``"length"`` when the provider stopped at its
   token limit (the engine then never uses that answer: it asks again with a larger budget);
4. raises ``JudgeFatalError`` for what would fail for every request (rejected credentials, an
   unknown model), which stops the run at once, and lets anything else raise: that fails only
   the request (and so the example) it belongs to.

On a cluster (``textgen_metrics.ray``, ``textgen_metrics.spark``) the judge is shipped to every
worker, and a boto3 client does not pickle. Give ``converse_judge`` a factory instead, which
each process calls once, the first time it asks:

    client = functools.partial(boto3.client, "bedrock-runtime", region_name="us-east-1")
    judge = converse_judge(client, "anthropic.claude-3-5-haiku-20241022-v1:0")

(the factory pickles; the workers' credentials come from their own environment, as boto3's
always do). A judge built on a client itself stays in its process: pickling it raises a
``TypeError`` that says so.

Retries of throttled calls are left to boto3's own retry modes (``adaptive`` above): a call that
is still throttled after them fails its example only, and a rerun with the cache asks again only
for the examples that failed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .base import JudgeFatalError, Message
from .function import CallableJudge

__all__ = ["BedrockConverse", "converse_judge"]

# Bedrock error codes that would repeat for every request: the run stops at once
_FATAL_CODES = {"AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException",
                "ResourceNotFoundException", "InvalidSignatureException"}


def _error_code(e: BaseException) -> str:
    """The error code of a botocore ``ClientError`` (``e.response["Error"]["Code"]``), or ''."""
    response = getattr(e, "response", None)
    if isinstance(response, dict):
        return str((response.get("Error") or {}).get("Code") or "")
    return ""


class BedrockConverse:
    """``messages -> answer`` over a boto3 ``bedrock-runtime`` client's ``converse``.

    ``client``: the client, or a function of no arguments that makes one (a picklable factory
    such as ``functools.partial(boto3.client, "bedrock-runtime", ...)``: called once per process,
    so the judge can go to other processes). ``model_id``: a Bedrock model or inference-profile
    id. ``max_tokens``: the answer budget when the engine sets none (Bedrock's ``maxTokens``);
    ``temperature``: sent as given (None: not sent). The answer's ``stopReason``
    ``"max_tokens"`` is reported as a cut-off answer.
    """

    def __init__(self, client: Any, model_id: str, max_tokens: int = 2048,
                 temperature: float | None = 0.0) -> None:
        if not hasattr(client, "converse") and not callable(client):
            raise TypeError(f"client: expected a boto3 bedrock-runtime client (with .converse) or a function "
                            f"that makes one, got {type(client).__name__}")
        if not isinstance(model_id, str) or not model_id:
            raise ValueError("model_id: give a Bedrock model id, e.g. 'anthropic.claude-3-5-haiku-20241022-v1:0'")
        self.factory: Callable[[], Any] | None = None if hasattr(client, "converse") else client
        self._client = client if self.factory is None else None
        self._lock = threading.Lock()
        self.model = model_id
        self.max_tokens = max_tokens
        self.temperature = temperature

    @property
    def client(self) -> Any:
        """The client: the one given, or the factory's, made once in this process."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    assert self.factory is not None
                    made = self.factory()
                    if not hasattr(made, "converse"):
                        raise TypeError(f"client: the factory made {type(made).__name__}, not a boto3 "
                                        "bedrock-runtime client (with .converse)")
                    self._client = made
        return self._client

    def __getstate__(self) -> dict[str, Any]:
        if self.factory is None:
            raise TypeError("a Bedrock judge made on a boto3 client cannot go to another process (the client does "
                            "not pickle): give converse_judge a factory instead, e.g. "
                            "functools.partial(boto3.client, 'bedrock-runtime', region_name=...)")
        state = dict(self.__dict__)
        state["_client"] = None  # each process makes its own
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    def __call__(self, messages: list[Message], task: str | None = None,
                 max_tokens: int | None = None) -> dict[str, Any]:
        system = [{"text": m["content"]} for m in messages if m["role"] == "system"]
        turns = [{"role": m["role"], "content": [{"text": m["content"]}]} for m in messages if m["role"] != "system"]
        config: dict[str, Any] = {"maxTokens": max_tokens or self.max_tokens}
        if self.temperature is not None:
            config["temperature"] = self.temperature
        request: dict[str, Any] = {"modelId": self.model, "messages": turns, "inferenceConfig": config}
        if system:
            request["system"] = system
        try:
            out = self.client.converse(**request)
        except Exception as e:  # boto3's errors share no base class: classified by their code, then raised again
            code = _error_code(e)
            if code in _FATAL_CODES or (code == "ValidationException" and "model identifier" in str(e)):
                raise JudgeFatalError(f"Bedrock {self.model}: {code}: {e}") from None
            raise
        text = "".join(block.get("text", "") for block in out["output"]["message"]["content"])
        usage = out.get("usage") or {}
        stop = out.get("stopReason")
        return {"text": text, "prompt_tokens": usage.get("inputTokens", 0),
                "completion_tokens": usage.get("outputTokens", 0),
                "finish_reason": "length" if stop == "max_tokens" else stop}


def converse_judge(client: Any, model_id: str, max_tokens: int = 2048, temperature: float | None = 0.0,
                   **options: Any) -> CallableJudge:
    """A judge over Bedrock's Converse API: ``CallableJudge(BedrockConverse(client, model_id, ...),
    model=model_id, **options)`` (``concurrency``, ``cache``, ``max_parse_attempts``, ``prices``).
    ``client``: a boto3 ``bedrock-runtime`` client, or a picklable function that makes one (for a
    judge that goes to Ray or Spark workers)."""
    fn = BedrockConverse(client, model_id, max_tokens=max_tokens, temperature=temperature)
    return CallableJudge(fn, model=model_id, max_tokens=max_tokens, **options)
