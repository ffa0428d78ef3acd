"""The judge backends of other providers, each against a loopback server that speaks that
provider's wire format (tests/chat_server.py): Azure OpenAI, Anthropic's Messages API, Gemini's
OpenAI-compatible endpoint, and Bedrock through the CallableJudge recipe with a stand-in client.
Each keeps the engine's guarantees: concurrency, cache, retries that wait what the provider says,
usage, fatal errors that stop the run at once, redaction, cut-off answers never used, and 20%
injected faults that never change a score."""

import json
import re
import time
from pathlib import Path

import pytest

import textgen_metrics
from chat_server import AnthropicServer, AzureServer, ChatServer, GeminiServer
from judge_faults import BLOCK, FAULTS, examples, good_answer, run_faults
from textgen_metrics.judges import (
    AnthropicJudge,
    AzureOpenAIJudge,
    GeminiJudge,
    JudgeFatalError,
    JudgeRequest,
    OpenAIJudge,
    get_judge,
)
from textgen_metrics.judges.bedrock import BedrockConverse, converse_judge
from textgen_metrics.llm.prompts import SYSTEM

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-provider-SECRET-31c7"
SCHEMA = {"type": "object", "required": ["reason", "verdict"], "additionalProperties": False,
          "properties": {"reason": {"type": "string"}, "verdict": {"type": "string", "enum": ["yes", "no"]}}}
GOOD = '{"reason": "it says so", "verdict": "yes"}'
FAST = {"backoff": 0.01}  # Retry-After waits are capped at 4 x max_backoff (default 30 s)


def request(i=0, **kw):
    return JudgeRequest([{"role": "system", "content": "Be a judge."}, {"role": "user", "content": f"question {i}"}],
                        schema=SCHEMA, task="test/verdict", **kw)


def no_secret(*texts):
    for text in texts:
        assert SECRET not in text


# -- Azure OpenAI ------------------------------------------------------------------------------

def test_azure_deployment_url_api_key_header_and_environment(monkeypatch):
    with AzureServer(lambda body: GOOD, key=SECRET) as srv:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", srv.url + "/")
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_API_VERSION", "2024-06-01")
        judge = get_judge("azure:judge-deployment", **FAST)
        assert isinstance(judge, AzureOpenAIJudge)
        [res] = judge.judge([request()])
        assert res.ok and res.value == {"reason": "it says so", "verdict": "yes"}
        assert srv.paths[-1] == "/openai/deployments/judge-deployment/chat/completions?api-version=2024-06-01"
        headers = srv.headers[-1]
        assert headers["api-key"] == SECRET and "Authorization" not in headers
        assert headers["X-Textgen-Task"] == "test/verdict"
        assert srv.bodies[-1]["response_format"]["type"] == "json_schema"
        assert judge.usage_dict()["requests"] == 1 and res.prompt_tokens > 0
        monkeypatch.delenv("OPENAI_API_VERSION")
        other = AzureOpenAIJudge("judge-deployment", endpoint=srv.url + "/openai", api_key=SECRET)
        assert other.judge([request()])[0].ok
        assert srv.paths[-1].endswith("api-version=" + AzureOpenAIJudge.default_api_version)
        # a Microsoft Entra token instead of a key: sent as a bearer token, and redacted as a secret
        token = AzureOpenAIJudge("judge-deployment", endpoint=srv.url, api_key="", azure_ad_token="entra-token-123")
        assert token.redact("x entra-token-123 y") == "x [REDACTED] y"


def test_azure_waits_retry_after_ms_and_reads_its_errors(monkeypatch):
    with AzureServer(lambda body: GOOD, key=SECRET) as srv:
        judge = AzureOpenAIJudge("judge-deployment", endpoint=srv.url, api_key=SECRET, **FAST)
        status, payload, headers = srv.rate_limited(0.3)
        srv.faults.append(("raw", status, payload, dict(headers, **{"retry-after": "3"})))
        start = time.perf_counter()
        [res] = judge.judge([request()])
        waited = time.perf_counter() - start
        assert res.ok and (res.requests, res.retries) == (2, 1)
        assert headers["retry-after-ms"] == "300" and 0.3 <= waited < 2.5  # the milliseconds, not the seconds
        # content filter: that request's error, as an HTTP 400 or as a filtered answer
        srv.faults.append(("status", 400, "The response was filtered due to the prompt triggering Azure OpenAI's "
                                          "content management policy."))
        [res] = judge.judge([request(1)])
        assert res.error and "content management policy" in res.error
        filtered = {"choices": [{"index": 0, "finish_reason": "content_filter",
                                 "message": {"role": "assistant", "content": None}}], "usage": {}}
        srv.faults.append(("raw", 200, filtered))
        [res] = judge.judge([request(2)])
        assert "content filter stopped the answer" in res.error and srv.count == 4


