"""``audit(...)``: a judge audited on a metric over rows, the probes chosen, in one call; and its
cost before any request (``dry_run=True``, as ``score --dry-run``).

The rows come as ``score`` takes them (a list of records, a ``.jsonl``/``.json``/``.csv``/
``.tsv``/``.parquet`` file, a ``datasets`` folder) or as a bundled set's name (``llmbar_natural``:
its records carry ``query``, ``prediction``, ``baseline`` and ``gold``). The judge, the column map
and the options are those ``score`` takes; ``human_column`` names the field of people's labels:
gold verdicts ``"a"``/``"b"`` for a comparison (position accuracies; calibration reads "a" as 1),
0/1 labels otherwise (calibration). Calibration without ``human_column`` is skipped and says so,
as position on a metric that compares nothing. ``annotator_columns`` name the fields of several
annotators who rated the same rows (one field each, empty where one did not rate a row): the
alt-test (``probes["alt_test"]``, :func:`~textgen_metrics.stats.audit.alt_test`) runs whenever
they are given, on the plain run's values, with no request of its own.

The result (docs/audit.md)::

    {"probes": {"position": {...}, "verbosity": {...}, "repeat": {...}, "calibration": {...},
                "alt_test": {...}},
     "requests": N, "unscored": N, "metric": ..., "judge": "backend:model", "examples": n,
     "runs": [{"run", "requests", "cached", "unscored"}, ...], "settings": {...}}

``requests``: the requests sent over every run (``judge_usage``'s count: retries and re-asks
included, cached answers not); ``unscored``: the examples left without a score by an answer that
stayed unusable, over every run (each run's are listed in ``runs``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..judges import Judge, JudgeFatalError
from ..llm.metrics import JudgedMetric
from ..meta.study import declaration
from ..run import Rows, Run, locate, resolve_judge
from ..run import read_rows as run_rows
from ..stats.audit import MISSING, alt_test
from . import probes as P
from .plan import ALL_PROBES, ALT_TEST, PLAN_FIELDS, AuditPlan

__all__ = ["audit", "AuditPlan", "read_rows", "estimate_audit"]

_CACHE_NOTE = re.compile(r"answered from the judge's cache|no answer in the judge's cache")


def read_rows(source: Any, split: str | None = None) -> Rows:
    """The rows to audit: a bundled set's (fields it does not have left out; its rows named by
    their number), else the run's reader's (:func:`textgen_metrics.run.read_rows`: a list of
    records, or a file read as ``score`` reads it, each row named by its line)."""
    if isinstance(source, str) and not os.path.exists(source):
        from ..meta.data import bundled_sets, load_set

        if source in bundled_sets():
            # fields a set does not have (no references: [], no source: None) are left out, so that an
            # optional input (pairwise preference's references) is not read from them
            rows = [{k: v for k, v in r.items() if v is not None and v != []} for r in load_set(source, split).rows]
            return Rows(rows, source)
    return run_rows(source, split)


def _metric(metrics: Any) -> type[JudgedMetric]:
    if metrics is None:
        raise ValueError("metrics: name the LLM-guided metric to audit the judge on (e.g. pairwise_preference)")
    if isinstance(metrics, type) and issubclass(metrics, JudgedMetric):
        return metrics
    names = [m.strip() for m in metrics.split(",") if m.strip()] if isinstance(metrics, str) else list(metrics)
    if len(names) != 1:
        raise ValueError(f"metrics: audit one LLM-guided metric at a time; got {names}")
    name = names[0]
    if isinstance(name, type) and issubclass(name, JudgedMetric):
        return name
    from ..llm.metrics import METRICS

    if not isinstance(name, str) or name not in METRICS:
        raise ValueError(f"metrics: {name!r} is not an LLM-guided metric; audit one of {', '.join(sorted(METRICS))}")
    return METRICS[name]


def _probes(probes: Any, annotators: bool = False) -> list[str]:
    names = [p.strip() for p in probes.split(",") if p.strip()] if isinstance(probes, str) else list(probes)
    for p in names:
        if p not in ALL_PROBES:
            raise ValueError(f"probes: unknown probe {p!r}; the probes are {', '.join(ALL_PROBES)}")
    if not names:
        raise ValueError(f"probes: name at least one of {', '.join(ALL_PROBES)}")
    if annotators:  # the alt-test runs whenever annotator columns are given: it asks nothing of its own
        names.append(ALT_TEST)
    return [p for p in ALL_PROBES if p in names]


def _metric_options(cls: type[JudgedMetric], options: Mapping[str, Any]) -> dict[str, Any]:
    """The metric's options of a checked run, but those the audit sets itself."""
    given = dict(options.get(cls.name, {}))
    return {k: v for k, v in given.items() if k not in ("judge", "judge_options", "on_error", "use_aggregator")}


def _column(table: Rows, column: str, argument: str) -> list[Any]:
    """A column of people's values, every row having the field (an error naming the first that
    does not by its line in a file, else its number)."""
    for i, row in enumerate(table.records):
        if column not in row:
            have = ", ".join(sorted(map(str, row))) or "no fields"
            raise ValueError(f"{argument}: {locate(table.source, table.lines, i)} has no field {column!r} "
                             f"(it has: {have})")
    return [row[column] for row in table.records]


