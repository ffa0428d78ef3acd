"""A judge over a local transformers causal language model.

The model loads only from a local folder, a model id already in the Hugging Face cache
(``local_files_only``), or a GGUF file (``HFJudge("models/smollm2.Q4_1.gguf")``, or a folder
holding one GGUF file and no transformers model): transformers reads it with ``gguf_file=``
(the ``gguf`` package), dequantized, with the tokenizer and chat template stored in the file.
One that is not on disk is a clear error at construction, and one that cannot be loaded stops
the run at once (``JudgeFatalError``), never a download.

How a request is answered:

- The messages go through the model's chat template (``chat_template=`` sets one). A GGUF file
  of a Gemma model without a template (the pretrained Gemma 3 270M ships none) gets Gemma's own
  (``<start_of_turn>user ... <end_of_turn>``, no system role); any other model without a
  template, the plain "role: content" layout. A template without a system role (Gemma's raises
  "System role not supported"; some drop the system message silently) is found once, by
  rendering a probe conversation, and the system text is then merged into the first user
  message. A conversation the template still cannot render fails that request only, before any
  batching.
- The token that ends a turn in the template (``<end_of_turn>``, ``<|im_end|>``, ``<|eot_id|>``:
  the special token the template writes right after an assistant message) ends an answer, as the
  end-of-sequence tokens do, also when the model's files name only ``<eos>``.
- Requests arriving together are gathered into batches of up to ``batch_size``, left-padded, and
  generated with ``model.generate`` (greedy; sampling at ``temperature`` when it is above 0).
  This replaces the text-generation pipeline, whose text-only output cannot tell whether an
  answer ended or was cut off.
- Each row has its own token budget (a stopping criterion ends each row at its budget, so one
  batch can mix budgets). An answer with an end-of-sequence token (the tokenizer's or any of the
  model's generation config, e.g. Gemma's ``<end_of_turn>``) within its budget is
  ``finish_reason="stop"``; one without is ``"length"``, and the engine never parses it: it asks
  again once with a larger budget, then fails the request with "cut off at N tokens".
  ``completion_tokens`` counts the generated tokens up to and including the end-of-sequence
  token (as vLLM counts), padding excluded.
- The budget of a request is its ``max_tokens`` when set, else ``max_new_tokens`` when the
  number of items is unknown (extraction), else
  ``max(max_new_tokens, budget_base + budget_per_item * items)`` with ``items`` the number of
  items the answer must hold: 128 tokens for the JSON object around the list and 64 per verdict
  (``"12": {"reason": "...", "verdict": "yes"}`` is about 12 tokens of structure, and a
  one-sentence reason 20 to 40 tokens in the tokenizers of Llama, Qwen and Gemma; small models
  run longer). A re-ask after a cut doubles that budget. A budget never runs past the model's
  context (``max_position_embeddings``): a prompt that fills it fails that request.
- Every generation run for a request counts as one request sent (``usage.requests``): a batch
  that runs out of memory is run again row by row (so a batch too large for the memory fails
  only the rows that do not fit alone), and each of those runs counts too. Any other exception of
  a generation is a bug (of this module, transformers or torch), not a failure of the requests:
  it raises with its traceback and stops the run.
- ``structured="auto"`` (the default, with the ``hf`` extra's xgrammar installed): each row of a
  batch may write only what its request's JSON schema allows (``grammar.GrammarMasks``), so an
  answer that ends is complete and well formed: with the verdicts keyed by item number, no
  answer is asked again for its structure. ``judge_mode`` is ``"xgrammar"`` (``"text"`` with
  ``structured="none"``). The decision and its figures: docs/real_judges.md.
- Rows of a batch that start alike (every request of a metric starts with the same system text,
  task and worked example) have that prefix computed once, not once per row
  (``judges/prefix.py``; ``share_prefix=False`` turns it off): the answers are the tokens the
  plain left-padded batch writes, and the prefill, most of a constrained batch's cost on a CPU,
  shrinks by the shared share. A model with sliding-window layers shares only where the whole row
  fits in its window.
- ``dtype`` sets the weights' dtype: ``"auto"`` (the model's own; a GGUF file dequantizes to
  float32), ``"bfloat16"`` (half the memory; faster on CPUs with AVX-512 BF16 or AMX and on
  GPUs), ``"float16"`` or ``"float32"``. Other weights write other answers, so a dtype other than
  ``"auto"`` is part of the cache key.
- A request that asks for log-probabilities (G-Eval's weighting) gets the top alternatives of
  each token of the answer from the model's distribution before any grammar mask, as llama.cpp
  and OpenAI report them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Union

from . import prefix as _prefix
from .base import Completion, Judge, JudgeError, JudgeFatalError, JudgeRequest, JudgeResult, Message
from .options import HFOptions, check_options

if TYPE_CHECKING:  # imported at run time only when a model is loaded
    import torch
    from transformers import PreTrainedTokenizerBase

__all__ = ["HFJudge", "LocalModel", "resolve_local_model", "merge_system", "GEMMA_TEMPLATE"]

Device = Union[int, str, "torch.device", None]

_PROBE_SYSTEM = "textgen-metrics probe: system text 7f3a"
_PROBE_USER = "textgen-metrics probe: user text"


# Gemma's chat template (Gemma 1 and 2, and Gemma 3's without images): no system role
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)
_TEMPLATES = {"gemma": GEMMA_TEMPLATE}  # a model type's prefix -> the template its GGUF files may lack


@dataclasses.dataclass(frozen=True)
class LocalModel:
    """Where a local model lies: a transformers folder, or a GGUF file in a folder."""

    folder: str
    gguf_file: str | None = None

    @property
    def options(self) -> dict[str, Any]:
        """The ``from_pretrained`` keywords that read it."""
        return {"gguf_file": self.gguf_file} if self.gguf_file else {}


def resolve_local_model(model: str) -> LocalModel:
    """The local files of ``model``: a GGUF file, a folder (a transformers model, or one GGUF
    file), or a hub id already downloaded."""
    path = os.path.expanduser(model)
    if os.path.isfile(path):
        if not path.lower().endswith(".gguf"):
            raise ValueError(f"model: {model!r} is a file but not a GGUF file; pass a GGUF file or a model folder")
        return LocalModel(os.path.dirname(os.path.abspath(path)), os.path.basename(path))
    if os.path.isdir(path):
        ggufs = sorted(f for f in os.listdir(path) if f.lower().endswith(".gguf"))
        if ggufs and not os.path.exists(os.path.join(path, "config.json")):
            if len(ggufs) > 1:
                raise ValueError(f"model: {model!r} holds {len(ggufs)} GGUF files ({', '.join(ggufs)}); name one, "
                                 f"e.g. {os.path.join(model, ggufs[0])!r}")
            return LocalModel(path, ggufs[0])
        return LocalModel(path)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # not "not in the cache": the package that reads the cache is missing
        raise ValueError(f"model: {model!r} is neither a local folder nor a GGUF file, and a model id is looked up "
                         f"in the Hugging Face cache by huggingface_hub, which cannot be imported ({e}): pip install "
                         "'textgen-metrics[hf]'") from None
    try:
        return LocalModel(snapshot_download(model, local_files_only=True))
    except (OSError, ValueError):  # not in the cache (LocalEntryNotFoundError), not a model id (HFValidationError)
        raise ValueError(
            f"model: {model!r} is neither a local folder or GGUF file nor a model in the Hugging Face cache; "
            "nothing is downloaded at run time: download it beforehand or pass a folder or a GGUF file"
        ) from None


def merge_system(messages: Sequence[Message]) -> list[Message]:
    """The conversation with its system messages merged into the first user message (for chat
    templates without a system role): the system text, a blank line, then the user's text."""
    system = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for m in rest:
        if m.get("role") == "user":
            m["content"] = f"{system}\n\n{m.get('content', '')}"
            return rest
    return [{"role": "user", "content": system}] + rest


