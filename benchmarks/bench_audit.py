"""The audit statistics on 10,000 pairs (issue 38: under a second, 1,000 resamples each):
position_audit on 10,000 pairs of verdicts, then verbosity, repeat (K = 3) and calibration on
10,000 examples, each with its seeded percentile bootstrap. Judges' scores are discrete (a
pairwise verdict 0 / 0.5 / 1, a 1-5 scale), which the statistics resample as multinomial counts
of each kind of row; the same probes on continuous scores (every row its own kind: resampled by
index, the worst case) are timed beside them. The reference is the same statistics written as a
loop over resamples (numpy per resample, as a plain implementation would).

    python benchmarks/bench_audit.py
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
    from textgen_metrics.audit.stats import calibration_audit, position_audit, repeat_audit, verbosity_audit

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
    from textgen_metrics.audit.stats import position_audit

    ours, _ = timed(lambda: position_audit(inputs[0], inputs[1], inputs[2], n_resamples=RESAMPLES, seed=1), repeat=5)
    loop, _ = timed(lambda: _loop_position(inputs[0], inputs[1], inputs[2]), repeat=1)
    rows.append(["position_audit", f"{ours:.3f}", f"{loop / ours:.1f}x"])
    rows.append(["position, a loop over resamples", f"{loop:.3f}", "1.0x"])
    out.update({"position_audit": ours, "position_loop": loop})
    print_table(f"audit statistics, {N:,} pairs / examples, {RESAMPLES} resamples", rows)
    return out


if __name__ == "__main__":
    main()
