"""The LLM-guided metrics (valor's definitions) on the judge engine.

Each metric extracts items (statements, claims or opinions) where its definition does, then asks
for exactly one verdict per item or context (the count is enforced by the schema, the indices by
the prompt's check), and computes its score from the verdicts. All examples run concurrently in
one judge session, so the judge's ``concurrency``, cache, re-asks and usage apply to every call.

What a judge failure does:
- one example's failure (an answer that stays unusable, cut off, a backend error) gives that
  example ``None`` and an entry in ``errors``; the other examples are scored;
- ``on_error="raise"`` raises ``ExampleJudgeError`` (a ``JudgeError`` with the metric and the
  example's index, from 0; chained to the cause, redacted) at the first such failure;
- a failure that would repeat for every example (``JudgeFatalError``: no API key, unreachable
  server, authentication, unknown model) stops the run at once and is raised.

Empty cases follow valor's ``computation.py``: no opinions: bias and toxicity 0; no statements:
answer relevance 0; no contexts: faithfulness, context precision, context relevance and context
recall 0 (no judge call), hallucination a ValueError; no claims: faithfulness 1. Where valor is
undefined (context recall for a ground truth without statements divides by zero there) the score
is 1: nothing to recall, nothing missed.

Metrics beyond valor's ten (``g_eval``, ``pairwise_preference``) live in their own modules and
join ``METRICS`` through ``register``; they use the hooks ``configure`` (their own arguments),
``prepare`` (requests asked once per run, before the examples) and ``finish`` (outputs beside
the score).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Any

from ..aggregation import mean
from ..judges import JudgeError, JudgeFatalError, JudgeSession, Usage, get_judge, run_sync
from ..judges.base import gather_or_cancel
from ..validation import check_columns
from .prompts import PROMPTS, Prompt, items_block

__all__ = ["METRICS", "compute", "LLMMetric", "register", "check_interval", "ExampleJudgeError"]

Example = dict[str, Any]
Details = dict[str, Any]


class _Failed(Exception):
    """One judge request of an example failed for good (``cause``: the engine's redacted copy)."""

    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class ExampleJudgeError(JudgeError):
    """One example's judge failure, raised with ``on_error="raise"``: ``metric``, ``index`` (the
    example's position in the inputs, from 0) and ``reason``; the message is
    ``"<metric>: example <index>: <reason>"``. Front ends that number rows from 1 format it
    themselves from ``index``."""

    def __init__(self, metric: str, index: int, reason: str) -> None:
        super().__init__(f"{metric}: example {index}: {reason}")
        self.metric, self.index, self.reason = metric, index, reason

    def __reduce__(self) -> tuple[Any, ...]:  # pickled with its fields (a worker process to its parent)
        return type(self), (self.metric, self.index, self.reason)


async def _ask(session: JudgeSession, prompt: Prompt, blocks: Sequence[tuple[str, str]],
               counts: dict[str, int] | None = None, **values: Any) -> Any:
    result = await session.ask(prompt.request(blocks, counts, **values))
    if not result.ok:
        raise _Failed(f"{prompt.task}: {result.error}", result.cause)
    return result


async def _extract(session: JudgeSession, prompt: Prompt, blocks: Sequence[tuple[str, str]],
                   **values: Any) -> list[str]:
    result = await _ask(session, prompt, blocks, **values)
    return [s.strip() for s in result.value[prompt.key] if isinstance(s, str) and s.strip()]


async def _verdicts(session: JudgeSession, prompt: Prompt, blocks: Sequence[tuple[str, str]], count: int,
                    **values: Any) -> list[dict[str, Any]]:
    if count == 0:
        return []
    result = await _ask(session, prompt, blocks, {prompt.key: count}, **values)
    return list(result.value[prompt.key])


def _yes(verdicts: Sequence[dict[str, Any]]) -> int:
    return sum(1 for v in verdicts if v["verdict"] == "yes")


def _pair(items: Sequence[str], verdicts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"item": it, "verdict": v["verdict"], "reason": v["reason"]} for it, v in zip(items, verdicts, strict=True)]


