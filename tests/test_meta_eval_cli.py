"""``textgen-metrics meta-eval`` and ``textgen_metrics.meta.run.meta_eval`` on files: the
columns read, the metrics computed, the statistics handed to ``meta_evaluate``, missing scores,
the report files, and every bad input named by its line and column."""

from __future__ import annotations

import csv
import json
import random

import numpy as np
import pytest
from scipy import stats as sps

from textgen_metrics import cli
from textgen_metrics.meta.evaluate import meta_evaluate
from textgen_metrics.meta.run import meta_eval

WORDS = "the cat sat on a mat while dog ran far away from home in rain and sun".split()


def _table(n_items=12, n_systems=5, seed=0, missing=0.0):
    """Rows of a generated table: items x systems, a human score, two score columns (one close
    to the human's, one noise), and texts for the metrics."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_items):
        ref = " ".join(rng.choice(WORDS) for _ in range(10))
        for s in range(n_systems):
            words = ref.split()
            keep = [w if rng.random() < 0.2 + 0.15 * s else rng.choice(WORDS) for w in words]
            human = round(sum(a == b for a, b in zip(words, keep, strict=True)) / len(words) + rng.gauss(0, 0.1), 3)
            good = None if rng.random() < missing else round(human + rng.gauss(0, 0.1), 3)
            rows.append({"item": f"doc{i}", "system": f"sys{s}", "prediction": " ".join(keep),
                         "references": [ref], "human": human, "good": good, "noise": round(rng.random(), 3)})
    return rows


def _write_csv(path, rows, fields):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if r.get(k) is None else r[k] for k in fields})


def _write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def _run(argv, capsys):
    status = cli.main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_score_columns_of_a_csv_give_the_statistics_of_meta_evaluate_and_scipy(tmp_path, capsys):
    rows = _table(missing=0.1)
    path = tmp_path / "t.csv"
    _write_csv(path, rows, ["item", "system", "human", "good", "noise"])
    out = tmp_path / "r.json"
    status, text, err = _run(["meta-eval", str(path), "--score-column", "good", "--score-column", "noise",
                              "--human-column", "human", "--group-by", "item", "--statistic", "spearman,pearson",
                              "--n-resamples", "200", "--seed", "7", "--json", str(out)], capsys)
    assert status == 0, err
    result = json.loads(out.read_text())
    direct = meta_evaluate({"good": [r["good"] for r in rows], "noise": [r["noise"] for r in rows]},
                           {"human": [r["human"] for r in rows]}, items=[r["item"] for r in rows],
                           systems=[r["system"] for r in rows], level="segment", group_by="item",
                           statistics=("spearman", "pearson"), n_resamples=200, seed=7)
    assert result["results"] == direct["results"]
    assert result["comparisons"] == direct["comparisons"]
    # independently: Spearman per item over its systems, then the mean (rows with a score only)
    got = {(r["metric"], r["statistic"]): r for r in result["results"]}
    per_item = []
    for i in range(12):
        pairs = [(r["good"], r["human"]) for r in rows if r["item"] == f"doc{i}" and r["good"] is not None]
        x, y = zip(*pairs, strict=True)
        if len(set(x)) > 1 and len(set(y)) > 1:
            per_item.append(sps.spearmanr(x, y).statistic)
    assert got["good", "spearman"]["value"] == pytest.approx(float(np.mean(per_item)), abs=1e-12)
    assert got["good", "spearman"]["missing"] == sum(r["good"] is None for r in rows) > 0
    assert got["good", "spearman"]["rank"] == 1
    assert got["good", "spearman"]["value"] > got["noise", "spearman"]["value"]
    assert "spearman with people's human" in text and "good" in text


def test_metrics_computed_on_a_jsonl_are_named_by_metric_and_key(tmp_path, capsys):
    from textgen_metrics import bleu, rouge

    rows = _table(n_items=6, n_systems=4, seed=3)
    path = tmp_path / "t.jsonl"
    _write_jsonl(path, rows)
    result = meta_eval(str(path), metrics=["bleu", "rouge"], human_columns=["human"], group_by="item",
                       statistics=["kendall"], n_resamples=0, compare=False)
    names = {r["metric"] for r in result["results"]}
    assert names == {"bleu", "rouge.rouge1", "rouge.rouge2", "rouge.rougeL", "rouge.rougeLsum"}
    preds, refs = [r["prediction"] for r in rows], [r["references"] for r in rows]
    per_row_rouge = rouge(predictions=preds, references=refs, use_aggregator=False)
    per_row_bleu = bleu(predictions=preds, references=refs, use_aggregator=False)["bleu"]
    direct = meta_evaluate({"bleu": per_row_bleu, "rouge.rouge2": per_row_rouge["rouge2"]},
                           {"human": [r["human"] for r in rows]}, items=[r["item"] for r in rows],
                           systems=[r["system"] for r in rows], group_by="item", statistics=("kendall",),
                           n_resamples=0, compare=False)
    want = {r["metric"]: r["value"] for r in direct["results"]}
    got = {r["metric"]: r["value"] for r in result["results"]}
    assert got["rouge.rouge2"] == want["rouge.rouge2"]
    assert got["bleu"] == want["bleu"]
    assert result["runs"]["rouge"]["unscored"] == 0


def test_bad_cells_and_columns_name_the_line_and_column(tmp_path, capsys):
    rows = _table(n_items=3, n_systems=3)
    rows[4]["human"] = "good"
    path = tmp_path / "t.csv"
    _write_csv(path, rows, ["item", "system", "human", "good"])
    status, _, err = _run(["meta-eval", str(path), "--score-column", "good", "--human-column", "human"], capsys)
    assert status == 2
    assert "line 6" in err and "'human'" in err and "text" in err
    status, _, err = _run(["meta-eval", str(path), "--score-column", "nope", "--human-column", "good"], capsys)
    assert status == 2 and "line 2 has no column 'nope'" in err
    status, _, err = _run(["meta-eval", str(path), "--score-column", "good"], capsys)
    assert status == 2 and "--human-column" in err
    status, _, err = _run(["meta-eval", str(tmp_path / "none.csv"), "--score-column", "good",
                           "--human-column", "human"], capsys)
    assert status == 2 and "no such file" in err
    status, _, err = _run(["meta-eval", "no_such_set", "--score-column", "good"], capsys)
    assert status == 2 and "neither a bundled set" in err
    rows = _table(n_items=3, n_systems=3)
    _write_csv(path, rows, ["item", "system", "human", "good"])
    status, _, err = _run(["meta-eval", str(path), "--score-column", "good", "--human-column", "human",
                           "--statistic", "tau"], capsys)
    assert status == 2 and "tau" in err
    jsonl = tmp_path / "t.jsonl"
    rows[2]["item"] = ""
    _write_jsonl(jsonl, rows)
    status, _, err = _run(["meta-eval", str(jsonl), "--score-column", "good", "--human-column", "human",
                           "--group-by", "item"], capsys)
    assert status == 2 and "line 3" in err and "'item' is empty" in err


def test_a_table_without_items_cannot_be_grouped_by_item(tmp_path, capsys):
    rows = [{k: v for k, v in r.items() if k != "item"} for r in _table(n_items=3, n_systems=3)]
    path = tmp_path / "t.jsonl"
    _write_jsonl(path, rows)
    status, _, err = _run(["meta-eval", str(path), "--score-column", "good", "--human-column", "human",
                           "--group-by", "item"], capsys)
    assert status == 2 and "item" in err


def test_the_html_report_has_a_chart_and_table_per_statistic(tmp_path, capsys):
    rows = _table()
    path = tmp_path / "t.csv"
    _write_csv(path, rows, ["item", "system", "human", "good", "noise"])
    page = tmp_path / "r.html"
    status, _, err = _run(["meta-eval", str(path), "--score-column", "good", "--score-column", "noise",
                           "--human-column", "human", "--group-by", "item", "--statistic", "spearman,acc_eq",
                           "--n-resamples", "100", "--html", str(page)], capsys)
    assert status == 0, err
    text = page.read_text()
    assert text.count("<svg") == 2 and text.count("class='results'") == 2
    assert "tie-calibrated pairwise accuracy" in text and "tie threshold" in text


def test_rows_a_judge_could_not_score_are_left_out_and_counted_never_zero(tmp_path):
    """A judged metric's unusable answers are missing for that metric: left out of its
    statistic, counted in ``missing`` and in the run's ``unscored``; the value equals the
    statistic on the scored rows alone."""
    import re

    rng = random.Random(5)
    rows = []
    for i in range(40):
        quality = rng.randint(1, 5)
        broken = i % 7 == 3
        rows.append({"item": f"d{i // 4}", "system": f"s{i % 4}", "source": f"Document {i}.",
                     "prediction": f"summary {i} of quality {quality}" + (" broken" if broken else ""),
                     "human": quality + rng.gauss(0, 1.5)})
    path = tmp_path / "judged.jsonl"
    _write_jsonl(path, rows)

    def judge(messages, task):  # answers by the task id; the score is read from the judged text
        assert task.startswith("summary_coherence/")
        text = messages[-1]["content"]
        quality = int(re.search(r"of quality (\d)", text).group(1))
        score = 9 if "broken" in text else quality  # 9 is out of range: an unusable answer
        return json.dumps({"reason": "read", "score": score})

    result = meta_eval(str(path), metrics=["summary_coherence"], human_columns=["human"], judge=judge,
                       statistics=["spearman"], n_resamples=0, compare=False)
    (r,) = result["results"]
    broken = [i for i, row in enumerate(rows) if "broken" in row["prediction"]]
    assert r["missing"] == len(broken) == result["runs"]["summary_coherence"]["unscored"] == 6
    assert r["n"] == 40 - 6
    kept = [i for i in range(40) if i not in broken]
    quality = [int(re.search(r"quality (\d)", rows[i]["prediction"]).group(1)) for i in kept]
    assert r["value"] == pytest.approx(sps.spearmanr(quality, [rows[i]["human"] for i in kept]).statistic, abs=1e-12)
    zero_filled = [0 if i in broken else int(re.search(r"quality (\d)", rows[i]["prediction"]).group(1))
                   for i in range(40)]
    assert r["value"] != pytest.approx(sps.spearmanr(zero_filled, [row["human"] for row in rows]).statistic)
    assert result["runs"]["summary_coherence"]["errors"][0]["line"] == broken[0] + 1
