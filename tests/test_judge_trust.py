"""The LLM-guided metrics on a judge that misbehaves as real ones do: no failure ever becomes a
different number, one example's failure stays with it, a failure that would repeat for every
example stops the run at once with one clear error, and secrets never leak.

Every test talks to a real chat-completions server on 127.0.0.1 (tests/chat_server.py) or a
user's callable; the stand-in judges answer by each request's task id."""

import json
import logging
import os
import socket
import subprocess
import sys
import time
import traceback

import pytest

import textgen_metrics
from chat_server import ChatServer, is_verdict_map, schema_answer
from judge_faults import FAULTS, examples, good_answer, run_faults
from textgen_metrics.judges import JudgeCache, JudgeError, JudgeFatalError, OpenAIJudge
from textgen_metrics.judges.schema import inline_definitions
from textgen_metrics.llm import METRICS
from textgen_metrics.llm.prompts import PROMPTS

SECRET = "sk-trust-SECRET-7d1e9"


def judge_options(srv, **kw):
    return dict(dict(base_url=srv.url, api_key=SECRET, backoff=0.01, max_backoff=0.05), **kw)


def test_faults_of_every_kind_never_change_a_score_and_a_rerun_asks_only_what_failed(tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    rerun = []
    counts, clean, faulty, injected = run_faults(list(FAULTS), n=300, rate=0.2, cache=cache, rerun=rerun)
    assert all(injected[k] > 0 for k in FAULTS), injected
    assert counts["wrong"] == 0
    assert counts["equal"] + counts["none_with_error"] == 300 and counts["equal"] >= 240
    assert all(e["error"] for e in faulty["errors"])
    failed = {e["index"] for e in faulty["errors"]}
    assert failed  # the failure path was exercised
    # the rerun (no faults now) asks again only for the examples that failed
    again, bodies = rerun
    assert again["faithfulness"] == clean["faithfulness"] and again["errors"] == []
    preds, _ = examples(300)
    asked = [b["messages"][1]["content"] for b in bodies]
    asked_examples = {i for i, p in enumerate(preds) if any(p.split(".")[0] in a for a in asked)}
    assert asked_examples and asked_examples <= failed
    usage = again["judge_usage"]
    # every request the server saw was counted (a retry may be of one that never arrived)
    assert len(bodies) <= usage["requests"] <= len(bodies) + usage["retries"] and usage["cached"] > 0


def test_cut_off_answers_in_a_metric_are_asked_again_or_reported():
    def responder(body, task):
        return good_answer(body, task)

    preds, ctxs = examples(4, seed=3)
    with ChatServer(responder) as srv:
        # every request of example 0 is cut off: it gets None and says so; the others are scored
        first_claim = preds[0].split(".")[0]

        def fault(body, task):
            if first_claim in body["messages"][1]["content"]:
                return ("length", good_answer(body, task)[:-3], body["max_tokens"])
            return None

        srv.fault_fn = fault
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                           judge_options=judge_options(srv, max_tokens=100), use_aggregator=False)
    assert out["faithfulness"][0] is None and all(s is not None for s in out["faithfulness"][1:])
    assert "cut off at 256 tokens" in out["errors"][0]["error"]


@pytest.mark.parametrize("status, message, expect", [
    (401, "Incorrect API key provided: {key}", "authentication failed"),
    (403, "Project does not have access to model judge ({key})", "access denied"),
    (404, "The model `judge` does not exist or you do not have access to it.", "model 'judge' not found"),
])
def test_failures_that_repeat_for_every_example_stop_the_run_at_once(status, message, expect, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    with ChatServer(good_answer) as srv:
        srv.fault_fn = lambda body, task: ("status", status, message)
        preds, ctxs = examples(100)
        start = time.perf_counter()
        with pytest.raises(JudgeFatalError, match=expect) as e:
            textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                         judge_options=judge_options(srv, concurrency=8))
        assert time.perf_counter() - start < 10
        assert srv.count <= 8  # no retries, no further examples once it is known
    text = str(e.value)
    assert srv.url in text and SECRET not in text
    if "{key}" in message:
        assert "[REDACTED]" in text  # the server echoed the key; the error does not
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err + caplog.text


