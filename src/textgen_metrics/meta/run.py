"""The meta-evaluation run: which score to trust, on a bundled set of human judgments or a file.

``textgen-metrics meta-eval SOURCE`` and :func:`meta_eval` read a table of rows (a bundled set of
:mod:`textgen_metrics.meta.data`, or a ``.jsonl``/``.csv``/``.tsv`` file), score its rows with the
chosen metrics (any of the library's: lexical, BERTScore, LLM-guided with a judge) and take the
score columns it already has, then hand every score and the human columns to
:func:`~textgen_metrics.meta.evaluate.meta_evaluate`: statistics with intervals, the pairwise
tests between metrics and their ranks.

A metric with several keys gives one score per key, named ``<metric>.<key>`` (``rouge.rouge2``);
a metric with one key keeps its name (``bleu``); a score column keeps its column name. A row a
judge could not score is missing for that metric: left out of its statistics and counted in
``missing`` (never scored as 0), and the run's ``unscored`` counts it per metric.

In a file, human and score cells hold numbers (CSV cells are read as numbers); an empty cell is
missing. Text in such a cell is an error that names the file's line and the column, unless every
statistic asked is a label statistic (``accuracy``, ``kappa``), which compare labels.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._version import __version__
from ..run import Run, read_table
from ..signature import signature
from ..significance import DEFAULT_SEED
from ..stats.statistic import STATISTICS
from .study import STUDY_FIELDS, Study, declaration

__all__ = ["meta_eval", "Study", "MetaArgumentError", "CLI_FLAGS", "MetaTable", "read_source",
           "DEFAULT_STATISTICS", "score_names"]

DEFAULT_STATISTICS = ("pearson", "spearman", "kendall")
_FILE_TYPES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet")
# each argument of meta_eval as the command line names it: the library's errors name the argument,
# the command line's the flag
CLI_FLAGS = {"source": "SOURCE", "metrics": "--metrics", "human_columns": "--human-column",
             "score_columns": "--score-column", "item_column": "--item-column", "system_column": "--system-column",
             "exclude_systems": "--exclude-system", "include_systems": "--include-system", "dry_run": "--dry-run",
             "options": "--option"}


class MetaArgumentError(ValueError):
    """A meta-evaluation that cannot be made as asked: ``argument`` (one of :data:`CLI_FLAGS`)
    names what is wrong, ``detail`` says how; the message starts with the argument's name, and
    :meth:`for_cli` with its flag."""

    def __init__(self, argument: str, detail: str) -> None:
        self.argument, self.detail = argument, detail
        super().__init__(f"{argument}: {detail}")

    def for_cli(self) -> str:
        return f"{CLI_FLAGS.get(self.argument, self.argument)}: {self.detail}"


# the fields of a bundled set's rows that the metrics' input columns read (``score``'s names)
_INPUT_FIELDS = ("prediction", "references", "source")


@dataclass(frozen=True)
class MetaTable:
    """What a source gives a meta-evaluation: the records the metrics read, each row's line in
    the file (a bundled set's rows: their number from 1), the items and systems (None where the
    source has no such column), the human columns and the score columns, by name."""

    source: str
    records: list[dict[str, Any]]
    lines: list[int]
    items: list[str] | None
    systems: list[str] | None
    human: dict[str, list[Any]]
    scores: dict[str, list[float | None]]
    info: Any = None  # the bundled set's SetInfo
    split: str | None = None


def _cell_number(value: Any, where: str, labels: bool) -> Any:
    """A human or score cell as a float (None: missing); text is an error unless ``labels``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value) if not labels else value
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isnan(number):
            return None
        if not math.isfinite(number):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return number
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            if labels:
                return text
            raise ValueError(f"{where}: holds text ({value[:40]!r}), not a number; human and score columns "
                             "hold numbers (an empty cell is missing)") from None
        if not math.isfinite(number):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return number
    if labels:
        try:
            hash(value)
            return value
        except TypeError:
            pass
    raise ValueError(f"{where}: expected a number, got {type(value).__name__}")


