"""Command-line scorer: ``textgen-metrics score FILE --metrics rouge``.

Reads CSV, JSONL, JSON, Parquet or a ``datasets`` folder, runs the chosen metrics over the rows
(the LLM-guided ones with ``--judge``), prints a summary table, and writes a JSON report with the
aggregate and per-example scores (``--out``) and an HTML report with a histogram per score
(``--html``).
"""

import argparse
import json
import os
import sys

from . import __version__
from .registry import METRICS
from .report import format_number
from .scoring import read_records, score_records

__all__ = ["main", "build_parser"]


def _key_values(items, flag, dotted=False):
    """``NAME=VALUE`` items (``METRIC.NAME=VALUE`` when ``dotted``); values parse as JSON when
    they can (true, 3, [1, 2]) and stay strings otherwise."""
    out = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key or (dotted and "." not in key):
            want = "METRIC.NAME=VALUE" if dotted else "NAME=VALUE"
            raise ValueError(f"{flag}: expected {want}, got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if dotted:
            metric, name = key.split(".", 1)
            out.setdefault(metric, {})[name] = value
        else:
            out[key] = value
    return out


def _table(summary):
    width = max([len(k) for k in summary] + [6])
    lines = [f"{'score':<{width}}  value", f"{'-' * width}  -------"]
    lines += [f"{k:<{width}}  {format_number(v)}" for k, v in summary.items()]
    return "\n".join(lines)


def _progress_bar(args, total):
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    if not show:
        return None, None
    from tqdm.auto import tqdm

    bar = tqdm(total=total, unit="ex", desc="scoring", file=sys.stderr, dynamic_ncols=True)
    return bar, bar.update


def _judge(args):
    if not args.judge:
        if args.judge_url or args.judge_option:
            raise ValueError("--judge: give the judge (e.g. openai:gpt-4o-mini) that the options are for")
        return None
    options = _key_values(args.judge_option, "--judge-option")
    if args.judge_url:
        options["base_url"] = args.judge_url
    from .scoring import resolve_judge

    return resolve_judge(args.judge, options)


def score(args):
    names = [m.strip() for m in args.metrics.split(",") if m.strip()]
    rows = read_records(args.file, split=args.split)
    columns = _key_values(args.column, "--column")
    columns.update({k: v for k, v in (("predictions", args.prediction_column),
                                      ("references", args.reference_column)) if v})
    options = _key_values(args.option, "--option", dotted=True)
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ValueError(f"--option: {unknown[0]!r} is not among --metrics {names}")
    judge = _judge(args)
    needs = [n for n in names if n in METRICS and METRICS[n].judge]
    if needs and judge is None:
        raise ValueError(f"--judge: an LLM-guided metric needs a judge ({', '.join(needs)}); give "
                         "--judge openai:MODEL (server from --judge-url or OPENAI_BASE_URL, key from "
                         "OPENAI_API_KEY) or --judge hf:LOCAL_MODEL_PATH")
    if args.human_column:  # before any judge call: a wrong field name costs nothing
        from .human_agreement import check_human_columns

        check_human_columns(rows, args.human_column, names)
    bar, progress = _progress_bar(args, len(rows) * len(names))
    try:
        report = score_records(rows, names, columns=columns, options=options, judge=judge,
                               progress=progress, source=args.file)
    finally:
        if bar is not None:
            bar.close()
    print(f"{report['examples']} examples from {args.file}")
    print(_table(report["summary"]))
    for name, m in report["metrics"].items():
        agg = m["aggregate"]
        if "judge_usage" in agg:
            usage = ", ".join(f"{k} {v}" for k, v in agg["judge_usage"].items())
            print(f"{name}: judge {agg['judge_model']}: {usage}; {len(agg['errors'])} example(s) unscored")
    if args.human_column:
        from .human_agreement import agreement_report, describe

        report["agreement"] = agreement_report(report, rows, args.human_column)
        for name, a in report["agreement"].items():
            print(f"{name} vs {a['human_column']}: {describe(a)}")
    if args.out:
        _write(args.out, json.dumps(report, indent=2, ensure_ascii=False))
        print(f"report: {args.out}")
    if args.html:
        from .report import report_html

        _write(args.html, report_html(report))
        print(f"html report: {args.html}")
    return report


def _write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def build_parser():
    p = argparse.ArgumentParser(prog="textgen-metrics", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"textgen-metrics {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="score a CSV, JSONL, JSON, Parquet file or a datasets folder")
    s.add_argument("file", help="a .jsonl, .json, .csv, .tsv or .parquet file, or a datasets folder")
    s.add_argument("--metrics", default="rouge", help=f"comma-separated, of: {', '.join(sorted(METRICS))}")
    s.add_argument("--column", action="append", metavar="INPUT=FIELD",
                   help="the field holding an input, e.g. contexts=retrieved (repeatable; default: "
                        "the input's name or its singular: prediction, references, query, ...)")
    s.add_argument("--prediction-column", help="the field with the predictions (default: prediction)")
    s.add_argument("--reference-column", help="the field with the references (default: references)")
    s.add_argument("--split", help="the split of a datasets folder with several")
    s.add_argument("--option", action="append", metavar="METRIC.NAME=VALUE",
                   help="a metric option, e.g. rouge.use_stemmer=true (repeatable)")
    s.add_argument("--judge", help="the judge of the LLM-guided metrics: openai:MODEL or hf:MODEL_OR_PATH "
                                   "(API key from OPENAI_API_KEY)")
    s.add_argument("--judge-url", help="the OpenAI-compatible server (default: OPENAI_BASE_URL)")
    s.add_argument("--judge-option", action="append", metavar="NAME=VALUE",
                   help="a judge option, e.g. concurrency=16, cache=true (repeatable)")
    s.add_argument("--human-column", action="append", metavar="[METRIC=]FIELD",
                   help="people's scores or labels in this field: report the judge's agreement with them "
                        "(Spearman, Kendall tau, Pearson; or Cohen's kappa and accuracy) (repeatable)")
    s.add_argument("--out", help="write the JSON report (aggregates and per-example scores) here")
    s.add_argument("--html", help="write an HTML report with a histogram per score here")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
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