def _contexts(contexts: Sequence[str]) -> list[tuple[str, str]]:
    return [(f"context_{i + 1}", c) for i, c in enumerate(contexts)]


class LLMMetric:
    """One LLM-guided metric: ``score`` judges one example. ``key`` names the score in results
    (default: the metric's name); ``optional_columns`` are inputs a caller may leave out; the
    hooks ``configure``, ``prepare`` and ``finish`` serve metrics with arguments of their own."""

    name = ""
    key = ""
    columns: dict[str, str] = {}
    optional_columns: dict[str, str] = {}
    options: tuple[str, ...] = ()  # the metric's own arguments, given to ``configure``
    empty_contexts_error = False  # True: an example without contexts is a ValueError

    @property
    def score_key(self) -> str:
        return self.key or self.name

    def prompt(self, step: str) -> Prompt:
        return PROMPTS[f"{self.name}/{step}"]

    def configure(self, **options: Any) -> LLMMetric:
        """The metric for one run with its own arguments set and checked (a copy where it keeps
        state); the ten valor metrics have none."""
        return self

    async def prepare(self, session: JudgeSession, columns: Sequence[str]) -> None:
        """Requests asked once per run before the examples (``columns``: the inputs given).
        A ``_Failed`` here fails every example with its error."""

    def finish(self, result: dict[str, Any], outcomes: Sequence[tuple[float | None, Details, str | None]],
               use_aggregator: bool) -> None:
        """Outputs beside the score, added to ``result``."""

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:  # pragma: no cover
        raise NotImplementedError

    def check(self, inputs: dict[str, list[Any]]) -> None:
        if self.empty_contexts_error:
            for i, ctx in enumerate(inputs["contexts"]):
                if len(ctx) == 0:
                    raise ValueError(f"contexts[{i}]: empty list; {self.name} is undefined without "
                                     "contexts (it divides by their number)")


class _ItemsProportion(LLMMetric):
    """Extract items from the prediction, one verdict per item, score = yes / items."""

    extract_step = ""
    item_block = ""

    def blocks(self, ex: Example) -> list[tuple[str, str]]:
        return []

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        extract = self.prompt(self.extract_step)
        items = await _extract(session, extract, [("prediction", ex["predictions"])], block="prediction")
        if not items:
            return 0.0, {extract.key: [], "verdicts": []}
        verdicts = await _verdicts(session, self.prompt("verdicts"),
                                   self.blocks(ex) + [(self.item_block, items_block(items))], len(items))
        return _yes(verdicts) / len(items), {extract.key: items, "verdicts": _pair(items, verdicts)}


class Bias(_ItemsProportion):
    name, extract_step, item_block = "bias", "opinions", "opinions"
    columns = {"predictions": "text"}


class Toxicity(_ItemsProportion):
    name, extract_step, item_block = "toxicity", "opinions", "opinions"
    columns = {"predictions": "text"}


class AnswerRelevance(_ItemsProportion):
    name, extract_step, item_block = "answer_relevance", "statements", "statements"
    columns = {"predictions": "text", "queries": "text"}

    def blocks(self, ex: Example) -> list[tuple[str, str]]:
        return [("query", ex["queries"])]


class Faithfulness(LLMMetric):
    name = "faithfulness"
    columns = {"predictions": "text", "contexts": "list"}

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        if not ex["contexts"]:
            return 0.0, {"claims": None, "verdicts": []}  # valor: nothing can imply a claim
        claims = await _extract(session, self.prompt("claims"), [("prediction", ex["predictions"])])
        if not claims:
            return 1.0, {"claims": [], "verdicts": []}  # nothing claimed, nothing unfaithful
        blocks = _contexts(ex["contexts"]) + [("claims", items_block(claims))]
        verdicts = await _verdicts(session, self.prompt("verdicts"), blocks, len(claims), n=len(ex["contexts"]))
        return _yes(verdicts) / len(claims), {"claims": claims, "verdicts": _pair(claims, verdicts)}


