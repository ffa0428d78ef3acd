"""The audit statistics on 10,000 pairs (issue 38: under a second, 1,000 resamples each):
position_audit on 10,000 pairs of verdicts, then verbosity, repeat (K = 3) and calibration on
10,000 examples, each with its seeded percentile bootstrap. Judges' scores are discrete (a
pairwise verdict 0 / 0.5 / 1, a 1-5 scale), which the statistics resample as multinomial counts
of each kind of row; the same probes on continuous scores (every row its own kind: resampled by
index, the worst case) are timed beside them. The reference is the same statistics written as a
loop over resamples (numpy per resample, as a plain implementation would).

    python benchmarks/bench_audit.py
    python benchmarks/bench_audit.py real --model smollm2 --n 40 [--repeats 3] [--out file.json]

``real``: the position and repeat audits of pairwise_preference through a real tiny judge
(SmolLM2-135M-Instruct or Gemma 3 270M) behind llama-cpp-python's OpenAI-compatible server on
127.0.0.1 (``tests/llama_server.py``, as the real-model tests start it), on the ``--n`` shortest
pairs of LLMBar Natural (shortest: a CPU reads them in reasonable time), gold labels from the
set. The figures in docs/audit.md come from it: a check of the plumbing (requests counted, every
verdict usable or counted unscored), never of a judge's quality.
"""

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import print_table, timed  # noqa: E402

N, RESAMPLES = 10_000, 1000


def _inputs(continuous):
    rng = np.random.default_rng(0)
    verdicts = np.array(["a", "b", "tie", None], dtype=object)
    first = verdicts[rng.choice(4, N, p=[0.45, 0.4, 0.1, 0.05])].tolist()
    second = verdicts[rng.choice(4, N, p=[0.4, 0.45, 0.1, 0.05])].tolist()
    gold = np.array(["a", "b"], dtype=object)[rng.integers(0, 2, N)].tolist()
    if continuous:
        truth = rng.random(N)
        original = truth.tolist()
        padded = np.clip(truth + rng.normal(0.02, 0.1, N), 0, 1).tolist()
        repeats = np.clip(truth[:, None] + rng.normal(0, 0.1, (N, 3)), 0, 1).tolist()
        probs = truth.tolist()
    else:
        truth = rng.integers(1, 6, N)
        original = (truth / 1.0).tolist()
        padded = np.clip(truth + rng.choice([0, 0, 1], N), 1, 5).astype(float).tolist()
        repeats = np.clip(truth[:, None] + rng.choice([-1, 0, 0, 0, 1], (N, 3)), 1, 5).astype(float).tolist()
        probs = ((truth - 1) / 4).tolist()
    labels = (rng.random(N) < np.asarray(probs if not continuous else truth)).astype(int).tolist()
    return first, second, gold, original, padded, repeats, probs, labels


def _audit(inputs, span):
    from textgen_metrics.stats.audit import calibration_audit, position_audit, repeat_audit, verbosity_audit

    first, second, gold, original, padded, repeats, probs, labels = inputs
    kw = {"n_resamples": RESAMPLES, "seed": 1}
    return (position_audit(first, second, gold, **kw), verbosity_audit(original, padded, score_range=span, **kw),
            repeat_audit(repeats, score_range=span, **kw), calibration_audit(probs, labels, **kw))


def _loop_position(first, second, gold):
    """The reference: the position statistics recomputed on each resample of pair indices."""
    f, s, g = (np.array([x or "none" for x in v]) for v in (first, second, gold))
    keep = (f != "none") & (s != "none")
    f, s, g = f[keep], s[keep], g[keep]
    rng = np.random.default_rng(1)
    out = []
    for _ in range(RESAMPLES):
        i = rng.integers(0, len(f), len(f))
        fi, si, gi = f[i], s[i], g[i]
        fav = ((fi == "a") + 0.5 * (fi == "tie")).sum() + ((si == "b") + 0.5 * (si == "tie")).sum()
        out.append(((fi == si).mean(), fav / (2 * len(fi)), (fi == gi).mean(), (si == gi).mean()))
    return out


def main():
    rows, out = [], {}
    for label, continuous, span in (("judge scores (discrete)", False, (1.0, 5.0)),
                                    ("continuous scores (worst case)", True, (0.0, 1.0))):
        inputs = _inputs(continuous)
        _audit(inputs, span)  # warm-up (imports)
        seconds, _ = timed(lambda inputs=inputs, span=span: _audit(inputs, span), repeat=5)
        rows.append([f"4 probes, {label}", f"{seconds:.3f}", ""])
        out[label] = seconds
    inputs = _inputs(False)
    from textgen_metrics.stats.audit import position_audit

    ours, _ = timed(lambda: position_audit(inputs[0], inputs[1], inputs[2], n_resamples=RESAMPLES, seed=1), repeat=5)
    loop, _ = timed(lambda: _loop_position(inputs[0], inputs[1], inputs[2]), repeat=1)
    rows.append(["position_audit", f"{ours:.3f}", f"{loop / ours:.1f}x"])
    rows.append(["position, a loop over resamples", f"{loop:.3f}", "1.0x"])
    out.update({"position_audit": ours, "position_loop": loop})
    print_table(f"audit statistics, {N:,} pairs / examples, {RESAMPLES} resamples", rows)
    return out


def shortest_pairs(n):
    """The ``n`` LLMBar Natural pairs with the fewest characters (query and both outputs)."""
    from textgen_metrics.meta.data import load_set

    rows = load_set("llmbar_natural").rows
    rows = sorted(rows, key=lambda r: len(r["query"]) + len(r["prediction"]) + len(r["baseline"]))[:n]
    return [{"query": r["query"], "prediction": r["prediction"], "baseline": r["baseline"], "gold": r["gold"]}
            for r in rows]


def real(model, n, repeats, out_path=None):
    import json
    import time

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from llama_server import llama_server
    from textgen_metrics.audits.report import format_summary
    from textgen_metrics.audits.run import audit
    from textgen_metrics.judges import OpenAIJudge
    from textgen_metrics.judges.tiny import tiny_model_file

    rows = shortest_pairs(n)
    with llama_server(tiny_model_file(model)) as url:
        judge = OpenAIJudge(model, base_url=url, api_key="none", timeout=600)
        start = time.perf_counter()
        result = audit(rows, metrics="pairwise_preference", judge=judge, probes=("position", "repeat"),
                       repeats=repeats, human_column="gold", seed=0)
        result["seconds"] = time.perf_counter() - start
        result["judge_mode"] = judge.judge_mode
    print(format_summary(result))
    print(f"{result['seconds']:.0f} s; judge mode {result['judge_mode']}")
    if out_path:
        with open(out_path, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    r = sub.add_parser("real", help="the position and repeat audits on a real tiny judge behind a real server")
    r.add_argument("--model", choices=["smollm2", "gemma3"], default="smollm2")
    r.add_argument("--n", type=int, default=40)
    r.add_argument("--repeats", type=int, default=3)
    r.add_argument("--out")
    args = parser.parse_args()
    if args.command == "real":
        real(args.model, args.n, args.repeats, args.out)
    else:
        main()
