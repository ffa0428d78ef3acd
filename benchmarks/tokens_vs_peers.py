"""Prompt and completion tokens per judged example: each LLM-guided module of ours against the same
metric in ragas, deepeval and valor-lite, on the same inputs, with no network.

Every tool's judge is pointed at one loopback OpenAI-compatible server (``token_recorder.py``,
127.0.0.1) that records every request and answers it by the structure the request asks for (its
JSON schema, forced tool, or the JSON keys its prompt names), with the same content rule for
every tool: one list item per item the request enumerates (else per sentence of the example's
text), a fixed 15-word reason, the first allowed verdict. Each recorded request is then counted
with one tokenizer, o200k_base (GPT-4o's, ``textgen_metrics.judges.prices``): prompt tokens =
the messages with OpenAI's chat framing plus the answer's JSON schema or tool definitions the
request carries (``chat_tokens``); completion tokens = the tokens of the minimal valid answer
the server gave, i.e. what each tool's request requires, not what a model would write. Embedding
requests (ragas' answer relevancy and correctness) are counted apart.

The peers run in their own interpreter (``--peers-python``, default ``.peers-venv``, which ``make
bench-peers`` makes: they pin an older ``openai`` than ours), one subprocess per (tool, metric),
with telemetry off and every proxy variable pointed at a loopback port that writes down and
closes what comes (``outside_requests`` in the results), so nothing leaves the machine.

    make bench-peers     # or: python benchmarks/tokens_vs_peers.py [-n 16] [--peers-python PATH]
                         #         [--tools ours,ragas,deepeval,valor] [--rows faithfulness,...]

Not part of ``make bench`` (the peers are a separate heavy install); see docs/judges.md, "Tokens
per example against the peers".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))

from token_recorder import Recorder, request_schema  # noqa: E402

MODEL = "gpt-4o"
GEVAL_CRITERIA = ("Coherence: the summary is well-structured and well-organized, building from sentence "
                  "to sentence into a coherent body of information about the source.")
# metric row -> (our module, the peers' metric names in peers_tokens_runner.py, which data)
ROWS: dict[str, dict[str, Any]] = {
    "faithfulness": {"ours": "faithfulness", "data": "rag",
                     "peers": {"ragas": "faithfulness", "deepeval": "faithfulness", "valor": "faithfulness"}},
    "answer relevance": {"ours": "answer_relevance", "data": "rag",
                         "peers": {"ragas": "answer_relevance", "deepeval": "answer_relevance",
                                   "valor": "answer_relevance"}},
    "answer correctness": {"ours": "answer_correctness", "data": "rag",
                           "peers": {"ragas": "answer_correctness", "valor": "answer_correctness"}},
    "context precision": {"ours": "context_precision", "data": "rag",
                          "peers": {"ragas": "context_precision", "deepeval": "context_precision",
                                    "valor": "context_precision"}},
    "context recall": {"ours": "context_recall", "data": "rag",
                       "peers": {"ragas": "context_recall", "deepeval": "context_recall", "valor": "context_recall"}},
    "context relevance": {"ours": "context_relevance", "data": "rag",
                          "peers": {"ragas": "context_relevance", "deepeval": "context_relevance",
                                    "valor": "context_relevance"}},
    "hallucination": {"ours": "hallucination", "data": "rag",
                      "peers": {"deepeval": "hallucination", "valor": "hallucination"}},
    "bias": {"ours": "bias", "data": "rag", "peers": {"deepeval": "bias", "valor": "bias"}},
    "toxicity": {"ours": "toxicity", "data": "rag", "peers": {"deepeval": "toxicity", "valor": "toxicity"}},
    "summary coherence / summarization": {
        "ours": "summary_coherence", "data": "summaries",
        "peers": {"ragas": "summarization", "deepeval": "summarization", "valor": "summary_coherence"}},
    "G-Eval": {"ours": "g_eval", "data": "summaries", "peers": {"deepeval": "g_eval"}},
}
TOOLS = ("ours", "ragas", "deepeval", "valor")
OFFLINE_ENV = {"OPENAI_API_KEY": "sk-dummy", "RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
               "DEEPEVAL_DISABLE_PROGRESS_BAR": "YES", "ANONYMIZED_TELEMETRY": "False",
               "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "POSTHOG_DISABLED": "1",
               "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


class Blackhole:
    """A loopback port that every proxy variable of the peers points at: a request for anywhere
    but 127.0.0.1 comes here, is written down (its first line: ``CONNECT host:443``) and closed."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.attempts: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.attempts.append(conn.recv(512).split(b"\r\n")[0].decode("latin-1"))
                except OSError:
                    self.attempts.append("(nothing sent)")

    def take(self) -> list[str]:
        out, self.attempts = self.attempts, []
        return out


def load(n: int) -> dict[str, list[dict[str, Any]]]:
    with open(os.path.join(ROOT, "data", "judge_sample.jsonl")) as f:
        rag = [json.loads(line) for line in f if line.strip()][:n]
    with open(os.path.join(ROOT, "data", "sample_summaries.jsonl")) as f:
        summaries = [json.loads(line) for line in f if line.strip()][:n]
    return {"rag": rag, "summaries": summaries}