def _bundled(name: str, split: str | None, human_columns: Sequence[str] | None,
             score_columns: Sequence[str], labels: bool) -> MetaTable:
    from .data import load_set

    data = load_set(name, split=split)
    info = data.info
    rows = data.rows
    dims = list(human_columns or info.default_human)
    for dim in dims:
        if dim not in info.human_columns:
            raise MetaArgumentError("human_columns", f"the set {name!r} has no human column {dim!r} "
                                    f"(it has: {', '.join(info.human_columns)})")
    for col in score_columns:
        if col not in info.score_columns:
            have = ", ".join(info.score_columns) or "none"
            raise MetaArgumentError("score_columns", f"the set {name!r} has no score column {col!r} (it has: {have})")
    records = []
    for row in rows:
        record = {k: row[k] for k in _INPUT_FIELDS if row.get(k) is not None}
        record.update({k: v for k, v in row.items() if k not in ("human", "scores", "item", "system", "split")
                       and k not in _INPUT_FIELDS and v is not None})
        records.append(record)
    human = {dim: [_cell_number(row["human"].get(dim), f"{name}: row {i + 1}: human column {dim!r}", labels)
                   for i, row in enumerate(rows)] for dim in dims}
    scores = {col: [_cell_number(row["scores"].get(col), f"{name}: row {i + 1}: score column {col!r}", False)
                    for i, row in enumerate(rows)] for col in score_columns}
    return MetaTable(source=name, records=records, lines=list(range(1, len(rows) + 1)),
                     items=[str(row["item"]) for row in rows], systems=[str(row["system"]) for row in rows],
                     human=human, scores=scores, info=info, split=split)


def _from_file(path: str, split: str | None, human_columns: Sequence[str] | None, item_column: str | None,
               system_column: str | None, score_columns: Sequence[str], labels: bool) -> MetaTable:
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file or folder (a bundled set's name, or a .jsonl, .csv or .tsv file; "
                         "--list lists the bundled sets)")
    rows, lines = read_table(path, split)
    if not rows:
        raise ValueError(f"{path}: no rows")
    if not human_columns:
        raise MetaArgumentError("human_columns", "name the column(s) holding people's scores in "
                                f"{os.path.basename(path)} (e.g. coherence)")

    def column(name: str, argument: str) -> list[Any]:
        out = []
        for row, line in zip(rows, lines, strict=True):
            if name not in row:
                have = ", ".join(sorted(map(str, row))) or "no fields"
                raise MetaArgumentError(argument, f"{path}: line {line} has no column {name!r} (it has: {have})")
            out.append(row[name])
        return out

    def keys(name: str | None, argument: str, default: str) -> list[str] | None:
        if name is None:
            if not all(default in row for row in rows):
                return None
            name = default
        values = column(name, argument)
        out = []
        for value, line in zip(values, lines, strict=True):
            if value is None or (isinstance(value, str) and not value.strip()):
                raise MetaArgumentError(argument, f"{path}: line {line}: column {name!r} is empty; every row "
                                        f"needs its {default}")
            out.append(str(value))
        return out

    human = {dim: [_cell_number(v, f"{path}: line {line}: column {dim!r}", labels)
                   for v, line in zip(column(dim, "human_columns"), lines, strict=True)]
             for dim in human_columns}
    scores = {col: [_cell_number(v, f"{path}: line {line}: column {col!r}", False)
                    for v, line in zip(column(col, "score_columns"), lines, strict=True)]
              for col in score_columns}
    return MetaTable(source=path, records=rows, lines=lines, items=keys(item_column, "item_column", "item"),
                     systems=keys(system_column, "system_column", "system"), human=human, scores=scores,
                     split=split)


