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
You will be given a source text (data block "source") and a summary of it (data block \
"summary"). Rate the summary on one metric: coherence.

Evaluation criteria. Coherence (1-5) is the collective quality of all sentences. The summary \
should be well structured and well organised. It should not just be a heap of related \
information, but should build from sentence to sentence a coherent body of information about \
the topic, and hit the key points of the source.

Evaluation steps:
1. Read the source text carefully and identify its main topic and key points.
2. Read the summary and compare it to the source. Check whether the summary covers the main \
topic and key points of the source, and whether it presents them in a clear and logical order.
3. Assign a coherence score from 1 to 5, where 1 is the lowest and 5 the highest, based on the \
evaluation criteria: 1 = not coherent at all, 5 = extremely coherent given the source.

Answer with a JSON object {"reason": "...", "score": n}: first a short reason that follows the \
evaluation steps, then the integer score from 1 to 5."""

_COHERENCE_EXAMPLE = """\
Example.
Source: "The council approved a new bus line. It will link the station to the hospital from \
May. Tickets stay at two euros."
Summary: "A new bus line was approved. It links the station and hospital from May, at the same \
price."
Answer: {"reason": "It covers the approval, the route, the date and the price in a clear order.", \
"score": 5}"""


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
