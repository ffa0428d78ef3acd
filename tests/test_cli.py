import csv
import json
import subprocess
import sys

import pytest

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


def test_progress_bar_per_metric_counts_examples():
    proc = run_cli("score", SAMPLE, "--metrics", "rouge,meteor", "--progress")
    assert proc.returncode == 0, proc.stderr
    finals = [line for line in proc.stderr.replace("\r", "\n").splitlines() if "100%" in line]
    assert any(line.startswith("rouge ") and "30/30" in line for line in finals), proc.stderr
    assert any(line.startswith("meteor") and "30/30" in line for line in finals), proc.stderr
    assert "60/60" not in proc.stderr  # examples, not examples x metrics
    quiet = run_cli("score", SAMPLE, "--metrics", "rouge")  # not a terminal: no bar by default
    assert quiet.returncode == 0 and "30/30" not in quiet.stderr


def test_chunked_progress_gives_the_same_scores(monkeypatch):
    import contextlib

    from textgen_metrics import run as run_module

    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()] * 3
    run = run_module.Run.build(["rouge", "bleu", "meteor"])
    inputs = run.inputs(rows)
    seen = []

    @contextlib.contextmanager
    def progress(name, total):
        yield seen.append

    whole = run.score(inputs)
    monkeypatch.setattr(run_module, "CHUNK", 7)
    chunked = run.score(inputs, progress=progress)
    for name in run.metrics:
        assert chunked[name].as_dict(True) == whole[name].as_dict(True)
        assert chunked[name].as_dict(False) == whole[name].as_dict(False)
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
        assert "faithfulness: judge judge-x: requests 12" in proc.stdout
        finals = [line for line in proc.stderr.replace("\r", "\n").splitlines() if "100%" in line]
        for name in ("faithfulness", "answer_relevance", "context_precision", "rouge"):
            assert any(line.startswith(name) and "6/6" in line for line in finals), (name, proc.stderr)
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


# -- exit status, errors, typed options ----------------------------------------------------------
def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def bad_for_some(body):
    """Unusable answers (not JSON) for texts with BAD in them, fitting ones for the others."""
    return "I cannot answer that." if "BAD" in body["messages"][1]["content"] else schema_answer(body)


def rag_rows(n, bad=()):
    return [{"prediction": f"{'BAD ' if i in bad else ''}Paris is in France. It has {i} parks.",
             "contexts": ["Paris is in France."], "query": "Where is Paris?"} for i in range(n)]


def test_unscored_examples_exit_1_with_a_summary_unless_allowed(tmp_path):
    path = write_jsonl(tmp_path / "rag.jsonl", rag_rows(6, bad={1, 4}))
    out = tmp_path / "r.json"
    with ChatServer(bad_for_some) as srv:
        args = ["score", path, "--metrics", "faithfulness,rouge", "--column", "references=query",
                "--judge", "openai:j", "--judge-url", srv.url, "--out", out]
        proc = run_cli(*args)
        assert proc.returncode == 1, proc.stderr
        assert "2 of 6 example(s) got no score (faithfulness: 2)" in proc.stderr
        lines = proc.stderr.splitlines()
        assert any(line.strip().startswith("faithfulness, line 2:") for line in lines), proc.stderr  # the file's
        assert any(line.strip().startswith("faithfulness, line 5:") for line in lines), proc.stderr  # own lines
        assert "--allow-errors" in proc.stderr and "Traceback" not in proc.stderr
        report = json.loads(out.read_text())  # the reports are written all the same
        assert report["metrics"]["faithfulness"]["per_example"]["faithfulness"][1] is None
        assert "rouge1" in proc.stdout
        allowed = run_cli(*args, "--allow-errors")
        assert allowed.returncode == 0 and "2 of 6 example(s) got no score" in allowed.stderr