@pytest.mark.parametrize("case, expect", [
    ("no endpoint", "no Azure OpenAI endpoint: set AZURE_OPENAI_ENDPOINT"),
    ("no key", "set AZURE_OPENAI_API_KEY"),
    ("wrong key", "authentication failed"),
    ("unknown deployment", "deployment 'no-such-deployment' not found"),
])
def test_azure_failures_that_repeat_stop_the_run_at_once(case, expect, monkeypatch, capsys):
    for var in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    with AzureServer(good_answer, key=SECRET) as srv:
        options = {"endpoint": srv.url, "api_key": SECRET, "concurrency": 4, **FAST}
        deployment = "judge-deployment"
        if case == "no endpoint":
            options.pop("endpoint")
        elif case == "no key":
            options.pop("api_key")
        elif case == "wrong key":
            options["api_key"] = SECRET + "-old"
        else:
            deployment = "no-such-deployment"
        preds, ctxs = examples(40)
        start = time.perf_counter()
        with pytest.raises(JudgeFatalError, match=expect) as e:
            textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=f"azure:{deployment}",
                                         judge_options=options)
        assert time.perf_counter() - start < 10 and srv.count <= 4
    no_secret(str(e.value), capsys.readouterr().err)


# -- Anthropic ---------------------------------------------------------------------------------

def test_anthropic_messages_wire_format_tool_answer_and_environment(monkeypatch):
    with AnthropicServer(lambda body: GOOD, key=SECRET) as srv:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url)
        judge = get_judge("anthropic:claude-test", seed=3, **FAST)
        assert isinstance(judge, AnthropicJudge) and judge.judge_mode == "tool"
        [res] = judge.judge([request()])
        assert res.ok and res.value == {"reason": "it says so", "verdict": "yes"}
        body, headers = srv.bodies[-1], srv.headers[-1]
        assert srv.paths[-1] == "/v1/messages"
        assert headers["x-api-key"] == SECRET and headers["anthropic-version"] == "2023-06-01"
        assert "Authorization" not in headers and headers["X-Textgen-Task"] == "test/verdict"
        assert body["system"] == "Be a judge." and body["messages"] == [{"role": "user", "content": "question 0"}]
        assert body["max_tokens"] == 4096 and body["temperature"] == 0.0 and "seed" not in body
        assert body["tools"][0]["input_schema"] == SCHEMA and body["tools"][0]["name"] == "test_verdict"
        assert body["tool_choice"] == {"type": "tool", "name": "test_verdict"}
        usage = judge.usage_dict()
        assert usage["requests"] == 1 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_anthropic_through_a_metric_with_re_asks_cut_offs_and_cache(tmp_path):
    preds, ctxs = examples(12, seed=4)
    with AnthropicServer(good_answer, key=SECRET, latency=0.02) as srv:
        options = {"base_url": srv.url, "api_key": SECRET, "cache": str(tmp_path / "c.sqlite"), **FAST}
        # one answer in prose (asked again, the conversation alternating user and assistant),
        # one cut off at the token limit (never used: asked again with twice the budget)
        srv.faults.extend([("answer", "I think the claims are fine."), ("length", '{"claims": ["x"', 4096)])
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="anthropic:claude-test",
                                           judge_options=options, use_aggregator=False)
        assert out["errors"] == [] and out["judge_mode"] == "tool" and srv.max_in_flight > 1
        with ChatServer(good_answer) as ref:
            want = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:ref",
                                                judge_options={"base_url": ref.url, "api_key": "k"},
                                                use_aggregator=False)
        assert out["faithfulness"] == want["faithfulness"]
        grown = [b for b in srv.bodies if b["max_tokens"] == 8192]
        assert len(grown) == 1 and "Keep every reason to one short sentence" in grown[0]["system"]
        re_asked = [b for b in srv.bodies if len(b["messages"]) == 3]
        assert re_asked and [m["role"] for m in re_asked[0]["messages"]] == ["user", "assistant", "user"]
        count = srv.count
        again = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="anthropic:claude-test",
                                             judge_options=options, use_aggregator=False)
        assert again["faithfulness"] == out["faithfulness"] and srv.count == count
        assert again["judge_usage"]["requests"] == 0 and again["judge_usage"]["cached"] > 0
    no_secret((tmp_path / "c.sqlite").read_bytes().decode("latin-1"))


