"""One run over several metrics: what every front end builds, and nothing else checks.

A :class:`Run` is the metrics (the registry's names), ``columns`` (a metric input to a column
of the table, as the command line's ``--column``), ``options`` (``{metric: {option: value}}``)
and the judge of the LLM-guided metrics, checked once when it is made (:meth:`Run.build`): known
metrics, columns that are inputs of them, options each metric's ``Options`` takes with valid
values, a judge where one is needed. Every error names the argument in the front end's own
words (``words``: ``--metrics`` on the command line, ``Metrics`` in a Space) and, for a value of
a table, the row. The command line (``score``, ``compare``, ``meta-eval``, ``audit``), the
Spaces, the Trainer hook, evaluate's multi-process path, Ray and Spark all build one.

What a run does:

- :func:`read_rows`: the one reader of a source's rows (a list of records, or a file or a
  ``datasets`` folder by :func:`read_table`), as :class:`Rows` (the records, their source and
  each one's line in the file) that :meth:`Run.inputs` reads by the files' rules;
- :meth:`Run.inputs`: the one reader of tables, ``{metric: {input: values}}`` from records (a
  list of dicts, as files are read), a pandas DataFrame, an Arrow table, or columns
  (``{column: list or NumPy array}``, the batch Ray Data hands over by default). One notion of
  a missing cell: None, NaN, pandas' NA, all read as None (a file's required cell without a
  value is an error naming its line and field; elsewhere the metric's own error for None, as
  the library function gives it). A list input's cell is a list (a NumPy array, a tuple), or a text: one
  that starts like a JSON list is parsed (one that does not parse is an error, never a
  reference), another is a list of one;
- :meth:`Run.statistics`: each metric's :class:`~textgen_metrics.metric.Stats` of a batch;
  :func:`merge`: the statistics of the whole table from its batches in any order, each placed
  at its rows and summed, so that every sum runs in the table's row order whatever the
  partitioning and the engine (the same bits: fractional statistics too, TER's reference
  lengths summed as sacrebleu sums them, in row order);
- :meth:`Run.results`: each metric's :class:`~textgen_metrics.metric.Result` of merged
  statistics; :meth:`Run.score`: statistics and results of a whole table on this machine (in
  chunks with a progress bar), what the command line and the Spaces run;
- :meth:`Run.score_columns`: per-row score columns ``<metric>.<key>`` of a batch;
- :meth:`Run.pinned`: what a metric decides once per run (G-Eval's evaluation steps), decided
  once, before any batch, and carried in the run's options to every worker.

A run is picklable when its judge is (a string is): the metric objects (a model, a judge's
connections) are made once per process, on first use, and kept for the next batches and runs
of the same settings (:meth:`Run.metrics_here`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import pickle
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .errors import CellError, InputError, OptionError
from .judges import judge_option_kinds, resolve_judge
from .metric import Metric, Result, Stats, parse_option_text
from .registry import METRICS, column_fields, get_metric

__all__ = ["Run", "RunError", "Rows", "merge", "resolve_judge", "read_cell", "read_rows", "read_table",
           "option_value", "judge_option_kinds", "CLI_WORDS", "SPACE_WORDS", "LIBRARY_WORDS", "CHUNK", "locate"]

# what each argument of a run is called by a front end: the command line's flags, a Space's boxes
LIBRARY_WORDS = {"metrics": "metrics", "columns": "columns", "options": "options", "judge": "judge"}
CLI_WORDS = {"metrics": "--metrics", "columns": "--column", "options": "--option", "judge": "--judge"}
SPACE_WORDS = {"metrics": "Metrics", "columns": "Columns", "options": "Options", "judge": "Judge"}
CHUNK = 512  # examples per step of a run with a progress bar (the statistics merge exactly)


class RunError(ValueError):
    """A run that cannot be made: ``argument`` (``metrics``, ``columns``, ``options``, ``judge``)
    names what is wrong; the message starts with the front end's word for it."""

    def __init__(self, message: str, argument: str) -> None:
        self.argument = argument
        super().__init__(message)


