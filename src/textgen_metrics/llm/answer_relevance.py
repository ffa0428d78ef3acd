"""Answer relevance (valor, after DeepEval): the share of an answer's statements that are relevant
to its query.

The judge breaks the answer into statements (step ``statements``, the wording shared with answer
correctness and context recall), then gives one verdict per statement (step ``verdicts``).
"""

from __future__ import annotations

from .metrics import Example, ItemsProportion
from .prompts import STATEMENTS, STATEMENTS_EXAMPLE, VERDICT_FORMAT, prompt, verdict_prompt

__all__ = ["AnswerRelevance"]

_RELEVANCE = """\
Block "statements" lists numbered statements of an answer to the query in block "query". For \
each: "yes" if it helps or could help answer the query, "no" if it is off topic or filler.
""" + VERDICT_FORMAT

_RELEVANCE_EXAMPLE = """\
Example.
Query: "Where is the Eiffel Tower?" Statements: 1. Sure! 2. It is in Paris.
Answer: {"verdicts":{"1":{"reason":"Filler.","verdict":"no"},"2":{"reason":"The location.",\
"verdict":"yes"}}}"""


class AnswerRelevance(ItemsProportion):
    """The share of the answer's statements that are relevant to the query (valor, after DeepEval). Filler
    and ambiguous fragments are statements too, so filler counts against relevance. Range 0 to 1,
    higher is better. Empty cases: an answer without statements scores 0.

    Args:
        predictions: the answers to judge.
        queries: the question each answer responds to.
    """

    name = "answer_relevance"
    columns = {"predictions": "text", "queries": "text"}
    extract_step, item_block = "statements", "statements"
    prompts = {"statements": prompt("items", STATEMENTS, STATEMENTS_EXAMPLE, keys=("statements",)),
                "verdicts": verdict_prompt(_RELEVANCE, _RELEVANCE_EXAMPLE, "statement")}

    def blocks(self, example: Example) -> list[tuple[str, str]]:
        return [("query", example["queries"])]
