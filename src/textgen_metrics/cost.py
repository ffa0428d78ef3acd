"""What a run of LLM-guided metrics will cost, before any request: ``estimate_cost(...)`` and
``textgen-metrics score ... --dry-run``.

Each metric runs as it would, over the same inputs and options, with a stand-in judge that
sends nothing: every request the metric makes is rendered exactly as it would go to the judge
(the same prompts, the same data blocks, the same schema) and counted. The stand-in answers each
request with an answer of the shape its schema asks for, so that the metric goes on to its next
stage as it would:

- extracted items (claims, statements, opinions, G-Eval's steps): one per sentence of the text
  they are extracted from (at least one; G-Eval's steps: three). A stage that depends on them
  (the verdicts on the claims) is therefore an estimate from that expected item count, and the
  result says so per stage (``"depends_on_answers": true``);
- a reason: one sentence of 15 words; a verdict, a choice, a score: the first allowed value.

Prompt tokens are counted with the provider's tokenizer where a package ships it, else an
approximation that names itself (``judges.prices.token_counter_for``), and include the chat framing
and the answer's schema; completion tokens are those of the stand-in's answers, an estimate.
Prices come from ``prices=`` or the judge's ``prices``, else the table of
``judges.prices.PRICES``; the batch price is half the live one (OpenAI's Batch API, Anthropic's
Message Batches). A request whose validated answer is already in the judge's cache (the
``cache=`` of the judge or its options) costs nothing and is counted apart (``cached``), and its
cached answer is what the next stage is asked on, as in a rerun: a rerun's estimate counts only
what the rerun will send. Re-asks of unusable answers are not included.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .judges import get_judge
from .judges.base import Completion, Judge, JudgeFatalError, JudgeRequest, JudgeResult, Message
from .judges.prices import BATCH_DISCOUNT, TokenCounter, chat_tokens, price_for, token_counter_for

__all__ = ["estimate_cost", "format_estimate", "REASON_ESTIMATE"]

REASON_ESTIMATE = "The context states this directly, so the statement follows from it and is supported here."
_DATA = re.compile(r"<<<DATA (\S+) (\w+)>>>\n(.*?)\n<<<END \1 \2>>>", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_NUMBERED = re.compile(r"(?m)^1\. .*(?:\n\d+\. .*)*")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


@dataclasses.dataclass
class _Stage:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    depends_on_answers: bool = False
    cached: int = 0  # requests answered from the judge's cache: not sent, not paid


class _DryRunJudge(Judge):
    """Answers every request with a schema-shaped stand-in answer and counts what was asked."""

    def __init__(self, backend: str, model: str, mode: str, tokenizer: TokenCounter,
                 source: Judge | None = None) -> None:
        super().__init__(model, concurrency=1024)
        self.backend = backend
        self.mode = mode
        self.tokenizer = tokenizer
        self.source = source  # the real judge: its cache holds the answers a rerun would not ask for
        self.stages: dict[str, _Stage] = {}
        self._lists: set[str] = set()  # the numbered item lists the stand-in answered so far

    def _cached(self, request: JudgeRequest) -> str | None:
        """The text of a validated answer to ``request`` in the real judge's cache, else None."""
        source = self.source
        found = JudgeResult(task=request.task)  # as the run reads it: an entry it cannot use is asked again
        if source is None or not source._from_cache(source.request_key(request), request, found):
            return None
        return found.text

    async def _acomplete(self, messages: list[Message], request: JudgeRequest, ctx: Any,
                         tally: JudgeResult) -> Completion:
        from .llm.prompts import items_block

        tally.sent()
        stage = self.stages.setdefault(request.task, _Stage())
        dependent = any(m.group(0) in self._lists for m in _NUMBERED.finditer(
            "\n".join(str(m.get("content", "")) for m in messages)))
        stage.depends_on_answers = stage.depends_on_answers or dependent
        cached = self._cached(request)
        if cached is not None:
            stage.cached += 1
            return Completion(text=cached, prompt_tokens=0, completion_tokens=0, finish_reason="stop")
        text = str(messages[-1].get("content", "")) if messages else ""
        blocks = [m.group(3) for m in _DATA.finditer(text)]
        answer = self._answer(request.schema, blocks[0] if blocks else "")
        body = json.dumps(answer, ensure_ascii=False)
        prompt = chat_tokens(self.tokenizer, messages, request.schema)
        completion = self.tokenizer.count(body)
        stage.requests += 1
        stage.prompt_tokens += prompt
        stage.completion_tokens += completion
        for value in _lists(answer):
            self._lists.add(items_block(value))
        return Completion(text=body, prompt_tokens=prompt, completion_tokens=completion, finish_reason="stop")

    def _answer(self, schema: Any, source: str) -> Any:
        if not isinstance(schema, dict):
            return {"verdicts": {"1": {"reason": REASON_ESTIMATE, "verdict": "yes"}}}
        if "enum" in schema:
            return schema["enum"][0]
        kind = schema.get("type")
        if kind == "object":
            return {k: self._answer(v, source) for k, v in (schema.get("properties") or {}).items()}
        if kind == "array":
            items = _sentences(source) or ["Read the text and check it against the criteria, point by point."] * 3
            low = int(schema.get("minItems") or 0)
            high = schema.get("maxItems")
            if high is not None:
                items = items[: max(int(high) - 1, low, 1)]
            while len(items) < low:
                items.append(items[-1] if items else "item")
            return items
        if kind == "integer":
            return 1
        return REASON_ESTIMATE


