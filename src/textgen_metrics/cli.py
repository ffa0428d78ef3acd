"""Command-line scorer: ``textgen-metrics score FILE --metrics rouge``.

Reads CSV or JSONL, runs the chosen metrics over the rows, prints a summary table and writes a
JSON report with the aggregate and per-example scores.
"""

import argparse
import csv
import json
import os
import sys
import time

from . import __version__
from .registry import METRICS, get_metric

__all__ = ["main", "read_records"]

_COLUMN_DEFAULTS = {"predictions": "prediction", "references": "references"}


def read_records(path):
    """Rows of a ``.jsonl``/``.json`` or ``.csv`` file as dicts."""
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
        with open(path, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f, delimiter="\t" if ext == ".tsv" else ","))
    raise ValueError(f"{path}: unknown file type {ext!r}; use .jsonl, .json, .csv or .tsv")


def _cell(value, kind):
    """CSV cells hold strings: a list column may hold a JSON list."""
    if kind != "text" and isinstance(value, str) and value.startswith("["):
        try:
            parsed = json.loads(value)
            if isinstance(parsed, list):
                return parsed
        except json.JSONDecodeError:
            pass
    return value


def _columns(rows, spec, mapping, path):
    inputs = {}
    for col, kind in spec.columns.items():
        field = mapping.get(col, _COLUMN_DEFAULTS.get(col, col))
        missing = [i for i, r in enumerate(rows) if field not in r]
        if missing:
            have = sorted(rows[missing[0]]) if rows else []
            raise ValueError(f"{path}: row {missing[0]} has no column {field!r} for {col} "
                             f"(it has {have}); choose one with --{col.rstrip('s')}-column")
        inputs[col] = [_cell(r[field], kind) for r in rows]
    return inputs


def _parse_options(items):
    options = {}
    for item in items or []:
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise ValueError(f"--option: expected METRIC.NAME=VALUE, got {item!r}")
        key, raw = item.split("=", 1)
        metric, name = key.split(".", 1)
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        options.setdefault(metric, {})[name] = value
    return options


def _table(summary):
    width = max([len(k) for k in summary] + [6])
    lines = [f"{'score':<{width}}  value", f"{'-' * width}  -------"]
    for k, v in summary.items():
        lines.append(f"{k:<{width}}  {v:.4f}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    return "\n".join(lines)


def score(args):
    rows = read_records(args.file)
    if not rows:
        raise ValueError(f"{args.file}: no rows")
    mapping = {"predictions": args.prediction_column, "references": args.reference_column}
    mapping = {k: v for k, v in mapping.items() if v}
    options = _parse_options(args.option)
    report = {"file": os.path.abspath(args.file), "examples": len(rows),
              "textgen_metrics": __version__, "metrics": {}}
    summary = {}
    for name in [m.strip() for m in args.metrics.split(",") if m.strip()]:
        spec = get_metric(name)
        inputs = _columns(rows, spec, mapping, args.file)
        start = time.perf_counter()
        aggregate, per_example = spec.compute_both(inputs, **options.get(name, {}))
        seconds = time.perf_counter() - start
        report["metrics"][name] = {"options": options.get(name, {}), "aggregate": aggregate,
                                   "per_example": per_example, "seconds": round(seconds, 4)}
        for k, v in aggregate.items():
            if isinstance(v, list):  # e.g. BLEU's precisions: one row per order
                summary.update({f"{k}_{i + 1}": x for i, x in enumerate(v)})
            else:
                summary[k] = v
    ids = [r.get("id", i) for i, r in enumerate(rows)]
    report["ids"] = ids
    print(f"{len(rows)} examples from {args.file}")
    print(_table(summary))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, ensure_ascii=False)
        print(f"report: {args.out}")
    return report


def build_parser():
    p = argparse.ArgumentParser(prog="textgen-metrics", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"textgen-metrics {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="score a CSV or JSONL file")
    s.add_argument("file")
    s.add_argument("--metrics", default="rouge", help=f"comma-separated, of: {', '.join(sorted(METRICS))}")
    s.add_argument("--prediction-column", help="column with the predictions (default: prediction)")
    s.add_argument("--reference-column", help="column with the references (default: references)")
    s.add_argument("--option", action="append", metavar="METRIC.NAME=VALUE",
                   help="a metric option, e.g. rouge.use_stemmer=true (repeatable)")
    s.add_argument("--out", help="write the JSON report here")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        score(args)
    except (ValueError, TypeError, OSError) as e:
        print(f"textgen-metrics: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