def test_anthropic_rate_limits_overload_and_spend_limit():
    with AnthropicServer(lambda body: GOOD, key=SECRET) as srv:
        judge = AnthropicJudge("claude-test", base_url=srv.url, api_key=SECRET, **FAST)
        # 429 with retry-after, then 529 overloaded: both retried, the wait honoured
        srv.faults.extend([("429", 0.3), "500"])
        start = time.perf_counter()
        [res] = judge.judge([request()])
        assert res.ok and (res.requests, res.retries) == (3, 2) and time.perf_counter() - start >= 0.3
        # a 429 with no retry-after: wait until the exhausted limit resets
        import datetime

        reset = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=0.5)).isoformat()
        status, payload = srv.error(429, "Number of request tokens has exceeded your per-minute rate limit")
        srv.faults.append(("raw", status, payload, {"anthropic-ratelimit-tokens-remaining": "0",
                                                    "anthropic-ratelimit-tokens-reset": reset,
                                                    "anthropic-ratelimit-requests-remaining": "12"}))
        start = time.perf_counter()
        [res] = judge.judge([request(1)])
        assert res.ok and res.retries == 1 and time.perf_counter() - start >= 0.35
        # the monthly spend limit: no retry can help, the run stops at once
        spend = {"type": "error", "error": {"type": "rate_limit_error", "message": "You have reached your "
                                            "specified spend limit.", "details": {
                                                "error_code": "enforced_spend_limit_reached"}}}
        srv.faults.append(("raw", 429, spend))
        count = srv.count
        with pytest.raises(JudgeFatalError, match="out of quota .*spend limit.*no retry can help"):
            judge.judge([request(2)])
        assert srv.count == count + 1


@pytest.mark.parametrize("status, message, expect", [
    (401, "invalid x-api-key {key}", "authentication failed"),
    (403, "Your API key does not have permission to use the specified resource.", "access denied"),
    (404, "model: claude-nope", "model 'claude-test' not found"),
    (402, "Your credit balance is too low to access the Anthropic API.", "payment required"),
])
def test_anthropic_errors_that_repeat_stop_the_run(status, message, expect, capsys):
    with AnthropicServer(good_answer) as srv:
        srv.fault_fn = lambda body, task: ("status", status, message)
        preds, ctxs = examples(30)
        start = time.perf_counter()
        with pytest.raises(JudgeFatalError, match=expect) as e:
            textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="anthropic:claude-test",
                                         judge_options={"base_url": srv.url, "api_key": SECRET, "concurrency": 4})
        assert time.perf_counter() - start < 10 and srv.count <= 4
    no_secret(str(e.value), capsys.readouterr().err)


def test_anthropic_without_a_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(JudgeFatalError, match="no API key for https://api.anthropic.com: set ANTHROPIC_API_KEY"):
        textgen_metrics.bias(predictions=["x"], judge="anthropic:claude-3-5-haiku-latest")


def test_anthropic_without_tools_falls_back_to_text_and_refusals_fail_one_example():
    preds, ctxs = examples(6, seed=8)
    with AnthropicServer(good_answer, reject={"tool"}) as srv:
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="anthropic:claude-test",
                                           judge_options={"base_url": srv.url, "api_key": SECRET},
                                           use_aggregator=False)
        assert out["errors"] == [] and out["judge_mode"] == "text"
        assert all(s is not None for s in out["faithfulness"]) and "tools" not in srv.bodies[-1]
    with AnthropicServer(good_answer) as srv:
        refusal = {"type": "message", "role": "assistant", "content": [], "stop_reason": "refusal",
                   "usage": {"input_tokens": 5, "output_tokens": 0}}
        srv.fault_fn = lambda body, task: ("raw", 200, refusal) if preds[1] in body["messages"][1]["content"] else None
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="anthropic:claude-test",
                                           judge_options={"base_url": srv.url, "api_key": SECRET},
                                           use_aggregator=False)
    assert out["faithfulness"][1] is None and sum(s is None for s in out["faithfulness"]) == 1
    assert "refused" in out["errors"][0]["error"]


