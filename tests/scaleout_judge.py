"""Stand-in judges and generated inputs for the cluster tests (tests/test_ray_cluster.py,
tests/test_spark_cluster.py), importable by their worker processes (the tests put this folder on
the workers' PYTHONPATH).

``answer(messages, task)`` answers by the request's task id (``faithfulness/claims``,
``answer_relevance/verdicts``...), from the request's data blocks only: the items are the
prediction's sentences; an item's verdict is yes when its first word is in the context or the
query. G-Eval's score is
one more than the prediction's words modulo 5. ``respond(body, task)`` is the same for the
loopback ChatServer. :class:`KillOnce` is a
function judge that kills its own worker process at its first request while a marker file is
absent (it makes the file first): a worker lost mid-run, once per test.
"""

import json
import os
import random
import re
import signal
import time

BLOCK = re.compile(r"<<<DATA (\w+) (\d{9})>>>\n(.*?)\n<<<END \1 \2>>>", re.S)
WORDS = ("the cat sat on a mat dog ran fast slow red blue sky green tree river stone city light "
         "paris france capital people river bank old new").split()


def blocks(messages):
    return {name: text for name, _, text in BLOCK.findall(messages[1]["content"])}


def _verdicts(values):
    return json.dumps({"verdicts": {str(i): {"reason": f"r{i}", "verdict": v} for i, v in enumerate(values, 1)}})


def answer(messages, task):
    metric, step = task.split("/", 1)
    b = blocks(messages)
    if step in ("claims", "statements"):
        return json.dumps({step: [s.strip() for s in b["prediction"].split(".") if s.strip()]})
    if step == "verdicts":
        items = re.findall(r"^\d+\. (.*)$", b["claims" if metric == "faithfulness" else "statements"], re.M)
        against = " ".join(v for k, v in b.items() if k.startswith("context_") or k == "query").split()
        return _verdicts(["yes" if item.split()[0] in against else "no" for item in items])
    if task == "g_eval/score":  # a score from the prediction's length
        return json.dumps({"reason": "by length", "score": 1 + len(b["prediction"].split()) % 5})
    if task == "g_eval/steps":
        return json.dumps({"steps": ["Read the prediction.", "Rate it."]})
    raise AssertionError(f"no answer for task {task!r}")


def respond(body, task):
    return answer(body["messages"], task)


class KillOnce:
    """``answer`` as a function judge; its first request in a process kills that process
    (SIGKILL) while ``marker`` does not exist (it creates it first, so the run after it goes on)."""

    model = "stand-in"

    def __init__(self, marker=None):
        self.marker = marker

    def __call__(self, messages, task):
        if self.marker is not None and not os.path.exists(self.marker):
            with open(self.marker, "w") as f:
                f.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return answer(messages, task)


class KillAfter:
    """``answer`` as a function judge that logs each request it answers (one line per answer:
    its task and a hash of its messages, appended to ``log``) and kills its own worker process at
    its ``after + 1``-th request in that process while ``marker`` is absent: a worker lost after
    some of its answers were validated."""

    model = "stand-in"

    def __init__(self, marker=None, log=None, after=0):
        self.marker, self.log, self.after = marker, log, after
        self.asked = 0

    def __call__(self, messages, task):
        import hashlib

        self.asked += 1
        if self.marker is not None and self.asked > self.after and not os.path.exists(self.marker):
            with open(self.marker, "w") as f:
                f.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        out = answer(messages, task)
        if self.log is not None:
            digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]
            with open(self.log, "a") as f:
                f.write(f"{task} {digest}\n")
        return out


class Recording:
    """``answer`` as a function judge that appends ``<process id> <object id>`` to ``log`` at each
    request: which worker process, and which judge object in it, answered."""

    model = "stand-in"

    def __init__(self, log=None):
        self.log = log

    def __call__(self, messages, task):
        if self.log is not None:
            with open(self.log, "a") as f:
                f.write(f"{os.getpid()} {id(self)}\n")
        return answer(messages, task)


