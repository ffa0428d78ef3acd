"""The help of every metric's options, generated from its ``Options`` (issue #37).

A metric's ``Options`` dataclass (:class:`~textgen_metrics.metric.Options`) is the one source of
the help of its options: each field's kind, default and ``doc``. This module writes that help
for each place a user reads it:

- :func:`arguments_text`: the ``Args:`` block of an evaluate script's ``_KWARGS_DESCRIPTION``
  (``metrics/<name>/<name>.py``: ``_KWARGS_DESCRIPTION = ... + arguments_text("rouge") + ...``);
- :func:`card_markdown`: the options of a metric card (``metrics/<name>/README.md``), between
  :data:`START` and :data:`END`; ``python -m textgen_metrics.option_docs --write`` rewrites every
  card's section, ``--check`` writes nothing and exits 1 naming the cards that differ;
- :func:`cli_text`: what ``textgen-metrics options rouge`` prints (:func:`add_options_parser`
  adds that subcommand).

tests/test_option_docs.py holds the scripts and the cards equal to what this module writes.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .judges import BACKENDS
from .metric import Metric

__all__ = ["OptionDoc", "option_lines", "front_end_lines", "arguments_text", "card_markdown", "cli_text",
           "add_options_parser", "show_options", "card_section", "marked_section", "update_cards", "rewrite_card",
           "START", "END", "main"]

START = ("<!-- options: generated from the metric's Options by `python -m textgen_metrics.option_docs --write`; "
         "do not edit by hand -->")
END = "<!-- /options -->"

_WIDTH = 100  # the lines of the scripts' Args block and of the command line's text

# what each input column is, wherever a metric takes it (the metric's kind of the column comes beside it)
_COLUMN_DOCS = {
    "predictions": "the generated texts, one per example",
    "references": "the reference text of each example",
    "queries": "the query (question, instruction) of each example",
    "contexts": "the contexts (retrieved passages) of each example",
    "sources": "the source text each prediction was written from",
    "baselines": "the answers the predictions are compared with, one per example",
}
# a column that takes a text or a list of texts per example (hf.features_for's text_or_list)
_SEVERAL = " (the number may differ between examples), per example"
# the column kinds (hf.features_for) as evaluate's users write them
_COLUMN_KINDS = {
    "text": "list of str",
    "text_or_list": "list of str, or list of list of str",
    "list": "list of list of str",
}


class OptionDoc(NamedTuple):
    """One option's help: its name, kind (``metric.OPTION_KINDS``), default as JSON text and doc."""

    name: str
    kind: str
    default: str
    doc: str


def _spec(metric: str | type[Metric]) -> type[Metric]:
    if isinstance(metric, str):
        from .registry import get_metric

        return get_metric(metric)
    return metric


def _default_text(value: Any) -> str:
    """The default as JSON text (a tuple is a list); ``repr`` for a value JSON cannot write."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _doc(field: dataclasses.Field[Any]) -> OptionDoc:
    return OptionDoc(field.name, field.metadata.get("kind", "json"), _default_text(field.default),
                     " ".join(str(field.metadata.get("doc", "")).split()))


def option_lines(spec: str | type[Metric]) -> list[OptionDoc]:
    """The options a user sets (the command line's ``--option``, the Space's Options box), in
    ``spec.option_fields()`` order: not the arguments the front ends set themselves."""
    return [_doc(f) for f in _spec(spec).option_fields() if not f.metadata.get("front_end")]


def front_end_lines(spec: str | type[Metric]) -> list[OptionDoc]:
    """The arguments the front ends set themselves (``use_aggregator``, ``judge``, ``progress``...):
    keyword arguments of the library function and of evaluate's ``compute``, not ``--option``s."""
    return [_doc(f) for f in _spec(spec).option_fields() if f.metadata.get("front_end")]


def _all_lines(spec: type[Metric]) -> list[OptionDoc]:
    return [_doc(f) for f in spec.option_fields()]


def _wrapped(text: str, indent: str) -> str:
    return textwrap.fill(text, width=_WIDTH, initial_indent=indent, subsequent_indent=indent + "    ",
                         break_long_words=False, break_on_hyphens=False)


def _column_doc(column: str, kind: str) -> str:
    if kind == "text_or_list":
        return "one reference, or several" + _SEVERAL if column == "references" else f"one text, or several{_SEVERAL}"
    return _COLUMN_DOCS.get(column, "one per example")


def _sentence(doc: str) -> str:
    return doc if not doc or doc.endswith((".", "?", "!")) else doc + "."


