"""Meta-evaluation statistics against Google's mt-metrics-eval, in the same run, on a WMT-sized
table: 15 systems x 1,500 items x 10 metrics, human scores with ties (rounded to 0.1, as MQM
scores are coarse). One thread each (threadpoolctl), as "on one core" asks.

- tie-calibrated pairwise accuracy (``acc_eq``) grouped by item, 10 metrics: ours
  ``meta_evaluate(..., group_by="item", statistics=("acc_eq",), n_resamples=0, compare=False)``
  against mt-metrics-eval's ``KendallWithTiesOpt(..., "acc23", num_sys, "item", 1.0)`` per metric;
- soft pairwise accuracy, 10 metrics, 1,000 permutations and a 1,000-resample bootstrap interval
  over items: ours (``level="system"``, ``statistics=("spa",)``, ``n_resamples=1000``) against
  ``pce.compute_pairwise_p_values`` for the human scores and each metric, then
  ``compute_one_minus_pce``, on the full table and on each resample of items (mt-metrics-eval has
  no interval: its time is the value's plus 1,000 times a resample's, measured on 5; ours: the
  value from pce's own float32 product, bit for bit, each resample's from the compiled core's
  sign-flip counts, ``stats.agreement.spa_resampled``); and the value alone (``stats.agreement.spa_values``,
  the code meta_evaluate runs) against the same pce calls;
- the pairwise significance tests between all 10 metrics (45 pairs, 1,000 draws): ours
  ``compare=True`` against ``stats.PermutationSigDiff`` for Pearson (pooled and grouped by item)
  and ``PairwisePermutationSigDiff`` for acc_eq by item. mt-metrics-eval takes hours for these,
  so its time is its measured time for a few draws of one pair, times draws and pairs (said in
  the table).

The reference is the copy of mt-metrics-eval vendored for the parity tests (tests/reference, commit
68a481a; its functions unmodified). The last row times the bundled sets' full lexical
meta-evaluation (the metric cards' studies without BERTScore: ROUGE, BLEU, Google BLEU, METEOR,
chrF, TER on SummEval, FRANK and WMT21 TED, with 1,000 resamples and the comparisons).

    python benchmarks/bench_meta.py
"""

import os
import sys
import time
from dataclasses import replace

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from common import print_table, timed  # noqa: E402

S, N_ITEMS, K = 15, 1500, 10
DRAWS = 1000


def _table():
    rng = np.random.default_rng(0)
    h = rng.normal(size=(S, N_ITEMS)) + rng.normal(size=(S, 1))
    scores = {f"m{k}": (h + rng.normal(size=(S, N_ITEMS)) * (0.5 + 0.2 * k)).ravel().tolist() for k in range(K)}
    human = h.round(1).ravel().tolist()
    items = np.tile(np.arange(N_ITEMS), S).tolist()
    systems = [f"s{s:02d}" for s in range(S) for _ in range(N_ITEMS)]
    return scores, human, items, systems


def _ours(scores, human, items, systems, **kw):
    from textgen_metrics.meta.evaluate import meta_evaluate

    return meta_evaluate(scores, human, items=items, systems=systems, seed=1, **kw)


def _per_unit(fn, units):
    """Seconds of ``fn()`` divided by the ``units`` of work it did."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) / units


def _spa_values_only(mats, draws):
    """The value path of spa in meta_evaluate (stats.agreement): the signs and the human p-values once,
    every metric's p-values in one batched product."""
    from textgen_metrics.stats import agreement as stats

    signs = stats.spa_signs(N_ITEMS, draws, 1)
    metrics = np.stack([mats[f"m{k}"] for k in range(K)])
    return stats.spa_values(mats["human"], metrics, signs)


def _lexical_studies():
    import cards  # tools/cards.py

    studies = [replace(c, study=replace(c.study, metrics={k: v for k, v in c.study.metrics.items()
                                                          if k != "bertscore"}))
               for c in cards.STUDIES]
    return cards.compute(studies)


