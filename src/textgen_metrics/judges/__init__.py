"""Judges for the LLM-guided metrics: an OpenAI-compatible API (OpenAI, Azure OpenAI, Gemini,
vLLM, Ollama...), Anthropic's Messages API, a local transformers model, a GGUF model in process
through llama.cpp (llama-cpp-python's ``Llama``), or any callable (Bedrock
and other SDKs: see ``judges.bedrock``), behind one engine (concurrency, cache, checks, re-asks,
usage)."""

from __future__ import annotations

from typing import Any

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
from .parsing import JudgeParseError, JudgeRunawayError, extract_json, parse_answer, validate
from .shared_cache import DirectoryCache

__all__ = [
    "Completion", "Judge", "JudgeError", "JudgeFatalError", "JudgeRequest", "JudgeResult", "JudgeSession", "Usage",
    "run_sync",
    "JudgeCache", "DirectoryCache", "Budget", "BudgetError", "BudgetServer", "LocalBudget", "RayBudget",
    "RemoteBudget", "cluster_judge", "JudgeParseError", "JudgeRunawayError", "extract_json", "parse_answer", "validate",
    "OpenAIJudge", "AzureOpenAIJudge", "GeminiJudge", "AnthropicJudge", "HFJudge", "LlamaCppJudge", "TinyJudge",
    "CallableJudge",
    "get_judge", "BACKENDS",
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
    judge_class: type[Judge] = getattr(importlib.import_module(module, __name__), attr)
    return judge_class


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
