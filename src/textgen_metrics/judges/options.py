"""Each judge class's keyword options, declared once, as a metric declares its ``Options``.

A judge class sets ``Options``: a frozen dataclass whose fields are its constructor's keyword
options (and those of the classes it passes them on to), each an
:func:`~textgen_metrics.metric.option` with its kind (how a text typed on the command line or in
a config becomes a value), its check and one line of help. That one declaration gives the
constructor's keyword checks (:func:`check_options`), the kinds of ``--judge-option`` and of a
gate's ``judge_options`` (:func:`option_kinds`), the options a misspelt name is shown
(:meth:`~textgen_metrics.run.Run.build`) and the boxes of a Space's judge picker
(:attr:`OpenAIOptions.space_fields`); tests hold each constructor's keywords and defaults equal
to it. The families share their fields through inheritance: the engine's (:class:`EngineOptions`)
under every backend, the OpenAI-compatible wire's under Azure, Gemini and Anthropic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..metric import option

__all__ = ["EngineOptions", "JudgeOptions", "OpenAIOptions", "AzureOptions", "AnthropicOptions", "HFOptions",
           "LlamaCppOptions", "CallableOptions", "SpaceField", "check_options", "option_kinds",
           "positive_int", "one_of"]


# -- the checks: each (name, value) -> value, a ValueError naming the option -------------------------
def positive_int(name: str, value: Any) -> Any:
    return _positive_int_or(name, value, "")


def _positive_int_or_none(name: str, value: Any) -> Any:
    return value if value is None else _positive_int_or(name, value, " or None")


def _positive_int_or(name: str, value: Any, alternative: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: {value!r} must be a positive integer{alternative}")
    return value


def _int_or_none(name: str, value: Any) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{name}: {value!r} must be an integer or None")
    return value


def _gpu_layers(name: str, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or value < -1:
        raise ValueError(f"{name}: {value!r} must be an integer >= -1 (-1: every layer)")
    return value


def _chat_format(name: str, value: Any) -> Any:
    if value is not None and (not isinstance(value, str) or not value):
        raise ValueError(f"{name}: a llama-cpp-python chat format name (e.g. 'gemma', 'chatml'), or None for the "
                         "GGUF file's own template")
    return value


def _chat_template(name: str, value: Any) -> Any:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{name}: give a Jinja chat template (a string), or None for the model's own")
    return value


def _seconds_or_none(name: str, value: Any) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
        raise ValueError(f"{name}: {value!r} must be a number of seconds > 0, or None")
    return value


def _non_negative(name: str, value: Any) -> Any:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name}: {value!r} must be a number >= 0")
    return value


def _flag(name: str, value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: {value!r} must be True or False")
    return value


def one_of(*choices: str) -> Callable[[str, Any], Any]:
    """The check of an option that takes one of ``choices``."""
    def check(name: str, value: Any) -> Any:
        if value not in choices:
            raise ValueError(f"{name}: {value!r} is not one of {list(choices)}")
        return value
    return check


def check_options(options: type[EngineOptions], given: Mapping[str, Any]) -> None:
    """Each declared option's check on its value in ``given`` (a constructor's arguments; names
    the declaration does not hold are the constructor's own business)."""
    for f in dataclasses.fields(options):
        check = f.metadata.get("check")
        if check is not None and f.name in given:
            check(f.name, given[f.name])


def option_kinds(options: type[EngineOptions]) -> dict[str, str]:
    """``{option: kind}`` (:data:`~textgen_metrics.metric.OPTION_KINDS`) of a declaration."""
    return {f.name: f.metadata["kind"] for f in dataclasses.fields(options)}


@dataclasses.dataclass(frozen=True)
class SpaceField:
    """One box of a Space's judge picker: the judge argument a visitor types there (``name``, an
    argument of :func:`~textgen_metrics.spaces.make_judge`) and how the box shows it, declared
    beside the options so that a change of the declaration is a change of every Space."""

    name: str
    label: str
    placeholder: str
    elem_id: str  # the box's HTML id, which the browser tests find it by
    secret: bool = False  # a password box: the page shows dots, never the text


