"""The LLM-guided metrics on the spine: :class:`JudgedMetric`, a
:class:`~textgen_metrics.metric.Metric` whose statistics a judge gives, and the steps its metrics
share (asking for items, for verdicts, for a score).

A metric declares, beside what every ``Metric`` declares (``name``, ``columns``, ``Options``,
``score_range``): its ``prompts``, one :class:`~textgen_metrics.llm.prompts.Prompt` per step
(the class gives each its stable task id ``"<name>/<step>"``), and
``async score_example(session, example) -> (score, details)``, one example judged. The spine
does the rest. Every example of :meth:`~JudgedMetric.statistics` runs concurrently in one judge
session (the judge's ``concurrency``, cache, re-asks, cut-off answers, usage), and the
statistics are, per example, the score, the details (extracted items, verdicts and the judge's
reasons) and the error; the usage of the judge (requests, cached answers, tokens: counters that
add); the judge's model (every part alike). So the statistics of parts of a corpus, judged in
different processes or on different machines, merge exactly (``+``) and travel as JSON, as every
metric's; :meth:`~JudgedMetric.score` gives the mean of the per-example scores (examples without
a score left out), its interval, the outputs a metric adds, the judge's model, mode and usage,
the errors and the signature (the metric's settings, its prompts' version, the judge and its
mode).

What a judge failure does:
- one example's failure (an answer that stays unusable, cut off, a backend error) gives that
  example ``None`` and an entry in ``errors``; the other examples are scored;
- ``on_error="raise"`` raises ``ExampleJudgeError`` (a ``JudgeError`` with the metric and the
  example's index, from 0; chained to the cause, redacted) at the first such failure;
- a failure that would repeat for every example (``JudgeFatalError``: no API key, unreachable
  server, authentication, unknown model) stops the run at once and is raised.

A bug raises: the only failure an example keeps is :class:`RequestFailed` (a request the engine
gave up on); any other exception of a metric's ``score_example``, ``prepare`` or of the
package's prompts leaves the run with its traceback.

Empty cases follow valor's ``computation.py`` (each metric's docstring says its own).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from ..aggregation import mean
from ..errors import InputError
from ..judges import Judge, JudgeError, JudgeSession, Usage, get_judge, run_sync
from ..judges.base import JudgeResult, gather_or_cancel
from ..metric import MeanMetric, Options, Result, Stats, option
from ..signature import bootstrap_fields, signature, with_fields
from ..significance import DEFAULT_SEED, percentile_interval
from ..validation import check_bool, check_columns
from .prompts import SYSTEM, Prompt, items_block

__all__ = ["JudgedMetric", "JudgedOptions", "ItemsProportion", "PerContext", "RequestFailed", "ExampleJudgeError",
           "METRICS", "ask", "ask_items", "ask_verdicts", "ask_score", "count_yes", "pair",
           "context_blocks", "score_probabilities", "weighted_score", "Example", "Details", "Outcome", "digest"]

Example = dict[str, Any]
Details = dict[str, Any]
Outcome = tuple[float | None, Details, str | None]  # (score, details, error) of one example


class RequestFailed(Exception):
    """A judge request of an example failed for good (``cause``: the engine's redacted copy of
    its exception): that example's error, the one failure :meth:`JudgedMetric.statistics` keeps
    with the example."""

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


# -- asking the judge ------------------------------------------------------------------------------
async def ask(session: JudgeSession, prompt: Prompt, blocks: Sequence[tuple[str, str]],
              counts: dict[str, int] | None = None, **values: Any) -> JudgeResult:
    """The judge's validated answer to ``prompt`` over the data ``blocks``; a request the engine
    gave up on is :class:`RequestFailed`."""
    result = await session.ask(prompt.request(blocks, counts, **values))
    if not result.ok:
        raise RequestFailed(f"{prompt.task}: {result.error}", result.cause)
    return result


async def ask_items(session: JudgeSession, prompt: Prompt, blocks: Sequence[tuple[str, str]],
                    **values: Any) -> list[str]:
    """The items (claims, statements, opinions) the judge extracts, blank ones left out."""
    result = await ask(session, prompt, blocks, **values)
    return [s.strip() for s in result.value[prompt.key] if isinstance(s, str) and s.strip()]


async def ask_verdicts(session: JudgeSession, prompt: Prompt, blocks: Sequence[tuple[str, str]], count: int,
                       **values: Any) -> list[dict[str, Any]]:
    """``count`` verdicts (``{"index", "reason", "verdict"}``, in item order); none asked for
    no item."""
    if count == 0:
        return []
    result = await ask(session, prompt, blocks, {prompt.key: count}, **values)
    return list(result.value[prompt.key])


def count_yes(verdicts: Sequence[dict[str, Any]]) -> int:
    return sum(1 for v in verdicts if v["verdict"] == "yes")


def pair(items: Sequence[str], verdicts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item with its verdict and the judge's reason (the details of a result)."""
    return [{"item": it, "verdict": v["verdict"], "reason": v["reason"]} for it, v in zip(items, verdicts, strict=True)]