def _without_systems(table: MetaTable, exclude: Sequence[str]) -> MetaTable:
    """The table without the rows of the systems in ``exclude`` (each must be one of its systems)."""
    if not exclude:
        return table
    if table.systems is None:
        raise MetaArgumentError("exclude_systems", "the source names no systems (name its system column)")
    known = set(table.systems)
    for name in exclude:
        if name not in known:
            raise MetaArgumentError("exclude_systems", f"no system {name!r} in {table.source} "
                                    f"(it has: {', '.join(sorted(known))})")
    keep = [i for i, s in enumerate(table.systems) if s not in set(exclude)]

    def pick(values: list[Any]) -> list[Any]:
        return [values[i] for i in keep]

    return MetaTable(source=table.source, records=pick(table.records), lines=pick(table.lines),
                     items=pick(table.items) if table.items is not None else None, systems=pick(table.systems),
                     human={k: pick(v) for k, v in table.human.items()},
                     scores={k: pick(v) for k, v in table.scores.items()}, info=table.info, split=table.split)


def read_source(source: str, *, split: str | None = None, human_columns: Sequence[str] | None = None,
                item_column: str | None = None, system_column: str | None = None,
                score_columns: Sequence[str] = (), labels: bool = False,
                exclude_systems: Sequence[str] = ()) -> MetaTable:
    """The :class:`MetaTable` of a bundled set's name or a file's path (without the rows of
    ``exclude_systems``: e.g. the human reference translations of an MQM set)."""
    from .data import bundled_sets

    if not isinstance(source, str) or not source:
        raise ValueError(f"source: expected a bundled set's name or a file's path, got {source!r}")
    if source in bundled_sets():
        if item_column or system_column:
            raise MetaArgumentError("item_column" if item_column else "system_column",
                                    "a bundled set names its items and systems itself")
        table = _bundled(source, split, human_columns, score_columns, labels)
    elif os.path.splitext(source)[1].lower() not in _FILE_TYPES and not os.path.isdir(source):
        raise ValueError(f"source: {source!r} is neither a bundled set ({', '.join(bundled_sets())}) nor a "
                         f".jsonl, .csv or .tsv file")
    else:
        table = _from_file(source, split, human_columns, item_column, system_column, score_columns, labels)
    return _without_systems(table, exclude_systems)


def score_names(metric: str, keys: Sequence[str], negated: bool = False) -> dict[str, str]:
    """``{key: score name}`` of a metric's per-example keys: ``<metric>.<key>``, or the metric's
    own name for its only key; ``-`` before it where the scores are negated (a metric whose lower
    scores are better, TER or hallucination: negated so that every score agrees with people by going
    up)."""
    sign = "-" if negated else ""
    if len(keys) == 1:
        return {keys[0]: f"{sign}{metric}"}
    return {key: f"{sign}{metric}.{key}" for key in keys}


# the scores computed on a bundled set (immutable data) without a judge, by (set, split, systems left
# out, metric, options): the studies of one set (segment and system level) compute each metric once
_MEMO: dict[tuple[Any, ...], tuple[dict[str, list[float | None]], dict[str, Any]]] = {}
_MEMO_SIZE = 64


Scored = tuple[dict[str, list[float | None]], dict[str, Any]]


def _records_for(table: MetaTable, run: Run, name: str) -> list[dict[str, Any]]:
    """The table's records as metric ``name`` reads them. A bundled set keeps each row's references
    as a list (SummEval's 11, LLMBar's none); a metric whose optional input is one text (an
    LLM-guided metric's reference) goes without it, unless ``columns`` maps it: the set has no
    single reference to give."""
    from ..registry import get_metric

    records = table.records
    if table.info is None:
        return records
    spec = get_metric(name)
    drop = {c for c, kind in spec.optional_columns.items()
            if kind == "text" and c not in run.columns and any(isinstance(r.get(c), list) for r in records)}
    return [{k: v for k, v in r.items() if k not in drop} for r in records] if drop else records


