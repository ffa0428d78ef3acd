"""Faithfulness (valor, with RAGAS's definition): the share of a text's claims that the contexts
imply.

The judge extracts the claims of the prediction (step ``claims``), then gives one verdict per
claim against the contexts (step ``verdicts``). A claim that contradicts the contexts and one
unrelated to them both count against (RAGAS; DeepEval counts unrelated claims in favour).
"""

from __future__ import annotations

from ..judges import JudgeSession
from .metrics import Details, Example, JudgedMetric, ask_items, ask_verdicts, context_blocks, count_yes, pair
from .prompts import VERDICT_FORMAT, items_block, prompt, verdict_prompt

__all__ = ["Faithfulness"]

_CLAIMS = """\
List the claims of the text in block "prediction": each thing it presents as true (false ones \
too), as short self-contained sentences, pronouns resolved. Questions, greetings, filler and \
opinions are not claims.
Answer {"claims": [strings]}."""

_CLAIMS_EXAMPLE = """\
Example.
Text: "Hi! Albert Einstein, born in Ulm in 1879, won the Nobel Prize in Physics. What a genius."
Answer: {"claims": ["Albert Einstein was born in Ulm.", "Albert Einstein was born in 1879.", \
"Albert Einstein won the Nobel Prize in Physics."]}"""

_IMPLIED = """\
Block "claims" lists numbered claims; blocks context_1, context_2 and so on hold contexts. \
For each claim: "yes" if the contexts imply it, "no" if it contradicts them or they do not say it. \
Take the contexts at face value, without prior knowledge.
""" + VERDICT_FORMAT

_IMPLIED_EXAMPLE = """\
Example.
Context: "Einstein won the Nobel Prize in 1921." Claims: 1. Einstein won a Nobel Prize. 2. It \
was in 1922.
Answer: {"verdicts":{"1":{"reason":"Stated.","verdict":"yes"},"2":{"reason":"It says 1921.",\
"verdict":"no"}}}"""


class Faithfulness(JudgedMetric):
    """The share of the text's claims that the contexts imply (valor, with RAGAS's definition: a claim
    that contradicts the contexts and one unrelated to them both count against). Range 0 to 1, higher
    is better. Empty cases: no contexts scores 0 (no judge call); a text without claims scores 1.

    Args:
        predictions: the answers to judge.
        contexts: the retrieved contexts of each example.
    """

    name = "faithfulness"
    columns = {"predictions": "text", "contexts": "list"}
    prompts = {"claims": prompt("items", _CLAIMS, _CLAIMS_EXAMPLE, keys=("claims",)),
                "verdicts": verdict_prompt(_IMPLIED, _IMPLIED_EXAMPLE, "claim")}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        if not example["contexts"]:
            return 0.0, {"claims": None, "verdicts": []}  # valor: nothing can imply a claim
        claims = await ask_items(session, self.prompt("claims"), [("prediction", example["predictions"])])
        if not claims:
            return 1.0, {"claims": [], "verdicts": []}  # nothing claimed, nothing unfaithful
        blocks = context_blocks(example["contexts"]) + [("claims", items_block(claims))]
        verdicts = await ask_verdicts(session, self.prompt("verdicts"), blocks, len(claims),
                                      n=len(example["contexts"]))
        return count_yes(verdicts) / len(claims), {"claims": claims, "verdicts": pair(claims, verdicts)}
