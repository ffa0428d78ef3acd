"""Score a table of records with several metrics: what the command line and the playground run.

Records come from CSV, TSV, JSON, JSONL, Parquet or a ``datasets`` folder (``save_to_disk``).
The result is a report: per metric its options, aggregate (the corpus score for BLEU and
Google BLEU, the mean over scored examples otherwise), per-example scores and time.
"""

import json
import os
import time

from . import __version__
from .registry import get_metric

__all__ = ["read_records", "columns_from_records", "score_records", "flat_scores", "resolve_judge",
           "score_name"]


def read_records(path, split=None):
    """Rows of ``path`` as dicts: ``.jsonl``/``.json``/``.csv``/``.tsv``/``.parquet`` or a
    ``datasets`` folder (``split`` picks one split of a DatasetDict)."""
    if os.path.isdir(path):
        return _read_dataset_folder(path, split)
    ext = os.path.splitext(path)[1].lower()
    if ext in (".jsonl", ".ndjson"):
        rows = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{path}:{n}: not valid JSON ({e.msg})") from None
        return rows
    if ext == ".json":
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of records")
        return data
    if ext in (".csv", ".tsv"):
        import csv

        with open(path, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f, delimiter="\t" if ext == ".tsv" else ","))
    if ext == ".parquet":
        import datasets

        return datasets.Dataset.from_parquet(path).to_list()
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file or folder")
    raise ValueError(f"{path}: unknown file type {ext!r}; use .jsonl, .json, .csv, .tsv, .parquet "
                     "or a datasets folder")


def _read_dataset_folder(path, split):
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
    return data.to_list()


def _cell(value, kind):
    """A CSV cell holds a string: a list column may hold a JSON list, or one text."""
    if kind != "text" and isinstance(value, str):
        if value.startswith("["):
            try:
                parsed = json.loads(value)
                if isinstance(parsed, list):
                    return parsed
            except json.JSONDecodeError:
                pass
        if kind == "list":
            return [value]
    return value


def _field(rows, column, mapping):
    """The record field for an input column: the mapping's, else the column or its singular."""
    if column in mapping:
        return mapping[column]
    first = rows[0] if rows else {}
    singular = column[:-1] if column.endswith("s") else column
    for name in (column, singular):
        if name in first:
            return name
    return singular


def columns_from_records(rows, spec, mapping=None, source="input"):
    """``{column: values}`` for ``spec`` from the records; a missing field is a clear error. An
    optional column (G-Eval's sources...) is read when mapped or when the first record has it."""
    mapping = mapping or {}
    inputs = {}
    columns = dict(spec.columns)
    first = rows[0] if rows else {}
    for column, kind in getattr(spec, "optional_columns", {}).items():
        if column in mapping or _field(rows, column, mapping) in first:
            columns[column] = kind
    for column, kind in columns.items():
        field = _field(rows, column, mapping)
        for i, row in enumerate(rows):
            if field not in row:
                have = ", ".join(sorted(map(str, row)))
                raise ValueError(f"{source}: row {i} has no field {field!r} for {spec.name}'s {column} "
                                 f"(it has: {have}); choose one with --column {column}=FIELD")
        inputs[column] = [_cell(row[field], kind) for row in rows]
    return inputs


def resolve_judge(judge, judge_options=None):
    """A judge object from a string, object or callable (None stays None)."""
    if judge is None:
        return None
    from .judges import get_judge

    return get_judge(judge, **(judge_options or {}))


def score_name(metric, key):
    """A result key as a flat name: ``rouge1`` stays, ``f1`` of bertscore is ``bertscore_f1``."""
    return key if key.startswith(metric) else f"{metric}_{key}"


def flat_scores(aggregate, metric):
    """The numbers of ``metric``'s aggregate as a flat ``{name: float}``.

    A key that does not start with the metric's name gets it as a prefix (``bleu_precisions``,
    ``bertscore_f1``; ``rouge1`` stays); a list of numbers (BLEU's precisions) becomes
    ``name_1 ... name_n``; texts, judge usage and errors are left out, and so is a score that
    no example got (None)."""
    out = {}
    for key, value in aggregate.items():
        name = score_name(metric, key)
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            out[name] = float(value)
        elif isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            out.update({f"{name}_{i + 1}": float(v) for i, v in enumerate(value)})
    return out


def score_records(rows, metrics, columns=None, options=None, judge=None, progress=None, source="input"):
    """Score ``rows`` (a list of dicts) with each metric name in ``metrics``.

    ``columns`` maps input columns to record fields, ``options`` maps a metric name to its
    keyword options, ``judge`` (a string, judge object or callable) serves the LLM-guided
    metrics, ``progress(k)`` is called as examples are scored (each metric in turn).
    """
    if not rows:
        raise ValueError(f"{source}: no rows")
    options = options or {}
    specs = [get_metric(name) for name in metrics]
    if not specs:
        raise ValueError("metrics: name at least one metric")
    inputs = {spec.name: columns_from_records(rows, spec, columns, source) for spec in specs}
    if judge is not None and any(spec.judge for spec in specs):
        judge = resolve_judge(judge)  # one judge (one cache, one connection pool) for all
    report = {"source": source, "examples": len(rows), "textgen_metrics": __version__,
              "ids": [row.get("id", i) for i, row in enumerate(rows)], "metrics": {}, "summary": {}}
    for spec in specs:
        opts = dict(options.get(spec.name, {}))
        if spec.judge:
            opts.setdefault("judge", judge)
        start = time.perf_counter()
        aggregate, per_example = spec.compute_both(inputs[spec.name], progress=progress, **opts)
        seconds = time.perf_counter() - start
        shown = {k: v for k, v in opts.items() if k not in ("judge", "judge_options")}
        report["metrics"][spec.name] = {
            "options": shown,
            "aggregate": aggregate,
            "per_example": per_example,
            "scores": spec.main_scores(per_example, len(rows)),
            "seconds": round(seconds, 4),
        }
        report["summary"].update(flat_scores(aggregate, spec.name))
    return report
