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
The blocks hold a text ("prediction") and contexts (context_1, ...). For each \
context: "yes" only if the text directly contradicts it; "no" if the text agrees, does not \
address it, lacks detail or only hedges ("may", "might"). Take each context at face value, \
without prior knowledge.
""" + CONTEXT_FORMAT

_CONTRADICTS_EXAMPLE = """\
Example.
Text: "It opened in 1922 and may have a cafe." context_1: "It opened in 1921." context_2: "It \
has no cafe."
Answer: {"verdicts":{"1":{"reason":"1922, not 1921.","verdict":"yes"},"2":{"reason":"Hedged.",\
"verdict":"no"}}}"""


class Hallucination(PerContext):
    """The share of the contexts that the text contradicts (valor, after DeepEval); speculative language is
    not a contradiction. Range 0 to 1, lower is better. Empty cases: an example without contexts is a
    ValueError.

    Args:
        predictions: the answers to judge.
        contexts: the retrieved contexts of each example (at least one).
    """

    name = "hallucination"
    lower_is_better = True  # a rate of faults: a gate takes a ceiling, a meta-evaluation its negation
    columns = {"predictions": "text", "contexts": "list"}
    lead = ("predictions", "prediction")
    prompts = {"verdicts": prompt("verdicts", _CONTRADICTS, _CONTRADICTS_EXAMPLE)}

    def check(self, inputs: dict[str, list[Any]]) -> None:
        for i, contexts in enumerate(inputs["contexts"]):
            if not contexts:
                raise InputError(f"empty list; {self.name} is undefined without contexts (it divides by their "
                                 "number)", "contexts", i)