def _annotators(table: Rows, columns: Sequence[str] | None, comparison: bool) -> dict[str, list[Any]] | None:
    """Each annotator column's values (``probes.annotator_values``), checked before any request."""
    if columns is None:
        return None
    names = [columns] if isinstance(columns, str) else list(columns)
    if len(set(names)) != len(names):
        raise ValueError(f"annotator_columns: {names} names a column twice")
    values = {c: _column(table, c, "annotator_columns") for c in names}  # every column present before any is read
    return {c: P.annotator_values(c, values[c], comparison) for c in names}


def _check_alt(annotations: Mapping[str, list[Any]], comparison: bool, epsilon: Any, alpha: Any) -> None:
    """The alt-test's arguments and the annotators' rows (enough shared rows, as if the judge
    answered every row), before any request: errors name ``annotator_columns``."""
    table = [list(r) for r in zip(*annotations.values(), strict=True)]
    stand_in = ["a" if comparison else 0.0] * len(table)
    try:
        alt_test(stand_in, table, epsilon=epsilon, alpha=alpha, kind="labels" if comparison else "scores",
                 annotators=list(annotations), n_resamples=0)
    except ValueError as err:
        text = str(err)
        if text.startswith("epsilon") or text.startswith("alpha"):
            raise ValueError(text.replace("alpha:", "alt_alpha:", 1)) from None
        raise ValueError(f"annotator_columns: {text.removeprefix('annotations: ')}") from None


def _check(repeats: Any, threshold: Any, probes: list[str]) -> None:
    if "repeat" in probes and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 2):
        raise ValueError(f"repeats: {repeats!r} must be an integer of at least 2 (the plain run is the first)")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise ValueError(f"threshold: {threshold!r} must be a number in [0, 1] (on the score mapped to [0, 1])")


def audit(source: Any = None, plan: AuditPlan | None = None, *, judge: Any = None,
          judge_options: Mapping[str, Any] | None = None, dry_run: bool = False, **declared: Any) -> dict[str, Any]:
    """Audit ``judge`` (with ``judge_options``, as ``score`` takes them) as ``plan`` says (an
    :class:`~textgen_metrics.audits.plan.AuditPlan`, or the first argument) on ``source`` (the
    rows; else the plan's). Without a plan, its fields are keywords, as before the declaration:
    ``metrics`` (one LLM-guided metric: a name or a ``JudgedMetric`` class), ``columns``,
    ``options``, ``split``, ``allow_empty``, ``probes`` (position, verbosity, repeat, calibration), ``repeats``,
    ``threshold``, ``human_column``, ``missing``, ``annotator_columns`` (the alt-test, run
    whenever given) with ``epsilon`` and ``alt_alpha``, and the intervals' ``confidence_level``,
    ``n_resamples`` and ``seed`` (the plan's docstring says what each is and its default). Each
    statistic comes with a percentile bootstrap interval, each probe ``flagged`` by its rule
    (docs/audit.md).
    ``dry_run=True`` returns the cost estimate of every run the audit would make (as
    ``estimate_cost``) and sends nothing. See the module docstring for the result."""
    plan = _plan(source, plan, declared)
    cls = _metric(plan.metrics)
    chosen = _probes(plan.probes, plan.annotator_columns is not None)
    _check(plan.repeats, plan.threshold, chosen)
    if plan.missing not in MISSING:
        raise ValueError(f"missing: {plan.missing!r} is not one of {list(MISSING)}")
    table = read_rows(plan.source, plan.split)
    rows = table.records
    if not rows:
        raise ValueError(f"{table.source}: no rows to audit")
    if judge is None:
        raise ValueError("judge: an audit needs a judge (a judge string, object or function)")
    run = Run.build([cls.name], plan.columns, plan.options, judge, judge_options)  # checked once, as every front end's
    opts = _metric_options(cls, run.options)
    # None: the rows' own rule, a file's blank required text an error naming its line and column
    inputs = run.inputs(table, allow_empty=plan.allow_empty or None)[cls.name]
    human = _column(table, plan.human_column, "human_column") if plan.human_column is not None else None
    annotations = _annotators(table, plan.annotator_columns, P.is_comparison(cls))
    if annotations is not None:
        _check_alt(annotations, P.is_comparison(cls), plan.epsilon, plan.alt_alpha)
    if dry_run:
        return estimate_audit(cls, inputs, judge=run.judge, judge_options=run.judge_options, options=opts,
                              probes=chosen, repeats=plan.repeats)
    resolved = resolve_judge(run.judge, run.judge_options)
    target = P.Target(cls, opts, inputs, resolved)
    target.make().check_inputs(inputs)  # the inputs' errors before any request
    interval = plan.interval()
    plain = target.run("plain")
    runs = [plain]
    out: dict[str, Any] = {}
    if "position" in chosen:
        gold = P.gold_labels(human) if human is not None and target.comparison else None
        out["position"], extra = P.position_probe(target, plain, gold, missing=plan.missing, **interval)
        runs += extra
    if "verbosity" in chosen:
        out["verbosity"], extra = P.verbosity_probe(target, plain, threshold=plan.threshold, **interval)
        runs += extra
    if "repeat" in chosen:
        out["repeat"], extra = P.repeat_probe(target, plain, plan.repeats, threshold=plan.threshold, **interval)
        runs += extra
    if "calibration" in chosen:
        if human is None:
            out["calibration"] = {"skipped": "no human labels: give human_column (--human-column), 0/1 labels "
                                             "(a comparison: gold 'a'/'b')"}
        else:
            out["calibration"] = P.calibration_probe(target, plain, P.binary_labels(human, target.comparison),
                                                     **interval)
    if ALT_TEST in chosen:
        if annotations is None:
            out[ALT_TEST] = {"skipped": "no annotators: give annotator_columns (--annotator-column, one per "
                                        "annotator, at least 2) of people who rated the same rows"}
        else:
            out[ALT_TEST] = P.alt_test_probe(target, plain, annotations, epsilon=plan.epsilon, alpha=plan.alt_alpha,
                                             **interval)
    return {"probes": out, "requests": sum(r.requests for r in runs), "unscored": sum(r.unscored for r in runs),
            "metric": cls.name, "judge": f"{resolved.backend}:{resolved.model}", "examples": len(rows),
            "source": table.source, "runs": [r.summary() for r in runs],
            "settings": {"repeats": plan.repeats if "repeat" in chosen else None, "threshold": plan.threshold,
                         "human_column": plan.human_column, "missing": plan.missing,
                         "annotator_columns": list(annotations) if annotations is not None else None,
                         "score_range": list(target.score_range),
                         **interval}}