def _lists(value: Any) -> list[list[str]]:
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, list) and v and all(isinstance(s, str) for s in v)]
    return []


def _judge_identity(judge: Any, judge_options: Mapping[str, Any] | None
                    ) -> tuple[str, str, Any, str, Judge | None]:
    """(backend, model, prices, mode, the judge itself or None) of the judge, without a request
    and without needing a key (without one there is no judge, and so no cache to read)."""
    try:
        made = get_judge(judge, **dict(judge_options or {}))
    except JudgeFatalError:  # no key or endpoint: the estimate of a judge string needs neither
        backend, sep, model = judge.partition(":") if isinstance(judge, str) else ("", "", "")
        if not sep or not model:
            raise
        return backend, model, (judge_options or {}).get("prices"), "json_schema", None
    return made.backend, made.model, made.prices, made.judge_mode, made


def estimate_cost(metrics: str | Sequence[str], *, judge: Any, options: Mapping[str, Mapping[str, Any]] | None = None,
                  judge_options: Mapping[str, Any] | None = None,
                  prices: Mapping[str, tuple[float, float]] | None = None, **inputs: Any) -> dict[str, Any]:
    """The requests, prompt and completion tokens and the price of scoring ``inputs`` (columns as
    keywords: ``predictions=``, ``contexts=``...) with each LLM-guided metric of ``metrics``,
    judged by ``judge`` (a judge string, object or function, with ``judge_options``), live and in
    batch mode, without sending a request. ``options``: ``{metric: {option: value}}`` as for
    scoring. ``prices``: ``{model: (USD per 1M prompt tokens, per 1M completion tokens)}``.

    Returns ``{"judge", "tokenizer", "price", "metrics": {name: {"examples", "requests",
    "prompt_tokens", "completion_tokens", "cached", "cost", "batch_cost", "stages": {task: {...}}}},
    "total", "notes"}`` (costs in USD; None without a price; ``requests`` and the tokens are what
    would be sent, ``cached`` the requests the judge's cache answers instead)."""
    from .registry import get_metric

    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics: name at least one LLM-guided metric")
    options = options or {}
    backend, model, judge_prices, mode, made = _judge_identity(judge, judge_options)
    price, source = price_for(backend, model, {**(judge_prices or {}), **(prices or {})})
    tokenizer = token_counter_for(backend, model)
    out: dict[str, Any] = {"judge": f"{backend}:{model}", "tokenizer": tokenizer.name, "tokens_exact": tokenizer.exact,
                           "price": {"prompt": price[0] if price else None, "completion": price[1] if price else None,
                                     "unit": "USD per 1M tokens", "source": source,
                                     "batch_discount": BATCH_DISCOUNT},
                           "metrics": {}}
    for name in names:
        spec = get_metric(name)
        if not spec.judge:
            raise ValueError(f"metrics: {name!r} sends no judge request; estimate_cost takes LLM-guided metrics")
        opts = {k: v for k, v in dict(options.get(name, {})).items() if k not in ("judge", "judge_options")}
        kinds = {**spec.columns, **getattr(spec, "optional_columns", {})}
        given = {c: inputs[c] for c in kinds if inputs.get(c) is not None}
        dry = _DryRunJudge(backend, model, mode, tokenizer, source=made)
        metric = spec(judge=dry, **dict(opts, on_error="raise"))
        stats = metric.statistics(given)
        stages = {task: dataclasses.asdict(s) for task, s in dry.stages.items()}
        entry: dict[str, Any] = {"examples": stats.count, "requests": sum(s.requests for s in dry.stages.values()),
                                 "prompt_tokens": sum(s.prompt_tokens for s in dry.stages.values()),
                                 "completion_tokens": sum(s.completion_tokens for s in dry.stages.values()),
                                 "cached": sum(s.cached for s in dry.stages.values())}
        entry.update(_costs(entry, price))
        entry["stages"] = {t: dict(s, **_costs(s, price)) for t, s in stages.items()}
        out["metrics"][name] = entry
    total = {k: sum(m[k] for m in out["metrics"].values())
             for k in ("examples", "requests", "prompt_tokens", "completion_tokens", "cached")}
    total.update(_costs(total, price))
    out["total"] = total
    out["notes"] = _notes(out, tokenizer)
    return out


