"""One worker of the cluster-judge tests: a process (multiprocessing, spawn) or a Ray task that
unpickles a judge shared by the driver (its budget and cache) and asks its share of requests.

Requests carry the task id ``cluster/verdict``; the loopback servers answer by it. Each
request's text names its row, so that every row is a request of its own (its own cache key)."""

import os
import pickle
import time

import aiohttp  # noqa: F401 (imported before the timed run: the judge's transport)

from textgen_metrics.judges import JudgeRequest

TASK = "cluster/verdict"
SCHEMA = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"type": "string",
                                                                             "enum": ["yes", "no"]}}}


def answer(body, task):
    """The stand-in judge's answer, by the request's task id."""
    return '{"verdict": "yes"}' if task == TASK else '{"unexpected": "task"}'


def requests(rows, pad=0):
    return [JudgeRequest([{"role": "user", "content": f"row {i}: is it fine?" + " x" * pad}], schema=SCHEMA,
                         task=TASK) for i in rows]


def run(judge_bytes, rows, pad=0):
    """Ask the rows' requests with the pickled judge; what came of them."""
    judge = pickle.loads(judge_bytes)
    start = time.perf_counter()
    results = judge.judge(requests(rows, pad))
    seconds = time.perf_counter() - start
    return {"pid": os.getpid(), "seconds": seconds, "ok": sum(r.ok for r in results),
            "errors": [r.error for r in results if not r.ok], "values": [r.value for r in results],
            "usage": judge.usage_dict()}


def run_to_queue(judge_bytes, rows, queue, pad=0):
    queue.put(run(judge_bytes, rows, pad))