def _stable(value: Any) -> str:
    """A value that is not JSON in a fingerprint: its pickle's hash (the same for a copy, as each
    task of a Spark job unpickles), else its repr."""
    try:
        return hashlib.sha256(pickle.dumps(value)).hexdigest()
    except Exception:  # an object that does not pickle (any error of its __reduce__): this object only
        return repr(value)


# -- option values ---------------------------------------------------------------------------------
def option_value(kind: str, value: Any, where: str, text: bool = False) -> Any:
    """An option's value as its kind (:data:`~textgen_metrics.metric.OPTION_KINDS`) takes it:
    the one parser of option texts, :func:`~textgen_metrics.metric.parse_option_text`, for a
    text a user typed (``text``: every value is one, as on the command line) and for a text
    given to an option whose kind is not a text (``"yes"`` for a flag, ``"2"`` for an integer,
    ``"rouge1,rougeL"`` for a list); any other value as given, for the option's check."""
    if isinstance(value, str) and (text or kind not in ("str", "json")):
        return parse_option_text(kind, value, where)
    return value


_LINE_FILES = (".jsonl", ".ndjson", ".csv", ".tsv")


def locate(source: str, lines: Sequence[int] | None, index: int) -> str:
    """Where row ``index`` (from 0) of ``source`` is, as an editor shows it: ``"line N"`` in a
    CSV, TSV or JSONL file (``lines``: :func:`read_table`'s), else ``"row N"`` (from 1)."""
    if lines is None:
        return f"row {index + 1}"
    line_file = not os.path.isdir(source) and os.path.splitext(source)[1].lower() in _LINE_FILES
    return f"{'line' if line_file else 'row'} {lines[index]}"


# -- the rows of a source --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Rows:
    """Records and where they came from: ``source`` names them in messages; ``lines``, each
    record's line in a file as an editor numbers it (:func:`read_table`'s; None: records given as
    a list, or a bundled set's rows, named by their number from 1). :meth:`Run.inputs` reads a
    file's rows by the files' rule: a blank required text is an error naming its line and column
    (a blank cell usually means missing data), where the library's own records keep an empty text
    as valid input."""

    records: list[dict[str, Any]]
    source: str
    lines: list[int] | None = None


