"""The public API: what ``textgen_metrics`` exports, where each name comes from, and that a
metric added to the registry reaches the package and every front end with no other code."""

import ast
import inspect
import subprocess
import sys

import pytest

import textgen_metrics
from conftest import ROOT
from textgen_metrics import registry

JUDGED = [name for name, metric in registry.METRICS.items() if metric.judge]  # the LLM-guided metrics


def _type_checking_block() -> list[ast.stmt]:
    """The statements under ``if TYPE_CHECKING:`` in ``textgen_metrics/__init__.py``."""
    tree = ast.parse((ROOT / "src" / "textgen_metrics" / "__init__.py").read_text(encoding="utf-8"))
    [block] = [n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING"]
    return block.body


def test_all_is_the_registry_and_the_api_and_every_name_resolves():
    public = set(textgen_metrics.__all__) - {"__version__"}
    assert set(registry.METRICS) <= public
    assert {"JudgeError", "JudgeFatalError", "Usage", "RougeScorer", "compare", "get_judge"} <= public
    for name in public:
        value = getattr(textgen_metrics, name)
        assert callable(value), name
    for name in registry.METRICS:  # the function of the registry's Metric, nothing else
        assert getattr(textgen_metrics, name) is registry.METRICS[name].function()


def test_dir_lists_the_public_api():
    listed = set(dir(textgen_metrics))
    assert set(textgen_metrics.__all__) <= listed
    assert not {"importlib", "TYPE_CHECKING", "Any", "annotations"} & listed


def test_the_public_names_are_the_metrics_and_the_api_module_with_no_mirror():
    """Each name is written once: a metric by its Metric class, the rest as an import of
    ``textgen_metrics.api``; type checkers read that module through one star import."""
    from textgen_metrics import api

    public = set(textgen_metrics.__all__) - {"__version__"}
    assert public == set(registry.METRICS) | set(api._NAMES)
    assert not set(registry.METRICS) & set(api._NAMES)
    block = _type_checking_block()
    assert all(isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["*"] for node in block)
    assert {node.module for node in block} == {"api"}


def test_a_metric_function_is_its_metric_s_columns_and_options():
    for name, metric in registry.METRICS.items():
        params = inspect.signature(getattr(textgen_metrics, name)).parameters
        assert list(params)[:len(metric.columns)] == list(metric.columns), name
        # the columns by position or name, keyword-only where the metric says so (the LLM-guided ones)
        kind = inspect.Parameter.KEYWORD_ONLY if metric.keyword_columns else inspect.Parameter.POSITIONAL_OR_KEYWORD
        assert all(params[c].kind is kind for c in metric.columns), name
        assert metric.keyword_columns == bool(metric.judge), name
        options = {f.name for f in metric.option_fields()}
        assert set(params) == {*metric.columns, *metric.optional_columns} | options, name
        for f in metric.option_fields():
            assert params[f.name].default == f.default, (name, f.name)


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'rougex'"):
        textgen_metrics.rougex  # noqa: B018
    with pytest.raises(AttributeError):
        textgen_metrics._private  # noqa: B018


def test_llm_functions_are_keyword_only_with_their_own_docstrings():
    openings = set()
    for name in JUDGED:
        fn = getattr(textgen_metrics, name)
        params = inspect.signature(fn).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), name
        assert fn.__doc__ and "judge_options:" in fn.__doc__, name  # the shared arguments documented
        openings.add(fn.__doc__.strip().splitlines()[0])
    assert len(openings) == len(JUDGED) >= 12  # each its own description, not one shared text


def test_importing_the_package_imports_no_metric():
    code = ("import sys, textgen_metrics; "
            "print(sorted(m for m in sys.modules if m.startswith('textgen_metrics.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['textgen_metrics._version']"  # the ground floor: the version, nothing else


@pytest.fixture
def trial_metric(monkeypatch):
    """A metric that exists only as one Metric class (defined here): the share of predictions
    equal to a reference, times ``scale``."""
    import dataclasses

    from textgen_metrics.metric import MeanMetric, Options, metric_classes, option

    @dataclasses.dataclass(frozen=True)
    class TrialOptions(Options):
        use_aggregator: bool = option(True, front_end=True)
        scale: float = option(1.0, doc="a factor")

    class Trial(MeanMetric):
        """The share of predictions equal to a reference, times ``scale``."""

        name = "trial"
        Options = TrialOptions

        def example_statistics(self, inputs):
            return {"trial": [self.options.scale * float(p in ([r] if isinstance(r, str) else r))
                              for p, r in zip(inputs["predictions"], inputs["references"], strict=True)]}

    monkeypatch.delitem(vars(textgen_metrics), "trial", raising=False)
    yield Trial
    metric_classes().pop("trial", None)
    vars(textgen_metrics).pop("trial", None)


def test_one_metric_class_reaches_the_package_and_every_front_end(trial_metric, tmp_path, capsys):
    preds, refs = ["a b", "c d", "e"], ["a b", "x", ["y", "e"]]
    assert "trial" in textgen_metrics.__all__ and "trial" in dir(textgen_metrics)
    assert textgen_metrics.trial(predictions=preds, references=refs)["trial"] == pytest.approx(2 / 3)
    # the command line: scoring a file, with an option parsed by the kind of its default
    from textgen_metrics import cli

    data = tmp_path / "data.jsonl"
    data.write_text("".join(f'{{"prediction": "{p}", "reference": {refs[i]!r}}}\n'.replace("'", '"')
                            for i, p in enumerate(preds)))
    assert cli.main(["score", str(data), "--metrics", "trial", "--option", "trial.scale=2"]) == 0
    out = capsys.readouterr().out
    assert "trial" in out and "1.333" in out
    # the Trainer hook (built, options checked against the entry) and the playground Space
    from textgen_metrics import spaces
    from textgen_metrics.trainer import compute_metrics

    assert callable(compute_metrics(None, ["trial"], options={"trial": {"scale": 2.0}}))
    with pytest.raises(ValueError, match="trial has no option 'scal'"):
        compute_metrics(None, ["trial"], options={"trial": {"scal": 2.0}})
    summary, _, _, report = spaces.run_playground(str(data), ["trial"], None, '{"trial": {"scale": 3}}')
    assert report["metrics"]["trial"]["aggregate"]["trial"] == pytest.approx(2.0)
