"""``textgen-metrics gate CONFIG.toml`` (SPEC "Quality gates"): the verdicts of gate and
regression from a TOML file, exit status 0/1/3/2, --json and --summary; and docs/gating's
example, whose judge recording is regenerated here and held equal to the committed one, run
as its GitHub Actions workflow runs it."""

import contextlib
import json
import shlex
import shutil
import socket
import sys
from unittest import mock

import pytest
import yaml

import gate_sim as G
from conftest import ROOT
from textgen_metrics.cli import main
from textgen_metrics.gates import config as C
from textgen_metrics.judges.base import Completion
from textgen_metrics.judges.openai import OpenAIJudge

EXAMPLE = ROOT / "docs" / "gating"
REFS = ["the cat sat on the mat", "a dog ran in the park"] * 10


def write_rows(path, predictions):
    rows = [{"answer": p, "reference": r} for p, r in zip(predictions, REFS, strict=True)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def config(tmp_path, text):
    write_rows(tmp_path / "good.jsonl", REFS)
    write_rows(tmp_path / "mixed.jsonl", ["the cat sat on the mat", "nothing alike here"] * 10)
    write_rows(tmp_path / "bad.jsonl", ["nothing alike"] * 20)
    path = tmp_path / "gates.toml"
    path.write_text(text)
    return str(path)


GATE = '''
[[gate]]
data = "{data}"
metric = "rouge"
threshold = 0.5
columns = {{predictions = "answer", references = "reference"}}
'''


@pytest.mark.parametrize("data, status", [("good.jsonl", 0), ("bad.jsonl", 1), ("mixed.jsonl", 3)])
def test_the_exit_status_is_the_worst_verdict(tmp_path, data, status, capsys):
    path = config(tmp_path, GATE.format(data="good.jsonl") + GATE.format(data=data))
    assert main(["gate", path, "--json", str(tmp_path / "out.json"), "--summary", str(tmp_path / "s.md")]) == status
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["exit_status"] == status and [r["verdict"] for r in out["results"]][0] == "pass"
    assert "| gate[1] rouge |" in (tmp_path / "s.md").read_text()
    assert "verdict" in capsys.readouterr().out


def test_a_regression_entry_is_paired_per_row(tmp_path):
    path = config(tmp_path, '''
[[regression]]
baseline = "good.jsonl"
candidate = "bad.jsonl"
metrics = ["rouge", "chrf"]
columns = {predictions = "answer", references = "reference"}
n_permutations = 500
''')
    results = C.run_config(path)
    assert [(r["metric"], r["verdict"]) for r in results] == [("rouge", "regressed"), ("chrf", "regressed")]
    assert C.exit_status(results) == 1


def test_plan_reports_the_smallest_detectable_drop_before_any_judge_call(tmp_path, capsys):
    path = config(tmp_path, GATE.format(data="bad.jsonl") + '''
[[regression]]
baseline = "good.jsonl"
candidate = "mixed.jsonl"
metrics = ["faithfulness"]
judge = "openai:never-called"
judge_options = {base_url = "http://127.0.0.1:9/v1"}
columns = {predictions = "answer", contexts = "reference"}
''')
    assert main(["gate", path, "--plan", "--json", str(tmp_path / "plan.json")]) == 0  # the failing gate is not run
    out = capsys.readouterr().out
    assert "regression[0] faithfulness.faithfulness: n 20, sd 1 (the widest spread" in out
    assert json.loads((tmp_path / "plan.json").read_text())["results"][0]["requests"] == 0


@pytest.mark.parametrize("text, match", [
    ("[[gate]]\nmetric = 'rouge'\nthreshold = 0.5\n", r"gate\[0\]: 'data' is missing"),
    (GATE.format(data="good.jsonl") + "colour = 1\n", "gate\\[0\\]: unknown key 'colour'"),
    ("judge = 'x'\n", "no \\[\\[gate\\]\\] and no \\[\\[regression\\]\\] to run"),
    ("[[gate]\n", "not TOML"),
    (GATE.format(data="none.jsonl"), "none.jsonl"),
])
def test_a_bad_file_is_a_usage_error_naming_the_entry(tmp_path, text, match, capsys):
    path = config(tmp_path, text)
    assert main(["gate", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith("textgen-metrics: error: ") and len(err.strip().splitlines()) == 1
    with pytest.raises((ValueError, OSError), match=match):
        C.run_config(path)


async def _schema_answer(self, messages, request, ctx, tally):
    tally.sent()
    # the server answers with the model it ran, as vLLM does with the name it serves
    return Completion(text=json.dumps(G.fill(request.schema or {"type": "string"})), model=self.model)


def record_example(folder):
    """docs/gating's recording made anew in ``folder``: its judge (a local server in the file)
    stood in for by schema answers (the transport replaced; the cache keys are the judge's)."""
    if folder != EXAMPLE:
        for name in ("gates.toml", "answers.jsonl", "candidate.jsonl"):
            shutil.copy(EXAMPLE / name, folder / name)
    with mock.patch.object(OpenAIJudge, "_acomplete", _schema_answer), \
            mock.patch.object(OpenAIJudge, "_open", lambda self: contextlib.nullcontext(None)):
        return C.run_config(str(folder / "gates.toml"), judge_replay="record")


def test_the_examples_recording_is_the_one_its_judge_makes(tmp_path):
    record_example(tmp_path)
    assert (tmp_path / "judge.jsonl").read_text() == (EXAMPLE / "judge.jsonl").read_text(), \
        "docs/gating/judge.jsonl is stale: python tests/test_gate_cli.py writes it again"


def test_the_workflows_gate_commands_run_offline_and_pass(monkeypatch, tmp_path, capsys):
    workflow = yaml.safe_load((EXAMPLE / "workflow.yml").read_text())
    commands = [line for job in workflow["jobs"].values() for step in job["steps"]
                for line in step.get("run", "").splitlines() if line.startswith("textgen-metrics gate")]
    assert commands and all("--judge-replay strict" in c for c in commands)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step.md"))

    def refuse(*args, **kwargs):
        raise OSError("the network is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    for command in commands:
        argv = [a.replace("$RUNNER_TEMP", str(tmp_path)) for a in shlex.split(command)[1:]]
        assert main(argv) == 0, capsys.readouterr()
    assert "| answers are faithful to the passages | faithfulness.faithfulness |" in (tmp_path / "step.md").read_text()


if __name__ == "__main__":  # write docs/gating/judge.jsonl again
    sys.exit(0 if record_example(EXAMPLE) else 1)
