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
   score token (``metrics.ask_score``, as ``summary_coherence``); otherwise the integer.

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

from ..judges import JudgeParseError, JudgeSession
from ..metric import Stats, option
from .metrics import (
    Details,
    Example,
    JudgedMetric,
    JudgedOptions,
    RequestFailed,
    ask_score,
    digest,
    weighted_score,
)
from .prompts import items_block, prompt

__all__ = ["GEval", "GEvalOptions", "weighted_score"]

# the optional inputs, in the order their blocks go to the judge, and how the prompts name them
_INPUTS = (("queries", "query", 'the query the text answers ("query")'),
           ("sources", "source", 'the source the text was written from ("source")'),
           ("references", "reference", 'a reference text ("reference")'))
# steps written in this process, per judge (a judge object, or the user's function behind a
# CallableJudge) and per steps request: a judge writes the steps for one question once
_STEPS_MEMO: weakref.WeakKeyDictionary[Any, dict[str, list[str]]] = weakref.WeakKeyDictionary()

_G_EVAL_STEPS = """\
The data block "criteria" holds the criteria on which an evaluator will rate a text on an \
integer scale from $low (worst) to $high (best). Write the evaluation steps for this rating \
(G-Eval's chain of thought): 3 to 6 short, concrete steps in the order the evaluator follows them, \
each one sentence, saying what to read, what to check or compare, and how the findings turn into \
a score from $low to $high. The evaluator will see $inputs, and nothing else: refer only to \
these. The steps put the criteria into practice; they add no criteria of their own.
Answer with a JSON object {"steps": [...]}: a list of strings, one step each, without numbers."""

_G_EVAL_STEPS_EXAMPLE = """\
Example.
Criteria: "Conciseness: no repetition or filler."
Answer: {"steps": ["Read the query and the response.", "Mark each sentence that repeats or does \
not help answer the query.", "Give the highest score when nothing is marked, less the more is."]}"""

_G_EVAL_SCORE = """\
Rate the text in block "prediction" from $low (worst) to $high (best) on the criteria, \
following the steps. Do not reward length, confidence or style the criteria do not ask for.$inputs
Criteria: $criteria
Steps:
$steps"""

_G_EVAL_SCORE_EXAMPLE = """\
Example.
Criteria: "Correctness." Text: "The Eiffel Tower is in Rome."
Answer: {"reason":"It is in Paris.","score":$low}"""


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


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _describe(columns: Sequence[str]) -> str:
    """The inputs the evaluator sees, in words."""
    return _and(['the text to rate ("prediction")'] + [words for col, _, words in _INPUTS if col in columns])


def _others(columns: Sequence[str]) -> str:
    """The sentence naming the data blocks beside the prediction ('' when there are none)."""
    parts = [words for col, _, words in _INPUTS if col in columns]
    return f" Also given: {_and(parts)}." if parts else ""


