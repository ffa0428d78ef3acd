"""ROUGE against rouge-score (what Hugging Face's rouge runs), same run, same inputs.

Sets: 2,000 pairs of ~40 tokens and 200 pairs of ~800 tokens, one sentence per line, the four
default types, stemmer on. Scores must be identical; the speed-up is rouge-score's time over
ours, each starting cold (no stemmer memo carried over). Memory: peak RSS of a process that
streams 10,000 and one that streams 100,000 pairs through the aggregator.
"""

import json
import os
import subprocess
import sys

from common import print_table, timed
from textdata import pairs

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def _cold():
    from textgen_metrics.tokenizers import PorterStemmer

    PorterStemmer._shared = None


def _speed(n, tokens, repeat_ref):
    from rouge_score import rouge_scorer

    import textgen_metrics

    data = pairs(n, tokens, seed=n + tokens)
    preds = [p for p, _ in data]
    refs = [r for _, r in data]

    def ours():
        return textgen_metrics.rouge(preds, refs, rouge_types=TYPES, use_stemmer=True, use_aggregator=False)

    def reference():
        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
        return [scorer.score(r, p) for p, r in zip(preds, refs)]

    t_ours, got = timed(ours, repeat=3, setup=_cold)
    t_ref, want = timed(reference, repeat=repeat_ref)
    worst = max(abs(got[t][i] - want[i][t].fmeasure) for t in TYPES for i in range(n))
    return t_ours, t_ref, worst


def _rss(n):
    code = (
        "import resource, sys; sys.path.insert(0, 'benchmarks');"
        "from textdata import stream; from textgen_metrics.lexical.rouge import RougeScorer, RougeAggregator;"
        f"agg = RougeAggregator(RougeScorer({TYPES!r}, use_stemmer=True));"
        f"[agg.add(p, r) for p, r in stream({n}, 40, seed=1)];"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main():
    results = {}
    rows = []
    for label, n, tokens, rep in [("short: 2,000 pairs x ~40 tokens", 2000, 40, 3),
                                  ("long: 200 pairs x ~800 tokens", 200, 800, 1)]:
        t_ours, t_ref, worst = _speed(n, tokens, rep)
        rows.append([f"{label} | rouge-score 0.1.2", f"{t_ref:.3f}", "1.0x"])
        rows.append([f"{label} | textgen-metrics", f"{t_ours:.3f}", f"{t_ref / t_ours:.1f}x"])
        results[label] = {"rouge_score_s": t_ref, "textgen_metrics_s": t_ours,
                          "speedup": t_ref / t_ours, "max_abs_diff": worst}
        assert worst <= 1e-12, f"scores differ by {worst}"
    print_table("ROUGE speed (rouge1, rouge2, rougeL, rougeLsum; stemmer on; identical scores)", rows)
    small, large = _rss(10_000), _rss(100_000)
    print_table("ROUGE memory, streaming aggregator (peak RSS, MiB)",
                [["10,000 pairs", f"{small:.1f}", ""], ["100,000 pairs", f"{large:.1f}", f"{large / small:.2f}x of 10k"]],
                header=("pairs", "peak MiB", "ratio"))
    results["memory_mib"] = {"10000": small, "100000": large, "ratio": large / small}
    return results


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(main(), indent=2))
