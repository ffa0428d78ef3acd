"""Command-line scorer: ``textgen-metrics score FILE --metrics rouge``.

Reads CSV, JSONL, JSON, Parquet or a ``datasets`` folder, runs the chosen metrics over the rows
(the LLM-guided ones with ``--judge``), prints a summary table, and writes a JSON report with the
aggregate and per-example scores (``--out``) and an HTML report with a histogram per score
(``--html``). ``textgen-metrics compare A.jsonl B.jsonl --metrics bleu`` compares two systems'
outputs for the same rows with a paired test.

Exit status: 0 when every example got every score; 1 when some example got no score (a judge
whose answers stayed unusable: the summary says how many and shows the first messages;
``--allow-errors`` exits 0 anyway) or the run failed (a judge that cannot be reached); 2 for a
usage error (a bad flag, option, column or file). Errors print as one line; ``--debug`` adds the
traceback.

Subcommands: each one is an ``_add_<name>(subparsers)`` function in ``SUBCOMMANDS`` that builds
its parser with ``parents=[common_options()]`` and sets ``run=`` to a function ``args -> exit
status``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from ._version import __version__
from .cli_args import (
    EXIT_OK,
    EXIT_UNSCORED,
    EXIT_USAGE,
    UsageError,
    add_allow_empty,
    add_human_column,
    add_run_flags,
    build_run,
    common_options,
    human_columns,
    names,
    write,
    write_outputs,
)
from .meta.study import Study
from .numbers import format_number
from .registry import METRICS
from .run import Run
from .scoring import locate, read_records, read_table, score_records, unscored
from .significance import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, DEFAULT_TRIALS

__all__ = ["main", "build_parser", "build_run", "UsageError", "SUBCOMMANDS", "EXIT_OK", "EXIT_UNSCORED",
           "EXIT_USAGE"]

_SHOWN_ERRORS = 5  # unscored examples whose messages the summary prints


# -- output -------------------------------------------------------------------------------------
_WIDTH = 23  # the score column of the table (longer names push their value right)


def _table_rows(summary: dict[str, Any]) -> str:
    return "\n".join(f"{k:<{_WIDTH}}  {format_number(v)}" for k, v in summary.items())


def _progress(show: bool | None, names: list[str]) -> Callable[[str, int], Any] | None:
    """One bar per metric, named after it, counting examples (when stderr is a terminal, or
    when asked with --progress)."""
    if not (show if show is not None else sys.stderr.isatty()):
        return None
    from tqdm.auto import tqdm

    width = max(len(name) for name in names)

    @contextlib.contextmanager
    def bar(name: str, total: int) -> Iterator[Callable[[int], Any]]:
        with tqdm(total=total, unit="ex", desc=f"{name:<{width}}", file=sys.stderr, dynamic_ncols=True) as b:
            yield b.update

    return bar


def _one_line(error: BaseException) -> str:
    """The error's message on one line, the credentials of any URL in it masked (a judge URL
    given as ``http://user:password@host/v1``)."""
    from .judges.redaction import mask_url_credentials

    text = re.sub(r"\s*\n\s*", " ", mask_url_credentials(str(error))).strip()
    return text or type(error).__name__


def _error_line(error: BaseException) -> str:
    """The one line for an error that ended the run. An example's judge failure names the row as
    the summary of unscored rows does (from 1; the library's ``example`` index is from 0)."""
    from .llm.metrics import ExampleJudgeError

    if isinstance(error, ExampleJudgeError):
        return f"{error.metric}, row {error.index + 1}: {_one_line(Exception(error.reason))}"
    return _one_line(error)


