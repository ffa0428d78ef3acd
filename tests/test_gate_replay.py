"""Exact replay for CI (SPEC "Quality gates"): a recording is the judge cache's entries as sorted
JSON lines with the judge fingerprint (its model: the one the server says it ran); strict replay
sends nothing (no socket opened), a missing request names metric, item and repeat, another
fingerprint names both."""

import json
import socket

import pytest

import gate_sim as G
import textgen_metrics as tm
from chat_server import AnthropicServer, ChatServer, GeminiServer
from textgen_metrics import AnthropicJudge, CallableJudge, GeminiJudge, OpenAIJudge
from textgen_metrics.gates import ReplayFingerprintError, ReplayMissError
from textgen_metrics.judges.base import JudgeRequest
from textgen_metrics.judges.cache import resolve_cache

N = 40


def served(true, sd=0.1):
    stand_in = G.NoisyJudge(true, sd, seed=5)
    return ChatServer(lambda body, task: stand_in(body["messages"], task))


def openai_judge(url, **kw):
    return OpenAIJudge("sim-model", base_url=url, api_key="k-replay", backoff=0.01, concurrency=8, **kw)


def gate(judge, recording, mode, threshold=70, n=N, **kw):
    return tm.gate("g_eval", threshold, judge=judge, options=G.G_EVAL, predictions=G.predictions(n),
                   judge_replay=mode, judge_recording=recording, max_repeats=3, **kw)


@pytest.fixture
def block(monkeypatch):
    """``block()`` blocks the network from then on: every socket connected fails, and is
    counted in the list it returns."""
    opened = []

    def refuse(*args, **kwargs):
        opened.append(args)
        raise OSError("the network is blocked in this test")

    def start():
        monkeypatch.setattr(socket.socket, "connect", refuse)
        monkeypatch.setattr(socket, "create_connection", refuse)
        return opened

    return start


def test_strict_replay_sends_nothing_and_gives_the_recorded_verdict_byte_for_byte(tmp_path, block):
    recording = tmp_path / "judge.jsonl"
    n = 20  # HTTP requests are the slow part
    true = G.true_scores(n, 0.7, seed=2)
    with served(true) as srv:
        recorded = gate(openai_judge(srv.url), recording, "record", n=n)
        url, sent = srv.url, srv.count
    assert recorded.verdict == "inconclusive" and recorded.repeats == 3 and sent == 3 * n
    opened = block()
    replays = [gate(openai_judge(url), recording, "strict", n=n) for _ in range(2)]
    assert opened == [] and all(r.requests == 0 for r in replays)
    texts = [json.dumps(r.as_dict(), sort_keys=True) for r in replays]
    assert texts[0] == texts[1]
    assert {k: v for k, v in replays[0].as_dict().items() if k != "requests"} == \
        {k: v for k, v in recorded.as_dict().items() if k != "requests"}


def test_a_recording_is_sorted_json_lines_of_cache_entries_with_the_judge_fingerprint(tmp_path):
    recording = tmp_path / "judge.jsonl"
    judge = CallableJudge(G.NoisyJudge(G.true_scores(N, 0.9), 0.1, 1), model="noisy-sim")
    gate(judge, recording, "record", threshold=50)
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    assert len(lines) == N and [x["key"] for x in lines] == sorted(x["key"] for x in lines)
    assert set(lines[0]) == {"key", "answer", "judge"} and "score" in lines[0]["answer"]["text"]
    assert lines[0]["judge"] == {"metric": "g_eval", "backend": "callable", "model": "noisy-sim",
                                 "requested": "noisy-sim", "prompts": lines[0]["judge"]["prompts"], "decoding": {}}
    # another metric recorded into the same file keeps the first metric's lines
    tm.gate("bias", 0.9, judge=G.schema_judge(), predictions=["x"] * 3, judge_replay="record",
            judge_recording=recording, lower_is_better=True)
    metrics = [json.loads(line)["judge"]["metric"] for line in recording.read_text().splitlines()]
    assert metrics.count("g_eval") == N and metrics.count("bias") >= 1


def test_record_serves_from_and_fills_the_judge_cache(tmp_path):
    cache = tmp_path / "cache.sqlite"
    stand_in = G.NoisyJudge(G.true_scores(N, 0.9), 0.1, 1)
    gate(CallableJudge(stand_in, model="noisy-sim", cache=str(cache)), None, "off", threshold=50)
    calls = sum(stand_in.calls.values())
    recorded = gate(CallableJudge(stand_in, model="noisy-sim", cache=str(cache)), tmp_path / "r.jsonl", "record",
                    threshold=50)
    assert sum(stand_in.calls.values()) == calls and recorded.requests == 0  # every answer from the cache
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == N