def run_ours(module: str, url: str, examples: list[dict[str, Any]]) -> dict[str, Any]:
    import textgen_metrics
    from textgen_metrics.judges import OpenAIJudge

    judge = OpenAIJudge(MODEL, base_url=url, api_key="sk-dummy", concurrency=4)
    cols: dict[str, Any] = {"predictions": [e["prediction"] for e in examples]}
    if module == "summary_coherence":
        cols["sources"] = [e["source"] for e in examples]
    elif module == "g_eval":
        cols["sources"] = [e["source"] for e in examples]
        cols["criteria"] = GEVAL_CRITERIA
    else:
        needs = {"answer_relevance": ("queries",), "answer_correctness": ("references",),
                 "context_precision": ("queries", "contexts", "references"),
                 "context_recall": ("contexts", "references"), "context_relevance": ("queries", "contexts"),
                 "faithfulness": ("contexts",), "hallucination": ("contexts",)}.get(module, ())
        src = {"queries": "query", "contexts": "contexts", "references": "reference"}
        for c in needs:
            cols[c] = [e[src[c]] for e in examples]
        if module in ("context_precision", "context_recall", "context_relevance"):
            del cols["predictions"]
    out = getattr(textgen_metrics, module)(judge=judge, use_aggregator=False, **cols)
    errors = [e for e in out.get("errors") or [] if e]
    return {"scores": out.get(module), "errors": [str(e)[:300] for e in errors]}


def run_peer(python: str, tool: str, metric: str, url: str, examples_path: str, timeout: float,
             proxy: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTHONPATH"))}
    env.update(OFFLINE_ENV)
    env.update(dict.fromkeys(PROXY_VARS, proxy))
    with tempfile.TemporaryDirectory() as home:
        env.update({"HOME": home, "DEEPEVAL_RESULTS_FOLDER": home})  # deepeval writes .deepeval/ here
        proc = subprocess.run([python, os.path.join(HERE, "peers_tokens_runner.py"), tool, metric, url,
                               examples_path], capture_output=True, text=True, timeout=timeout, env=env, cwd=home)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return {"scores": [], "errors": [f"exit {proc.returncode}: {proc.stderr[-800:]}"]}
    result = json.loads(lines[-1])
    if result["errors"]:
        result["errors"][-1] += " | " + proc.stderr[-600:]
    return result


def count(recorder: Recorder, tool: str, metric: str, n: int) -> dict[str, Any]:
    from textgen_metrics.judges.prices import chat_tokens, token_counter_for

    tok = token_counter_for("openai", MODEL)
    run = recorder.run(tool, metric)
    prompt = completion = system = schema_tokens = fixed = 0
    for r in run.requests:
        body = r["body"]
        schema = request_schema(body)
        prompt += chat_tokens(tok, body.get("messages", []), schema)
        schema_tokens += chat_tokens(tok, [], schema) - 3 if schema is not None else 0
        system += sum(tok.count(str(m.get("content", ""))) for m in body.get("messages", [])
                      if m.get("role") == "system")
        user = str(body.get("messages", [{}])[-1].get("content", ""))
        if "<<<DATA " in user:  # ours: the task and worked example before the first data block
            fixed += tok.count(user[:user.index("<<<DATA ")])
        answer = r["answer"]
        completion += tok.count(answer["content"] if answer.get("content") is not None
                                else json.dumps([c["function"]["arguments"] for c in answer["tool_calls"]]))
    embedded = sum(tok.count(str(i)) for batch in run.embeddings for i in batch)
    return {"requests": len(run.requests), "prompt_tokens": prompt, "completion_tokens": completion,
            "embedding_requests": len(run.embeddings), "embedding_tokens": embedded,
            "per_example": {"requests": len(run.requests) / n, "prompt_tokens": prompt / n,
                            "completion_tokens": completion / n, "total_tokens": (prompt + completion) / n,
                            # parts of the prompt tokens: system messages, the answer's schema or tools
                            # sent with the request, and (ours) the task with its worked example
                            "system_tokens": system / n, "schema_tokens": schema_tokens / n,
                            "task_tokens": fixed / n}}


def versions(python: str) -> dict[str, str]:
    code = ("import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
            "('ragas', 'deepeval', 'valor-lite', 'openai', 'instructor', 'langchain-core')}))")
    try:
        return json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60).stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}