# -- score --------------------------------------------------------------------------------------
def score(args: argparse.Namespace) -> int:
    """Run ``score``: print the table, write the reports; the exit status."""
    run = build_run(args)
    metric_names = list(run.metrics)
    humans = [f"{c.metric}={c.fields[0]}" if c.metric else c.fields[0]
              for c in human_columns(args.human_column, "score", per_metric=True)]
    rows, lines = read_table(args.file, split=args.split)  # messages name the file's own lines
    if humans:  # before any judge call: a wrong field name costs nothing
        from .human_agreement import check_human_columns

        check_human_columns(rows, humans, metric_names)
    if args.dry_run:
        return _dry_run(args, rows, run, lines)
    run = run.resolved()  # one judge (one cache, one connection pool) for every metric
    shown: list[str] = []

    def show(name: str, entry: Any) -> None:  # each metric's scores as soon as it is done
        if not shown:
            print(f"{len(rows)} examples from {args.file}")
            print(f"{'score':<{_WIDTH}}  value\n{'-' * _WIDTH}  -------", flush=True)
        shown.append(name)
        print(_table_rows(entry["summary"]), flush=True)

    from .llm.metrics import ExampleJudgeError

    try:
        report = score_records(rows, metric_names, run=run, progress=_progress(args.progress, metric_names),
                               source=args.file, on_result=show, lines=lines, allow_empty=args.allow_empty)
    except ExampleJudgeError as e:  # the library's example index as the file's line
        from .judges.base import JudgeError

        where = locate(args.file, lines, e.index) if 0 <= e.index < len(rows) else f"example {e.index}"
        raise JudgeError(f"{e.metric}, {where}: {_one_line(Exception(e.reason))}") from e
    for name, m in report["metrics"].items():
        agg = m["aggregate"]
        if "judge_usage" in agg:
            usage = ", ".join(f"{k} {v}" for k, v in agg["judge_usage"].items())
            print(f"{name}: judge {agg['judge_model']}: {usage}; {len(agg.get('errors') or [])} example(s) unscored")
    if humans:
        from .human_agreement import agreement_report, describe

        report["agreement"] = agreement_report(report, rows, humans)
        for name, a in report["agreement"].items():
            print(f"{name} vs {a['human_column']}: {describe(a)}")
    if args.out:
        write(args.out, json.dumps(report, indent=2, ensure_ascii=False))
        print(f"report: {args.out}")
    if args.html:
        from .report import report_html

        write(args.html, report_html(report))
        print(f"html report: {args.html}")
    missing = unscored(report)
    if not missing:
        return EXIT_OK
    counts: dict[str, int] = {}
    for m in missing:
        counts[m["metric"]] = counts.get(m["metric"], 0) + 1
    per_metric = ", ".join(f"{k}: {v}" for k, v in counts.items())
    err = sys.stderr
    n_rows = len({m["row"] for m in missing})
    print(f"textgen-metrics: {n_rows} of {report['examples']} example(s) got no score ({per_metric}); "
          "the first:", file=err)
    for m in missing[:_SHOWN_ERRORS]:
        print(f"  {m['metric']}, {locate(args.file, lines, m['row'] - 1)}: {_one_line(Exception(m['error']))}",
              file=err)
    if args.allow_errors:
        print("textgen-metrics: exit status 0 (--allow-errors)", file=err)
        return EXIT_OK
    print("textgen-metrics: exit status 1; pass --allow-errors to exit 0 with scores missing", file=err)
    return EXIT_UNSCORED


def _dry_run(args: argparse.Namespace, rows: list[dict[str, Any]], run: Run, lines: list[int]) -> int:
    """``score --dry-run``: the cost estimate of the LLM-guided metrics; no request is sent."""
    from .cost import estimate_cost, format_estimate

    judged = [spec.name for spec in run.specs() if spec.judge]
    if not judged:
        raise UsageError(f"--dry-run: none of {', '.join(run.metrics)} sends a judge request; nothing to estimate")
    inputs: dict[str, Any] = {}
    for given in run.inputs(rows, source=args.file, lines=lines, allow_empty=args.allow_empty, only=judged).values():
        inputs.update(given)
    estimate = estimate_cost(judged, judge=run.judge, judge_options=run.judge_options, options=run.options, **inputs)
    print(f"{len(rows)} examples from {args.file}")
    print(format_estimate(estimate))
    skipped = [n for n in run.metrics if n not in judged]
    if skipped:
        print(f"not estimated (no judge requests): {', '.join(skipped)}")
    if args.out:
        write(args.out, json.dumps(estimate, indent=2, ensure_ascii=False))
        print(f"report: {args.out}")
    return EXIT_OK


