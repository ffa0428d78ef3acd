"""LLM-guided metrics: answer correctness and relevance, bias, toxicity, context precision,
recall and relevance, faithfulness, hallucination, summary coherence (valor's definitions),
G-Eval with the user's criteria, and pairwise preference."""

from .functions import (answer_correctness, answer_relevance, bias, context_precision, context_recall,
                        context_relevance, faithfulness, g_eval, hallucination, pairwise_preference,
                        summary_coherence, toxicity)
from .metrics import METRICS, compute

__all__ = ["METRICS", "compute", "answer_correctness", "answer_relevance", "bias", "context_precision",
           "context_recall", "context_relevance", "faithfulness", "hallucination", "summary_coherence",
           "toxicity", "g_eval", "pairwise_preference"]