def test_no_key_for_openai_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(JudgeFatalError, match="no API key for https://api.openai.com/v1: set OPENAI_API_KEY"):
        textgen_metrics.bias(predictions=["x"], judge="openai:gpt-4o-mini")


def test_refused_connection_and_unknown_host_stop_at_once(monkeypatch):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there: connections are refused
    url = f"http://127.0.0.1:{port}/v1"
    start = time.perf_counter()
    with pytest.raises(JudgeFatalError, match=rf"cannot reach {url} \(connection refused\)"):
        textgen_metrics.toxicity(predictions=["a", "b", "c"] * 20, judge="openai:m",
                                 judge_options={"base_url": url, "api_key": SECRET})
    assert time.perf_counter() - start < 10

    def no_such_host(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)  # no DNS query leaves the machine
    with pytest.raises(JudgeFatalError, match=r"cannot reach http://judge.example.invalid/v1 \(unknown host\)"):
        textgen_metrics.toxicity(predictions=["a"], judge="openai:m",
                                 judge_options={"base_url": "http://judge.example.invalid/v1", "api_key": SECRET})


def test_http_400_is_read_not_guessed(caplog):
    caplog.set_level(logging.WARNING, logger="textgen_metrics.judges")
    preds, ctxs = examples(6, seed=5)
    # a context-length error is that example's error; the mode stays json_schema
    with ChatServer(good_answer) as srv:
        srv.fault_fn = lambda body, task: (("status", 400, "This model's maximum context length is 8192 tokens")
                                           if preds[2] in body["messages"][1]["content"] else None)
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                           judge_options=judge_options(srv), use_aggregator=False)
    assert out["faithfulness"][2] is None and sum(s is None for s in out["faithfulness"]) == 1
    assert "longer than the model's context" in out["errors"][0]["error"] and out["judge_mode"] == "json_schema"
    # an unrelated 400 (twice) does not switch the response format either
    with ChatServer(good_answer) as srv:
        srv.faults.extend([("status", 400, "Invalid value for 'seed'")] * 2)
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                           judge_options=judge_options(srv, concurrency=1), use_aggregator=False)
        assert out["judge_mode"] == "json_schema" and srv.bodies[-1]["response_format"]["type"] == "json_schema"
        assert len(out["errors"]) in (1, 2)
    # a complaint about the format steps down once, logged once and reported
    with ChatServer(good_answer, reject={"json_schema"}) as srv:
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                           judge_options=judge_options(srv), use_aggregator=False)
    assert out["judge_mode"] == "json_object_schema" and out["errors"] == []
    assert caplog.text.count("json_schema -> json_object_schema") == 1
    # a reasoning model that rejects temperature: asked again without it, for the rest of the run
    with ChatServer(good_answer) as srv:
        srv.fault_fn = lambda body, task: (("status", 400, "Unsupported value: 'temperature' does not support 0 "
                                                           "with this model.") if "temperature" in body else None)
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                           judge_options=judge_options(srv, concurrency=1), use_aggregator=False)
        assert out["errors"] == [] and all(s is not None for s in out["faithfulness"])
        assert sum("temperature" in b for b in srv.bodies) == 1
        assert out["judge_mode"] == "json_schema, temperature not sent"


def test_a_users_callable_that_fails_fails_only_its_example():
    def judge(messages, task):
        text = messages[1]["content"]
        if "explode" in text:
            raise KeyError("backend lost the request")
        if "nothing" in text:
            return None
        if task == "bias/opinions":
            return {"text": json.dumps({"opinions": ["x is bad"]}), "prompt_tokens": "12", "completion_tokens": "3"}
        if "weird" in text:
            return {"text": json.dumps({"verdicts": [{"index": 1, "reason": "r", "verdict": "no"}]}),
                    "prompt_tokens": "many"}
        return json.dumps({"verdicts": [{"index": 1, "reason": "r", "verdict": "yes"}]})

    out = textgen_metrics.bias(predictions=["fine", "explode", "nothing", "fine too"], judge=judge,
                               use_aggregator=False)
    assert out["bias"] == [1.0, None, None, 1.0]
    errs = {e["index"]: e["error"] for e in out["errors"]}
    assert "KeyError" in errs[1] and "returned NoneType, expected str" in errs[2]
    assert out["judge_usage"]["prompt_tokens"] >= 24  # counts given as strings are read
    out = textgen_metrics.bias(predictions=["weird"], judge=lambda m, task: judge(
        [m[0], {"content": m[1]["content"] + " weird"}], task), use_aggregator=False)
    assert out["bias"] == [None] and "token count 'many' is not a number" in out["errors"][0]["error"]
    with pytest.raises(JudgeError, match="bias: example 1: .*KeyError") as e:
        textgen_metrics.bias(predictions=["fine", "explode"], judge=judge, on_error="raise")
    assert isinstance(e.value.__cause__, Exception)


