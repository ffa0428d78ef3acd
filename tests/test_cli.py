import csv
import json
import subprocess
import sys

import textgen_metrics
from conftest import ROOT

SAMPLE = ROOT / "data" / "sample_summaries.jsonl"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "textgen_metrics", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT)


def test_score_sample_writes_report_matching_the_library(tmp_path):
    out = tmp_path / "report.json"
    proc = run_cli("score", SAMPLE, "--metrics", "rouge", "--option", "rouge.use_stemmer=true", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "rougeLsum" in proc.stdout and "30 examples" in proc.stdout
    report = json.loads(out.read_text())
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    want = textgen_metrics.rouge([r["prediction"] for r in rows], [r["references"] for r in rows],
                                 use_stemmer=True, use_aggregator=False)
    got = report["metrics"]["rouge"]
    assert got["per_example"] == want
    assert got["aggregate"] == textgen_metrics.rouge([r["prediction"] for r in rows],
                                                     [r["references"] for r in rows], use_stemmer=True)
    assert report["examples"] == 30 and report["ids"][0] == "news-000"


def test_csv_with_custom_columns_and_json_list_cells(tmp_path):
    path = tmp_path / "data.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["hyp", "ref"])
        w.writerow(["the cat sat", json.dumps(["the cat sat", "a cat"])])
        w.writerow(["a dog", "the dog"])
    out = tmp_path / "r.json"
    proc = run_cli("score", path, "--prediction-column", "hyp", "--reference-column", "ref", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["metrics"]["rouge"]["per_example"]["rouge1"] == [1.0, 0.5]


def test_errors_are_clear(tmp_path):
    proc = run_cli("score", SAMPLE, "--metrics", "nope")
    assert proc.returncode == 2 and "unknown metric 'nope'" in proc.stderr
    proc = run_cli("score", SAMPLE, "--prediction-column", "summary")
    assert proc.returncode == 2 and "no column 'summary'" in proc.stderr
    bad = tmp_path / "x.txt"
    bad.write_text("hello")
    proc = run_cli("score", bad)
    assert proc.returncode == 2 and "unknown file type" in proc.stderr


def test_corpus_metrics_report_the_corpus_score(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("score", SAMPLE, "--metrics", "bleu,google_bleu,meteor", "--out", out)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    preds, refs = [r["prediction"] for r in rows], [r["references"] for r in rows]
    assert report["metrics"]["bleu"]["aggregate"] == textgen_metrics.bleu(preds, refs)
    assert report["metrics"]["google_bleu"]["aggregate"] == textgen_metrics.google_bleu(preds, refs)
    assert report["metrics"]["meteor"]["per_example"] == textgen_metrics.meteor(preds, refs, use_aggregator=False)
    assert "precisions_4" in proc.stdout