def _estimate(table: MetaTable, run: Run, allow_empty: bool) -> dict[str, Any]:
    """What scoring the table with the run's LLM-guided metrics would cost (``estimate_cost``'s
    dict, one call per metric since each reads its own records), no request sent; a file's rows
    read as the run reads them (a blank required cell an error naming its line and column)."""
    from ..cost import estimate_cost

    judged = [spec.name for spec in run.specs() if spec.judge]
    if not judged:
        raise MetaArgumentError("dry_run", f"none of {', '.join(run.metrics)} sends a judge request; nothing to "
                                "estimate")
    out: dict[str, Any] = {}
    for name in judged:
        in_file = table.info is None  # a file's cells are named by its lines
        inputs: dict[str, Any] = run.inputs(_records_for(table, run, name), source=table.source if in_file else None,
                                            lines=table.lines, allow_empty=allow_empty or not in_file,
                                            only=[name])[name]
        one = estimate_cost([name], judge=run.judge, judge_options=run.judge_options, options=run.options, **inputs)
        if not out:
            out = one
            continue
        out["metrics"].update(one["metrics"])
        for key, value in one["total"].items():
            out["total"][key] = None if value is None or out["total"][key] is None else out["total"][key] + value
    out["source"], out["rows"] = table.source, len(table.records)
    out["not_estimated"] = [n for n in run.metrics if n not in judged]
    return out


def _one_metric(table: MetaTable, run: Run, progress: Callable[..., Any] | None, allow_empty: bool) -> Scored:
    """One metric's per-row scores (one list per key) and what its run reported beside them
    (options, signature, judge, usage, rows it could not score)."""
    from ..registry import get_metric
    from ..scoring import score_records

    name = run.metrics[0]
    # a file's rows as score reads them: a blank required cell is an error naming its line and column
    in_file = table.info is None
    report = score_records(_records_for(table, run, name), [name], run=run, progress=progress, source=table.source,
                           lines=table.lines if in_file else None, allow_empty=allow_empty or not in_file)
    entry = report["metrics"][name]
    keys = [k for k in entry["scores"]
            if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                   for v in entry["per_example"][k])]
    sign = -1.0 if get_metric(name).lower_is_better else 1.0
    scores = {flat: [None if v is None or not math.isfinite(v) else sign * float(v) for v in entry["per_example"][key]]
              for key, flat in score_names(name, keys, negated=sign < 0).items()}
    agg = entry["aggregate"]
    errors = [e for e in (agg.get("errors") or []) if isinstance(e, Mapping)]
    report_run: dict[str, Any] = {"options": entry["options"], "unscored": len(
        {i for k in keys for i, v in enumerate(entry["per_example"][k]) if v is None}
        | {e.get("index") for e in errors})}
    for key in ("signature", "judge_model", "judge_usage"):
        if key in agg:
            report_run[key] = agg[key]
    report_run["errors"] = [{"line": table.lines[e["index"]] if isinstance(e.get("index"), int) else None,
                      "error": str(e.get("error"))} for e in errors[:5]]
    return scores, report_run


def _metric_scores(table: MetaTable, run: Run, progress: Callable[..., Any] | None,
                   allow_empty: bool) -> tuple[dict[str, list[float | None]], dict[str, Any]]:
    """The per-row scores of each metric (one list per key) and each metric's run report. On a
    bundled set, a metric scored without a judge is computed once per process for the same
    rows and options."""
    import json

    from ..registry import get_metric

    scores: dict[str, list[float | None]] = {}
    runs: dict[str, Any] = {}
    for name in run.metrics:
        opts = dict(run.options.get(name, {}))
        key = None
        if table.info is not None and not get_metric(name).judge and not run.columns:
            key = (table.source, table.split, tuple(table.lines), name, json.dumps(opts, sort_keys=True, default=str))
        if key is not None and key in _MEMO:
            got, entry = _MEMO[key]
            got = {k: list(v) for k, v in got.items()}
        else:
            got, entry = _one_metric(table, run.only([name]), progress, allow_empty)
            if key is not None:
                if len(_MEMO) >= _MEMO_SIZE:
                    _MEMO.pop(next(iter(_MEMO)))
                _MEMO[key] = ({k: list(v) for k, v in got.items()}, entry)
        scores.update(got)
        runs[name] = entry
    return scores, runs


def _default_exclusions(info: Any, metrics: Sequence[str], include: Sequence[str]) -> list[str]:
    """The bundled set's reference systems that a reference-based metric would score against
    themselves, less those ``include`` keeps (each of which must be one of them)."""
    from ..registry import get_metric

    own = list(info.reference_systems) if info is not None else []
    for name in include:
        if name not in own:
            where = f"the set {info.name!r} leaves out by default: {', '.join(own)}" if own else \
                "the source leaves no system out by default"
            raise MetaArgumentError("include_systems", f"{name!r} is not a system left out by default ({where})")
    if not any("references" in get_metric(m).columns for m in metrics):
        return []
    return [s for s in own if s not in include]


