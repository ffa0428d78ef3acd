"""G-Eval with the user's criteria and pairwise preference: their computation on scripted judges
(answering by task id), the evaluation steps written once and returned, logprob weighting, both
orders of every pair, their failures kept per example, and the whole path over HTTP, through
evaluate.load, the command line (with --human-column) and the playground."""

import csv
import json
import re
import subprocess
import sys

import pytest

import textgen_metrics
from chat_server import ChatServer, schema_answer
from conftest import ROOT
from textgen_metrics.aggregation import bootstrap_interval
from textgen_metrics.judges import JudgeError, OpenAIJudge
from textgen_metrics.llm.geval import weighted_score

BLOCK = re.compile(r"<<<DATA (\w+) (\d{9})>>>\n(.*?)\n<<<END \1 \2>>>", re.S)
CRITERIA = "Faithfulness: the summary states only what the source says."


def blocks(messages):
    return {name: text for name, _, text in BLOCK.findall(messages[-1]["content"])}


class Scripted:
    """A judge answering by task id; records (task, messages)."""

    def __init__(self, **rules):
        self.rules = rules
        self.calls = []

    def __call__(self, messages, task):
        self.calls.append((task, messages))
        return self.rules[task.split("/", 1)[1]](messages, blocks(messages))

    def tasks(self):
        return [t for t, _ in self.calls]


def steps_rule(m, b):
    return json.dumps({"steps": ["Read the source.", "Check every sentence against it."]})


def score_by_length(m, b):
    return json.dumps({"reason": "checked", "score": min(5, len(b["prediction"].split()))})


# -- G-Eval ----------------------------------------------------------------------------------

def test_g_eval_writes_steps_once_returns_them_and_repeats_exactly():
    judge = Scripted(steps=steps_rule, score=score_by_length)
    preds = ["one", "one two", "one two three", "a b c d e f g"]
    out = textgen_metrics.g_eval(predictions=preds, criteria=CRITERIA + " (run 1)", judge=judge,
                                 use_aggregator=False, return_details=True)
    assert out["g_eval"] == [1.0, 2.0, 3.0, 5.0] and out["errors"] == []
    assert out["evaluation_steps"] == ["Read the source.", "Check every sentence against it."]
    assert out["score_range"] == [1, 5] and judge.tasks().count("g_eval/steps") == 1
    # the steps and the criteria reach every score request, one numbered step per line
    for _task, messages in judge.calls[1:]:
        user = messages[-1]["content"]
        assert CRITERIA in user and "1. Read the source.\n2. Check every sentence against it." in user
        assert CRITERIA not in "".join(blocks(messages).values())  # the rubric is not data
    assert [d["reason"] for d in out["details"]] == ["checked"] * 4
    # the same criteria again with the same judge: the steps are reused, not written again;
    # another judge (even one with the same name) writes its own
    again = textgen_metrics.g_eval(predictions=preds, criteria=CRITERIA + " (run 1)", judge=judge)
    assert judge.tasks().count("g_eval/steps") == 1 and again["evaluation_steps"] == out["evaluation_steps"]
    other = Scripted(steps=lambda m, b: json.dumps({"steps": ["Another step."]}), score=score_by_length)
    assert textgen_metrics.g_eval(predictions=preds, criteria=CRITERIA + " (run 1)",
                                  judge=other)["evaluation_steps"] == ["Another step."]
    # given steps: no steps request at all, the same scores
    other = Scripted(steps=lambda m, b: pytest.fail("no steps request expected"), score=score_by_length)
    fixed = textgen_metrics.g_eval(predictions=preds, criteria=CRITERIA + " (run 1)", judge=other,
                                   evaluation_steps=out["evaluation_steps"], use_aggregator=False)
    assert fixed["g_eval"] == out["g_eval"] and fixed["evaluation_steps"] == out["evaluation_steps"]


