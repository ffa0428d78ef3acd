"""The LLM-guided metrics (valor's definitions) on the judge engine.

Each metric extracts items (statements, claims or opinions) where its definition does, then asks
for exactly one verdict per item or context (the count is enforced by the schema and checked by
the parser), and computes its score from the verdicts. All examples run concurrently in one judge
session, so the judge's ``concurrency``, cache, repair and usage apply to every call. An example
whose judge answers stay unusable gets no score (None) and an error entry; the others are kept.
"""

import asyncio
import math

from ..aggregation import mean
from ..judges import JudgeError, JudgeRequest, Usage, get_judge, run_sync
from ..validation import check_columns
from . import prompts as P

__all__ = ["METRICS", "compute", "LLMMetric"]


class _Failed(Exception):
    pass


async def _ask(session, request, what):
    result = await session.ask(request)
    if not result.ok:
        raise _Failed(f"{what}: {result.error}")
    return result


async def _extract(session, key, task, blocks, what):
    req = JudgeRequest(P.messages(task, blocks), schema=P.items_schema(key), name=key)
    result = await _ask(session, req, what)
    return [s.strip() for s in result.value[key] if isinstance(s, str) and s.strip()]


async def _verdicts(session, task, blocks, count, what):
    if count == 0:
        return []
    req = JudgeRequest(P.messages(task, blocks), schema=P.verdicts_schema(count), name="verdicts")
    result = await _ask(session, req, what)
    return result.value["verdicts"]


def _yes(verdicts):
    return sum(1 for v in verdicts if v["verdict"] == "yes")


def _pair(items, verdicts):
    return [{"item": it, "verdict": v["verdict"], "reason": v["reason"]} for it, v in zip(items, verdicts)]


def _contexts(contexts):
    return [(f"context_{i + 1}", c) for i, c in enumerate(contexts)]


class LLMMetric:
    name = ""
    columns = {}
    empty_contexts_error = False  # True: an example without contexts is a ValueError

    async def score(self, session, ex):  # pragma: no cover - abstract
        raise NotImplementedError

    def check(self, inputs):
        if self.empty_contexts_error:
            for i, ctx in enumerate(inputs["contexts"]):
                if len(ctx) == 0:
                    raise ValueError(f"contexts[{i}]: empty list; {self.name} is undefined without "
                                     "contexts (it divides by their number)")


class _ItemsProportion(LLMMetric):
    """Extract items from the prediction, one verdict per item, score = yes / items."""

    key = ""
    extract_task = ""
    verdict_task = ""
    empty_score = 0.0

    def blocks(self, ex):
        return [("prediction", ex["predictions"])]

    async def score(self, session, ex):
        items = await _extract(session, self.key, self.extract_task, [("prediction", ex["predictions"])],
                               f"extracting {self.key}")
        if not items:
            return self.empty_score, {self.key: [], "verdicts": []}
        verdicts = await _verdicts(session, self.verdict_task.format(items=P.numbered(items)),
                                   self.blocks(ex), len(items), "verdicts")
        return _yes(verdicts) / len(items), {self.key: items, "verdicts": _pair(items, verdicts)}


class Bias(_ItemsProportion):
    name, key = "bias", "opinions"
    columns = {"predictions": "text"}
    extract_task, verdict_task = P.OPINIONS, P.BIAS


class Toxicity(_ItemsProportion):
    name, key = "toxicity", "opinions"
    columns = {"predictions": "text"}
    extract_task, verdict_task = P.OPINIONS, P.TOXICITY


class AnswerRelevance(_ItemsProportion):
    name, key = "answer_relevance", "statements"
    columns = {"predictions": "text", "queries": "text"}
    extract_task, verdict_task = P.STATEMENTS.format(name="prediction"), P.RELEVANCE

    def blocks(self, ex):
        return [("query", ex["queries"]), ("prediction", ex["predictions"])]


