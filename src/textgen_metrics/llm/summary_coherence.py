"""Summary coherence (valor, after G-Eval): the coherence of a summary given its source, 1 to 5.

valor's criteria and evaluation steps, written out (step ``score``); the score is G-Eval's
probability-weighted mean over 1..5 where the judge gives token log-probabilities
(``metrics.ask_score``, the weighting ``g_eval`` uses too), else the integer the judge gives.
"""

from __future__ import annotations

from ..judges import JudgeSession
from .metrics import Details, Example, JudgedMetric, ask_score
from .prompts import prompt

__all__ = ["SummaryCoherence"]

_COHERENCE = """\
Rate the coherence, 1 to 5, of the summary in block "summary" of block "source": a \
well-organised body of information on the source's key points, not a heap of facts.
Steps: 1. Find the source's key points. 2. Check the summary covers them in a clear, logical \
order. 3. Score 1 (incoherent) to 5 (fully coherent)."""

_COHERENCE_EXAMPLE = """\
Example.
Source: "A bus line opens in May." Summary: "In May, a bus line opens."
Answer: {"reason":"Clear.","score":5}"""


class SummaryCoherence(JudgedMetric):
    """Coherence of a summary given its source on 1 to 5 (valor, after G-Eval: criteria and evaluation
    steps); with token log-probabilities from the judge, G-Eval's probability-weighted mean of the
    scores, otherwise the integer the judge gives. Higher is better.

    Args:
        predictions: the summaries to judge.
        sources: the text each summary summarises.
    """

    name = "summary_coherence"
    columns = {"predictions": "text", "sources": "text"}
    score_range = (1.0, 5.0)
    prompts = {"score": prompt("score", _COHERENCE, _COHERENCE_EXAMPLE, logprobs=True)}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        blocks = [("source", example["sources"]), ("summary", example["predictions"])]
        return await ask_score(session, self.prompt("score"), blocks)