class StepsPerProcess:
    """``answer`` as a function judge whose G-Eval steps differ in every process and at every
    request (its process id and how many steps it has written): a judge asked for the steps in
    each worker would give each batch its own."""

    model = "stand-in"

    def __init__(self):
        self.written = 0

    def __call__(self, messages, task):
        if task == "g_eval/steps":
            self.written += 1
            return json.dumps({"steps": [f"Read the prediction (process {os.getpid()}, steps {self.written}).",
                                         "Rate it."]})
        return answer(messages, task)


class SlowOn:
    """``answer`` as a function judge that waits ``seconds`` before answering a request whose data
    holds the word ``word`` (rows made slow on purpose: their batch finishes last)."""

    model = "stand-in"

    def __init__(self, word, seconds):
        self.word, self.seconds = word, seconds

    def __call__(self, messages, task):
        if self.word in messages[1]["content"].split():
            time.sleep(self.seconds)
        return answer(messages, task)


class Jitter:
    """``answer`` as a function judge that waits a random 0 to ``seconds`` before each answer
    (unseeded: each run's batches finish, and reach the driver, in an order of their own)."""

    model = "stand-in"

    def __init__(self, seconds=0.02):
        self.seconds = seconds

    def __call__(self, messages, task):
        time.sleep(random.random() * self.seconds)
        return answer(messages, task)


def random_table(rng):
    """A table of 5 to 80 generated rows with 1 to 5 references a row, some far longer than the
    others (TER's mean reference lengths are then fractional, and their sum depends on the order)."""
    data = rows(rng.randint(5, 80), seed=rng.randrange(10**6))
    for r in data:
        extra = rng.randint(0, 2)
        r["references"] = r["references"] + [" ".join([r["references"][0]] * rng.randint(1, 4))] * extra
    return data


def assert_limits_shared(evaluate, library, rows_count):
    """The judge's ``concurrency=1`` and ``requests_per_minute=1200`` hold for all workers together
    by default and per worker with ``share_budget=False``: ``evaluate(judge_options, share_budget)``
    is the engine's faithfulness result, ``library(judge_options)`` the library's."""
    from chat_server import ChatServer

    with ChatServer(respond, latency=0.05) as slow:
        judge_options = {"base_url": slow.url, "api_key": "k", "concurrency": 1, "requests_per_minute": 1200}
        expected = library(judge_options)
        start = time.monotonic()
        got = evaluate(judge_options, True)
        elapsed = time.monotonic() - start
        assert got == expected
        assert slow.max_in_flight == 1  # one request at a time on the whole cluster
        assert elapsed >= (2 * rows_count - 1) / 20  # two requests per row at 20 a second for all workers
        slow.max_in_flight = 0
        assert evaluate(judge_options, False) == expected
        assert slow.max_in_flight == 2  # each worker its own request at a time


def assert_resumed_from_the_cache(got, expected, marker, log, rows_count):
    """A worker killed (``marker``) after some validated answers: none lost, none asked twice but,
    at most, the one answer the dying worker had received and not yet validated (one request in
    flight per worker), the rest read from the shared cache; the result equals the library's."""
    assert os.path.exists(marker) and int(open(marker).read()) != os.getpid()  # a worker process died
    with open(log) as f:
        answered = f.read().splitlines()
    assert len(set(answered)) == 2 * rows_count  # none lost
    assert len(answered) - len(set(answered)) <= 1
    usage = got["judge_usage"]
    assert usage["cached"] >= 4 and usage["requests"] + usage["cached"] >= 2 * rows_count
    assert {k: v for k, v in got.items() if k != "judge_usage"} == {
        k: v for k, v in expected.items() if k != "judge_usage"}


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))


def rows(n, seed=0):
    """``n`` generated rows: id, prediction (2-3 sentences), references (1-3), query, contexts (0-2)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append({
            "id": i,
            "prediction": ". ".join(sentence(rng) for _ in range(rng.randint(2, 3))) + ".",
            "references": [sentence(rng) for _ in range(rng.randint(1, 3))],
            "query": sentence(rng),
            "contexts": [sentence(rng) for _ in range(rng.randint(1, 2))],
        })
    return out


def columns(data):
    """The library's inputs of ``rows``: ``{input: values}``."""
    return {"predictions": [r["prediction"] for r in data], "references": [r["references"] for r in data],
            "queries": [r["query"] for r in data], "contexts": [r["contexts"] for r in data]}
