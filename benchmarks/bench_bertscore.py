"""BERTScore against bert_score 0.3.13, same model (the packaged all-MiniLM-L6-v2), same layer,
CPU, same run: 1,000 pairs as real evaluation sets have them (250 references, each scored
against 4 systems), once with even lengths and once with lengths spread as in real sets. Both keep
the model loaded (bert_score's BERTScorer, our BertScorer).
Scores must agree to 1e-5. Memory: peak RSS of a process scoring 1,000 and one scoring 10,000
pairs.
"""

import json
import os
import random
import subprocess
import sys
import warnings

from common import print_table, timed
from textdata import pairs


def dataset(n_refs, systems=4, seed=11, mixed=False):
    """``n_refs`` references, each with ``systems`` predictions. Even lengths (~30-50 words), or
    ``mixed``: reference lengths drawn log-normally (median ~40 words, from ~5 to several
    hundred), as summarisation and QA sets have them."""
    rng = random.Random(seed)
    if mixed:
        base = [pairs(1, max(5, min(400, int(rng.lognormvariate(3.7, 0.8)))), seed=seed * 1000 + i)[0]
                for i in range(n_refs)]
    else:
        base = pairs(n_refs, 30, seed=seed)
    preds, refs = [], []
    for _, ref in base:
        flat = ref.replace("\n", " ")
        for s in range(systems):
            words = flat.split()
            words = [w for w in words if rng.random() > 0.15 * (s + 1)]
            preds.append(" ".join(words))
            refs.append(flat)
    return preds, refs


def _rss(n_pairs):
    code = (
        "import resource, sys, warnings; warnings.filterwarnings('ignore'); sys.path.insert(0, 'benchmarks');"
        "from bench_bertscore import dataset; from textgen_metrics.semantic.bertscore import BertScorer;"
        f"p, r = dataset({n_pairs // 4}); s = BertScorer(device='cpu');"
        "s.score(p, [[x] for x in r]);"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from bert_score import BERTScorer as Reference

    import bert_score_reference  # noqa: F401  (transformers 5 shim for the reference)
    from textgen_metrics.semantic.bertscore import BertScorer, default_model_path

    rows = []
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = Reference(model_type=default_model_path(), num_layers=6, batch_size=64, device="cpu")
        ours = BertScorer(device="cpu", batch_size=64)
        for label, mixed in (("even lengths", False), ("mixed lengths", True)):
            preds, refs = dataset(250, mixed=mixed)
            t_ref, want = timed(lambda preds=preds, refs=refs: theirs.score(preds, refs), repeat=1)
            t_ours, got = timed(lambda preds=preds, refs=refs: ours.score(preds, [[r] for r in refs]), repeat=1,
                                setup=ours._ids.clear)
            worst = max(max(abs(a - b) for a, b in zip(g, w.tolist(), strict=True))
                        for g, w in zip(got, want, strict=True))
            assert worst <= 1e-5, worst
            rows.append([f"{label} | bert_score 0.3.13 BERTScorer", f"{t_ref:.2f}", "1.0x", ""])
            rows.append([f"{label} | textgen-metrics BertScorer", f"{t_ours:.2f}", f"{t_ref / t_ours:.2f}x",
                         f"{worst:.1e}"])
            results[label] = {"bert_score_s": t_ref, "ours_s": t_ours, "speedup": t_ref / t_ours,
                              "max_abs_diff": worst}
    print_table("BERTScore speed, CPU, 1,000 pairs (250 references x 4 systems)", rows,
                header=("contender", "seconds", "speed-up", "max |diff|"))
    small, large = _rss(1000), _rss(10000)
    print_table("BERTScore memory (peak RSS, MiB)",
                [["1,000 pairs", f"{small:.0f}", ""], ["10,000 pairs", f"{large:.0f}", f"{large / small:.2f}x of 1k"]],
                header=("pairs", "peak MiB", "ratio"))
    results.update(rss_1000_mib=small, rss_10000_mib=large)
    return results


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(main(), indent=2))