# -- the declarations ----------------------------------------------------------------------------------
# how llama.cpp is asked for the schema: the server's dialect (a grammar), JSON mode without a schema, the prompt alone
LLAMA_RESPONSE_FORMATS = ("json_object_schema", "json_object", "text")
HF_DTYPES = ("auto", "float32", "bfloat16", "float16")  # the weights' dtypes of a local transformers model


def _concurrency(default: int) -> Any:
    return option(default, kind="int", check=positive_int, doc="requests in flight at once")


@dataclasses.dataclass(frozen=True)
class EngineOptions:
    """The engine's options, which every backend takes."""

    cache: Any = option(None, kind="json", doc="true (the user cache), a SQLite file, dir:<folder> (a folder many "
                                               "machines share) or a cache object: reruns send nothing")
    max_parse_attempts: int = option(3, kind="int", check=positive_int,
                                     doc="asks of a request whose answer does not parse or validate")
    prices: dict[str, tuple[float, float]] | None = option(
        None, kind="json", doc="{model: [input, output]} dollars per million tokens, for the cost estimate")
    requests_per_minute: float | None = option(None, kind="number", doc="a rate limit (a cluster's, summed)")
    tokens_per_minute: float | None = option(None, kind="number", doc="a rate limit (a cluster's, summed)")


@dataclasses.dataclass(frozen=True)
class JudgeOptions(EngineOptions):
    """The options of :class:`~textgen_metrics.judges.Judge`'s own constructor, for a judge class
    a user writes on it (the backends declare their own)."""

    concurrency: int = _concurrency(1)
    first_answer_timeout: float | None = option(None, kind="number", check=_seconds_or_none,
                                                doc="seconds to the first answer before the run stops")


@dataclasses.dataclass(frozen=True)
class OpenAIOptions(JudgeOptions):
    """An OpenAI-compatible chat-completions API's options (OpenAI, Gemini, vLLM, Ollama...)."""

    # the Space's judge picker, in the order shown: the server, the model (the constructor's first
    # argument, no option) and the key; which backends a typed model may name is spaces.make_judge's rule
    space_fields: ClassVar[tuple[SpaceField, ...]] = (
        SpaceField("base_url", "Server URL", "http://127.0.0.1:8000/v1", "judge-url"),
        SpaceField("model", "Model", "gpt-4o-mini", "judge-model"),
        SpaceField("api_key", "API key", "(none for a local server)", "judge-key", secret=True),
    )

    base_url: str | None = option(None, kind="str", doc="the server (else OPENAI_BASE_URL, else the provider's)")
    api_key: str | None = option(None, kind="str", doc="the key (else the provider's variable)")
    temperature: float | None = option(0.0, kind="number", doc="sampling temperature (None: not sent)")
    seed: int | None = option(None, kind="int", doc="the sampling seed sent to a server that takes one")
    max_tokens: int | None = option(None, kind="int", doc="the answer's token budget (None: sized per request)")
    timeout: float = option(60, kind="number", doc="seconds a request may take")
    max_retries: int = option(5, kind="int", doc="retries of a request that met a transient fault")
    concurrency: int = _concurrency(8)
    backoff: float = option(0.5, kind="number", doc="seconds of the first back-off (doubled each retry, jittered)")
    max_backoff: float = option(30.0, kind="number", doc="the longest back-off, seconds")
    response_format: str = option("auto", kind="str",
                                  doc="auto (step down the dialects on a refusal) or one dialect, fixed")
    batch: bool = option(False, kind="bool", doc="send through the provider's batch API (half the price)")
    batch_retry: str = option("batch", kind="str", doc="how failed batch requests are asked again: batch or live")
    batch_poll_interval: float = option(10.0, kind="number", doc="seconds between a batch's first polls")
    batch_max_poll_interval: float = option(300.0, kind="number", doc="the longest wait between polls, seconds")
    batch_window: float = option(0.5, kind="number", doc="seconds without a new request before a batch is sent")
    url_policy: Any = option(None, kind="json", doc="a judges.http.URLPolicy: which hosts a Space may reach")
    allowance: Any = option(None, kind="json", doc="a Space visitor's allowance that books requests and tokens")