def _study(source: str | Study | None, study: Study | None, declared: dict[str, Any]) -> Study:
    """The study of a :func:`meta_eval` call: given (first or as ``study=``), or made of its
    keywords; on ``source`` where one is given beside it."""
    study = declaration("meta_eval", "study", Study, source, study, declared, _KEYWORDS, _declared)
    if not isinstance(study.source, str) or not study.source:
        raise MetaArgumentError("source", f"name a bundled set or a file to meta-evaluate, got {study.source!r}")
    return study


def _declared(keywords: dict[str, Any]) -> Study:
    """A :class:`Study` of ``meta_eval``'s keywords: ``metrics`` as names with ``options`` beside
    them (as :meth:`textgen_metrics.run.Run.build` takes them), or as the study's mapping."""
    fields = dict(keywords)
    metrics = fields.pop("metrics", ())
    options = fields.pop("options", None) or {}
    if isinstance(metrics, Mapping):
        if options:
            raise MetaArgumentError("options", "the metrics' options are in metrics (a mapping of metric to its "
                                    "options); options goes with a list of names")
        return Study(metrics=metrics, **fields)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if len(set(names)) != len(names):
        raise MetaArgumentError("metrics", f"{', '.join(names)} names a metric twice")
    for name in options:
        if name not in names:
            raise MetaArgumentError("options", f"{name}: {name!r} is not among metrics {', '.join(names)}")
    return Study(metrics={name: options.get(name, {}) for name in names}, **fields)


def _is_plumbing_judge(runs: Mapping[str, Any]) -> bool:
    return any(str(r.get("judge_model", "")).startswith("tiny:") or "smollm2" in str(r.get("judge_model", "")).lower()
               or "gemma" in str(r.get("judge_model", "")).lower() and "270m" in str(r.get("judge_model", "")).lower()
               for r in runs.values())


_KEYWORDS = frozenset(STUDY_FIELDS) - {"source"} | {"options"}