def compare_files(args: argparse.Namespace) -> int:
    """``textgen-metrics compare A B``: each metric's paired test of system B against A; which test
    gave the p-values and what the intervals are, and a note where a p-value and an interval seem
    to disagree (``comparison.disagreement``: why both can hold)."""
    from .comparison import compare, describe_interval, describe_test, disagreement

    run = build_run(args, resolve=True)
    rows_a = read_records(args.file_a, split=args.split)
    rows_b = read_records(args.file_b, split=args.split)
    if len(rows_a) != len(rows_b):
        raise ValueError(f"{args.file_b}: {len(rows_b)} rows, but {args.file_a} has {len(rows_a)}; "
                         "compare needs the two systems' outputs for the same rows")
    # the shared inputs (references, ...) come from A's file; each system's predictions from its own
    inputs_a = run.inputs(rows_a, source=args.file_a)
    inputs_b = run.inputs(rows_b, source=args.file_b, inputs=["predictions"])
    results = []
    for spec in run.specs():
        if "predictions" not in spec.columns:
            raise UsageError(f"--metrics: {spec.name} scores no predictions; compare compares two systems' predictions")
        inputs = dict(inputs_a[spec.name])
        predictions_a = inputs.pop("predictions")
        results.append(compare(spec.name, predictions_a, inputs_b[spec.name]["predictions"], method=args.method,
                               n_resamples=args.n_resamples, seed=args.seed, confidence_level=args.confidence_level,
                               **inputs, **run.metric_options(spec, run.judge)))
    print(f"{len(rows_a)} examples; A: {args.file_a}; B: {args.file_b}; {args.method}, "
          f"{results[0]['n_resamples']} {'resamples' if args.method == 'bootstrap' else 'trials'}, "
          f"seed {args.seed}")
    print(describe_test(results[0]))
    print(_compare_table(results))
    for r in results:
        print(describe_interval(r))
    notes = [note for r in results for key in r["scores"] if (note := disagreement(r, key))]
    for note in notes:
        print(note)
    for r in results:
        if r.get("signature"):
            print(f"{r['metric']}: {r['signature']}")
    if args.out:
        write(args.out, json.dumps(results, indent=2, ensure_ascii=False))
        print(f"report: {args.out}")
    return EXIT_OK


def _compare_table(results: list[dict[str, Any]]) -> str:
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
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _add_compare(sub: Any) -> None:
    c = sub.add_parser("compare", parents=[common_options()],
                       help="compare two systems' outputs for the same rows with a paired test")
    c.add_argument("file_a", help="system A (the baseline): a .jsonl, .json, .csv, .tsv or .parquet file")
    c.add_argument("file_b", help="system B, the same rows in the same order")
    c.add_argument("--metrics", default="bleu", help=f"comma-separated, of: {', '.join(sorted(METRICS))}")
    c.add_argument("--method", choices=["bootstrap", "randomization"], default="bootstrap",
                   help="paired bootstrap resampling (default) or approximate randomization")
    c.add_argument("--n-resamples", type=int, default=None,
                   help=f"resamples (bootstrap, default {DEFAULT_RESAMPLES}) or trials (randomization, "
                        f"default {DEFAULT_TRIALS})")
    c.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"the random seed (default {DEFAULT_SEED}, as sacrebleu)")
    c.add_argument("--confidence-level", type=float, default=DEFAULT_CONFIDENCE,
                   help=f"of the intervals (default {DEFAULT_CONFIDENCE})")
    add_run_flags(c, "the judge of the LLM-guided metrics (give it a cache to reuse earlier runs' answers: "
                     "--judge-option cache=true)", split_help="the split of a datasets folder with several")
    c.add_argument("--out", help="write the results as JSON here")
    c.set_defaults(run=compare_files)