def test_g_eval_inputs_go_into_their_blocks_and_the_steps_prompt_names_them():
    judge = Scripted(steps=steps_rule, score=score_by_length)
    textgen_metrics.g_eval(predictions=["p"], sources=["the source"], queries=["the query"], criteria=CRITERIA + " 2",
                           judge=judge)
    (_, steps), (_, score) = judge.calls
    assert blocks(steps) == {"criteria": CRITERIA + " 2"}
    assert 'the query the text answers ("query") and the source the text was written from ("source")' in \
        steps[-1]["content"]
    assert list(blocks(score)) == ["query", "source", "prediction"]
    assert blocks(score)["source"] == "the source" and "reference" not in steps[-1]["content"]
    with pytest.raises(ValueError, match="inputs differ in length"):
        textgen_metrics.g_eval(predictions=["p", "q"], sources=["s"], criteria=CRITERIA, judge=judge)
    with pytest.raises(TypeError, match=r"references\[1\]: expected str"):
        textgen_metrics.g_eval(predictions=["p", "q"], references=["r", None], criteria=CRITERIA, judge=judge)


def test_g_eval_weights_by_log_probabilities_where_it_can_trust_them():
    def with_logprobs(score, alternatives):
        tokens = ['{"', "reason", '":', ' "', "Fine", " 5", '",', ' "', "score", '":', " "]
        return {"text": json.dumps({"reason": "Fine 5", "score": score}),
                "logprobs": [{"token": t, "logprob": 0.0} for t in tokens]
                + [{"token": str(score), "logprob": -0.1, "top_logprobs": [{"token": t, "logprob": lp}
                                                                          for t, lp in alternatives]},
                   {"token": "}", "logprob": 0.0}]}

    alternatives = [("4", -0.2231435513), ("5", -1.6094379124)]  # p = 0.8, 0.2
    judge = Scripted(steps=steps_rule, score=lambda m, b: with_logprobs(4, alternatives))
    out = textgen_metrics.g_eval(predictions=["s"], criteria=CRITERIA, judge=judge, return_details=True)
    assert out["g_eval"] == pytest.approx(4.2, abs=1e-9)
    assert out["details"][0]["weighted"] and out["details"][0]["probabilities"] == pytest.approx({"4": 0.8, "5": 0.2})
    # 1 to 10: "1" might begin "10"; weighted only with evidence that values are whole tokens
    judge = Scripted(steps=steps_rule, score=lambda m, b: with_logprobs(7, [("7", -0.1), ("8", -2.4)]))
    out = textgen_metrics.g_eval(predictions=["s"], criteria=CRITERIA, score_range=(1, 10), judge=judge,
                                 return_details=True)
    assert out["g_eval"] == 7.0 and out["details"][0]["weighted"] is False
    judge = Scripted(steps=steps_rule, score=lambda m, b: with_logprobs(9, [("9", -0.5), ("10", -1.0)]))
    out = textgen_metrics.g_eval(predictions=["s"], criteria=CRITERIA, score_range=(1, 10), judge=judge)
    p9, p10 = 2.718281828 ** -0.5, 2.718281828 ** -1.0
    assert out["g_eval"] == pytest.approx((9 * p9 + 10 * p10) / (p9 + p10), abs=1e-6)
    assert weighted_score(None, 3, 1, 5) is None and weighted_score({"3": 1.0}, 3, 1, 5) == 3.0


def test_g_eval_failures_options_and_interval():
    bad = Scripted(steps=steps_rule, score=lambda m, b: json.dumps({"reason": "r", "score": 9}))
    out = textgen_metrics.g_eval(predictions=["a", "b"], criteria=CRITERIA, judge=bad, use_aggregator=False)
    assert out["g_eval"] == [None, None] and "9 is not one of [1, 2, 3, 4, 5]" in out["errors"][0]["error"]
    # the steps cannot be written: every example says so; with on_error="raise" it raises
    no_steps = Scripted(steps=lambda m, b: "I will not.", score=score_by_length)
    out = textgen_metrics.g_eval(predictions=["a", "b"], criteria=CRITERIA + " x", judge=no_steps)
    assert out["g_eval"] is None and len(out["errors"]) == 2
    assert all(e["error"].startswith("g_eval/steps: invalid answer") for e in out["errors"])
    with pytest.raises(JudgeError, match="g_eval: g_eval/steps"):
        textgen_metrics.g_eval(predictions=["a"], criteria=CRITERIA + " y", judge=no_steps, on_error="raise")
    judge = Scripted(steps=steps_rule, score=score_by_length)
    with pytest.raises(ValueError, match="criteria: g_eval needs the criteria"):
        textgen_metrics.g_eval(predictions=["a"], judge=judge)
    with pytest.raises(TypeError, match="evaluation_steps: expected a list of strings"):
        textgen_metrics.g_eval(predictions=["a"], criteria=CRITERIA, evaluation_steps="Read it.", judge=judge)
    with pytest.raises(ValueError, match=r"score_range: \(5, 1\) must be 0 <= low < high"):
        textgen_metrics.g_eval(predictions=["a"], criteria=CRITERIA, score_range=(5, 1), judge=judge)
    with pytest.raises(TypeError, match="unexpected keyword argument 'contexts'"):
        textgen_metrics.g_eval(predictions=["a"], contexts=[["c"]], criteria=CRITERIA, judge=judge)
    preds = ["one", "one two", "one two three", "a b c d", "a"]
    out = textgen_metrics.g_eval(predictions=preds, criteria=CRITERIA, judge=judge, confidence_level=0.9, seed=3)
    per = textgen_metrics.g_eval(predictions=preds, criteria=CRITERIA, judge=judge, use_aggregator=False)["g_eval"]
    assert out["g_eval_ci"] == list(bootstrap_interval(per, 1000, 0.9, 3))


