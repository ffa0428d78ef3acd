"""Judge backends against real parts: an HTTP server on 127.0.0.1 speaking chat-completions
(with scripted answers, latency and injected faults), sync and async callables, and a real
transformers pipeline over a tiny model built from a config in a temporary folder."""

import asyncio
import contextlib
import json
import logging
import multiprocessing
import threading
import time

import pytest

from chat_server import DIALECTS, SERVERS, ChatServer, request_schema, schema_answer
from textgen_metrics.judges import CallableJudge, JudgeCache, JudgeFatalError, JudgeRequest, OpenAIJudge, get_judge

SECRET = "sk-test-SECRET-4f9c2"
SCHEMA = {"type": "object", "required": ["verdicts"], "properties": {"verdicts": {
    "type": "array", "minItems": 2, "maxItems": 2,
    "items": {"type": "string", "enum": ["yes", "no"]}}}}
GOOD = '{"verdicts": ["yes", "no"]}'


def request(i=0, **kw):
    return JudgeRequest([{"role": "user", "content": f"question {i}"}], schema=SCHEMA, task="test/verdicts", **kw)


@pytest.fixture
def server():
    with ChatServer(lambda body: GOOD) as srv:
        yield srv


def judge_for(srv, **kw):
    kw.setdefault("backoff", 0.01)
    return OpenAIJudge("judge-model", base_url=srv.url, api_key=SECRET, **kw)


def test_structured_output_request_and_usage(server):
    j = judge_for(server, seed=7, max_tokens=64)
    [res] = j.judge([request()])
    assert res.ok and res.value == {"verdicts": ["yes", "no"]} and res.attempts == 1
    body = server.bodies[0]
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    items = rf["json_schema"]["schema"]["properties"]["verdicts"]
    assert items["items"]["enum"] == ["yes", "no"] and items["minItems"] == 2
    assert "maxItems" not in items  # OpenAI's strict mode takes no length bounds
    assert body["temperature"] == 0.0 and body["seed"] == 7 and body["max_tokens"] == 64
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert j.usage_dict() == {"requests": 1, "retries": 0, "cached": 0, "prompt_tokens": res.prompt_tokens,
                              "completion_tokens": res.completion_tokens, "cached_prompt_tokens": 0}
    assert server.headers[0]["X-Textgen-Task"] == "test/verdicts"
    assert rf["json_schema"]["name"] == "test_verdicts"
    assert res.prompt_tokens > 0 and res.completion_tokens > 0


def test_concurrency_is_the_number_in_flight():
    with ChatServer(lambda body: GOOD, latency=0.05) as srv:
        j = judge_for(srv, concurrency=6)
        start = time.perf_counter()
        results = j.judge([request(i) for i in range(36)])
        elapsed = time.perf_counter() - start
        assert all(r.ok for r in results)
        assert srv.max_in_flight == 6 and srv.count == 36
        assert elapsed < 36 * 0.05 / 2  # far below one at a time


def test_retries_429_with_retry_after_and_5xx(server):
    server.faults.extend([("429", 0.3), "500"])
    j = judge_for(server)
    start = time.perf_counter()
    [res] = j.judge([request()])
    assert res.ok and server.count == 3
    assert time.perf_counter() - start >= 0.3  # Retry-After honoured
    assert (res.requests, res.retries) == (3, 2) and j.usage_dict()["retries"] == 2


def test_retries_timeouts_dropped_connections_and_garbage(server):
    server.faults.extend([("hang", 1.5), "drop", "garbage"])
    j = judge_for(server, timeout=0.4)
    [res] = j.judge([request()])
    assert res.ok and server.count == 4


def test_gives_up_after_max_retries_and_keeps_the_other_results():
    with ChatServer(lambda body: GOOD) as srv:
        srv.faults.extend(["500"] * 3)
        j = judge_for(srv, max_retries=2, concurrency=1)
        results = j.judge([request(0), request(1)])
        assert results[0].error and "no usable answer after 3 tries (HTTP 500: internal error)" in results[0].error
        assert results[1].ok