def arguments_text(name: str | type[Metric], indent: str = "    ") -> str:
    """The ``Args:`` block of the evaluate script of ``name``: the inputs (the metric's columns,
    then its optional ones, each with its kind), then every keyword argument of ``compute`` from
    ``Options`` (``name (kind, default X): doc``), one entry per argument, wrapped at 100
    characters; it ends with a newline, so that the script's ``Returns:`` can follow."""
    spec = _spec(name)
    lines = ["Args:"]
    for column, kind in spec.columns.items():
        lines.append(_wrapped(f"{column} ({_COLUMN_KINDS.get(kind, kind)}): "
                              f"{_sentence(_column_doc(column, kind))}", indent))
    for column, kind in spec.optional_columns.items():
        lines.append(_wrapped(f"{column} ({_COLUMN_KINDS.get(kind, kind)}, optional): "
                              f"{_sentence(_column_doc(column, kind))} A keyword argument of "
                              "compute (not an evaluate feature, so not for add_batch).", indent))
    for o in _all_lines(spec):
        lines.append(_wrapped(f"{o.name} ({o.kind}, default {o.default})" + (f": {_sentence(o.doc)}" if o.doc else ""),
                              indent))
    return "\n".join(lines) + "\n"


def _markdown_text(text: str) -> str:
    """A doc as Markdown shows it: ``<`` and ``*`` escaped (``<type>_ci``, ``k**w``)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("*", "\\*")


def _markdown_item(o: OptionDoc) -> str:
    item = f"- **`{o.name}`** ({o.kind}, default `{o.default}`)" + (
        f": {_markdown_text(_sentence(o.doc))}" if o.doc else "")
    wrapped = textwrap.fill(item, width=_WIDTH, subsequent_indent="  ", break_long_words=False,
                            break_on_hyphens=False)
    # a continued line must not read as a list item or a heading of its own
    if any(re.match(r"  (?:[-+*#>]|\d+[.)])(?: |$)", line) for line in wrapped.splitlines()[1:]):
        return item
    return wrapped


def card_markdown(name: str | type[Metric], front_end: bool = True) -> str:
    """The options of the card of ``name`` in Markdown: a list of the options a user sets (each
    with its kind, its default as JSON and its help), then (with ``front_end``) the arguments
    the front ends set themselves. No markers, no surrounding blank lines."""
    spec = _spec(name)
    out = []
    options = option_lines(spec)
    if options:
        out += [textwrap.fill(
            f"**Options**: keyword arguments of `compute` and of `textgen_metrics.{spec.name}`; on the command line "
            f"`--option {spec.name}.NAME=VALUE` (`textgen-metrics options {spec.name}` lists them); in the Space, "
            "the Options box, as JSON.", width=_WIDTH, break_long_words=False, break_on_hyphens=False), ""]
        out += [_markdown_item(o) for o in options]
    others = front_end_lines(spec) if front_end else []
    if others:
        if out:
            out.append("")
        out += [textwrap.fill("**Arguments of `compute` and of the library function only** (the command line and "
                              "the Space set these themselves):", width=_WIDTH, break_long_words=False,
                              break_on_hyphens=False), ""]
        out += [_markdown_item(o) for o in others]
    return "\n".join(out)


def cli_text(name: str | type[Metric]) -> str:
    """What ``textgen-metrics options NAME`` prints for one metric: its inputs, then each option
    a user sets (``--option NAME.OPTION=VALUE``) with its kind, default and help."""
    from .registry import column_fields

    spec = _spec(name)
    inputs = [f"{c} ({k}; field {' or '.join(column_fields(c))})" for c, k in spec.columns.items()]
    inputs += [f"{c} ({k}, optional; field {' or '.join(column_fields(c))})" for c, k in spec.optional_columns.items()]
    lines = [f"{spec.name}", _wrapped("inputs: " + ", ".join(inputs), "  ")]
    options = option_lines(spec)
    if not options:
        lines.append("  options: none")
    else:
        lines.append(f"  options (--option {spec.name}.NAME=VALUE):")
        for o in options:
            lines.append(f"    {o.name} ({o.kind}, default {o.default})")
            if o.doc:
                lines.append(textwrap.fill(_sentence(o.doc), width=_WIDTH, initial_indent=" " * 8,
                                           subsequent_indent=" " * 8, break_long_words=False,
                                           break_on_hyphens=False))
    return "\n".join(lines)


def judge_text(backend: str) -> str:
    """What ``textgen-metrics options --judge BACKEND`` prints: each option of the backend's
    ``Options`` declaration (``--judge-option NAME=VALUE``) with its kind, default and help."""
    from .judges import judge_class

    found = judge_class(backend)
    if found is None:
        raise ValueError(f"--judge: unknown backend {backend!r}")
    lines = [f"judge {backend} (--judge-option NAME=VALUE):"]
    for o in map(_doc, dataclasses.fields(found.Options)):
        lines.append(_wrapped(f"{o.name} ({o.kind}, default {o.default}): {o.doc}", "  "))
    return "\n".join(lines)


_JUDGE_BACKENDS = [*BACKENDS, "callable"]  # the backends of judge strings, and a function
_KINDS_TEXT = ("kinds: bool true/false, yes/no, on/off, 1/0; int; float; number (an int or a float); str; "
               "list (a JSON list, or names separated by commas); floats (a JSON list of numbers, or numbers "
               "separated by commas); json (a JSON value, else the text)")


# -- the command line --------------------------------------------------------------------------------
def _metric_name(text: str) -> str:
    """An argparse ``type``: a registered metric's name, else an error naming the argument."""
    from .registry import METRICS

    if text not in METRICS:
        raise argparse.ArgumentTypeError(f"unknown metric {text!r}; available: {', '.join(sorted(METRICS))}")
    return text


