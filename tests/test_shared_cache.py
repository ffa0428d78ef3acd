"""The judge cache many workers share (``judges/shared_cache.py``, ``cache="dir:<folder>"``):
content-addressed with the SQLite cache's keys, written atomically by many processes at once,
write-through, so that a worker killed mid-run loses no validated answer and a rerun sends only
the requests never validated. Against a loopback chat server that counts requests."""

import multiprocessing
import os
import pickle
import time
import warnings

import pytest

import budget_worker
from budget_worker import SCHEMA, TASK, answer
from chat_server import ChatServer
from textgen_metrics.judges import JudgeCache, JudgeRequest, OpenAIJudge
from textgen_metrics.judges.cache import cache_key, resolve_cache
from textgen_metrics.judges.shared_cache import DirectoryCache

SECRET = "sk-shared-SECRET-31"


@pytest.fixture(autouse=True)
def cache_secret(monkeypatch):
    """The entries' signing secret from the environment (the spawned workers inherit it), not
    the key file of the user running the tests."""
    monkeypatch.setenv("TEXTGEN_METRICS_CACHE_KEY", "test_shared_cache's secret")


def judge_at(srv, cache, **kw):
    kw.setdefault("backoff", 0.01)
    return OpenAIJudge("judge-model", base_url=srv.url, api_key=SECRET, cache=cache, **kw)


def sent_rows(srv):
    """The rows of the requests the server got, in order."""
    return [int(b["messages"][0]["content"].split(":")[0].split()[1]) for b in srv.bodies]


def files(folder):
    return sorted(os.path.join(d, f) for d, _, names in os.walk(folder) for f in names)


def test_same_keys_as_the_sqlite_cache_and_no_secret(tmp_path):
    with ChatServer(answer) as srv:
        shared = judge_at(srv, f"dir:{tmp_path}/shared")
        sqlite = judge_at(srv, str(tmp_path / "c.sqlite"))
        reqs = budget_worker.requests(range(5))
        assert all(r.ok for r in shared.judge(reqs)) and all(r.ok for r in sqlite.judge(reqs))
    assert isinstance(shared.cache, DirectoryCache) and isinstance(sqlite.cache, JudgeCache)
    for r in reqs:
        key = cache_key("openai", "judge-model", r.messages, shared.settings(r))
        assert shared.cache.get(key) == sqlite.cache.get(key) is not None
        assert os.path.exists(os.path.join(tmp_path, "shared", key[:2], key[2:4], key + ".json"))
    stored = files(tmp_path / "shared")
    assert len(stored) == 5 and all(p.endswith(".json") for p in stored)
    assert not any(SECRET in open(p, encoding="utf-8").read() for p in stored)


def test_a_rerun_with_another_key_sends_nothing(tmp_path):
    with ChatServer(answer) as srv:
        judge_at(srv, f"dir:{tmp_path}").judge(budget_worker.requests(range(6)))
        assert srv.count == 6
        other = OpenAIJudge("judge-model", base_url=srv.url, api_key="sk-another-key", cache=DirectoryCache(tmp_path))
        results = other.judge(budget_worker.requests(range(6)))
        assert srv.count == 6 and [r.cached for r in results] == [1] * 6


def test_only_validated_answers_are_stored(tmp_path):
    """Odd rows ask a task the stand-in judge answers with no verdict: they fail, are not stored,
    and are the only ones a rerun asks again."""
    reqs = [JudgeRequest(r.messages, schema=SCHEMA, task=TASK if i % 2 == 0 else "cluster/unknown")
            for i, r in enumerate(budget_worker.requests(range(6)))]
    with ChatServer(answer) as srv:
        judge = judge_at(srv, f"dir:{tmp_path}", max_parse_attempts=2)
        results = judge.judge(reqs)
        assert [r.ok for r in results] == [True, False] * 3
        assert len(judge.cache) == 3
        before = srv.count
        judge.judge(reqs)
        assert sorted(set(sent_rows(srv)[before:])) == [1, 3, 5]