class Faithfulness(LLMMetric):
    name = "faithfulness"
    columns = {"predictions": "text", "contexts": "list"}

    async def score(self, session, ex):
        claims = await _extract(session, "claims", P.CLAIMS, [("prediction", ex["predictions"])],
                                "extracting claims")
        if not claims:
            return 1.0, {"claims": [], "verdicts": []}  # nothing claimed, nothing unfaithful
        if not ex["contexts"]:
            return 0.0, {"claims": claims, "verdicts": []}  # nothing can imply a claim
        task = P.IMPLIED.format(n=len(ex["contexts"]), items=P.numbered(claims))
        verdicts = await _verdicts(session, task, _contexts(ex["contexts"]), len(claims), "verdicts")
        return _yes(verdicts) / len(claims), {"claims": claims, "verdicts": _pair(claims, verdicts)}


class _PerContext(LLMMetric):
    """One verdict per context, given a leading text; score = yes / contexts."""

    empty_contexts_error = True
    lead = ("", "")  # (column, block name)
    task = ""

    async def score(self, session, ex):
        ctx = ex["contexts"]
        column, block = self.lead
        blocks = [(block, ex[column])] + _contexts(ctx)
        verdicts = await _verdicts(session, self.task.format(n=len(ctx)), blocks, len(ctx), "verdicts")
        return _yes(verdicts) / len(ctx), {"verdicts": _pair(ctx, verdicts)}


class Hallucination(_PerContext):
    name = "hallucination"
    columns = {"predictions": "text", "contexts": "list"}
    lead, task = ("predictions", "prediction"), P.CONTRADICTS


class ContextRelevance(_PerContext):
    name = "context_relevance"
    columns = {"queries": "text", "contexts": "list"}
    lead, task = ("queries", "query"), P.CONTEXT_RELEVANT


class ContextPrecision(LLMMetric):
    name = "context_precision"
    columns = {"queries": "text", "contexts": "list", "references": "text_or_list"}
    empty_contexts_error = True

    async def score(self, session, ex):
        ctx = ex["contexts"]
        task = P.CONTEXT_USEFUL.format(n=len(ctx))

        async def per_reference(ref):
            blocks = [("query", ex["queries"]), ("ground_truth", ref)] + _contexts(ctx)
            return await _verdicts(session, task, blocks, len(ctx), "verdicts")

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

    async def score(self, session, ex):
        ctx = ex["contexts"]

        async def per_reference(ref):
            statements = await _extract(session, "statements", P.STATEMENTS.format(name="ground_truth"),
                                        [("ground_truth", ref)], "extracting statements")
            if not statements:
                return 1.0, {"statements": [], "verdicts": []}  # nothing to recall
            if not ctx:
                return 0.0, {"statements": statements, "verdicts": []}
            task = P.ATTRIBUTABLE.format(n=len(ctx), items=P.numbered(statements))
            verdicts = await _verdicts(session, task, _contexts(ctx), len(statements), "verdicts")
            return _yes(verdicts) / len(statements), {"statements": statements,
                                                      "verdicts": _pair(statements, verdicts)}

        per_ref = await asyncio.gather(*(per_reference(r) for r in ex["references"]))
        return max(s for s, _ in per_ref), {"references": [dict(d, score=s) for s, d in per_ref]}


class AnswerCorrectness(LLMMetric):
    name = "answer_correctness"
    columns = {"predictions": "text", "references": "text_or_list"}

    async def score(self, session, ex):
        pred = ex["predictions"]
        pred_st = await _extract(session, "statements", P.STATEMENTS.format(name="prediction"),
                                 [("prediction", pred)], "extracting prediction statements")

        async def per_reference(ref):
            ref_st = await _extract(session, "statements", P.STATEMENTS.format(name="ground_truth"),
                                    [("ground_truth", ref)], "extracting ground truth statements")
            if not pred_st:
                return 0.0, {"statements": ref_st, "tp": 0, "fp": 0, "fn": len(ref_st)}
            schema = {"type": "object", "required": ["prediction_verdicts", "ground_truth_verdicts"],
                      "additionalProperties": False, "properties": {
                          "prediction_verdicts": P.verdicts_schema(len(pred_st))["properties"]["verdicts"],
                          "ground_truth_verdicts": P.verdicts_schema(len(ref_st))["properties"]["verdicts"]}}
            task = P.CORRECTNESS.format(pred_items=P.numbered(pred_st), ref_items=P.numbered(ref_st) or "(none)",
                                        n_pred=len(pred_st), n_ref=len(ref_st))
            req = JudgeRequest(P.messages(task, [("prediction", pred), ("ground_truth", ref)]),
                               schema=schema, name="verdicts")
            value = (await _ask(session, req, "verdicts")).value
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

    async def score(self, session, ex):
        req = JudgeRequest(P.messages(P.COHERENCE, [("source", ex["sources"]), ("summary", ex["predictions"])]),
                           schema=P.score_schema(), name="score", logprobs=True, top_logprobs=20)
        result = await _ask(session, req, "score")
        integer = result.value["score"]
        probs = _digit_probabilities(result.logprobs)
        if probs:
            weighted = sum(int(d) * p for d, p in probs.items()) / sum(probs.values())
            return weighted, {"score": integer, "probabilities": probs, "weighted": True}
        return float(integer), {"score": integer, "weighted": False}