@dataclasses.dataclass
class _Loaded:
    """The model, its tokenizer and what the judge learnt about them at load time."""

    model: Any  # a transformers PreTrainedModel with generate (its annotations confuse type checkers)
    tokenizer: PreTrainedTokenizerBase
    device: torch.device
    eos_ids: frozenset[int]
    pad_id: int
    context: int | None  # the model's maximal sequence length, when its config says
    system_role: bool  # the chat template renders a system message
    vocab_size: int = 0  # the width of the model's logits
    window: int | None = None  # the attention window of a model with sliding-window layers
    grammars: Any = None  # grammar.Grammars when decoding is constrained to the schema


@dataclasses.dataclass
class _Job:
    """One prompt waiting for a batch."""

    ids: list[int]
    budget: int
    tally: JudgeResult
    future: asyncio.Future[Completion]
    schema: dict[str, Any] | None = None  # what the answer must fit (constrained decoding)
    top_logprobs: int | None = None  # record this many alternatives per token
    frequency_penalty: float | None = None  # lower the tokens this row has written (a looping answer's re-ask)


_GGUF_PATCH = threading.Lock()


@contextlib.contextmanager
def _one_gguf_reader() -> Iterator[None]:
    """While a GGUF model loads, one ``gguf.GGUFReader`` per file. transformers reads the file's
    metadata anew for the tokenizer, the config and the weights (``load_gguf_checkpoint``, three
    times), and gguf-py parses it field by field in Python: for Gemma 3's 262,144-token vocabulary
    10 s of CPU each time, 31 of the 51 s that loading Gemma 3 270M took (measured on the 2-core
    development machine; 20 s with one reader). The reader only reads (a memory map of the file),
    so the three reads share it. A lock keeps two loads from swapping the class under each other.

    The shared reader also parses faster: its file is a plain array over the same memory map
    (``np.asarray`` of the ``np.memmap``, no copy) rather than the memmap itself, so the millions
    of small slices its parsing takes skip ``np.memmap``'s Python-level ``__getitem__`` and
    ``__array_finalize__``. The fields and tensors are the same arrays (tests/test_real_judges.py);
    the metadata's parse, 10.5 s to 3.3 s of CPU for Gemma 3 (2.0 s to 0.7 s for SmolLM2). Only
    for reading: a writable map (``"r+"``) stays a memmap, whose ``flush`` writes it.

    And one ``gguf.get_tensor_name_map`` per architecture and depth: transformers asks for it
    again at every module of the model as it walks them (``get_gguf_hf_weights_map``: 397 times
    for SmolLM2, each building the whole table of tensor names anew), and only reads it."""
    try:
        import gguf as _gguf
    except ImportError:  # not a GGUF model's environment: transformers says what is missing
        yield
        return
    gguf: Any = _gguf
    with _GGUF_PATCH:
        real = gguf.GGUFReader
        readers: dict[tuple[str, Any], Any] = {}

        class PlainReader(real):  # type: ignore[misc,valid-type]
            @property
            def data(self) -> Any:
                return self._plain

            @data.setter
            def data(self, value: Any) -> None:
                import numpy as np

                self._plain = np.asarray(value)  # a view: its base keeps the memory map open

        def reader(path: Any, mode: Any = "r") -> Any:
            key = (os.fspath(path), mode)
            if key not in readers:
                readers[key] = (PlainReader if mode == "r" else real)(path, mode)
            return readers[key]

        real_names = gguf.get_tensor_name_map
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, functools.cache(real_names)  # for this load only
        try:
            yield
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = real, real_names