# -- Gemini --------------------------------------------------------------------------------------

def doc_example(name):
    """The code block of docs/judges.md that follows the marker ``<!-- tested: name -->``."""
    text = (ROOT / "docs" / "judges.md").read_text(encoding="utf-8")
    match = re.search(rf"<!-- tested: {name} -->\s*```python\n(.*?)```", text, re.S)
    assert match, f"docs/judges.md has no tested example {name!r}"
    return match.group(1)


def test_gemini_documented_example_runs_against_the_openai_compatible_endpoint(monkeypatch):
    code = doc_example("gemini")
    with GeminiServer(good_answer, key=SECRET) as srv:
        monkeypatch.setenv("GEMINI_API_KEY", SECRET)
        code = code.replace(GeminiJudge.default_url + "/", srv.url + "/")
        assert srv.url in code  # the example names Gemini's real endpoint, here served on 127.0.0.1
        scope = {}
        exec(compile(code, "docs/judges.md", "exec"), scope)
        assert srv.paths and all(p == "/v1beta/openai/chat/completions" for p in srv.paths)
        assert all(h["Authorization"] == f"Bearer {SECRET}" for h in srv.headers)
        result = scope["result"]
        assert result["errors"] == [] and result["faithfulness"] == 0.5
        # the "gemini:" string: the same endpoint, the key from GEMINI_API_KEY
        again = textgen_metrics.faithfulness(predictions=["Paris is the capital of France."],
                                             contexts=[["Paris is the capital of France."]],
                                             judge="gemini:gemini-2.0-flash", judge_options={"base_url": srv.url})
        assert again["faithfulness"] == 1.0 and again["judge_model"] == "gemini-2.0-flash"
        assert isinstance(get_judge("gemini:gemini-2.0-flash", base_url=srv.url), GeminiJudge)


def test_gemini_retry_info_list_errors_and_rejected_key(monkeypatch, capsys):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(JudgeFatalError, match="set GEMINI_API_KEY"):
        GeminiJudge("gemini-2.0-flash")
    with GeminiServer(lambda body: GOOD, key=SECRET) as srv:
        judge = OpenAIJudge("gemini-2.0-flash", base_url=srv.url, api_key=SECRET, **FAST)
        srv.faults.append(("429", 0.4))  # no header: the wait is in the body's google.rpc.RetryInfo
        start = time.perf_counter()
        [res] = judge.judge([request()])
        assert res.ok and res.retries == 1 and time.perf_counter() - start >= 0.4
        srv.faults.append(("status", 500, "Internal error encountered."))
        [res] = judge.judge([request(1)])
        assert res.ok and res.retries == 1
        # an error list that is not retried: this request's error, with Google's message
        srv.faults.append(("status", 400, "Request contains an invalid argument."))
        [res] = judge.judge([request(2)])
        assert res.error.endswith("HTTP 400: Request contains an invalid argument.")
        # a rejected key is HTTP 400 there: fatal, as a 401, at once
        bad = OpenAIJudge("gemini-2.0-flash", base_url=srv.url, api_key=SECRET + "x")
        count = srv.count
        with pytest.raises(JudgeFatalError, match="authentication failed .*API key not valid") as e:
            bad.judge([request(i) for i in range(10)])
        assert srv.count - count <= bad.concurrency
        srv.faults.append(("status", 404, "models/gemini-9 is not found for API version v1beta"))
        with pytest.raises(JudgeFatalError, match="model 'gemini-9' not found"):
            GeminiJudge("gemini-9", base_url=srv.url, api_key=SECRET).judge([request(3)])
    no_secret(str(e.value), capsys.readouterr().err)


# -- 20% faults of every kind, in every wire format ---------------------------------------------

@pytest.mark.parametrize("wire", ["azure", "anthropic", "gemini"])
def test_faults_never_change_a_score_in_any_wire_format(wire, tmp_path):
    rerun = []
    counts, clean, faulty, injected = run_faults(list(FAULTS), n=150, rate=0.2, cache=str(tmp_path / "c.sqlite"),
                                                 rerun=rerun, wire=wire)
    assert all(injected[k] > 0 for k in FAULTS), injected
    assert clean["errors"] == [] and counts["wrong"] == 0
    assert counts["equal"] + counts["none_with_error"] == 150 and counts["equal"] >= 120
    again, _ = rerun
    assert again["faithfulness"] == clean["faithfulness"] and again["errors"] == []
    assert again["judge_usage"]["cached"] > 0


