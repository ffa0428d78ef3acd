"""The alt-test (Calderon, Reichart and Dror, "The Alternative Annotator Test for LLM-as-a-Judge",
ACL 2025, arXiv 2501.10970): ``stats.audit.alt_test`` against an independent transcription of the
authors' reference algorithm (``alt_test`` in ``alt_test_example.ipynb`` of
github.com/nitaytech/AltTest, commit 18428b1) on many generated tables, labels and scores, with
annotations and judge values missing; its behaviour on simulated annotators (a judge as good as
they are passes, a random one fails); Benjamini-Yekutieli against SciPy's; bad input named; and
the audit's path from a CSV with three annotator columns through ``textgen-metrics audit``."""

from __future__ import annotations

import argparse
import csv
import json
import random
import warnings

import numpy as np
import pytest
from scipy.stats import false_discovery_control, ttest_1samp

import textgen_metrics
from chat_server import ChatServer
from test_audit_probes import Planted, blocks, pair_rows
from textgen_metrics import cli
from textgen_metrics.audits.cli import add_audit_parser
from textgen_metrics.audits.report import format_summary, judge_card_html
from textgen_metrics.audits.run import audit
from textgen_metrics.judges import CallableJudge
from textgen_metrics.stats.audit import alt_test, benjamini_yekutieli