def _torch_device(device: Device) -> torch.device:
    """The device as the text-generation pipeline chose it: None is the first accelerator when
    there is one, a negative index the CPU."""
    import torch

    if isinstance(device, torch.device):
        return device
    if isinstance(device, str):
        return torch.device(device)
    if device is None:
        device = 0
    if device < 0 or not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device(f"cuda:{device}")


def _dtype_option(dtype: str = "auto") -> dict[str, Any]:
    """The weights' dtype (``"auto"``: the model's own; a GGUF file dequantizes to float32) under
    the keyword this transformers version reads."""
    import torch
    import transformers
    from packaging.version import Version

    key = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
    return {key: "auto" if dtype == "auto" else getattr(torch, dtype)}


def _ids(value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, int):
        return {value}
    return {int(v) for v in value}


_PROBE_ANSWER = "textgen-metrics probe answer 5b1c"


def _turn_end(tokenizer: PreTrainedTokenizerBase) -> set[int]:
    """The special token a chat template writes right after an assistant's message (the end of
    a turn: ``<end_of_turn>``, ``<|im_end|>``, ``<|eot_id|>``), as a set of one id; empty when
    the template writes none."""
    if not getattr(tokenizer, "chat_template", None):
        return set()
    probe = [{"role": "user", "content": _PROBE_USER}, {"role": "assistant", "content": _PROBE_ANSWER}]
    try:
        text = tokenizer.apply_chat_template(probe, tokenize=False)
    except Exception:  # the template is the model's code (Jinja): whatever it raises, it has no end marker to learn
        return set()
    if not isinstance(text, str) or _PROBE_ANSWER not in text:
        return set()
    after = text.split(_PROBE_ANSWER, 1)[1]
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    special |= {int(i) for i in getattr(tokenizer, "added_tokens_decoder", {}) or {}}
    ids = tokenizer(after, add_special_tokens=False)["input_ids"]
    for i in ids[:4]:  # the end marker comes first, before any newline the template adds
        if int(i) in special:
            return {int(i)}
    return set()


