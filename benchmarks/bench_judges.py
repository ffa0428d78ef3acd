"""The judge engine against the ideal: 1,000 calls to a local chat-completions server with
50 ms latency, concurrency 16. Ideal = calls x latency / concurrency. The server runs as its
own process, as a real inference server would, and answers each request 50 ms after it arrived
while spending as little CPU as it can (``latency_server.py``), so the time over the ideal is the
client's. Then the same run again from the
cache: the server must see zero new calls. Also valor's way, one call at a time, on 100 calls,
and 200 faithfulness examples (claims, then verdicts) side by side with a sequential loop of the
same calls.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from common import print_table

CALLS, LATENCY, CONCURRENCY = 1000, 0.05, 16  # timed after a warm-up of CONCURRENCY calls
REPEATS = 3  # the 1,000-call run, each time with a new judge and cache: the median is reported
SCHEMA = {"type": "object", "required": ["verdicts"], "properties": {"verdicts": {
    "type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "string", "enum": ["yes", "no"]}}}}


class Server:
    def __init__(self, latency, *extra):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "latency_server.py")
        self.proc = subprocess.Popen([sys.executable, script, "--latency", str(latency), "--answer",
                                      '{"verdicts": ["yes", "no"]}', *extra],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()

    def stop(self):
        self.proc.stdin.close()
        stats = json.loads(self.proc.stdout.readline())
        self.proc.wait(10)
        return stats


def faithfulness_side_by_side(n=200):
    """n faithfulness examples (two calls each): our concurrent engine vs the same calls one at
    a time, as valor runs them."""
    import textgen_metrics
    from textgen_metrics.judges import OpenAIJudge
    from textgen_metrics.llm.prompts import PROMPTS, items_block

    preds = [f"Answer number {i}: the capital of France is Paris, which has many museums." for i in range(n)]
    ctx = [[f"Context {i}: Paris is the capital of France."] for i in range(n)]
    server = Server(LATENCY, "--faithfulness")
    try:
        judge = OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=CONCURRENCY)
        start = time.perf_counter()
        ours = textgen_metrics.faithfulness(predictions=preds, contexts=ctx, judge=judge, use_aggregator=False)
        t_ours = time.perf_counter() - start
        # valor's loop: for each example, extract the claims, then ask for the verdicts
        seq = OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=1)
        start = time.perf_counter()
        for p, c in zip(preds, ctx, strict=True):
            [claims] = seq.judge([PROMPTS["faithfulness/claims"].request([("prediction", p)])])
            items = claims.value["claims"]
            seq.judge([PROMPTS["faithfulness/verdicts"].request(
                [("context_1", c[0]), ("claims", items_block(items))], {"verdicts": len(items)}, n=1)])
        t_seq = time.perf_counter() - start
    finally:
        stats = server.stop()
    assert ours["faithfulness"] == [0.5] * n and not ours["errors"]
    assert stats["count"] == 4 * n, stats
    return t_ours, t_seq


def main():
    from textgen_metrics.judges import JudgeRequest, OpenAIJudge

    reqs = [JudgeRequest([{"role": "user", "content": f"question {i}"}], schema=SCHEMA) for i in range(CALLS)]
    ideal = CALLS * LATENCY / CONCURRENCY
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(LATENCY)
        try:
            # one tiny warm-up call first (imports, the server's first answers), as every benchmark here
            warm = [JudgeRequest([{"role": "user", "content": f"warm-up {i}"}], schema=SCHEMA)
                    for i in range(CONCURRENCY)]
            OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=CONCURRENCY).judge(warm)
            times = []
            for rep in range(REPEATS):
                cache = os.path.join(tmp, f"judge-{rep}.sqlite")
                judge = OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=CONCURRENCY,
                                    cache=cache)
                start = time.perf_counter()
                first = judge.judge(reqs)
                times.append(time.perf_counter() - start)
                assert all(r.ok for r in first)
            t_first = sorted(times)[REPEATS // 2]
            again = OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=CONCURRENCY, cache=cache)
            start = time.perf_counter()
            second = again.judge(reqs)
            t_cached = time.perf_counter() - start
            seq = OpenAIJudge("bench", base_url=server.url, api_key="unused", concurrency=1)
            start = time.perf_counter()
            seq.judge(reqs[:100])
            t_seq100 = time.perf_counter() - start
        finally:
            stats = server.stop()
    assert all(r.ok for r in second)
    assert stats["count"] == CONCURRENCY + REPEATS * CALLS + 100, stats  # the cached rerun sent nothing
    rows = [
        [f"{CALLS} calls, concurrency {CONCURRENCY}, {LATENCY * 1000:.0f} ms latency (median of {REPEATS})",
         f"{t_first:.3f}", f"{t_first / ideal:.3f}x of ideal ({ideal:.3f} s; runs "
                           + ", ".join(f"{t / ideal:.3f}x" for t in times) + ")"],
        ["the same again, from the cache", f"{t_cached:.3f}",
         f"{again.usage.requests} calls sent, {again.usage.cached} cached"],
        ["one at a time (as valor), 100 calls", f"{t_seq100:.3f}",
         f"{t_seq100 * CALLS / 100 / t_first:.1f}x slower per call"],
    ]
    t_faith, t_faith_seq = faithfulness_side_by_side()
    rows.append(["faithfulness, 200 examples (400 calls), concurrency 16", f"{t_faith:.3f}", ""])
    rows.append(["the same calls one at a time (valor's loop)", f"{t_faith_seq:.3f}",
                 f"{t_faith_seq / t_faith:.1f}x slower than concurrent"])
    print_table("Judge engine (OpenAI-compatible server on 127.0.0.1, separate process)", rows,
                header=("run", "seconds", "result"))
    return {"seconds": t_first, "ideal": ideal, "ratio_to_ideal": t_first / ideal,
            "ratios_to_ideal": [t / ideal for t in times],
            "cached_seconds": t_cached, "cached_calls_sent": again.usage.requests,
            "max_in_flight": stats["max_in_flight"], "sequential_100_seconds": t_seq100,
            "faithfulness_200_seconds": t_faith, "faithfulness_200_sequential_seconds": t_faith_seq,
            "faithfulness_speedup": t_faith_seq / t_faith}


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(main(), indent=2))
