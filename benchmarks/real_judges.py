"""The LLM-guided metrics on real models: what share of examples a real judge scores, at what
cost (docs/real_judges.md).

    python benchmarks/real_judges.py run --model smollm2 --backend server [--n 16] [--out file.json]
    python benchmarks/real_judges.py run --model gemma3 --backend hf [--structured none]
    python benchmarks/real_judges.py run --model smollm2 --backend gguf   # LlamaCppJudge, in process
    python benchmarks/real_judges.py compare --model smollm2 [--n 4] [--modules ...] [--hf-modules ...]
    python benchmarks/real_judges.py throughput --model smollm2 [--prompts 32]
    python benchmarks/real_judges.py table results/*.json   # the Markdown tables of saved runs

``run``: every LLM-guided module (or ``--modules``) over the first ``--n`` rows of
data/judge_sample.jsonl, with default settings: ``server`` is ``OpenAIJudge`` at llama-cpp-python's
OpenAI-compatible server (started here on 127.0.0.1, as a user runs it: ``python -m
llama_cpp.server --model FILE.gguf --n_ctx 4096``), ``hf`` is ``HFJudge`` on the GGUF file,
``gguf`` is ``LlamaCppJudge`` on it (llama.cpp in this process, the server's settings). Per
module: examples scored at the first try (no request asked again), after re-asks, and None by
cause; requests, prompt and completion tokens per example; seconds per example (the module's
wall time over its examples, all run together as a user runs them).

``compare``: the same model behind the server, in process through llama.cpp (``LlamaCppJudge``,
what ``tiny:`` runs) and in process through transformers (``HFJudge``, ``--hf-modules`` only: it is
the slow one), on the same rows, module by module, interleaved (the order of the contenders
alternates from module to module, so that a neighbour's load falls on all of them alike); per
module and contender: seconds, examples scored at the first try, and whether each request's
answer text equals the server's. The machine's load average is recorded beside the figures.

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
from textgen_metrics.judges import HFJudge, LlamaCppJudge, OpenAIJudge  # noqa: E402
from textgen_metrics.judges.tiny import CHAT_FORMATS, tiny_model_file  # noqa: E402
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
            self.answers: list[tuple[str, str, str | None, int]] = []  # (task, messages, final text, attempts)

        async def _judge_new(self, request, key, session):
            result = await super()._judge_new(request, key, session)
            self.records.append((_EXAMPLE.get(), result))
            self.answers.append((request.task, json.dumps(request.messages), result.text, result.attempts))
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


def _children_cpu() -> float:
    """CPU seconds of this process's child processes still running (the server started here)."""
    total = 0.0
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


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
    judge.answers.clear()
    try:
        given = {c: columns(rows)[c] for c in cls.columns}
        extra = {"criteria": CRITERIA} if name == "g_eval" else {}
        start, cpu, server = time.perf_counter(), time.process_time(), _children_cpu()
        out = getattr(textgen_metrics, name)(**given, **extra, judge=judge, use_aggregator=False)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu + _children_cpu() - server
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
            "seconds_per_example": seconds / n, "seconds": seconds, "cpu_seconds": cpu_seconds,
            "judge_mode": out["judge_mode"],
            "usage": usage, "errors": out["errors"],
            "first_try": sorted(k for k, v in enumerate(scores) if v is not None and k not in again
                                and None not in again),
            "answers": list(judge.answers)}


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
        elif args.backend == "gguf":
            judge = recording(LlamaCppJudge)(model_file, chat_format=args.chat_format or CHAT_FORMATS[args.model])
            judge._load()
        else:
            judge = recording(HFJudge)(model_file, structured=args.structured, batch_size=args.batch_size)
            judge._load()
        for name in modules:
            row = run_module(judge, name, rows)
            results.append(row)
            print(json.dumps({k: v for k, v in row.items() if k not in ("errors", "answers")}), flush=True)
    report = {"model": args.model, "backend": args.backend, "structured": getattr(args, "structured", None),
              "n": args.n, "modules": results}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return report


def _same_answers(mine: list, server: list) -> tuple[int, int]:
    """(requests whose final answer text equals the server's answer to the same request, requests
    of the server's run): requests matched by task and messages, as many times as asked."""
    theirs = Counter((task, messages, text) for task, messages, text, _ in server)
    ours = Counter((task, messages, text) for task, messages, text, _ in mine)
    return sum((theirs & ours).values()), sum(theirs.values())