@functools.cache
def _row_budgets_class() -> type:
    """A stopping criterion that ends each row of a batch at its own token budget."""
    import torch
    from transformers import StoppingCriteria

    class RowBudgets(StoppingCriteria):
        def __init__(self, start: int, budgets: torch.Tensor) -> None:
            self.start = start
            self.budgets = budgets

        def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
            done = (input_ids.shape[1] - self.start) >= self.budgets
            return done.to(device=input_ids.device, dtype=torch.bool)  # type: ignore[return-value]

    return RowBudgets


class HFJudge(Judge):
    """A local transformers model as the judge (see the module docstring for what it does)."""

    backend = "hf"
    Options = HFOptions
    budget_base = 128  # tokens for the answer's JSON object around its list
    budget_per_item = 64  # tokens per item asked for (index, a one-sentence reason, a verdict)
    _transient = ("_loaded", "_pipe")  # a pickle (a cluster's worker) loads the model again

    def __init__(self, model: str, device: Device = None, batch_size: int = 8, max_new_tokens: int = 512,
                 cache: Any = None, max_parse_attempts: int = 3,
                 prices: dict[str, tuple[float, float]] | None = None, temperature: float = 0.0,
                 chat_template: str | None = None, structured: str = "auto", share_prefix: bool = True,
                 dtype: str = "auto", requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None) -> None:
        check_options(HFOptions, {"batch_size": batch_size, "max_new_tokens": max_new_tokens,
                                  "temperature": temperature, "structured": structured, "dtype": dtype,
                                  "chat_template": chat_template})
        super().__init__(model, concurrency=batch_size, cache=cache,
                         max_parse_attempts=max_parse_attempts, prices=prices,
                         requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute)
        from .grammar import available

        if structured == "xgrammar" and not available():
            raise ValueError("structured: 'xgrammar' needs the xgrammar package: pip install "
                             "'textgen-metrics[hf]' (or structured='none')")
        self.structured = "xgrammar" if structured == "xgrammar" or (structured == "auto" and available()) else "none"
        self.mode = "xgrammar" if self.structured == "xgrammar" else "text"
        self.files = resolve_local_model(model)
        self.path = self.files.folder
        self.chat_template = chat_template
        self.device = device
        self.batch_size = batch_size
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.share_prefix = bool(share_prefix)
        self.dtype = dtype
        self._loaded: _Loaded | None = None
        self._pipe: Any = None
        self._load_lock = threading.Lock()
        self._gen_lock = threading.Lock()

    def settings(self, request: JudgeRequest) -> dict[str, Any]:
        s = super().settings(request)
        s.update(max_new_tokens=self.max_new_tokens, temperature=self.temperature, structured=self.structured)
        if self.chat_template is not None:
            s["chat_template"] = self.chat_template
        if self.dtype != "auto":  # other weights, other answers (left out at "auto": earlier keys hold)
            s["dtype"] = self.dtype
        return s

    # -- budgets ---------------------------------------------------------------------------
    def default_budget(self) -> int | None:
        return self.max_new_tokens

    def budget(self, request: JudgeRequest) -> int:
        """The answer budget of ``request`` in tokens (before the model's context caps it)."""
        if request.max_tokens:
            return int(request.max_tokens)
        if request.items is None:  # an answer of unknown length (a list to extract)
            return self.max_new_tokens
        return max(self.max_new_tokens, self.budget_base + self.budget_per_item * request.items)

    def grow_budget(self, request: JudgeRequest, completion: Completion) -> int:
        """Twice the budget that was cut (at least 256 tokens)."""
        return max(2 * self.budget(request), 256)

    # -- loading ---------------------------------------------------------------------------
    def _load(self) -> _Loaded:
        with self._load_lock:
            if self._loaded is None:
                try:
                    self._loaded = self._load_now()
                except Exception as e:  # the same failure would repeat for every request
                    raise JudgeFatalError(f"cannot load the model {self.model!r} from {self.path}: "
                                          f"{type(e).__name__}: {e}") from e
            return self._loaded

    def _load_now(self) -> _Loaded:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        where = self.files.options
        with _one_gguf_reader():
            tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True, **where)
            model: Any = AutoModelForCausalLM.from_pretrained(self.path, local_files_only=True, **where,
                                                              **_dtype_option(self.dtype))
        device = _torch_device(self.device)
        model = model.to(device).eval()
        if self.chat_template is not None:
            tokenizer.chat_template = self.chat_template
        elif not getattr(tokenizer, "chat_template", None) and self.files.gguf_file:
            kind = str(getattr(model.config, "model_type", ""))
            tokenizer.chat_template = next((t for prefix, t in _TEMPLATES.items() if kind.startswith(prefix)), None)
        eos = _ids(getattr(model.generation_config, "eos_token_id", None)) | _ids(tokenizer.eos_token_id)
        eos |= _turn_end(tokenizer)
        if not eos:
            raise ValueError("neither the tokenizer nor the generation config names an end-of-sequence token, "
                             "so a finished answer cannot be told from a cut one")
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = getattr(model.generation_config, "pad_token_id", None)
        if pad is None:
            pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else min(eos)
        config = model.config
        text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
        context = getattr(text_config, "max_position_embeddings", None) or getattr(text_config, "n_positions", None)
        vocab = int(getattr(text_config, "vocab_size", 0) or model.get_output_embeddings().weight.shape[0])
        loaded = _Loaded(model=model, tokenizer=tokenizer, device=device, eos_ids=frozenset(eos), pad_id=int(pad),
                         context=int(context) if context else None, system_role=True, vocab_size=vocab,
                         window=_prefix.sliding_window(text_config))
        loaded.system_role = self._renders_system(tokenizer)
        if self.structured == "xgrammar":
            from .grammar import Grammars

            loaded.grammars = Grammars(tokenizer, vocab, sorted(eos))
        return loaded

    @staticmethod
    def _renders_system(tokenizer: PreTrainedTokenizerBase) -> bool:
        """Whether the chat template renders a system message: it neither raises on one nor
        drops its text."""
        if not getattr(tokenizer, "chat_template", None):
            return True  # the plain layout writes every role
        probe = [{"role": "system", "content": _PROBE_SYSTEM}, {"role": "user", "content": _PROBE_USER}]
        try:
            text = tokenizer.apply_chat_template(probe, tokenize=False, add_generation_prompt=True)
        except Exception:  # the template is the model's code (Jinja): whatever it raises, no system role
            return False
        return isinstance(text, str) and _PROBE_SYSTEM in text

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        """The model's tokenizer (loads the model on first use)."""
        return self._load().tokenizer

    @property
    def language_model(self) -> Any:
        """The loaded transformers model, a ``PreTrainedModel`` (loads it on first use)."""
        return self._load().model

    @property
    def pipeline(self) -> Any:
        """A transformers text-generation pipeline over the loaded model and tokenizer (kept for
        callers of earlier versions; the judge itself calls ``model.generate``)."""
        loaded = self._load()
        with self._load_lock:
            if self._pipe is None:
                from transformers import pipeline

                tokenizer: Any = loaded.tokenizer
                self._pipe = pipeline("text-generation", model=loaded.model, tokenizer=tokenizer)
            return self._pipe

    # -- prompts ---------------------------------------------------------------------------
    def _prompt(self, messages: list[Message]) -> str:
        """The prompt text of a conversation, through the model's chat template."""
        loaded = self._load()
        tok = loaded.tokenizer
        if not getattr(tok, "chat_template", None):
            return "\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\nassistant:"
        if not loaded.system_role:
            messages = merge_system(messages)
        try:
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception as e:  # the template is the model's code (Jinja): what it raises fails this request
            raise JudgeError(f"the chat template of {self.model!r} cannot render this conversation "
                             f"({type(e).__name__}: {e})") from e
        if not isinstance(text, str):
            raise JudgeError(f"the chat template of {self.model!r} rendered {type(text).__name__}, not text")
        return text

    def _encode(self, messages: list[Message]) -> list[int]:
        """The prompt's token ids (a chat template writes its own special tokens)."""
        tok = self._load().tokenizer
        templated = bool(getattr(tok, "chat_template", None))
        ids = tok(self._prompt(messages), add_special_tokens=not templated)["input_ids"]
        return [int(i) for i in ids]

    # -- generation ------------------------------------------------------------------------
    async def _acomplete(self, messages: list[Message], request: JudgeRequest, batcher: _Batcher,
                         tally: JudgeResult) -> Completion:
        loaded = self._load()
        ids = self._encode(messages)  # a template error fails this request before any batch
        budget = self.budget(request)
        if loaded.context is not None:
            room = loaded.context - len(ids)
            if room < 1:
                raise JudgeError(f"the prompt is {len(ids)} tokens, longer than the model's context of "
                                 f"{loaded.context} tokens")
            budget = min(budget, room)
        return await batcher.submit(_Job(ids=ids, budget=budget, tally=tally,
                                         future=asyncio.get_running_loop().create_future(),
                                         schema=request.schema if loaded.grammars is not None else None,
                                         top_logprobs=(request.top_logprobs or 5) if request.logprobs else None,
                                         frequency_penalty=request.frequency_penalty))

    def _generate(self, jobs: Sequence[_Job]) -> list[Completion]:
        """Generate one batch (left-padded); one Completion per job, in order."""
        import torch
        from transformers import StoppingCriteriaList

        loaded = self._load()
        shared = _prefix.plan([j.ids for j in jobs]) if self.share_prefix else None
        if shared is not None and loaded.window is not None and \
                shared.prefix_width + shared.suffix_width + max(j.budget for j in jobs) >= loaded.window:
            shared = None  # padding inside a sliding window would hide tokens the row sees without it
        if shared is not None:
            rows, masks = shared.layout([j.ids for j in jobs], loaded.pad_id)
        else:
            width = max(len(j.ids) for j in jobs)
            rows = [[loaded.pad_id] * (width - len(j.ids)) + j.ids for j in jobs]
            masks = [[0] * (width - len(j.ids)) + [1] * len(j.ids) for j in jobs]
        width = len(rows[0])
        input_ids = torch.tensor(rows, dtype=torch.long, device=loaded.device)
        attention_mask = torch.tensor(masks, dtype=torch.long, device=loaded.device)
        budgets = [j.budget for j in jobs]
        criteria = _row_budgets_class()(width, torch.tensor(budgets, device=loaded.device))
        options: dict[str, Any] = {"max_new_tokens": max(budgets), "eos_token_id": sorted(loaded.eos_ids),
                                   "pad_token_id": loaded.pad_id}
        if self.temperature > 0:
            options.update(do_sample=True, temperature=self.temperature)
        else:
            options.update(do_sample=False)
        processors: list[Any] = []
        recorder = None
        asked = [i for i, j in enumerate(jobs) if j.top_logprobs]
        if asked:  # first: it reads the model's own distribution, before any mask
            from .grammar import TopLogprobs

            recorder = TopLogprobs(asked, max(jobs[i].top_logprobs or 0 for i in asked))
            processors.append(recorder)
        penalties = {i: j.frequency_penalty for i, j in enumerate(jobs) if j.frequency_penalty}
        if penalties:  # before the grammar's mask: a masked token stays masked
            from .grammar import FrequencyPenalty

            processors.append(FrequencyPenalty(penalties, width))
        if loaded.grammars is not None and any(j.schema is not None for j in jobs):
            from .grammar import GrammarMasks

            grammars = [loaded.grammars.get(j.schema) if j.schema is not None else None for j in jobs]
            processors.append(GrammarMasks(grammars, loaded.vocab_size))
        if processors:
            from transformers import LogitsProcessorList

            options["logits_processor"] = LogitsProcessorList(processors)
        with self._gen_lock, torch.inference_mode():
            if shared is not None:
                cache = _prefix.prefill(loaded.model, shared, [j.ids for j in jobs], loaded.pad_id, loaded.device)
                options[_prefix.cache_argument(loaded.model)] = cache
            out = loaded.model.generate(input_ids=input_ids, attention_mask=attention_mask,
                                        stopping_criteria=StoppingCriteriaList([criteria]), **options)
        new = out[:, width:].tolist()
        return [self._completion(loaded, row[:job.budget], len(job.ids), recorder, i)
                for i, (job, row) in enumerate(zip(jobs, new, strict=True))]

    @staticmethod
    def _completion(loaded: _Loaded, tokens: list[int], prompt_tokens: int, recorder: Any = None,
                    row: int = 0) -> Completion:
        end = next((k for k, t in enumerate(tokens) if t in loaded.eos_ids), None)
        if end is None:
            answer, used, reason = tokens, len(tokens), "length"
        else:
            answer, used, reason = tokens[:end], end + 1, "stop"
        text = loaded.tokenizer.decode(answer, skip_special_tokens=True)
        logprobs = None
        if recorder is not None and row in recorder.rows:
            logprobs = recorder.for_row(row, answer, lambda t: loaded.tokenizer.decode([t]))
        return Completion(text=str(text), prompt_tokens=prompt_tokens, completion_tokens=used, finish_reason=reason,
                          logprobs=logprobs)

    def _open(self) -> _Batcher:
        return _Batcher(self)


