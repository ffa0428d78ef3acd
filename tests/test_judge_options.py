"""Each judge class declares its keyword options once (``Options``), as a metric does: the
declaration is held equal to the constructors' keywords and defaults, types their text values,
checks their values in the constructor, names the options when one is misspelt and gives a
Space's judge picker its boxes; a judge is made in one place (``judges.resolve_judge``)."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from textgen_metrics import judges
from textgen_metrics.errors import OptionError
from textgen_metrics.judges import CallableJudge, Judge, OpenAIJudge, judge_class, judge_option_kinds, resolve_judge
from textgen_metrics.judges.options import (
    HFOptions,
    JudgeOptions,
    LlamaCppOptions,
    OpenAIOptions,
    SpaceField,
    check_options,
    option_kinds,
)
from textgen_metrics.run import CLI_WORDS, SPACE_WORDS, Run

BACKENDS = [*judges.BACKENDS, "callable"]
_KINDS = {"bool": "bool", "int": "int", "float": "number", "str": "str"}


def _accepted(cls: type[Judge]) -> dict[str, inspect.Parameter]:
    """The keyword parameters a judge class takes: its constructor's after the model, and those
    of the class its ``**options`` go on to."""
    found: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = list(inspect.signature(init).parameters.values())[2:]  # (self, the model)
        for p in params:
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                found.setdefault(p.name, p)
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            return found
    return found


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_backends_declaration_is_its_constructors_keywords(backend: str) -> None:
    cls = judge_class(backend)
    assert cls is not None and cls.backend in (backend, "gguf" if backend == "tiny" else backend)
    fields = {f.name: f for f in dataclasses.fields(cls.Options)}
    accepted = _accepted(cls)
    assert set(fields) == set(accepted), backend
    for name, param in accepted.items():
        assert fields[name].default == param.default, (backend, name)
        annotation = str(param.annotation).replace(" | None", "")
        if annotation in _KINDS:  # a flag, a count, a number, a text: typed as its annotation says
            assert fields[name].metadata["kind"] == _KINDS[annotation], (backend, name)


def test_the_base_judges_declaration_is_its_constructors() -> None:
    params = list(inspect.signature(Judge.__init__).parameters.values())[2:]
    assert {p.name: p.default for p in params} == {f.name: f.default for f in dataclasses.fields(JudgeOptions)}


def test_kinds_come_from_the_declaration() -> None:
    openai = judge_option_kinds("openai:m")
    assert openai["batch"] == "bool" and openai["concurrency"] == "int" and openai["timeout"] == "number"
    assert openai["cache"] == "json" and judge_option_kinds("azure:d")["endpoint"] == "str"
    hf = judge_option_kinds("hf:some/model")
    assert hf["batch_size"] == "int" and "concurrency" not in hf  # HFJudge takes batch_size, never concurrency
    assert judge_option_kinds("tiny:smollm2") == judge_option_kinds("gguf:x.gguf")
    assert judge_option_kinds("nope:m") == {} and judge_class("nope") is None


def test_the_constructors_checks_are_the_declarations() -> None:
    with pytest.raises(ValueError, match=r"^concurrency: 0 must be a positive integer"):
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", api_key="k", concurrency=0)
    with pytest.raises(ValueError, match=r"^max_parse_attempts: 0 must be a positive integer"):
        CallableJudge(lambda messages: "{}", max_parse_attempts=0)
    with pytest.raises(ValueError, match=r"^first_answer_timeout: -1 must be a number of seconds > 0"):
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", api_key="k", first_answer_timeout=-1)
    with pytest.raises(ValueError, match=r"^prompt_cache: 'yes' must be True or False"):
        judges.AnthropicJudge("m", base_url="http://127.0.0.1:1", api_key="k", prompt_cache="yes")
    with pytest.raises(ValueError, match=r"^structured: 'grammar' is not one of \['auto', 'xgrammar', 'none'\]"):
        check_options(HFOptions, {"structured": "grammar", "batch_size": 2})
    with pytest.raises(ValueError, match=r"^dtype: 'int8' is not one of \['auto', 'float32', 'bfloat16', 'float16'\]"):
        judges.HFJudge("some/model", dtype="int8")  # before the model is looked for
    with pytest.raises(ValueError, match=r"^chat_template: give a Jinja chat template"):
        judges.HFJudge("some/model", chat_template=" ")
    with pytest.raises(ValueError, match=r"^temperature: -0.5 must be a number >= 0"):
        check_options(LlamaCppOptions, {"temperature": -0.5})
    check_options(HFOptions, {"batch_size": 2, "not_declared": object()})  # the constructor's own business


def test_a_misspelt_judge_option_names_the_backends_options() -> None:
    with pytest.raises(OptionError, match=r"^--judge option concurency: the openai backend has no option "
                                          r"'concurency'; its options: .*\bconcurrency\b") as caught:
        Run.build(["faithfulness"], judge="openai:m", judge_options={"concurency": "4"}, words=CLI_WORDS, texts=True)
    assert caught.value.option == "concurency"
    with pytest.raises(OptionError, match=r"^Judge option device: the gguf backend has no option 'device'"):
        Run.build(["faithfulness"], judge="gguf:x.gguf", judge_options={"device": "cuda"}, words=SPACE_WORDS)


def test_a_judge_is_made_in_one_place() -> None:
    made = resolve_judge("openai:m", {"base_url": "http://127.0.0.1:1/v1", "api_key": "k", "concurrency": 3})
    assert isinstance(made, OpenAIJudge) and made.concurrency == 3
    assert resolve_judge(made, {"concurrency": 5}) is made  # an object has its options
    assert resolve_judge(None) is None
    fn: Any = lambda messages: "{}"  # noqa: E731
    assert isinstance(resolve_judge(fn, {"concurrency": 2}), CallableJudge)


def test_options_prints_a_backends_declaration(capsys: pytest.CaptureFixture[str]) -> None:
    from textgen_metrics.cli import main

    assert main(["options", "--judge", "hf", "--judge", "anthropic"]) == 0
    out = capsys.readouterr().out
    assert "judge hf (--judge-option NAME=VALUE):\n  cache (json, default null):" in out
    assert "  batch_size (int, default 8): requests generated together" in out
    assert "prompt_cache (bool, default true)" in out and "\nbleu\n" not in out  # the judges only
    with pytest.raises(SystemExit):
        main(["options", "--judge", "nope"])


def test_the_runs_flags_are_declared_once_for_every_subcommand() -> None:
    """score, compare, meta-eval and audit take the Run's flags alike (metavar, action, help but
    for what the judge and the split are there); --metrics is each subcommand's own."""
    from textgen_metrics.cli import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[union-attr]
    flags = ("--column", "--prediction-column", "--reference-column", "--option", "--judge-url", "--judge-option")
    seen = {}
    for name in ("score", "compare", "meta-eval", "audit"):
        actions = {s: a for a in subparsers[name]._actions for s in a.option_strings}
        seen[name] = [(actions[f].metavar, type(actions[f]).__name__, actions[f].help) for f in flags]
        assert "--split" in actions and "--judge" in actions and "--metrics" in actions, name
    assert seen["score"] == seen["compare"] == seen["meta-eval"] == seen["audit"]
    assert seen["audit"][flags.index("--option")][0] == "METRIC.NAME=VALUE"  # audit's was METRIC.KEY