def table(results: dict[str, Any]) -> str:
    lines = ["| metric | tool | requests / ex | prompt tok / ex | completion tok / ex | total / ex | "
             "ours vs cheapest peer |", "|---|---|---:|---:|---:|---:|---|"]
    for row, tools in results["rows"].items():
        peers = {t: r for t, r in tools.items() if t != "ours" and not r["errors"]}
        cheapest = min(peers.items(), key=lambda kv: kv[1]["per_example"]["total_tokens"], default=None)
        for tool, r in tools.items():
            pe = r["per_example"]
            note = ""
            if tool == "ours" and cheapest:
                ratio = pe["total_tokens"] / cheapest[1]["per_example"]["total_tokens"]
                note = f"{ratio:.2f}x {cheapest[0]}" + (" (met)" if ratio <= 1 else " (above)")
            if r["errors"]:
                note = "failed: " + r["errors"][0].splitlines()[0][:80]
            emb = f" (+{r['embedding_tokens'] / results['n']:.0f} emb.)" if r.get("embedding_tokens") else ""
            lines.append(f"| {row} | {tool} | {pe['requests']:.2f} | {pe['prompt_tokens']:.0f}{emb} | "
                         f"{pe['completion_tokens']:.0f} | {pe['total_tokens']:.0f} | {note} |")
    lines += ["", "Where our prompt tokens go (per example): the system rule, the task with its worked example, "
              "the answer's JSON schema sent as response_format, and the rest (data blocks, chat framing); "
              "against the cheapest peer's whole prompt.", "",
              "| metric | ours: prompt | system | task + example | schema | data + framing | cheapest peer: "
              "prompt | peer's system | peer's schema |", "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for row, tools in results["rows"].items():
        if "ours" not in tools:
            continue
        o = tools["ours"]["per_example"]
        peers = {t: r for t, r in tools.items() if t != "ours" and not r["errors"]}
        cheapest = min(peers.items(), key=lambda kv: kv[1]["per_example"]["total_tokens"], default=None)
        rest = o["prompt_tokens"] - o["system_tokens"] - o["task_tokens"] - o["schema_tokens"]
        peer = (f"{cheapest[1]['per_example']['prompt_tokens']:.0f} ({cheapest[0]}) | "
                f"{cheapest[1]['per_example']['system_tokens']:.0f} | {cheapest[1]['per_example']['schema_tokens']:.0f}"
                if cheapest else "- | - | -")
        lines.append(f"| {row} | {o['prompt_tokens']:.0f} | {o['system_tokens']:.0f} | {o['task_tokens']:.0f} | "
                     f"{o['schema_tokens']:.0f} | {rest:.0f} | {peer} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=8, help="examples per metric (from data/judge_sample.jsonl and "
                    "data/sample_summaries.jsonl)")
    ap.add_argument("--peers-python", default=os.path.join(ROOT, ".peers-venv", "bin", "python"),
                    help="the interpreter that has ragas, deepeval and valor-lite (make bench-peers makes .peers-venv)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--rows", default=None, help="comma-separated metric rows (default: all)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--dump", default=None, help="a folder: write every recorded request and answer there, "
                    "one JSONL file per tool and metric")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "tokens_vs_peers.json"))
    args = ap.parse_args(argv)
    tools = args.tools.split(",")
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        ap.error(f"--tools: unknown {unknown}; choose from {list(TOOLS)}")
    if set(tools) - {"ours"} and not os.path.exists(args.peers_python):
        ap.error(f"--peers-python: {args.peers_python} does not exist; make one with `make bench-peers` or name "
                 "an interpreter that has ragas, deepeval and valor-lite installed")
    data = load(args.n)
    recorder = Recorder(data["rag"] + data["summaries"])
    blackhole = Blackhole()
    results: dict[str, Any] = {"n": args.n, "model": MODEL, "tokenizer": "o200k_base (bpe-openai)",
                               "versions": versions(args.peers_python), "rows": {}}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            paths = {}
            for name, rows in data.items():
                paths[name] = os.path.join(tmp, f"{name}.json")
                with open(paths[name], "w") as f:
                    json.dump(rows, f)
            for row, spec in ROWS.items():
                if args.rows and row not in args.rows.split(","):
                    continue
                examples = data[spec["data"]]
                out: dict[str, Any] = {}
                for tool in tools:
                    metric = spec["ours"] if tool == "ours" else spec["peers"].get(tool)
                    if metric is None:
                        continue
                    url = recorder.url(tool, metric)
                    start = time.perf_counter()
                    if tool == "ours":
                        res = run_ours(metric, url, examples)
                    else:
                        res = run_peer(args.peers_python, tool, metric, url, paths[spec["data"]], args.timeout,
                                       blackhole.url)
                    out[tool] = {"metric": metric, **count(recorder, tool, metric, len(examples)),
                                 "errors": res["errors"], "scores": res["scores"],
                                 "outside_requests": blackhole.take(),
                                 "seconds": round(time.perf_counter() - start, 1)}
                    print(f"{row:>34} {tool:>9}: {out[tool]['per_example']} {res['errors'][:1]}", file=sys.stderr)
                results["rows"][row] = out
    finally:
        recorder.close()
        blackhole.sock.close()
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        for key, run in recorder.runs.items():
            with open(os.path.join(args.dump, key.replace("/", "__") + ".jsonl"), "w") as f:
                for r in run.requests:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(table(results))
    outside = sorted({a for tools_ in results["rows"].values() for r in tools_.values() for a in r["outside_requests"]})
    print(f"\nrequests for anywhere but 127.0.0.1 (sent to a closed loopback proxy instead): {outside or 'none'}")
    print(f"\nresults: {args.out}")
    return results


if __name__ == "__main__":
    main()