def show_options(args: argparse.Namespace) -> int:
    """``textgen-metrics options [METRIC ...]``: the options of the metrics named (every one when
    none is); exit status 0."""
    from .registry import METRICS

    if args.judge:
        print("\n\n".join(judge_text(b) for b in args.judge))
    names = list(args.metric or ([] if args.judge else METRICS))
    if names:
        print("\n\n".join(cli_text(n) for n in names))
    print("\n" + textwrap.fill(_KINDS_TEXT, width=_WIDTH, break_long_words=False, break_on_hyphens=False))
    return 0


def add_options_parser(sub: Any) -> None:
    """Add ``options`` to the command line's subparsers: ``textgen-metrics options [METRIC ...]``."""
    from .cli_args import common_options

    o = sub.add_parser("options", parents=[common_options()],
                       help="the options of each metric (--option METRIC.NAME=VALUE), with kinds, defaults and help",
                       description="Print each metric's inputs and the options it takes (--option METRIC.NAME=VALUE "
                                   "in score, compare and meta-eval), with their kinds, defaults and help: every "
                                   "metric when none is named.")
    o.add_argument("metric", nargs="*", type=_metric_name, metavar="METRIC",
                   help="a metric's name (default: every metric)")
    o.add_argument("--judge", action="append", metavar="BACKEND", choices=_JUDGE_BACKENDS,
                   help=f"a judge backend's options instead (--judge-option NAME=VALUE; repeatable): "
                        f"{', '.join(_JUDGE_BACKENDS)}")
    o.set_defaults(run=show_options)


# -- the cards ---------------------------------------------------------------------------------------
def card_section(name: str | type[Metric]) -> str:
    """The card's generated section, with its markers (each on a line of its own, a blank line
    between them and the Markdown)."""
    return f"{START}\n\n{card_markdown(name)}\n\n{END}"


def marked_section(text: str) -> str | None:
    """What a card holds between the markers (without them or the blank lines around), or None."""
    if text.count(START) != 1 or text.count(END) != 1:
        return None
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n")


def _with_section(text: str, section: str, path: str) -> str:
    if START not in text or END not in text:
        raise ValueError(f"{path}: no options section (the markers {START} and {END}); add them where the "
                         "options belong")
    head, rest = text.split(START, 1)
    return head + section + rest.split(END, 1)[1]


def update_cards(root: str = ".", check: bool = False) -> list[str]:
    """Write (with ``check``, only compare) the options section of every registered metric's
    card under ``root/metrics``; the cards that were (or would be) changed."""
    from .registry import METRICS

    changed = []
    for name in METRICS:
        path = os.path.join(root, "metrics", name, "README.md")
        if not os.path.isfile(path):
            continue
        if rewrite_card(path, functools.partial(_with_section, section=card_section(name), path=path), check):
            changed.append(name)
    return changed


def rewrite_card(path: str, edit: Callable[[str], str], check: bool = False) -> bool:
    """Whether ``edit`` changes the card at ``path``; the card written with it unless ``check``
    (the generated sections of every card: the options here, the agreement with people by
    tools/cards.py)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = edit(text)
    if new != text and not check:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    return new != text


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m textgen_metrics.option_docs",
                                description="Write the options section of every metric card from the metrics' Options.")
    p.add_argument("--root", default=".", help="the repository (the folder holding metrics/)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite every card's options section")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 naming the cards that differ")
    args = p.parse_args(argv)
    changed = update_cards(args.root, check=args.check)
    verb = "differ from their metric's Options" if args.check else "updated"
    print(f"{len(changed)} card(s) {verb}" + (f": {', '.join(changed)}" if changed else ""))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
