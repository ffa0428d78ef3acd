"""One reader of rows: :func:`textgen_metrics.run.read_rows` reads a source (a list of records, or
a file as ``score`` reads it) into :class:`~textgen_metrics.run.Rows`, and ``Run.inputs`` reads a
file's rows by the files' rule (a blank required text is an error naming its line and column,
unless allowed); ``score``, ``audit`` and ``meta-eval`` all read files through it, so the audit
and the meta-evaluation's dry run refuse a blank cell as ``score`` does, where they took it for
an empty text before."""

from __future__ import annotations

import pytest

import textgen_metrics
from textgen_metrics import run as run_module
from textgen_metrics import scoring
from textgen_metrics.errors import CellError
from textgen_metrics.run import Rows, Run, read_rows

OFFLINE = {"base_url": "http://127.0.0.1:9/v1", "api_key": "k"}  # dry runs send nothing: no server


def _pairs_csv(folder, blank_line_3=True):
    folder.mkdir(exist_ok=True)
    path = folder / "pairs.csv"
    second = "" if blank_line_3 else "Answer two"
    path.write_text("query,prediction,baseline\nQuestion one?,Answer one,Reply one\n"
                    f"Question two?,{second},Reply two\nQuestion three?,Answer three,Reply three\n", encoding="utf-8")
    return path


def test_read_rows_reads_records_as_given_and_files_with_their_lines(tmp_path):
    records = [{"prediction": "a"}, {"prediction": ""}]
    assert read_rows(records) == Rows(records, "rows", None)
    path = tmp_path / "rows.jsonl"
    path.write_text('\n{"prediction": "a"}\n\n{"prediction": "b"}\n', encoding="utf-8")
    assert read_rows(str(path)) == Rows([{"prediction": "a"}, {"prediction": "b"}], str(path), [2, 4])
    assert read_rows(path) == read_rows(str(path))  # a path object too
    with pytest.raises(TypeError, match="source: expected a list of records or a file path, got int"):
        read_rows(3)
    assert scoring.read_table is run_module.read_table  # score's reader is the run's


def test_a_file_s_rows_refuse_a_blank_required_text_and_records_keep_it():
    run = Run.build(["rouge"])
    rows = [{"prediction": "the cat", "references": ["a cat"]}, {"prediction": " ", "references": ["a dog"]}]
    in_file = Rows(rows, "summaries.jsonl", [1, 2])
    with pytest.raises(CellError, match=r"summaries\.jsonl: line 2, column 'prediction': empty"):
        run.inputs(in_file)
    assert run.inputs(in_file, allow_empty=True)["rouge"]["predictions"] == ["the cat", " "]
    assert run.inputs(Rows(rows, "rows"))["rouge"]["predictions"] == ["the cat", " "]  # the library's records
    assert run.inputs(rows)["rouge"]["predictions"] == ["the cat", " "]


def test_the_audit_refuses_a_blank_cell_of_a_file_naming_its_line_and_column(tmp_path):
    path = _pairs_csv(tmp_path)
    with pytest.raises(CellError, match=r"pairs\.csv: line 3, column 'prediction': empty"):
        textgen_metrics.audit(str(path), metrics="pairwise_preference", judge="openai:gpt-4o-mini",
                              judge_options=OFFLINE, dry_run=True)
    allowed = textgen_metrics.audit(str(path), metrics="pairwise_preference", judge="openai:gpt-4o-mini",
                                    judge_options=OFFLINE, dry_run=True, allow_empty=True)
    filled = textgen_metrics.audit(str(_pairs_csv(tmp_path / "filled", blank_line_3=False)),
                                   metrics="pairwise_preference", judge="openai:gpt-4o-mini",
                                   judge_options=OFFLINE, dry_run=True)
    assert allowed["total"]["requests"] == filled["total"]["requests"] > 0
    # people's columns are named by the file's line too
    with pytest.raises(ValueError, match=r"^human_column: line 2 has no field 'gold' \(it has: baseline, prediction"):
        textgen_metrics.audit(str(path), metrics="pairwise_preference", judge="openai:gpt-4o-mini",
                              judge_options=OFFLINE, dry_run=True, allow_empty=True, human_column="gold")


def test_the_meta_evaluation_dry_run_refuses_a_blank_cell_of_a_file_as_its_run_does(tmp_path, capsys):
    from textgen_metrics.cli import main

    path = tmp_path / "rated.csv"
    path.write_text("prediction,source,coherence\nA summary.,The text.,3\n,Another text.,2\n"
                    "A third summary.,A third text.,4\n", encoding="utf-8")
    args = ["meta-eval", str(path), "--metrics", "summary_coherence", "--column", "sources=source",
            "--human-column", "coherence", "--judge", "openai:gpt-4o-mini", "--dry-run"]
    assert main(args) == 2
    assert "line 3, column 'prediction': empty" in capsys.readouterr().err
    assert main([*args, "--allow-empty"]) == 0
    assert "summary_coherence" in capsys.readouterr().out
