"""The LLM-guided metrics on real models: what share of examples a real judge scores, at what
cost (docs/real_judges.md).

    python benchmarks/real_judges.py run --model smollm2 --backend server [--n 16] [--out file.json]
    python benchmarks/real_judges.py run --model gemma3 --backend hf [--structured none]
    python benchmarks/real_judges.py throughput --model smollm2 [--prompts 32]
    python benchmarks/real_judges.py table results/*.json   # the Markdown tables of saved runs

``run``: every LLM-guided module (or ``--modules``) over the first ``--n`` rows of
data/judge_sample.jsonl, with default settings: ``server`` is ``OpenAIJudge`` at llama-cpp-python's
OpenAI-compatible server (started here on 127.0.0.1, as a user runs it: ``python -m
llama_cpp.server --model FILE.gguf --n_ctx 4096``), ``hf`` is ``HFJudge`` on the GGUF file. Per
module: examples scored at the first try (no request asked again), after re-asks, and None by
cause; requests, prompt and completion tokens per example; seconds per example (the module's
wall time over its examples, all run together as a user runs them).

``throughput``: ``HFJudge`` at batch 8 against the same judge one request at a time and against
the loop a user writes with a transformers ``pipeline``, on the same prompts (the metrics' own
requests on the sample rows), greedy, the same answer budget, in generated tokens per second.

The models are tiny (135M and 270M parameters): their verdicts say nothing of a judge's quality;
these figures measure the plumbing (dialects, grammars, re-asks, budgets), not the scores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))  # llama_server: the server as the real-model tests start it

import textgen_metrics  # noqa: E402
from llama_server import llama_server  # noqa: E402
from textgen_metrics.judges import HFJudge, OpenAIJudge  # noqa: E402
from textgen_metrics.judges.tiny import tiny_model_file  # noqa: E402
from textgen_metrics.llm.metrics import METRICS  # noqa: E402

CRITERIA = "Correctness: every fact the answer states is true and answers the query."
_EXAMPLE: contextvars.ContextVar[int | None] = contextvars.ContextVar("example", default=None)


def sample_rows(n: int) -> list[dict]:
    with open(ROOT / "data" / "judge_sample.jsonl") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return rows[:n]


def columns(rows: list[dict]) -> dict[str, list]:
    return {"predictions": [r["prediction"] for r in rows], "references": [r["reference"] for r in rows],
            "queries": [r["query"] for r in rows], "contexts": [r["contexts"] for r in rows],
            "sources": [r["source"] for r in rows], "baselines": [r["baseline"] for r in rows]}


def recording(judge_class):
    """``judge_class`` that keeps every request's result with the example it was asked for."""

    class Recording(judge_class):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.records: list[tuple[int | None, object]] = []

        async def _judge_new(self, request, key, session):
            result = await super()._judge_new(request, key, session)
            self.records.append((_EXAMPLE.get(), result))
            return result

    return Recording


def _cause(error: str) -> str:
    if "cut off" in error:
        return "cut off"
    if "invalid answer" in error:
        return "invalid answer"
    if "longer than the model's context" in error:
        return "context"
    return "backend"


def run_module(judge, name: str, rows: list[dict]) -> dict:
    """One module over ``rows``: every example at once (as a user runs it), each request
    attributed to its example."""
    cls = METRICS[name]
    original = cls.score_example
    order: list[int] = []

    async def score_example(self, session, ex):  # tag the example's requests; keep its outcome
        i = len(order)
        order.append(i)
        _EXAMPLE.set(i)
        return await original(self, session, ex)

    cls.score_example = score_example
    judge.records.clear()
    try:
        given = {c: columns(rows)[c] for c in cls.columns}
        extra = {"criteria": CRITERIA} if name == "g_eval" else {}
        start = time.perf_counter()
        out = getattr(textgen_metrics, name)(**given, **extra, judge=judge, use_aggregator=False)
        seconds = time.perf_counter() - start
    finally:
        cls.score_example = original
    scores = out[cls.score_key]
    errors = {e["index"]: e["error"] for e in out["errors"]}
    per: dict[int | None, list] = {}
    for i, res in judge.records:
        per.setdefault(i, []).append(res)
    # examples are numbered in the order their scoring starts (the order of the inputs); a
    # run's shared step (G-Eval's steps, asked once) counts against every example
    again = {i for i, results in per.items() if any(r.attempts > 1 for r in results)}
    first = reasked = 0
    none: Counter[str] = Counter()
    for k, value in enumerate(scores):
        if value is None:
            none[_cause(errors.get(k, ""))] += 1
        elif k in again or None in again:
            reasked += 1
        else:
            first += 1
    usage = out["judge_usage"]
    n = len(rows)
    return {"module": name, "n": n, "scored_first_try": first, "scored_after_reasks": reasked,
            "none": dict(none), "requests_per_example": usage["requests"] / n,
            "prompt_tokens_per_example": usage["prompt_tokens"] / n,
            "completion_tokens_per_example": usage["completion_tokens"] / n,
            "seconds_per_example": seconds / n, "judge_mode": out["judge_mode"],
            "usage": usage, "errors": out["errors"]}


