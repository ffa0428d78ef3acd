"""Every folder under metrics/: loads offline with evaluate.load, its doctests pass, its card has
the sections, it is a deployable Space, and its script stays thin."""

import doctest
import re
import sys

import evaluate
import pytest

from conftest import ROOT
from textgen_metrics.errors import OptionError

METRICS = sorted(p.parent.name for p in ROOT.glob("metrics/*/*.py") if p.stem == p.parent.name)
CARD_SECTIONS = [
    "## Metric Description", "## How to Use", "### Inputs", "### Output Values", "### Examples",
    "## Limitations and Bias", "## Citation", "## Further References",
]


def test_metric_folders_exist():
    assert "rouge" in METRICS


@pytest.fixture(params=METRICS)
def metric_name(request):
    return request.param


def test_loads_offline_and_runs_doctests(metric_name, repo_root):
    metric = evaluate.load(f"./metrics/{metric_name}")
    assert isinstance(metric, evaluate.Metric)
    module = sys.modules[type(metric).__module__]
    test = doctest.DocTestParser().get_doctest(
        module._KWARGS_DESCRIPTION, {}, f"{metric_name}._KWARGS_DESCRIPTION", None, 0)
    assert len(test.examples) >= 2
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 2 and result.failed == 0


def test_card_has_space_header_and_sections(metric_name):
    text = (ROOT / "metrics" / metric_name / "README.md").read_text(encoding="utf-8")
    header = re.match(r"\A---\n(.*?)\n---\n", text, re.S)
    assert header, "README.md must start with the Hugging Face Space YAML header"
    import yaml

    meta = yaml.safe_load(header.group(1))
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["title"]
    assert {"evaluate", "metric"} <= set(meta["tags"])
    positions = [text.find(s + "\n") for s in CARD_SECTIONS]
    assert all(p >= 0 for p in positions), [s for s, p in zip(CARD_SECTIONS, positions, strict=True) if p < 0]
    assert positions == sorted(positions), "card sections out of order"


def test_every_module_reaches_the_cli_playground_and_trainer(metric_name):
    """The front ends take their metrics from the registry: every folder is there, same columns."""
    import evaluate

    from textgen_metrics.registry import METRICS as REGISTRY

    assert metric_name in REGISTRY
    metric = evaluate.load(str(ROOT / "metrics" / metric_name))
    assert REGISTRY[metric_name].columns == type(metric).columns


def test_playground_space_files():
    """The Space's front matter, app and the extras `make space NAME=playground` reads (the folder
    deploys through that command: tests/test_space_deploy.py)."""
    folder = ROOT / "spaces" / "playground"
    text = (folder / "README.md").read_text(encoding="utf-8")
    import yaml

    meta = yaml.safe_load(re.match(r"\A---\n(.*?)\n---\n", text, re.S).group(1))
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["title"]
    reqs = (folder / "requirements.txt").read_text().split()
    assert any(r.startswith("textgen-metrics[spaces") for r in reqs)
    assert "playground_app" in (folder / "app.py").read_text()


def test_space_files(metric_name):
    folder = ROOT / "metrics" / metric_name
    reqs = (folder / "requirements.txt").read_text().split()
    assert any(r.startswith("textgen-metrics") for r in reqs) and any(r.startswith("gradio") for r in reqs)
    assert "metric_app" in (folder / "app.py").read_text()


def test_script_is_thin(metric_name):
    src = (ROOT / "metrics" / metric_name / f"{metric_name}.py").read_text()
    assert "# From:" not in src
    for line in src.splitlines():
        if re.match(r"^(import|from)\s", line):
            assert "," not in line and not line.startswith("from "), f"one plain import per line: {line}"
    assert src.count("def ") <= 3, "a script holds _info and _compute; logic lives in textgen_metrics"


def test_space_app_builds_and_computes(repo_root):
    import textgen_metrics.spaces as spaces

    demo = spaces.metric_app(str(ROOT / "metrics" / "rouge"))
    assert demo is not None
    metric = evaluate.load("./metrics/rouge")
    rows = [["hello there", "hello there ||| hi"], ["", ""], ["general kenobi", "general grievous"]]
    table, result = spaces.run_metric(metric, rows, '{"rouge_types": ["rouge1"]}')
    assert result.pop("signature").startswith("rouge|tok:rouge_score|") and result == {"rouge1": 0.75}
    assert table[0] == ["rouge1", "0.75"]  # shown with 4 significant digits
    with pytest.raises(ValueError, match="Options: not valid JSON"):
        spaces.run_metric(metric, rows, "{nope")
    with pytest.raises(spaces.SpaceError, match=r"^Row 2, references: the cell is empty"):
        spaces.run_metric(metric, [["a", "b"], ["c", ""]], "{}", strict=True)
    with pytest.raises(OptionError, match=r"^Options rouge.stem: rouge has no option 'stem'"):
        spaces.run_metric(metric, rows, '{"stem": true}', strict=True)
    with pytest.raises(spaces.SpaceError, match=r"^Inputs: the table has no example"):
        spaces.run_metric(metric, [["", ""]], "{}", strict=True)
    assert spaces.format_value(0.833333333) == "0.8333" and spaces.format_value([0.123456, 2]) == "[0.1235, 2]"
    assert spaces.md_escape("<model> *x*") == "&lt;model&gt; \\*x\\*"


SAMPLES = {"text": ["a b", "c d"], "text_or_list": ["a b", ["c d", "e"]], "list": [["a"], ["b", "c"]]}


def test_bad_input_names_argument_and_index_in_every_module(metric_name, repo_root):
    metric = evaluate.load(f"./metrics/{metric_name}")
    columns = type(metric).columns
    good = {c: SAMPLES[k] for c, k in columns.items()}
    for name in columns:
        bad = dict(good, **{name: [good[name][0], None]})
        with pytest.raises((TypeError, ValueError), match=rf"{name}\[1\]"):
            metric.compute(**bad)
        if len(columns) > 1:
            with pytest.raises(ValueError, match="inputs differ in length"):
                metric.compute(**dict(good, **{name: good[name][:1]}))
    if columns.get("references") == "text_or_list":
        with pytest.raises(ValueError, match=r"references\[0\]: empty list"):
            metric.compute(**dict(good, references=[[], ["x"]]))


def test_all_empty_lists_are_a_clear_error_in_every_module(metric_name, repo_root):
    """evaluate itself fails on an empty batch with an IndexError from inside; here a ValueError
    names the first input, before anything is encoded (and an empty add_batch adds nothing)."""
    metric = evaluate.load(f"./metrics/{metric_name}")
    columns = list(type(metric).columns)
    with pytest.raises(ValueError, match=rf"^{columns[0]}: no examples \(empty lists\)"):
        metric.compute(**{c: [] for c in columns})
    assert metric.add_batch(**{c: [] for c in columns}) is None
