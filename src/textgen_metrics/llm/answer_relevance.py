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
The data block "statements" lists numbered statements taken from an answer to the query in the \
data block "query". For each statement, decide whether it is relevant to answering the query: \
"yes" if it helps answer the query, "no" if it is off topic, filler or does not address it. An \
ambiguous statement that could help answer the query counts as relevant.
""" + VERDICT_FORMAT

_RELEVANCE_EXAMPLE = """\
Example.
Query: "Where is the Eiffel Tower?"
Statements: 1. Sure! 2. The Eiffel Tower is in Paris. 3. Paris has great cheese.
Answer: {"verdicts": {"1": {"reason": "Filler that answers nothing.", "verdict": "no"}, \
"2": {"reason": "It gives the location asked for.", "verdict": "yes"}, \
"3": {"reason": "Cheese does not answer where the tower is.", "verdict": "no"}}}"""


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