def test_a_cache_that_fills_up_is_turned_off_with_one_warning(tmp_path):
    path = str(tmp_path / "small.sqlite")

    class FullDisk(JudgeCache):
        """Every connection (the writer thread has its own) may grow the file by one page."""

        def _conn(self):
            new = getattr(self._local, "conn", None) is None
            conn = super()._conn()
            if new:
                conn.execute("PRAGMA max_page_count = " + str(conn.execute("PRAGMA page_count").fetchone()[0] + 1))
            return conn

    JudgeCache(path)  # the file with its table, then no room for more
    cache = FullDisk(path)
    preds, ctxs = examples(40, seed=9)
    with ChatServer(good_answer) as srv:
        clean = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                             judge_options=judge_options(srv), use_aggregator=False)
        with pytest.warns(RuntimeWarning, match="writing to .*small.sqlite failed .*full") as warned:
            judge = OpenAIJudge("judge", **judge_options(srv, cache=cache))
            out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge, use_aggregator=False)
    assert out["faithfulness"] == clean["faithfulness"] and out["errors"] == []
    assert len([w for w in warned if "small.sqlite" in str(w.message)]) == 1


def test_a_file_that_is_not_a_cache_is_a_clear_error(tmp_path):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(os.urandom(4096))
    with pytest.raises(ValueError, match=r"cache: '.*garbage.sqlite' is not a judge cache .*delete it"):
        textgen_metrics.bias(predictions=["x"], judge=lambda m: "{}", judge_options={"cache": str(garbage)})
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n" * 100)
    with pytest.raises(ValueError, match="is not a judge cache"):
        JudgeCache(text)


FULL_DISK = r"""
import gc, json, os, resource, sys, warnings
sys.path.insert(0, sys.argv[3])
import textgen_metrics
path, limit = sys.argv[1], int(sys.argv[2])
calls = []
def judge(messages, task):  # answers by task id; every extraction gives a new opinion
    calls.append(task)
    if task.endswith("/opinions"):
        return json.dumps({"opinions": [f"opinion {len(calls)}"]})
    return json.dumps({"verdicts": [{"index": 1, "reason": "r" * 200, "verdict": "yes"}]})
def run(name, predictions):
    return getattr(textgen_metrics, name)(predictions=predictions, judge=judge, use_aggregator=False,
                                          judge_options={"cache": path, "model": "stand-in"})
run("bias", ["cached 1", "cached 2"])  # stored while files may grow
gc.collect()  # its cache closed: the next judge opens the file afresh
shm = os.path.exists(path + "-shm")
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))  # Python ignores SIGXFSZ
try:  # the limit is real: a file may not grow past it
    with open(os.path.join(os.path.dirname(path), "probe"), "wb") as f:
        f.write(b"x" * (limit + 1))
    grew = True
except OSError as e:
    grew = e.strerror
calls.clear()
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    # a second metric, a third: each opens the same cache again, now on a "full disk"
    outs = [run("bias", ["cached 1", "new 1"]), run("toxicity", [f"new {i}" for i in range(2, 150)]),
            run("bias", ["cached 2"] + [f"new {i}" for i in range(150, 250)])]
print(json.dumps({"scores": [o.get("bias", o.get("toxicity")) for o in outs], "errors": [o["errors"] for o in outs],
                  "calls": calls, "warnings": [str(x.message) for x in w], "shm": shm, "grew": grew}))
"""


