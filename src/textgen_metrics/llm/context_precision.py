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
The blocks hold a query, its ground truth answer and contexts (context_1, ...). For each \
context: "yes" if the answer uses information in it, "no" otherwise.
""" + CONTEXT_FORMAT

_USEFUL_EXAMPLE = """\
Example.
Query: "Who won in 2018?" Ground truth: "France." context_1: "France won in 2018." context_2: \
"Brazil hosted in 2014."
Answer: {"verdicts":{"1":{"reason":"Names France.","verdict":"yes"},"2":{"reason":"About 2014.",\
"verdict":"no"}}}"""


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