def test_a_judge_error_is_one_line_and_exit_1_with_traceback_only_under_debug(tmp_path):
    path = write_jsonl(tmp_path / "rag.jsonl", rag_rows(2, bad={0, 1}))
    with ChatServer(bad_for_some) as srv:
        args = ["score", path, "--metrics", "faithfulness", "--option", "faithfulness.on_error=raise",
                "--judge", "openai:j", "--judge-url", srv.url]
        proc = run_cli(*args)
        assert proc.returncode == 1
        errors = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(errors) == 1 and errors[0].startswith("textgen-metrics: error: faithfulness"), proc.stderr
        debug = run_cli(*args, "--debug")
        assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
        assert "JudgeError" in debug.stderr


def test_on_error_raise_names_the_row_as_the_command_line_counts_rows(tmp_path, capsys):
    """The library says ``example i`` (from 0, as Python indexes); the command line says the file's
    line, as its summary of unscored rows does."""
    from textgen_metrics.cli import main
    from textgen_metrics.judges import JudgeError

    path = write_jsonl(tmp_path / "rag.jsonl", rag_rows(3, bad={1}))  # the second row's answers stay unusable
    with ChatServer(bad_for_some) as srv:
        status = main(["score", str(path), "--metrics", "faithfulness", "--option", "faithfulness.on_error=raise",
                       "--judge", "openai:j", "--judge-url", srv.url])
        err = capsys.readouterr().err
        assert status == 1
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("textgen-metrics: error: faithfulness, line 2: "), err
        assert "example" not in lines[0]
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        with pytest.raises(JudgeError, match=r"^faithfulness: example 1: ") as raised:  # the library's own count
            textgen_metrics.faithfulness(predictions=[r["prediction"] for r in rows],
                                         contexts=[r["contexts"] for r in rows], judge="openai:j",
                                         judge_options={"base_url": srv.url, "api_key": "k"}, on_error="raise")
        assert raised.value.index == 1 and raised.value.metric == "faithfulness"


