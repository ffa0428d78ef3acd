"""The quality gates measured on the seeded noisy-judge simulator of the tests
(``tests/gate_sim.py``: items with true scores, spread 0.15 around the suite's mean; each judge
call answers an item's true score plus Gaussian noise, sd 0.1 per call, clipped to [0, 1]).
The tables of docs/gating.md come from this script (issue 47, item 5).

    python benchmarks/gates.py [--sims 300] [--suites 10] [--seed 0]

1. error rates at threshold 0.6 over ``--sims`` suites of 100 items drawn anew from a population
   whose mean is the true mean (the suite's own mean varies around it): false fail
   (true mean = threshold + 0.05), false pass (threshold - 0.05), for ``gate`` (``repeats="auto"``,
   up to 5, and fixed K), a one-run point gate (the mean of one run >= threshold) and deepeval's
   ``assert_test`` itself (``--deepeval PYTHON``: deepeval's interpreter, ``make bench-peers``'
   venv; not the project's: deepeval brings 20 packages, three pytest plugins that would load in
   the whole test suite and a telemetry client) on the same judge calls, through
   ``gates_deepeval_runner.py``: per item (a parametrised ``deepeval test run``) and on the
   run's mean; without ``--deepeval`` its rule is simulated (the point gate: one run's score
   against the threshold);
   and at the threshold itself (every pass and every fail is wrong there: each at most 2.5%),
   against the adaptive rule without spending the error over the looks;
2. reruns of an unchanged suite (true mean threshold + 0.02, ``--suites`` suites of 100 items,
   100 reruns each, only the judge's noise differing): suites where two reruns give pass and
   fail, and the share of rerun pairs whose verdicts differ;
3. paired regression, n = 200, sd of the paired difference 0.2, three metrics with Holm: the
   share of runs a drop of 0.05 in one metric is found (``regressed``), and the share of runs
   with no change anywhere where some metric is flagged;
4. LLMBar Natural's stored judges (100 pairs, verdicts in both orders): a gate on the judge's
   accuracy against the gold labels, the two orders averaged within the pair, beside a one-run
   point gate on either order; each evaluator's two protocols compared, paired per pair;
5. strict replay's overhead: a g_eval gate of 100 items replayed from its recording against
   the metric's own run as a user runs it (its interval included; its judge answering every
   request from an in-memory cache), each gate in a fresh judge as a test session's gates;
6. judge calls per item: adaptive against fixed K (from table 1's runs).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gate_sim as G  # noqa: E402
from common import print_table  # noqa: E402
from textgen_metrics.gates.gate import decide  # noqa: E402
from textgen_metrics.gates.regression import decide_paired, paired_figures  # noqa: E402

THRESHOLD, ITEMS, SD, RESAMPLES = 0.6, 100, 0.1, 1000
POLICIES = (("gate, auto (max 5)", True, 5), ("gate, K = 1", False, 1), ("gate, K = 3", False, 3),
            ("gate, K = 5", False, 5))


def point_gate(target):
    """One run's mean against the threshold: what deepeval's assert_test and most CI checks do."""
    values = target.repeat(0).values
    return "pass" if np.mean(values) >= THRESHOLD else "fail"


DEEPEVAL_RULES = ("deepeval assert_test, per item", "deepeval assert_test, on the mean")


def deepeval_verdicts(python, runs, threshold=THRESHOLD, per_item=True):
    """deepeval's own verdicts on ``runs`` (one judge call per item each), by rule: its
    ``assert_test`` in deepeval's interpreter (gates_deepeval_runner.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "runs.json")
        with open(path, "w") as f:
            json.dump({"threshold": threshold, "per_item": per_item,
                       "runs": [[float(v) for v in run] for run in runs]}, f)
        proc = subprocess.run([python, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "gates_deepeval_runner.py"), path],
                              capture_output=True, text=True, cwd=tmp, check=False)
        if proc.returncode:
            raise SystemExit(f"gates_deepeval_runner.py failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        got = json.loads(proc.stdout.strip().splitlines()[-1])
    return dict(zip(DEEPEVAL_RULES, (got["per_item"], got["mean"]), strict=True))


def error_rates(sims, seed, deepeval=None):
    rows, calls = [], {}
    for true_mean, wrong, label in ((THRESHOLD + 0.05, "fail", "false fail"), (THRESHOLD - 0.05, "pass", "false pass")):
        counts = {name: {"pass": 0, "fail": 0, "inconclusive": 0, "requests": 0} for name, _, _ in POLICIES}
        counts["point gate / deepeval rule"] = {"pass": 0, "fail": 0, "inconclusive": 0, "requests": 0}
        one_runs = []
        for s in range(sims):
            target = G.SimTarget(G.true_scores(ITEMS, true_mean, seed=seed + s, centered=False), SD, seed + s)
            for name, adaptive, most in POLICIES:
                result = decide(target, THRESHOLD, adaptive, most, 0.95, "inconclusive", 0.1, RESAMPLES, s)
                counts[name][result.verdict] += 1
                counts[name]["requests"] += result.requests
            counts["point gate / deepeval rule"][point_gate(target)] += 1
            counts["point gate / deepeval rule"]["requests"] += ITEMS
            one_runs.append(target.repeat(0).values)
        if deepeval:
            for name, verdicts in deepeval_verdicts(deepeval, one_runs).items():
                counts[name] = {"pass": verdicts.count("pass"), "fail": verdicts.count("fail"), "inconclusive": 0,
                                "requests": ITEMS * sims}
        for name, c in counts.items():
            rows.append((label, f"{true_mean:.2f}", name, f"{c[wrong] / sims:.1%}", f"{c['inconclusive'] / sims:.1%}",
                         f"{c['requests'] / sims / ITEMS:.2f}"))
            calls.setdefault(name, []).append(c["requests"] / sims / ITEMS)
    print_table(f"error rates at threshold {THRESHOLD}, {ITEMS} items, per-call sd {SD}, {sims} suites each", rows,
                ("case", "true mean", "rule", "wrong verdict", "inconclusive", "calls per item"))
    return calls


def at_threshold(sims, seed):
    """True mean exactly at the threshold: any pass is a false pass and any fail a false fail,
    each at most 2.5% for a 95% interval, with repeats="auto"'s stopping too; the same adaptive
    rule without spending the error (each look at 95%) shows why the looks must share it."""
    rules = (("gate, auto (max 5), error spent over the looks", True, 5, 0.95),
             ("auto (max 5), each look at 95% (not spent)", True, 5, 0.75),
             ("gate, K = 1", False, 1, 0.95))
    counts = {name: [0, 0] for name, *_ in rules}
    counts["point gate / deepeval rule"] = [0, 0]
    for s in range(sims):
        target = G.SimTarget(G.true_scores(ITEMS, THRESHOLD, seed=seed + 5000 + s, centered=False), SD,
                             seed + 5000 + s)
        for name, adaptive, most, level in rules:
            verdict = decide(target, THRESHOLD, adaptive, most, level, "inconclusive", 0.1, RESAMPLES, s).verdict
            counts[name][0] += verdict == "pass"
            counts[name][1] += verdict == "fail"
        point = point_gate(target)
        counts["point gate / deepeval rule"][0] += point == "pass"
        counts["point gate / deepeval rule"][1] += point == "fail"
    print_table(f"true mean at the threshold ({THRESHOLD}), {ITEMS} items, {sims} suites", [
        (name, f"{p / sims:.1%}", f"{f / sims:.1%}") for name, (p, f) in counts.items()],
        ("rule", "pass", "fail"))


def reruns(suites, seed, deepeval=None):
    rows = []

    def row(name, per_suite):
        flipped, pairs_differ = 0, 0.0
        for verdicts in per_suite:
            passes, fails = verdicts.count("pass"), verdicts.count("fail")
            flipped += passes > 0 and fails > 0
            pairs_differ += 2 * passes * fails / (100 * 99)
        rows.append((name, f"{flipped} / {suites}", f"{pairs_differ / suites:.2%}"))

    def targets(s):
        true = G.true_scores(ITEMS, THRESHOLD + 0.02, seed=seed + 1000 + s)
        return [G.SimTarget(true, SD, seed=10_000 * (s + 1) + r) for r in range(100)]

    for name, adaptive, most in (*POLICIES, ("point gate / deepeval rule", None, 1)):
        row(name, [[point_gate(t) if adaptive is None else
                    decide(t, THRESHOLD, adaptive, most, 0.95, "inconclusive", 0.1, RESAMPLES, r).verdict
                    for r, t in enumerate(targets(s))] for s in range(suites)])
    if deepeval:
        runs = [t.repeat(0).values for s in range(suites) for t in targets(s)]
        for name, verdicts in deepeval_verdicts(deepeval, runs).items():
            row(name, [verdicts[100 * s:100 * (s + 1)] for s in range(suites)])
    print_table(f"100 reruns of an unchanged suite (true mean {THRESHOLD + 0.02}), {suites} suites", rows,
                ("rule", "suites with pass and fail", "rerun pairs pass vs fail"))


def paired(sims, seed, n=200, sd=0.2, drop=0.05):
    rows = []
    for label, drops in (("drop of 0.05 in metric 1", (drop, 0.0, 0.0)), ("no change", (0.0, 0.0, 0.0))):
        found = flagged = 0
        for s in range(sims):
            rng = np.random.default_rng([seed, 4, s])
            figures = [{"metric": f"m{i}", "key": f"m{i}",
                        **paired_figures(list(rng.normal(-d, sd, n)), 0.0, 0.95, RESAMPLES, 2000, s, 3)}
                       for i, d in enumerate(drops)]
            verdicts = [r["verdict"] for r in decide_paired(figures, 0.0, 0.05)]
            found += verdicts[0] == "regressed"
            flagged += "regressed" in verdicts
        rows.append((label, f"{found / sims:.1%}" if drops[0] else "-", f"{flagged / sims:.1%}"))
    print_table(f"paired regression, n = {n}, sd of the difference {sd}, 3 metrics, Holm, {sims} runs", rows,
                ("case", "metric 1 regressed", "any metric regressed"))


class StoredJudge:
    """A stored LLMBar judge in the gate decision's shape: repeat 0 is its verdicts in the first
    order, repeat 1 in the swapped order; an item's score is 1 when the verdict is the gold one
    (None: no verdict, unscored)."""

    judged, key, lower_is_better, fingerprint = True, "accuracy", False, None

    def __init__(self, judge, gold):
        self.name = f"{judge.evaluator}/{judge.protocol}"
        self.orders = [[None if v[k] is None else float(v[k] == g) for v, g in zip(judge.verdicts, gold, strict=True)]
                       for k in (0, 1)]

    def repeat(self, number):
        from textgen_metrics.gates.scoring import Scored

        return Scored(self.orders[number], 0)


def llmbar(threshold=0.75, deepeval=None):
    """LLMBar Natural's stored judges (100 pairs, both orders): the gate over items with the two
    orders averaged within the pair, against a one-run point gate on either order; and each
    evaluator's two protocols compared, paired per pair, Holm over the evaluators."""
    from textgen_metrics.meta.data import load_set

    data = load_set("llmbar_natural")
    gold = [r["gold"] for r in data.rows]
    rows, disagree = [], 0
    targets = {}
    for judge in data.judges:
        target = StoredJudge(judge, gold)
        targets[(judge.evaluator, judge.protocol)] = target
        result = decide(target, threshold, False, 2, 0.95, "inconclusive", 0.1, RESAMPLES, 0)
        points = []
        for order in target.orders:
            kept = [v for v in order if v is not None]
            points.append(f"{np.mean(kept):.2f} {'pass' if np.mean(kept) >= threshold else 'fail'}")
        disagree += points[0].split()[1] != points[1].split()[1]
        low, high = result.ci
        rows.append((target.name, points[0], points[1], f"{result.score:.3f} [{low:.3f}, {high:.3f}]",
                     result.verdict))
    header = ("judge", "point gate, order 1", "point gate, order 2", "gate: score [interval]", "gate verdict")
    if deepeval:  # deepeval's assert_test on each order's accuracy
        runs = [[v for v in order if v is not None] for judge in data.judges
                for order in targets[(judge.evaluator, judge.protocol)].orders]
        said = deepeval_verdicts(deepeval, runs, threshold, per_item=False)[DEEPEVAL_RULES[1]]
        rows = [(*row, said[2 * i], said[2 * i + 1]) for i, row in enumerate(rows)]
        header += ("deepeval, order 1", "deepeval, order 2")
    print_table(f"LLMBar Natural's stored judges, accuracy >= {threshold} (100 pairs; the gate: both orders "
                f"averaged within the pair)", rows, header)
    print(f"judges whose two one-order point gates disagree: {disagree} of {len(data.judges)}")
    evaluators = sorted({e for e, _ in targets})
    figures = []
    for evaluator in evaluators:
        base, cand = targets[(evaluator, "Vanilla")], targets[(evaluator, "Vanilla_NoRules")]
        from textgen_metrics.stats.gates import item_means
        b, c = item_means(list(zip(*base.orders, strict=True))), item_means(list(zip(*cand.orders, strict=True)))
        differences = [y - x for x, y in zip(b, c, strict=True) if x is not None and y is not None]
        figures.append({"metric": evaluator, "key": "accuracy",
                        **paired_figures(differences, 0.0, 0.95, RESAMPLES, 10_000, 0, len(evaluators))})
    print_table("LLMBar Natural: Vanilla_NoRules against Vanilla, paired per pair, Holm over the evaluators", [
        (f["metric"], f"{f['delta']:+.3f}", f"[{f['ci'][0]:+.3f}, {f['ci'][1]:+.3f}]", f"{f['p_adjusted']:.3g}",
         f["verdict"]) for f in decide_paired(figures, 0.0, 0.05)], ("evaluator", "delta", "interval", "p (Holm)",
                                                                    "verdict"))


def replay_overhead(repeat=20):
    import textgen_metrics as tm
    from textgen_metrics import CallableJudge
    from textgen_metrics.gates.replay import RecordingCache
    from textgen_metrics.registry import METRICS

    true = G.true_scores(ITEMS, 0.9)
    with tempfile.TemporaryDirectory() as folder:
        recording = os.path.join(folder, "judge.jsonl")
        judge = CallableJudge(G.NoisyJudge(true, SD, 1), model="noisy-sim")
        kw = {"options": G.G_EVAL, "predictions": G.predictions(ITEMS)}
        tm.gate("g_eval", 60, judge=judge, judge_replay="record", judge_recording=recording, **kw)

        def never(messages, task):
            raise AssertionError("replay called the judge")

        entries = {}
        with open(recording) as f:
            for line in f:
                row = json.loads(line)
                entries[row["key"]] = row["answer"]
        cached = CallableJudge(never, model="noisy-sim", cache=RecordingCache(entries))
        own, gated = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            metric = METRICS["g_eval"](judge=cached, **G.G_EVAL)  # with its own interval, as a user runs it
            metric.score(metric.statistics({"predictions": kw["predictions"]}))
            own.append(time.perf_counter() - start)
            start = time.perf_counter()
            verdict = tm.gate("g_eval", 60, judge=CallableJudge(never, model="noisy-sim"), judge_replay="strict",
                              judge_recording=recording, **kw)
            gated.append(time.perf_counter() - start)
        assert verdict.verdict == "pass" and verdict.requests == 0
    own_ms, gate_ms = 1000 * np.median(own), 1000 * np.median(gated)
    print_table(f"strict replay of a g_eval gate, {ITEMS} items (median of {repeat})",
                [("the metric's own run, its interval included (answers from memory)", f"{own_ms:.1f}", "-"),
                 ("gate, strict replay from the recording", f"{gate_ms:.1f}", f"{gate_ms - own_ms:.1f}")],
                ("run", "ms", "overhead ms"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=300)
    parser.add_argument("--suites", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deepeval", metavar="PYTHON",
                        help="deepeval's interpreter (make bench-peers' venv): its assert_test beside the gates")
    args = parser.parse_args()
    start = time.perf_counter()
    calls = error_rates(args.sims, args.seed, args.deepeval)
    at_threshold(args.sims, args.seed)
    reruns(args.suites, args.seed, args.deepeval)
    paired(args.sims, args.seed)
    llmbar(deepeval=args.deepeval)
    replay_overhead()
    print_table("judge calls per item (from the error-rate runs: true mean +0.05, -0.05)",
                [(name, *(f"{c:.2f}" for c in cs)) for name, cs in calls.items()],
                ("rule", "at +0.05", "at -0.05"))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