def _add_score(sub: Any) -> None:
    s = sub.add_parser("score", parents=[common_options()],
                       help="score a CSV, JSONL, JSON, Parquet file or a datasets folder",
                       description="Score every row of a file with the chosen metrics.")
    s.add_argument("file", help="a .jsonl, .json, .csv, .tsv or .parquet file, or a datasets folder")
    s.add_argument("--metrics", default="rouge", help=f"comma-separated, of: {', '.join(sorted(METRICS))}")
    from .judges import BACKENDS

    add_run_flags(s, "the judge of the LLM-guided metrics: " + "; ".join(BACKENDS.values())
                  + " (openai: key from OPENAI_API_KEY, server from --judge-url or OPENAI_BASE_URL)",
                  split_help="the split of a datasets folder with several")
    add_human_column(s, "people's scores or labels in this field: report each judged metric's agreement with them "
                        "(Spearman, Kendall tau, Pearson; or Cohen's kappa and accuracy); METRIC=FIELD for one "
                        "metric's, one field a metric")
    s.add_argument("--out", help="write the JSON report (aggregates and per-example scores) here")
    s.add_argument("--html", help="write an HTML report with a histogram per score here")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar per metric (default: when stderr is a terminal)")
    s.add_argument("--dry-run", action="store_true",
                   help="send no request: print the requests, prompt and completion tokens and the price (live and "
                        "batch) that the LLM-guided metrics would cost (--out writes it as JSON)")
    s.add_argument("--allow-errors", action="store_true",
                   help="exit 0 even when some examples got no score (default: exit 1)")
    add_allow_empty(s)
    s.set_defaults(run=score)


# -- meta-eval ------------------------------------------------------------------------------------
def _list_sets() -> int:
    from .meta.data import bundled_sets, describe_set

    rows = [["set", "rows", "human columns", "default", "score columns", "licence"]]
    for name in bundled_sets():
        info = describe_set(name)
        default = f"{info.default_statistic}, {info.default_level}" + (
            f" by {info.default_group_by}" if info.default_level == "segment" else "")
        scores = ", ".join(info.score_columns[:3]) + (" ..." if len(info.score_columns) > 3 else "")
        rows.append([name, str(info.rows), ", ".join(info.human_columns), default, scores or "-", info.licence])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    print("\n".join(lines))
    return EXIT_OK


def meta_eval_command(args: argparse.Namespace) -> int:
    """``textgen-metrics meta-eval SOURCE``: how well each score agrees with people's."""
    if args.list:
        return _list_sets()
    if not args.source:
        raise UsageError("meta-eval: give SOURCE, a bundled set (--list lists them) or a .jsonl, .csv or .tsv file")
    metrics = names(args.metrics)
    if not metrics and (args.option or args.column or args.judge):
        raise UsageError("--metrics: name the metrics that --option, --column and --judge are for")
    # a dry run resolves no judge: the estimate needs neither its key nor its server
    run = build_run(args, metrics, resolve=not args.dry_run) if metrics else None
    if args.n_resamples < 0:
        raise UsageError(f"--n-resamples: {args.n_resamples} must be 0 (no intervals) or more")
    if args.n_permutations < 1:
        raise UsageError(f"--n-permutations: {args.n_permutations} must be 1 or more (spa's permutation count)")
    if args.dry_run and run is None:
        raise UsageError("--dry-run: name the LLM-guided metrics to estimate (--metrics)")
    from .meta.report import format_table, meta_eval_html
    from .meta.run import MetaArgumentError

    try:
        result = _meta_eval(args, metrics, run)
    except MetaArgumentError as e:  # the library names its argument; the command line, its flag
        raise UsageError(e.for_cli()) from None
    if args.dry_run:
        return _meta_eval_estimate(args, result)
    print(format_table(result))
    write_outputs(result, args.json, args.html, meta_eval_html)
    return EXIT_OK