class _PerContext(LLMMetric):
    """One verdict per context, given a leading text; score = yes / contexts."""

    lead = ("", "")  # (column, block name)
    empty_score = 0.0

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        ctx = ex["contexts"]
        if not ctx:
            return self.empty_score, {"verdicts": []}
        column, block = self.lead
        blocks = [(block, ex[column])] + _contexts(ctx)
        verdicts = await _verdicts(session, self.prompt("verdicts"), blocks, len(ctx), n=len(ctx))
        return _yes(verdicts) / len(ctx), {"verdicts": _pair(ctx, verdicts)}


class Hallucination(_PerContext):
    name = "hallucination"
    columns = {"predictions": "text", "contexts": "list"}
    lead = ("predictions", "prediction")
    empty_contexts_error = True


class ContextRelevance(_PerContext):
    name = "context_relevance"
    columns = {"queries": "text", "contexts": "list"}
    lead = ("queries", "query")


class ContextPrecision(LLMMetric):
    name = "context_precision"
    columns = {"queries": "text", "contexts": "list", "references": "text_or_list"}

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        ctx = ex["contexts"]
        if not ctx:
            return 0.0, {"useful": [], "verdicts": []}  # valor: no contexts, precision 0
        prompt = self.prompt("verdicts")

        async def per_reference(ref: str) -> list[dict[str, Any]]:
            blocks = [("query", ex["queries"]), ("ground_truth", ref)] + _contexts(ctx)
            return await _verdicts(session, prompt, blocks, len(ctx), n=len(ctx))

        per_ref = await asyncio.gather(*(per_reference(r) for r in ex["references"]))
        # a context is useful if any reference finds it so
        useful = [any(v[k]["verdict"] == "yes" for v in per_ref) for k in range(len(ctx))]
        hits = 0
        total = 0.0
        for k, u in enumerate(useful, 1):
            if u:
                hits += 1
                total += hits / k  # precision@k at each useful position
        score = total / hits if hits else 0.0
        return score, {"useful": useful, "verdicts": [_pair(ctx, v) for v in per_ref]}


class ContextRecall(LLMMetric):
    name = "context_recall"
    columns = {"contexts": "list", "references": "text_or_list"}

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        ctx = ex["contexts"]
        if not ctx:
            return 0.0, {"references": []}  # valor: nothing retrieved, nothing recalled

        async def per_reference(ref: str) -> tuple[float, Details]:
            statements = await _extract(session, self.prompt("statements"), [("ground_truth", ref)],
                                        block="ground_truth")
            if not statements:
                return 1.0, {"statements": [], "verdicts": []}  # nothing to recall
            blocks = _contexts(ctx) + [("statements", items_block(statements))]
            verdicts = await _verdicts(session, self.prompt("verdicts"), blocks, len(statements), n=len(ctx))
            return _yes(verdicts) / len(statements), {"statements": statements,
                                                      "verdicts": _pair(statements, verdicts)}

        per_ref = await asyncio.gather(*(per_reference(r) for r in ex["references"]))
        return max(s for s, _ in per_ref), {"references": [dict(d, score=s) for s, d in per_ref]}


class AnswerCorrectness(LLMMetric):
    name = "answer_correctness"
    columns = {"predictions": "text", "references": "text_or_list"}

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        pred = ex["predictions"]
        extract = self.prompt("statements")
        pred_st = await _extract(session, extract, [("prediction", pred)], block="prediction")
        prompt = self.prompt("verdicts")

        async def per_reference(ref: str) -> tuple[float, Details]:
            ref_st = await _extract(session, extract, [("ground_truth", ref)], block="ground_truth")
            if not pred_st:
                return 0.0, {"statements": ref_st, "tp": 0, "fp": 0, "fn": len(ref_st)}
            counts = {"prediction_verdicts": len(pred_st), "ground_truth_verdicts": len(ref_st)}
            blocks = [("prediction", pred), ("ground_truth", ref),
                      ("prediction_statements", items_block(pred_st)),
                      ("ground_truth_statements", items_block(ref_st) if ref_st else "(none)")]
            value = (await _ask(session, prompt, blocks, counts)).value
            tp = _yes(value["prediction_verdicts"])
            fp = len(pred_st) - tp
            fn = len(ref_st) - _yes(value["ground_truth_verdicts"])
            f1 = tp / (tp + 0.5 * (fp + fn)) if tp else 0.0
            return f1, {"statements": ref_st, "tp": tp, "fp": fp, "fn": fn,
                        "prediction_verdicts": _pair(pred_st, value["prediction_verdicts"]),
                        "ground_truth_verdicts": _pair(ref_st, value["ground_truth_verdicts"])}

        per_ref = await asyncio.gather(*(per_reference(r) for r in ex["references"]))
        return max(s for s, _ in per_ref), {"prediction_statements": pred_st,
                                            "references": [dict(d, score=s) for s, d in per_ref]}


