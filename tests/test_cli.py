import csv
import json
import subprocess
import sys

import textgen_metrics
from chat_server import ChatServer, schema_answer
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
    assert proc.returncode == 2 and "no field 'summary'" in proc.stderr
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
    assert "bleu_precisions_4" in proc.stdout


def test_html_report_has_a_histogram_per_score_and_escapes_text(tmp_path):
    rows = [{"id": f"<b>{i}</b>", "prediction": f"the cat sat {i}", "references": ["the cat sat"]}
            for i in range(5)]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    html_out, out = tmp_path / "r.html", tmp_path / "r.json"
    proc = run_cli("score", path, "--metrics", "rouge,bleu", "--html", html_out, "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = html_out.read_text()
    report = json.loads(out.read_text())
    assert report["metrics"]["rouge"]["scores"] == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    # one histogram per score: four rouge types and the sentence BLEU (not its lengths)
    assert page.count('class="histogram"') == 5 and 'data-metric="rouge: rougeL"' in page
    assert "&lt;b&gt;3&lt;/b&gt;" in page and "<b>3</b>" not in page
    assert f"{report['summary']['rouge1']:.4f}" in page and "<script" not in page


def test_datasets_folder_with_splits_and_parquet(tmp_path):
    import datasets

    rows = {"hyp": ["a cat sat", "the dog"], "ref": ["the cat sat", "the dog ran"]}
    dd = datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows),
                               "validation": datasets.Dataset.from_dict({k: v[:1] for k, v in rows.items()})})
    dd.save_to_disk(str(tmp_path / "ds"))
    out = tmp_path / "r.json"
    cols = ["--column", "predictions=hyp", "--column", "references=ref"]
    proc = run_cli("score", tmp_path / "ds", *cols, "--split", "test", "--out", out)
    assert proc.returncode == 0, proc.stderr
    want = textgen_metrics.rouge(rows["hyp"], rows["ref"], use_aggregator=False)
    assert json.loads(out.read_text())["metrics"]["rouge"]["per_example"] == want
    proc = run_cli("score", tmp_path / "ds", *cols)
    assert proc.returncode == 2 and "splits ['test', 'validation']; choose one with --split" in proc.stderr
    dd["test"].to_parquet(str(tmp_path / "d.parquet"))
    proc = run_cli("score", tmp_path / "d.parquet", *cols, "--out", out)
    assert proc.returncode == 0 and json.loads(out.read_text())["metrics"]["rouge"]["per_example"] == want


def test_progress_bar_counts_every_example_of_every_metric():
    proc = run_cli("score", SAMPLE, "--metrics", "rouge,meteor", "--progress")
    assert proc.returncode == 0, proc.stderr
    assert "scoring" in proc.stderr and "60/60" in proc.stderr
    quiet = run_cli("score", SAMPLE, "--metrics", "rouge")  # not a terminal: no bar by default
    assert quiet.returncode == 0 and "scoring" not in quiet.stderr


def test_chunked_progress_gives_the_same_scores(tmp_path):
    from textgen_metrics.registry import get_metric

    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()] * 3
    inputs = {"predictions": [r["prediction"] for r in rows], "references": [r["references"] for r in rows]}
    seen = []
    for name in ("rouge", "bleu", "meteor"):
        spec = get_metric(name)
        whole = spec.compute_both(inputs)
        chunked = spec.compute_both(inputs, progress=seen.append, chunk_size=7)
        assert chunked == whole
    assert sum(seen) == 3 * len(rows) and max(seen) == 7


def test_llm_metrics_with_a_judge_over_http_keep_the_key_secret(tmp_path):
    rows = [{"id": i, "answer": f"Paris is in France. It has {i} parks.",
             "question": "Where is Paris?", "contexts": json.dumps(["Paris is in France.", "Lyon too."])}
            for i in range(6)]
    path = tmp_path / "rag.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out, html_out = tmp_path / "r.json", tmp_path / "r.html"
    secret = "sk-test-SECRET-4242"
    with ChatServer(schema_answer, latency=0.01) as srv:
        proc = subprocess.run(
            [sys.executable, "-m", "textgen_metrics", "score", str(path),
             "--metrics", "faithfulness,answer_relevance,context_precision,rouge",
             "--column", "predictions=answer", "--column", "queries=question",
             "--column", "references=answer", "--judge", "openai:judge-x", "--judge-url", srv.url,
             "--judge-option", "concurrency=4", "--judge-option", f"cache={tmp_path / 'c.sqlite'}",
             "--out", str(out), "--html", str(html_out), "--progress"],
            capture_output=True, text=True, cwd=ROOT, env={**__import__("os").environ, "OPENAI_API_KEY": secret})
        assert proc.returncode == 0, proc.stderr
        assert srv.max_in_flight > 1 and all(h.get("Authorization") == f"Bearer {secret}" for h in srv.headers)
        report = json.loads(out.read_text())
        # schema_answer: claims are the two sentences, verdicts alternate yes/no
        assert report["metrics"]["faithfulness"]["per_example"]["faithfulness"] == [0.5] * 6
        assert report["summary"]["faithfulness"] == 0.5 and report["summary"]["answer_relevance"] == 0.5
        agg = report["metrics"]["faithfulness"]["aggregate"]
        assert agg["judge_model"] == "judge-x" and agg["judge_usage"]["requests"] == 12 and agg["errors"] == []
        assert "faithfulness: judge judge-x: requests 12" in proc.stdout and "24/24" in proc.stderr
        assert 'data-metric="faithfulness"' in html_out.read_text()
        for text in (proc.stdout, proc.stderr, out.read_text(), html_out.read_text(),
                     (tmp_path / "c.sqlite").read_bytes().decode("latin-1")):
            assert secret not in text
        count = srv.count
        again = run_cli("score", path, "--metrics", "faithfulness", "--column", "predictions=answer",
                        "--judge", "openai:judge-x", "--judge-url", srv.url,
                        "--judge-option", f"cache={tmp_path / 'c.sqlite'}")
        assert again.returncode == 0 and srv.count == count  # the rerun comes from the cache
        assert "requests 0, retries 0, cached 12" in again.stdout


def test_llm_metric_without_judge_says_how_to_give_one():
    proc = run_cli("score", SAMPLE, "--metrics", "bias")
    assert proc.returncode == 2 and "needs a judge" in proc.stderr and "--judge" in proc.stderr