def main():
    import scipy.stats
    from mt_metrics_eval import pce
    from mt_metrics_eval import stats as ref
    from threadpoolctl import threadpool_limits

    scores, human, items, systems = _table()
    rows = []
    out = {}
    with threadpool_limits(1):
        # acc_eq by item
        ours, res = timed(lambda: _ours(scores, human, items, systems, group_by="item", statistics=("acc_eq",),
                                        n_resamples=0, compare=False), repeat=3)
        per_metric = _per_unit(lambda: ref.KendallWithTiesOpt(human, scores["m0"], "acc23", S, "item", 1.0), 1)
        theirs = per_metric * K
        rows.append(["acc_eq by item, 10 metrics (values)", f"{ours:.3f}", f"{theirs:.2f}", f"{theirs / ours:.1f}x"])
        out["acc_eq_item"] = {"ours": ours, "mt_metrics_eval": theirs}
        # soft pairwise accuracy: the value (1,000 permutations) and a 1,000-resample interval over items
        ours, _ = timed(lambda: _ours(scores, human, items, systems, level="system", statistics=("spa",),
                                      n_resamples=DRAWS, compare=False), repeat=1)
        mats = {name: np.asarray(values, dtype=float).reshape(S, N_ITEMS)
                for name, values in [("human", human), *scores.items()]}

        def ref_spa(columns):
            hp = pce.compute_pairwise_p_values(mats["human"][:, columns], num_permutations=DRAWS)
            for k in range(K):
                pce.compute_one_minus_pce(hp, pce.compute_pairwise_p_values(mats[f"m{k}"][:, columns],
                                                                            num_permutations=DRAWS))

        rng = np.random.default_rng(1)
        value_time = _per_unit(lambda: ref_spa(np.arange(N_ITEMS)), 1)
        boot = 5
        per_resample = _per_unit(lambda: [ref_spa(rng.integers(0, N_ITEMS, N_ITEMS)) for _ in range(boot)], boot)
        theirs = value_time + DRAWS * per_resample
        rows.append([f"spa, 10 metrics, {DRAWS} permutations, {DRAWS}-resample interval", f"{ours:.2f}",
                     f"{theirs:.0f} (est.)", f"{theirs / ours:.1f}x"])
        values_only = _per_unit(lambda: _spa_values_only(mats, DRAWS), 1)
        rows.append([f"spa values only, 10 metrics, {DRAWS} permutations", f"{values_only:.3f}", f"{value_time:.3f}",
                     f"{value_time / values_only:.1f}x"])
        out["spa"] = {"ours": ours, "mt_metrics_eval_estimated": theirs, "values_only_ours": values_only,
                      "values_only_mt_metrics_eval": value_time}
        # pairwise significance between all metrics
        c = [ref.Correlation(S, human, scores[f"m{k}"]) for k in range(2)]
        pairs = K * (K - 1) // 2
        for group_by in ("none", "item"):
            ours, _ = timed(lambda g=group_by: _ours(scores, human, items, systems, group_by=g,
                                                     statistics=("pearson",), n_resamples=0, compare=True), repeat=3)
            draws = 20
            per_draw = _per_unit(lambda g=group_by, d=draws: ref.PermutationSigDiff(
                c[1], c[0], scipy.stats.pearsonr, g, d, ref.PermutationSigDiffParams(d, -1, 2)), draws)
            theirs = per_draw * DRAWS * pairs
            rows.append([f"pearson ({group_by}) tests, 45 pairs x {DRAWS} draws", f"{ours:.3f}",
                         f"{theirs:.0f} (est.)", f"{theirs / ours:.0f}x"])
            out[f"compare_pearson_{group_by}"] = {"ours": ours, "mt_metrics_eval_estimated": theirs}
        ours, _ = timed(lambda: _ours(scores, human, items, systems, group_by="item", statistics=("acc_eq",),
                                      n_resamples=0, compare=True), repeat=1)
        draws = 2
        per_draw = _per_unit(lambda: ref.PairwisePermutationSigDiff(
            c[1], c[0], "acc23", "item", draws, ref.PermutationSigDiffParams(draws, -1, 2)), draws)
        theirs = per_draw * DRAWS * pairs
        rows.append([f"acc_eq (item) tests, 45 pairs x {DRAWS} draws", f"{ours:.3f}", f"{theirs:.0f} (est.)",
                     f"{theirs / ours:.0f}x"])
        out["compare_acc_eq_item"] = {"ours": ours, "mt_metrics_eval_estimated": theirs}
    start = time.perf_counter()
    _lexical_studies()
    lexical = time.perf_counter() - start
    rows.append(["bundled sets, full lexical meta-evaluation (6 studies, intervals, tests)", f"{lexical:.1f}", "-",
                 "-"])
    out["lexical_studies_seconds"] = lexical
    print_table("meta-evaluation statistics, 15 systems x 1,500 items x 10 metrics, one thread", rows,
                header=("operation", "ours s", "mt-metrics-eval s", "speed-up"))
    return out


if __name__ == "__main__":
    main()
