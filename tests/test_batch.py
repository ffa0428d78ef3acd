"""Batch mode (``batch=True``): the providers' batch APIs, against loopback servers that speak
each wire format (``batch_server.py``), the official SDKs driving the same servers as controls."""

import json
import logging
import os
import signal
import subprocess
import sys
import time

import pytest

import textgen_metrics
from batch_server import AnthropicBatchServer, AzureBatchServer, OpenAIBatchServer
from chat_server import ChatServer, schema_answer
from conftest import ROOT

PREDICTIONS = ["Paris is the capital of France. It has two million people.", "The sky is blue. Water is wet.",
               "Rome is in Italy."]
CONTEXTS = [["Paris is the capital of France."], ["The sky is blue on clear days."], ["Rome is Italy's capital."]]
FAST = {"batch": True, "batch_poll_interval": 0.01, "batch_window": 0.05}


def answer(body, task):
    return schema_answer(body)


def _judge(server, **options):
    opts = dict(FAST, **options)
    if isinstance(server, AnthropicBatchServer):
        return textgen_metrics.AnthropicJudge("claude-3-5-haiku-latest", base_url=server.url, api_key=server.key,
                                              **opts)
    if isinstance(server, AzureBatchServer):
        return textgen_metrics.AzureOpenAIJudge(server.deployment, endpoint=server.url, api_key=server.key, **opts)
    return textgen_metrics.OpenAIJudge("gpt-4o-mini", base_url=server.url, api_key=server.key, **opts)


SERVERS = {"openai": OpenAIBatchServer, "azure": AzureBatchServer, "anthropic": AnthropicBatchServer}


def _faithfulness(judge, **kw):
    return textgen_metrics.faithfulness(predictions=PREDICTIONS, contexts=CONTEXTS, judge=judge,
                                        use_aggregator=False, **kw)


@pytest.mark.parametrize("provider", list(SERVERS))
def test_a_multi_stage_metric_runs_one_batch_per_stage_and_scores_as_live(provider):
    with ChatServer(schema_answer) as live:
        expected = _faithfulness(textgen_metrics.OpenAIJudge("gpt-4o-mini", base_url=live.url, api_key="k"))
        live_bodies = sorted(json.dumps(b["messages"], sort_keys=True) for b in live.bodies)
    with SERVERS[provider](answer) as server:
        result = _faithfulness(_judge(server))
        assert server.created == [["faithfulness/claims"], ["faithfulness/verdicts"]]
        assert server.sizes == [3, 3]
        if provider != "anthropic":  # the batch lines carry the live requests' messages
            lines = [x for b in server.batches.values() for x in b["lines"]]
            assert sorted(json.dumps(x["body"]["messages"], sort_keys=True) for x in lines) == live_bodies
    assert result["faithfulness"] == expected["faithfulness"] and not result["errors"]
    assert result["judge_usage"]["requests"] == 6
    assert result["judge_mode"].endswith(", batch")


def test_a_cut_off_answer_is_asked_again_in_a_follow_up_batch_with_a_larger_budget():
    seen = set()

    def cut_first_claims(body, task):
        if task == "faithfulness/claims" and "Paris" in body["messages"][-1]["content"] and "p" not in seen:
            seen.add("p")
            return ("length", '{"claims": ["Paris is the cap')
        return None

    with OpenAIBatchServer(answer, line_fault=cut_first_claims) as server:
        result = _faithfulness(_judge(server))
        assert server.created == [["faithfulness/claims"], ["faithfulness/claims", "faithfulness/verdicts"],
                                  ["faithfulness/verdicts"]]
        assert server.sizes == [3, 3, 1]
        second = list(server.batches)[1]  # in creation order: the ids count across servers ("batch_10" < "batch_9")
        again = [x["body"] for x in server.batches[second]["lines"]
                 if x["custom_id"].startswith("faithfulness_claims")][0]
        assert again["max_tokens"] >= 256  # asked again with a larger budget
    assert not result["errors"] and None not in result["faithfulness"]


