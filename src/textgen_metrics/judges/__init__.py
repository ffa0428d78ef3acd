"""Judges for the LLM-guided metrics: an OpenAI-compatible API (OpenAI, Azure OpenAI, Gemini,
vLLM, Ollama...), Anthropic's Messages API, a local transformers model, a GGUF model in process
through llama.cpp (llama-cpp-python's ``Llama``), or any callable (Bedrock
and other SDKs: see ``judges.bedrock``), behind one engine (concurrency, cache, checks, re-asks,
usage)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, overload

from .base import (
    Completion,
    Judge,
    JudgeError,
    JudgeFatalError,
    JudgeRequest,
    JudgeResult,
    JudgeSession,
    Usage,
    run_sync,
)
from .budget import Budget, BudgetError, BudgetServer, LocalBudget, RayBudget, RemoteBudget
from .cache import JudgeCache
from .cluster import cluster_judge
from .options import option_kinds
from .parsing import JudgeParseError, JudgeRunawayError, extract_json, parse_answer, validate
from .shared_cache import DirectoryCache

__all__ = [
    "Completion", "Judge", "JudgeError", "JudgeFatalError", "JudgeRequest", "JudgeResult", "JudgeSession", "Usage",
    "run_sync",
    "JudgeCache", "DirectoryCache", "Budget", "BudgetError", "BudgetServer", "LocalBudget", "RayBudget",
    "RemoteBudget", "cluster_judge", "JudgeParseError", "JudgeRunawayError", "extract_json", "parse_answer", "validate",
    "OpenAIJudge", "AzureOpenAIJudge", "GeminiJudge", "AnthropicJudge", "HFJudge", "LlamaCppJudge", "TinyJudge",
    "CallableJudge",
    "get_judge", "resolve_judge", "judge_class", "judge_option_kinds", "BACKENDS",
]

BACKENDS = {"openai": "an OpenAI-compatible chat-completions API (openai:<model>)",
            "azure": "an Azure OpenAI deployment (azure:<deployment>; AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY)",
            "anthropic": "Anthropic's Messages API (anthropic:<model>; ANTHROPIC_API_KEY)",
            "gemini": "Gemini's OpenAI-compatible API (gemini:<model>; GEMINI_API_KEY)",
            "hf": "a local transformers model (hf:<model id, folder or GGUF file>)",
            "gguf": "a GGUF model in process through llama.cpp, as llama-cpp-python's server runs it (gguf:<file>)",
            "tiny": "a packaged tiny model that checks the pipeline offline, never quality (tiny:smollm2, tiny:gemma3)"}

# name -> (module, class): the string prefixes of get_judge and the lazy attributes below
_CLASSES = {"openai": (".openai", "OpenAIJudge"), "azure": (".openai", "AzureOpenAIJudge"),
            "gemini": (".openai", "GeminiJudge"), "anthropic": (".anthropic", "AnthropicJudge"),
            "hf": (".local", "HFJudge"), "gguf": (".llamacpp", "LlamaCppJudge"), "tiny": (".tiny", "TinyJudge"),
            "callable": (".function", "CallableJudge")}


def _load(backend: str) -> type[Judge]:
    import importlib

    module, attr = _CLASSES[backend]
    found: type[Judge] = getattr(importlib.import_module(module, __name__), attr)
    return found


def judge_class(judge: str) -> type[Judge] | None:
    """The class of a judge string's backend (``"openai:gpt-4o-mini"`` or ``"openai"``), imported
    when first asked; None for a backend there is none of (:func:`get_judge` says which there are)."""
    backend = judge.partition(":")[0]
    return _load(backend) if backend in _CLASSES else None


def judge_option_kinds(judge: str) -> dict[str, str]:
    """``{option: kind}`` of a judge string's backend, from its class's ``Options`` declaration:
    how ``--judge-option`` and a gate's ``judge_options`` turn a text into a value. An unknown
    backend: none (the judge's own error follows)."""
    found = judge_class(judge)
    return {} if found is None else option_kinds(found.Options)


def __getattr__(name: str) -> Any:
    for backend, (_, attr) in _CLASSES.items():
        if attr == name:
            return _load(backend)
    raise AttributeError(f"module 'textgen_metrics.judges' has no attribute {name!r}")


def get_judge(judge: Any, **options: Any) -> Judge:
    """A Judge from a judge object, a callable, or a string ``"openai:<model>"``,
    ``"azure:<deployment>"``, ``"anthropic:<model>"``, ``"gemini:<model>"``,
    ``"hf:<model id, folder or GGUF file>"`` (transformers), ``"gguf:<GGUF file>"`` (llama.cpp in
    process), ``"tiny:smollm2"`` / ``"tiny:gemma3"`` (a packaged tiny model on llama.cpp: a check of
    the pipeline, never of quality); ``options`` go to the backend's constructor."""
    if judge is None:
        raise ValueError(
            "judge: this metric needs a judge; pass judge='openai:<model>' (an OpenAI-compatible "
            "server; base_url and api_key from arguments or OPENAI_BASE_URL / OPENAI_API_KEY), "
            "'azure:<deployment>', 'anthropic:<model>', 'gemini:<model>', "
            "judge='hf:<local model>', 'gguf:<GGUF file>', 'tiny:smollm2', a textgen_metrics judge object, "
            "or any function messages -> str, at evaluate.load(..., judge=...) or compute(..., judge=...)"
        )
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, str):
        prefix, sep, model = judge.partition(":")
        if not sep or not model:
            raise ValueError(f"judge: {judge!r} names no backend; use one of: " +
                             "; ".join(f"'{k}:...' for {v}" for k, v in BACKENDS.items()))
        if prefix not in BACKENDS:
            raise ValueError(f"judge: unknown backend {prefix!r} in {judge!r}; backends: " +
                             "; ".join(f"'{k}:...' for {v}" for k, v in BACKENDS.items()))
        return _load(prefix)(model, **options)
    if callable(judge):
        return _load("callable")(judge, **options)
    raise TypeError(f"judge: expected a string, a judge object or a callable, got {type(judge).__name__}")


@overload
def resolve_judge(judge: None, judge_options: Mapping[str, Any] | None = None) -> None: ...
@overload
def resolve_judge(judge: Judge | str | Callable[..., Any], judge_options: Mapping[str, Any] | None = None
                  ) -> Judge: ...
def resolve_judge(judge: Any, judge_options: Mapping[str, Any] | None = None) -> Judge | None:
    """The one place a judge is made: :func:`get_judge` of a string, object or callable with
    ``judge_options`` (a judge object as it is: it has its options); None stays None."""
    if judge is None:
        return None
    return get_judge(judge, **dict(judge_options or {}))