def cmd_run(args) -> dict:
    rows = sample_rows(args.n)
    modules = args.modules.split(",") if args.modules else list(METRICS)
    model_file = tiny_model_file(args.model)
    results = []
    with contextlib.ExitStack() as stack:
        if args.backend == "server":
            extra = ("--chat_format", args.chat_format) if args.chat_format else ()
            url = stack.enter_context(llama_server(model_file, extra=extra))
            judge = recording(OpenAIJudge)(os.path.basename(model_file), base_url=url, api_key="none",
                                           timeout=600)
        else:
            judge = recording(HFJudge)(model_file, structured=args.structured, batch_size=args.batch_size)
            judge._load()
        for name in modules:
            row = run_module(judge, name, rows)
            results.append(row)
            print(json.dumps({k: v for k, v in row.items() if k not in ("errors",)}), flush=True)
    report = {"model": args.model, "backend": args.backend, "structured": getattr(args, "structured", None),
              "n": args.n, "modules": results}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return report


def cmd_throughput(args) -> dict:
    """Generated tokens per second: HFJudge at batch 8 (shared prompt prefixes, the default, and
    without), HFJudge one at a time, free decoding, and a pipeline loop. Each run is timed by the
    wall clock and by the process's CPU time: on a machine other jobs share, CPU seconds at a fixed
    thread count measure the work, where wall seconds measure the neighbours too."""
    import torch

    from textgen_metrics.judges import JudgeRequest
    from textgen_metrics.llm.prompts import PROMPTS

    if args.threads:
        torch.set_num_threads(args.threads)
    rows = sample_rows(16)
    prompts: list[JudgeRequest] = []
    for r in rows:
        prompts.append(PROMPTS["faithfulness/claims"].request([("prediction", r["prediction"])]))
        prompts.append(PROMPTS["summary_coherence/score"].request([("source", r["source"]),
                                                                   ("summary", r["prediction"])]))
    prompts = prompts[:args.prompts]
    model_file = tiny_model_file(args.model)
    budget = args.max_new_tokens
    out = {"model": args.model, "prompts": len(prompts), "max_new_tokens": budget,
           "threads": torch.get_num_threads(), "dtype": args.dtype, "runs": {}}

    def record(label: str, wall: float, cpu: float, tokens: int) -> None:
        out["runs"][label] = {"seconds": wall, "cpu_seconds": cpu, "tokens": tokens,
                              "tokens_per_second": tokens / wall, "tokens_per_cpu_second": tokens / cpu}
        print(label, out["runs"][label], flush=True)

    def judged(label: str, batch_size: int, structured: str, share_prefix: bool = True) -> None:
        judge = HFJudge(model_file, batch_size=batch_size, structured=structured, max_new_tokens=budget,
                        share_prefix=share_prefix, dtype=args.dtype)
        judge._load()
        reqs = [JudgeRequest(p.messages, schema=p.schema, task=p.task, max_tokens=budget) for p in prompts]

        async def go():
            async with judge.session() as session:
                return await asyncio.gather(*(session.ask(r) for r in reqs))

        wall, cpu = time.perf_counter(), time.process_time()
        results = asyncio.run(go())
        record(label, time.perf_counter() - wall, time.process_time() - cpu,
               sum(r.completion_tokens for r in results))

    judged("hfjudge_batch8", 8, args.structured)
    judged("hfjudge_batch8_unshared", 8, args.structured, share_prefix=False)
    judged("hfjudge_batch1", 1, args.structured)
    if not args.skip_free:
        judged("hfjudge_batch8_free", 8, "none")

    from transformers import pipeline

    from textgen_metrics.judges.local import merge_system

    loaded = HFJudge(model_file, structured="none", dtype=args.dtype)._load()
    pipe = pipeline("text-generation", model=loaded.model, tokenizer=loaded.tokenizer)
    wall, cpu = time.perf_counter(), time.process_time()
    tokens = 0
    for p in prompts:  # the loop a user writes: one chat at a time, greedy, the same budget
        messages = p.messages if loaded.system_role else merge_system(p.messages)
        generated = pipe(messages, max_new_tokens=budget, do_sample=False, return_full_text=False)
        text = generated[0]["generated_text"]
        tokens += len(loaded.tokenizer(text, add_special_tokens=False)["input_ids"]) + 1
    record("pipeline_loop", time.perf_counter() - wall, time.process_time() - cpu, tokens)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    return out