def test_an_unreachable_judge_exits_1_without_a_traceback(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = write_jsonl(tmp_path / "rag.jsonl", rag_rows(2))
    proc = run_cli("score", path, "--metrics", "faithfulness", "--judge", "openai:j",
                   "--judge-url", f"http://127.0.0.1:{port}/v1", "--judge-option", "max_retries=0")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and f"127.0.0.1:{port}" in proc.stderr


@pytest.mark.parametrize("value, want", [("False", False), ("no", False), ("OFF", False), ("0", False),
                                         ("true", True), ("Yes", True), ("on", True), ("1", True)])
def test_boolean_options_parse_every_spelling(tmp_path, value, want):
    out = tmp_path / "r.json"
    proc = run_cli("score", SAMPLE, "--option", f"rouge.use_stemmer={value}", "--out", out)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    expected = textgen_metrics.rouge([r["prediction"] for r in rows], [r["references"] for r in rows],
                                     use_stemmer=want)
    stemmed = textgen_metrics.rouge([r["prediction"] for r in rows], [r["references"] for r in rows],
                                    use_stemmer=not want)
    assert expected != stemmed  # the option matters on this data
    report = json.loads(out.read_text())
    assert report["metrics"]["rouge"]["aggregate"] == expected
    assert report["metrics"]["rouge"]["options"] == {"use_stemmer": want}


@pytest.mark.parametrize("option, message", [
    ("rouge.use_stemmer=maybe",
     "--option rouge.use_stemmer: expected a boolean (true/false, yes/no, on/off, 1/0), got 'maybe'"),
    ("rouge.use_stemmer=", "--option rouge.use_stemmer: expected a boolean"),
    ("rouge.bootstrap_samples=many", "--option rouge.bootstrap_samples: expected a number, got 'many'"),
    ("rouge.seed=1.5", "--option rouge.seed: expected an integer, got '1.5'"),
    ("rouge.rouge_types=[rouge1", "--option rouge.rouge_types: not a valid JSON list"),
    ("rouge.stemmer=true", "--option rouge.stemmer: rouge has no option 'stemmer'; its options:"),
    ("bleu.smooth=true", "--option bleu: 'bleu' is not among --metrics rouge"),
    ("rouge.rouge_w_weight=inf", "rouge_w_weight: inf is not a finite number"),
    ("rouge.use_stemmer", "--option: expected METRIC.NAME=VALUE, got 'rouge.use_stemmer'"),
])
def test_bad_options_are_usage_errors_naming_the_option(option, message):
    proc = run_cli("score", SAMPLE, "--option", option)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1


def test_number_and_list_options(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("score", SAMPLE, "--metrics", "rouge,bleu", "--option", "rouge.rouge_types=rouge1,rougeW",
                   "--option", "rouge.rouge_w_weight=1.5", "--option", "bleu.weights=[0.5, 0.5]",
                   "--option", "bleu.smooth=yes", "--out", out)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    preds, refs = [r["prediction"] for r in rows], [r["references"] for r in rows]
    report = json.loads(out.read_text())
    assert report["metrics"]["rouge"]["aggregate"] == textgen_metrics.rouge(
        preds, refs, rouge_types=["rouge1", "rougeW"], rouge_w_weight=1.5)
    assert report["metrics"]["bleu"]["aggregate"] == textgen_metrics.bleu(preds, refs, weights=[0.5, 0.5], smooth=True)
    proc = run_cli("score", SAMPLE, "--metrics", "bleu", "--option", "bleu.weights=0.5,0.25,x")
    assert proc.returncode == 2 and "--option bleu.weights: expected a number, got 'x'" in proc.stderr


def test_usage_errors_exit_2(tmp_path):
    assert run_cli("score").returncode == 2  # argparse: the file is missing
    assert run_cli("score", SAMPLE, "--no-such-flag").returncode == 2
    proc = run_cli("score", tmp_path / "missing.jsonl")
    assert proc.returncode == 2 and "missing.jsonl" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("score", SAMPLE, "--column", "queries=question")
    assert proc.returncode == 2 and "--column queries: not an input of rouge" in proc.stderr


def test_messages_name_the_file_line_and_ids_count_rows_from_1(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("prediction,references\nthe cat,the cat sat\n")
    bad = tmp_path / "bad.jsonl"
    write_jsonl(bad, [{"prediction": "a", "references": "a"}, {"prediction": "b"}])
    proc = run_cli("score", bad)
    assert proc.returncode == 2
    assert "bad.jsonl: line 2 has no field 'references' for rouge's references" in proc.stderr
    write_jsonl(bad, [{"answer": "a"}])
    proc = run_cli("score", bad)
    assert "line 1 has no field 'predictions' or 'prediction' for rouge's predictions (it has: answer)" in proc.stderr
    report = tmp_path / "r.json"
    assert run_cli("score", path, "--out", report).returncode == 0
    assert json.loads(report.read_text())["ids"] == [1]  # without an id field: the row number


def test_library_rejects_a_string_where_a_boolean_belongs():
    calls = [(textgen_metrics.rouge, ["use_stemmer", "use_aggregator", "split_summaries", "return_precision_recall"]),
             (textgen_metrics.bleu, ["smooth", "use_aggregator", "lowercase"]),
             (textgen_metrics.google_bleu, ["use_aggregator"]),
             (textgen_metrics.meteor, ["use_aggregator"]),
             (textgen_metrics.bertscore, ["use_aggregator", "verbose", "all_layers", "idf",
                                          "rescale_with_baseline", "use_fast_tokenizer", "half"])]
    for fn, names in calls:
        for name in names:
            with pytest.raises(TypeError, match=rf"^{name}: expected True or False, got the string 'False'"):
                fn(["a b"], ["a b"], **{name: "False"})
    with pytest.raises(TypeError, match="use_stemmer: expected True or False"):
        textgen_metrics.RougeScorer(["rouge1"], "no")


SPELLINGS = [(column, field) for column, fields in
             __import__("textgen_metrics.registry", fromlist=["COLUMN_FIELDS"]).COLUMN_FIELDS.items()
             for field in fields]


@pytest.mark.parametrize("column, field", SPELLINGS, ids=[f"{c}-{f}" for c, f in SPELLINGS])
def test_every_documented_field_spelling_is_read(column, field):
    from textgen_metrics.registry import METRICS
    from textgen_metrics.run import Run

    spec = next(s for s in METRICS.values() if column in s.columns)
    values = {"text": "a text", "text_or_list": ["one", "two"], "list": ["c1", "c2"]}
    rows = []
    for _ in range(2):
        row = {f"{c}_other": "x" for c in spec.columns}
        for c, kind in spec.columns.items():
            row[field if c == column else c] = values[kind]
        rows.append(row)
    got = Run.build([spec.name], judge=(lambda messages: "unused") if spec.judge else None).inputs(rows)[spec.name]
    assert got[column] == [values[spec.columns[column]]] * 2


def test_a_query_field_feeds_answer_relevance_end_to_end(tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl",
                       [{"prediction": "Paris is in France. It is big.", "query": "Where is Paris?"}])
    with ChatServer(schema_answer) as srv:
        proc = run_cli("score", path, "--metrics", "answer_relevance", "--judge", "openai:j", "--judge-url", srv.url)
    assert proc.returncode == 0, proc.stderr
    assert srv.bodies and "Where is Paris?" in json.dumps(srv.bodies)


# -- bad cells: the file's own line (CSV: the header is line 1; JSONL: the line) and the column ----------
def one_error(proc):
    """The one line a usage error prints (exit 2, no traceback)."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


CSV_CASES = [  # (the rows after the header, the error's line and column, its reason)
    (["the cat sat,the cat sat", ",the dog ran"], "line 3, column 'prediction'", "empty"),
    (["the cat sat,the cat sat", "a dog,a dog", "a cow,   "], "line 4, column 'references'", "empty"),
    (['the cat sat,"[""Rain."", ""Rain fell."""'], "line 2, column 'references'",
     "starts like a JSON list but is not one"),
    (["a cat,\"['Rain.', 'Rain fell.']\""], "line 2, column 'references'", "starts like a JSON list but is not one"),
    (['"the cat\nsat on\nthe mat",the cat', "a dog,"], "line 5, column 'references'", "empty"),  # a 3-line cell
    (["the cat sat"], "line 2, column 'references'", "no value"),  # a row shorter than the header
]


@pytest.mark.parametrize("rows, where, reason", CSV_CASES, ids=["empty", "blank", "broken-json", "python-list",
                                                                 "multi-line-cell", "short-row"])
def test_a_bad_csv_cell_names_its_line_and_column(tmp_path, rows, where, reason):
    path = tmp_path / "d.csv"
    path.write_text("prediction,references\n" + "\n".join(rows) + "\n")
    line = one_error(run_cli("score", path, "--metrics", "rouge,bleu"))
    assert line.startswith(f"textgen-metrics: error: {path}: {where}: {reason}"), line


def test_a_bad_jsonl_cell_names_its_line_and_column(tmp_path):
    path = tmp_path / "d.jsonl"

    def write(*records):  # a blank line 2: the records sit on lines 1, 3, 4...
        path.write_text(json.dumps(records[0]) + "\n\n" + "".join(json.dumps(r) + "\n" for r in records[1:]))

    good = {"prediction": "the cat", "references": ["the cat sat"]}
    cases = [({"prediction": "  ", "references": "a"}, "line 3, column 'prediction': empty"),
             ({"prediction": None, "references": "a"}, "line 3, column 'prediction': no value"),
             ({"prediction": 5, "references": "a"}, "line 3, column 'prediction': expected str, got int"),
             ({"prediction": "a", "references": ["a", " "]}, "line 3, column 'references', item 2: empty"),
             ({"prediction": "a", "references": '["a", "b"'}, "line 3, column 'references': starts like a JSON list"),
             ({"prediction": "a", "references": []}, "line 3, column 'references': empty list")]
    for bad, want in cases:
        write(good, bad, good)
        line = one_error(run_cli("score", path, "--metrics", "rouge"))
        assert line.startswith(f"textgen-metrics: error: {path}: {want}"), (bad, line)
    write(good, {"hyp": "a", "references": "a"})
    line = one_error(run_cli("score", path))
    assert f"{path}: line 3 has no field 'prediction' for rouge's predictions (it has: hyp, references)" in line


def test_a_json_list_names_the_row_from_1(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([{"prediction": "a", "references": "a"}, {"prediction": "", "references": "b"}]))
    line = one_error(run_cli("score", path))
    assert f"{path}: row 2, column 'prediction': empty" in line


def test_allow_empty_scores_blank_cells_as_the_library_scores_empty_texts(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("prediction,references\nthe cat sat,the cat sat\n,the dog ran\n  ,a cow\na dog,\n")
    assert one_error(run_cli("score", path, "--metrics", "rouge,bleu")).endswith(
        "line 3, column 'prediction': empty (a blank cell usually means missing data; --allow-empty scores it "
        "as an empty text)")
    out = tmp_path / "r.json"
    proc = run_cli("score", path, "--metrics", "rouge,bleu", "--allow-empty", "--out", out)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    preds, refs = ["the cat sat", "", "  ", "a dog"], ["the cat sat", "the dog ran", "a cow", ""]
    assert report["metrics"]["rouge"]["per_example"] == textgen_metrics.rouge(preds, refs, use_aggregator=False)
    assert report["metrics"]["bleu"]["aggregate"] == textgen_metrics.bleu(preds, refs)
    assert report["lines"] == [2, 3, 4, 5]
    # --allow-empty allows blank cells only: a broken list is still an error
    path.write_text('prediction,references\n,"[""Rain."", ""Rain fell."""\n')
    line = one_error(run_cli("score", path, "--allow-empty"))
    assert "line 2, column 'references': starts like a JSON list but is not one" in line


def test_texts_in_brackets_and_the_library_keep_their_meaning(tmp_path):
    from textgen_metrics.run import Run

    path = tmp_path / "d.csv"
    path.write_text('prediction,references\n[Music] plays,[Music] plays softly\na,"[""a"", ""b""]"\n')
    out = tmp_path / "r.json"
    assert run_cli("score", path, "--out", out).returncode == 0
    want = textgen_metrics.rouge(["[Music] plays", "a"], ["[Music] plays softly", ["a", "b"]], use_aggregator=False)
    assert json.loads(out.read_text())["metrics"]["rouge"]["per_example"] == want
    # in the library an empty string stays valid input with its documented score
    assert Run.build(["rouge"]).inputs([{"prediction": "", "references": ""}])["rouge"] == {
        "predictions": [""], "references": [""]}
    assert textgen_metrics.rouge([""], ["a"])["rouge1"] == 0.0


def test_a_missing_file_is_a_clear_error(tmp_path):
    line = one_error(run_cli("score", tmp_path / "missing.jsonl"))
    assert line == f"textgen-metrics: error: {tmp_path / 'missing.jsonl'}: no such file or folder"
    assert "Errno" not in line


def test_judge_help_lists_every_backend():
    from textgen_metrics.judges import BACKENDS

    text = " ".join(run_cli("score", "--help").stdout.split())
    for name in BACKENDS:
        assert f"({name}:" in text, name
    assert "tiny:smollm2" in text


def test_the_options_command_prints_the_help_generated_from_options(capsys):
    """``textgen-metrics options`` is the command line's, from the same generator as the cards'
    and the evaluate scripts' help (tests/test_option_docs.py holds those against Options)."""
    from textgen_metrics.cli import main
    from textgen_metrics.option_docs import cli_text
    from textgen_metrics.registry import get_metric

    assert main(["options", "rouge", "bleu"]) == 0
    out = capsys.readouterr().out
    assert cli_text("rouge") in out and cli_text("bleu") in out
    assert all(f"    {name} (" in out for name in get_metric("bleu").option_kinds())
    with pytest.raises(SystemExit) as info:
        main(["options", "rogue"])
    assert info.value.code == 2