def _study(args: argparse.Namespace, run: Run | None) -> Study:
    """The :class:`~textgen_metrics.meta.study.Study` the command line's flags declare (the
    metrics with the options ``run`` typed from ``--option``)."""
    def listed(items: list[str] | None) -> list[str]:
        return [x for item in items or [] for x in names(item)]

    return Study(args.source, metrics={m: run.options.get(m, {}) for m in run.metrics} if run is not None else {},
                 columns=run.columns if run is not None else {}, score_columns=args.score_column or [],
                 human_columns=[f for c in human_columns(args.human_column, "meta-eval") for f in c.fields] or None,
                 item_column=args.item_column, system_column=args.system_column, split=args.split,
                 level=args.level, group_by=args.group_by, statistics=listed(args.statistic) or None,
                 exclude_systems=listed(args.exclude_system), include_systems=listed(args.include_system))


def _meta_eval(args: argparse.Namespace, metrics: list[str], run: Run | None) -> dict[str, Any]:
    """``meta_eval`` of the study the command line's flags declare."""
    from .meta.run import meta_eval

    return meta_eval(_study(args, run), run=run, confidence_level=args.confidence_level,
                     n_resamples=args.n_resamples, n_permutations=args.n_permutations, seed=args.seed,
                     compare=not args.no_compare, dry_run=args.dry_run, allow_empty=args.allow_empty,
                     progress=_progress(args.progress, metrics) if metrics else None)


def _meta_eval_estimate(args: argparse.Namespace, estimate: dict[str, Any]) -> int:
    """``meta-eval --dry-run``: what the judged metrics would cost on the set's rows."""
    from .cost import format_estimate

    print(f"{estimate['rows']} rows from {estimate['source']}")
    print(format_estimate(estimate))
    if estimate["not_estimated"]:
        print(f"not estimated (no judge requests): {', '.join(estimate['not_estimated'])}")
    write_outputs(estimate, args.json)
    return EXIT_OK