# -- Bedrock through CallableJudge ---------------------------------------------------------------

class ClientError(Exception):
    """What botocore raises: the error code in ``response["Error"]["Code"]``."""

    def __init__(self, code, message):
        super().__init__(f"An error occurred ({code}) when calling the Converse operation: {message}")
        self.response = {"Error": {"Code": code, "Message": message}}


class StandInBedrock:
    """A stand-in for boto3's bedrock-runtime client: checks the Converse request as Bedrock
    does and answers in Converse's shape with the OpenAI-style responder's text."""

    def __init__(self, responder, faults=()):
        self.responder = responder
        self.faults = list(faults)
        self.requests = []

    def converse(self, **request):
        self.requests.append(request)
        assert set(request) <= {"modelId", "messages", "system", "inferenceConfig"}, request
        assert all(m["role"] in ("user", "assistant") for m in request["messages"])
        assert all(set(block) == {"text"} for m in request["messages"] for block in m["content"])
        messages = [{"role": "system", "content": s["text"]} for s in request.get("system", [])] + [
            {"role": m["role"], "content": m["content"][0]["text"]} for m in request["messages"]]
        fault = self.faults.pop(0) if self.faults else None
        if isinstance(fault, Exception):
            raise fault
        text = self.responder({"messages": messages}, "")
        stop = "end_turn"
        if fault == "max_tokens":
            text, stop = text[: len(text) // 2], "max_tokens"
        return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": stop,
                "usage": {"inputTokens": 40, "outputTokens": 12, "totalTokens": 52}, "metrics": {"latencyMs": 5}}


def test_bedrock_recipe_with_a_stand_in_client(tmp_path):
    def responder(body, task):  # Bedrock carries no task id: the request's data blocks tell the step
        blocks = {name for name, _, _ in BLOCK.findall(body["messages"][1]["content"])}
        return good_answer(body, "faithfulness/verdicts" if "claims" in blocks else "faithfulness/claims")

    preds, ctxs = examples(8, seed=6)
    client = StandInBedrock(responder, faults=["max_tokens", ClientError("ThrottlingException", "Rate exceeded")])
    judge = converse_judge(client, "anthropic.claude-3-5-haiku-20241022-v1:0", max_tokens=300, concurrency=4,
                           cache=str(tmp_path / "c.sqlite"))
    out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge, use_aggregator=False)
    with ChatServer(good_answer) as ref:
        want = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:ref",
                                            judge_options={"base_url": ref.url, "api_key": "k"}, use_aggregator=False)
    # the cut-off answer was asked again with twice the budget; the throttled call failed one example
    assert [r["inferenceConfig"]["maxTokens"] for r in client.requests].count(600) == 1
    assert client.requests[0]["system"][0]["text"] == SYSTEM
    assert client.requests[0]["inferenceConfig"]["temperature"] == 0.0
    assert len(out["errors"]) == 1 and "ThrottlingException" in out["errors"][0]["error"]
    assert all(s == w for s, w in zip(out["faithfulness"], want["faithfulness"], strict=True) if s is not None)
    assert out["judge_model"] == "anthropic.claude-3-5-haiku-20241022-v1:0"
    assert out["judge_usage"]["prompt_tokens"] == 40 * (out["judge_usage"]["requests"] - 1)  # one was throttled
    # a rerun asks again only for what failed
    before = len(client.requests)
    again = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge, use_aggregator=False)
    assert again["faithfulness"] == want["faithfulness"] and again["errors"] == []
    assert 0 < len(client.requests) - before <= 2
    # credentials that fail would fail every request: the run stops at once
    denied = StandInBedrock(responder, faults=[ClientError("AccessDeniedException", "not authorized")] * 50)
    with pytest.raises(JudgeFatalError, match="AccessDeniedException"):
        textgen_metrics.faithfulness(predictions=preds, contexts=ctxs,
                                     judge=converse_judge(denied, "m", concurrency=2), use_aggregator=False)
    assert len(denied.requests) <= 2
    with pytest.raises(TypeError, match="client: expected a boto3 bedrock-runtime client"):
        BedrockConverse(object(), "m")


