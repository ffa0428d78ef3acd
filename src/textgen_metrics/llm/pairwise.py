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
import copy
from collections.abc import Sequence
from typing import Any

from ..aggregation import bootstrap_interval
from ..judges import JudgeSession
from .metrics import Details, Example, LLMMetric, Outcome, _ask, check_interval, register

__all__ = ["PairwisePreference", "DEFAULT_CRITERIA"]

DEFAULT_CRITERIA = ("Helpfulness, relevance, accuracy, depth, creativity and level of detail: which response "
                    "follows the instructions in the query and answers it better.")
_SCORES = {"win": 1.0, "tie": 0.5, "loss": 0.0}
# the judge's verdict, read from the prediction's side, when the prediction is response A / B
_AS_A = {"A": "win", "B": "loss", "tie": "tie"}
_AS_B = {"A": "loss", "B": "win", "tie": "tie"}


class PairwisePreference(LLMMetric):
    """Win, tie or loss of each prediction against its baseline, judged in both orders."""

    name = "pairwise_preference"
    key = "win_rate"
    columns = {"queries": "text", "predictions": "text", "baselines": "text"}
    optional_columns = {"references": "text"}
    options = ("criteria", "confidence_level", "n_resamples", "seed")

    criteria = DEFAULT_CRITERIA
    confidence_level: float | None = 0.95
    n_resamples = 1000
    seed: int | None = 12345

    def configure(self, criteria: str | None = None, confidence_level: float | None = 0.95,  # type: ignore[override]
                  n_resamples: int = 1000, seed: int | None = 12345) -> PairwisePreference:
        if criteria is not None and not isinstance(criteria, str):
            raise TypeError(f"criteria: expected a string, got {type(criteria).__name__}")
        if criteria is not None and not criteria.strip():
            raise ValueError("criteria: empty; describe what makes a response better, or leave it out")
        check_interval(confidence_level, n_resamples, seed)
        metric = copy.copy(self)
        metric.criteria = criteria.strip() if criteria else DEFAULT_CRITERIA
        metric.confidence_level, metric.n_resamples, metric.seed = confidence_level, n_resamples, seed
        return metric

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        prediction, baseline = ex["predictions"], ex["baselines"]
        if prediction == baseline:
            return 0.5, {"verdict": "tie", "position_inconsistent": False, "orders": []}
        lead = [("query", ex["queries"])] + ([("reference", ex["references"])] if "references" in ex else [])
        reference = (' The data block "reference" holds a reference answer: compare both responses with it, and '
                     "count every mistake against it." if "references" in ex else "")
        prompt = self.prompt("verdict")
        first, second = await asyncio.gather(
            _ask(session, prompt, lead + [("response_a", prediction), ("response_b", baseline)],
                 criteria=self.criteria, reference=reference),
            _ask(session, prompt, lead + [("response_a", baseline), ("response_b", prediction)],
                 criteria=self.criteria, reference=reference))
        sides = [_AS_A[first.value["verdict"]], _AS_B[second.value["verdict"]]]
        verdict = sides[0] if sides[0] == sides[1] else "tie"
        orders = [{"prediction_as": "A", "verdict": first.value["verdict"], "for_prediction": sides[0],
                   "reason": first.value["reason"]},
                  {"prediction_as": "B", "verdict": second.value["verdict"], "for_prediction": sides[1],
                   "reason": second.value["reason"]}]
        return _SCORES[verdict], {"verdict": verdict, "position_inconsistent": sides[0] != sides[1],
                                  "orders": orders}

    def finish(self, result: dict[str, Any], outcomes: Sequence[Outcome], use_aggregator: bool) -> None:
        verdicts = [d.get("verdict") if err is None else None for _, d, err in outcomes]
        result.update(wins=verdicts.count("win"), losses=verdicts.count("loss"), ties=verdicts.count("tie"),
                      position_inconsistent=sum(bool(d.get("position_inconsistent")) for _, d, err in outcomes
                                                if err is None))
        if self.confidence_level is not None:
            low, high = bootstrap_interval([s for s, _, _ in outcomes], self.n_resamples, self.confidence_level,
                                           self.seed)
            result["win_rate_ci"] = None if low is None else [low, high]
        result["verdicts"] = verdicts
        result["criteria"] = self.criteria


register(PairwisePreference())