def test_a_cut_off_answer_is_never_used_asked_again_with_a_larger_budget():
    with ChatServer(lambda body: GOOD) as srv:
        # cut off once: never parsed (its brackets would close into a valid-looking answer), asked
        # again with twice the budget and the instruction to keep reasons short
        srv.faults.append(("length", '{"verdicts": ["yes", "no"', 200))
        j = judge_for(srv, max_tokens=200)
        [res] = j.judge([request()])
        assert res.ok and res.value == {"verdicts": ["yes", "no"]} and srv.count == 2
        again = srv.bodies[-1]
        assert again["max_tokens"] == 400
        assert "Keep every reason to one short sentence" in again["messages"][0]["content"]
        assert (res.requests, res.retries) == (2, 0)
        # cut off twice: that request fails with the limit named, nothing of the answer is used
        srv.faults.extend([("length", '{"verdicts": ["yes", "no"]', 200), ("length", '{"verdicts": ["yes"', 400)])
        [res] = j.judge([request(1)])
        assert res.value is None and "cut off at 400 tokens" in res.error and srv.count == 4
        # without max_tokens, the budget grows from the tokens the server reports
        srv.faults.append(("length", '{"verdicts": [', 300))
        [res] = judge_for(srv).judge([request(2)])
        assert res.ok and srv.bodies[-1]["max_tokens"] == 600 and "max_tokens" not in srv.bodies[-2]


def test_a_cut_off_answer_is_never_cached(tmp_path):
    with ChatServer(lambda body: GOOD) as srv:
        srv.faults.extend([("length", '{"verdicts": ["yes"', 10), ("length", '{"verdicts": ["yes", "no"', 20)])
        path = str(tmp_path / "c.sqlite")
        [res] = judge_for(srv, cache=path, max_tokens=10).judge([request()])
        assert res.error and len(JudgeCache(path)) == 0
        [res] = judge_for(srv, cache=path, max_tokens=10).judge([request()])
        assert res.ok and srv.count == 3 and len(JudgeCache(path)) == 1


