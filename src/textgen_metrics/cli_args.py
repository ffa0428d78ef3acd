"""The command line's shared part: exit statuses, the usage error, the options every subcommand
takes, and the :class:`~textgen_metrics.run.Run` of a subcommand's flags (``--metrics``,
``--column``, ``--option``, ``--judge``...), which ``score``, ``compare``, ``meta-eval`` and
``audit`` all build with :func:`build_run` (each subcommand's module imports this one, never
the command line's main module)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .run import CLI_WORDS, Run, RunError

__all__ = ["EXIT_OK", "EXIT_UNSCORED", "EXIT_USAGE", "UsageError", "build_run", "common_options", "add_run_flags",
           "names", "HumanColumn", "add_human_column", "human_columns", "input_fields", "write"]

EXIT_OK, EXIT_UNSCORED, EXIT_USAGE = 0, 1, 2


class UsageError(ValueError):
    """A mistake in the command line (exit status 2)."""


# -- the run of a subcommand's flags ------------------------------------------------------------
def add_run_flags(parser: argparse.ArgumentParser, judge_help: str, split_help: str) -> None:
    """The flags of a :class:`~textgen_metrics.run.Run` but ``--metrics`` (each subcommand says which
    metrics it takes: a default, one, or none), alike in score, compare, meta-eval and audit, which
    read them with :func:`build_run`: the columns, the split, the metrics' options and the judge.
    ``judge_help``, ``split_help``: what the judge and the split are there. ``--judge-option``'s
    names and kinds are the backend's ``Options`` declaration (``textgen-metrics options --judge
    BACKEND``), as ``--option``'s are the metric's."""
    parser.add_argument("--column", action="append", metavar="INPUT=FIELD",
                        help="the field holding an input, e.g. contexts=retrieved (repeatable; default: the input's "
                             "name or its singular: predictions or prediction, references or reference, queries or "
                             "query, contexts or context, sources or source, baselines or baseline)")
    parser.add_argument("--prediction-column", help="the field with the predictions (default: predictions or "
                                                    "prediction)")
    parser.add_argument("--reference-column", help="the field with the references (default: references or "
                                                   "reference)")
    parser.add_argument("--split", help=split_help)
    parser.add_argument("--option", action="append", metavar="METRIC.NAME=VALUE",
                        help="a metric option, parsed by its type: rouge.use_stemmer=true (true/false, yes/no, "
                             "on/off, 1/0), bleu.max_order=2, rouge.rouge_types=rouge1,rougeL (repeatable; "
                             "textgen-metrics options METRIC lists a metric's)")
    parser.add_argument("--judge", help=judge_help)
    parser.add_argument("--judge-url", help="the OpenAI-compatible server (default: OPENAI_BASE_URL)")
    parser.add_argument("--judge-option", action="append", metavar="NAME=VALUE",
                        help="a judge option, e.g. concurrency=16, cache=true (repeatable; textgen-metrics options "
                             "--judge BACKEND lists a backend's)")


# -- --human-column: one grammar for score, meta-eval and audit --------------------------------
_HUMAN_GRAMMAR = "[METRIC=]FIELD[,FIELD...]"


@dataclass(frozen=True)
class HumanColumn:
    """One ``--human-column`` item: the fields of people's scores or labels, and the metric they
    are for (None: every metric the subcommand compares)."""

    metric: str | None
    fields: tuple[str, ...]


def add_human_column(parser: argparse.ArgumentParser, what: str) -> None:
    """``--human-column [METRIC=]FIELD[,FIELD...]`` (repeatable), alike in score, meta-eval and
    audit, read with :func:`human_columns`; ``what``: what the subcommand does with the fields
    and which parts of the grammar it takes."""
    parser.add_argument("--human-column", action="append", metavar=_HUMAN_GRAMMAR,
                        help=f"{what} (repeatable)")


def add_allow_empty(parser: argparse.ArgumentParser) -> None:
    """``--allow-empty``, alike in score, meta-eval and audit: a blank text cell of a file read as
    an empty text instead of the run's error naming its line and column."""
    parser.add_argument("--allow-empty", action="store_true",
                        help="score an empty or whitespace-only text cell of a file as an empty text (default: an "
                             "error naming the file's line and the column, exit 2: a blank cell usually means "
                             "missing data)")