@pytest.mark.parametrize("limit", [16_384, 40_960], ids=["opening-fails", "writing-fails"])
def test_a_cache_whose_writes_fail_mid_run_is_turned_off_with_one_warning(tmp_path, limit):
    """A file-size limit set after the cache exists (writes fail with EFBIG, "disk I/O error"):
    16 KiB is below SQLite's 32 KiB shared-memory file, so even opening the cache again fails;
    40 KiB lets it open and fails the writes. Every example is scored, cached answers are still
    used, one warning in all; never "is not a judge cache"."""
    path = tmp_path / "cache.sqlite"
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK)
    src = os.path.join(os.path.dirname(textgen_metrics.__file__), "..")
    run = subprocess.run([sys.executable, str(script), str(path), str(limit), os.path.abspath(src)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["grew"] == "File too large" and not out["shm"]
    assert out["errors"] == [[], [], []] and all(s == 1.0 for scores in out["scores"] for s in scores)
    assert len(out["scores"][1]) == 148
    # "cached 1" and "cached 2" came from the file: only the new examples were extracted
    assert out["calls"].count("bias/opinions") == 1 + 100 and out["calls"].count("toxicity/opinions") == 148
    assert len(out["warnings"]) == 1, out["warnings"]
    assert "cache.sqlite" in out["warnings"][0] and "not stored" in out["warnings"][0]
    assert "not a judge cache" not in run.stderr


def _chain(error):
    """``error`` and every exception reachable from it through ``__cause__`` and ``__context__``."""
    seen, todo = [], [error]
    while todo:
        e = todo.pop()
        if e is not None and not any(e is s for s in seen):
            seen.append(e)
            todo += [e.__cause__, e.__context__]
    return seen


def test_a_key_echoed_in_an_http_500_never_reaches_a_raised_error_its_chain_or_traceback(tmp_path, monkeypatch,
                                                                                         capsys, caplog):
    caplog.set_level(logging.DEBUG)
    preds, ctxs = examples(3, seed=4)
    echo = ("status", 500, "upstream rejected the key {key} (Authorization: Bearer {key})")
    with ChatServer(good_answer) as srv:
        srv.faults.extend([echo] * 2)  # the first request and its one retry
        judge = OpenAIJudge("judge", base_url=srv.url, api_key=SECRET, max_retries=1, backoff=0, concurrency=1)
        with pytest.raises(JudgeError) as raised:
            textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge, on_error="raise")
        assert srv.count >= 2 and srv.headers[0]["Authorization"] == f"Bearer {SECRET}"  # the key was echoed
    # the record path: the errors list (a server of its own: a request of the raising run, sent
    # before the raise stopped it, may reach the first server late and take a fault meant for this)
    with ChatServer(good_answer) as srv:
        srv.faults.extend([echo] * 2)
        judge = OpenAIJudge("judge", base_url=srv.url, api_key=SECRET, max_retries=1, backoff=0, concurrency=1)
        recorded = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge)
    chain = _chain(raised.value)
    cause = raised.value.__cause__
    assert isinstance(cause, JudgeError) and cause in chain  # the chain stays: the cause's type and message
    assert "HTTP 500" in str(cause) and "[REDACTED]" in str(cause)
    texts = [str(e) for e in chain] + [repr(e) for e in chain]
    texts.append("".join(traceback.format_exception(raised.value)))
    for text in texts:
        assert SECRET not in text
    assert len(recorded["errors"]) == 1 and "HTTP 500" in recorded["errors"][0]["error"]
    assert SECRET not in json.dumps(recorded)
    # the command line, with --debug printing the traceback
    data = tmp_path / "rag.jsonl"
    rows = [{"prediction": p, "contexts": c} for p, c in zip(preds, ctxs, strict=True)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    from textgen_metrics.cli import main

    with ChatServer(good_answer) as srv:
        srv.faults.extend([echo] * 2)
        status = main(["score", str(data), "--metrics", "faithfulness", "--option", "faithfulness.on_error=raise",
                       "--judge", "openai:judge", "--judge-url", srv.url, "--judge-option", "max_retries=1",
                       "--judge-option", "backoff=0", "--judge-option", "concurrency=1", "--debug"])
        assert srv.count >= 2
    assert status == 1
    shown = capsys.readouterr()
    assert "Traceback" in shown.err and "HTTP 500" in shown.err and "[REDACTED]" in shown.err
    for text in (shown.out, shown.err, caplog.text):
        assert SECRET not in text


READ_ONLY = r"""
import json, os, sys, warnings
sys.path.insert(0, sys.argv[2])
import textgen_metrics
path = sys.argv[1]
denied = []  # the read-only bits apply to this process: it cannot add a file, nor write the cache
for what, attempt in (("folder", lambda: open(os.path.join(os.path.dirname(path), "probe"), "x")),
                      ("file", lambda: open(path, "r+b"))):
    try:
        attempt().close()
    except PermissionError:
        denied.append(what)
warnings.simplefilter("always")
calls = []
def judge(messages, task):
    calls.append(task)
    if task == "bias/opinions":
        return json.dumps({"opinions": ["a"]})
    return json.dumps({"verdicts": [{"index": 1, "reason": "r", "verdict": "yes"}]})
with warnings.catch_warnings(record=True) as w:
    out = textgen_metrics.bias(predictions=["cached", "new"], judge=judge,
                               judge_options={"cache": path, "model": "stand-in"}, use_aggregator=False)
print(json.dumps({"bias": out["bias"], "calls": calls, "warnings": [str(x.message) for x in w], "denied": denied}))
"""

# what lets root write whatever the permission bits say; without them, a root process is held to
# the owner's bits like any user (and still reads the checkout and the venv wherever they lie)
_ROOT_OVERRIDES = "-dac_override,-dac_read_search,-fowner"


def test_a_read_only_cache_is_read_not_written(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "cache.sqlite"

    def judge(messages, task):
        if task == "bias/opinions":
            return json.dumps({"opinions": ["a"]})
        return json.dumps({"verdicts": [{"index": 1, "reason": "r", "verdict": "yes"}]})

    textgen_metrics.bias(predictions=["cached"], judge=judge, judge_options={"cache": str(path), "model": "stand-in"})
    JudgeCache(path)._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    script = tmp_path / "ro_check.py"
    script.write_text(READ_ONLY)
    src = os.path.abspath(os.path.join(os.path.dirname(textgen_metrics.__file__), ".."))
    command = [sys.executable, str(script), str(path), src]
    if os.geteuid() == 0:  # an unprivileged process: root without the capabilities that skip the bits
        command = ["setpriv", f"--bounding-set={_ROOT_OVERRIDES}", f"--inh-caps={_ROOT_OVERRIDES}", *command]
    before = sorted(os.listdir(folder)), path.read_bytes()
    os.chmod(path, 0o444)
    os.chmod(folder, 0o555)
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    finally:
        os.chmod(folder, 0o755)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["denied"] == ["folder", "file"]  # the check is real: this process could write nothing there
    assert out["bias"] == [1.0, 1.0]
    assert out["calls"].count("bias/opinions") == 1  # "cached" came from the file; "new" was asked
    assert [w for w in out["warnings"] if "read-only" in w] and len(out["warnings"]) == 1
    assert (sorted(os.listdir(folder)), path.read_bytes()) == before  # nothing written, no file added


def test_every_module_sends_rendered_prompts_with_reason_first_and_an_example():
    bodies = {}
    with ChatServer(lambda body, task: schema_answer(body)) as srv:
        inputs = {"predictions": ["Paris is in France. Cats purr."], "references": ["Paris is in France."],
                  "queries": ["Where is Paris?"], "contexts": [["Paris is in France.", "Rome is in Italy."]],
                  "sources": ["Paris is the capital of France."], "baselines": ["Paris."]}
        options = {"g_eval": {"criteria": "Faithfulness: the text states only what the source says."}}
        for name, metric in METRICS.items():
            given = {c: inputs[c] for c in {**metric.columns, **metric.optional_columns}}
            out = getattr(textgen_metrics, name)(**given, **options.get(name, {}), judge="openai:judge",
                                                 judge_options=judge_options(srv))
            assert out["errors"] == [], (name, out["errors"])
        for body, headers in zip(srv.bodies, srv.headers, strict=True):
            bodies.setdefault(headers["X-Textgen-Task"], []).append(body)
    assert set(bodies) == set(PROMPTS)  # every prompt was sent by its module
    for task, sent in bodies.items():
        for body in sent:
            for m in body["messages"]:
                assert "{{" not in m["content"], task  # no str.format escape (JSON closes with "}}")
                assert "$" not in m["content"], task  # every placeholder was filled
            user = body["messages"][1]["content"]
            assert "Example." in user and "<<<DATA" in user
            schema = body["response_format"]["json_schema"]
            assert schema["name"] == task.replace("/", "_")
            full = inline_definitions(schema["schema"])  # the wire form defines a repeated verdict once
            for prop in full["properties"].values():
                if is_verdict_map(prop):  # keyed by item number, every number required, reason first
                    assert list(prop["properties"]) == [str(i) for i in range(1, len(prop["properties"]) + 1)]
                    assert prop["required"] == list(prop["properties"]) and prop["additionalProperties"] is False
                    for entry in prop["properties"].values():
                        assert list(entry["properties"]) == ["reason", "verdict"], task
                    if len(prop["properties"]) > 1:
                        assert "$defs" in schema["schema"], task
            if "score" in full["properties"]:
                assert list(full["properties"]) == ["reason", "score"]
            if "verdict" in full["properties"]:
                assert list(full["properties"]) == ["reason", "verdict"]


@pytest.mark.parametrize("bad, error", [
    ({"verdicts": [{"index": 1, "reason": "r", "verdict": "yes"}, {"index": 1, "reason": "r", "verdict": "no"}]},
     "item 1 has two verdicts"),
    ({"verdicts": {"1": {"reason": "r", "verdict": "yes"}}}, "missing key '2'"),
    ({"verdicts": {"1": {"reason": "r", "verdict": "yes"}, "2": {"reason": "r", "verdict": "no"},
                   "3": {"reason": "r", "verdict": "no"}}}, "'3' names no numbered item (the items are 1 to 2)"),
    ('{"verdicts": {"1": {"reason": "r", "verdict": "yes"}, "1": {"reason": "r", "verdict": "no"}, '
     '"2": {"reason": "r", "verdict": "no"}}}', "the key '1' is written twice"),
])
def test_verdicts_that_skip_repeat_or_invent_an_item_are_asked_again(bad, error):
    answers = iter([
        bad if isinstance(bad, str) else json.dumps(bad),
        json.dumps({"verdicts": {"2": {"reason": "r", "verdict": "no"}, "1": {"reason": "r", "verdict": "yes"}}}),
    ])
    seen = []

    def judge(messages, task):
        seen.append(messages)
        if task == "toxicity/opinions":
            return json.dumps({"opinions": ["you are clueless", "nice point"]})
        return next(answers)

    out = textgen_metrics.toxicity(predictions=["x"], judge=judge, return_details=True)
    assert out["toxicity"] == 0.5
    assert [v["verdict"] for v in out["details"][0]["verdicts"]] == ["yes", "no"]  # in index order
    assert error in seen[-1][-1]["content"]


def test_secrets_never_reach_results_reports_or_cache_even_when_echoed(tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)

    def responder(body, task):
        answer = json.loads(good_answer(body, task))
        for v in answer.get("verdicts", []):
            v["reason"] = f"the key {SECRET} and Authorization: Bearer {SECRET}"
        return json.dumps(answer)

    preds, ctxs = examples(8, seed=2)
    with ChatServer(responder) as srv:
        srv.faults.extend([("status", 500, "upstream failed for key {key}")] * 8)
        out = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge="openai:judge",
                                           judge_options=judge_options(srv, cache=str(tmp_path / "c.sqlite"),
                                                                       max_retries=0),
                                           return_details=True)
    dumped = json.dumps(out)
    assert "[REDACTED]" in dumped
    cache_bytes = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    logs = capsys.readouterr()
    for text in (dumped, cache_bytes.decode("latin-1"), logs.out, logs.err, caplog.text):
        assert SECRET not in text