def cmd_compare(args) -> dict:
    """The server, LlamaCppJudge and HFJudge on the same rows, module by module, interleaved."""
    import torch

    rows = sample_rows(args.n)
    modules = args.modules.split(",") if args.modules else list(METRICS)
    hf_modules = set(args.hf_modules.split(",")) if args.hf_modules else set()
    model_file = tiny_model_file(args.model)
    chat_format = CHAT_FORMATS[args.model]
    report = {"model": args.model, "n": args.n, "compare": True, "cpus": os.cpu_count(),
              "torch_threads": torch.get_num_threads(), "load_before": os.getloadavg(), "modules": []}
    with contextlib.ExitStack() as stack:
        extra = ("--chat_format", chat_format) if chat_format else ()
        url = stack.enter_context(llama_server(model_file, extra=extra))
        judges = {"server": recording(OpenAIJudge)(os.path.basename(model_file), base_url=url, api_key="none",
                                                   timeout=600),
                  "gguf": recording(LlamaCppJudge)(model_file, chat_format=chat_format)}
        judges["gguf"]._load()
        report["llama_threads"] = [judges["gguf"].llama.n_threads, judges["gguf"].llama.n_threads_batch]
        if hf_modules:
            judges["hf"] = recording(HFJudge)(model_file, batch_size=8)
            judges["hf"]._load()
        for k, name in enumerate(modules):
            order = ["server", "gguf"] if k % 2 == 0 else ["gguf", "server"]
            if name in hf_modules:
                order.insert(1, "hf")
            runs = {}
            for contender in order:
                runs[contender] = run_module(judges[contender], name, rows)
                print(f"{name} {contender}: {runs[contender]['seconds']:.1f} s, {runs[contender]['cpu_seconds']:.1f} "
                      "CPU s", file=sys.stderr, flush=True)
            server = runs["server"]
            entry = {"module": name, "order": order, "load": os.getloadavg(), "runs": {}}
            for contender, r in runs.items():
                same, total = _same_answers(r["answers"], server["answers"])
                entry["runs"][contender] = {
                    "seconds": r["seconds"], "cpu_seconds": r["cpu_seconds"], "scored_first_try": r["scored_first_try"],
                    "scored_after_reasks": r["scored_after_reasks"], "none": r["none"],
                    "requests": r["usage"]["requests"], "judge_mode": r["judge_mode"],
                    "first_try_where_server": len(set(server["first_try"]) & set(r["first_try"])),
                    "server_first_try": len(server["first_try"]), "same_answers": same, "server_answers": total}
            report["modules"].append(entry)
            print(json.dumps(entry), flush=True)
    report["load_after"] = os.getloadavg()
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


def _compare_table(report: dict) -> None:
    mods = report["modules"]
    load = [round(x, 1) for x in report["load_before"]] + [round(x, 1) for x in report["load_after"]]
    print(f"\n{report['model']}, {report['n']} rows per module, {report['cpus']} CPUs, llama.cpp threads "
          f"{report['llama_threads']} (generation, prompt), torch threads {report['torch_threads']}; load average "
          f"(1, 5, 15 min) before {load[:3]}, after {load[3:]}\n")
    print("| module | server s (CPU s) | llama.cpp in process s (CPU s) | in process / server, wall (CPU) | "
          "HFJudge s (CPU s) | HFJudge / llama.cpp, wall (CPU) | scored 1st try: server / llama.cpp / HF | "
          "llama.cpp 1st try where the server | answers equal to the server's |\n"
          "|---|---:|---:|---:|---:|---:|---|---|---|")
    tot: Counter[str] = Counter()
    for m in mods:
        r = m["runs"]
        s, g, h = r["server"], r["gguf"], r.get("hf")
        for key, run in (("server", s), ("gguf", g), ("hf", h)):
            if run:
                tot[key] += run["seconds"]
                tot[key + "_cpu"] += run.get("cpu_seconds", 0)
        if h:
            tot["gguf_hf"] += g["seconds"]
            tot["gguf_hf_cpu"] += g.get("cpu_seconds", 0)
        hs = (f"{h['seconds']:.1f} ({h['cpu_seconds']:.1f}) | {h['seconds'] / g['seconds']:.2f}x "
              f"({h['cpu_seconds'] / g['cpu_seconds']:.2f}x)" if h else "- | -")
        first = f"{s['scored_first_try']} / {g['scored_first_try']} / {h['scored_first_try'] if h else '-'}"
        print(f"| {m['module']} | {s['seconds']:.1f} ({s['cpu_seconds']:.1f}) | {g['seconds']:.1f} "
              f"({g['cpu_seconds']:.1f}) | {g['seconds'] / s['seconds']:.2f} "
              f"({g['cpu_seconds'] / s['cpu_seconds']:.2f}) | {hs} | {first} | "
              f"{g['first_try_where_server']}/{g['server_first_try']} | "
              f"{g['same_answers']}/{g['server_answers']} |")
    hf_total = (f"{tot['hf']:.1f} ({tot['hf_cpu']:.1f}) | {tot['hf'] / tot['gguf_hf']:.2f}x "
                f"({tot['hf_cpu'] / tot['gguf_hf_cpu']:.2f}x) on its modules" if tot["hf"] else "- | -")
    print(f"| **all** | {tot['server']:.1f} ({tot['server_cpu']:.1f}) | {tot['gguf']:.1f} ({tot['gguf_cpu']:.1f}) | "
          f"{tot['gguf'] / tot['server']:.2f} ({tot['gguf_cpu'] / tot['server_cpu']:.2f}) | {hf_total} | | | |")


def cmd_table(args) -> None:
    for path in args.files:
        report = json.loads(Path(path).read_text())
        if report.get("compare"):
            _compare_table(report)
            continue
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
    run.add_argument("--backend", choices=["server", "hf", "gguf"], default="server")
    run.add_argument("--structured", choices=["auto", "xgrammar", "none"], default="auto")
    run.add_argument("--batch-size", type=int, default=8)
    run.add_argument("--chat-format", default=None, help="the server's --chat_format (default: the file's template)")
    run.add_argument("--n", type=int, default=16)
    run.add_argument("--modules", default=None)
    run.add_argument("--out", default=None)
    cmp = sub.add_parser("compare")
    cmp.add_argument("--model", choices=["smollm2", "gemma3"], default="smollm2")
    cmp.add_argument("--n", type=int, default=4)
    cmp.add_argument("--modules", default=None)
    cmp.add_argument("--hf-modules", default=None, help="modules also run through HFJudge (comma-separated)")
    cmp.add_argument("--out", default=None)
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
    {"run": cmd_run, "compare": cmd_compare, "throughput": cmd_throughput, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
