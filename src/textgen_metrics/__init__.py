"""textgen-metrics: exact, fast, offline metrics for generated text.

The metric functions work on plain lists of strings; the ``evaluate`` modules under
``metrics/`` are thin layers over them. Submodules load lazily, so importing the package
costs nothing until a metric is used; ``dir(textgen_metrics)`` lists the public API all the
same.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, tuple[str, str]] = {
    "rouge": ("textgen_metrics.lexical.rouge", "rouge"),
    "RougeScorer": ("textgen_metrics.lexical.rouge", "RougeScorer"),
    "RougeAggregator": ("textgen_metrics.lexical.rouge", "RougeAggregator"),
    "bleu": ("textgen_metrics.lexical.bleu", "bleu"),
    "google_bleu": ("textgen_metrics.lexical.bleu", "google_bleu"),
    "chrf": ("textgen_metrics.lexical.chrf", "chrf"),
    "ter": ("textgen_metrics.lexical.ter", "ter"),
    "compare": ("textgen_metrics.comparison", "compare"),
    "bootstrap_ci": ("textgen_metrics.significance", "bootstrap_ci"),
    "meteor": ("textgen_metrics.lexical.meteor", "meteor"),
    "MeteorScorer": ("textgen_metrics.lexical.meteor", "MeteorScorer"),
    "answer_correctness": ("textgen_metrics.llm", "answer_correctness"),
    "answer_relevance": ("textgen_metrics.llm", "answer_relevance"),
    "bias": ("textgen_metrics.llm", "bias"),
    "toxicity": ("textgen_metrics.llm", "toxicity"),
    "context_precision": ("textgen_metrics.llm", "context_precision"),
    "context_recall": ("textgen_metrics.llm", "context_recall"),
    "context_relevance": ("textgen_metrics.llm", "context_relevance"),
    "faithfulness": ("textgen_metrics.llm", "faithfulness"),
    "hallucination": ("textgen_metrics.llm", "hallucination"),
    "summary_coherence": ("textgen_metrics.llm", "summary_coherence"),
    "g_eval": ("textgen_metrics.llm", "g_eval"),
    "pairwise_preference": ("textgen_metrics.llm", "pairwise_preference"),
    "agreement": ("textgen_metrics.human_agreement", "agreement"),
    "bertscore": ("textgen_metrics.semantic.bertscore", "bertscore"),
    "BertScorer": ("textgen_metrics.semantic.bertscore", "BertScorer"),
    "get_tokenizer": ("textgen_metrics.tokenizers", "get_tokenizer"),
    "OpenAIJudge": ("textgen_metrics.judges.openai", "OpenAIJudge"),
    "AzureOpenAIJudge": ("textgen_metrics.judges.openai", "AzureOpenAIJudge"),
    "GeminiJudge": ("textgen_metrics.judges.openai", "GeminiJudge"),
    "AnthropicJudge": ("textgen_metrics.judges.anthropic", "AnthropicJudge"),
    "HFJudge": ("textgen_metrics.judges.hf", "HFJudge"),
    "CallableJudge": ("textgen_metrics.judges.function", "CallableJudge"),
    "JudgeCache": ("textgen_metrics.judges.cache", "JudgeCache"),
    "get_judge": ("textgen_metrics.judges", "get_judge"),
    "JudgeError": ("textgen_metrics.judges.base", "JudgeError"),
    "JudgeFatalError": ("textgen_metrics.judges.base", "JudgeFatalError"),
    "Usage": ("textgen_metrics.judges.base", "Usage"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'textgen_metrics' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    """The public API (loaded lazily) and the submodules already imported."""
    return sorted(set(__all__) | {k for k in globals() if not k.startswith("_")} - {"annotations", "importlib", "Any"})
