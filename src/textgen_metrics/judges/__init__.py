"""Judges for the LLM-guided metrics: an OpenAI-compatible API, a local transformers model,
or any callable, behind one engine (concurrency, cache, checks, re-asks, usage)."""

from .base import (Completion, Judge, JudgeError, JudgeFatalError, JudgeRequest, JudgeResult, JudgeSession, Usage,
                   run_sync)
from .cache import JudgeCache
from .parsing import JudgeParseError, extract_json, parse_answer, validate

__all__ = [
    "Completion", "Judge", "JudgeError", "JudgeFatalError", "JudgeRequest", "JudgeResult", "JudgeSession", "Usage",
    "run_sync",
    "JudgeCache", "JudgeParseError", "extract_json", "parse_answer", "validate",
    "OpenAIJudge", "HFJudge", "CallableJudge", "get_judge", "BACKENDS",
]

BACKENDS = {"openai": "an OpenAI-compatible chat-completions API (openai:<model>)",
            "hf": "a local transformers model (hf:<model id or folder>)"}


def __getattr__(name):
    if name == "OpenAIJudge":
        from .openai import OpenAIJudge

        return OpenAIJudge
    if name == "HFJudge":
        from .hf import HFJudge

        return HFJudge
    if name == "CallableJudge":
        from .function import CallableJudge

        return CallableJudge
    raise AttributeError(f"module 'textgen_metrics.judges' has no attribute {name!r}")


def get_judge(judge, **options):
    """A Judge from a judge object, a callable, or a string ``"openai:<model>"``,
    ``"hf:<model id or path>"``; ``options`` go to the backend's constructor."""
    if judge is None:
        raise ValueError(
            "judge: this metric needs a judge; pass judge='openai:<model>' (an OpenAI-compatible "
            "server; base_url and api_key from arguments or OPENAI_BASE_URL / OPENAI_API_KEY), "
            "judge='hf:<local model>', a textgen_metrics judge object, or any function "
            "messages -> str, at evaluate.load(..., judge=...) or compute(..., judge=...)"
        )
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, str):
        prefix, sep, model = judge.partition(":")
        if not sep or not model:
            raise ValueError(f"judge: {judge!r} names no backend; use one of: " +
                             "; ".join(f"'{k}:...' for {v}" for k, v in BACKENDS.items()))
        if prefix == "openai":
            from .openai import OpenAIJudge

            return OpenAIJudge(model, **options)
        if prefix == "hf":
            from .hf import HFJudge

            return HFJudge(model, **options)
        raise ValueError(f"judge: unknown backend {prefix!r} in {judge!r}; backends: " +
                         "; ".join(f"'{k}:...' for {v}" for k, v in BACKENDS.items()))
    if callable(judge):
        from .function import CallableJudge

        return CallableJudge(judge, **options)
    raise TypeError(f"judge: expected a string, a judge object or a callable, got {type(judge).__name__}")
