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
Extract every claim that the text in the data block "prediction" makes. A claim is a piece of \
information the text presents as true (a fact, a figure, a relation), written as one short \
self-contained sentence with pronouns resolved. Take the text at face value: a claim that is \
false is still a claim. Questions, greetings, filler and opinions that assert nothing checkable \
are not claims. A text that asserts nothing has no claims.
Answer with a JSON object {"claims": [...]}: a list of strings."""

_CLAIMS_EXAMPLE = """\
Example.
Text: "Hi! Albert Einstein, born in Ulm in 1879, won the Nobel Prize in Physics. What a genius."
Answer: {"claims": ["Albert Einstein was born in Ulm.", "Albert Einstein was born in 1879.", \
"Albert Einstein won the Nobel Prize in Physics."]}"""

_IMPLIED = """\
The data block "claims" lists numbered claims from a text, and the blocks context_1, \
context_2 and so on hold retrieved contexts. For each claim, decide whether the contexts imply it: \
"yes" only if the claim can be verified from the contexts, "no" otherwise. A claim that \
contradicts a context is "no"; a claim that is unrelated to the contexts (neither implied nor \
contradicted) is also "no". Use no prior knowledge: take the contexts at face value, even where \
you believe them to be wrong, and judge only what they say.
""" + VERDICT_FORMAT

_IMPLIED_EXAMPLE = """\
Example.
Contexts: context_1: "Einstein won the Nobel Prize in Physics in 1921."
Claims: 1. Einstein won a Nobel Prize. 2. Einstein won it in 1922. 3. Einstein played the violin.
Answer: {"verdicts": {"1": {"reason": "context_1 says he won the Nobel Prize.", \
"verdict": "yes"}, "2": {"reason": "context_1 gives 1921, a contradiction.", \
"verdict": "no"}, "3": {"reason": "The contexts do not mention the violin.", "verdict": "no"}}}"""


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