class SummaryCoherence(LLMMetric):
    """1-5; with token log-probabilities, G-Eval's probability-weighted mean over 1..5."""

    name = "summary_coherence"
    columns = {"predictions": "text", "sources": "text"}

    async def score(self, session: JudgeSession, ex: Example) -> tuple[float, Details]:
        result = await _ask(session, self.prompt("score"), [("source", ex["sources"]), ("summary", ex["predictions"])])
        integer = result.value["score"]
        details: Details = {"score": integer, "reason": result.value["reason"]}
        probs = score_probabilities(result.logprobs, range(1, 6))
        if probs:
            weighted = sum(int(d) * p for d, p in probs.items()) / sum(probs.values())
            return weighted, dict(details, probabilities=probs, weighted=True)
        return float(integer), dict(details, weighted=False)


def score_probabilities(logprobs: list[dict[str, Any]] | None, scale: Any,
                        key: str = "score") -> dict[str, float] | None:
    """Probabilities of the score values at the answer's score token (G-Eval): the first token
    after ``"<key>":`` that is a score value, with its top alternatives. A digit in the reason
    before it is not the score; None when the judge gave no log-probabilities."""
    values = {str(v) for v in scale}
    seen = ""
    for tok in logprobs or []:
        token = str(tok.get("token", ""))
        if token.strip() in values and seen.rstrip().rstrip('"').rstrip().endswith(":") \
                and f'"{key}"' in seen[-len(key) - 12:]:
            probs: dict[str, float] = {}
            for alt in tok.get("top_logprobs") or [tok]:
                t = str(alt.get("token", "")).strip()
                if t in values and alt.get("logprob") is not None:
                    probs[t] = probs.get(t, 0.0) + math.exp(alt["logprob"])
            return probs or None
        seen += token
    return None


METRICS: dict[str, LLMMetric] = {m.name: m for m in (
    AnswerCorrectness(), AnswerRelevance(), Bias(), Toxicity(), ContextPrecision(), ContextRecall(),
    ContextRelevance(), Faithfulness(), Hallucination(), SummaryCoherence())}


def check_interval(confidence_level: Any, n_resamples: Any, seed: Any) -> None:
    """The interval options (``confidence_level`` None: no interval; ``seed`` None: unseeded)."""
    from ..significance import check_interval_options

    check_interval_options(confidence_level, n_resamples, seed, optional=True)


def register(metric: LLMMetric) -> LLMMetric:
    """Add ``metric`` to ``METRICS`` (and so to ``compute``, the registry, the CLI and the
    playground); returns it."""
    METRICS[metric.name] = metric
    return metric


Outcome = tuple[float | None, Details, str | None]
_INTERVAL_OPTIONS = ("confidence_level", "n_resamples", "seed")