# -- the options -------------------------------------------------------------------------------
def _criteria(name: str, value: Any) -> str:
    if value is None:
        raise ValueError("criteria: g_eval needs the criteria to rate on, in words, e.g. criteria='Coherence: "
                         "the text is well structured and builds from sentence to sentence' (command line: "
                         "--option 'g_eval.criteria=...'; playground and Space: {\"criteria\": \"...\"} in "
                         "the options)")
    if not isinstance(value, str):
        raise TypeError(f"criteria: expected a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError("criteria: empty; describe what a good text does, in words")
    return value.strip()


def _steps(name: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(f"evaluation_steps: expected a list of strings, got {type(value).__name__}")
    for i, step in enumerate(value):
        if not isinstance(step, str):
            raise TypeError(f"evaluation_steps[{i}]: expected str, got {type(step).__name__}")
    steps = [s.strip() for s in value if s.strip()]
    if not steps:
        raise ValueError("evaluation_steps: give at least one step, or None to have the judge write them")
    return steps


def _scale(name: str, value: Any) -> tuple[int, int]:
    if isinstance(value, (list, tuple)):  # the command line's "1,10" gives two texts of digits
        value = type(value)(int(v) if isinstance(v, str) and v.strip().isdigit() else v for v in value)
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"score_range: expected two integers (low, high), got {value!r}")
    low, high = value
    if not 0 <= low < high or high - low > 100:
        raise ValueError(f"score_range: {value!r} must be 0 <= low < high with at most 101 values")
    return low, high


@dataclasses.dataclass(frozen=True)
class GEvalOptions(JudgedOptions):
    criteria: str | None = option(None, kind="str", check=_criteria, kw_only=True,
                                  doc='what a good text does, in words (e.g. "Coherence: the text is well '
                                      'structured and builds from sentence to sentence into a coherent whole"); '
                                      "required")
    evaluation_steps: list[str] | None = option(None, kind="list", check=_steps, kw_only=True,
                                                doc="the steps to follow; None: the judge writes them (one request "
                                                    "per run)")
    score_range: tuple[int, int] = option((1, 5), kind="list", check=_scale, kw_only=True,
                                          doc="the integer scale (low, high), 0 <= low < high")


class GEval(JudgedMetric):
    """G-Eval with your own criteria (Liu et al. 2023): the judge writes evaluation steps for the
    criteria once (or takes ``evaluation_steps``), then scores each prediction by them, a reason
    first. Score: an integer in ``score_range`` (default 1 to 5, higher is better), or, where the
    judge gives token log-probabilities, G-Eval's probability-weighted mean of the score values.
    The result carries ``evaluation_steps`` (pass them back to repeat a run exactly) and
    ``score_range``. Empty cases: an empty prediction is scored like any other text.

    Args:
        predictions: the texts to rate.
        sources, references, queries: optional texts the criteria need (one per example each):
            the source a text was written from, a reference text, the query it answers.
    """

    name = "g_eval"
    columns = {"predictions": "text"}
    optional_columns = {"queries": "text", "sources": "text", "references": "text"}
    Options = GEvalOptions
    score_range = (1.0, 5.0)
    prompts = {"steps": prompt("items", _G_EVAL_STEPS, _G_EVAL_STEPS_EXAMPLE, keys=("steps",), min_items=1,
                               max_items=12),
               "score": prompt("score", _G_EVAL_SCORE, _G_EVAL_SCORE_EXAMPLE, logprobs=True)}

    steps: list[str] | None = None  # the steps of a run (given, or written by the judge in ``prepare``)

    def signature_settings(self) -> dict[str, Any]:
        low, high = self.options.score_range
        return {"criteria": digest(self.options.criteria), "scale": f"{low}-{high}"}

    async def prepare(self, session: JudgeSession, columns: Sequence[str]) -> GEval:
        run = copy.copy(self)
        if self.options.evaluation_steps is not None:
            run.steps = list(self.options.evaluation_steps)
            return run
        low, high = self.options.score_range
        steps_prompt = self.prompt("steps")
        request = steps_prompt.request([("criteria", self.options.criteria)], low=low, high=high,
                                       inputs=_describe(columns))
        request = dataclasses.replace(request, check=_StepsCheck(request.check))
        judge = session.judge
        key = judge.request_key(request)
        try:
            memo = _STEPS_MEMO.setdefault(getattr(judge, "fn", judge), {})
        except TypeError:  # a function that takes no weak reference: no memo, the cache still serves
            memo = {}
        if key not in memo:
            result = await session.ask(request)
            if not result.ok:
                raise RequestFailed(f"{steps_prompt.task}: {result.error}", result.cause)
            memo[key] = list(result.value["steps"])
        run.steps = list(memo[key])
        return run

    def shared_statistics(self) -> dict[str, Any]:
        return {} if self.steps is None else {"evaluation_steps": list(self.steps)}

    def asks_once(self) -> bool:
        return self.options.evaluation_steps is None

    def pinned_options(self, run: JudgedMetric) -> dict[str, Any]:
        steps = getattr(run, "steps", None)
        return {} if steps is None else {"evaluation_steps": list(steps)}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        low, high = self.options.score_range
        blocks = [(block, example[col]) for col, block, _ in _INPUTS if col in example]
        blocks.append(("prediction", example["predictions"]))
        score_prompt = dataclasses.replace(self.prompt("score"), scale=(low, high))
        return await ask_score(session, score_prompt, blocks, criteria=self.options.criteria,
                               steps=items_block(self.steps or []), low=low, high=high, inputs=_others(list(example)))

    def outputs(self, stats: Stats) -> dict[str, Any]:
        return {"evaluation_steps": list(stats.shared.get("evaluation_steps") or []),
                "score_range": list(self.options.score_range)}

    def shared_fields(self, shared: Any) -> dict[str, Any]:
        steps = shared.get("evaluation_steps")
        return {} if steps is None else {"steps": digest(steps)}
