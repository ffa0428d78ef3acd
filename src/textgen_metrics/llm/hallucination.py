"""Hallucination (valor, after DeepEval): the share of the contexts that a text contradicts.

One verdict per context (step ``verdicts``); speculative language is not a contradiction. The
score divides by the number of contexts, so an example without contexts is an input error.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from .metrics import PerContext
from .prompts import CONTEXT_FORMAT, prompt

__all__ = ["Hallucination"]

_CONTRADICTS = """\
The data blocks hold a text ("prediction") and the contexts (context_1, context_2 and so on). For each \
context, decide whether the text contradicts it: "yes" only if the text directly contradicts \
something the context states; "no" if the text agrees with it, does not address it, or lacks \
detail. Speculative or hedged language ("may", "might", "possibly") is not a contradiction. Use \
no prior knowledge: take each context at face value, even where you believe it to be wrong.
""" + CONTEXT_FORMAT

_CONTRADICTS_EXAMPLE = """\
Example.
Text: "Einstein won the Nobel Prize in 1922 and may have played the violin."
context_1: "Einstein won the Nobel Prize in 1921." context_2: "Einstein never played the \
piano." context_3: "Einstein disliked music."
Answer: {"verdicts": {"1": {"reason": "The text gives 1922, the context 1921.", \
"verdict": "yes"}, "2": {"reason": "The text does not mention the piano.", \
"verdict": "no"}, "3": {"reason": "'May have played' is speculative, not a direct \
contradiction.", "verdict": "no"}}}"""


class Hallucination(PerContext):
    """The share of the contexts that the text contradicts (valor, after DeepEval); speculative language is
    not a contradiction. Range 0 to 1, lower is better. Empty cases: an example without contexts is a
    ValueError.

    Args:
        predictions: the answers to judge.
        contexts: the retrieved contexts of each example (at least one).
    """

    name = "hallucination"
    columns = {"predictions": "text", "contexts": "list"}
    lead = ("predictions", "prediction")
    prompts = {"verdicts": prompt("verdicts", _CONTRADICTS, _CONTRADICTS_EXAMPLE)}

    def check(self, inputs: dict[str, list[Any]]) -> None:
        for i, contexts in enumerate(inputs["contexts"]):
            if not contexts:
                raise InputError(f"empty list; {self.name} is undefined without contexts (it divides by their "
                                 "number)", "contexts", i)