def meta_eval(source: str | Study | None = None, *, study: Study | None = None, judge: Any = None,
              run: Run | None = None, confidence_level: float = 0.95, n_resamples: int = 1000,
              n_permutations: int = 1000, seed: int | None = DEFAULT_SEED, compare: bool = True,
              dry_run: bool = False, allow_empty: bool = False, progress: Callable[..., Any] | None = None,
              **declared: Any) -> dict[str, Any]:
    """Meta-evaluate scores against people's: ``study`` (a :class:`~textgen_metrics.meta.study.Study`,
    or the first argument) says what, on ``source`` (a bundled set's name, or a file; else the
    study's). Without a study, its fields are keywords, as before the declaration: ``metrics`` (names,
    with ``options`` beside them as :meth:`textgen_metrics.run.Run.build` takes them), ``columns``,
    ``score_columns``, ``human_columns``, ``item_column``, ``system_column``, ``split``, ``level``,
    ``group_by``, ``statistics``, ``exclude_systems``, ``include_systems`` (the Study's docstring
    says what each is and its default). With neither metrics nor score columns, a bundled set's own
    score columns (FRANK's published baselines, UniEval's predictions) are taken.

    A bundled set's systems that are its references (the WMT sets' human translations ``ref-A``,
    ``ref-B``) are left out by default when a computed metric reads the references, as
    mt-metrics-eval leaves them out (each would be scored against itself or its sibling);
    ``include_systems`` keeps them. Both are in the result's ``excluded_systems``. A metric whose
    lower scores are better (TER; bias, toxicity and hallucination, rates of a fault) is
    meta-evaluated negated, named ``-ter``.

    The call's own: ``judge`` for the LLM-guided metrics (or ``run``, a run of the study's metrics
    built by the caller: the command line's, from its flags); ``confidence_level``,
    ``n_resamples``, ``n_permutations`` (``spa``'s permutation count), ``seed`` (12345 by default,
    None asks for fresh randomness) and ``compare`` as
    :func:`~textgen_metrics.meta.evaluate.meta_evaluate` takes them. ``dry_run``: send no request
    and return instead what the LLM-guided metrics would cost on these rows
    (:func:`textgen_metrics.cost.estimate_cost`'s dict with ``source``, ``rows`` and
    ``not_estimated``). In a file, a blank cell of a metric's required text is an error naming its
    line and column, as ``score`` reads files (``allow_empty=True`` scores it as an empty text).

    Returns :func:`~textgen_metrics.meta.evaluate.meta_evaluate`'s dict with ``source``,
    ``rows``, ``signature``, ``set`` (a bundled set's licence and citation) and ``runs`` (per
    computed metric: its options, signature, judge and the rows it could not score).
    """
    from .data import bundled_sets, describe_set
    from .evaluate import meta_evaluate

    study = _study(source, study, declared)
    if run is None and study.metrics:
        run = Run.build(list(study.metrics), study.columns, study.metric_options(), judge, resolve=True)
    metrics = list(run.metrics) if run is not None else []
    source = study.source
    assert source is not None  # _study: every study has its source
    level, group_by, statistics = study.level, study.group_by, study.statistics
    score_columns = study.score_columns
    info = describe_set(source) if isinstance(source, str) and source in bundled_sets() else None
    if info is not None:
        level = level or info.default_level
        group_by = group_by or info.default_group_by
        statistics = statistics or [info.default_statistic]
        if not metrics and not score_columns:
            if not info.score_columns:
                raise MetaArgumentError("metrics", f"the set {source!r} has no score columns of its own; name the "
                                        "metrics to meta-evaluate (e.g. rouge,bleu)")
            score_columns = list(info.score_columns)
    elif not metrics and not score_columns:
        raise MetaArgumentError("metrics", "name the metrics to meta-evaluate (e.g. rouge,bleu) or the score "
                                "columns the source has (score_columns)")
    level = level or "segment"
    group_by = group_by or "none"
    excluded = list(dict.fromkeys([*study.exclude_systems,
                                   *_default_exclusions(info, metrics, study.include_systems)]))
    stats = list(statistics or DEFAULT_STATISTICS)
    labels = all(s in STATISTICS and STATISTICS[s].labels for s in stats)
    table = read_source(source, split=study.split, human_columns=study.human_columns, item_column=study.item_column,
                        system_column=study.system_column, score_columns=score_columns, labels=labels,
                        exclude_systems=excluded)
    if dry_run:
        if run is None:
            raise MetaArgumentError("dry_run", "name the LLM-guided metrics to estimate (metrics)")
        return _estimate(table, run, allow_empty)
    score_lists: dict[str, list[float | None]] = dict(table.scores)
    runs: dict[str, Any] = {}
    if metrics:
        assert run is not None
        computed, runs = _metric_scores(table, run, progress, allow_empty)
        clash = sorted(set(computed) & set(score_lists))
        if clash:
            raise MetaArgumentError("score_columns", f"{clash[0]}: a computed metric's score has the same name")
        score_lists.update(computed)
    result = meta_evaluate(score_lists, table.human, items=table.items, systems=table.systems, level=level,
                           group_by=group_by, statistics=tuple(stats), confidence_level=confidence_level,
                           n_resamples=n_resamples, n_permutations=n_permutations, seed=seed, compare=compare)
    sig = signature("meta-eval", level=level, group=group_by, resample="item" if table.items else "row",
                    bs=n_resamples, seed=seed, ci=confidence_level, version=__version__)
    out: dict[str, Any] = {"source": table.source, "split": table.split, "rows": len(table.records),
                           "excluded_systems": excluded, "signature": sig,
                           "confidence_level": confidence_level, "n_resamples": n_resamples,
                           "n_permutations": n_permutations, "seed": seed, **result}
    if info is not None:
        out["set"] = {"name": info.name, "title": info.title, "licence": info.licence, "citation": info.citation,
                      "source": info.source}
    if runs:
        out["runs"] = runs
        out["plumbing_judge"] = _is_plumbing_judge(runs)
    return out
