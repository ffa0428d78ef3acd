"""The loopback recorder behind benchmarks/tokens_vs_peers.py: it records what a tool sends and
answers by the structure the request asks for (a JSON schema, a forced tool, a schema written in
the prompt, JSON keys named in words), one list item per item the request enumerates."""

import json
import os
import sys
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from token_recorder import REASON, Recorder, request_schema  # noqa: E402

EXAMPLES = [{"query": "When did the bridge open?", "prediction": "The bridge opened in 1937. It is red.",
             "reference": "It opened on May 27, 1937.",
             "contexts": ["The bridge opened on May 27, 1937.", "The bridge is painted red.", "It is long."]}]


@pytest.fixture
def recorder():
    server = Recorder(EXAMPLES)
    yield server
    server.close()


def post(url, body):
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())["choices"][0]["message"]


def test_our_faithfulness_runs_through_it_and_verdicts_follow_the_claims(recorder):
    import textgen_metrics
    from textgen_metrics.judges import OpenAIJudge

    judge = OpenAIJudge("gpt-4o", base_url=recorder.url("ours", "faithfulness"), api_key="sk-dummy")
    out = textgen_metrics.faithfulness(predictions=[EXAMPLES[0]["prediction"]], contexts=[EXAMPLES[0]["contexts"]],
                                       judge=judge, use_aggregator=False)
    assert out["faithfulness"] == [1.0] and not any(out["errors"] or [])
    run = recorder.run("ours", "faithfulness")
    assert len(run.requests) == 2
    claims = json.loads(run.requests[0]["answer"]["content"])["claims"]
    assert claims == ["The bridge opened in 1937.", "It is red."]
    verdicts = json.loads(run.requests[1]["answer"]["content"])["verdicts"]
    assert len(verdicts) == 2 and all(v["reason"] == REASON and v["verdict"] == "yes" for v in verdicts.values())
    assert request_schema(run.requests[1]["body"]) is not None  # the schema sent is counted with the prompt


def test_keys_named_in_words_valor_style(recorder):
    url = recorder.url("valor", "faithfulness")
    pred, ctx = EXAMPLES[0]["prediction"], EXAMPLES[0]["contexts"]
    first = post(url, {"messages": [{"role": "user", "content": f'Text: {pred}\nReturn JSON with key "claims".'}]})
    claims = json.loads(first["content"])["claims"]
    assert claims == ["The bridge opened in 1937.", "It is red."]
    prompt = f"Context: {' '.join(ctx)}\nClaims: {json.dumps(claims)}\nReturn JSON with key \"verdicts\"."
    second = json.loads(post(url, {"messages": [{"role": "user", "content": prompt}]})["content"])
    # two claims were listed: two verdicts, not one per context (three)
    assert second == {"verdicts": [{"analysis": REASON, "verdict": "yes"}] * 2}
    bare = {"messages": [{"role": "user", "content": f'{" ".join(ctx)}\n"verdicts"'}]}
    third = json.loads(post(url, bare)["content"])
    assert len(third["verdicts"]) == 3  # verdicts over the contexts, with no list answered before


def test_forced_tool_with_refs_and_schema_in_prompt(recorder):
    url = recorder.url("ragas", "context_recall")
    schema = {"$defs": {"V": {"type": "object", "properties": {"statement": {"type": "string"},
                                                               "reason": {"type": "string"},
                                                               "attributed": {"type": "integer", "minimum": 0}}}},
              "type": "object", "properties": {"classifications": {"type": "array", "items": {"$ref": "#/$defs/V"}}}}
    msg = post(url, {"messages": [{"role": "user", "content": f"Answer: {EXAMPLES[0]['reference']}"}],
                     "tools": [{"type": "function", "function": {"name": "Out", "parameters": schema}}],
                     "tool_choice": {"type": "function", "function": {"name": "Out"}}})
    call = msg["tool_calls"][0]["function"]
    assert call["name"] == "Out"
    assert json.loads(call["arguments"]) == {"classifications": [
        {"statement": "It opened on May 27, 1937.", "reason": REASON, "attributed": 0}]}
    prompt = (f"Question: {EXAMPLES[0]['query']}\nAnswer: {EXAMPLES[0]['prediction']}\nPlease return the output in "
              'a JSON format that complies with the following schema as specified in JSON Schema:\n'
              '{"properties": {"questions": {"type": "array", "items": {"type": "string"}}}, "type": "object"}'
              "\nDo not use single quotes in your response but double quotes.")
    out = json.loads(post(url, {"messages": [{"role": "user", "content": prompt}],
                                "response_format": {"type": "json_object"}})["content"])
    assert out == {"questions": ["The bridge opened in 1937.", "It is red."]}
    assert len(recorder.run("ragas", "context_recall").requests) == 2


def test_blackhole_lists_a_request_for_anywhere_else():
    from tokens_vs_peers import Blackhole

    hole = Blackhole()
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": hole.url}))
        with pytest.raises(OSError):
            opener.open("http://example.org/telemetry", timeout=5)
    finally:
        hole.sock.close()
    assert hole.take() == ["GET http://example.org/telemetry HTTP/1.1"]