def test_g_eval_over_http_asks_reason_first_with_logprobs_and_caches_the_steps(tmp_path):
    def responder(body, task):
        if task == "g_eval/steps":
            return json.dumps({"steps": ["Compare the summary with the source."]})
        return {"content": json.dumps({"reason": "ok", "score": 3}),
                "logprobs": [{"token": t, "logprob": 0.0, "top_logprobs": []} for t in ['{"reason": "ok", "score": ']]
                + [{"token": "3", "logprob": -0.01, "top_logprobs": [{"token": "3", "logprob": -0.01}]}]}

    cache = str(tmp_path / "c.sqlite")
    with ChatServer(responder) as srv:
        judge = OpenAIJudge("judge", base_url=srv.url, api_key="k", cache=cache)
        out = textgen_metrics.g_eval(predictions=["a", "b", "c"], sources=["s"] * 3, criteria=CRITERIA + " http",
                                     judge=judge)
        assert out["g_eval"] == 3.0 and out["judge_usage"]["requests"] == 4
        score = next(b for b, h in zip(srv.bodies, srv.headers, strict=True) if h["X-Textgen-Task"] == "g_eval/score")
        schema = score["response_format"]["json_schema"]["schema"]
        assert list(schema["properties"]) == ["reason", "score"] and schema["properties"]["score"]["enum"] == [1, 2, 3,
                                                                                                            4, 5]
        assert score["logprobs"] is True and score["top_logprobs"] == 20
        # a new judge with the same cache (as a new process would): no request at all
        count = srv.count  # a new judge object: no steps in memory, the cache has them
        again = textgen_metrics.g_eval(predictions=["a", "b", "c"], sources=["s"] * 3, criteria=CRITERIA + " http",
                                       judge=OpenAIJudge("judge", base_url=srv.url, api_key="k", cache=cache))
        assert again["g_eval"] == 3.0 and srv.count == count and again["evaluation_steps"] == out["evaluation_steps"]


# -- pairwise preference ------------------------------------------------------------------------

def prefer(word):
    """Prefers the response containing ``word``; a tie when both or neither do."""
    def rule(m, b):
        a, bb = word in b["response_a"], word in b["response_b"]
        return json.dumps({"reason": f"looks for {word}", "verdict": "A" if a and not bb else "B" if bb and not a
                           else "tie"})
    return rule