def human_columns(items: list[str] | None, command: str, *, per_metric: bool = False,
                  at_most: int | None = None) -> list[HumanColumn]:
    """The ``--human-column`` items, each ``[METRIC=]FIELD[,FIELD...]``, read once; ``command``
    refuses, naming the flag, what it cannot use: ``METRIC=`` unless ``per_metric`` (score pairs a
    field with one metric; meta-eval and audit compare every metric with every field), and more
    than ``at_most`` fields in all (audit reads one) or per item (score: one field a metric)."""
    out: list[HumanColumn] = []
    for item in items or []:
        head, sep, rest = item.partition("=")
        metric = head.strip() if sep else None
        fields = tuple(names(rest if sep else item))
        if not fields or metric == "":
            raise UsageError(f"--human-column: expected {_HUMAN_GRAMMAR}, got {item!r}")
        if metric is not None and not per_metric:
            raise UsageError(f"--human-column: {command} compares every metric with the human column; "
                             f"{item!r} names a metric (METRIC=FIELD is score's): give FIELD")
        if per_metric and len(fields) > 1:
            raise UsageError(f"--human-column: {command} compares a metric with one field; {item!r} names "
                             f"{len(fields)}: give [METRIC=]FIELD once per metric")
        out.append(HumanColumn(metric, fields))
    if at_most is not None and sum(len(c.fields) for c in out) > at_most:
        raise UsageError(f"--human-column: {command} takes {at_most} human column; got "
                         f"{', '.join(f for c in out for f in c.fields)}")
    return out


def _split_item(item: str, flag: str, want: str) -> tuple[str, str]:
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"{flag}: expected {want}, got {item!r}")
    return key.strip(), raw


def _metric_options(items: list[str] | None) -> dict[str, dict[str, str]]:
    """``--option METRIC.NAME=VALUE`` items as ``{metric: {name: text}}`` (the run parses each text
    by the option's kind)."""
    out: dict[str, dict[str, str]] = {}
    for item in items or []:
        key, raw = _split_item(item, "--option", "METRIC.NAME=VALUE")
        metric, dot, name = key.partition(".")
        if not dot or not name:
            raise UsageError(f"--option: expected METRIC.NAME=VALUE, got {item!r}")
        out.setdefault(metric, {})[name] = raw
    return out


def _judge_options(args: argparse.Namespace) -> dict[str, str] | None:
    """``--judge-option NAME=VALUE`` items and ``--judge-url`` as ``{name: text}``; None without
    ``--judge``."""
    if not args.judge:
        if args.judge_url or args.judge_option:
            raise UsageError("--judge: give the judge (e.g. openai:gpt-4o-mini) that the options are for")
        return None
    out = {}
    for item in args.judge_option or []:
        key, raw = _split_item(item, "--judge-option", "NAME=VALUE")
        out[key] = raw
    if args.judge_url:
        out["base_url"] = args.judge_url
    return out


_JUDGE_HINT = ("give --judge openai:MODEL (server from --judge-url or OPENAI_BASE_URL, key from OPENAI_API_KEY), "
               "--judge hf:LOCAL_MODEL_PATH, or another of --help's backends (azure:, anthropic:, gemini:, "
               "tiny:smollm2 to check the pipeline offline)")


def build_run(args: argparse.Namespace, metrics: list[str] | None = None, resolve: bool = False) -> Run:
    """The :class:`~textgen_metrics.run.Run` of a subcommand's flags (``--metrics``, ``--column``
    and its shorthands, ``--option``, ``--judge``, ``--judge-url``, ``--judge-option``), checked
    once; every value typed parsed by its option's kind."""
    judge_options = _judge_options(args)
    try:
        return Run.build(metrics if metrics is not None else names(args.metrics), input_fields(args),
                         _metric_options(args.option), args.judge or None, judge_options, words=CLI_WORDS,
                         texts=True, resolve=resolve)
    except RunError as e:
        if e.argument == "judge":
            raise UsageError(f"{e}; {_JUDGE_HINT}") from None
        raise


def _columns(items: list[str] | None) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, raw = _split_item(item, "--column", "INPUT=FIELD")
        if not raw:
            raise UsageError(f"--column {key}: give the field name after '='")
        out[key] = raw
    return out


def input_fields(args: argparse.Namespace) -> dict[str, str]:
    """``{input: field}`` from ``--column`` and the ``--prediction-column``/``--reference-column``
    shorthands (score and compare take the same)."""
    columns = _columns(args.column)
    columns.update({k: v for k, v in (("predictions", args.prediction_column),
                                      ("references", args.reference_column)) if v})
    return columns


def write(path: str, text: str) -> None:
    """Write a report, the credentials of any URL in it masked (``http://***@host/v1``)."""
    from .judges.redaction import mask_url_credentials

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(mask_url_credentials(text))


def write_outputs(result: Any, json_path: str | None, html_path: str | None = None,
                  html: Callable[[Any], str] | None = None, html_label: str = "html report") -> None:
    """A subcommand's ``--json`` file and, with ``html``, its ``--html`` page, each said once written."""
    if json_path:
        write(json_path, json.dumps(result, indent=2, ensure_ascii=False))
        print(f"json: {json_path}")
    if html_path and html is not None:
        write(html_path, html(result))
        print(f"{html_label}: {html_path}")


def common_options() -> argparse.ArgumentParser:
    """The options every subcommand takes (pass as ``parents=[common_options()]``)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--debug", action="store_true", help="print the traceback of an error")
    return p


def names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]
