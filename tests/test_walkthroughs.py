"""The two walk-throughs of docs/contributing.md, run as written there.

(a) A new metric is one ``Metric`` class with its ``Options``: defined here (inside the test, and
taken out of the registry after it), it reaches the library function, the command line
(``score_records`` and ``cli.main`` in process), the ``options`` subcommand's help, the Trainer hook,
the playground Space, the cluster core (statistics of batches, packed, merged) and an evaluate
module, each giving the library function's numbers, with no other code.

(b) A new front end is a few lines on :class:`~textgen_metrics.run.Run`: its results equal the
command line's JSON report, and its errors are the Run's.

The page shows the code of both as it is here: each test holds the page's block equal to its own
code, and the numbers the page states (files, lines) equal what the test measures."""

from __future__ import annotations

import inspect
import json
import re
import textwrap

import numpy as np
import pytest

import textgen_metrics
from conftest import ROOT, word_level_tokenizer
from textgen_metrics import cli, registry
from textgen_metrics.errors import OptionError
from textgen_metrics.metric import metric_classes
from textgen_metrics.run import Run, RunError

PAGE = ROOT / "docs" / "contributing.md"
NAME = "length_agreement"
PREDICTIONS = ["the cat sat on the mat .", "a big dog ran in the park .", "the red house is near the tree .",
               "a small cat was under the rug .", "the dog and the cat sat .", "the park was big and blue ."]
REFERENCES = ["the cat sat on the mat .", "a big dog ran . the park is big .", "the red house .",
              "a small cat . it was under the rug .", "the dog sat .", "the park was big ."]
MT_METRICS = ["rouge", "bleu", "chrf", "meteor"]


def page_section(heading):
    text = PAGE.read_text(encoding="utf-8")
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def page_blocks(heading):
    """The Python blocks of one section of the page."""
    return re.findall(r"^```python\n(.*?)^```", page_section(heading), re.S | re.M)


def marked_code(start, end):
    """This file's lines between two marker comments, dedented (the code the page shows)."""
    source = inspect.getsource(inspect.getmodule(marked_code))
    body = source.split(f"# {start}\n", 1)[1].split(f"# {end}\n", 1)[0]
    return textwrap.dedent(body).strip("\n")


def same_code(block, code):
    """The page's block is this code (the page puts two blank lines between top-level definitions
    where a function's body has one)."""
    def squeezed(text):
        return re.sub(r"\n{3,}", "\n\n", text.strip("\n"))

    return squeezed(block) == squeezed(code)


def code_lines(function):
    """The lines of a function's body, its docstring and blank lines aside."""
    body = inspect.getsource(function).split('"""')[-1]
    return [line for line in body.splitlines() if line.strip()]


def forget(name):
    """Take a trial metric out of the registry, the package's names and this process's metric
    objects (as tests/test_metric_spine.py's ``buggy_metric`` does, and Run's per-process cache)."""
    from textgen_metrics import run as run_module

    metric_classes().pop(name, None)
    vars(textgen_metrics).pop(name, None)
    for key, objects in list(run_module._PROCESS.items()):
        if name in objects.metrics:
            del run_module._PROCESS[key]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    """A word-level tokenizer of the test's words, built offline (as tests/test_trainer.py's)."""
    return word_level_tokenizer(" ".join(PREDICTIONS + REFERENCES).split(), tmp_path_factory.mktemp("tok"))


def write_jsonl(path, predictions, references):
    path.write_text("".join(json.dumps({"prediction": p, "reference": r}) + "\n"
                            for p, r in zip(predictions, references, strict=True)), encoding="utf-8")
    return path


