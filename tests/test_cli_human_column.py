"""``--human-column``: one declaration (``cli_args.add_human_column``) and one grammar,
``[METRIC=]FIELD[,FIELD...]`` (repeatable), for score, meta-eval and audit; each subcommand
refuses, naming the flag, what it cannot use, and every old spelling still works."""

from __future__ import annotations

import json

import pytest

from textgen_metrics import cli
from textgen_metrics.cli_args import HumanColumn, UsageError, human_columns


@pytest.fixture
def main(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return cli.main


def test_the_grammar_reads_metric_and_fields():
    got = human_columns(["human", "x,y", " z "], "meta-eval")
    assert got == [HumanColumn(None, ("human",)), HumanColumn(None, ("x", "y")), HumanColumn(None, ("z",))]
    got = human_columns(["g_eval=score", "verdict"], "score", per_metric=True)
    assert got == [HumanColumn("g_eval", ("score",)), HumanColumn(None, ("verdict",))]
    assert human_columns(None, "audit", at_most=1) == []


@pytest.mark.parametrize("items, kwargs, message", [
    (["=score"], {"per_metric": True}, "expected [METRIC=]FIELD[,FIELD...], got '=score'"),
    (["g_eval="], {"per_metric": True}, "expected [METRIC=]FIELD[,FIELD...], got 'g_eval='"),
    ([" , "], {}, "expected [METRIC=]FIELD[,FIELD...], got ' , '"),
    (["g_eval=score"], {}, "meta-eval compares every metric with the human column; 'g_eval=score' names a metric"),
    (["a,b"], {"per_metric": True}, "meta-eval compares a metric with one field; 'a,b' names 2"),
    (["a", "b"], {"at_most": 1}, "meta-eval takes 1 human column; got a, b"),
])
def test_the_grammar_refuses_naming_the_flag(items, kwargs, message):
    with pytest.raises(UsageError) as e:
        human_columns(items, "meta-eval", **kwargs)
    assert str(e.value).startswith("--human-column: ") and message in str(e.value)


def test_every_subcommand_declares_the_same_flag():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("score", "meta-eval", "audit"):
        [flag] = [a for a in sub.choices[name]._actions if "--human-column" in a.option_strings]
        assert (flag.metavar, type(flag).__name__) == ("[METRIC=]FIELD[,FIELD...]", "_AppendAction"), name


def _judge_rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = [{"query": f"q{i}", "prediction": f"answer {i}", "reference": f"ref {i}", "rating": i % 5} for i in range(4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_score_takes_metric_field_and_field_and_refuses_two_fields(main, tmp_path, capsys):
    path = _judge_rows(tmp_path)
    base = ["score", str(path), "--metrics", "g_eval,rouge", "--column", "predictions=prediction",
            "--option", "g_eval.criteria=clarity", "--judge", "openai:m", "--dry-run"]
    # the old spellings reach the field check (before any judge call): FIELD and METRIC=FIELD
    assert main([*base, "--human-column", "rating"]) == 0
    capsys.readouterr()
    assert main([*base, "--human-column", "g_eval=nope"]) == 2
    assert "--human-column: no row has the field 'nope'" in capsys.readouterr().err
    assert main([*base, "--human-column", "rating,other"]) == 2
    assert ("--human-column: score compares a metric with one field; 'rating,other' names 2"
            in capsys.readouterr().err)


def _meta_rows(tmp_path):
    path = tmp_path / "ratings.csv"
    lines = ["item,system,good,noise,fluency,coherence"]
    for i in range(6):
        for s in range(3):
            good = i + s * 0.5
            lines.append(f"d{i},s{s},{good},{(i * 7 + s * 3) % 5},{good + (s % 2) * 0.3},{good - (i % 2) * 0.4}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_meta_eval_takes_fields_repeated_or_comma_separated_alike(main, tmp_path, capsys):
    path = _meta_rows(tmp_path)
    outs = []
    for humans in (["--human-column", "fluency,coherence"], ["--human-column", "fluency", "--human-column",
                                                              "coherence"]):
        out = tmp_path / f"r{len(outs)}.json"
        assert main(["meta-eval", str(path), "--score-column", "good", "--score-column", "noise", *humans,
                     "--n-resamples", "0", "--json", str(out)]) == 0
        outs.append(json.loads(out.read_text()))
    assert {r["human"] for r in outs[0]["results"]} == {"fluency", "coherence"}
    assert outs[0]["results"] == outs[1]["results"]


def test_meta_eval_refuses_a_metric_prefix(main, tmp_path, capsys):
    path = _meta_rows(tmp_path)
    assert main(["meta-eval", str(path), "--score-column", "good", "--human-column", "good=fluency"]) == 2
    err = capsys.readouterr().err
    assert "--human-column: meta-eval compares every metric with the human column; 'good=fluency' names a metric" in err


@pytest.mark.parametrize("humans, message", [
    (["gold,other"], "audit takes 1 human column; got gold, other"),
    (["gold", "--human-column", "other"], "audit takes 1 human column; got gold, other"),
    (["pairwise_preference=gold"], "audit compares every metric with the human column"),
    (["nope"], "no field 'nope'"),  # the old spelling, one NAME, reaches the audit
])
def test_audit_takes_one_field(main, tmp_path, capsys, humans, message):
    path = tmp_path / "pairs.jsonl"
    rows = [{"query": f"q{i}", "prediction": f"a{i}", "baseline": f"b{i}", "gold": "a"} for i in range(4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    status = main(["audit", str(path), "--metrics", "pairwise_preference", "--judge", "openai:m", "--judge-url",
                   "http://127.0.0.1:9/v1", "--judge-option", "api_key=k", "--human-column", *humans])
    assert status == 2
    assert message in capsys.readouterr().err
