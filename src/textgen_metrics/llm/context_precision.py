"""Context precision (valor, as RAGAS and DeepEval): rank-aware precision of the retrieved
contexts.

One verdict per context and reference (step ``verdicts``): was the context useful for arriving at
the ground truth? A context is useful if any reference finds it so; the score is the mean of
precision@k over the ranks k of the useful contexts.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..judges import JudgeSession
from .metrics import Details, Example, JudgedMetric, ask_verdicts, context_blocks, pair
from .prompts import CONTEXT_FORMAT, prompt

__all__ = ["ContextPrecision"]

_USEFUL = """\
The data blocks hold a query, a ground truth answer to it and the retrieved \
contexts (context_1, context_2 and so on). For each context, decide whether it was useful for arriving at the \
ground truth answer to the query: "yes" if it contains information that the answer uses, "no" \
otherwise.
""" + CONTEXT_FORMAT

_USEFUL_EXAMPLE = """\
Example.
Query: "Who won the 2018 World Cup?" Ground truth: "France won the 2018 World Cup."
context_1: "France beat Croatia 4-2 in the 2018 World Cup final." context_2: "The 2014 World \
Cup was held in Brazil."
Answer: {"verdicts": {"1": {"reason": "It names France as the 2018 winner.", \
"verdict": "yes"}, "2": {"reason": "It is about 2014, not the winner in 2018.", \
"verdict": "no"}}}"""


class ContextPrecision(JudgedMetric):
    """Rank-aware precision of the retrieved contexts (valor, as RAGAS and DeepEval): the mean of
    precision@k over the ranks k of the contexts that were useful for the ground truth (useful for any
    reference, with several). Range 0 to 1, higher is better. Empty cases: no contexts, or none useful,
    scores 0.

    Args:
        queries: the questions.
        contexts: the retrieved contexts of each example, in rank order.
        references: one ground truth answer, or several, per example.
    """

    name = "context_precision"
    columns = {"queries": "text", "contexts": "list", "references": "text_or_list"}
    prompts = {"verdicts": prompt("verdicts", _USEFUL, _USEFUL_EXAMPLE)}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        ctx = example["contexts"]
        if not ctx:
            return 0.0, {"useful": [], "verdicts": []}  # valor: no contexts, precision 0
        verdicts_prompt = self.prompt("verdicts")

        async def per_reference(ref: str) -> list[dict[str, Any]]:
            blocks = [("query", example["queries"]), ("ground_truth", ref)] + context_blocks(ctx)
            return await ask_verdicts(session, verdicts_prompt, blocks, len(ctx), n=len(ctx))

        per_ref = await asyncio.gather(*(per_reference(r) for r in example["references"]))
        # a context is useful if any reference finds it so
        useful = [any(v[k]["verdict"] == "yes" for v in per_ref) for k in range(len(ctx))]
        hits = 0
        total = 0.0
        for k, u in enumerate(useful, 1):
            if u:
                hits += 1
                total += hits / k  # precision@k at each useful position
        score = total / hits if hits else 0.0
        return score, {"useful": useful, "verdicts": [pair(ctx, v) for v in per_ref]}
