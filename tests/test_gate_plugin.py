"""The pytest plugin (SPEC "Quality gates"): the fixture metric_gate, the options, JUnit XML
properties, the Markdown summary and the terminal table, run in pytest's own pytester."""

import xml.etree.ElementTree as ET

import gate_sim as G
import textgen_metrics as tm
from textgen_metrics import CallableJudge

pytest_plugins = ("pytester",)

SUITE = '''
REFS = ["the cat sat on the mat", "a dog ran in the park"] * 10
MIXED = ["the cat sat on the mat", "nothing alike here"] * 10


def test_good(metric_gate):
    result = metric_gate("rouge", 0.5, predictions=REFS, references=REFS)
    assert result.verdict == "pass"


def test_bad(metric_gate):
    metric_gate("rouge", 0.9, predictions=["nothing alike"] * 20, references=REFS)


def test_unsure(metric_gate):
    metric_gate("rouge", 0.5, predictions=MIXED, references=REFS)
'''


def test_the_fixture_fails_a_failing_gate_and_treats_inconclusive_as_told(pytester):
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1, failed=2)
    pytester.runpytest_inprocess("--gate-inconclusive", "skip").assert_outcomes(passed=1, failed=1, skipped=1)
    pytester.runpytest_inprocess("--gate-inconclusive", "pass").assert_outcomes(passed=2, failed=1)


def test_figures_go_to_junit_properties_the_summary_and_the_terminal(pytester, monkeypatch, tmp_path):
    pytester.makepyfile(test_suite=SUITE)
    step = tmp_path / "step_summary.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    summary = tmp_path / "gates.md"
    # record_property writes properties in the xunit1 (or legacy) JUnit family only: pytest's rule
    result = pytester.runpytest_inprocess("--junitxml", str(tmp_path / "junit.xml"), "-o", "junit_family=xunit1",
                                          "--gate-summary", str(summary))
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*quality gates*", "name*metric*score*interval*bound*n*repeats*unscored*verdict",
                                 "*test_good*rouge.rouge1*1*>= 0.5*pass", "*test_bad*fail",
                                 "*test_unsure*inconclusive"])
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["test_good"].iter("property")}
    assert props == {"metric": "rouge.rouge1", "score": "1.0", "ci_low": "1.0", "ci_high": "1.0", "n": "20",
                     "repeats": "1", "unscored": "0", "verdict": "pass"}
    table = summary.read_text()
    assert table.startswith("### Quality gates\n") and "| test_suite.py::test_bad | rouge.rouge1 |" in table
    assert step.read_text() == "earlier step\n" + table + "\n"
    assert "rouge.rouge1: fail (score 0" in result.stdout.str()  # the failing test's message: its figures


def test_the_replay_options_reach_the_fixture(pytester, tmp_path):
    recording = tmp_path / "judge.jsonl"
    judge = CallableJudge(G.NoisyJudge(G.true_scores(20, 0.9), 0.1, 1), model="noisy-sim")
    tm.gate("g_eval", 50, judge=judge, options=G.G_EVAL, predictions=G.predictions(20), judge_replay="record",
            judge_recording=recording)
    pytester.makepyfile(test_replayed=f'''
from textgen_metrics import CallableJudge

def never(messages, task):
    raise AssertionError("strict replay called the judge")

def test_replayed(metric_gate):
    options = {G.G_EVAL!r}
    predictions = [f"[item {{i}}] an answer" for i in range(20)]
    result = metric_gate("g_eval", 50, judge=CallableJudge(never, model="noisy-sim"), options=options,
                         predictions=predictions)
    assert result.requests == 0 and result.verdict == "pass"
''')
    pytester.runpytest_inprocess("--judge-replay", "strict", "--judge-recording", str(recording)
                                 ).assert_outcomes(passed=1)
    missing = pytester.runpytest_inprocess("--judge-replay", "strict", "--judge-recording", str(tmp_path / "none"))
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*judge_recording: *none does not exist*"])