@dataclasses.dataclass(frozen=True)
class AzureOptions(OpenAIOptions):
    """An Azure OpenAI deployment's options: the OpenAI wire's and Azure's own."""

    endpoint: str | None = option(None, kind="str", doc="https://<resource>.openai.azure.com (else "
                                                        "AZURE_OPENAI_ENDPOINT)")
    api_version: str | None = option(None, kind="str", doc="the API version (else OPENAI_API_VERSION, else "
                                                           "2024-10-21)")
    azure_ad_token: str | None = option(None, kind="str", doc="a Microsoft Entra token (else "
                                                              "AZURE_OPENAI_AD_TOKEN)")


@dataclasses.dataclass(frozen=True)
class AnthropicOptions(OpenAIOptions):
    """Anthropic's Messages API's options: the OpenAI wire's (the engine is shared) and its own."""

    prompt_cache: bool = option(True, kind="bool", check=_flag,
                                doc="mark the shared prefix for Anthropic's prompt cache")


@dataclasses.dataclass(frozen=True)
class HFOptions(EngineOptions):
    """A local transformers model's options."""

    device: Any = option(None, kind="json", doc="cpu, cuda, cuda:1, an index... (None: the first GPU, else CPU)")
    batch_size: int = option(8, kind="int", check=positive_int, doc="requests generated together")
    max_new_tokens: int = option(512, kind="int", check=positive_int, doc="the answer's token budget")
    temperature: float = option(0.0, kind="number", check=_non_negative, doc="0: greedy decoding")
    chat_template: str | None = option(None, kind="str", check=_chat_template,
                                       doc="a Jinja chat template (None: the model's own)")
    structured: str = option("auto", kind="str", check=one_of("auto", "xgrammar", "none"),
                             doc="constrained decoding: auto (xgrammar where installed), xgrammar or none")
    share_prefix: bool = option(True, kind="bool", doc="compute once the prefix a batch's rows share")
    dtype: str = option("auto", kind="str", check=one_of(*HF_DTYPES),
                        doc="the weights' dtype: auto (the model's own), float32, bfloat16, float16")


@dataclasses.dataclass(frozen=True)
class LlamaCppOptions(EngineOptions):
    """A GGUF model's options in process through llama.cpp (the packaged tiny models' too)."""

    n_ctx: int = option(4096, kind="int", check=positive_int, doc="the context window, tokens")
    chat_format: str | None = option(None, kind="str", check=_chat_format,
                                     doc="a llama-cpp-python chat format (None: the file's)")
    temperature: float = option(0.0, kind="number", check=_non_negative, doc="0: greedy decoding")
    seed: int | None = option(None, kind="int", check=_int_or_none, doc="the sampling seed")
    max_tokens: int | None = option(None, kind="int", check=_positive_int_or_none,
                                    doc="the answer's token budget (None: sized per request)")
    response_format: str = option("json_object_schema", kind="str", check=one_of(*LLAMA_RESPONSE_FORMATS),
                                  doc="how answers are asked for: " + ", ".join(LLAMA_RESPONSE_FORMATS))
    n_threads: int | None = option(None, kind="int", check=_positive_int_or_none,
                                   doc="threads of generation (None: llama.cpp's)")
    n_threads_batch: int | None = option(None, kind="int", check=_positive_int_or_none,
                                         doc="threads of prompt processing (None: llama.cpp's)")
    n_gpu_layers: int = option(0, kind="int", check=_gpu_layers, doc="layers on the GPU (-1: every layer)")
    concurrency: int = _concurrency(8)


@dataclasses.dataclass(frozen=True)
class CallableOptions(EngineOptions):
    """A function's options (messages -> str, sync or async)."""

    concurrency: int = _concurrency(1)
    model: str | None = option(None, kind="str", doc="the model's name in results (else the function's)")
    max_tokens: int | None = option(None, kind="int", doc="the budget the function answers with when given none")
