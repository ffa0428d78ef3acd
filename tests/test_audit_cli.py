"""``textgen-metrics audit`` as SPEC's usage block writes it: the parser of add_audit_parser on
the command line's own main (its exit statuses), a judge at a loopback chat server, the JSON
shape of SPEC, the judge card's HTML and text, the dry run that sends nothing, a bundled set as
SOURCE, usage errors; the command line lists it (cli.SUBCOMMANDS), else the tests add it."""

from __future__ import annotations

import argparse
import json

import pytest

import textgen_metrics
from chat_server import ChatServer
from test_audit_probes import ROWS, Planted
from textgen_metrics import cli
from textgen_metrics.audits.cli import add_audit_parser


def _has_audit():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for add in cli.SUBCOMMANDS:
        add(sub)
    return "audit" in sub.choices


@pytest.fixture
def main(monkeypatch):
    if not _has_audit():  # until the command line lists it
        monkeypatch.setattr(cli, "SUBCOMMANDS", [*cli.SUBCOMMANDS, add_audit_parser])
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return cli.main


@pytest.fixture
def rows_file(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:40]), encoding="utf-8")
    return path


def _server():
    judge = Planted(position=0.3)
    return ChatServer(lambda body, task: judge(body["messages"], task))


POSITION_KEYS = {"positional_agreement", "first_position_rate", "accuracy_first", "accuracy_second", "kappa"}


def test_audit_writes_spec_json_an_html_judge_card_and_a_summary(main, rows_file, tmp_path, capsys):
    out_json, out_html = tmp_path / "audit.json", tmp_path / "card.html"
    with _server() as srv:
        status = main(["audit", str(rows_file), "--metrics", "pairwise_preference", "--judge", "openai:stand-in",
                       "--judge-url", srv.url, "--judge-option", "api_key=k", "--judge-option", "concurrency=4",
                       "--probe", "position,verbosity,repeat,calibration", "--repeats", "2", "--threshold", "0.5",
                       "--human-column", "gold", "--seed", "3", "--json", str(out_json), "--html", str(out_html)])
        sent = srv.count
    assert status == 0
    result = json.loads(out_json.read_text())
    assert set(result) >= {"probes", "requests", "unscored"} and result["requests"] == sent == 3 * 2 * 40
    probes = result["probes"]
    assert set(probes) == {"position", "verbosity", "repeat", "calibration"}
    assert set(probes["position"]) >= POSITION_KEYS | {"flagged"} and probes["position"]["flagged"] is True
    assert set(probes["verbosity"]) >= {"mean_shift", "changed_share", "flagged"}
    assert set(probes["repeat"]) >= {"icc", "flip_rate", "repeats_needed", "flagged"}
    assert set(probes["calibration"]) >= {"brier", "ece", "ece_recalibrated", "bins"}
    for probe in probes.values():
        for value in probe.values():
            if isinstance(value, dict) and "value" in value:
                assert set(value) == {"value", "ci"}
    assert isinstance(probes["repeat"]["repeats_needed"], int) and len(probes["calibration"]["bins"]) == 10
    text = capsys.readouterr().out
    rate = probes["position"]["first_position_rate"]
    assert (f"prefers the answer shown first in {rate['value']:.0%} [{rate['ci'][0]:.0%}, {rate['ci'][1]:.0%}] "
            "of usable verdicts: flagged") in text
    assert "flagged: position" in text
    card = out_html.read_text()
    assert card.count("<svg") == 3 and "<script" not in card and "reliability diagram" in card
    assert "prefers the answer shown first in" in card and "class='flag'" in card
    # the same from Python
    same = textgen_metrics.audit(str(rows_file), metrics="pairwise_preference",
                                 judge=textgen_metrics.CallableJudge(Planted(position=0.3)),
                                 probes=("position", "verbosity", "repeat", "calibration"), repeats=2,
                                 human_column="gold", seed=3)
    assert same["probes"]["position"] == probes["position"]


def test_the_dry_run_sends_nothing_and_prices_every_run(main, rows_file, tmp_path, capsys):
    out_json = tmp_path / "estimate.json"
    with _server() as srv:
        status = main(["audit", str(rows_file), "--metrics", "pairwise_preference", "--judge", "openai:gpt-4o-mini",
                       "--judge-url", srv.url, "--judge-option", "api_key=k", "--dry-run", "--json", str(out_json)])
        assert srv.count == 0
    assert status == 0
    printed = capsys.readouterr().out
    assert "cost estimate (no request sent)" in printed and "pairwise_preference (repeat 3)" in printed
    estimate = json.loads(out_json.read_text())
    assert estimate["total"]["requests"] == 4 * 2 * 40 and estimate["total"]["cost"] > 0


def test_a_bundled_set_is_a_source(main, capsys):
    """LLMBar Natural's records carry query, prediction, baseline and gold: no column to map."""
    status = main(["audit", "llmbar_natural", "--metrics", "pairwise_preference", "--judge", "openai:gpt-4o-mini",
                   "--probe", "position", "--dry-run"])
    assert status == 0
    assert "pairwise_preference (plain)" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--metrics", "pairwise_preference,g_eval"], "name one LLM-guided metric"),
    (["--metrics", "pairwise_preference", "--probe", "speed"], "unknown probe 'speed'"),
    (["--metrics", "pairwise_preference", "--repeats", "1"], "repeats"),
    (["--metrics", "pairwise_preference", "--option", "rouge.use_stemmer=true"], "not among --metrics"),
    (["--metrics", "pairwise_preference", "--human-column", "nope"], "no field 'nope'"),
])
def test_usage_errors_exit_2_with_one_line(main, rows_file, capsys, argv, message):
    status = main(["audit", str(rows_file), "--judge", "openai:m", "--judge-url", "http://127.0.0.1:9/v1",
                   "--judge-option", "api_key=k", *argv])
    assert status == 2
    assert message in capsys.readouterr().err


def test_the_parser_is_spec_s_usage_block():
    parser = argparse.ArgumentParser(prog="textgen-metrics")
    add_audit_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit", "rows.jsonl", "--metrics", "pairwise_preference", "--judge", "openai:m",
                              "--judge-url", "http://x", "--judge-option", "a=1", "--column", "baselines=b",
                              "--option", "pairwise_preference.criteria=c", "--probe", "position,repeat",
                              "--repeats", "5", "--threshold", "0.7", "--human-column", "gold", "--dry-run",
                              "--json", "o.json", "--html", "o.html", "--debug"])
    assert (args.source, args.metrics, args.repeats, args.threshold, args.probe) == (
        "rows.jsonl", "pairwise_preference", 5, 0.7, "position,repeat")
    assert args.dry_run and args.debug and args.run.__name__ == "audit_command"
    with pytest.raises(SystemExit):
        parser.parse_args(["audit", "rows.jsonl"])  # --metrics is required


def test_a_files_bad_row_is_named_by_its_line_as_score_names_it(tmp_path):
    """The audit reads a file as score does: a record without a field is named by its line in the
    file (a blank line above it counts), not by its row's number."""
    path = tmp_path / "pairs.jsonl"
    rows = [{"query": "q1", "prediction": "a", "baseline": "b"}, {"query": "q2", "prediction": "a"}]
    path.write_text("\n" + "\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pairs\.jsonl: line 3 has no field 'baseline'"):
        textgen_metrics.audit(str(path), metrics="pairwise_preference", judge="openai:m",
                              judge_options={"base_url": "http://127.0.0.1:9/v1", "api_key": "k"}, dry_run=True)
