"""G-Eval with the user's own criteria (Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4
with Better Human Alignment"): a rubric in words becomes a score.

1. Evaluation steps. Given as ``evaluation_steps``, or written by the judge once per criteria,
   score range and set of inputs (task ``g_eval/steps``, G-Eval's "auto chain of thought"). They
   are returned as ``evaluation_steps`` so that a run can be repeated exactly by passing them
   back; within a process the steps a judge (a judge object, or the function behind a callable
   judge) wrote for the same question are reused, and the judge's cache keeps them across
   processes.
2. One score per text (task ``g_eval/score``): the criteria, the steps and the texts (the
   prediction; the source, reference and query when given) go to the judge, which answers with
   a reason, then an integer in ``score_range``.
3. Where the judge gives token log-probabilities (OpenAI-compatible servers that return
   ``logprobs``), the score is G-Eval's probability-weighted mean over the score values at the
   score token (``score_probabilities``, as ``summary_coherence``); otherwise the integer.

Deliberate differences from the paper: the reason comes before the score (the paper asks for the
score alone; here the score is conditioned on the reason, as in every prompt of this package),
and the judge answers in JSON. For a range with values of two digits or more (``(1, 10)``),
weighting needs evidence that the judge's tokenizer writes each value as one token (a
multi-digit value among the score token's alternatives, and the answer's own score among them);
without it the integer is used, since the token "1" could be the start of "10".
"""

from __future__ import annotations

import copy
import dataclasses
import weakref
from collections.abc import Sequence
from typing import Any

from ..aggregation import bootstrap_interval
from ..judges import JudgeParseError, JudgeSession
from ..judges.cache import cache_key
from .metrics import Details, Example, LLMMetric, Outcome, _ask, _Failed, check_interval, register, score_probabilities
from .prompts import items_block

__all__ = ["GEval", "weighted_score"]

# the optional inputs, in the order their blocks go to the judge, and how the prompts name them
_INPUTS = (("queries", "query", 'the query the text answers ("query")'),
           ("sources", "source", 'the source the text was written from ("source")'),
           ("references", "reference", 'a reference text ("reference")'))
# steps written in this process, per judge (a judge object, or the user's function behind a
# CallableJudge) and per steps request: a judge writes the steps for one question once
_STEPS_MEMO: weakref.WeakKeyDictionary[Any, dict[str, list[str]]] = weakref.WeakKeyDictionary()


def _check_steps(value: dict[str, Any]) -> dict[str, Any]:
    steps = [s.strip() for s in value["steps"] if isinstance(s, str) and s.strip()]
    if not steps:
        raise JudgeParseError("$.steps: give at least one evaluation step")
    return {"steps": steps}


@dataclasses.dataclass(frozen=True)
class _StepsCheck:
    """The prompt's own check (the number of steps), then at least one step that is not blank."""

    inner: Any

    def __call__(self, value: dict[str, Any]) -> dict[str, Any]:
        return _check_steps(self.inner(value) if self.inner is not None else value)


def weighted_score(probabilities: dict[str, float] | None, score: int, low: int, high: int) -> float | None:
    """G-Eval's probability-weighted score, or None where the weighting cannot be trusted (no
    probabilities; for values of two digits or more, no evidence that each is one token)."""
    if not probabilities:
        return None
    if high >= 10 and (str(score) not in probabilities or not any(len(k) > 1 for k in probabilities)):
        return None
    if len(probabilities) == 1:  # all the mass on one value: that value, exactly
        return float(int(next(iter(probabilities))))
    return sum(int(v) * p for v, p in probabilities.items()) / sum(probabilities.values())


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _describe(columns: Sequence[str]) -> str:
    """The inputs the evaluator sees, in words."""
    return _and(['the text to rate ("prediction")'] + [words for col, _, words in _INPUTS if col in columns])


def _others(columns: Sequence[str]) -> str:
    """The sentence naming the data blocks beside the prediction ('' when there are none)."""
    parts = [words for col, _, words in _INPUTS if col in columns]
    return f" The other data blocks hold {_and(parts)}." if parts else ""