def test_judge_strings_name_every_backend():
    from textgen_metrics.judges import BACKENDS

    assert set(BACKENDS) == {"openai", "azure", "anthropic", "gemini", "hf", "gguf", "tiny"}
    with pytest.raises(ValueError, match="unknown backend 'bedrock'.*'azure:...'.*'anthropic:...'.*'gguf:...'"):
        get_judge("bedrock:claude")


def test_the_judge_picker_of_the_spaces_takes_provider_strings(monkeypatch, tmp_path):
    from textgen_metrics.spaces import make_judge, run_playground

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with AnthropicServer(good_answer, key=SECRET) as srv:
        judge = make_judge(srv.url, "anthropic:claude-test", SECRET)
        assert isinstance(judge, AnthropicJudge) and judge.base_url == srv.url
        preds, ctxs = examples(3, seed=2)
        data = tmp_path / "rag.jsonl"
        data.write_text("\n".join(json.dumps({"prediction": p, "contexts": c})
                                  for p, c in zip(preds, ctxs, strict=True)))
        summary, _, _, report = run_playground(str(data), ["faithfulness"], "{}", "{}", judge)
        assert report["metrics"]["faithfulness"]["aggregate"]["judge_model"] == "claude-test"
        assert all(h["x-api-key"] == SECRET for h in srv.headers) and srv.count >= 3
    with AzureServer(good_answer) as srv:
        judge = make_judge(srv.url, "azure:judge-deployment", SECRET)
        assert isinstance(judge, AzureOpenAIJudge) and judge.base_url == srv.url
    assert type(make_judge("http://127.0.0.1:1/v1", "llama3:8b", "")) is OpenAIJudge  # an Ollama tag, not a provider
    with pytest.raises(JudgeFatalError, match="set ANTHROPIC_API_KEY"):
        make_judge("", "anthropic:claude-test", "")


@pytest.mark.parametrize("backend, option", [("azure:judge-deployment", "endpoint"),
                                             ("anthropic:claude-test", "base_url"),
                                             ("gemini:gemini-2.0-flash", "base_url")])
def test_a_refused_connection_stops_every_backend_at_once(backend, option):
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()  # nothing listens there
    start = time.perf_counter()
    with pytest.raises(JudgeFatalError, match=rf"cannot reach {re.escape(url)}.* \(connection refused\)"):
        textgen_metrics.toxicity(predictions=["a", "b"] * 10, judge=backend,
                                 judge_options={option: url, "api_key": SECRET})
    assert time.perf_counter() - start < 10


def _faithfulness_by_blocks(body, task):  # Bedrock carries no task id: the data blocks tell the step
    blocks = {name for name, _, _ in BLOCK.findall(body["messages"][1]["content"])}
    return good_answer(body, "faithfulness/verdicts" if "claims" in blocks else "faithfulness/claims")


_MADE = []  # the clients the factory made, in this process


def _stand_in_bedrock_client():
    """A module-level factory (it pickles by name): a stand-in client, recorded in ``_MADE``."""
    client = StandInBedrock(_faithfulness_by_blocks)
    _MADE.append(client)
    return client


def test_a_bedrock_judge_made_from_a_factory_goes_to_another_process_and_makes_its_own_client():
    import pickle

    _MADE.clear()
    judge = converse_judge(_stand_in_bedrock_client, "anthropic.claude-3-5-haiku-20241022-v1:0", concurrency=2)
    preds, ctxs = examples(3, seed=8)
    here = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge, use_aggregator=False)
    assert here["errors"] == [] and len(_MADE) == 1  # made once, on the first request
    clone = pickle.loads(pickle.dumps(judge))
    assert clone.fn._client is None  # the client did not travel
    there = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=clone, use_aggregator=False)
    assert there["faithfulness"] == here["faithfulness"] and len(_MADE) == 2
    assert _MADE[1] is not _MADE[0] and len(_MADE[1].requests) == len(_MADE[0].requests) > 0
    # a judge on a client itself says how to ship it
    on_client = converse_judge(StandInBedrock(good_answer), "anthropic.claude-3-5-haiku-20241022-v1:0")
    with pytest.raises(TypeError, match=r"functools.partial\(boto3.client"):
        pickle.dumps(on_client)
    with pytest.raises(TypeError, match="client: expected a boto3 bedrock-runtime client"):
        converse_judge(42, "anthropic.claude-3-5-haiku-20241022-v1:0")