def compute(name: str, judge: Any = None, use_aggregator: bool = True, return_details: bool = False,
            on_error: str = "record", judge_options: dict[str, Any] | None = None,
            progress: Callable[[int], Any] | None = None, **inputs: Any) -> dict[str, Any]:
    """Run the LLM-guided metric ``name`` over the input columns with ``judge``; arguments that
    are not columns go to the metric's ``configure`` (``criteria`` of ``g_eval``...).

    ``progress(1)``, when given, is called as each example gets its result."""
    metric = METRICS[name]
    if on_error not in ("record", "raise"):
        raise ValueError(f"on_error: {on_error!r} is not one of ['raise', 'record']")
    for flag, value in (("use_aggregator", use_aggregator), ("return_details", return_details)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag}: expected True or False, got {value!r}")
    kinds = {**metric.columns, **metric.optional_columns}
    unknown = [k for k in inputs if k not in kinds and k not in metric.options and k not in _INTERVAL_OPTIONS]
    if unknown:
        raise TypeError(f"{name}: unexpected argument {unknown[0]!r}; inputs are {', '.join(kinds)}"
                        + (f"; options are {', '.join(metric.options)}" if metric.options else ""))
    # the interval options of a metric that does not take them itself: resampled here
    interval = {k: inputs.pop(k) for k in _INTERVAL_OPTIONS if k in inputs and k not in metric.options}
    if interval:
        check_interval(interval.get("confidence_level"), interval.get("n_resamples", 1000),
                       interval.get("seed", 12345))
    metric = metric.configure(**{k: v for k, v in inputs.items() if k in metric.options})
    for c in metric.columns:
        if inputs.get(c) is None:
            raise ValueError(f"{c}: missing; {name} takes {', '.join(metric.columns)}")
    given = {c: kind for c, kind in kinds.items() if inputs.get(c) is not None}
    checked = check_columns(given, {c: inputs[c] for c in given}, normalize_references=True)
    n = len(next(iter(checked.values())))
    if n == 0:
        raise ValueError(f"{next(iter(metric.columns))}: no examples; give at least one")
    metric.check(checked)
    judge = get_judge(judge, **(judge_options or {}))
    examples = [{c: checked[c][i] for c in given} for i in range(n)]
    before = Usage.of(judge.usage)

    async def one(session: JudgeSession, i: int, ex: Example) -> tuple[float | None, Details, str | None]:
        cause: BaseException | None = None
        try:
            score, details = await metric.score(session, ex)
            outcome: tuple[float | None, Details, str | None] = (score, details, None)
        except JudgeFatalError:
            raise
        except _Failed as e:
            outcome, cause = (None, {}, str(e)), e.cause
        except Exception as e:  # anything else while judging this example stays with it
            outcome = None, {}, judge.redact(f"{type(e).__name__}: {e}") or type(e).__name__
            cause = judge.redacted(e)
        if on_error == "raise" and outcome[2] is not None:  # outside the handler: the exception
            raise ExampleJudgeError(name, i, outcome[2]) from cause  # handled there is not its context
        if progress is not None:
            progress(1)
        return outcome

    async def run_all() -> list[Outcome]:
        async with judge.session() as session:
            failed: _Failed | None = None
            try:
                await metric.prepare(session, list(given))
            except _Failed as e:  # a request of the whole run failed: every example says so
                failed = e
            if failed is not None:
                if on_error == "raise":
                    raise JudgeError(f"{name}: {failed}") from failed.cause
                if progress is not None:
                    progress(n)
                return [(None, {}, str(failed))] * n
            return await gather_or_cancel([one(session, i, ex) for i, ex in enumerate(examples)])

    outcomes = run_sync(run_all())
    usage = Usage.of(judge.usage).since(before)
    errors = [{"index": i, "error": err} for i, (_, _, err) in enumerate(outcomes) if err]
    scores = [s for s, _, _ in outcomes]
    result: dict[str, Any] = {metric.score_key: mean(scores) if use_aggregator else scores}
    metric.finish(result, outcomes, use_aggregator)
    if interval.get("confidence_level") is not None:
        from ..significance import bootstrap_ci

        ci = bootstrap_ci(scores, interval["confidence_level"], interval.get("n_resamples", 1000),
                          interval.get("seed", 12345))
        result[f"{metric.score_key}_ci"] = [ci.low, ci.high]
    result.update({"judge_model": judge.model,
                   "judge_mode": judge.judge_mode,
                   "judge_usage": usage.as_dict(judge.model, judge.prices),
                   "errors": errors})
    if return_details:
        result["details"] = [dict(d, error=err) for _, d, err in outcomes]
    return result