def read_rows(source: Any, split: str | None = None) -> Rows:
    """The :class:`Rows` of ``source``: a list of records (as given, named ``rows``), or a file or
    a ``datasets`` folder read by :func:`read_table` (``split``: a folder's split)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        records, lines = read_table(path, split)
        return Rows(records, path, lines)
    if isinstance(source, Sequence) and all(isinstance(r, Mapping) for r in source):
        return Rows([dict(r) for r in source], "rows")
    raise TypeError(f"source: expected a list of records or a file path, got {type(source).__name__}")


def read_table(path: str, split: str | None = None) -> tuple[list[dict[str, Any]], list[int]]:
    """``(rows, lines)``: the rows of ``path`` (``.jsonl``/``.json``/``.csv``/``.tsv``/``.parquet`` or
    a ``datasets`` folder, ``split`` picking one split of a DatasetDict), and each row's line in
    the file as an editor numbers it (CSV/TSV: the header is line 1, a row's first line;
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


# -- the cells of a table --------------------------------------------------------------------------
# a text that starts like a JSON list of texts: "[" then a quote (either: ['a'] is Python's
# spelling), "[", "]" or nothing; "[Music] plays" is a text
_LIST_START = re.compile(r"\s*\[\s*(?:[\"'\[\]]|$)")
_EMPTY = "empty (a blank cell usually means missing data; --allow-empty scores it as an empty text)"
_NO_VALUE = "no value (a JSON null, or a CSV row with fewer cells than its header)"


class _BadCell(ValueError):
    def __init__(self, reason: str, item: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.item = reason, item


def is_missing(value: Any) -> bool:
    """A missing cell: None, a float NaN (a null of Arrow in pandas), pandas' NA or NaT."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        type(value).__name__ in ("NAType", "NaTType")


def read_cell(value: Any, kind: str, allow_empty: bool = True, texts: bool = True) -> Any:
    """A cell as the metric takes it (``kind``: ``text``, ``text_or_list``, ``list``): a missing
    cell is None; a NumPy array or a tuple is a list; in a list input a text that starts like a
    JSON list is that list (one that does not parse is an error), another text a list of one; a
    blank text (or list item) is an error unless ``allow_empty``. ``texts=False``: the table's
    texts are values as the library takes them (the Trainer's decoded texts, evaluate's
    examples), not cells of a file: none is parsed. Raises ``_BadCell``."""
    if is_missing(value):
        return None
    if not isinstance(value, str) and hasattr(value, "tolist"):
        value = value.tolist()
    elif isinstance(value, tuple):
        value = list(value)
    if not allow_empty and isinstance(value, str) and not value.strip():
        raise _BadCell(_EMPTY)
    if kind != "text" and isinstance(value, str) and texts:
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


class Table:
    """A table's columns, read alike whatever holds them: records (a list of dicts), a pandas
    DataFrame, an Arrow table, or ``{column: values}`` (lists or NumPy arrays)."""

    def __init__(self, data: Any) -> None:
        self.records: Sequence[Mapping[str, Any]] | None = None
        if isinstance(data, Mapping):
            self.names = [str(k) for k in data]
            self._columns: Any = data
            self.rows = len(next(iter(data.values()), []))
        elif hasattr(data, "columns") and hasattr(data, "iloc"):  # pandas
            self.names = [str(c) for c in data.columns]
            self._columns = data
            self.rows = len(data)
        elif hasattr(data, "column_names") and hasattr(data, "num_rows"):  # Arrow
            self.names = list(data.column_names)
            self._columns = data
            self.rows = int(data.num_rows)
        elif isinstance(data, Sequence) and not isinstance(data, str):
            self.records = data
            first = data[0] if data else {}
            if not isinstance(first, Mapping):
                raise ValueError(f"table: a list of records (dicts) is expected, got a list of {type(first).__name__}")
            self.names = [str(k) for k in first]  # (a later record's own fields are checked per row)
            self._columns = None
            self.rows = len(data)
        else:
            raise ValueError(f"table: expected records, a DataFrame, an Arrow table or {{column: values}}, got "
                             f"{type(data).__name__}")

    def values(self, column: str) -> list[Any]:
        if self.records is not None:
            return [row[column] for row in self.records]
        values = self._columns[column]
        if hasattr(values, "to_pylist"):  # an Arrow column
            return list(values.to_pylist())
        return values.tolist() if hasattr(values, "tolist") else list(values)


# -- the run ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Run:
    """A checked run over several metrics (:meth:`build`); picklable when the judge is."""

    metrics: tuple[str, ...]
    columns: dict[str, str]
    options: dict[str, dict[str, Any]]
    judge: Any = None
    judge_options: dict[str, Any] | None = None

    # -- making one ------------------------------------------------------------------------------
    @classmethod
    def build(cls, metrics: Sequence[str] | str, columns: Mapping[str, str] | None = None,
              options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
              judge_options: Mapping[str, Any] | None = None, *, words: Mapping[str, str] = LIBRARY_WORDS,
              texts: bool = False, resolve: bool = False, front_end: bool = False) -> Run:
        """The run, checked: every metric known (and named once), every column an input of them
        mapped to a column name, every option one its metric takes with a value its ``Options``
        accepts, a judge where an LLM-guided metric is asked for. ``words``: the front end's name
        of each argument in messages. Option values go through the one parser of option texts
        (:func:`option_value`): ``texts``, every value (of ``options`` and ``judge_options``) is
        a text a user typed (the command line's); otherwise a text given for an option whose
        kind is not a text (a Space's ``{"use_stemmer": "yes"}``, Ray's ``{"max_order": "2"}``)
        is parsed alike. ``resolve``: make the judge object now (one judge, one cache and
        connection pool, for every metric of the run). ``front_end``: the options may include
        those a front end sets itself (``use_aggregator``: the result dicts of Ray, Spark and
        evaluate's merge follow it), not only a user's."""
        w = {**LIBRARY_WORDS, **words}
        names = (metrics,) if isinstance(metrics, str) else tuple(m for m in metrics)
        if not names:
            raise RunError(f"{w['metrics']}: name at least one metric", "metrics")
        for name in names:
            if name not in METRICS:
                raise RunError(f"{w['metrics']}: unknown metric {name!r}; available: {', '.join(sorted(METRICS))}",
                               "metrics")
        if len(set(names)) != len(names):
            raise RunError(f"{w['metrics']}: {', '.join(names)} names a metric twice", "metrics")
        specs = [get_metric(name) for name in names]
        mapped = dict(columns or {})
        inputs = {c for spec in specs for c in (*spec.columns, *spec.optional_columns)}
        for key, value in mapped.items():
            if key not in inputs:
                raise RunError(f"{w['columns']} {key}: not an input of {', '.join(names)} (their inputs: "
                               f"{', '.join(sorted(inputs))})", "columns")
            if not isinstance(value, str) or not value:
                raise RunError(f"{w['columns']} {key}: must name a column (a non-empty string), got {value!r}",
                               "columns")
        given = dict(options or {})
        opts: dict[str, dict[str, Any]] = {}
        for key, metric_options in given.items():
            if key not in names:
                raise RunError(f"{w['options']} {key}: {key!r} is not among {w['metrics']} {','.join(names)}",
                               "options")
            if not isinstance(metric_options, Mapping):
                raise RunError(f"{w['options']}: the options of {key} must be a mapping of option to value, such as "
                               '{"use_stemmer": true}', "options")
            opts[key] = dict(metric_options)
        for spec in specs:
            given_options = opts.get(spec.name, {})
            kinds = spec.option_kinds()
            for option_name, value in given_options.items():
                where = f"{w['options']} {spec.name}.{option_name}"
                if not front_end:
                    spec.check_options({option_name: None}, where=where)
                elif option_name not in {f.name for f in spec.option_fields()} | {"judge", "judge_options"}:
                    known = ", ".join(sorted(f.name for f in spec.option_fields()))
                    raise OptionError(f"{where}: {spec.name} has no option {option_name!r}; its options: {known}",
                                      option_name)
                if option_name in kinds:
                    given_options[option_name] = option_value(kinds[option_name], value, where, texts)
        if judge_options is not None and isinstance(judge, str):
            kinds = judge_option_kinds(judge)
            unknown = [k for k in judge_options if kinds and k not in kinds]
            if unknown:
                raise OptionError(f"{w['judge']} option {unknown[0]}: the {judge.partition(':')[0]} backend has no "
                                  f"option {unknown[0]!r}; its options: {', '.join(sorted(kinds))}", unknown[0])
            judge_options = {k: option_value(kinds.get(k, "json"), v, f"{w['judge']} option {k}", texts)
                             for k, v in judge_options.items()}
        if judge is None:
            missing = [spec.name for spec in specs if spec.judge and "judge" not in opts.get(spec.name, {})]
            if missing:
                raise RunError(f"{w['judge']}: an LLM-guided metric needs a judge ({', '.join(missing)})", "judge")
        run = cls(names, mapped, opts, judge, dict(judge_options) if judge_options is not None else None)
        run.driver_metrics()  # every Options checked here, before any work
        return run.resolved() if resolve else run

    def resolved(self) -> Run:
        """The run with its judge object made (one judge, one cache and connection pool, for
        every metric of the run); a run without an LLM-guided metric as it is."""
        if self.judge is None or not self.needs_judge:
            return self
        return dataclasses.replace(self, judge=resolve_judge(self.judge, self.judge_options), judge_options=None)

    def only(self, names: Sequence[str]) -> Run:
        """This run's settings for some of its metrics (checked already)."""
        for name in names:
            if name not in self.metrics:
                raise ValueError(f"metrics: {name!r} is not among the run's ({', '.join(self.metrics)})")
        return dataclasses.replace(self, metrics=tuple(names),
                                   options={k: v for k, v in self.options.items() if k in names})

    def with_defaults(self, defaults: Mapping[str, Mapping[str, Any]]) -> Run:
        """The run with ``defaults`` under each metric's options (what a front end sets unless the
        user set it: the Trainer's options for decoded text), checked."""
        options = {name: {**defaults.get(name, {}), **self.options.get(name, {})} for name in self.metrics}
        run = dataclasses.replace(self, options={k: v for k, v in options.items() if v})
        run.driver_metrics()
        return run

    @functools.cached_property
    def fingerprint(self) -> str:
        """A hash of the run's settings: the key of a process's metric objects."""
        text = json.dumps([self.metrics, self.columns, self.options, self.judge, self.judge_options],
                          sort_keys=True, default=_stable)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def specs(self) -> list[type[Metric]]:
        return [get_metric(name) for name in self.metrics]

    @property
    def needs_judge(self) -> bool:
        return any(spec.judge for spec in self.specs())

    def metric_options(self, spec: type[Metric], judge: Any) -> dict[str, Any]:
        """The keyword options of ``spec``'s object (with the judge of the LLM-guided metrics)."""
        opts = dict(self.options.get(spec.name, {}))
        if spec.judge and judge is not None:
            opts.setdefault("judge", judge)
        return opts

    def driver_metrics(self) -> dict[str, Metric]:
        """The metric objects that score merged statistics (the judge is not resolved: the
        statistics carry the judge's model and mode)."""
        return {spec.name: spec(**self.metric_options(spec, self.judge)) for spec in self.specs()}

    def metrics_here(self, context: str = "driver") -> _Objects:
        """This process's metric objects of the run, made on first use and kept for the next
        batches and runs of the same settings (the last few), so that a model or a local judge
        is loaded once per process (a Ray worker or actor, a Spark Python worker)."""
        key = f"{context}:{self.fingerprint}"
        objects = _PROCESS.pop(key, None)
        if objects is None:
            objects = _Objects(self)
            while len(_PROCESS) >= _KEPT:
                del _PROCESS[next(iter(_PROCESS))]  # the least recently used
        _PROCESS[key] = objects
        return objects

    # -- reading a table -------------------------------------------------------------------------
    def fields(self, available: Iterable[str]) -> dict[str, dict[str, str]]:
        """``{metric: {input: column}}`` in a table with the columns ``available``: the mapped
        column, else the first of the input's spellings (``predictions`` or ``prediction``) the
        table has; an optional input only when mapped or present."""
        have = list(available)
        return {spec.name: self._fields(spec, have) for spec in self.specs()}

    def _fields(self, spec: type[Metric], have: list[str], wanted: Sequence[str] | None = None) -> dict[str, str]:
        out: dict[str, str] = {}
        for column in (*spec.columns, *spec.optional_columns):
            if wanted is not None and column not in wanted:
                continue
            spellings = [self.columns[column]] if column in self.columns else list(column_fields(column))
            found = next((w for w in spellings if w in have), None)
            if found is not None:
                out[column] = found
            elif column in spec.columns or column in self.columns:
                looked = " or ".join(repr(x) for x in spellings)
                raise ValueError(f"columns: the data has no column {looked} for {spec.name}'s {column} (it has: "
                                 f"{', '.join(map(str, have)) or 'none'}); map one with columns={{{column!r}: ...}}")
        return out

    def check_table(self, available: Iterable[str]) -> None:
        """Every metric's inputs are found among the table's columns (before any work is sent)."""
        self.fields(available)

    def inputs(self, table: Any, *, source: str | None = None, lines: Sequence[int] | None = None,
               hint: str = "--column {column}=FIELD", allow_empty: bool | None = None,
               only: Sequence[str] | None = None, inputs: Sequence[str] | None = None, texts: bool = True,
               optional: bool = True) -> dict[str, dict[str, list[Any]]]:
        """``{metric: {input: values}}`` of ``table`` (records, a DataFrame, an Arrow table,
        ``{column: values}``, or :class:`Rows`: its records with their source and lines), each
        cell read by :func:`read_cell`.

        A record without the field, a required input's missing cell, a list input's text that
        starts like a JSON list and does not parse, and (unless ``allow_empty``) a blank required
        text are errors naming the row (``allow_empty``'s default: a file's rows, :class:`Rows` with
        lines, allow no blank required text; anything else does): with ``source`` (a file) a
        :class:`~textgen_metrics.errors.CellError` naming the file's line (``lines``, as
        :func:`read_table` gives them) and the field, else an
        :class:`~textgen_metrics.errors.InputError` naming the input and the row's index from 0
        (a batch's: the scale-out front ends place it in the whole table). ``hint``: how the
        front end maps another field. ``only``: these metrics (default: all); ``inputs``: these
        inputs of them (default: all; ``compare`` reads system B's predictions alone).
        ``texts=False``: the texts are the library's values, not a file's cells (see
        :func:`read_cell`). ``optional=False``: a metric's optional inputs are not read (the
        Trainer's labels are G-Eval's references only where they are its required input)."""
        file_rows = isinstance(table, Rows) and table.lines is not None
        if isinstance(table, Rows):
            source, lines, table = table.source, table.lines, table.records
        empty_ok = not file_rows if allow_empty is None else allow_empty
        data = Table(table)
        out: dict[str, dict[str, list[Any]]] = {}
        for spec in self.specs():
            if only is not None and spec.name not in only:
                continue
            wanted = inputs if optional else [c for c in spec.columns if inputs is None or c in inputs]
            out[spec.name] = self._read(spec, data, source, lines, hint, empty_ok, wanted, texts)
        return out

    def _read(self, spec: type[Metric], data: Table, source: str | None, lines: Sequence[int] | None, hint: str,
              allow_empty: bool, wanted: Sequence[str] | None = None, texts: bool = True) -> dict[str, list[Any]]:
        kinds = {**spec.optional_columns, **spec.columns}
        if wanted is not None:
            kinds = {c: k for c, k in kinds.items() if c in wanted}
        if data.records is not None:
            fields = self._record_fields(spec, data.records, source or "input", lines, hint, list(kinds))
        else:
            fields = self._fields(spec, data.names, list(kinds))
        inputs: dict[str, list[Any]] = {}
        for column in (*spec.columns, *spec.optional_columns):
            field = fields.get(column) if column in kinds else None
            if field is None:
                continue
            required = column in spec.columns
            values = []
            for i, value in enumerate(data.values(field)):
                try:
                    cell = read_cell(value, kinds[column], allow_empty or not required, texts)
                    if cell is None and required and source is not None:  # (a batch's: the metric's own error)
                        raise _BadCell(_NO_VALUE)
                except _BadCell as e:
                    if source is None:
                        raise InputError(e.reason, column, i, e.item) from None
                    raise CellError(e.reason, source, locate(source, lines, i), field, column, i, e.item) from None
                values.append(cell)
            inputs[column] = values
        return inputs

    def _record_fields(self, spec: type[Metric], rows: Sequence[Mapping[str, Any]], source: str,
                       lines: Sequence[int] | None, hint: str, wanted: Sequence[str]) -> dict[str, str]:
        """``{input: field}`` of records: the mapped field, else the first spelling the first
        record has (an optional input: when mapped or the first record has it); every record
        must have it (an error naming the first that does not)."""
        first = rows[0] if rows else {}
        out: dict[str, str] = {}
        for column in (c for c in (*spec.columns, *spec.optional_columns) if c in wanted):
            field = self.columns.get(column) or next((f for f in column_fields(column) if f in first), None)
            if column not in spec.columns and (field is None or (column not in self.columns and field not in first)):
                continue  # an optional input neither mapped nor present
            spellings = [field] if field is not None else list(column_fields(column))
            for i, row in enumerate(rows):
                if field is None or field not in row:
                    have = ", ".join(sorted(map(str, row))) or "no fields"
                    looked = " or ".join(repr(x) for x in spellings)
                    raise ValueError(f"{source}: {locate(source, lines, i)} has no field {looked} for "
                                     f"{spec.name}'s {column} (it has: {have}); choose one with "
                                     f"{hint.format(column=column)}")
            if field is not None:
                out[column] = field
            elif not rows:
                out[column] = column
        return out

    # -- computing -------------------------------------------------------------------------------
    def statistics(self, batch: Any, context: str = "driver", texts: bool = True,
                   optional: bool = True) -> dict[str, Stats]:
        """Each metric's statistics of the batch's rows, in their order (not placed); ``texts``
        and ``optional`` as :meth:`inputs` takes them."""
        objects = self.metrics_here(context)
        return {name: objects.metrics[name].statistics(given)
                for name, given in self.inputs(batch, texts=texts, optional=optional).items()}

    def score_columns(self, batch: Any, context: str = "driver") -> dict[str, list[Any]]:
        """``{"<metric>.<key>": values}``: each metric's per-example scores of the batch's rows
        (None where an example has none; no interval is computed for them)."""
        objects = self.metrics_here(context)
        out: dict[str, list[Any]] = {}
        for name, stats in self.statistics(batch, context).items():
            metric = objects.row_metrics[name]
            if not stats.count:
                out.update({f"{name}.{key}": [] for key in metric.keys()})
                continue
            result = metric.score(stats)
            out.update({f"{name}.{key}": list(result.per_example[key]) for key in result.keys})
        return out

    def score_names(self) -> list[str]:
        """The per-row score columns of the run, in order: ``<metric>.<key>``."""
        return [f"{name}.{key}" for name, metric in self.driver_metrics().items() for key in metric.keys()]

    def results(self, merged: Mapping[str, Stats],
                usage: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, Result]:
        """``{metric: Result}`` of merged statistics; ``usage``: the judge's usage the driver had
        for a metric (:meth:`pinned`), counted in its totals as the library counts it."""
        return {name: result for name, (_, result) in self._scored(merged, usage).items()}

    def result_dicts(self, merged: Mapping[str, Stats],
                     usage: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, dict[str, Any]]:
        """:meth:`results` as the library functions return them (``use_aggregator`` as given)."""
        return {name: result.as_dict(getattr(metric.options, "use_aggregator", True))
                for name, (metric, result) in self._scored(merged, usage).items()}

    def _scored(self, merged: Mapping[str, Stats],
                usage: Mapping[str, Mapping[str, int]] | None) -> dict[str, tuple[Metric, Result]]:
        out = {}
        for name, metric in self.driver_metrics().items():
            stats = merged.get(name)
            if stats is None:  # no rows at all: the metric's own error for no examples
                stats = Stats(name, metric.statistics_settings, metric.no_statistics())
            extra = (usage or {}).get(name)
            if extra and stats.count:
                totals = dict(stats.totals)
                for key, value in extra.items():
                    totals[key] = totals.get(key, 0) + int(value)
                stats = dataclasses.replace(stats, totals=totals)
            out[name] = (metric, metric.score(stats))
        return out

    def score(self, inputs: Mapping[str, Mapping[str, list[Any]]], *,
              progress: Callable[[str, int], Any] | None = None,
              on_result: Callable[[str, Result, float], Any] | None = None) -> dict[str, Result]:
        """Each metric's result over its ``inputs`` (:meth:`inputs`) on this machine, one metric
        after another. ``progress(metric, total)``: a context manager giving ``update(k)``, entered
        while that metric runs; its statistics are then computed :data:`CHUNK` examples at a time
        and merged (exactly: the result is the same), or the metric reports it itself where it
        takes ``progress`` (one whose examples are scored together). ``on_result(metric, result,
        seconds)`` as each metric is done."""
        import contextlib
        import time

        judge = resolve_judge(self.judge, self.judge_options) if self.needs_judge else None  # one for all
        out: dict[str, Result] = {}
        for spec in self.specs():
            given = {c: v for c, v in inputs[spec.name].items() if v is not None}
            start = time.perf_counter()
            n = len(next(iter(given.values()), []))
            bar = progress(spec.name, n) if progress is not None else contextlib.nullcontext(None)
            with bar as update:
                out[spec.name] = _score_one(spec, self.metric_options(spec, judge), given, update)
            if on_result is not None:
                on_result(spec.name, out[spec.name], time.perf_counter() - start)
        return out

    def asks_once(self) -> list[type[Metric]]:
        """The run's metrics that decide something once per run with its options (G-Eval
        without its evaluation steps): :meth:`pinned` asks them first."""
        return [type(m) for m in self.driver_metrics().values() if m.asks_once()]

    def pinned(self, available: Iterable[str]) -> tuple[Run, dict[str, dict[str, int]]]:
        """The run with what a metric asks once per run (G-Eval's evaluation steps) asked once,
        by the driver, and given to every worker as an option, so that every batch runs alike
        (a judge asked in each worker could answer each differently, and the batches would not
        merge); with the judge's usage for it, by metric (:meth:`results` counts it).
        ``available``: the table's columns (which inputs the run is given). A request that fails
        raises a :class:`~textgen_metrics.judges.JudgeError` before any worker starts."""
        have = list(available)
        options = {k: dict(v) for k, v in self.options.items()}
        usage: dict[str, dict[str, int]] = {}
        judge: Any = None
        for spec in self.asks_once():
            if judge is None:
                judge = resolve_judge(self.judge, self.judge_options)
            metric = spec(**self.metric_options(spec, judge))
            pinned, used = metric.pin_run(list(self._fields(spec, have)))
            if pinned:
                options[spec.name] = {**options.get(spec.name, {}), **pinned}
                usage[spec.name] = used
        return (dataclasses.replace(self, options=options) if usage else self), usage


def _score_one(spec: type[Metric], options: dict[str, Any], given: dict[str, list[Any]],
               progress: Callable[[int], Any] | None) -> Result:
    reports = progress is not None and spec.takes("progress")
    if reports:
        options["progress"] = progress
    metric = spec(**options)
    first = next(iter(spec.columns))
    n = len(given[first]) if first in given else 0
    if progress is None or reports or spec.scores_together or n <= CHUNK:
        result = metric.score(metric.statistics(given))
        if progress is not None and not reports:
            progress(n)
        return result
    stats: Stats | int = 0
    for start in range(0, n, CHUNK):
        part = {c: v[start:start + CHUNK] for c, v in given.items()}
        stats = stats + metric.statistics(part)
        progress(len(part[first]))
    assert isinstance(stats, Stats)
    return metric.score(stats)


class _Objects:
    """A run's metric objects in one process: its judge resolved once for all of them; the
    per-row metrics without an interval."""

    def __init__(self, run: Run) -> None:
        judge = resolve_judge(run.judge, run.judge_options) if run.needs_judge else None
        self.metrics: dict[str, Metric] = {spec.name: spec(**run.metric_options(spec, judge)) for spec in run.specs()}
        self.row_metrics: dict[str, Metric] = {
            name: (m if m.options.confidence_level is None
                   else type(m)(dataclasses.replace(m.options, confidence_level=None)))
            for name, m in self.metrics.items()}


# this process's metric objects by run, the most recently used last; a worker process that lives
# on between calls (a Ray task's, a Spark Python worker) keeps the last few runs' only
_PROCESS: dict[str, _Objects] = {}
_KEPT = 4


def merge(parts: Iterable[tuple[Any, int, Mapping[str, Stats]]]) -> dict[str, Stats]:
    """The statistics of the whole table from its batches ``(order key, rows, statistics)``, in
    any order: sorted by key, each placed at its rows, summed. Every metric's sums then run over
    the examples in the table's order, so the bits are those of the whole table scored at once,
    whatever the partitioning (sacrebleu's sums of TER's fractional reference lengths included,
    which another order changes in the last digit). Two batches with the same key are an error
    (a batch counted twice)."""
    ordered = sorted(parts, key=lambda p: p[0])
    for a, b in zip(ordered, ordered[1:], strict=False):
        if a[0] == b[0]:
            raise ValueError(f"statistics: two batches at order key {a[0]!r} (a batch counted twice)")
    merged: dict[str, Stats] = {}
    offset = 0
    for _, count, stats in ordered:
        for name, part in stats.items():
            placed = part.placed(offset)
            merged[name] = merged[name] + placed if name in merged else placed
        offset += int(count)
    return merged
