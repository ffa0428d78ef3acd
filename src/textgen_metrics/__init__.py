"""textgen-metrics: exact, fast, offline metrics for generated text.

The metric functions work on plain lists of strings; the ``evaluate`` modules under
``metrics/`` are thin layers over them. Submodules load lazily, so importing the package
costs nothing until a metric is used; ``dir(textgen_metrics)`` lists the public API all the
same.

Where names come from: every metric function (``textgen_metrics.rouge``,
``textgen_metrics.faithfulness``...) is the one its entry in ``textgen_metrics.registry`` names,
the same table the command line, the Spaces and the Trainer hook read; the rest of the public
API (scorer classes, judges, ``compare``...) is listed in ``_API`` below. The imports under
``TYPE_CHECKING`` are for type checkers and IDEs only (``tests/test_public_api.py`` holds them
equal to what the package gives at run time).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# the public API beside the metric functions: name -> (module, attribute), imported on first use
_API: dict[str, tuple[str, str]] = {
    "RougeScorer": ("textgen_metrics.lexical.rouge", "RougeScorer"),
    "RougeAggregator": ("textgen_metrics.lexical.rouge", "RougeAggregator"),
    "MeteorScorer": ("textgen_metrics.lexical.meteor", "MeteorScorer"),
    "BertScorer": ("textgen_metrics.semantic.bertscore", "BertScorer"),
    "compare": ("textgen_metrics.comparison", "compare"),
    "bootstrap_ci": ("textgen_metrics.significance", "bootstrap_ci"),
    "agreement": ("textgen_metrics.human_agreement", "agreement"),
    "get_tokenizer": ("textgen_metrics.tokenizers", "get_tokenizer"),
    "OpenAIJudge": ("textgen_metrics.judges.openai", "OpenAIJudge"),
    "AzureOpenAIJudge": ("textgen_metrics.judges.openai", "AzureOpenAIJudge"),
    "GeminiJudge": ("textgen_metrics.judges.openai", "GeminiJudge"),
    "AnthropicJudge": ("textgen_metrics.judges.anthropic", "AnthropicJudge"),
    "HFJudge": ("textgen_metrics.judges.local", "HFJudge"),
    "CallableJudge": ("textgen_metrics.judges.function", "CallableJudge"),
    "JudgeCache": ("textgen_metrics.judges.cache", "JudgeCache"),
    "get_judge": ("textgen_metrics.judges", "get_judge"),
    "JudgeError": ("textgen_metrics.judges.base", "JudgeError"),
    "JudgeFatalError": ("textgen_metrics.judges.base", "JudgeFatalError"),
    "Usage": ("textgen_metrics.judges.base", "Usage"),
}

if TYPE_CHECKING:
    from .comparison import compare as compare
    from .human_agreement import agreement as agreement
    from .judges import get_judge as get_judge
    from .judges.anthropic import AnthropicJudge as AnthropicJudge
    from .judges.base import JudgeError as JudgeError
    from .judges.base import JudgeFatalError as JudgeFatalError
    from .judges.base import Usage as Usage
    from .judges.cache import JudgeCache as JudgeCache
    from .judges.function import CallableJudge as CallableJudge
    from .judges.local import HFJudge as HFJudge
    from .judges.openai import AzureOpenAIJudge as AzureOpenAIJudge
    from .judges.openai import GeminiJudge as GeminiJudge
    from .judges.openai import OpenAIJudge as OpenAIJudge
    from .lexical.bleu import bleu as bleu
    from .lexical.bleu import google_bleu as google_bleu
    from .lexical.chrf import chrf as chrf
    from .lexical.meteor import MeteorScorer as MeteorScorer
    from .lexical.meteor import meteor as meteor
    from .lexical.rouge import RougeAggregator as RougeAggregator
    from .lexical.rouge import RougeScorer as RougeScorer
    from .lexical.rouge import rouge as rouge
    from .lexical.ter import ter as ter
    from .llm.functions import *  # noqa: F403  (the LLM-guided metrics: llm.functions.__all__)
    from .semantic.bertscore import BertScorer as BertScorer
    from .semantic.bertscore import bertscore as bertscore
    from .significance import bootstrap_ci as bootstrap_ci
    from .tokenizers import get_tokenizer as get_tokenizer


def _metric_names() -> list[str]:
    from .registry import METRICS

    return list(METRICS)


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return ["__version__", *_metric_names(), *_API]
    if name in _API:
        module, attr = _API[name]
        value = getattr(importlib.import_module(module), attr)
    elif not name.startswith("_"):
        from .registry import METRICS

        if name not in METRICS:
            raise AttributeError(f"module 'textgen_metrics' has no attribute {name!r}")
        value = METRICS[name].function
    else:
        raise AttributeError(f"module 'textgen_metrics' has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    """The public API (loaded lazily) and the submodules already imported."""
    imported = {k for k, v in globals().items() if not k.startswith("_") and type(v).__name__ == "module"}
    return sorted({"__version__", *_metric_names(), *_API} | (imported - {"importlib"}))