class _Batcher:
    """Gathers prompts that arrive together into batches for one generate call each."""

    def __init__(self, judge: HFJudge) -> None:
        self.judge = judge
        self.pending: list[_Job] = []
        self.flusher: asyncio.TimerHandle | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> _Batcher:
        # load once, off the event loop; a model that cannot load stops the run here
        await asyncio.get_running_loop().run_in_executor(None, self.judge._load)
        return self

    async def __aexit__(self, *exc: Any) -> bool:
        if self.flusher is not None:
            self.flusher.cancel()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        return False

    async def submit(self, job: _Job) -> Completion:
        loop = asyncio.get_running_loop()
        self.pending.append(job)
        if len(self.pending) >= self.judge.batch_size:
            self._flush(loop)
        elif self.flusher is None:
            self.flusher = loop.call_later(0.005, self._flush, loop)
        return await job.future

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.flusher is not None:
            self.flusher.cancel()
            self.flusher = None
        batch, self.pending = [j for j in self.pending if not j.future.done()], []
        if batch:
            task = loop.create_task(self._run(batch, loop))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _run(self, batch: list[_Job], loop: asyncio.AbstractEventLoop) -> None:
        try:
            await self._generate(batch, loop)
        except Exception as e:  # handed on, not kept: only running out of memory is a request's failure
            if not _out_of_memory(e):
                _raise(batch, e)
            elif len(batch) == 1:
                _fail(batch[0], e)
            else:
                for job in batch:  # one row, or the batch's size, may be the cause: each row alone
                    try:
                        await self._generate([job], loop)
                    except Exception as e1:  # handed on, not kept: as above
                        if _out_of_memory(e1):
                            _fail(job, e1)
                        else:
                            _raise([job], e1)

    async def _generate(self, jobs: list[_Job], loop: asyncio.AbstractEventLoop) -> None:
        for job in jobs:
            job.tally.sent()
        completions = await loop.run_in_executor(None, self.judge._generate, jobs)
        for job, completion in zip(jobs, completions, strict=True):
            if not job.future.done():
                job.future.set_result(completion)


def _out_of_memory(e: BaseException) -> bool:
    """The model ran out of memory for a batch or a row (torch's ``OutOfMemoryError``, a CPU
    allocation that failed): the failure of what was asked, not of the code that asked it."""
    if isinstance(e, MemoryError):
        return True
    import torch

    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    return isinstance(e, oom) or (isinstance(e, RuntimeError) and "can't allocate memory" in str(e))


def _fail(job: _Job, e: Exception) -> None:
    """The request's failure: a ``JudgeError`` kept as its error."""
    if not job.future.done():
        job.future.set_exception(JudgeError(f"generation failed: {type(e).__name__}: {e}"))


def _raise(jobs: Sequence[_Job], e: Exception) -> None:
    """A bug (of the package, of transformers or torch): each request waiting on the generation
    raises it as it is, with its traceback, and the run stops."""
    for job in jobs:
        if not job.future.done():
            job.future.set_exception(e)
