"""Context relevance (valor, after DeepEval): the share of the retrieved contexts relevant to the
query, one verdict per context (step ``verdicts``)."""

from __future__ import annotations

from .metrics import PerContext
from .prompts import CONTEXT_FORMAT, prompt

__all__ = ["ContextRelevance"]

_RELEVANT = """\
The data blocks hold a query and the retrieved contexts (context_1, context_2 and so on). For each \
context, decide whether it is relevant to the query: "yes" if any part of it helps answer the \
query, even if most of it does not; "no" otherwise.
""" + CONTEXT_FORMAT

_RELEVANT_EXAMPLE = """\
Example.
Query: "What is the capital of Japan?"
context_1: "Tokyo, Japan's capital, is its largest city. Japan has many islands." context_2: \
"Kyoto is famous for its temples."
Answer: {"verdicts": {"1": {"reason": "It says Tokyo is the capital.", \
"verdict": "yes"}, "2": {"reason": "Temples in Kyoto do not say what the capital is.", \
"verdict": "no"}}}"""


class ContextRelevance(PerContext):
    """The share of the retrieved contexts that are relevant to the query (valor, after DeepEval). Range 0
    to 1, higher is better. Empty cases: no contexts scores 0.

    Args:
        queries: the questions.
        contexts: the retrieved contexts of each example.
    """

    name = "context_relevance"
    columns = {"queries": "text", "contexts": "list"}
    lead = ("queries", "query")
    prompts = {"verdicts": prompt("verdicts", _RELEVANT, _RELEVANT_EXAMPLE)}
