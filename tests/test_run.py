"""The one Run every front end builds (textgen_metrics.run): its checks in each front end's words,
one parser of option values, one reader of tables with one notion of a missing cell."""

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import textgen_metrics
from textgen_metrics.errors import CellError, InputError, OptionError
from textgen_metrics.run import CLI_WORDS, SPACE_WORDS, Run, RunError, judge_option_kinds, read_cell

ROWS = [{"prediction": "the cat sat on the mat", "references": ["a cat sat on the mat", "the cat is on a mat"]},
        {"prediction": "dogs bark at night", "references": ["dogs bark loudly at night", "a dog barks"]},
        {"prediction": "it rained all day", "references": ["rain fell all day long", "it was rainy"]}]


@pytest.mark.parametrize("words, flag", [(CLI_WORDS, "--"), (SPACE_WORDS, ""), ({}, "")])
def test_each_check_names_the_argument_in_the_front_end_s_words(words, flag):
    cases = [
        (dict(metrics=["rogue"]), "metrics", "unknown metric 'rogue'"),
        (dict(metrics=[]), "metrics", "name at least one metric"),
        (dict(metrics=["rouge", "rouge"]), "metrics", "names a metric twice"),
        (dict(metrics=["rouge"], columns={"queries": "q"}), "columns", "not an input of rouge"),
        (dict(metrics=["rouge"], columns={"predictions": ""}), "columns", "must name a column"),
        (dict(metrics=["rouge"], options={"bleu": {}}), "options", "'bleu' is not among"),
        (dict(metrics=["rouge"], options={"rouge": 3}), "options", "must be a mapping"),
        (dict(metrics=["rouge", "faithfulness"]), "judge", "needs a judge (faithfulness)"),
    ]
    for kwargs, argument, text in cases:
        with pytest.raises(RunError) as info:
            Run.build(**kwargs, words=words)
        word = {**{"metrics": "metrics", "columns": "columns", "options": "options", "judge": "judge"}, **words}
        assert info.value.argument == argument and str(info.value).startswith(word[argument]), str(info.value)
        assert text in str(info.value)
    with pytest.raises(OptionError, match=r"rouge\.stem: rouge has no option 'stem'") as bad:
        Run.build(["rouge"], options={"rouge": {"stem": True}}, words=words)
    assert bad.value.option == "stem"


def test_one_parser_reads_option_texts_alike_in_every_front_end():
    """A text typed for an option is parsed by its kind, whoever gives it: the command line (every
    value a text), a Space's JSON or a cluster's options= (a text for a flag, a number or a list)."""
    typed = Run.build(["rouge", "bleu"], options={"rouge": {"use_stemmer": True, "rouge_types": ["rouge1"]},
                                                   "bleu": {"max_order": 2}})
    cli = Run.build(["rouge", "bleu"], options={"rouge": {"use_stemmer": "1", "rouge_types": "rouge1"},
                                                 "bleu": {"max_order": "2"}}, words=CLI_WORDS, texts=True)
    space = Run.build(["rouge", "bleu"], options={"rouge": {"use_stemmer": "yes", "rouge_types": "[\"rouge1\"]"},
                                                   "bleu": {"max_order": "2"}}, words=SPACE_WORDS)
    assert cli.options == space.options == typed.options
    assert type(cli.options["bleu"]["max_order"]) is int
    with pytest.raises(OptionError, match=r"^--option rouge\.use_stemmer: expected a boolean"):
        Run.build(["rouge"], options={"rouge": {"use_stemmer": "maybe"}}, words=CLI_WORDS, texts=True)
    with pytest.raises(OptionError, match=r"^Options bleu\.max_order: expected a number, got .two."):
        Run.build(["bleu"], options={"bleu": {"max_order": "two"}}, words=SPACE_WORDS)
    # a judge's options by the types of its own arguments: 1/0 is a flag as for a metric's option
    kinds = judge_option_kinds("openai:m")
    assert kinds["batch"] == "bool" and kinds["concurrency"] == "int" and kinds["base_url"] == "str"
    run = Run.build(["faithfulness"], judge="openai:m",
                    judge_options={"batch": "1", "concurrency": "16", "base_url": "http://127.0.0.1:1/v1"},
                    texts=True)
    assert run.judge_options == {"batch": True, "concurrency": 16, "base_url": "http://127.0.0.1:1/v1"}


def test_every_kind_of_table_is_read_alike():
    """Records, CSV cells (a list as JSON text), pandas, Arrow and Ray Data's default batch (a
    dict of NumPy arrays, a list column as a 2-D array) give the same inputs and scores."""
    run = Run.build(["rouge", "bleu"])
    preds = [r["prediction"] for r in ROWS]
    refs = [r["references"] for r in ROWS]
    want = run.inputs(ROWS)
    tables = [
        [{"prediction": r["prediction"], "references": json.dumps(r["references"])} for r in ROWS],
        pd.DataFrame(ROWS),
        pa.table({"prediction": preds, "references": refs}),
        {"prediction": np.array(preds), "references": np.array(refs)},
        {"prediction": np.array(preds, dtype=object),
         "references": np.array([np.array(r) for r in refs] + [None], dtype=object)[:-1]},
    ]
    for table in tables:
        assert run.inputs(table) == want, type(table)
    library = {"rouge": textgen_metrics.rouge(preds, refs), "bleu": textgen_metrics.bleu(preds, refs)}
    for table in tables:
        assert run.result_dicts(run.statistics(table)) == library


def test_one_notion_of_a_missing_cell():
    """None, NaN and pandas' NA are missing alike: in a file, a required cell without a value is
    an error naming its line and field; in a batch, the library's own error for None."""
    for missing in (None, float("nan"), pd.NA):
        assert read_cell(missing, "text") is None and read_cell(missing, "list") is None
    run = Run.build(["rouge"])
    rows = [dict(ROWS[0]), dict(ROWS[1], prediction=None)]
    with pytest.raises(CellError, match=r"^data\.jsonl: line 3, column 'prediction': no value") as cell:
        run.inputs(rows, source="data.jsonl", lines=[1, 3])
    assert (cell.value.argument, cell.value.index) == ("predictions", 1)
    frame = pd.DataFrame({"prediction": pd.array(["a b", pd.NA], dtype="string"), "references": ["a", "b"]})
    with pytest.raises(InputError, match=r"^predictions\[1\]: expected str, got None$"):
        run.statistics(frame)
    with pytest.raises(InputError, match=r"^predictions\[1\]: expected str, got None$"):
        textgen_metrics.rouge(["a b", None], ["a", "b"])
    # a list cell that starts like a JSON list and does not parse is an error, never a reference
    with pytest.raises(InputError, match=r"^references\[0\]: starts like a JSON list"):
        run.inputs({"prediction": ["a"], "references": ['["a", "b"']})


def test_a_run_is_picklable_and_its_metric_objects_are_made_once_per_process():
    import pickle

    run = Run.build(["chrf"], options={"chrf": {"word_order": 2}})
    again = pickle.loads(pickle.dumps(run))
    assert again == run and again.fingerprint == run.fingerprint
    assert again.metrics_here("test") is run.metrics_here("test")
