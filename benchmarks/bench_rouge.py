"""ROUGE against rouge-score (what Hugging Face's rouge runs) and rouge-score-rs (Rust), on
realistic text (WordNet glosses, see textdata.py), every repetition in a fresh process after one
tiny warm-up call per side.

Sets: 2,000 pairs of ~37 words and 200 pairs of ~750 words, one sentence per line, the four
default types, stemmer on; one thread each (rouge-score-rs's ``score_batch`` with
``RAYON_NUM_THREADS=1``), then every core (ours with ``num_threads=None``, rouge-score-rs's
``score_batch``). Scores must be identical. Also: rougeW on one 30,000-token line, rougeS (any gap)
on 10,000 tokens, rougeSU4 / rougeS4 from 1,000 to 100,000 tokens (linear), ``import`` plus the
first stemmed call in a fresh process, throughput from 1,000 to 100,000 pairs, and the memory of
a process streaming 10,000 and 100,000 pairs through the aggregator.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
from typing import Any

from common import print_table
from fresh import Inputs, process_seconds, run_fresh, timed_fresh
from textdata import _drawer, long_line, pairs, perturb

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
ONE_THREAD = {"RAYON_NUM_THREADS": "1"}


def _versions() -> str:
    from importlib.metadata import version

    return f"rouge-score {version('rouge-score')}, rouge-score-rs {version('rouge-score-rs')}"


def _speed(label: str, n: int, words: int, slow_reps: int, rows: list[list[str]], results: dict[str, Any]) -> None:
    data = pairs(n, words, seed=n + words)
    with Inputs({"preds": [p for p, _ in data], "refs": [r for _, r in data], "types": TYPES}) as inp:
        t_ref, want = timed_fresh("rouge:rouge_score", inp, reps=slow_reps)
        t_rs1, rs1 = timed_fresh("rouge:rouge_score_rs", inp, env=ONE_THREAD)
        t_rsn, _ = timed_fresh("rouge:rouge_score_rs", inp)
        t_us1, ours = timed_fresh("rouge:ours", inp)
        t_usn, ours_n = timed_fresh("rouge:ours_all_cores", inp)
    assert ours == want == rs1 == ours_n, "scores differ"
    rows += [
        [f"{label} | rouge-score 0.1.2", f"{t_ref:.3f}", f"{t_ref / t_us1:.1f}x", ""],
        [f"{label} | rouge-score-rs, 1 thread", f"{t_rs1:.3f}", f"{t_rs1 / t_us1:.2f}x", ""],
        [f"{label} | textgen-metrics, 1 thread", f"{t_us1:.3f}", "1.00x", ""],
        [f"{label} | rouge-score-rs, all cores", f"{t_rsn:.3f}", "", f"{t_rsn / t_usn:.2f}x"],
        [f"{label} | textgen-metrics, all cores", f"{t_usn:.3f}", "", "1.00x"],
    ]
    results[label] = {"rouge_score_s": t_ref, "rouge_score_rs_1t_s": t_rs1, "rouge_score_rs_all_s": t_rsn,
                      "ours_1t_s": t_us1, "ours_all_s": t_usn, "vs_rouge_score": t_ref / t_us1,
                      "vs_rs_1t": t_rs1 / t_us1, "vs_rs_all": t_rsn / t_usn}


def _one(rouge_type: str, tokens: int, seed: int = 1, cpu: bool = False) -> float:
    rng = random.Random(seed)
    ref = long_line(tokens, seed=seed)
    pred = perturb(rng, _drawer(rng), ref)
    with Inputs({"preds": [pred], "refs": [ref], "type": rouge_type}) as inp:
        t, _ = timed_fresh("rouge:one", inp, reps=1, cpu=cpu)
    return t


def _throughput(sizes: tuple[int, ...], reps: int = 5) -> dict[int, tuple[float, float]]:
    """Microseconds per pair, wall and CPU, one thread, per number of pairs: the median of
    ``reps`` fresh processes per size, the sizes taken in turn (1k, 10k, 100k, 1k, ...) so that
    the machine's drift over the minutes of the run falls on every size alike (on this shared
    2-core machine one process runs up to a third slower than the next, whatever its size)."""
    inputs = {}
    for n in sizes:
        data = pairs(n, 32, seed=7)
        inputs[n] = Inputs({"preds": [p for p, _ in data], "refs": [r for _, r in data], "types": TYPES})
    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in sizes}
    try:
        for _ in range(reps):
            for n in sizes:
                runs[n].append(run_fresh("rouge:ours", inputs[n]))
    finally:
        for inp in inputs.values():
            inp.close()
    return {n: (statistics.median(r["seconds"] for r in runs[n]) / n * 1e6,
                statistics.median(r["cpu_seconds"] for r in runs[n]) / n * 1e6) for n in sizes}


def _rss(n: int) -> float:
    code = (
        "import resource, sys; sys.path.insert(0, 'benchmarks');"
        "from textdata import stream; from textgen_metrics.lexical.rouge import RougeScorer, RougeAggregator;"
        f"agg = RougeAggregator(RougeScorer({TYPES!r}, use_stemmer=True));"
        f"[agg.add(p, r) for p, r in stream({n}, 32, seed=1)];"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> dict[str, Any]:
    results: dict[str, Any] = {"peers": _versions(), "cores": os.cpu_count()}
    rows: list[list[str]] = []
    _speed("short: 2,000 pairs x ~37 words", 2000, 32, 3, rows, results)
    _speed("long: 200 pairs x ~750 words", 200, 750, 1, rows, results)
    print_table(f"ROUGE 1/2/L/Lsum + stemmer, WordNet-gloss text, fresh process per run ({_versions()}; "
                f"{os.cpu_count()} cores); identical scores", rows,
                header=("contender", "seconds", "1-thread: peer/ours", "all cores: peer/ours"))

    w30k = _one("rougeW", 30000)
    w30k_cpu = _one("rougeW", 30000, cpu=True)
    s10k = _one("rougeS", 10000)
    lin = {}
    for t in ("rougeSU4", "rougeS4"):
        lin[t] = {n: _one(t, n, cpu=True) / n * 1e6 for n in (1000, 10000, 100000)}
    rows = [["rougeW, one 30,000-token line (wall / CPU)", f"{w30k:.2f} s / {w30k_cpu:.2f} s", "< 5 s"],
            ["rougeS (any gap), 10,000 tokens", f"{s10k:.3f} s", "< 10 s"]]
    for t, v in lin.items():
        rows.append([f"{t}, 1k / 10k / 100k tokens (CPU time, with tokenising)",
                     " / ".join(f"{x:.2f}" for x in v.values()) + " us/token",
                     f"linear: {max(v.values()) / min(v.values()):.2f}x spread"])
    first = process_seconds("import textgen_metrics; textgen_metrics.rouge(['The cats sat on the mat.'], "
                            "['A cat sat.'], use_stemmer=True)")
    rows.append(["python -c 'import textgen_metrics; first rouge(use_stemmer=True)'", f"{first:.3f} s", "< 0.6 s"])
    tput = _throughput((1000, 10000, 100000), reps=9)
    wall_spread = max(w for w, _ in tput.values()) / min(w for w, _ in tput.values())
    spread = max(c for _, c in tput.values()) / min(c for _, c in tput.values())
    rows.append(["throughput 1k / 10k / 100k pairs, 1 thread, wall", " / ".join(f"{w:.1f}" for w, _ in tput.values())
                 + " us/pair", f"within 20%: {wall_spread:.2f}x spread"])
    rows.append(["the same, CPU time", " / ".join(f"{c:.1f}" for _, c in tput.values()) + " us/pair",
                 f"within 20%: {spread:.2f}x spread"])
    print_table("ROUGE long inputs, first call, throughput", rows, header=("work", "measured", "target"))
    results.update(rougeW_30k_s=w30k, rougeW_30k_cpu_s=w30k_cpu, rougeS_10k_s=s10k, linear_us_per_token=lin,
                   import_first_call_s=first, throughput_us_per_pair=tput, throughput_spread=spread)

    small, large = _rss(10_000), _rss(100_000)
    print_table("ROUGE memory, streaming aggregator (peak RSS, MiB)",
                [["10,000 pairs", f"{small:.1f}", ""],
                 ["100,000 pairs", f"{large:.1f}", f"{large / small:.2f}x of 10k"]],
                header=("pairs", "peak MiB", "ratio"))
    results["memory_mib"] = {"10000": small, "100000": large, "ratio": large / small}
    return results


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(main(), indent=2))