def context_blocks(contexts: Sequence[str]) -> list[tuple[str, str]]:
    return [(f"context_{i + 1}", c) for i, c in enumerate(contexts)]


# -- G-Eval's weighting (summary_coherence and g_eval) -----------------------------------------------
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


async def ask_score(session: JudgeSession, prompt: Prompt, blocks: Sequence[tuple[str, str]],
                    **values: Any) -> tuple[float, Details]:
    """A score on the prompt's ``scale`` after a reason: G-Eval's probability-weighted score where
    the judge gives the score token's log-probabilities (:func:`weighted_score`), else the
    integer; details ``score``, ``reason``, ``weighted`` (and ``probabilities``)."""
    low, high = prompt.scale
    result = await ask(session, prompt, blocks, **values)
    integer = result.value["score"]
    details: Details = {"score": integer, "reason": result.value["reason"]}
    probs = score_probabilities(result.logprobs, range(low, high + 1))
    weighted = weighted_score(probs, integer, low, high)
    if weighted is not None:
        return weighted, dict(details, probabilities=probs, weighted=True)
    return float(integer), dict(details, weighted=False)


def digest(value: Any) -> str:
    """A short hash of a JSON-able value (a text, a list of texts) for a signature."""
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()[:8]


# -- the metric ------------------------------------------------------------------------------------
def _check_on_error(name: str, value: Any) -> str:
    if value not in ("record", "raise"):
        raise ValueError(f"{name}: {value!r} is not one of ['raise', 'record']")
    return str(value)


@dataclasses.dataclass(frozen=True)
class JudgedOptions(Options):
    """The options every LLM-guided metric takes: the judge, what a result holds, what a failed
    example does; a ``seed`` of None draws fresh resamples."""

    judge: Any = option(None, kind="json", front_end=True, kw_only=True,
                        doc='the judge, here or at evaluate.load(..., judge=...): a judge string ("openai:<model>": '
                            "an OpenAI-compatible server, OPENAI_BASE_URL and OPENAI_API_KEY; \"hf:<local model>\"), "
                            "a textgen_metrics judge object (OpenAIJudge, HFJudge, CallableJudge), or any function "
                            "messages -> str (it may take task= too)")
    use_aggregator: bool = option(True, check=check_bool, front_end=True, kw_only=True,
                                  doc="the mean over the examples that got a score (True) or one score per "
                                      "example, None where the judge's answers stayed unusable (False)")
    return_details: bool = option(False, check=check_bool, kw_only=True,
                                  doc="add per-example details: the extracted items, each verdict with the "
                                      "judge's reason, and any error")
    on_error: str = option("record", check=_check_on_error, kw_only=True,
                           doc='"record" keeps going (a failed example gets None and an entry in errors) or '
                               '"raise" (raises on the first example that failed)')
    judge_options: dict[str, Any] | None = option(None, kind="json", front_end=True, kw_only=True,
                                                  doc="options for the judge's constructor when judge is a string "
                                                      "or a function (concurrency, cache, ...)")
    progress: Callable[[int], Any] | None = option(None, kind="json", front_end=True, kw_only=True,
                                                   doc="called with 1 as each example gets its result")
    # seed=None draws fresh resamples here (unseeded), so the type is wider than the base's int
    seed: int | None = option(DEFAULT_SEED, kind="int", kw_only=True,  # type: ignore[assignment]
                              doc="fixes the resamples; None draws fresh ones")

    unseeded: ClassVar[bool] = True