def _add_meta_eval(sub: Any) -> None:
    from .meta.report import STATISTIC_TEXT

    m = sub.add_parser("meta-eval", parents=[common_options()],
                       help="how well each metric agrees with people's judgments, with intervals and ranks",
                       description="Meta-evaluate metrics against human judgments: a bundled set of public "
                                   "human judgments (--list) or your own file with human score columns.")
    m.add_argument("source", nargs="?", help="a bundled set's name (--list) or a .jsonl, .csv or .tsv file")
    m.add_argument("--list", action="store_true", help="list the bundled sets of human judgments and exit")
    m.add_argument("--metrics",
                   help=f"metrics to compute on the rows, comma-separated, of: {', '.join(sorted(METRICS))}")
    m.add_argument("--score-column", action="append", metavar="NAME",
                   help="a column of the source that already holds a metric's scores (repeatable)")
    add_human_column(m, "the column(s) of people's scores, every metric compared with each (a bundled set: its "
                        "own by default)")
    m.add_argument("--item-column", help="the column naming each row's item (source document, segment, prompt; "
                                         "default: item)")
    m.add_argument("--system-column", help="the column naming each row's system (default: system)")
    m.add_argument("--exclude-system", action="append", metavar="NAME[,NAME...]",
                   help="leave out this system's rows (repeatable)")
    m.add_argument("--include-system", action="append", metavar="NAME[,NAME...]",
                   help="keep a bundled set's system that is one of its references (the WMT sets' ref-A, ref-B), "
                        "which reference-based metrics leave out by default")
    m.add_argument("--level", choices=["segment", "system"], help="segment (rows) or system (each system's mean)")
    m.add_argument("--group-by", choices=["none", "item", "system"],
                   help="at segment level: pool all rows (none), per item then the mean (item: G-Eval's and "
                        "UniEval's summary level), or per system")
    m.add_argument("--statistic", action="append", metavar="NAME[,NAME...]",
                   help=f"of: {', '.join(STATISTIC_TEXT)} (default: the set's, else pearson,spearman,kendall)")
    add_run_flags(m, "the judge of the LLM-guided metrics, as score takes it",
                  split_help="a bundled set's split (frank: test, validation) or a datasets folder's")
    m.add_argument("--confidence-level", type=float, default=DEFAULT_CONFIDENCE,
                   help=f"of the intervals (default {DEFAULT_CONFIDENCE})")
    m.add_argument("--n-resamples", type=int, default=DEFAULT_RESAMPLES,
                   help=f"bootstrap resamples over items (default {DEFAULT_RESAMPLES}; 0: no intervals)")
    m.add_argument("--n-permutations", type=int, default=DEFAULT_RESAMPLES,
                   help=f"spa's permutation count, part of its value (default {DEFAULT_RESAMPLES}, WMT's)")
    m.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the random seed (default {DEFAULT_SEED})")
    m.add_argument("--dry-run", action="store_true",
                   help="send no request: print what the LLM-guided metrics would cost on the rows (--json writes it)")
    add_allow_empty(m)
    m.add_argument("--no-compare", action="store_true", help="skip the pairwise tests between metrics (and ranks)")
    m.add_argument("--json", help="write the result as JSON here")
    m.add_argument("--html", help="write an HTML report with a chart per statistic here")
    m.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar per metric (default: when stderr is a terminal)")
    m.set_defaults(run=meta_eval_command)


# the subcommands, each adding its parser to the subparsers
def _add_audit(sub: Any) -> None:
    from .audits.cli import add_audit_parser

    add_audit_parser(sub)


def _add_gate(sub: Any) -> None:
    from .gates.config import add_gate_parser

    add_gate_parser(sub)


def _add_options(sub: Any) -> None:
    from .option_docs import add_options_parser

    add_options_parser(sub)


SUBCOMMANDS: list[Callable[[Any], None]] = [_add_score, _add_compare, _add_meta_eval, _add_audit, _add_gate,
                                            _add_options]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="textgen-metrics", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"textgen-metrics {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return p


def _is_user_error(error: BaseException) -> bool:
    """A mistake in what the user gave (exit status 2): a ValueError (the library's bad input
    and options: ``InputError``, ``OptionError``, ``UsageError``...; their TypeError kinds are
    ValueErrors too) or a file that cannot be read. A judge's failure is not one, and neither
    is any other error (a bug: it prints its traceback)."""
    from .judges.base import JudgeError

    return isinstance(error, (ValueError, OSError)) and not isinstance(error, JudgeError)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status (0 done, 1 scores missing or run failed, 2 usage)."""
    args = build_parser().parse_args(argv)  # a usage error exits 2 here
    try:
        status: int = args.run(args)
        return status
    except KeyboardInterrupt:
        print("textgen-metrics: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # every error is one line; --debug shows where it came from
        from .judges.base import JudgeError

        expected = _is_user_error(e) or isinstance(e, JudgeError)
        if getattr(args, "debug", False) or not expected:  # a bug shows its traceback (URL credentials masked)
            from .judges.redaction import mask_url_credentials

            print(mask_url_credentials(traceback.format_exc()), end="", file=sys.stderr)
        if not expected:
            print("textgen-metrics: internal error (a bug; the traceback is above)", file=sys.stderr)
        print(f"textgen-metrics: error: {_error_line(e)}", file=sys.stderr)
        return EXIT_USAGE if _is_user_error(e) else EXIT_UNSCORED


if __name__ == "__main__":
    sys.exit(main())