# -- (a) a new metric --------------------------------------------------------------------------------
def test_a_new_metric_is_one_class_that_every_front_end_takes(tokenizer, tmp_path, monkeypatch, capsys):
    monkeypatch.delitem(vars(textgen_metrics), NAME, raising=False)
    try:
        # walk-through (a): the metric
        import dataclasses
        from typing import Any

        from textgen_metrics.metric import MeanMetric, Options, option
        from textgen_metrics.signature import signature
        from textgen_metrics.validation import check_bool

        def _unit(name: str, value: Any) -> str:
            if value not in ("words", "chars"):
                raise ValueError(f"{name}: 'words' or 'chars', got {value!r}")
            return str(value)

        def _agreement(a: int, b: int) -> float:
            return min(a, b) / max(a, b) if max(a, b) else 1.0

        @dataclasses.dataclass(frozen=True)
        class LengthAgreementOptions(Options):
            use_aggregator: bool = option(True, check=check_bool, front_end=True,
                                          doc="True: the mean over examples; False: per-example lists")
            unit: str = option("words", check=_unit, doc="what is counted: words or chars")

        class LengthAgreement(MeanMetric):
            """How near a prediction's length is to its reference's: the shorter length over the
            longer, against the best of its references. Range 0 to 1; two empty texts score 1."""

            name = "length_agreement"
            Options = LengthAgreementOptions

            def settings_signature(self) -> str:
                return signature("length_agreement", unit=self.options.unit)

            def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
                size = len if self.options.unit == "chars" else (lambda text: len(text.split()))
                return {"length_agreement": [
                    max(_agreement(size(p), size(r)) for r in ([refs] if isinstance(refs, str) else refs))
                    for p, refs in zip(inputs["predictions"], inputs["references"], strict=True)]}

        length_agreement = LengthAgreement.function()
        # end of walk-through (a)

        assert same_code(page_blocks("Walk-through: a new metric")[0],
                         marked_code("walk-through (a): the metric", "end of walk-through (a)"))

        # the library function, and the registry and the package have it
        want = length_agreement(PREDICTIONS, REFERENCES, unit="chars")
        assert want["length_agreement"] > 0 and want["signature"].startswith("length_agreement|unit:chars|")
        assert registry.METRICS[NAME] is LengthAgreement and NAME in dir(textgen_metrics)
        assert textgen_metrics.length_agreement is length_agreement
        per_example = length_agreement(PREDICTIONS, REFERENCES, unit="chars", use_aggregator=False)
        rows = [{"prediction": p, "reference": r} for p, r in zip(PREDICTIONS, REFERENCES, strict=True)]
        front_ends = {}

        # the command line's path: a Run, then score_records; and the command line itself, in process
        from textgen_metrics.run import CLI_WORDS
        from textgen_metrics.scoring import score_records

        run = Run.build([NAME], options={NAME: {"unit": "chars"}}, words=CLI_WORDS, texts=True)
        report = score_records(rows, [NAME], run=run)
        front_ends["command line (score_records)"] = report["metrics"][NAME]["aggregate"]
        assert report["metrics"][NAME]["per_example"] == per_example
        data = write_jsonl(tmp_path / "rows.jsonl", PREDICTIONS, REFERENCES)
        out = tmp_path / "report.json"
        assert cli.main(["score", str(data), "--metrics", NAME, "--option", f"{NAME}.unit=chars",
                         "--out", str(out)]) == 0
        written = json.loads(out.read_text(encoding="utf-8"))
        front_ends["command line (cli.main score)"] = written["metrics"][NAME]["aggregate"]

        # its options' help, from its Options: the ``options`` subcommand (option_docs adds it to a parser)
        import argparse

        from textgen_metrics import option_docs

        text = option_docs.cli_text(NAME)
        assert text.startswith(NAME) and "unit (str, default \"words\")" in text
        assert "what is counted: words or chars" in text and "use_aggregator" not in text
        parser = argparse.ArgumentParser(prog="textgen-metrics")
        option_docs.add_options_parser(parser.add_subparsers(dest="command"))
        args = parser.parse_args(["options", NAME])
        capsys.readouterr()
        assert args.run(args) == 0 and capsys.readouterr().out.startswith(text + "\n")

        # the Trainer hook, over ids: at once, and batch by batch (batch_eval_metrics=True)
        from textgen_metrics.trainer import compute_metrics

        def ids(texts):
            return np.array(tokenizer(texts, padding=True)["input_ids"])

        hook = compute_metrics(tokenizer, metrics=[NAME], options={NAME: {"unit": "chars"}})
        front_ends["Trainer hook (at once)"] = {NAME: hook((ids(PREDICTIONS), ids(REFERENCES)))[NAME]}
        assert hook((ids(PREDICTIONS[:2]), ids(REFERENCES[:2])), compute_result=False) == {}
        front_ends["Trainer hook (batch by batch)"] = {NAME: hook((ids(PREDICTIONS[2:]), ids(REFERENCES[2:])))[NAME]}

        # the playground Space
        from textgen_metrics.spaces import run_playground

        summary, _, _, report = run_playground(str(data), [NAME], None, json.dumps({NAME: {"unit": "chars"}}))
        front_ends["playground Space"] = report["metrics"][NAME]["aggregate"]
        assert summary[0][0] == NAME

        # the cluster core (Ray's and Spark's workers and driver): each batch's statistics as JSON,
        # in any order, merged in row order and scored
        import pandas as pd

        from textgen_metrics import scaleout

        cluster = Run.build([NAME], options={NAME: {"unit": "chars"}}, front_end=True)
        ray_batch = {"predictions": np.array(PREDICTIONS[:4], dtype=object),
                     "references": np.array(REFERENCES[:4], dtype=object)}
        spark_batch = pd.DataFrame({"prediction": PREDICTIONS[4:], "reference": REFERENCES[4:]})
        parts = [(4, 2, scaleout.batch_statistics(cluster, spark_batch, "worker")),
                 (0, 4, scaleout.pack(cluster.statistics(ray_batch, "worker")))]
        front_ends["Ray and Spark core"] = cluster.result_dicts(scaleout.merge(parts))[NAME]

        # an evaluate module: a script that names the metric (metrics/<name>/ adds its card and Space)
        import evaluate

        folder = tmp_path / NAME
        folder.mkdir()
        (folder / f"{NAME}.py").write_text(textwrap.dedent(f"""\
            import evaluate

            import textgen_metrics
            import textgen_metrics.hf
            import textgen_metrics.option_docs

            _DESCRIPTION = "How near a prediction's length is to its reference's."
            _CITATION = ""
            _KWARGS_DESCRIPTION = textgen_metrics.option_docs.arguments_text({NAME!r})


            class LengthAgreement(textgen_metrics.hf.TextgenMetric):
                metric_name = {NAME!r}
            """), encoding="utf-8")
        module = evaluate.load(str(folder))
        front_ends["evaluate module"] = module.compute(predictions=PREDICTIONS, references=REFERENCES, unit="chars")

        for front_end, got in front_ends.items():
            assert got == ({NAME: want[NAME]} if front_end.startswith("Trainer") else want), front_end
        kinds = {front_end.split(" (")[0] for front_end in front_ends}

        # what the page says the walk-through takes: this one class for the library and every
        # front end; for a module of this repository, the files every folder of metrics/ holds
        common = None
        for metric in (p for p in (ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()):
            names = {p.name.replace(metric.name, "<name>") for p in metric.iterdir() if p.is_file()}
            common = names if common is None else common & names
        assert common == {"<name>.py", "README.md", "app.py", "requirements.txt"}
        section = page_section("Walk-through: a new metric")
        assert f"**{1 + len(common) + 1} files**" in section
        assert f"{len(kinds)} front ends ({len(front_ends)} ways in)" in section
    finally:
        forget(NAME)
    assert NAME not in registry.METRICS


# -- (b) a new front end -----------------------------------------------------------------------------
# walk-through (b): the front end
def score_rows(rows, metrics, options=None, columns=None):
    """Each metric's result over ``rows`` (dicts, as a file's records), as the library gives it."""
    run = Run.build(metrics, columns, options)
    results = run.score(run.inputs(rows))
    return {name: result.as_dict() for name, result in results.items()}
# end of walk-through (b)


def test_a_new_front_end_is_a_few_lines_on_run_with_the_command_line_s_results_and_errors(tmp_path, capsys):
    assert same_code(page_blocks("Walk-through: a new front end")[0], "from textgen_metrics.run import Run\n\n"
                     + marked_code("walk-through (b): the front end", "end of walk-through (b)"))
    lines = code_lines(score_rows)
    assert f"**{len(lines)} lines**" in page_section("Walk-through: a new front end")

    from textgen_metrics.scoring import read_records

    data = ROOT / "data" / "sample_summaries.jsonl"
    rows = read_records(str(data))
    options = {"rouge": {"use_stemmer": True}, "bleu": {"smooth": True}, "chrf": {"word_order": 2},
               "meteor": {"alpha": 0.8}}
    ours = score_rows(rows, MT_METRICS, options)
    out = tmp_path / "report.json"
    assert cli.main(["score", str(data), "--metrics", ",".join(MT_METRICS), "--option", "rouge.use_stemmer=true",
                     "--option", "bleu.smooth=true", "--option", "chrf.word_order=2", "--option", "meteor.alpha=0.8",
                     "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    for name in MT_METRICS:
        assert ours[name] == report["metrics"][name]["aggregate"], name
        assert ours[name]["signature"] == report["metrics"][name]["aggregate"]["signature"]
    assert ours["meteor"]["signature"] != textgen_metrics.meteor(["a"], ["a"])["signature"]  # the option took

    # its errors are the Run's: the same check as the command line's, each in its own words
    capsys.readouterr()
    cases = [  # (the call, the error's class and argument, its message; the command line's arguments, its message)
        (lambda: score_rows(rows, ["rouge", "rogue"]), RunError, "metrics", "metrics: unknown metric 'rogue'",
         ["--metrics", "rouge,rogue"], "--metrics: unknown metric 'rogue'"),
        (lambda: score_rows(rows, ["rouge"], {"rouge": {"use_stemer": True}}), OptionError, "use_stemer",
         "options rouge.use_stemer: rouge has no option 'use_stemer'",
         ["--metrics", "rouge", "--option", "rouge.use_stemer=true"],
         "--option rouge.use_stemer: rouge has no option 'use_stemer'"),
        (lambda: score_rows(rows, ["rouge"], columns={"prediction_text": "answer"}), RunError, "columns",
         "columns prediction_text: not an input of rouge",
         ["--metrics", "rouge", "--column", "prediction_text=answer"],
         "--column prediction_text: not an input of rouge"),
    ]
    for call, kind, argument, message, argv, cli_message in cases:
        with pytest.raises(kind) as info:
            call()
        assert (info.value.option if kind is OptionError else info.value.argument) == argument
        assert str(info.value).startswith(message)
        assert cli.main(["score", str(data), *argv]) == cli.EXIT_USAGE
        assert f"error: {cli_message}" in capsys.readouterr().err
    # a value no metric can score: the library's error, naming the input and the row
    from textgen_metrics.errors import InputError

    with pytest.raises(InputError, match=r"predictions\[1\]"):
        score_rows([rows[0], {**rows[1], "prediction": None}], ["rouge"])