def test_pairwise_judges_both_orders_and_counts_flips_as_ties():
    judge = Scripted(verdict=prefer("Paris"))
    out = textgen_metrics.pairwise_preference(
        queries=["Capital of France?"] * 4, predictions=["Paris.", "Lyon.", "Paris!", "Nice."],
        baselines=["Lyon.", "Paris.", "Paris is it.", "Nice."], judge=judge, return_details=True)
    assert out["verdicts"] == ["win", "loss", "tie", "tie"] and out["win_rate"] == 0.5
    assert (out["wins"], out["losses"], out["ties"], out["position_inconsistent"]) == (1, 1, 2, 0)
    # two orders per pair; the second pair is the first one swapped (the same two requests, asked
    # once), and the identical pair needs no judge
    assert len(judge.calls) == 4
    first, second = judge.calls[0][1], judge.calls[1][1]
    assert {blocks(first)["response_a"], blocks(second)["response_a"]} == {"Paris.", "Lyon."}
    assert out["details"][0]["orders"][0]["prediction_as"] == "A" and out["details"][0]["orders"][1]["verdict"] == "B"
    # a judge that always picks the first answer flips with the order: ties, all inconsistent
    biased = Scripted(verdict=lambda m, b: json.dumps({"reason": "first", "verdict": "A"}))
    out = textgen_metrics.pairwise_preference(queries=["q"] * 3, predictions=["a", "b", "c"],
                                              baselines=["x", "y", "z"], judge=biased, use_aggregator=False)
    assert out["win_rate"] == [0.5, 0.5, 0.5] and out["position_inconsistent"] == 3 and out["ties"] == 3


def test_pairwise_interval_reference_criteria_and_failures():
    judge = Scripted(verdict=prefer("good"))
    preds = ["good"] * 6 + ["bad"] * 2 + ["good", "bad"]
    bases = ["bad"] * 6 + ["good"] * 2 + ["good", "bad"]
    out = textgen_metrics.pairwise_preference(queries=["q"] * 10, predictions=preds, baselines=bases, judge=judge,
                                              references=["ref"] * 10, criteria="Say good.", seed=7)
    per = [1.0] * 6 + [0.0] * 2 + [0.5, 0.5]
    assert out["win_rate"] == 0.7 and out["win_rate_ci"] == list(bootstrap_interval(per, 1000, 0.95, 7))
    user = judge.calls[0][1][-1]["content"]
    assert "Criteria:\nSay good.\n" in user and blocks(judge.calls[0][1])["reference"] == "ref"
    assert 'The data block "reference" holds a reference answer' in user and out["criteria"] == "Say good."
    assert "win_rate_ci" not in textgen_metrics.pairwise_preference(
        queries=["q"], predictions=["good"], baselines=["bad"], judge=judge, confidence_level=None)
    # one order's answer stays unusable: that example has no verdict and counts nowhere
    def flaky(m, b):
        if b["response_a"] == "broken":
            return "no idea"
        return prefer("good")(m, b)

    out = textgen_metrics.pairwise_preference(queries=["q"] * 3, predictions=["good", "broken", "bad"],
                                              baselines=["bad", "good", "good"], judge=Scripted(verdict=flaky))
    assert out["verdicts"] == ["win", None, "loss"] and out["win_rate"] == 0.5
    assert (out["wins"], out["losses"], out["ties"]) == (1, 1, 0) and out["errors"][0]["index"] == 1
    # the judge's verdicts against people's, as labels
    agree = textgen_metrics.agreement(out["verdicts"], ["win", "loss", "loss"])
    assert agree["kind"] == "labels" and agree["judge_missing"] == 1 and agree["accuracy"] == 1.0
    with pytest.raises(TypeError, match="missing a required argument: 'baselines'"):
        textgen_metrics.pairwise_preference(queries=["q"], predictions=["p"], judge=judge)


# -- evaluate.load, the command line, the playground ----------------------------------------------

def test_evaluate_load_passes_optional_inputs_and_criteria(repo_root):
    import evaluate

    judge = Scripted(steps=steps_rule, score=score_by_length)
    metric = evaluate.load("./metrics/g_eval", judge=judge)
    out = metric.compute(predictions=["a b"], references=["the reference"], sources=["the source"],
                         criteria=CRITERIA + " load")
    assert out["g_eval"] == 2.0
    assert list(blocks(judge.calls[-1][1])) == ["source", "reference", "prediction"]
    pair = evaluate.load("./metrics/pairwise_preference")
    res = pair.compute(queries=["q"], predictions=["good"], baselines=["bad"], references=["ref"],
                       judge=Scripted(verdict=prefer("good")))
    assert res["win_rate"] == 1.0 and res["verdicts"] == ["win"]


def run_cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "textgen_metrics", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, **kw)


