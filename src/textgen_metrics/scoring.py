"""Score a table of records with several metrics: what the command line and the playground run.

Records come from CSV, TSV, JSON, JSONL, Parquet or a ``datasets`` folder (``save_to_disk``).
The result is a report: per metric its options, aggregate (the corpus score for BLEU and
Google BLEU, the mean over scored examples otherwise), per-example scores and time.
Messages name a row as an editor shows it where :func:`read_table`'s lines are given
(``lines=``: "line 3" of a CSV, TSV or JSONL file, the header being line 1; "row 3" from 1 of a
JSON list, Parquet or a datasets folder), else its row from 1, and a cell by its column (the
field). Cells are read as files hold them (:func:`columns_from_records`): a list column's text
that starts like a JSON list is parsed, and one that does not parse is an error, never a
reference; an empty required text is an error unless ``allow_empty`` (the library's own
functions score an empty string: only a file's blank cell is taken for missing data).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ._version import __version__
from .errors import CellError, InputError
from .metric import Result
from .registry import column_fields, get_metric

__all__ = ["read_records", "read_table", "columns_from_records", "score_records", "flat_scores", "resolve_judge",
           "score_name", "unscored", "Progress", "locate"]

class InputColumns(Protocol):
    """What ``columns_from_records`` reads of a metric (a ``MetricSpec`` or a part of one): its
    name and its input columns ``{column: kind}``; an ``optional_columns`` mapping if it has one."""

    @property
    def name(self) -> str: ...

    @property
    def columns(self) -> Mapping[str, str]: ...


# ``progress(metric, total)`` -> a context manager giving ``update(k)`` (or None), entered while
# that metric runs: the command line draws one bar per metric with it
Progress = Callable[[str, int], AbstractContextManager[Callable[[int], Any] | None]]


def read_records(path: str, split: str | None = None) -> list[dict[str, Any]]:
    """Rows of ``path`` as dicts: ``.jsonl``/``.json``/``.csv``/``.tsv``/``.parquet`` or a
    ``datasets`` folder (``split`` picks one split of a DatasetDict)."""
    return read_table(path, split)[0]


def read_table(path: str, split: str | None = None) -> tuple[list[dict[str, Any]], list[int]]:
    """``(rows, lines)``: the rows of ``path`` as :func:`read_records` reads them, and each row's
    line in the file as an editor numbers it (CSV/TSV: the header is line 1, a row's first line;
    JSONL: its line; a JSON list, Parquet or a datasets folder: the row's number from 1)."""
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file or folder")
    if os.path.isdir(path):
        rows = _read_dataset_folder(path, split)
        return rows, list(range(1, len(rows) + 1))
    ext = os.path.splitext(path)[1].lower()
    if ext in (".jsonl", ".ndjson"):
        rows, lines = [], []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{path}: line {n}: not valid JSON ({e.msg})") from None
                    if not isinstance(row, dict):
                        raise ValueError(f"{path}: line {n} is a {type(row).__name__}, not a record "
                                         "(a JSON object with one field per input)")
                    rows.append(row)
                    lines.append(n)
        return rows, lines
    if ext == ".json":
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of records")
        for i, row in enumerate(data):
            if not isinstance(row, dict):
                raise ValueError(f"{path}: row {i + 1} is a {type(row).__name__}, not a record "
                                 "(a JSON object with one field per input)")
        return data, list(range(1, len(data) + 1))
    if ext in (".csv", ".tsv"):
        import csv

        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t" if ext == ".tsv" else ",")
            rows, lines = [], []
            _ = reader.fieldnames  # reads the header
            start = reader.line_num + 1  # the line the next row starts on
            for row in reader:
                rows.append(row)
                lines.append(start)
                start = reader.line_num + 1
        return rows, lines
    if ext == ".parquet":
        import datasets

        records: list[dict[str, Any]] = datasets.Dataset.from_parquet(path).to_list()
        return records, list(range(1, len(records) + 1))
    raise ValueError(f"{path}: unknown file type {ext!r}; use .jsonl, .json, .csv, .tsv, .parquet "
                     "or a datasets folder")


def _read_dataset_folder(path: str, split: str | None) -> list[dict[str, Any]]:
    import datasets

    try:
        data = datasets.load_from_disk(path)
    except FileNotFoundError:
        raise ValueError(f"{path}: not a datasets folder (one written by save_to_disk)") from None
    if isinstance(data, datasets.DatasetDict):
        splits = list(data)
        if split is None and len(splits) == 1:
            split = splits[0]
        if split not in data:
            raise ValueError(f"split: {path} has the splits {splits}; choose one with --split")
        data = data[split]
    elif split is not None:
        raise ValueError(f"split: {path} is a single dataset with no splits")
    records: list[dict[str, Any]] = data.to_list()
    return records


_LINE_FILES = (".jsonl", ".ndjson", ".csv", ".tsv")
# a text that starts like a JSON list of texts: "[" then a quote (either: ['a'] is Python's
# spelling), "[", "]" or nothing; "[Music] plays" is a text
_LIST_START = re.compile(r"\s*\[\s*(?:[\"'\[\]]|$)")


def locate(source: str, lines: Sequence[int] | None, index: int) -> str:
    """Where row ``index`` (from 0) of ``source`` is, as an editor shows it: ``"line N"`` in a
    CSV, TSV or JSONL file (``lines``: :func:`read_table`'s), else ``"row N"`` (from 1)."""
    if lines is None:
        return f"row {index + 1}"
    line_file = not os.path.isdir(source) and os.path.splitext(source)[1].lower() in _LINE_FILES
    return f"{'line' if line_file else 'row'} {lines[index]}"


class _BadCell(ValueError):
    """A cell that cannot be an input: ``reason``, and the ``item`` of its list where it is one."""

    def __init__(self, reason: str, item: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.item = reason, item


_EMPTY = "empty (a blank cell usually means missing data; --allow-empty scores it as an empty text)"


def _cell(value: Any, kind: str, allow_empty: bool = True) -> Any:
    """A cell as the metric takes it: a file's cell holds a string, so a list column's text that
    starts like a JSON list is parsed (one that does not parse, or is not a list, is an error),
    another text is a list of one; a blank text (or list item) is an error unless
    ``allow_empty``."""
    if not allow_empty and isinstance(value, str) and not value.strip():
        raise _BadCell(_EMPTY)
    if kind != "text" and isinstance(value, str):
        if value.startswith("["):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError as e:
                if _LIST_START.match(value):
                    raise _BadCell(f"starts like a JSON list but is not one ({e.msg} at character {e.pos + 1}); "
                                   "write a list as [\"first\", \"second\"] with double quotes") from None
                parsed = None
            if isinstance(parsed, list):
                value = parsed
        if kind == "list" and isinstance(value, str):
            return [value]
    if not allow_empty and isinstance(value, list):
        for j, item in enumerate(value):
            if isinstance(item, str) and not item.strip():
                raise _BadCell(_EMPTY, j)
    return value


def _field(rows: Sequence[Mapping[str, Any]], column: str, mapping: Mapping[str, str]) -> str | None:
    """The record field for an input column: the mapping's, else the first of its spellings
    (``COLUMN_FIELDS``: ``queries`` or ``query`` ...) that the first row has; None if none."""
    if column in mapping:
        return mapping[column]
    first = rows[0] if rows else {}
    return next((name for name in column_fields(column) if name in first), None)


def columns_from_records(rows: Sequence[Mapping[str, Any]], spec: InputColumns,
                         mapping: Mapping[str, str] | None = None, source: str = "input",
                         hint: str = "--column {column}=FIELD", *, lines: Sequence[int] | None = None,
                         allow_empty: bool = True) -> dict[str, list[Any]]:
    """``{column: values}`` for ``spec`` from the records; a missing field is a clear error that
    names the row (:func:`locate`: the file's line with ``lines``, else the row from 1), the
    fields looked for and the ones the row has. ``hint`` says how to name another field (the
    command line's flag, the playground's box). An optional column (G-Eval's sources...) is read
    when mapped or when the first record has it.

    A required cell with no value (JSON null, a CSV row shorter than its header), a list column's
    text that starts like a JSON list and does not parse, and (unless ``allow_empty``) a blank
    text are a :class:`~textgen_metrics.errors.CellError` naming the row and the column."""
    mapping = mapping or {}
    inputs: dict[str, list[Any]] = {}
    columns = dict(spec.columns)
    first = rows[0] if rows else {}
    for column, kind in getattr(spec, "optional_columns", {}).items():
        if column in mapping or _field(rows, column, mapping) in first:
            columns[column] = kind
    for column, kind in columns.items():
        field = _field(rows, column, mapping)
        wanted = [field] if field is not None else list(column_fields(column))
        for i, row in enumerate(rows):
            if field is None or field not in row:
                have = ", ".join(sorted(map(str, row))) or "no fields"
                looked = " or ".join(repr(w) for w in wanted)
                raise ValueError(f"{source}: {locate(source, lines, i)} has no field {looked} for "
                                 f"{spec.name}'s {column} (it has: {have}); choose one with "
                                 f"{hint.format(column=column)}")
        # (no rows: no field is needed)
        if field is None:
            inputs[column] = []
            continue
        required = column in spec.columns
        values = []
        for i, row in enumerate(rows):
            try:
                if required and row[field] is None:
                    raise _BadCell("no value (a JSON null, or a CSV row with fewer cells than its header)")
                values.append(_cell(row[field], kind, allow_empty or not required))
            except _BadCell as e:
                raise CellError(e.reason, source, locate(source, lines, i), field, column, i, e.item) from None
        inputs[column] = values
    return inputs


def _fields(rows: Sequence[Mapping[str, Any]], spec: InputColumns, mapping: Mapping[str, str] | None) -> dict[str, str]:
    """``{input column: record field}`` as :func:`columns_from_records` read them."""
    columns = {**getattr(spec, "optional_columns", {}), **spec.columns}
    return {c: f for c in columns if (f := _field(rows, c, mapping or {})) is not None}


def resolve_judge(judge: Any, judge_options: Mapping[str, Any] | None = None) -> Any:
    """A judge object from a string, object or callable (None stays None)."""
    if judge is None:
        return None
    from .judges import get_judge

    return get_judge(judge, **(judge_options or {}))


def score_name(metric: str, key: str) -> str:
    """A result key as a flat name: ``rouge1`` stays, ``f1`` of bertscore is ``bertscore_f1``."""
    return key if key.startswith(metric) else f"{metric}_{key}"


def flat_scores(result: Result) -> dict[str, float]:
    """The numbers of ``result``'s aggregate as a flat ``{name: float}``.

    A key that does not start with the metric's name gets it as a prefix (``bleu_precisions``,
    ``bertscore_f1``; ``rouge1`` stays); a list of numbers (BLEU's precisions) becomes
    ``name_1 ... name_n``; the aggregate's other values (texts) are left out, and so is a score
    that no example got (None). Settings reported beside the scores (chrF's orders), intervals
    and the signature are not scores."""
    out = {}
    for key, value in result.aggregate.items():
        name = score_name(result.metric, key)
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            out[name] = float(value)
        elif isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            out.update({f"{name}_{i + 1}": float(v) for i, v in enumerate(value)})
    return out


def score_records(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str],
                  columns: Mapping[str, str] | None = None,
                  options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
                  progress: Progress | None = None, source: str = "input",
                  column_hint: str = "--column {column}=FIELD",
                  on_result: Callable[[str, Mapping[str, Any]], Any] | None = None, *,
                  lines: Sequence[int] | None = None, allow_empty: bool = True) -> dict[str, Any]:
    """Score ``rows`` (a list of dicts) with each metric name in ``metrics``.

    ``columns`` maps input columns to record fields, ``options`` maps a metric name to its
    keyword options, ``judge`` (a string, judge object or callable) serves the LLM-guided
    metrics, ``progress(metric, total)`` gives a context manager with ``update(k)`` per metric
    (see ``Progress``). A record's ``id`` field names it; without one, its row number (from 1).
    ``on_result(metric, entry)`` is called as each metric's report entry is done (the command
    line prints its scores at once).

    ``lines`` (:func:`read_table`'s) make every message name a row as the file's editor shows it,
    a metric's own error about one input value (``predictions[1]: ...``) included: the file's
    line and the column. ``allow_empty=False`` makes a blank required text an error (a file's
    blank cell usually means missing data). Each metric's entry says whether its aggregate is a
    corpus score (``corpus``: not the mean of the per-example scores); the report keeps ``lines``
    when given.
    """
    if not rows:
        raise ValueError(f"{source}: no rows")
    options = options or {}
    specs = [get_metric(name) for name in metrics]
    if not specs:
        raise ValueError("metrics: name at least one metric")
    unknown = sorted(set(options) - {spec.name for spec in specs})
    if unknown:
        raise ValueError(f"options: {unknown[0]!r} is not among the metrics {list(metrics)}")
    for spec in specs:
        spec.check_options(options.get(spec.name, {}), where=f"options of {spec.name}")
    inputs = {spec.name: columns_from_records(rows, spec, columns, source, column_hint, lines=lines,
                                              allow_empty=allow_empty) for spec in specs}
    if judge is not None and any(spec.judge for spec in specs):
        judge = resolve_judge(judge)  # one judge (one cache, one connection pool) for all
    report: dict[str, Any] = {"source": source, "examples": len(rows), "textgen_metrics": __version__,
                              "ids": [row.get("id", i + 1) for i, row in enumerate(rows)], "metrics": {},
                              "summary": {}}
    if lines is not None:
        report["lines"] = list(lines)
    for spec in specs:
        opts = dict(options.get(spec.name, {}))
        if spec.judge:
            opts.setdefault("judge", judge)
        start = time.perf_counter()
        bar = progress(spec.name, len(rows)) if progress is not None else contextlib.nullcontext(None)
        with bar as update:
            try:
                result = spec.run(inputs[spec.name], progress=update, **opts)
            except InputError as e:  # one value of one row: name it as the file does
                fields = _fields(rows, spec, columns)
                if lines is None or e.argument not in fields or e.index is None or isinstance(e, CellError) \
                        or not 0 <= e.index < len(rows):
                    raise
                raise CellError(e.reason, source, locate(source, lines, e.index), fields[e.argument], e.argument,
                                e.index, e.item) from e
        seconds = time.perf_counter() - start
        shown = {k: v for k, v in opts.items() if k not in ("judge", "judge_options")}
        report["metrics"][spec.name] = {
            "options": shown,
            "aggregate": result.as_dict(True),
            "per_example": result.as_dict(False),
            "scores": list(result.keys),
            "summary": flat_scores(result),
            "corpus": spec.corpus,
            "seconds": round(seconds, 4),
        }
        report["summary"].update(report["metrics"][spec.name]["summary"])
        if on_result is not None:
            on_result(spec.name, report["metrics"][spec.name])
    return report


def unscored(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The examples that got no score, per metric and in row order: ``{"metric", "row" (from 1),
    "id", "error"}``; the error is the metric's message for that example where it gave one."""
    out = []
    ids = report.get("ids") or []
    for name, m in report["metrics"].items():
        messages = {e.get("index"): e.get("error") for e in (m["aggregate"].get("errors") or [])
                    if isinstance(e, Mapping)}
        scores = [m["per_example"][k] for k in m["scores"]]
        rows = {i for values in scores for i, v in enumerate(values) if v is None} | set(messages)
        for i in sorted(r for r in rows if isinstance(r, int)):
            out.append({"metric": name, "row": i + 1, "id": ids[i] if i < len(ids) else i + 1,
                        "error": messages.get(i) or "no score"})
    return out
