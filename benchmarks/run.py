"""`make bench`: every benchmark, each a ratio against its peers in the same run."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_audit  # noqa: E402
import bench_bertscore  # noqa: E402
import bench_budget_wait  # noqa: E402
import bench_cluster_budget  # noqa: E402
import bench_judges  # noqa: E402
import bench_lexical  # noqa: E402
import bench_meta  # noqa: E402
import bench_mt  # noqa: E402
import bench_rouge  # noqa: E402
import bench_scaleout  # noqa: E402
import bench_trainer  # noqa: E402

BENCHES = {"rouge": bench_rouge.main, "lexical": bench_lexical.main, "mt": bench_mt.main,
           "judges": bench_judges.main, "bertscore": bench_bertscore.main, "trainer": bench_trainer.main,
           "cluster_budget": bench_cluster_budget.main, "budget_wait": bench_budget_wait.main,
           "scaleout": bench_scaleout.main, "audit": bench_audit.main,
           "meta": bench_meta.main}


def main(names=None):
    results = {}
    for name, fn in BENCHES.items():
        if names and name not in names:
            continue
        results[name] = fn()
    out = os.path.join(os.path.dirname(HERE), "reports", "bench.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