def cmd_table(args) -> None:
    for path in args.files:
        report = json.loads(Path(path).read_text())
        if "runs" in report:
            base = report["runs"]["pipeline_loop"]
            print(f"\n{report['model']}, {report['prompts']} prompts, budget {report['max_new_tokens']}, "
                  f"{report.get('threads', '?')} threads, dtype {report.get('dtype', 'auto')}\n")
            print("| run | tokens | seconds | tokens/s | vs pipeline loop | CPU seconds | tokens/CPU s | "
                  "vs pipeline loop |\n|---|---:|---:|---:|---:|---:|---:|---:|")
            for label, r in report["runs"].items():
                cpu = r.get("tokens_per_cpu_second")
                cpu_cells = (f"{r['cpu_seconds']:.1f} | {cpu:.1f} | {cpu / base['tokens_per_cpu_second']:.2f}x"
                             if cpu else "- | - | -")
                print(f"| {label} | {r['tokens']} | {r['seconds']:.1f} | {r['tokens_per_second']:.1f} | "
                      f"{r['tokens_per_second'] / base['tokens_per_second']:.2f}x | {cpu_cells} |")
            continue
        mods = report["modules"]
        total = sum(m["n"] for m in mods)
        scored = sum(m["scored_first_try"] + m["scored_after_reasks"] for m in mods)
        print(f"\n{report['model']} / {report['backend']}"
              f"{' / ' + str(report['structured']) if report['backend'] == 'hf' else ''}: {scored}/{total} scored "
              f"({100 * scored / total:.1f}%)\n")
        print("| module | mode | scored 1st try | after re-asks | None (cause) | requests/ex | prompt tok/ex | "
              "completion tok/ex | s/ex |\n|---|---|---:|---:|---|---:|---:|---:|---:|")
        for m in mods:
            none = ", ".join(f"{v} {k}" for k, v in m["none"].items()) or "0"
            print(f"| {m['module']} | {m['judge_mode']} | {m['scored_first_try']}/{m['n']} | "
                  f"{m['scored_after_reasks']} | "
                  f"{none} | {m['requests_per_example']:.2f} | {m['prompt_tokens_per_example']:.0f} | "
                  f"{m['completion_tokens_per_example']:.0f} | {m['seconds_per_example']:.1f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("--model", choices=["smollm2", "gemma3"], default="smollm2")
    run.add_argument("--backend", choices=["server", "hf"], default="server")
    run.add_argument("--structured", choices=["auto", "xgrammar", "none"], default="auto")
    run.add_argument("--batch-size", type=int, default=8)
    run.add_argument("--chat-format", default=None, help="the server's --chat_format (default: the file's template)")
    run.add_argument("--n", type=int, default=16)
    run.add_argument("--modules", default=None)
    run.add_argument("--out", default=None)
    tp = sub.add_parser("throughput")
    tp.add_argument("--model", choices=["smollm2", "gemma3"], default="smollm2")
    tp.add_argument("--structured", choices=["auto", "xgrammar", "none"], default="auto")
    tp.add_argument("--prompts", type=int, default=32)
    tp.add_argument("--max-new-tokens", type=int, default=256)
    tp.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's own choice)")
    tp.add_argument("--dtype", default="auto", help="HFJudge's dtype, also the pipeline loop's model")
    tp.add_argument("--skip-free", action="store_true", help="leave out the free-decoding run (the longest)")
    tp.add_argument("--out", default=None)
    table = sub.add_parser("table")
    table.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    {"run": cmd_run, "throughput": cmd_throughput, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