@pytest.mark.parametrize("given, message", [
    ({"n_ctx": 0}, r"^n_ctx: 0 must be a positive integer$"),
    ({"max_tokens": 0}, r"^max_tokens: 0 must be a positive integer or None$"),
    ({"n_gpu_layers": -2}, r"^n_gpu_layers: -2 must be an integer >= -1"),
    ({"seed": 1.5}, r"^seed: 1.5 must be an integer or None$"),
    ({"response_format": "xml"}, r"^response_format: 'xml' is not one of \['json_object_schema', 'json_object', "
                                 r"'text'\]$"),
    ({"chat_format": ""}, r"^chat_format: a llama-cpp-python chat format name"),
])
def test_a_gguf_judges_checks_are_its_declarations(tmp_path, given: dict[str, Any], message: str) -> None:
    """LlamaCppJudge checks each option by its declaration before it loads anything."""
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(ValueError, match=message):
        judges.LlamaCppJudge(str(model), **given)


class _StandInGradio:
    """The three Gradio blocks the judge picker writes (Gradio's names), recording each text box's
    arguments."""

    def __init__(self) -> None:
        self.boxes: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def Accordion(self, label: str, open: bool) -> Iterator[None]:
        yield

    @contextlib.contextmanager
    def Row(self) -> Iterator[None]:
        yield

    def Textbox(self, **given: Any) -> dict[str, Any]:
        self.boxes.append(given)
        return given


def _picker_boxes() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from textgen_metrics.spaces import _judge_picker

    gr = _StandInGradio()
    return _judge_picker(gr), gr.boxes


def test_the_spaces_judge_picker_is_the_declarations_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    from textgen_metrics.spaces import make_judge

    picker, boxes = _picker_boxes()
    assert list(picker) == ["base_url", "model", "api_key"]  # make_judge's arguments, in the picker's order
    assert [(b["label"], b["elem_id"], b["type"]) for b in boxes] == [
        ("Server URL", "judge-url", "text"), ("Model", "judge-model", "text"), ("API key", "judge-key", "password")]
    assert set(picker) == set(inspect.signature(make_judge).parameters) - {"session"}
    kinds = option_kinds(OpenAIOptions)
    assert all(kinds[f.name] == "str" for f in OpenAIOptions.space_fields if f.name != "model")  # typed texts
    # a stand-in declaration: a label, a placeholder, a box and a password changed there change the picker
    changed = (dataclasses.replace(OpenAIOptions.space_fields[0], label="Endpoint", placeholder="https://host/v1"),
               dataclasses.replace(OpenAIOptions.space_fields[2], secret=False),
               SpaceField("model", "Deployment", "my-deployment", "judge-deployment"))
    monkeypatch.setattr(OpenAIOptions, "space_fields", changed)
    picker, boxes = _picker_boxes()
    assert list(picker) == ["base_url", "api_key", "model"]
    assert [(b["label"], b["placeholder"], b["elem_id"], b["type"]) for b in boxes] == [
        ("Endpoint", "https://host/v1", "judge-url", "text"),
        ("API key", "(none for a local server)", "judge-key", "text"),
        ("Deployment", "my-deployment", "judge-deployment", "text")]