class JudgedMetric(MeanMetric):
    """A metric whose per-example scores a judge gives (see the module's docstring).

    Hooks: ``prompts`` and :meth:`score_example` (every metric); :meth:`check` (inputs a
    judge cannot score: a ValueError naming the example); :meth:`prepare` (requests asked once
    per run, before the examples: G-Eval's steps); :meth:`shared_statistics` (values every part
    of a corpus must have alike); :meth:`summary` and :meth:`outputs` (what a result holds beside
    the mean score); :meth:`signature_settings` (the metric's own settings in its signature).
    """

    judge = True
    keyword_columns = True
    Options = JudgedOptions
    key: ClassVar[str] = ""  # the score's name in results, when it is not the metric's
    score_key: ClassVar[str] = ""  # key or name
    prompts: ClassVar[dict[str, Prompt]] = {}  # by step; the task ids are "<name>/<step>"
    prompts_version: ClassVar[str] = ""  # a hash of what the judge reads: the system rule and the prompts

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.score_key = cls.key or cls.name
        if cls.name and "prompts" in cls.__dict__:  # its own prompts get its task ids
            cls.prompts = {step: dataclasses.replace(p, task=f"{cls.name}/{step}") for step, p in cls.prompts.items()}
            cls.prompts_version = digest([SYSTEM, *[dataclasses.astuple(p) for _, p in sorted(cls.prompts.items())]])

    # -- what it is ------------------------------------------------------------------------------
    def keys(self) -> tuple[str, ...]:
        return (self.score_key,)

    def prompt(self, step: str) -> Prompt:
        return self.prompts[step]

    def signature_settings(self) -> dict[str, Any]:
        """The metric's own settings that change a score (G-Eval's criteria and scale)."""
        return {}

    def settings_signature(self) -> str:
        return signature(self.name, **self.signature_settings(), prompts=self.prompts_version)

    def signature(self, nrefs: int | None, *, per_example: bool = False, n_bootstrap: int | None = None,
                  seed: int | None = None, test: tuple[str, int] | None = None, ci: float | None = None) -> str:
        """The settings, the judge given in the options (and the mode it asks in now), the
        bootstrap's fields."""
        judge = self.resolved_judge if self.options.judge is not None else None
        fields = self._judge_fields(judge.backend, judge.model, judge.judge_mode) if judge is not None else {}
        return with_fields(self.settings_signature(), **fields, **bootstrap_fields(n_bootstrap, seed, test, ci))

    @staticmethod
    def _judge_fields(backend: Any, model: Any, mode: Any) -> dict[str, Any]:
        return {"judge": model if str(model).startswith(f"{backend}:") else f"{backend}:{model}", "mode": mode}

    @functools.cached_property
    def resolved_judge(self) -> Judge:
        """The judge of the options (one for every statistics of this metric object: one cache,
        one connection pool)."""
        return get_judge(self.options.judge, **(self.options.judge_options or {}))

    # -- the statistics --------------------------------------------------------------------------
    def statistic_names(self) -> tuple[str, ...]:
        return (self.score_key, "details", "error", "judge_mode")

    def check_inputs(self, inputs: Mapping[str, Any]) -> dict[str, list[Any]]:
        """The columns checked (argument and example index); a ``text_or_list`` column as lists;
        then :meth:`check`."""
        for column in self.columns:
            if inputs.get(column) is None:
                raise InputError(f"missing; {self.name} takes {', '.join(self.columns)}", column)
        kinds = {**self.columns, **self.optional_columns}
        given = {c: kind for c, kind in kinds.items() if inputs.get(c) is not None}
        checked = check_columns(given, {c: inputs[c] for c in given}, normalize_references=True)
        self.check(checked)
        return checked

    def check(self, inputs: dict[str, list[Any]]) -> None:
        """The hook for inputs the metric is undefined on (hallucination without contexts)."""

    async def prepare(self, session: JudgeSession, columns: Sequence[str]) -> JudgedMetric:
        """The metric for one run, with what is asked once per run before the examples
        (``columns``: the inputs given); a :class:`RequestFailed` here fails every example."""
        return self

    def shared_statistics(self) -> dict[str, Any]:
        """Values of a run that every part of a corpus must have alike (G-Eval's steps)."""
        return {}

    def asks_once(self) -> bool:
        """Whether :meth:`prepare` asks the judge anything with these options (G-Eval without
        ``evaluation_steps``); a class whose ``prepare`` is the default's never does."""
        return type(self).prepare is not JudgedMetric.prepare

    def pinned_options(self, run: JudgedMetric) -> dict[str, Any]:
        """The options that make a metric ask nothing in :meth:`prepare` and run as ``run`` (its
        prepared copy) did: G-Eval's ``evaluation_steps``."""
        return {}

    def pin_run(self, columns: Sequence[str]) -> tuple[dict[str, Any], dict[str, int]]:
        """What :meth:`prepare` asks once per run, asked now (``columns``: the inputs the run
        will be given), as options that make every part of a corpus judged apart (a cluster's
        workers) run alike, and the judge's usage for it (the library counts it in the run's).
        A failed request raises a :class:`~textgen_metrics.judges.JudgeError`. A metric that
        asks nothing (:meth:`asks_once`) opens no session: a local judge's model stays unloaded."""
        if not self.asks_once():
            return {}, {}

        async def ask() -> tuple[JudgedMetric, Usage]:
            async with self.resolved_judge.session() as session:
                try:
                    run = await self.prepare(session, list(columns))
                except RequestFailed as e:
                    raise JudgeError(f"{self.name}: {e}") from e.cause
                return run, session.usage

        run, usage = run_sync(ask())
        return self.pinned_options(run), {f: getattr(usage, f) for f in Usage.FIELDS}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        """One example judged: (score, details). ``example`` maps each given column to its value
        (a ``text_or_list`` column: a list)."""
        raise NotImplementedError

    def statistics(self, inputs: Mapping[str, Any]) -> Stats:
        """Every example judged in one session: per example the score, the details and the
        error (None, or the failure the example keeps); the judge's usage; its model."""
        checked = self.check_inputs(inputs)
        n = len(checked[next(iter(self.columns))])
        if not n:
            return Stats(self.name, self.statistics_settings, self.no_statistics())
        judge = self.resolved_judge
        examples = [{c: values[i] for c, values in checked.items()} for i in range(n)]
        outcomes, usage, run = run_sync(self._judge_all(judge, examples, list(checked)))
        columns: dict[str, list[Any]] = {
            self.score_key: [s for s, _, _ in outcomes], "details": [d for _, d, _ in outcomes],
            "error": [e for _, _, e in outcomes], "judge_mode": [judge.judge_mode] * n}
        shared: dict[str, Any] = {"judge_model": judge.model, "judge_backend": judge.backend,
                                  **run.shared_statistics()}
        prices = (judge.prices or {}).get(judge.model)
        if prices is not None:
            shared["judge_prices"] = [float(p) for p in prices]
        totals = {f: getattr(usage, f) for f in Usage.FIELDS}
        return Stats(self.name, self.statistics_settings, columns, totals, shared)

    async def _judge_all(self, judge: Judge, examples: list[Example], columns: list[str]
                         ) -> tuple[list[Outcome], Usage, JudgedMetric]:
        progress = self.options.progress
        async with judge.session() as session:
            failed: RequestFailed | None = None
            try:
                run = await self.prepare(session, columns)
            except RequestFailed as e:  # a request of the whole run failed: every example says so
                failed = e
            if failed is not None:  # raised outside the handler: the failure is not its context
                if self.options.on_error == "raise":
                    raise JudgeError(f"{self.name}: {failed}") from failed.cause
                if progress is not None:
                    progress(len(examples))
                return [(None, {}, str(failed))] * len(examples), session.usage, self
            outcomes = await gather_or_cancel([run._judge_one(session, i, ex) for i, ex in enumerate(examples)])
            return outcomes, session.usage, run

    async def _judge_one(self, session: JudgeSession, index: int, example: Example) -> Outcome:
        cause: BaseException | None = None
        try:
            score, details = await self.score_example(session, example)
            outcome: Outcome = (score, details, None)
        except RequestFailed as e:  # the judge's failure stays with its example; anything else raises
            outcome, cause = (None, {}, str(e)), e.cause
        if self.options.on_error == "raise" and outcome[2] is not None:  # outside the handler: the
            raise ExampleJudgeError(self.name, index, outcome[2]) from cause  # failure is not its context
        if self.options.progress is not None:
            self.options.progress(1)
        return outcome

    # -- the score -------------------------------------------------------------------------------
    def summary(self, stats: Stats) -> dict[str, Any]:
        """Numbers beside the mean score, in the aggregate and the per-example result alike
        (pairwise preference's counts)."""
        return {}

    def outputs(self, stats: Stats) -> dict[str, Any]:
        """Outputs beside the scores (G-Eval's steps and scale)."""
        return {}

    def shared_fields(self, shared: Mapping[str, Any]) -> dict[str, Any]:
        """Signature fields from the shared statistics (G-Eval's steps)."""
        return {}

    def score(self, stats: Stats) -> Result:
        """The mean of the per-example scores (examples without one left out), the metric's
        outputs, the judge's model, mode and usage, the errors, the details (with
        ``return_details``), the interval (with ``confidence_level``) and the signature."""
        self._check_stats(stats)
        key = self.score_key
        scores = stats.columns[key]
        summary = self.summary(stats)
        errors = stats.columns["error"]
        model = stats.shared.get("judge_model")
        prices = stats.shared.get("judge_prices")
        table = {str(model): (prices[0], prices[1])} if prices else None
        mode = _modes(stats.columns["judge_mode"])
        extras: dict[str, Any] = {
            **self.outputs(stats), "judge_model": model, "judge_mode": mode,
            "judge_usage": Usage(**stats.totals).as_dict(model, table),
            "errors": [{"index": i, "error": e} for i, e in enumerate(errors) if e is not None]}
        if self.options.return_details:
            extras["details"] = [dict(d, error=e) for d, e in zip(stats.columns["details"], errors, strict=True)]
        intervals: dict[str, list[float | None]] = {}
        level = self.options.confidence_level
        fields: dict[str, Any] = self._judge_fields(stats.shared.get("judge_backend"), model, mode)
        fields.update(self.shared_fields(stats.shared))
        if level is not None:
            low, high = percentile_interval(scores, level, self.options.n_resamples, self.options.seed)
            intervals[key] = [low, high]
            fields.update(bootstrap_fields(self.options.n_resamples, self.options.seed, None, level))
        sign = with_fields(self.settings_signature(), **fields)
        aggregate = {key: mean(scores), **summary}
        return Result(self.name, self.keys(), stats.count, aggregate, lambda: {key: list(scores), **summary},
                      extras, intervals, sign)