def test_cli_g_eval_criteria_option_pairwise_and_human_column(tmp_path):
    rows = [{"id": i, "prediction": f"Answer {i}. It is fine.", "source": f"Source {i}.", "query": "q",
             "baselines": "Other answer.", "queries": "What?", "human_score": str(3 + i % 3),
             "human_verdict": ["tie", "win", "loss"][i % 3]} for i in range(6)]
    path = tmp_path / "rated.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "r.json"
    with ChatServer(schema_answer) as srv:
        proc = run_cli("score", path, "--metrics", "g_eval,pairwise_preference",
                       "--option", "g_eval.criteria=Faithfulness: only what the source says.",
                       "--judge", "openai:judge-x", "--judge-url", srv.url, "--judge-option", "api_key=k",
                       "--human-column", "g_eval=human_score", "--human-column", "pairwise_preference=human_verdict",
                       "--out", out)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(out.read_text())
        g = report["metrics"]["g_eval"]
        assert g["per_example"]["g_eval"] == [4.0] * 6 and g["options"]["criteria"].startswith("Faithfulness")
        assert g["aggregate"]["evaluation_steps"]  # the steps are reported
        scored = [b for b, h in zip(srv.bodies, srv.headers, strict=True) if h["X-Textgen-Task"] == "g_eval/score"]
        assert "Faithfulness: only what the source says." in scored[0]["messages"][1]["content"]
        for body in scored:  # the optional source column was read, each source with its own answer
            text = body["messages"][1]["content"]
            i = re.search(r"Answer (\d)\.", text).group(1)
            assert f"Source {i}." in text
        p = report["metrics"]["pairwise_preference"]
        # schema_answer always says "A": every pair flips with the order
        assert p["aggregate"]["win_rate"] == 0.5 and p["aggregate"]["position_inconsistent"] == 6
        assert p["scores"] == ["win_rate"] and report["summary"]["pairwise_preference_win_rate"] == 0.5
        agree = report["agreement"]
        assert agree["g_eval"]["kind"] == "scores" and agree["g_eval"]["spearman"] is None  # a constant judge
        assert agree["pairwise_preference"]["kind"] == "labels" and agree["pairwise_preference"]["accuracy"] == 1 / 3
        assert "pairwise_preference vs human_verdict: cohen_kappa" in proc.stdout
        count = srv.count
        typo = run_cli("score", path, "--metrics", "g_eval", "--option", "g_eval.criteria=x", "--judge",
                       "openai:judge-x", "--judge-url", srv.url, "--human-column", "human_scor")
        assert typo.returncode == 2 and "no row has the field 'human_scor'" in typo.stderr
        assert srv.count == count  # checked before any judge call
    missing = run_cli("score", path, "--metrics", "g_eval", "--judge", "openai:j", "--judge-url", "http://127.0.0.1:9")
    assert missing.returncode == 2 and "criteria: g_eval needs the criteria" in missing.stderr


def test_playground_runs_g_eval_with_criteria_from_the_options_box(tmp_path):
    from textgen_metrics.spaces import run_metric, run_playground

    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"prediction": f"Text {i}.", "source": "S."}) for i in range(3)) + "\n")
    with ChatServer(schema_answer) as srv:
        judge = OpenAIJudge("judge-p", base_url=srv.url, api_key="k")
        summary, (headers, table), chart, report = run_playground(
            str(data), ["g_eval"], "{}", json.dumps({"g_eval": {"criteria": "Clarity: easy to read."}}), judge)
        assert float(dict(summary)["g_eval"]) == 4.0 and headers == ["id", "g_eval"] and len(table) == 3
        with pytest.raises(ValueError, match="criteria: g_eval needs the criteria"):
            run_playground(str(data), ["g_eval"], "{}", "{}", judge)
        import evaluate

        metric = evaluate.load(str(ROOT / "metrics" / "g_eval"))
        # the Space's table: the prediction, then the optional inputs; blank columns are not given
        rows = [["Text one.", "", "The source.", ""]]
        _, result = run_metric(metric, rows, json.dumps(type(metric).space_options), judge)
        assert result["g_eval"] == 4.0 and result["errors"] == []
        sent = [b for b, h in zip(srv.bodies, srv.headers, strict=True) if h["X-Textgen-Task"] == "g_eval/score"][-1]
        assert "The source." in sent["messages"][1]["content"] and "<<<DATA query" not in sent["messages"][1]["content"]