class GEval(LLMMetric):
    """A score in ``score_range`` for each prediction on the user's ``criteria``."""

    name = "g_eval"
    columns = {"predictions": "text"}
    optional_columns = {"queries": "text", "sources": "text", "references": "text"}
    options = ("criteria", "evaluation_steps", "score_range", "confidence_level", "n_resamples", "seed")

    criteria = ""
    steps: list[str] | None = None
    low, high = 1, 5
    confidence_level: float | None = None
    n_resamples = 1000
    seed: int | None = 12345

    def configure(self, criteria: Any = None, evaluation_steps: Any = None, score_range: Any = (1, 5),  # type: ignore[override]
                  confidence_level: float | None = None, n_resamples: int = 1000,
                  seed: int | None = 12345) -> GEval:
        if criteria is None:
            raise ValueError("criteria: g_eval needs the criteria to rate on, in words, e.g. criteria='Coherence: "
                             "the text is well structured and builds from sentence to sentence' (command line: "
                             "--option 'g_eval.criteria=...'; playground and Space: {\"criteria\": \"...\"} in "
                             "the options)")
        if not isinstance(criteria, str):
            raise TypeError(f"criteria: expected a string, got {type(criteria).__name__}")
        if not criteria.strip():
            raise ValueError("criteria: empty; describe what a good text does, in words")
        if evaluation_steps is not None:
            if isinstance(evaluation_steps, str) or not isinstance(evaluation_steps, (list, tuple)):
                raise TypeError(f"evaluation_steps: expected a list of strings, got {type(evaluation_steps).__name__}")
            for i, step in enumerate(evaluation_steps):
                if not isinstance(step, str):
                    raise TypeError(f"evaluation_steps[{i}]: expected str, got {type(step).__name__}")
            if not [s for s in evaluation_steps if s.strip()]:
                raise ValueError("evaluation_steps: give at least one step, or None to have the judge write them")
        if (not isinstance(score_range, (list, tuple)) or len(score_range) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in score_range)):
            raise TypeError(f"score_range: expected two integers (low, high), got {score_range!r}")
        low, high = score_range
        if not 0 <= low < high or high - low > 100:
            raise ValueError(f"score_range: {score_range!r} must be 0 <= low < high with at most 101 values")
        check_interval(confidence_level, n_resamples, seed)
        metric = copy.copy(self)
        metric.criteria = criteria.strip()
        metric.steps = [s.strip() for s in evaluation_steps if s.strip()] if evaluation_steps is not None else None
        metric.low, metric.high = low, high
        metric.confidence_level, metric.n_resamples, metric.seed = confidence_level, n_resamples, seed
        return metric

    async def prepare(self, session: JudgeSession, columns: Sequence[str]) -> None:
        if self.steps is not None:
            return
        prompt = self.prompt("steps")
        request = prompt.request([("criteria", self.criteria)], low=self.low, high=self.high,
                                 inputs=_describe(columns))
        request = dataclasses.replace(request, check=_StepsCheck(request.check))
        judge = session.judge
        key = cache_key(judge.backend, judge.model, request.messages, judge.settings(request))
        try:
            memo = _STEPS_MEMO.setdefault(getattr(judge, "fn", judge), {})
        except TypeError:  # a function that takes no weak reference: no memo, the cache still serves
            memo = {}
        if key not in memo:
            result = await session.ask(request)
            if not result.ok:
                raise _Failed(f"{prompt.task}: {result.error}", result.cause)
            memo[key] = list(result.value["steps"])
        self.steps = list(memo[key])

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        blocks = [(block, ex[col]) for col, block, _ in _INPUTS if col in ex] + [("prediction", ex["predictions"])]
        prompt = dataclasses.replace(self.prompt("score"), scale=(self.low, self.high))
        result = await _ask(session, prompt, blocks, criteria=self.criteria, steps=items_block(self.steps or []),
                            low=self.low, high=self.high, inputs=_others(list(ex)))
        integer = result.value["score"]
        details: Details = {"score": integer, "reason": result.value["reason"]}
        probs = score_probabilities(result.logprobs, range(self.low, self.high + 1))
        weighted = weighted_score(probs, integer, self.low, self.high)
        if weighted is not None:
            return weighted, dict(details, probabilities=probs, weighted=True)
        return float(integer), dict(details, weighted=False)

    def finish(self, result: dict[str, Any], outcomes: Sequence[Outcome], use_aggregator: bool) -> None:
        if self.confidence_level is not None:
            low, high = bootstrap_interval([s for s, _, _ in outcomes], self.n_resamples, self.confidence_level,
                                           self.seed)
            result["g_eval_ci"] = None if low is None else [low, high]
        result["evaluation_steps"] = list(self.steps or [])
        result["score_range"] = [self.low, self.high]


register(GEval())