class ItemsProportion(JudgedMetric):
    """Items extracted from the prediction (step ``extract_step``), one verdict per item (step
    ``verdicts``), score = the share of "yes"; a prediction without items scores 0."""

    extract_step: ClassVar[str] = ""
    item_block: ClassVar[str] = ""

    def blocks(self, example: Example) -> list[tuple[str, str]]:
        """The data blocks before the items (the query...)."""
        return []

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        extract = self.prompt(self.extract_step)
        items = await ask_items(session, extract, [("prediction", example["predictions"])], block="prediction")
        if not items:
            return 0.0, {extract.key: [], "verdicts": []}
        verdicts = await ask_verdicts(session, self.prompt("verdicts"),
                                      self.blocks(example) + [(self.item_block, items_block(items))], len(items))
        return count_yes(verdicts) / len(items), {extract.key: items, "verdicts": pair(items, verdicts)}


class PerContext(JudgedMetric):
    """One verdict per context (step ``verdicts``), given a leading text (``lead``: its column
    and block name); score = the share of "yes"; no contexts scores ``empty_score``."""

    lead: ClassVar[tuple[str, str]] = ("", "")
    empty_score: ClassVar[float] = 0.0

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        ctx = example["contexts"]
        if not ctx:
            return self.empty_score, {"verdicts": []}
        column, block = self.lead
        blocks = [(block, example[column])] + context_blocks(ctx)
        verdicts = await ask_verdicts(session, self.prompt("verdicts"), blocks, len(ctx), n=len(ctx))
        return count_yes(verdicts) / len(ctx), {"verdicts": pair(ctx, verdicts)}


def _modes(modes: Sequence[str]) -> str | None:
    """The judge's mode, or the modes of parts judged in different ones, in row order."""
    distinct = list(dict.fromkeys(modes))
    return "; ".join(distinct) if distinct else None


# -- the LLM-guided metrics of the registry -------------------------------------------------------------
class _Judged(Mapping[str, type[JudgedMetric]]):
    """The registry's metrics that take a judge, by name (a view of ``registry.METRICS``, not a
    second table)."""

    def _table(self) -> dict[str, type[JudgedMetric]]:
        from ..registry import METRICS as REGISTRY

        return {n: m for n, m in REGISTRY.items() if issubclass(m, JudgedMetric)}

    def __getitem__(self, name: str) -> type[JudgedMetric]:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


METRICS: Mapping[str, type[JudgedMetric]] = _Judged()