def _digit_probabilities(logprobs):
    """Probabilities of "1".."5" at the first answer token that is one of them (G-Eval)."""
    for tok in logprobs or []:
        if str(tok.get("token", "")).strip() in {"1", "2", "3", "4", "5"}:
            probs = {}
            for alt in tok.get("top_logprobs") or [tok]:
                t = str(alt.get("token", "")).strip()
                if t in {"1", "2", "3", "4", "5"} and alt.get("logprob") is not None:
                    probs[t] = probs.get(t, 0.0) + math.exp(alt["logprob"])
            return probs or None
    return None


METRICS = {m.name: m for m in (AnswerCorrectness(), AnswerRelevance(), Bias(), Toxicity(),
                                ContextPrecision(), ContextRecall(), ContextRelevance(),
                                Faithfulness(), Hallucination(), SummaryCoherence())}


def compute(name, judge=None, use_aggregator=True, return_details=False, on_error="record",
            judge_options=None, progress=None, **inputs):
    """Run the LLM-guided metric ``name`` over the input columns with ``judge``.

    ``progress(1)``, when given, is called as each example gets its result."""
    metric = METRICS[name]
    if on_error not in ("record", "raise"):
        raise ValueError(f"on_error: {on_error!r} is not one of ['raise', 'record']")
    unknown = [k for k in inputs if k not in metric.columns]
    if unknown:
        raise TypeError(f"{name}: unexpected argument {unknown[0]!r}; inputs are {', '.join(metric.columns)}")
    inputs = {c: inputs.get(c) for c in metric.columns}
    for c, v in inputs.items():
        if v is None:
            raise ValueError(f"{c}: missing; {name} takes {', '.join(metric.columns)}")
    checked = check_columns(metric.columns, inputs, normalize_references=True)
    n = len(next(iter(checked.values())))
    if n == 0:
        raise ValueError(f"{next(iter(metric.columns))}: no examples; give at least one")
    metric.check(checked)
    judge = get_judge(judge, **(judge_options or {}))
    examples = [{c: checked[c][i] for c in metric.columns} for i in range(n)]
    before = Usage(**{f: getattr(judge.usage, f) for f in Usage.FIELDS})

    async def one(session, ex):
        try:
            score, details = await metric.score(session, ex)
            outcome = score, details, None
        except (_Failed, JudgeError) as e:
            outcome = None, {}, str(e)
        if progress is not None:
            progress(1)
        return outcome

    async def run_all():
        async with judge.session() as session:
            return await asyncio.gather(*(one(session, ex) for ex in examples))

    outcomes = run_sync(run_all())
    usage = Usage(**{f: getattr(judge.usage, f) - getattr(before, f) for f in Usage.FIELDS})
    errors = [{"index": i, "error": err} for i, (_, _, err) in enumerate(outcomes) if err]
    if errors and on_error == "raise":
        first = errors[0]
        raise JudgeError(f"{name}: example {first['index']}: {first['error']}")
    scores = [s for s, _, _ in outcomes]
    result = {name: mean(scores) if use_aggregator else scores,
              "judge_model": judge.model,
              "judge_usage": usage.as_dict(judge.model, judge.prices),
              "errors": errors}
    if return_details:
        result["details"] = [dict(d, error=err) for _, d, err in outcomes]
    return result