def test_a_request_missing_from_the_recording_names_metric_item_and_repeat(tmp_path, block):
    recording = tmp_path / "judge.jsonl"
    judge = CallableJudge(G.NoisyJudge(G.true_scores(N, 0.9), 0.1, 1), model="noisy-sim")
    gate(judge, recording, "record", threshold=50)
    opened = block()
    with pytest.raises(ReplayMissError, match=r"metric 'g_eval', item 40, repeat 0: the request is not in the "):
        gate(judge, recording, "strict", threshold=50, n=N + 1)
    with pytest.raises(ReplayMissError, match=r"metric 'g_eval', item 0, .*repeat 1"):  # only repeat 0 recorded
        gate(judge, recording, "strict", threshold=90, repeats=2)
    assert opened == []


@pytest.mark.parametrize("other", [{"model": "another-model"}, {"temperature": 0.7}])
def test_a_recording_of_another_judge_fingerprint_names_both(tmp_path, other, block):
    recording = tmp_path / "judge.jsonl"
    true = G.true_scores(N, 0.9)
    with served(true) as srv:
        gate(openai_judge(srv.url), recording, "record", threshold=50)
        url = srv.url
    opened = block()
    settings = {"model": "sim-model", **other}
    judge = OpenAIJudge(settings.pop("model"), base_url=url, api_key="k-replay", **settings)
    with pytest.raises(ReplayFingerprintError) as info:
        gate(judge, recording, "strict", threshold=50)
    message = str(info.value)
    assert "recorded with the judge" in message and "replayed with the judge" in message
    key, value = next(iter(other.items()))
    assert json.dumps(value) in message and ('"sim-model"' in message)
    assert "k-replay" not in message and opened == []


def test_judge_options_reach_the_judge_of_a_judge_string(tmp_path):
    true = G.true_scores(10, 0.9)
    with served(true) as srv:
        result = tm.gate("g_eval", 50, judge="openai:sim-model", judge_options={"base_url": srv.url, "api_key": "k"},
                         options=G.G_EVAL, predictions=G.predictions(10), repeats=1)
        assert result.verdict == "pass" and srv.count == 10 == result.requests
    assert result.judge_fingerprint["decoding"]["base_url"] == srv.url


def test_strict_replay_without_a_recording_is_an_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match="judge_recording: .*missing.jsonl does not exist"):
        gate(G.schema_judge(), tmp_path / "missing.jsonl", "strict")


def test_gates_of_one_metric_share_a_recording_and_a_new_session_drops_stale_requests(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "run-1")  # one run (of any number of processes)
    recording = tmp_path / "judge.jsonl"
    judge = CallableJudge(G.NoisyJudge(G.true_scores(2 * N, 0.9), 0.1, 1), model="noisy-sim")
    first, second = G.predictions(2 * N)[:N], G.predictions(2 * N)[N:]
    for predictions in (first, second):
        tm.gate("g_eval", 50, judge=judge, options=G.G_EVAL, predictions=predictions, judge_replay="record",
                judge_recording=recording)
    assert len(recording.read_text().splitlines()) == 2 * N
    for predictions in (first, second):  # both replay from the one file
        replayed = tm.gate("g_eval", 50, judge=CallableJudge(G.NoisyJudge([], 0, 0), model="noisy-sim"),
                           options=G.G_EVAL, predictions=predictions, judge_replay="strict", judge_recording=recording)
        assert replayed.verdict == "pass" and replayed.requests == 0
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "run-2")  # a new run records the first gate only
    tm.gate("g_eval", 50, judge=judge, options=G.G_EVAL, predictions=first, judge_replay="record",
            judge_recording=recording)
    assert len(recording.read_text().splitlines()) == N


def test_the_judge_fingerprint_is_the_model_the_server_says_it_ran(tmp_path, block):
    recording, cache = tmp_path / "judge.jsonl", str(tmp_path / "cache.sqlite")
    n = 5  # HTTP requests are the slow part
    true = G.true_scores(n, 0.9)
    with served(true) as srv:
        srv.served_model = "sim-model-2026-01"  # asked for "sim-model", it says it ran this one
        recorded = gate(openai_judge(srv.url, cache=cache), recording, "record", threshold=50, n=n)
        url = srv.url
    assert recorded.judge_fingerprint["model"] == "sim-model-2026-01"
    assert recorded.judge_fingerprint["requested"] == "sim-model"
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    assert {(x["judge"]["model"], x["answer"]["model"]) for x in lines} == {("sim-model-2026-01",) * 2}
    opened = block()
    # the judge cache kept it with each answer: a cached answer says which model made it
    cached = openai_judge(url, cache=cache)
    off = gate(cached, None, "off", threshold=50, n=n)
    assert off.requests == 0 and off.judge_fingerprint == recorded.judge_fingerprint
    replayed = gate(openai_judge(url), recording, "strict", threshold=50, n=n)
    assert replayed.judge_fingerprint == recorded.judge_fingerprint and opened == []