def _sent(body):
    """The dialect a request body used (as the judge reports it)."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_object":
        return "json_object_schema" if "schema" in fmt else "json_object"
    return fmt.get("type") or ("guided_json" if "guided_json" in body else "text")


@pytest.mark.parametrize("dialect_server", sorted(SERVERS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_dialect_is_found_on_a_server_that_speaks_only_it(dialect, dialect_server, caplog):
    """A server that speaks one dialect (and plain text): every stronger dialect is refused the
    way real servers refuse (HTTP 400, 422 or 500), never retried as a fault; the judge steps
    down once per refusal, logs each step once, asks the schema in the dialect it settled on,
    and remembers it for the rest of the run."""
    def responder(body):  # enforces the schema the way the server speaks it: an answer only when asked right
        schema = request_schema(body)
        if dialect in ("json_schema", "json_object_schema", "guided_json"):
            assert schema is not None and schema["properties"]["verdicts"]["minItems"] == 2
        return GOOD if dialect != "text" else "Sure! " + GOOD

    speaks = {dialect}
    with caplog.at_level(logging.WARNING, "textgen_metrics.judges"), \
            ChatServer(responder, speaks=speaks, dialect_server=dialect_server) as srv:
        j = judge_for(srv, max_retries=0)  # a refusal taken for a fault would fail at once
        [res] = j.judge([request()])
        assert res.ok and res.value == {"verdicts": ["yes", "no"]}
        steps = DIALECTS[:DIALECTS.index(dialect) + 1]
        assert [_sent(b) for b in srv.bodies] == list(steps)
        assert res.retries == 0 and res.requests == len(steps) and j.judge_mode == dialect
        assert len([r for r in caplog.records if " -> " in r.getMessage()]) == len(steps) - 1
        j.judge([request(1), request(2)])  # remembered: no more refusals
        assert [_sent(b) for b in srv.bodies[len(steps):]] == [dialect, dialect]


def test_requests_in_flight_together_step_down_once():
    with ChatServer(lambda body: GOOD, speaks={"guided_json"}, dialect_server="llama-cpp-python",
                    latency=0.05) as srv:
        j = judge_for(srv, concurrency=8, max_retries=0)
        results = j.judge([request(i) for i in range(8)])
        assert all(r.ok for r in results) and j.judge_mode == "guided_json"
        assert sum(r.retries for r in results) == 0


def test_a_new_judge_for_the_same_server_starts_at_the_dialect_it_speaks():
    import textgen_metrics

    def judge_answer(body, task):
        return json.dumps({"claims": []}) if task == "faithfulness/claims" else GOOD

    with ChatServer(judge_answer, speaks={"json_object_schema"}, dialect_server="llama-cpp-python") as srv:
        options = {"base_url": srv.url, "api_key": "k", "max_retries": 0}
        first = textgen_metrics.faithfulness(predictions=["a"], contexts=[["c"]], judge="openai:m",
                                             judge_options=options)
        assert first["judge_mode"] == "json_object_schema" and first["judge_usage"]["requests"] == 2
        again = textgen_metrics.faithfulness(predictions=["b"], contexts=[["c"]], judge="openai:m",
                                             judge_options=options)  # a new judge from the string
        assert again["judge_mode"] == "json_object_schema" and again["judge_usage"]["requests"] == 1
        assert [_sent(b) for b in srv.bodies] == ["json_schema", "json_object_schema", "json_object_schema"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_response_format_fixes_the_dialect(dialect):
    with ChatServer(lambda body: GOOD) as srv:  # speaks every dialect
        j = judge_for(srv, response_format=dialect)
        assert j.judge([request(), request(1)])[0].ok
        assert [_sent(b) for b in srv.bodies] == [dialect, dialect] and j.judge_mode == dialect


def test_length_bounds_go_to_grammar_dialects_not_to_strict_json_schema():
    schema = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 40},
                                               "items": {"type": "array", "maxItems": 3, "items": {"type": "string"}}}}
    req = JudgeRequest([{"role": "user", "content": "q"}], schema=schema, task="t")
    with ChatServer(lambda body: '{"reason": "r", "items": []}') as srv:
        for dialect in ("json_schema", "json_object_schema", "guided_json"):
            assert judge_for(srv, response_format=dialect).judge([req])[0].ok
        strict, llama, vllm = (request_schema(b) for b in srv.bodies)
    assert "maxLength" not in strict["properties"]["reason"] and "maxItems" not in strict["properties"]["items"]
    for sent in (llama, vllm):
        assert sent["properties"]["reason"]["maxLength"] == 40 and sent["properties"]["items"]["maxItems"] == 3
        assert sent["additionalProperties"] is False and sent["required"] == ["reason", "items"]


def test_a_fixed_dialect_the_server_refuses_stops_the_run_with_one_clear_error():
    with ChatServer(lambda body: GOOD, speaks={"json_object_schema"}, dialect_server="llama-cpp-python") as srv:
        j = judge_for(srv, response_format="json_schema", concurrency=1)
        with pytest.raises(JudgeFatalError, match=r"refuses the structured-output dialect 'json_schema'.*"
                                                  r"response_format='auto'"):
            j.judge([request(i) for i in range(5)])
        assert srv.count == 1
    with pytest.raises(ValueError, match="response_format: 'xml' is not one of"):
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", response_format="xml")


def test_a_server_error_that_is_no_refusal_is_still_a_fault_retried():
    with ChatServer(lambda body: GOOD) as srv:
        srv.faults.extend([("status", 500, "CUDA error: out of memory"), ("status", 503, "loading model")])
        j = judge_for(srv)
        [res] = j.judge([request()])
        assert res.ok and res.retries == 2 and j.judge_mode == "json_schema"


def test_a_context_overflow_answered_as_http_500_is_that_requests_error_not_retried():
    with ChatServer(lambda body: GOOD) as srv:  # llama-cpp-python answers a too-long prompt with HTTP 500
        srv.faults.append(("status", 500, "Requested tokens (5000) exceed context window of 4096"))
        [res, ok] = judge_for(srv, concurrency=1).judge([request(), request(1)])
        assert not res.ok and "longer than the model's context" in res.error and res.requests == 1
        assert ok.ok and j_mode_unchanged(srv)


def j_mode_unchanged(srv):
    return all(_sent(b) == "json_schema" for b in srv.bodies)


def test_invalid_answers_are_asked_again_then_reported_without_losing_others():
    def responder(body):
        content = body["messages"][0]["content"]
        if content.endswith("bad"):
            return '{"verdicts": ["yes", "maybe"]}'
        if content.endswith("late") and len(body["messages"]) == 1:
            return "I think yes and no."
        return GOOD

    with ChatServer(responder) as srv:
        j = judge_for(srv, max_parse_attempts=3, concurrency=4)
        reqs = [JudgeRequest([{"role": "user", "content": c}], schema=SCHEMA)
                for c in ("ok", "bad", "late")]
        ok, bad, late = j.judge(reqs)
        assert ok.ok and late.ok and late.attempts == 2
        assert (late.requests, late.retries, bad.requests) == (2, 0, 3)  # re-asks are requests sent
        assert j.usage.requests == srv.count == 6
        assert bad.value is None and bad.attempts == 3
        assert "invalid answer after 3 attempts" in bad.error and "'maybe' is not one of" in bad.error


def test_logprobs_are_requested_and_returned():
    lp = [{"token": "4", "logprob": -0.1, "top_logprobs": [{"token": "4", "logprob": -0.1},
                                                             {"token": "5", "logprob": -2.4}]}]
    with ChatServer(lambda body: {"content": '{"score": 4}', "logprobs": lp}) as srv:
        j = judge_for(srv)
        [res] = j.judge([JudgeRequest([{"role": "user", "content": "rate"}], logprobs=True, top_logprobs=5)])
        assert srv.bodies[0]["logprobs"] is True and srv.bodies[0]["top_logprobs"] == 5
        assert res.value == {"score": 4} and res.logprobs[0]["top_logprobs"][1] == {"token": "5", "logprob": -2.4}


def test_cache_makes_reruns_free_and_resumes_interrupted_runs(tmp_path, server):
    path = tmp_path / "cache.sqlite"
    reqs = [request(i) for i in range(6)]
    server.faults.extend(["500"] * 2)
    first = judge_for(server, cache=str(path), max_retries=0, concurrency=1).judge(reqs)
    assert [r.ok for r in first] == [False, False, True, True, True, True]  # "interrupted"
    sent = server.count
    again = judge_for(server, cache=str(path), max_retries=0)
    second = again.judge(reqs)
    assert all(r.ok for r in second)
    assert server.count - sent == 2  # only the two that failed are asked
    third = judge_for(server, cache=str(path)).judge(reqs)
    assert server.count - sent == 2 and all(r.cached == 1 and r.requests == 0 for r in third)
    # the key ignores the API key: another key hits the same entries
    other = OpenAIJudge("judge-model", base_url=server.url, api_key="sk-other", cache=str(path))
    other.judge(reqs)
    assert other.usage.cached == 6 and other.usage.requests == 0


def test_staged_answers_are_seen_at_once_and_stored_in_batches(tmp_path):
    path = str(tmp_path / "staged.sqlite")
    cache = JudgeCache(path)
    for i in range(JudgeCache.STAGE_LIMIT * 2 + 5):
        cache.stage(f"k{i}", {"text": str(i)})
        assert cache.get(f"k{i}") == {"text": str(i)}  # before any write
    other = JudgeCache(path)  # another reader: the last, partial batch is not written before the flush
    assert other.get(f"k{JudgeCache.STAGE_LIMIT * 2}") is None
    cache.flush()
    assert len(other) == JudgeCache.STAGE_LIMIT * 2 + 5 and other.get("k132") == {"text": "132"}


def test_a_writer_that_cannot_open_the_file_turns_writing_off_and_the_run_goes_on(tmp_path, server):
    """The writer thread opens its own connection; when that fails (the file gone, no handles
    left) the run keeps its answers, says so once, and stores nothing more."""
    import sqlite3

    class NoWriter(JudgeCache):
        def _conn(self):
            if threading.current_thread() is not threading.main_thread():
                raise sqlite3.OperationalError("unable to open database file")
            return super()._conn()

    cache = NoWriter(str(tmp_path / "c.sqlite"))
    with pytest.warns(RuntimeWarning, match="writing to .*c.sqlite failed .*unable to open") as warned:
        results = judge_for(server, cache=cache).judge([request(i) for i in range(JudgeCache.STAGE_LIMIT + 3)])
    assert all(r.ok and r.value == {"verdicts": ["yes", "no"]} for r in results)
    assert len([w for w in warned if "c.sqlite" in str(w.message)]) == 1
    assert not cache.writable and len(JudgeCache(str(tmp_path / "c.sqlite"))) == 0


def test_answers_got_before_a_fatal_error_are_cached(tmp_path):
    """A run stopped by a fatal error (here the key revoked mid-run) keeps what it was answered:
    the rerun asks only for the rest."""
    path = str(tmp_path / "c.sqlite")
    with ChatServer(lambda body: GOOD) as srv:
        srv.faults.extend([None] * 5 + [("status", 401, "Incorrect API key provided")])
        with pytest.raises(JudgeFatalError, match="authentication failed"):
            judge_for(srv, cache=path, concurrency=1).judge([request(i) for i in range(8)])
        again = judge_for(srv, cache=path)
        results = again.judge([request(i) for i in range(8)])
    assert all(r.ok for r in results)
    assert again.usage.cached == 5 and again.usage.requests == 3


def _writer(path, start):
    cache = JudgeCache(path)
    for i in range(start, start + 200):
        cache.put(f"k{i}", {"text": str(i)})


def test_cache_is_safe_with_several_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, n * 200)) for n in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = JudgeCache(path)
    assert len(cache) == 600 and cache.get("k599") == {"text": "599"}


def test_api_key_never_leaks(tmp_path, server, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    server.faults.extend(["500"] * 4)
    j = judge_for(server, cache=str(tmp_path / "c.sqlite"), max_retries=1)
    results = j.judge([request(0), request(1), request(2)])
    texts = [repr(j), str(vars(j).get("base_url"))] + [repr(r) for r in results]
    texts += [r.error or "" for r in results]
    # a server that is not there: the connection error stops the run, without the key
    with pytest.raises(JudgeFatalError) as down:
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", api_key=SECRET, timeout=1).judge([request()])
    texts.append(str(down.value))
    out = capsys.readouterr()
    texts += [out.out, out.err, caplog.text, (tmp_path / "c.sqlite").read_bytes().decode("latin-1")]
    assert all(SECRET not in t for t in texts)
    assert any(r.error for r in results)  # the failure path was exercised


def test_environment_supplies_base_url_and_key(monkeypatch, server):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    j = get_judge("openai:env-model")
    assert j.judge([request()])[0].ok
    assert server.bodies[-1]["model"] == "env-model"
    assert server.headers[-1]["Authorization"] == f"Bearer {SECRET}"


def test_judge_strings_and_errors():
    with pytest.raises(ValueError, match="needs a judge; pass judge='openai:<model>'"):
        get_judge(None)
    with pytest.raises(ValueError, match="unknown backend 'claude'.*'openai:...'.*'hf:...'"):
        get_judge("claude:opus")
    with pytest.raises(ValueError, match="names no backend"):
        get_judge("gpt-4o")
    with pytest.raises(TypeError, match="judge: expected a string"):
        get_judge(42)
    with pytest.raises(ValueError, match="not-a-model/on-disk.*nothing is downloaded"):
        get_judge("hf:not-a-model/on-disk")


def test_callable_judges_sync_async_and_failures():
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def sync_fn(messages):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        if messages[0]["content"].endswith("3"):
            raise ConnectionError("backend down")
        return GOOD

    j = CallableJudge(sync_fn, concurrency=4)
    results = j.judge([request(i) for i in range(8)])
    assert state["max"] == 4
    assert [r.ok for r in results] == [True, True, True, False, True, True, True, True]
    assert "ConnectionError: backend down" in results[3].error

    async def async_fn(messages):
        await asyncio.sleep(0.01)
        return {"text": GOOD, "prompt_tokens": 10, "completion_tokens": 3}

    j = get_judge(async_fn)
    [res] = j.judge([request()])
    assert res.ok and res.prompt_tokens == 10 and j.usage.completion_tokens == 3


def test_sync_api_works_inside_a_running_event_loop():
    async def inside():
        return CallableJudge(lambda m: GOOD).judge([request()])

    [res] = asyncio.run(inside())
    assert res.ok


def test_price_table_gives_cost(server):
    j = judge_for(server, prices={"judge-model": (0.15, 0.60)})  # per million tokens
    j.judge([request(i) for i in range(3)])
    usage = j.usage_dict()
    assert usage["requests"] == 3
    assert usage["cost"] == pytest.approx((usage["prompt_tokens"] * 0.15 + usage["completion_tokens"] * 0.60) / 1e6)
    assert "cost" not in judge_for(server).usage_dict()


def test_identical_requests_in_flight_are_sent_once():
    with ChatServer(lambda body: GOOD, latency=0.1) as srv:
        j = judge_for(srv, concurrency=8)
        results = j.judge([request(1)] * 5 + [request(2)])
        assert all(r.ok for r in results) and srv.count == 2
        assert j.usage.requests == 2 and j.usage.cached == 4


def test_first_answer_timeout_stops_a_run_the_judge_never_answers_but_waits_for_a_slow_live_one():
    import socket as _socket

    listener = _socket.socket()  # accepts every connection, never answers
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted = []

    def accept_all():
        with contextlib.suppress(OSError):  # the listener closed below ends the loop
            while True:
                accepted.append(listener.accept()[0])

    threading.Thread(target=accept_all, daemon=True).start()
    try:
        j = OpenAIJudge("m", base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", api_key=SECRET,
                        concurrency=4, timeout=60, first_answer_timeout=1.0)
        start = time.monotonic()
        with pytest.raises(JudgeFatalError, match=r"at http://127.0.0.1:\d+/v1 \(model 'm'\) has answered no "
                                                  r"request within 1 s"):
            j.judge([request(i) for i in range(10)])
        assert time.monotonic() - start < 3 and accepted
    finally:
        listener.close()
        for conn in accepted:
            conn.close()
    # alive: the first answer comes at once, the others well after the deadline; all are waited for
    with ChatServer(lambda body: GOOD) as srv:
        srv.fault_fn = lambda body, task: None if srv.count == 1 else ("hang", 1.5)
        j = judge_for(srv, concurrency=2, first_answer_timeout=1.0)
        results = j.judge([request(i) for i in range(4)])
        assert all(r.ok for r in results) and srv.count == 4
    # a server slow to answer even its first request (one at a time, a long prompt) but that
    # answers a probe at once is alive: nothing stops
    with ChatServer(lambda body: GOOD) as srv:
        srv.fault_fn = lambda body, task: ("hang", 1.5)
        j = judge_for(srv, concurrency=2, first_answer_timeout=1.0)
        results = j.judge([request(i) for i in range(2)])
        assert all(r.ok for r in results) and srv.count == 2
    with pytest.raises(ValueError, match="first_answer_timeout: 0 must be a number of seconds > 0"):
        judge_for(srv, first_answer_timeout=0)


def test_an_answer_that_repeats_itself_is_asked_again_from_the_start():
    """Gemma 3 270M behind llama.cpp looped on an extraction until the schema's item bound; shown
    its own looping answer with the error, it looped again at every re-ask. A runaway list is asked
    again from the start: the first conversation, the error added to its task, the loop not shown."""
    import textgen_metrics
    from textgen_metrics.judges import JudgeRunawayError
    from textgen_metrics.llm.prompts import MIN_ITEM_LIMIT

    claims_bodies = []

    def responder(body, task):
        if task == "faithfulness/claims":
            claims_bodies.append(body)
            if len(claims_bodies) == 1:  # the first answer loops past what a short text can hold
                return json.dumps({"claims": ["The sky is blue."] * (MIN_ITEM_LIMIT + 1)})
            return '{"claims": ["The sky is blue.", "Grass is green."]}'
        return schema_answer(body)

    with ChatServer(responder) as srv:
        out = textgen_metrics.faithfulness(predictions=["The sky is blue. Grass is green."],
                                           contexts=[["The sky is blue."]], judge=judge_for(srv),
                                           use_aggregator=False)
    assert out["errors"] == [] and out["faithfulness"] == [0.5]  # verdicts yes, no
    first, again = (b["messages"] for b in claims_bodies)
    assert len(again) == len(first) and [m["role"] for m in again] == [m["role"] for m in first]
    assert again[0] == first[0] and again[-1]["content"].startswith(first[-1]["content"])
    note = again[-1]["content"][len(first[-1]["content"]):]
    assert "more than the text can hold" in note and "The sky is blue." not in note
    assert not any(m["role"] == "assistant" for m in again)
    # repeats discouraged while decoding, on the re-ask only
    assert "frequency_penalty" not in claims_bodies[0] and claims_bodies[1]["frequency_penalty"] == 0.5
    assert issubclass(JudgeRunawayError, textgen_metrics.judges.JudgeParseError)