def test_batch_retry_live_sends_the_re_ask_live():
    seen = set()

    def cut_once(body, task):
        if task == "faithfulness/claims" and not seen:
            seen.add(1)
            return ("length", '{"claims": ["cut')
        return None

    with OpenAIBatchServer(answer, line_fault=cut_once) as server:
        # the verdicts' batch closes when no request came for batch_window: the live re-ask must
        # come back within it (50 ms, the tests' window, was too short once under the parallel load)
        result = _faithfulness(_judge(server, batch_retry="live", batch_window=1.0))
        assert server.live == 1
        assert server.created == [["faithfulness/claims"], ["faithfulness/verdicts"]]
    assert not result["errors"]


@pytest.mark.parametrize(("provider", "final", "reason"), [
    ("openai", "expired", "expired"), ("openai", "cancelled", "cancelled"),
    ("anthropic", "expired", "expired"), ("anthropic", "canceled", "cancelled")])
def test_an_expired_or_cancelled_batch_gives_the_unanswered_examples_none_and_a_rerun_sends_only_those(
        tmp_path, provider, final, reason):
    cache = tmp_path / "cache.sqlite"
    with SERVERS[provider](answer, final=final, answered=2) as server:
        result = _faithfulness(_judge(server, cache=str(cache)))
        assert server.sizes == [3, 2]  # the verdicts of the two answered examples
        scores = result["faithfulness"]
        assert scores.count(None) == 1 and len(result["errors"]) == 1
        assert reason in result["errors"][0]["error"] and "batch" in result["errors"][0]["error"]
        server.final = "completed" if provider == "openai" else "ended"
        rerun = _faithfulness(_judge(server, cache=str(cache)))
        assert server.sizes == [3, 2, 1, 1]  # only the missing example's claims, then its verdicts
    assert None not in rerun["faithfulness"] and not rerun["errors"]
    assert all(a == b for a, b in zip(scores, rerun["faithfulness"], strict=True) if a is not None)