# -- the reference, transcribed --------------------------------------------------------------------
def reference_alt_test(llm, humans, scoring="accuracy", epsilon=0.2, q=0.05, min_per_instance=2, min_per_human=30):
    """The authors' ``alt_test(llm_annotations, humans_annotations, scoring_function, epsilon,
    q_fdr, min_humans_per_instance, min_instances_per_human)``, written out again: ``humans`` maps
    annotator -> {instance: value}, ``llm`` instance -> value. Returns (winning rate, advantage
    probability, {annotator: p-value}, rejected annotators); an annotator with fewer than
    ``min_per_human`` instances is skipped; with none left the reference divides by zero."""
    def align(x, others):  # the notebook's accuracy and neg_rmse
        if scoring == "accuracy":
            return float(np.mean([x == o for o in others]))
        return -1 * float(np.sqrt(np.mean([(x - o) ** 2 for o in others])))

    raters = {}
    for h, anns in humans.items():
        for i in anns:
            raters.setdefault(i, []).append(h)
    keep = {i for i, hs in raters.items() if len(hs) >= min_per_instance and i in llm}
    p_values, advantages, tested = [], [], []
    for h, anns in humans.items():
        items = [i for i in anns if i in keep]
        if len(items) < min_per_human:
            continue
        w_f, w_h = [], []
        for i in items:
            others = [humans[k][i] for k in raters[i] if k != h]
            s_h, s_f = align(anns[i], others), align(llm[i], others)
            w_f.append(1 if s_f >= s_h else 0)
            w_h.append(1 if s_h >= s_f else 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # constant differences: SciPy warns, t = +-inf
            d = [b - a for a, b in zip(w_f, w_h, strict=True)]
            p_values.append(ttest_1samp(d, epsilon, alternative="less").pvalue)
        advantages.append(float(np.mean(w_f)))
        tested.append(h)
    # by_procedure: Benjamini-Yekutieli step-up
    p = np.array(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p)
    with np.errstate(divide="ignore", invalid="ignore"):  # m = 0: the division by zero below
        thresholds = np.arange(1, m + 1) / m * (q / np.sum(1.0 / np.arange(1, m + 1)))
    last = -1
    for r in range(m):
        if p[order][r] <= thresholds[r]:
            last = r
    rejected = [] if last < 0 else [tested[k] for k in order[:last + 1]]
    by_annotator = dict(zip(tested, p_values, strict=True))
    return len(rejected) / len(tested), float(np.mean(advantages)), by_annotator, set(rejected)


def as_dicts(judge, table, names):
    """Our rows x annotators table as the reference's dictionaries (None: absent)."""
    humans = {h: {i: row[j] for i, row in enumerate(table) if row[j] is not None} for j, h in enumerate(names)}
    return {i: v for i, v in enumerate(judge) if v is not None}, humans


def generated_table(seed, kind):
    """A table of 20-140 rows, 2-7 annotators, up to 40% of cells and 15% of judge values missing:
    labels (2-5 categories, texts) or scores (1-5 integers; the judge's integers or continuous)."""
    rng = random.Random(seed)
    n, m = rng.randint(20, 140), rng.randint(2, 7)
    gap, judge_gap = rng.choice([0.0, 0.1, 0.4]), rng.choice([0.0, 0.05, 0.15])
    skill = [rng.uniform(0.3, 0.95) for _ in range(m + 1)]
    judge, table = [], []
    if kind == "labels":
        cats = ["yes", "no", "maybe", "unsure", "n/a"][:rng.randint(2, 5)]
        for _ in range(n):
            gold = rng.choice(cats)
            row = [(gold if rng.random() < skill[j] else rng.choice(cats)) if rng.random() >= gap else None
                   for j in range(m)]
            table.append(row)
            judge.append((gold if rng.random() < skill[m] else rng.choice(cats)) if rng.random() >= judge_gap
                         else None)
    else:
        continuous = rng.random() < 0.5
        for _ in range(n):
            gold = rng.uniform(1, 5)
            row = [min(5, max(1, round(gold + rng.gauss(0, 1.5 * (1 - skill[j]))))) if rng.random() >= gap else None
                   for j in range(m)]
            table.append(row)
            value = gold + rng.gauss(0, 1.5 * (1 - skill[m]))
            judge.append((value if continuous else min(5, max(1, round(value)))) if rng.random() >= judge_gap
                         else None)
    return judge, table, [f"h{j}" for j in range(m)]


@pytest.mark.parametrize("kind", ["labels", "scores"])
def test_equals_the_reference_on_generated_tables(kind):
    """150 tables per kind, at three epsilons and two minimums: the winning rate, the advantage
    probability, each annotator's p-value and the annotators beaten and skipped are the
    reference's (the p-values to 1e-9: ours come from the t distribution without SciPy)."""
    scoring = {"labels": "accuracy", "scores": "neg_rmse"}[kind]
    compared = errors = 0
    for seed in range(150):
        judge, table, names = generated_table(seed, kind)
        eps, least = (0.2, 0.1, 0.0)[seed % 3], (30, 10)[seed % 2]
        llm, humans = as_dicts(judge, table, names)
        try:
            wr, ap, p_values, rejected = reference_alt_test(llm, humans, scoring, eps, 0.05, 2, least)
        except ZeroDivisionError:  # the reference with no annotator left: ours says so
            with pytest.raises(ValueError, match="no annotator has"):
                alt_test(judge, table, epsilon=eps, kind=kind, annotators=names, min_rows=least, n_resamples=0)
            errors += 1
            continue
        got = alt_test(judge, table, epsilon=eps, kind=kind, annotators=names, min_rows=least, n_resamples=0)
        assert got["winning_rate"]["value"] == wr, seed
        assert got["advantage_probability"]["value"] == pytest.approx(ap, rel=1e-12, abs=1e-15), seed
        assert got["passed"] == (wr >= 0.5) and got["kind"] == kind and got["alignment"] == scoring
        tested = {e["annotator"]: e for e in got["per_annotator"] if "skipped" not in e}
        assert set(tested) == set(p_values), seed
        assert {h for h, e in tested.items() if e["rejected"]} == rejected, seed
        for h, p in p_values.items():
            if np.isnan(p):
                assert tested[h]["p_value"] is None
            else:
                assert tested[h]["p_value"] == pytest.approx(p, rel=1e-9, abs=1e-300), (seed, h)
        assert {e["annotator"] for e in got["per_annotator"] if "skipped" in e} == set(names) - set(p_values)
        assert got["missing"] == sum(v is None for v in judge)
        compared += 1
    assert compared >= 100 and errors >= 1  # both paths seen


def test_auto_kind_and_binary_labels():
    """auto: numbers are scores, anything else labels; on 0/1 values accuracy and neg_rmse give
    the same test (-sqrt(1 - accuracy) orders rows as accuracy does)."""
    rng = np.random.default_rng(5)
    gold = rng.integers(0, 2, 80)
    table = [[int(g if rng.random() < 0.8 else 1 - g) for _ in range(3)] for g in gold]
    judge = [int(g if rng.random() < 0.85 else 1 - g) for g in gold]
    as_scores = alt_test(judge, table, n_resamples=0)
    as_labels = alt_test(judge, table, kind="labels", n_resamples=0)
    assert as_scores["kind"] == "scores" and as_labels["kind"] == "labels"
    for key in ("winning_rate", "advantage_probability"):
        assert as_scores[key]["value"] == as_labels[key]["value"]
    assert alt_test([str(v) for v in judge], [[str(v) for v in r] for r in table], n_resamples=0)["kind"] == "labels"


def test_benjamini_yekutieli_equals_scipy():
    rng = np.random.default_rng(0)
    for m in (1, 2, 3, 5, 13):
        for _ in range(200):
            p = rng.uniform(0, 0.08, m) ** rng.uniform(0.5, 2)
            expected = false_discovery_control(p, method="by") <= 0.05
            assert benjamini_yekutieli(p, 0.05).tolist() == expected.tolist()
    assert benjamini_yekutieli([0.001, float("nan"), 0.001], 0.05).tolist() == [True, False, True]
    rows = rng.uniform(0, 0.05, (50, 4))
    assert benjamini_yekutieli(rows, 0.05).tolist() == [benjamini_yekutieli(r, 0.05).tolist() for r in rows]


def test_intervals_are_a_bootstrap_over_rows():
    judge, table, names = generated_table(3, "labels")
    judge, table = judge * 2, table * 2  # enough rows for every annotator
    a = alt_test(judge, table, annotators=names, seed=7, n_resamples=300)
    b = alt_test(judge, table, annotators=names, seed=7, n_resamples=300)
    assert a == b
    low, high = a["advantage_probability"]["ci"]
    assert low <= a["advantage_probability"]["value"] <= high and 0 < high - low < 0.3
    low, high = a["winning_rate"]["ci"]
    assert 0 <= low <= high <= 1
    none = alt_test(judge, table, annotators=names, n_resamples=0)
    assert none["winning_rate"]["ci"] is None and none["advantage_probability"]["ci"] is None
    assert none["winning_rate"]["value"] == a["winning_rate"]["value"]


# -- proven on simulated annotators ----------------------------------------------------------------
N_ROWS, N_ANNOTATORS, SEEDS = 200, 4, 200


def simulated(seed, kind, judge_is, n=N_ROWS):
    """The reference's simulation (its notebook's ``generate_dataset``) for labels: 4 equally
    likely categories, each annotator the gold label with noise 0.3 (``probs = priors * noise;
    probs[gold] += 1 - noise``: the gold label, else one drawn from the priors, with chance
    0.3); scores: a 1-5 gold quality, each annotator's rating it plus N(0, 0.7), rounded into
    1-5. The judge is one more annotator (``"peer"``) or random; 10% of annotations missing."""
    rng = np.random.default_rng(seed)
    if kind == "labels":
        gold = rng.integers(0, 4, n)
        rated = np.where(rng.random((N_ANNOTATORS + 1, n)) < 0.3, rng.integers(0, 4, (N_ANNOTATORS + 1, n)), gold)
        random_judge = rng.integers(0, 4, n)
    else:
        gold = rng.uniform(1, 5, n)
        rated = np.clip(np.rint(gold + rng.normal(0, 0.7, (N_ANNOTATORS + 1, n))), 1, 5).astype(np.int64)
        random_judge = rng.integers(1, 6, n)
    judge = (rated[-1] if judge_is == "peer" else random_judge).tolist()
    gaps = rng.random((n, N_ANNOTATORS)) < 0.1
    table = [[None if gaps[i, j] else int(rated[j, i]) for j in range(N_ANNOTATORS)] for i in range(n)]
    return judge, table


@pytest.mark.parametrize("kind", ["labels", "scores"])
def test_a_judge_as_good_as_the_annotators_passes_and_a_random_one_fails(kind):
    """200 seeds of 200 rows and 4 annotators at epsilon 0.2: a judge that agrees with the
    annotators' consensus as well as they do passes in at least 90% of seeds, a random judge
    fails in at least 95%. (Measured: the peer passes in 100% (labels) and 97.5% (scores) of
    seeds at 200 rows, 93% and 77% at 100, 59% and 39.5% at 50: the test's power grows with the
    rows, scores' rarer ties needing more; the random judge passes in none.)"""
    passed = {"peer": 0, "random": 0}
    for seed in range(SEEDS):
        for judge_is in passed:
            judge, table = simulated(seed, kind, judge_is)
            passed[judge_is] += alt_test(judge, table, kind="labels" if kind == "labels" else "scores",
                                         n_resamples=0)["passed"]
    assert passed["peer"] / SEEDS >= 0.90, passed
    assert 1 - passed["random"] / SEEDS >= 0.95, passed


# -- bad input -------------------------------------------------------------------------------------
def _table(n=40, m=3):
    return [0] * n, [[0] * m for _ in range(n)]


@pytest.mark.parametrize("call, message", [
    (lambda: alt_test([1, 2], [[1, 2]]), r"judge and annotations: 2 judge values for 1 rows"),
    (lambda: alt_test([1, 2], [[1, 2], [1]]), r"annotations\[1\]: 1 values for 2 annotators"),
    (lambda: alt_test(*_table(m=1)), r"annotations: 1 annotator; .* at least 2"),
    (lambda: alt_test(*_table(n=29)), r"no annotator has 30 rows .*'annotator 1': 29, 'annotator 2': 29"),
    (lambda: alt_test(*_table(), kind="ranks"), r"kind: 'ranks'"),
    (lambda: alt_test(*_table(), epsilon=1.5), r"epsilon: 1.5"),
    (lambda: alt_test(*_table(), alpha=0), r"alpha: 0"),
    (lambda: alt_test(*_table(), min_rows=1), r"min_rows: 1"),
    (lambda: alt_test([0] * 40, [[0, 1, "x"]] * 40, kind="scores"),
     r"annotations\[0\]\[2\] \(annotator 'annotator 3'\): 'x' is not a finite number"),
    (lambda: alt_test(["a"] + [0] * 39, [[0, 1, 1]] * 40, kind="scores"), r"judge\[0\]: 'a' is not a finite"),
    (lambda: alt_test([[1]] * 40, [[0, 1, 1]] * 40, kind="labels"), r"judge\[0\]: \[1\] is not a label"),
    (lambda: alt_test(*_table(), annotators=["x", "x", "y"]), r"annotators: .* repeats a name"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_an_annotator_with_too_few_rows_is_skipped_as_the_reference_skips_it():
    rng = np.random.default_rng(1)
    table = [[int(v) for v in rng.integers(0, 2, 3)] for _ in range(60)]
    for row in table[20:]:
        row[2] = None  # annotator 3 rated 20 rows
    got = alt_test([r[0] for r in table], table, n_resamples=0)
    assert got["tested"] == 2 and got["per_annotator"][2] == {
        "annotator": "annotator 3", "rows": 20,
        "skipped": "20 rows rated with the judge and another annotator; the alt-test needs 30 per annotator"}


# -- through the audit -----------------------------------------------------------------------------
def annotated_pairs(n, seed=0, flip=0.2, gap=0.1):
    """Pairs (``test_audit_probes.pair_rows``) with three annotators' verdicts: the gold label,
    flipped on ``flip`` of rows, empty on ``gap``."""
    rng = random.Random(seed)
    rows = pair_rows(n, seed)
    for r in rows:
        for name in ("ann1", "ann2", "ann3"):
            other = "b" if r["gold"] == "a" else "a"
            r[name] = "" if rng.random() < gap else (other if rng.random() < flip else r["gold"])
    return rows


@pytest.fixture
def main(monkeypatch):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for add in cli.SUBCOMMANDS:
        add(sub)
    if "audit" not in sub.choices:
        monkeypatch.setattr(cli, "SUBCOMMANDS", [*cli.SUBCOMMANDS, add_audit_parser])
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return cli.main


def test_the_cli_runs_the_alt_test_from_a_csv_with_three_annotator_columns(main, tmp_path, capsys):
    """A clean pairwise judge (``Planted()``) on 60 pairs against three annotators who each flip
    a fifth of the gold labels: it can stand in for them. The alt-test asks nothing beyond the
    plain run; the JSON keeps SPEC's keys and adds ``alt_test``; the card says it in words."""
    rows = annotated_pairs(60)
    path = tmp_path / "pairs.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out_json, out_html = tmp_path / "audit.json", tmp_path / "card.html"
    judge = Planted()
    with ChatServer(lambda body, task: judge(body["messages"], task)) as srv:
        status = main(["audit", str(path), "--metrics", "pairwise_preference", "--judge", "openai:stand-in",
                       "--judge-url", srv.url, "--judge-option", "api_key=k", "--probe", "position",
                       "--annotator-column", "ann1", "--annotator-column", "ann2", "--annotator-column", "ann3",
                       "--seed", "1", "--n-resamples", "200", "--json", str(out_json), "--html", str(out_html)])
        sent = srv.count
    assert status == 0
    result = json.loads(out_json.read_text())
    assert sent == result["requests"] == 2 * len(rows)  # both orders of the plain run; nothing more
    assert set(result["probes"]) == {"position", "alt_test"} and "positional_agreement" in result["probes"]["position"]
    alt = result["probes"]["alt_test"]
    assert set(alt) >= {"winning_rate", "advantage_probability", "passed", "per_annotator", "epsilon", "alpha"}
    assert alt["passed"] and not alt["flagged"] and alt["tested"] == 3 and alt["kind"] == "labels"
    assert set(alt["winning_rate"]) == {"value", "ci"} and alt["epsilon"] == 0.2
    assert [e["annotator"] for e in alt["per_annotator"]] == ["ann1", "ann2", "ann3"]
    assert result["settings"]["annotator_columns"] == ["ann1", "ann2", "ann3"]
    # the same numbers as the statistic on the plain run's verdicts and the annotators' columns
    plain = textgen_metrics.pairwise_preference(queries=[r["query"] for r in rows],
                                                predictions=[r["prediction"] for r in rows],
                                                baselines=[r["baseline"] for r in rows],
                                                judge=CallableJudge(Planted()), use_aggregator=False)
    verdicts = ["tie" if s == 0.5 else ("a" if s > 0.5 else "b") for s in plain["win_rate"]]
    direct = alt_test(verdicts, [[r[c] or None for c in ("ann1", "ann2", "ann3")] for r in rows],
                      annotators=["ann1", "ann2", "ann3"], n_resamples=0)
    for key in ("winning_rate", "advantage_probability"):
        assert alt[key]["value"] == direct[key]["value"]
    assert alt["per_annotator"] == direct["per_annotator"]
    text = capsys.readouterr().out
    assert (f"the judge can stand in for an annotator: it beats {alt['wins']} of 3 annotators at epsilon 0.2"
            in text) and "flagged: nothing" in text
    card = out_html.read_text()
    assert "Can the judge stand in for an annotator? (alt-test)" in card and "<td>ann2</td>" in card
    assert "the judge can stand in for an annotator" in card


def test_audit_from_python_on_scores_and_its_errors_before_any_request():
    """G-Eval (1-5) scores against three annotators' ratings: a judge that reads the true quality
    beats annotators who are off by one on a third of rows; a random judge cannot stand in. Bad
    annotator columns stop the audit before any request."""
    rng = random.Random(3)
    rows = []
    for i in range(50):
        q = rng.randint(1, 5)
        row = {"prediction": f"Answer {i} [q={q}]"}
        for name in ("r1", "r2", "r3"):
            off = rng.choice([-1, 1]) if rng.random() < 0.35 else 0
            row[name] = str(min(5, max(1, q + off))) if rng.random() > 0.05 else ""
        rows.append(row)

    def honest(messages, task):
        q = int(blocks(messages)["prediction"].split("[q=")[1][0])
        return json.dumps({"reason": "r", "score": q})

    def noise(messages, task):
        return json.dumps({"reason": "r", "score": random.Random(messages[1]["content"]).randint(1, 5)})

    options = {"g_eval": {"criteria": "Complete.", "evaluation_steps": ["Read it."]}}
    good = audit(rows, metrics="g_eval", judge=CallableJudge(honest), options=options, probes="verbosity",
                 annotator_columns=["r1", "r2", "r3"], epsilon=0.15, n_resamples=0)
    alt = good["probes"]["alt_test"]
    assert alt["kind"] == "scores" and alt["alignment"] == "neg_rmse" and alt["epsilon"] == 0.15
    assert alt["passed"] and alt["wins"] == 3 and alt["rows"] == sum(
        sum(r[c] != "" for c in ("r1", "r2", "r3")) >= 2 for r in rows)
    assert "the judge can stand in for an annotator: it beats 3 of 3 annotators at epsilon 0.15" in format_summary(good)
    bad = audit(rows, metrics="g_eval", judge=CallableJudge(noise), options=options, probes="alt_test",
                annotator_columns=["r1", "r2", "r3"], n_resamples=0)
    assert not bad["probes"]["alt_test"]["passed"] and bad["probes"]["alt_test"]["flagged"]
    summary = format_summary(bad)
    assert "the judge cannot stand in for an annotator: it beats 0 of 3 annotators at epsilon 0.2" in summary
    assert "flagged: alt_test" in summary and "cannot stand in" in judge_card_html(bad)
    skipped = audit(rows, metrics="g_eval", judge=CallableJudge(honest), options=options, probes="alt_test")
    assert "no annotators" in skipped["probes"]["alt_test"]["skipped"]

    def never(messages, task):
        raise AssertionError("no request before the annotator columns are checked")

    for columns, message in [(["r1", "nope"], r"annotator_columns: row 1 has no field 'nope'"),
                             (["r1"], r"annotator_columns: 1 annotator; .* at least 2"),
                             (["r1", "prediction"], r"annotator_columns: row 1, column 'prediction': .* not a score")]:
        with pytest.raises(ValueError, match=message):
            audit(rows, metrics="g_eval", judge=CallableJudge(never), options=options, annotator_columns=columns)
    with pytest.raises(ValueError, match=r"annotator_columns: no annotator has 30 rows .*'r1': \d+, 'r2'"):
        audit(rows[:20], metrics="g_eval", judge=CallableJudge(never), options=options,
              annotator_columns=["r1", "r2", "r3"])
    with pytest.raises(ValueError, match=r"epsilon: 2"):
        audit(rows, metrics="g_eval", judge=CallableJudge(never), options=options, annotator_columns=["r1", "r2"],
              epsilon=2)
