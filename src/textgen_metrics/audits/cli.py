"""The ``audit`` subcommand: ``textgen-metrics audit SOURCE --metrics NAME --judge ...``
(docs/audit.md). :func:`add_audit_parser` builds its parser on the command line's subparsers
(``parents=[common_options()]``, ``run=`` the function that returns the exit status), reading
metric options, judge options and columns with the ``score`` command's own helpers.

Exit status: 0 when the audit ran (whatever it found: a flagged probe is a finding, not a
failure), 2 for a usage error; a judge that cannot be reached stops with 1, as ``score``.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_audit_parser", "audit_command"]


def _probes(text: str | None) -> list[str] | None:
    return [p.strip() for p in text.split(",") if p.strip()] if text else None


def audit_command(args: argparse.Namespace) -> int:
    """Run ``audit``: print the judge card's text, write the JSON and HTML; the exit status."""
    from ..cli_args import EXIT_OK, UsageError, build_run, human_columns, write_outputs
    from ..cost import format_estimate
    from .plan import PROBES, AuditPlan
    from .report import format_summary, judge_card_html
    from .run import audit

    names = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    if len(names) != 1:
        raise UsageError("--metrics: name one LLM-guided metric to audit the judge on (e.g. pairwise_preference)")
    if not args.judge:
        raise UsageError("--judge: give the judge to audit (e.g. openai:gpt-4o-mini; server from --judge-url)")
    run = build_run(args, names)  # the flags checked and typed once, as score's
    humans = [f for c in human_columns(args.human_column, "audit", at_most=1) for f in c.fields]
    probes = _probes(args.probe) or list(PROBES)
    if not 0 <= args.epsilon < 1:
        raise UsageError(f"--epsilon: {args.epsilon} must be in [0, 1) (0.2 expert annotators, 0.15 skilled, 0.1 "
                         "crowd workers)")
    if args.n_resamples < 0:
        raise UsageError(f"--n-resamples: {args.n_resamples} must be 0 (no intervals) or more")
    plan = AuditPlan(metrics=names[0], source=args.source, split=args.split, allow_empty=args.allow_empty,
                     columns=run.columns,
                     options=run.options, probes=probes, repeats=args.repeats, threshold=args.threshold,
                     human_column=humans[0] if humans else None, missing=args.missing,
                     annotator_columns=args.annotator_column, epsilon=args.epsilon,
                     confidence_level=args.confidence_level, n_resamples=args.n_resamples, seed=args.seed)
    result = audit(plan, judge=run.judge, judge_options=run.judge_options, dry_run=args.dry_run)
    if args.dry_run:
        print(format_estimate(result))
    else:
        print(format_summary(result))
    write_outputs(result, args.json, None if args.dry_run else args.html, judge_card_html, "html judge card")
    return EXIT_OK


def add_audit_parser(sub: Any) -> None:
    """Add ``audit`` to the command line's subparsers."""
    from ..cli_args import add_allow_empty, add_human_column, add_run_flags, common_options
    from .plan import ALL_PROBES, PROBES, AuditPlan

    plan = AuditPlan()  # the flags' defaults are the plan's

    a = sub.add_parser("audit", parents=[common_options()],
                       help="audit a judge before trusting it: position, verbosity, repeat variance, calibration",
                       description="Audit an LLM judge on one LLM-guided metric over the rows of SOURCE: does it "
                                   "prefer the answer shown first, the longer text, does it change its verdict when "
                                   "asked again, is it calibrated against people's labels? Each finding comes with "
                                   "its interval; the probes' requests go through the judge's cache, budgets and "
                                   "batch mode like any run.")
    a.add_argument("source", help="a .jsonl, .json, .csv, .tsv or .parquet file, a datasets folder, or a bundled "
                                  "set's name (meta-eval --list), e.g. llmbar_natural")
    a.add_argument("--metrics", required=True, help="the LLM-guided metric to audit the judge on, e.g. "
                                                    "pairwise_preference (one)")
    add_run_flags(a, "the judge: openai:MODEL, hf:MODEL_OR_PATH, ... (as score takes it)",
                  split_help="a bundled set's split or a datasets folder's")
    a.add_argument("--probe", metavar=",".join(PROBES),
                   help=f"the probes to run, comma-separated (default: all of {', '.join(PROBES)}; "
                        f"{ALL_PROBES[-1]} runs whenever --annotator-column is given)")
    a.add_argument("--repeats", type=int, default=plan.repeats, metavar="K",
                   help=f"the repeat probe asks every request K times in all, the plain run's answer first (default "
                        f"{plan.repeats})")
    a.add_argument("--threshold", type=float, default=plan.threshold, metavar="T",
                   help=f"the verdict cut on the score mapped to [0, 1] (default {plan.threshold})")
    add_human_column(a, "people's labels, one FIELD: gold 'a'/'b' for a comparison (position accuracy, "
                        "calibration), 0/1 otherwise (calibration)")
    a.add_argument("--annotator-column", action="append", metavar="NAME",
                   help="one annotator's field, where several people rated the same rows (repeatable, at least 2; "
                        "empty where one did not rate a row): the alt-test, can the judge stand in for an annotator? "
                        "Scores on the metric's scale; for a comparison 'a', 'b' or 'tie'")
    a.add_argument("--epsilon", type=float, default=plan.epsilon, metavar="E",
                   help=f"the alt-test's allowance for the judge's lower cost (default {plan.epsilon}, expert "
                        "annotators; 0.15 skilled, 0.1 crowd workers)")
    a.add_argument("--missing", choices=["omit", "as_verdict"], default=plan.missing,
                   help="the position audit's unusable verdicts: left out (omit, default) or a verdict of their own "
                        "(as_verdict, as LLMBar's statistics.json)")
    a.add_argument("--dry-run", action="store_true",
                   help="send no request: print what every run of the audit would cost (--json writes it)")
    add_allow_empty(a)
    a.add_argument("--confidence-level", type=float, default=plan.confidence_level,
                   help=f"of the intervals (default {plan.confidence_level})")
    a.add_argument("--n-resamples", type=int, default=plan.n_resamples,
                   help=f"bootstrap resamples (default {plan.n_resamples}; 0: no intervals)")
    a.add_argument("--seed", type=int, default=plan.seed,
                   help=f"the random seed of the resamples (default {plan.seed})")
    a.add_argument("--json", metavar="OUT", help="write the audit as JSON here")
    a.add_argument("--html", metavar="OUT", help="write the judge card (HTML with charts) here")
    a.set_defaults(run=audit_command)