def _plan(source: Any, plan: AuditPlan | None, declared: dict[str, Any]) -> AuditPlan:
    """The plan of an :func:`audit` call: given (first or as ``plan=``), or made of its keywords;
    on ``source`` where one is given beside it."""
    return declaration("audit", "plan", AuditPlan, source, plan, declared, PLAN_FIELDS,
                       lambda keywords: AuditPlan(**keywords))


def estimate_audit(cls: type[JudgedMetric], inputs: Mapping[str, list[Any]], *, judge: Any,
                   judge_options: Mapping[str, Any] | None, options: Mapping[str, Any], probes: Sequence[str],
                   repeats: int) -> dict[str, Any]:
    """The cost of every run the audit would make, in ``estimate_cost``'s shape with one entry
    per run under ``"metrics"`` (``"<metric> (<run>)"``); nothing is sent. A run whose answers
    the judge's cache holds costs nothing (``cached``); the repeats' own keys are looked up in
    it as the repeats would ask them."""
    from ..cost import estimate_cost

    try:
        made = resolve_judge(judge, judge_options)
    except JudgeFatalError:  # no key or endpoint: the estimate needs neither (and there is no cache to read)
        made = None
    plan: list[tuple[str, Mapping[str, list[Any]], Any]] = [("plain", inputs, made or judge)]
    if "position" in probes and P.is_comparison(cls) and not P.asks_both_orders(cls):
        plan.append(("position (swapped)", P.swapped(inputs), made or judge))
    if "verbosity" in probes:
        plan.append(("verbosity (padded)", P.padded(inputs), made or judge))
    if "repeat" in probes:
        plan += [(f"repeat {r + 1}", inputs, made.repeated(r) if made is not None else judge)
                 for r in range(1, repeats)]
    out: dict[str, Any] = {"dry_run": True, "metrics": {}}
    notes: dict[str, None] = {}
    for label, run_inputs, run_judge in plan:
        columns: dict[str, Any] = dict(run_inputs)
        estimate = estimate_cost(cls.name, judge=run_judge, options={cls.name: dict(options)},
                                 judge_options=None if isinstance(run_judge, Judge) else judge_options, **columns)
        for key in ("judge", "tokenizer", "tokens_exact", "price"):
            out[key] = estimate[key]
        out["metrics"][f"{cls.name} ({label})"] = estimate["metrics"][cls.name]
        notes.update((n, None) for n in estimate["notes"] if not _CACHE_NOTE.search(n))
    fields = ("examples", "requests", "prompt_tokens", "completion_tokens", "cached")
    total: dict[str, Any] = {k: sum(m[k] for m in out["metrics"].values()) for k in fields}
    costs = [m["cost"] for m in out["metrics"].values()]
    total["cost"] = None if None in costs else sum(costs)
    batch = [m["batch_cost"] for m in out["metrics"].values()]
    total["batch_cost"] = None if None in batch else sum(batch)
    out["total"] = total
    cached = total["cached"]
    out["notes"] = [*notes, f"{cached} requests answered from the judge's cache: not sent, not counted" if cached
                    else "no answer in the judge's cache: every request counted",
                    "the repeats ask every request anew (their own cache keys); the position audit of "
                    "pairwise_preference asks nothing beyond the plain run (it judges both orders)"]
    return out
