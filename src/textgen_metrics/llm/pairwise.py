"""Pairwise preference: is the prediction better than the baseline? (MT-Bench's pairwise judge,
Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena".)

Each pair is judged twice, once in each order (the prediction as response A, then as response
B), because judges favour a position. The two verdicts, read from the prediction's side, give
the example's verdict: the same in both orders, it stands (win, loss or tie); different, the
pair is a tie and counts in ``position_inconsistent`` (MT-Bench's conservative rule: a win only
when it holds in both orders). A prediction identical to its baseline is a tie with no judge call.

Score per example: 1 for a win, 0.5 for a tie, 0 for a loss; ``win_rate`` is their mean over
the examples that got a verdict (ties as half). ``win_rate_ci`` is a percentile bootstrap
interval of it over examples (``confidence_level``, ``n_resamples``, ``seed``; default 95%,
1,000 resamples, seed 12345). An example whose judge failed in either order gets no verdict
(None, with an error), and counts in none of ``wins``, ``losses``, ``ties``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from ..judges import JudgeSession
from ..metric import Stats, option
from ..significance import DEFAULT_CONFIDENCE
from .metrics import Details, Example, JudgedMetric, JudgedOptions, ask, digest
from .prompts import prompt

__all__ = ["PairwisePreference", "PairwiseOptions", "DEFAULT_CRITERIA"]

DEFAULT_CRITERIA = ("Helpfulness, relevance, accuracy, depth, creativity and level of detail: which response "
                    "follows the instructions in the query and answers it better.")
_SCORES = {"win": 1.0, "tie": 0.5, "loss": 0.0}
# the judge's verdict, read from the prediction's side, when the prediction is response A / B
_AS_A = {"A": "win", "B": "loss", "tie": "tie"}
_AS_B = {"A": "loss", "B": "win", "tie": "tie"}

_PAIRWISE = """\
Compare two responses to the query in the data block "query": response A (data block \
"response_a") and response B (data block "response_b"). Decide which one is better on the \
criteria below.$reference

Criteria:
$criteria

Compare the two responses point by point before you decide. Avoid any position bias: the order in \
which the responses are shown must not affect your verdict. Do not let the length of a response \
influence you, and do not favour a name or a style that the criteria do not ask for. Be as \
objective as possible.
Answer with a JSON object {"reason": "...", "verdict": "A", "B" or "tie"}: first a short \
comparison, then "A" if response A is better, "B" if response B is better, or "tie" if neither \
is better."""

_PAIRWISE_EXAMPLE = """\
Example.
Query: "What is the boiling point of water at sea level, in Celsius?"
Response A: "It boils at 90 degrees." Response B: "100 °C."
Answer: {"reason": "B gives the right value, 100 °C; A's 90 degrees is wrong.", "verdict": "B"}"""


def _criteria(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"criteria: expected a string, got {type(value).__name__}")
    if value is not None and not value.strip():
        raise ValueError("criteria: empty; describe what makes a response better, or leave it out")
    return value.strip() if value else None


@dataclasses.dataclass(frozen=True)
class PairwiseOptions(JudgedOptions):
    criteria: str | None = option(None, kind="str", check=_criteria, kw_only=True,
                                  doc="what makes a response better, in words; default MT-Bench's (helpfulness, "
                                      "relevance, accuracy, depth, creativity, level of detail)")
    # MT-Bench style reporting: the win rate comes with its interval unless asked not to (None)
    confidence_level: float | None = option(DEFAULT_CONFIDENCE, kind="float", kw_only=True,
                                            doc="the level of win_rate_ci (default 0.95; None: left out)")


class PairwisePreference(JudgedMetric):
    """Is each prediction better than its baseline? (MT-Bench's pairwise judge.) Each pair is
    judged in both orders; a verdict that changes with the order is a tie, counted in
    ``position_inconsistent``. ``win_rate``: the share of wins, ties counting half (0 to 1,
    higher means the predictions are preferred); also ``wins``, ``losses``, ``ties``,
    ``position_inconsistent``, per-example ``verdicts`` ("win", "loss", "tie", None where the
    judge failed) and ``win_rate_ci`` (seeded percentile bootstrap over examples). Empty cases:
    a prediction identical to its baseline is a tie, with no judge call.

    Args:
        queries: the question or instruction each pair answers.
        predictions: the outputs of the system under test.
        baselines: the outputs of the system it is compared with.
        references: an optional reference answer per example (correctness is judged against it).
    """

    name = "pairwise_preference"
    key = "win_rate"
    columns = {"queries": "text", "predictions": "text", "baselines": "text"}
    optional_columns = {"references": "text"}
    Options = PairwiseOptions
    prompts = {"verdict": prompt("choice", _PAIRWISE, _PAIRWISE_EXAMPLE, choices=("A", "B", "tie"))}

    @property
    def criteria(self) -> str:
        return self.options.criteria or DEFAULT_CRITERIA

    def signature_settings(self) -> dict[str, Any]:
        return {"criteria": digest(self.criteria)}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        prediction, baseline = example["predictions"], example["baselines"]
        if prediction == baseline:
            return 0.5, {"verdict": "tie", "position_inconsistent": False, "orders": []}
        lead = [("query", example["queries"])]
        if "references" in example:
            lead.append(("reference", example["references"]))
        reference = (' The data block "reference" holds a reference answer: compare both responses with it, and '
                     "count every mistake against it." if "references" in example else "")
        verdict_prompt = self.prompt("verdict")
        first, second = await asyncio.gather(
            ask(session, verdict_prompt, lead + [("response_a", prediction), ("response_b", baseline)],
                criteria=self.criteria, reference=reference),
            ask(session, verdict_prompt, lead + [("response_a", baseline), ("response_b", prediction)],
                criteria=self.criteria, reference=reference))
        sides = [_AS_A[first.value["verdict"]], _AS_B[second.value["verdict"]]]
        verdict = sides[0] if sides[0] == sides[1] else "tie"
        orders = [{"prediction_as": "A", "verdict": first.value["verdict"], "for_prediction": sides[0],
                   "reason": first.value["reason"]},
                  {"prediction_as": "B", "verdict": second.value["verdict"], "for_prediction": sides[1],
                   "reason": second.value["reason"]}]
        return _SCORES[verdict], {"verdict": verdict, "position_inconsistent": sides[0] != sides[1],
                                  "orders": orders}

    @staticmethod
    def _example_verdicts(stats: Stats) -> list[str | None]:
        """Each example's verdict from the prediction's side ("win", "loss", "tie"), None where
        the judge failed."""
        return [d.get("verdict") if err is None else None
                for d, err in zip(stats.columns["details"], stats.columns["error"], strict=True)]

    def summary(self, stats: Stats) -> dict[str, Any]:
        verdicts = self._example_verdicts(stats)
        inconsistent = sum(bool(d.get("position_inconsistent"))
                           for d, err in zip(stats.columns["details"], stats.columns["error"], strict=True)
                           if err is None)
        return {"wins": verdicts.count("win"), "losses": verdicts.count("loss"), "ties": verdicts.count("tie"),
                "position_inconsistent": inconsistent}

    def outputs(self, stats: Stats) -> dict[str, Any]:
        return {"verdicts": self._example_verdicts(stats), "criteria": self.criteria}
