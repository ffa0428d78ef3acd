"""Command-line scorer: ``textgen-metrics score FILE --metrics rouge``.

Reads CSV, JSONL, JSON, Parquet or a ``datasets`` folder, runs the chosen metrics over the rows
(the LLM-guided ones with ``--judge``), prints a summary table, and writes a JSON report with the
aggregate and per-example scores (``--out``) and an HTML report with a histogram per score
(``--html``). ``textgen-metrics compare A.jsonl B.jsonl --metrics bleu`` compares two systems'
outputs for the same rows with a paired test.
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


def compare_files(args):
    """``textgen-metrics compare A B``: each metric's paired test of system B against A."""
    from types import SimpleNamespace

    from .comparison import compare
    from .registry import get_metric
    from .scoring import columns_from_records

    names = [m.strip() for m in args.metrics.split(",") if m.strip()]
    rows_a = read_records(args.file_a, split=args.split)
    rows_b = read_records(args.file_b, split=args.split)
    if len(rows_a) != len(rows_b):
        raise ValueError(f"{args.file_b}: {len(rows_b)} rows, but {args.file_a} has {len(rows_a)}; "
                         "compare needs the two systems' outputs for the same rows")
    columns = _key_values(args.column, "--column")
    columns.update({k: v for k, v in (("predictions", args.prediction_column),
                                      ("references", args.reference_column)) if v})
    options = _key_values(args.option, "--option", dotted=True)
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ValueError(f"--option: {unknown[0]!r} is not among --metrics {names}")
    judge = _judge(args)
    results = []
    for name in names:
        spec = get_metric(name)
        # the shared inputs (references, ...) come from A's file; each system's predictions from its own
        inputs = columns_from_records(rows_a, spec, columns, args.file_a)
        only_predictions = SimpleNamespace(name=spec.name, columns={"predictions": spec.columns["predictions"]})
        predictions_b = columns_from_records(rows_b, only_predictions, columns, args.file_b)["predictions"]
        opts = dict(options.get(name, {}))
        if spec.judge:
            if judge is None:
                raise ValueError(f"--judge: {name} needs a judge; give --judge openai:MODEL or hf:MODEL")
            opts.setdefault("judge", judge)
        predictions_a = inputs.pop("predictions")
        results.append(compare(name, predictions_a, predictions_b, method=args.method,
                               n_resamples=args.n_resamples, seed=args.seed,
                               confidence_level=args.confidence_level, **inputs, **opts))
    print(f"{len(rows_a)} examples; A: {args.file_a}; B: {args.file_b}; {args.method}, "
          f"{results[0]['n_resamples']} {'resamples' if args.method == 'bootstrap' else 'trials'}, "
          f"seed {args.seed}")
    print(_compare_table(results))
    for r in results:
        if r.get("signature"):
            print(f"{r['metric']}: {r['signature']}")
    if args.out:
        _write(args.out, json.dumps(results, indent=2, ensure_ascii=False))
        print(f"report: {args.out}")
    return results


def _compare_table(results):
    level = f"{results[0]['confidence_level']:.0%}" if results else "95%"
    header = ["metric", "score", "A", "B", "B - A", f"{level} CI of B - A", "p-value"]
    rows = [header]
    for r in results:
        for key, s in r["scores"].items():
            if "p_value" not in s:
                rows.append([r["metric"], key, "-", "-", "-", "no example scored by both", "-"])
                continue
            ci = s["difference_ci"]
            rows.append([r["metric"], key, format_number(s["a"]), format_number(s["b"]),
                         format_number(s["difference"]),
                         f"[{format_number(ci[0])}, {format_number(ci[1])}]", format_number(s["p_value"])])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _add_compare_parser(sub):
    c = sub.add_parser("compare", help="compare two systems' outputs for the same rows with a paired test")
    c.add_argument("file_a", help="system A (the baseline): a .jsonl, .json, .csv, .tsv or .parquet file")
    c.add_argument("file_b", help="system B, the same rows in the same order")
    c.add_argument("--metrics", default="bleu", help=f"comma-separated, of: {', '.join(sorted(METRICS))}")
    c.add_argument("--method", choices=["bootstrap", "randomization"], default="bootstrap",
                   help="paired bootstrap resampling (default) or approximate randomization")
    c.add_argument("--n-resamples", type=int, default=None,
                   help="resamples (bootstrap, default 1000) or trials (randomization, default 10000)")
    c.add_argument("--seed", type=int, default=12345, help="the random seed (default 12345, as sacrebleu)")
    c.add_argument("--confidence-level", type=float, default=0.95, help="of the intervals (default 0.95)")
    c.add_argument("--column", action="append", metavar="INPUT=FIELD",
                   help="the field holding an input, e.g. references=refs (repeatable)")
    c.add_argument("--prediction-column", help="the field with the predictions (default: prediction)")
    c.add_argument("--reference-column", help="the field with the references (default: references)")
    c.add_argument("--split", help="the split of a datasets folder with several")
    c.add_argument("--option", action="append", metavar="METRIC.NAME=VALUE",
                   help="a metric option, e.g. bleu.tokenizer=zh (repeatable)")
    c.add_argument("--judge", help="the judge of the LLM-guided metrics (give it a cache to reuse earlier runs' "
                                   "answers: --judge-option cache=true)")
    c.add_argument("--judge-url", help="the OpenAI-compatible server (default: OPENAI_BASE_URL)")
    c.add_argument("--judge-option", action="append", metavar="NAME=VALUE", help="a judge option (repeatable)")
    c.add_argument("--out", help="write the results as JSON here")
    return c


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
    _add_compare_parser(sub)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        (compare_files if args.command == "compare" else score)(args)
    except (ValueError, TypeError, OSError) as e:
        print(f"textgen-metrics: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
