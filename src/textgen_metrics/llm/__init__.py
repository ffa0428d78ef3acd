"""LLM-guided metrics: answer correctness and relevance, bias, toxicity, context precision,
recall and relevance, faithfulness, hallucination, summary coherence (valor's definitions),
G-Eval with the user's criteria, and pairwise preference: one module each, one
:class:`~textgen_metrics.llm.metrics.JudgedMetric` class each (the registry finds them; their
functions are ``textgen_metrics.<name>``), on the judge engine of :mod:`textgen_metrics.judges`."""

from .metrics import METRICS

__all__ = ["METRICS"]
