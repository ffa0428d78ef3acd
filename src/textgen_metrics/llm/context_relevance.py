"""Context relevance (valor, after DeepEval): the share of the retrieved contexts relevant to the
query, one verdict per context (step ``verdicts``)."""

from __future__ import annotations

from .metrics import PerContext
from .prompts import CONTEXT_FORMAT, prompt

__all__ = ["ContextRelevance"]

_RELEVANT = """\
The blocks hold a query and contexts (context_1, ...). For each context: "yes" \
if any part of it helps answer the query, "no" otherwise.
""" + CONTEXT_FORMAT

_RELEVANT_EXAMPLE = """\
Example.
Query: "Japan's capital?" context_1: "Tokyo is the capital." context_2: "Kyoto has temples."
Answer: {"verdicts":{"1":{"reason":"Names it.","verdict":"yes"},"2":{"reason":"Off topic.",\
"verdict":"no"}}}"""


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
