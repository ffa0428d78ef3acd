"""LLM-guided metrics: answer correctness and relevance, bias, toxicity, context precision,
recall and relevance, faithfulness, hallucination, summary coherence (valor's definitions),
G-Eval with the user's criteria, and pairwise preference."""

from . import functions
from .functions import *  # noqa: F403  (the metric functions: functions.__all__)
from .metrics import METRICS, compute

__all__ = ["METRICS", "compute", *functions.__all__]
