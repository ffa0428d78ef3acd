"""Context recall (valor, after RAGAS): the share of the ground truth's statements that can be
attributed to the retrieved contexts.

The judge breaks each reference into statements (step ``statements``, the wording shared with
answer relevance and answer correctness), then gives one verdict per statement against the
contexts (step ``verdicts``); with several references, the best.
"""

from __future__ import annotations

import asyncio

from ..judges import JudgeSession
from .metrics import Details, Example, JudgedMetric, ask_items, ask_verdicts, context_blocks, count_yes, pair
from .prompts import STATEMENTS, STATEMENTS_EXAMPLE, VERDICT_FORMAT, items_block, prompt, verdict_prompt

__all__ = ["ContextRecall"]

_ATTRIBUTABLE = """\
Block "statements" lists numbered statements of a ground truth answer; blocks context_1, \
context_2 and so on hold contexts. For each statement: "yes" if the contexts state or directly \
support it, "no" otherwise. Take the contexts at face value, without prior knowledge.
""" + VERDICT_FORMAT

_ATTRIBUTABLE_EXAMPLE = """\
Example.
Context: "Einstein was a German-born physicist." Statements: 1. Einstein was born in Germany. 2. \
He won a Nobel Prize.
Answer: {"verdicts":{"1":{"reason":"German-born.","verdict":"yes"},"2":{"reason":"Not mentioned.",\
"verdict":"no"}}}"""


class ContextRecall(JudgedMetric):
    """The share of the ground truth's statements that can be attributed to the retrieved contexts (valor,
    after RAGAS). Several references: the best. Range 0 to 1, higher is better. Empty cases: no contexts
    scores 0 (no judge call); a ground truth without statements scores 1 (valor divides by zero there).

    Args:
        contexts: the retrieved contexts of each example.
        references: one ground truth answer, or several, per example.
    """

    name = "context_recall"
    columns = {"contexts": "list", "references": "text_or_list"}
    prompts = {"statements": prompt("items", STATEMENTS, STATEMENTS_EXAMPLE, keys=("statements",)),
                "verdicts": verdict_prompt(_ATTRIBUTABLE, _ATTRIBUTABLE_EXAMPLE, "statement")}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        ctx = example["contexts"]
        if not ctx:
            return 0.0, {"references": []}  # valor: nothing retrieved, nothing recalled

        async def per_reference(ref: str) -> tuple[float, Details]:
            statements = await ask_items(session, self.prompt("statements"), [("ground_truth", ref)],
                                         block="ground_truth")
            if not statements:
                return 1.0, {"statements": [], "verdicts": []}  # nothing to recall
            blocks = context_blocks(ctx) + [("statements", items_block(statements))]
            verdicts = await ask_verdicts(session, self.prompt("verdicts"), blocks, len(statements), n=len(ctx))
            return count_yes(verdicts) / len(statements), {"statements": statements,
                                                           "verdicts": pair(statements, verdicts)}

        per_ref = await asyncio.gather(*(per_reference(r) for r in example["references"]))
        return max(s for s, _ in per_ref), {"references": [dict(d, score=s) for s, d in per_ref]}