def _costs(counts: Mapping[str, Any], price: tuple[float, float] | None) -> dict[str, float | None]:
    if price is None:
        return {"cost": None, "batch_cost": None}
    live = (counts["prompt_tokens"] * price[0] + counts["completion_tokens"] * price[1]) / 1e6
    return {"cost": live, "batch_cost": live * BATCH_DISCOUNT}


def _notes(out: Mapping[str, Any], tokenizer: TokenCounter) -> list[str]:
    notes = [f"prompt tokens: {tokenizer.name}; each request's messages, chat framing and answer schema",
             "completion tokens: an estimate (answers of the schema's shape: one item per sentence, a "
             "15-word reason per verdict)"]
    dependent = [t for m in out["metrics"].values() for t, s in m["stages"].items() if s["depends_on_answers"]]
    if dependent:
        notes.append(f"{', '.join(dependent)}: asked on the judge's earlier answers (the items it extracts); "
                     "estimated with one item per sentence of the text")
    cached = out["total"]["cached"]
    notes.append(f"{cached} requests answered from the judge's cache: not sent, not counted" if cached else
                 "no answer in the judge's cache: every request counted")
    notes.append("re-asks of unusable or cut-off answers are not included")
    return notes


def format_estimate(estimate: Mapping[str, Any]) -> str:
    """The estimate as a table (the command line's ``--dry-run``)."""
    rows = [["metric / stage", "requests", "cached", "prompt tokens", "completion tokens", "live USD", "batch USD"]]

    def money(v: Any) -> str:
        return "-" if v is None else f"{v:.4f}"

    for name, m in estimate["metrics"].items():
        rows.append([name, str(m["requests"]), str(m["cached"]), str(m["prompt_tokens"]), str(m["completion_tokens"]),
                     money(m["cost"]), money(m["batch_cost"])])
        for task, s in m["stages"].items():
            mark = " (*)" if s["depends_on_answers"] else ""
            rows.append([f"  {task}{mark}", str(s["requests"]), str(s["cached"]), str(s["prompt_tokens"]),
                         str(s["completion_tokens"]),
                         money(s["cost"]), money(s["batch_cost"])])
    t = estimate["total"]
    rows.append(["total", str(t["requests"]), str(t["cached"]), str(t["prompt_tokens"]), str(t["completion_tokens"]),
                 money(t["cost"]), money(t["batch_cost"])])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    p = estimate["price"]
    head = [f"cost estimate (no request sent): judge {estimate['judge']}",
            f"price: {p['prompt']} / {p['completion']} {p['unit']} (prompt / completion), {p['source']}; "
            f"batch: {p['batch_discount']:g} x live" if p["prompt"] is not None else f"price: {p['source']}"]
    notes = [f"note: {n}" for n in estimate["notes"]]
    if any(s["depends_on_answers"] for m in estimate["metrics"].values() for s in m["stages"].values()):
        notes.insert(0, "(*) depends on the judge's earlier answers: estimated from the expected item count")
    return "\n".join(head + lines + notes)