def test_a_failed_write_turns_writing_off_with_one_warning(tmp_path):
    cache = DirectoryCache(tmp_path)
    key = "ab" + "0" * 62
    with open(os.path.join(tmp_path, "ab"), "w") as f:  # where the fan-out folder should be: a file
        f.write("in the way")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache.put(key, {"text": "x"})
        cache.put("cd" + "0" * 62, {"text": "y"})
    assert not cache.writable and cache.get("cd" + "0" * 62) is None
    assert len([w for w in caught if "writing to" in str(w.message)]) == 1


def test_bad_cache_arguments_are_clear(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        resolve_cache(f"dir:{tmp_path}/file")
    with pytest.raises(ValueError, match="cache: give the folder"):
        resolve_cache("dir:")
    with pytest.raises(TypeError, match="'dir:<folder>'"):
        resolve_cache(42)


def test_many_writer_processes_then_a_rerun_sends_nothing(tmp_path):
    """Four processes ask the same 40 rows (each in its own order) at once into one folder:
    every answer lands whole, and a rerun of the 40 sends no request."""
    ctx = multiprocessing.get_context("spawn")
    folder = tmp_path / "shared"
    with ChatServer(answer, latency=0.01) as srv:
        blob = pickle.dumps(judge_at(srv, f"dir:{folder}", concurrency=4))
        queue = ctx.Queue()
        orders = [list(range(40)), list(range(39, -1, -1)), list(range(0, 40, 2)) + list(range(1, 40, 2)),
                  list(range(20, 40)) + list(range(20))]
        procs = [ctx.Process(target=budget_worker.run_to_queue, args=(blob, rows, queue)) for rows in orders]
        for p in procs:
            p.start()
        reports = [queue.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(30)
        assert [r["ok"] for r in reports] == [40] * 4
        first = srv.count
        assert 40 <= first <= 160
        stored = files(folder)
        assert len(stored) == 40 and not [p for p in stored if p.endswith(".tmp")]
        rerun = pickle.loads(blob).judge(budget_worker.requests(range(40)))
        assert srv.count == first and all(r.ok and r.cached == 1 for r in rerun)


def test_a_killed_worker_loses_no_validated_answer(tmp_path):
    """Exactly once at the judge level: a worker killed mid-run; the rerun sends only the requests
    whose answers were never validated, and its results equal a run without the failure."""
    ctx = multiprocessing.get_context("spawn")
    folder = tmp_path / "shared"
    rows = list(range(40))
    with ChatServer(answer, latency=0.05) as srv:
        blob = pickle.dumps(judge_at(srv, f"dir:{folder}", concurrency=2))
        victim = ctx.Process(target=budget_worker.run, args=(blob, rows))
        victim.start()
        deadline = time.monotonic() + 60
        while srv.count < 15 and time.monotonic() < deadline:
            time.sleep(0.005)
        victim.kill()
        victim.join()
        first = sent_rows(srv)
        cache = DirectoryCache(folder)
        judge = pickle.loads(blob)
        keys = {i: cache_key("openai", "judge-model", r.messages, judge.settings(r))
                for i, r in zip(rows, budget_worker.requests(rows), strict=True)}
        validated = {i for i in rows if cache.get(keys[i]) is not None}
        assert 10 <= len(validated) < 40  # killed mid-run, with answers kept
        assert validated <= set(first)
        results = judge.judge(budget_worker.requests(rows))
        again = sent_rows(srv)[len(first):]
    assert sorted(again) == sorted(set(rows) - validated)  # each never-validated row once, no other
    assert len(set(first) & set(again)) <= 2  # sent twice: only what was in flight at the kill
    with ChatServer(answer) as clean_srv:
        clean = judge_at(clean_srv, None).judge(budget_worker.requests(rows))
    assert [(r.ok, r.value) for r in results] == [(r.ok, r.value) for r in clean]
    assert sum(r.cached for r in results) == len(validated)


def test_schema_of_the_worker_requests_is_checked():
    """The stand-in answer is validated against the request's schema: a wrong task gets no
    verdict and fails (the other tests' answers are not taken on trust)."""
    with ChatServer(answer) as srv:
        judge = judge_at(srv, None, max_parse_attempts=1)
        [res] = judge.judge([JudgeRequest([{"role": "user", "content": "row 0: ?"}], schema=SCHEMA, task="other")])
        [good] = judge.judge([JudgeRequest([{"role": "user", "content": "row 0: ?"}], schema=SCHEMA, task=TASK)])
    assert not res.ok and good.ok