def test_a_recording_replayed_against_a_server_that_now_runs_another_model_names_both(tmp_path):
    recording = tmp_path / "judge.jsonl"
    n = 5
    true = G.true_scores(n, 0.9)
    with served(true) as srv:
        srv.served_model = "sim-model-2026-01"
        gate(openai_judge(srv.url), recording, "record", threshold=50, n=n)
        srv.served_model = "sim-model-2026-02"  # the same name, another model behind it
        judge = openai_judge(srv.url)
        live = gate(judge, None, "off", threshold=50, n=n, repeats=1)
        assert live.judge_fingerprint["model"] == judge.served_model == "sim-model-2026-02"
        sent = srv.count
        with pytest.raises(ReplayFingerprintError) as info:
            gate(judge, recording, "strict", threshold=50, n=n)
        assert srv.count == sent  # strict replay sent nothing to find out
    message = str(info.value)
    assert '"model": "sim-model-2026-01"' in message.split("replayed with")[0]
    assert '"model": "sim-model-2026-02"' in message.split("replayed with")[1]
    assert "k-replay" not in message
    # a judge that has not answered live in this process cannot know: the recording is replayed
    fresh = gate(openai_judge(srv.url), recording, "strict", threshold=50, n=n)
    assert fresh.judge_fingerprint["model"] == "sim-model-2026-01"


@pytest.mark.parametrize("server, make", [
    (AnthropicServer, lambda url: AnthropicJudge("claude-x", base_url=url, api_key="k-served", backoff=0.01)),
    (GeminiServer, lambda url: GeminiJudge("gemini-x", base_url=url, api_key="k-served", backoff=0.01)),
    (ChatServer, lambda url: OpenAIJudge("sim-model", base_url=url, api_key="k-served", backoff=0.01)),
])
def test_each_wire_format_carries_the_served_model_into_the_answer_and_the_cache(tmp_path, server, make):
    cache = str(tmp_path / "cache.sqlite")
    request = JudgeRequest(messages=[{"role": "user", "content": "Is it so?"}], task="served/check")
    with server(lambda body: '{"verdict": "yes"}') as srv:
        srv.served_model = "served-2026-01"
        judge = make(srv.url)
        judge.cache = resolve_cache(cache)
        live = judge.judge([request])[0]
        assert live.ok and live.model == judge.served_model == "served-2026-01" and live.cached == 0
        again = make(srv.url)
        again.cache = resolve_cache(cache)
        hit = again.judge([request])[0]
    assert hit.cached == 1 and hit.model == "served-2026-01" and again.served_model is None


def _record_in_worker(path, worker, writes, start):
    """One pytest-xdist worker of a run writing its gates' entries into the shared recording."""
    from textgen_metrics.gates import replay

    fingerprint = {"metric": "g_eval", "backend": "callable", "model": "m", "requested": "m", "prompts": "p",
                   "decoding": {}}
    start.wait()  # every worker writes at once
    for i in range(writes):
        replay.write_recording(path, "g_eval", {f"w{worker}-{i:03d}": {"text": str(i)}}, fingerprint)


def test_the_workers_of_one_run_record_into_one_file_and_lose_no_line(tmp_path, monkeypatch):
    import multiprocessing

    recording, workers, writes = str(tmp_path / "judge.jsonl"), 4, 25
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "run-workers")  # inherited by the forked workers
    context = multiprocessing.get_context("fork")
    start = context.Barrier(workers)
    processes = [context.Process(target=_record_in_worker, args=(recording, w, writes, start))
                 for w in range(workers)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(60)
    assert [p.exitcode for p in processes] == [0] * workers
    keys = [json.loads(line)["key"] for line in (tmp_path / "judge.jsonl").read_text().splitlines()]
    assert keys == sorted(f"w{w}-{i:03d}" for w in range(workers) for i in range(writes))
    assert not list(tmp_path.glob("judge.jsonl.*"))  # no lock or temporary file left beside it