def test_a_failed_batch_gives_every_example_the_provider_s_reason(tmp_path):
    with OpenAIBatchServer(answer, final="failed") as server:
        result = _faithfulness(_judge(server, cache=str(tmp_path / "c.sqlite")))
        assert result["faithfulness"] == [None, None, None]
        assert all("failed (invalid_request: the model is not available for batch)" in e["error"]
                   for e in result["errors"])
        server.final = "completed"  # the failed batch is not resumed: its requests are sent anew
        rerun = _faithfulness(_judge(server, cache=str(tmp_path / "c.sqlite")))
        assert server.sizes == [3, 3, 3]
    assert not rerun["errors"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_line_that_fails_stays_with_its_example_and_the_key_never_leaks(tmp_path, caplog, provider):
    def refuse_rome(body, task):
        if "Rome" in body["messages"][-1]["content"]:
            return ("status", 400, "this request was refused for key {key}")
        return None

    caplog.set_level(logging.DEBUG)
    cache = tmp_path / "cache.sqlite"
    with SERVERS[provider](answer, line_fault=refuse_rome) as server:
        key = server.key
        result = _faithfulness(_judge(server, cache=str(cache)))
    assert result["faithfulness"][2] is None and result["faithfulness"][:2] == [0.5, 0.5]
    assert "this request was refused for key" in result["errors"][0]["error"]
    assert key not in json.dumps(result) and key not in caplog.text
    textgen_metrics.JudgeCache(str(cache)).flush()
    for path in tmp_path.iterdir():
        assert key.encode() not in path.read_bytes()


def test_sdk_controls_speak_the_servers_wire_formats():
    """The official SDKs drive the same servers: what the judge reads is what they read."""
    import anthropic
    import openai

    line = {"custom_id": "faithfulness_claims-0", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say yes."}]}}
    with OpenAIBatchServer(lambda body, task: f"answer to {task}") as server:
        client = openai.OpenAI(base_url=server.url, api_key=server.key)
        uploaded = client.files.create(file=("b.jsonl", (json.dumps(line) + "\n").encode()), purpose="batch")
        batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                      completion_window="24h")
        states = [batch.status]
        while batch.status not in ("completed", "failed", "expired", "cancelled"):
            batch = client.batches.retrieve(batch.id)
            states.append(batch.status)
        assert states == ["validating", "in_progress", "completed"]
        out = [json.loads(x) for x in client.files.content(batch.output_file_id).text.splitlines()]
        assert out[0]["response"]["body"]["choices"][0]["message"]["content"] == "answer to faithfulness/claims"
        assert batch.request_counts.completed == 1
    with AnthropicBatchServer(lambda body, task: f"answer to {task}") as server:
        client = anthropic.Anthropic(base_url=server.url, api_key=server.key)
        batch = client.messages.batches.create(requests=[{"custom_id": "toxicity_opinions-0", "params": {
            "model": "claude-3-5-haiku-latest", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}}])
        assert batch.processing_status == "in_progress"
        batch = client.messages.batches.retrieve(batch.id)
        assert batch.processing_status == "ended" and batch.request_counts.succeeded == 1
        results = list(client.messages.batches.results(batch.id))
        assert results[0].custom_id == "toxicity_opinions-0"
        assert results[0].result.type == "succeeded"
        assert results[0].result.message.content[0].text == "answer to toxicity/opinions"


_KILLED_RUN = """
import sys, textgen_metrics
judge = textgen_metrics.OpenAIJudge("gpt-4o-mini", base_url=sys.argv[1], api_key=sys.argv[2], cache=sys.argv[3],
                                    batch=True, batch_poll_interval=0.02, batch_window=0.05)
r = textgen_metrics.faithfulness(predictions={p!r}, contexts={c!r}, judge=judge, use_aggregator=False)
print(r["faithfulness"], r["errors"])
"""


def test_a_process_killed_while_waiting_resumes_the_same_batch(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(_KILLED_RUN.format(p=PREDICTIONS, c=CONTEXTS))
    cache = tmp_path / "cache.sqlite"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with OpenAIBatchServer(answer, hold=True) as server:
        args = [sys.executable, str(script), server.url, server.key, str(cache)]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not (server.created and sum(server.reads.values()) >= 3):  # created, then waited on
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first = next(iter(server.batches))
        server.release()
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert server.created == [["faithfulness/claims"], ["faithfulness/verdicts"]]  # the claims batch once
        assert server.reads[first] >= 4  # the second process polled the first one's batch
        assert "resuming batch " + first in done.stderr
    assert done.stdout.strip() == "[0.5, 0.5, 1.0] []"
    assert server.key.encode() not in cache.read_bytes()


def test_batch_options_are_checked():
    with pytest.raises(ValueError, match="batch:"):
        textgen_metrics.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", batch="yes")
    with pytest.raises(ValueError, match="batch_retry"):
        textgen_metrics.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", batch=True, batch_retry="later")
    with pytest.raises(ValueError, match="GeminiJudge has no batch API"):
        textgen_metrics.GeminiJudge("gemini-2.0-flash", api_key="k", batch=True)
    with pytest.raises(ValueError, match="batch_poll_interval"):
        textgen_metrics.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", batch=True, batch_poll_interval=0)


def test_cli_judge_option_batch_true(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"prediction": p, "contexts": c}) + "\n"
                            for p, c in zip(PREDICTIONS, CONTEXTS, strict=True)))
    with OpenAIBatchServer(answer) as server:
        env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": server.key}
        proc = subprocess.run([sys.executable, "-m", "textgen_metrics", "score", str(data), "--metrics", "faithfulness",
                               "--judge", "openai:gpt-4o-mini", "--judge-url", server.url, "--judge-option",
                               "batch=true", "--judge-option", "batch_poll_interval=0.01", "--judge-option",
                               "batch_window=0.05"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        assert server.created == [["faithfulness/claims"], ["faithfulness/verdicts"]]
    assert proc.returncode == 0, proc.stderr
    assert "faithfulness" in proc.stdout and server.key not in proc.stdout + proc.stderr
