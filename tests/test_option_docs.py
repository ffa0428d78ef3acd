"""The help of every metric's options comes from its ``Options`` (textgen_metrics.option_docs):
each card's generated section, each evaluate script's ``Args:`` and ``textgen-metrics options``
say what ``Options`` says, and a doc changed in ``Options`` is caught."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import re
import shutil
import types

import evaluate
import pytest

from conftest import ROOT
from textgen_metrics import option_docs
from textgen_metrics.option_docs import add_options_parser, arguments_text, card_markdown, cli_text, option_lines
from textgen_metrics.registry import METRICS

NAMES = list(METRICS)


def _card(name):
    return (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")


def _parser():
    """The command line's parser with only the ``options`` subcommand (cli.py adds it to its own)."""
    p = argparse.ArgumentParser(prog="textgen-metrics")
    add_options_parser(p.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return p


def test_every_metric_has_a_card_and_a_script():
    for name in NAMES:
        assert (ROOT / "metrics" / name / "README.md").is_file(), name
        assert (ROOT / "metrics" / name / f"{name}.py").is_file(), name


def test_option_lines_are_the_options_a_user_sets_in_order():
    for name, spec in METRICS.items():
        lines = option_lines(name)
        assert [o.name for o in lines] == list(spec.option_kinds()), name
        assert [o.kind for o in lines] == list(spec.option_kinds().values()), name
        assert [o.doc for o in lines] == [" ".join(d.split()) for d in spec.option_help().values()], name
    rouge = {o.name: o for o in option_lines("rouge")}
    assert "use_aggregator" not in rouge  # set by the front ends, not an --option
    assert rouge["multi_ref"].default == '"best"' and rouge["rouge_types"].default == "null"
    assert {o.name: o.default for o in option_lines("g_eval")}["score_range"] == "[1, 5]"  # a tuple, as JSON


@pytest.mark.parametrize("name", NAMES)
def test_the_card_section_is_generated_from_options(name):
    text = _card(name)
    assert text.count(option_docs.START) == 1 and text.count(option_docs.END) == 1, (
        f"{name}: the card needs one options section (python -m textgen_metrics.option_docs --write)")
    assert option_docs.marked_section(text) == card_markdown(name), (
        f"{name}: the card's options differ from its Options; run python -m textgen_metrics.option_docs --write")
    # inside the card's Inputs, and every option a user sets is there
    section = text[text.index("### Inputs"):text.index("### Output Values")]
    assert option_docs.START in section and option_docs.END in section, name
    for o in option_lines(name):
        assert f"- **`{o.name}`** ({o.kind}, default `{o.default}`)" in section, (name, o.name)


def _named_arguments(description):
    """The argument names of an ``Args:`` block (``    name (...)``), up to ``Returns:``."""
    block = description[description.index("Args:\n"):description.index("\nReturns:")]
    return re.findall(r"^    (\w+) \(", block, re.M)


@pytest.mark.parametrize("name", NAMES)
def test_the_script_args_are_generated_from_options(name, repo_root):
    metric = evaluate.load(f"./metrics/{name}")
    text = metric.inputs_description
    assert arguments_text(name) in text, f"{name}: the script's Args are not arguments_text({name!r})"
    spec = METRICS[name]
    named = _named_arguments(text)
    assert len(named) == len(set(named)), (name, named)
    columns = [*spec.columns, *spec.optional_columns]
    assert named[:len(columns)] == columns, name  # the inputs first
    options = set(named[len(columns):])
    assert set(spec.option_kinds()) <= options, (name, set(spec.option_kinds()) - options)
    fields = {f.name for f in dataclasses.fields(spec.Options)}
    assert options <= fields, (name, options - fields)  # nothing Options lacks
    for o in option_lines(name):  # each with its kind and default
        assert f"    {o.name} ({o.kind}, default {o.default})" in text, (name, o.name)


def test_arguments_text_reads_as_the_scripts_did():
    text = arguments_text("rouge")
    assert text.startswith("Args:\n    predictions (list of str): ") and text.endswith("\n")
    assert "\n    references (list of str, or list of list of str): " in text
    assert all(len(line) <= 100 for line in text.splitlines())
    # a continued entry is indented under its name
    assert re.search(r"^    tokenizer \(str, default null\): .*\n        \S", text, re.M)
    optional = arguments_text("g_eval")
    assert "\n    sources (list of str, optional): " in optional
    assert arguments_text("rouge", indent="  ").startswith("Args:\n  predictions ")


@pytest.mark.parametrize("name", NAMES)
def test_cli_text_lists_every_option_with_kind_and_default(name):
    text = cli_text(name)
    assert text.splitlines()[0] == name
    for o in option_lines(name):
        assert f"\n    {o.name} ({o.kind}, default {o.default})\n" in text + "\n", (name, o.name)
    for f in METRICS[name].option_fields():
        if f.metadata.get("front_end"):
            assert f"\n    {f.name} (" not in text, (name, f.name)
    for column in METRICS[name].columns:
        assert f"{column} (" in text.splitlines()[1] or f"{column} (" in text, (name, column)


def test_the_options_subcommand(capsys):
    parser = _parser()
    args = parser.parse_args(["options", "rouge", "bleu"])
    assert args.run(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(cli_text("rouge") + "\n\n" + cli_text("bleu") + "\n")
    assert "kinds: bool" in out
    args = parser.parse_args(["options"])  # every metric when none is named
    assert args.metric == [] and args.run(args) == 0
    out = capsys.readouterr().out
    for name in NAMES:
        assert f"\n{name}\n  inputs: " in "\n" + out, name
    assert hasattr(args, "debug")  # the common options of every subcommand


def test_an_unknown_metric_in_the_options_subcommand_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        _parser().parse_args(["options", "rouge", "rogue"])
    assert e.value.code == 2  # as the command line's other usage errors
    err = capsys.readouterr().err
    assert "argument METRIC: unknown metric 'rogue'" in err and "rouge" in err


def test_a_changed_doc_changes_the_card_and_the_check_catches_it(monkeypatch, tmp_path, capsys):
    """The agreement tests can fail: a field's doc changed (in a copy of the field) changes the
    card's Markdown, the script's Args and the command line's text, and --check names the card."""
    spec = METRICS["rouge"]
    before = (card_markdown("rouge"), arguments_text("rouge"), cli_text("rouge"))
    fields = []
    for f in spec.option_fields():
        if f.name == "use_stemmer":
            f = copy.copy(f)
            f.metadata = types.MappingProxyType({**f.metadata, "doc": "a doc that the card does not say"})
        fields.append(f)
    for name in NAMES:
        (tmp_path / "metrics" / name).mkdir(parents=True)
        shutil.copy(ROOT / "metrics" / name / "README.md", tmp_path / "metrics" / name / "README.md")
    assert option_docs.update_cards(str(tmp_path), check=True) == []

    monkeypatch.setattr(spec, "option_fields", classmethod(lambda cls: fields))
    after = (card_markdown("rouge"), arguments_text("rouge"), cli_text("rouge"))
    for old, new in zip(before, after, strict=True):
        assert old != new and "a doc that the card does not say" in new
    assert option_docs.marked_section(_card("rouge")) != card_markdown("rouge")
    assert option_docs.main(["--root", str(tmp_path), "--check"]) == 1
    assert capsys.readouterr().out.strip() == "1 card(s) differ from their metric's Options: rouge"
    assert option_docs.main(["--root", str(tmp_path), "--write"]) == 0
    assert "a doc that the card does not say" in (tmp_path / "metrics" / "rouge" / "README.md").read_text()
    assert option_docs.main(["--root", str(tmp_path), "--check"]) == 0


def test_a_card_without_the_markers_is_an_error(tmp_path):
    (tmp_path / "metrics" / "rouge").mkdir(parents=True)
    (tmp_path / "metrics" / "rouge" / "README.md").write_text("# ROUGE\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no options section"):
        option_docs.update_cards(str(tmp_path), check=True)


def test_markdown_escapes_what_markdown_would_eat():
    text = card_markdown("rouge")
    assert "k\\*\\*w" in text and "&lt;type>_precision" in text and "<type>" not in text
    assert card_markdown("rouge", front_end=False).count("use_aggregator") == 0
