"""A judge over a GGUF model run in this process by llama.cpp, through llama-cpp-python's ``Llama``
(``LlamaCppJudge("model.gguf")``, ``judge="gguf:/path/model.gguf"``; the ``tiny:`` judges).

It answers a request exactly as llama-cpp-python's OpenAI-compatible server (``python -m
llama_cpp.server --model FILE.gguf --n_ctx 4096``) answers the same request sent by
``OpenAIJudge``: the same ``Llama`` settings, the same call (``Llama.create_chat_completion``) with
the same keyword arguments, the schema sent in the dialect that server speaks
(``response_format={"type": "json_object", "schema": ...}``, from which llama-cpp-python builds
the grammar that holds every token to the schema). What follows llama-cpp-python 0.3.x's server
(``llama_cpp/server/settings.py``, ``types.py``, ``app.py``, ``model.py``):

- The model is loaded with the server's ``ModelSettings`` defaults (``SERVER_MODEL_SETTINGS``):
  ``n_gpu_layers=0``, ``n_batch=n_ubatch=512``, ``logits_all=True`` (the logits of every position;
  log-probabilities need them), ``last_n_tokens_size=64`` (the repeat penalty's window), the
  default seed, no flash attention, threads ``cpu_count // 2`` for generation and ``cpu_count``
  for the prompt, ``chat_format=None``: the chat template stored in the GGUF file (or the format
  llama-cpp-python guesses from its metadata; ``llama-2`` when it has none; ``chat_format=``
  names one, as the server's ``--chat_format``). ``n_ctx`` is 4096, the documented server
  command's ``--n_ctx 4096`` (the server's own default is 2048). Differences that change no
  answer: no ``mlock`` (the server locks the weights in memory where it can), no output
  (``verbose=False``).
- A request's keyword arguments are what the server passes for an ``OpenAIJudge`` body
  (``CreateChatCompletionRequest(**body).model_dump(exclude={"n", "logit_bias_type", "user",
  "min_tokens"})``), each default of the server's request type (``SERVER_REQUEST_DEFAULTS``:
  ``top_p`` 0.95, ``top_k`` 40, ``min_p`` 0.05, ``repeat_penalty`` 1.1, no stop strings, no
  seed, ``max_tokens`` None: until the end of the answer or of the context) with what the
  judge sends over it: ``temperature`` 0 (greedy, as ``OpenAIJudge`` asks), the request's
  ``max_tokens``, ``frequency_penalty`` (a re-ask of a looping answer), ``logprobs`` and
  ``top_logprobs`` (G-Eval), the schema. The answer is read as ``OpenAIJudge`` reads the server's
  JSON (``openai._completion``): text, usage, finish reason, log-probabilities.
- Like the server, one ``Llama`` answers one request at a time (llama.cpp's context is not
  re-entrant), in the order they come, and keeps the previous prompt's computed prefix for the
  next request that starts alike (llama-cpp-python's prefix reuse; the metrics' requests share
  their system text, task and worked example). The calls run in one worker thread of the
  judge's own, so the engine's event loop stays free; ``concurrency`` requests wait their turn
  (the next one is queued before the last answer is parsed).
- A prompt longer than the context is that request's error ("the prompt is longer than the
  model's context"), as the server's HTTP 400 is. A file that does not exist is a ``ValueError``
  naming it at construction; one llama.cpp cannot load stops the run (``JudgeFatalError``).
- The model loads once per judge and process, on first use (the start of the first run): a pickle
  (a cluster's worker) carries the settings, not the model, and loads it again where it lands.
- On a CPU with AMX-INT8, a llama.cpp built with its AMX kernels crashes in decode (llama.cpp
  #20824): the process dies, past every ``except``. Where llama.cpp's own system info says the
  build has them and the CPU has AMX-INT8 (``llama_install.takes_amx_path``), the model loads
  without llama.cpp's extra buffer types (``use_extra_bufts = False``), which keeps the weights
  out of the AMX buffer: the answers come from llama.cpp's ordinary CPU kernels. Everywhere else
  nothing changes. ``python -m textgen_metrics.llama_install`` installs a build without them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import multiprocessing
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ..llama_install import cpu_flags, system_info, takes_amx_path
from .base import Completion, Judge, JudgeError, JudgeFatalError, JudgeRequest, JudgeResult, Message
from .openai import _completion, _strict_schema
from .options import LlamaCppOptions, check_options

__all__ = ["LlamaCppJudge", "SERVER_MODEL_SETTINGS", "SERVER_REQUEST_DEFAULTS", "resolve_gguf"]

_INSTALL = 'pip install llama-cpp-python (or pip install "textgen-metrics[tiny-judge]")'
LLAMA_DEFAULT_SEED = 0xFFFFFFFF  # llama_cpp.LLAMA_DEFAULT_SEED, the server's ``seed`` setting

# llama_cpp.server.settings.ModelSettings' defaults that reach ``Llama(...)`` (n_ctx: see below)
SERVER_MODEL_SETTINGS: dict[str, Any] = {
    "n_gpu_layers": 0, "main_gpu": 0, "tensor_split": None, "vocab_only": False, "use_mmap": True,
    "kv_overrides": None, "seed": LLAMA_DEFAULT_SEED, "n_batch": 512, "n_ubatch": 512,
    "rope_freq_base": 0.0, "rope_freq_scale": 0.0, "yarn_ext_factor": -1.0, "yarn_attn_factor": 1.0,
    "yarn_beta_fast": 32.0, "yarn_beta_slow": 1.0, "yarn_orig_ctx": 0, "logits_all": True, "embedding": False,
    "offload_kqv": True, "flash_attn": False, "last_n_tokens_size": 64, "lora_base": None, "lora_path": None,
    "numa": False, "type_k": None, "type_v": None,
}

# what llama_cpp.server.types.CreateChatCompletionRequest gives create_chat_completion for a body
# that names none of these (app.py: body.model_dump(exclude={"n", "logit_bias_type", "user", "min_tokens"}))
SERVER_REQUEST_DEFAULTS: dict[str, Any] = {
    "functions": None, "function_call": None, "tools": None, "tool_choice": None, "max_tokens": None,
    "logprobs": False, "top_logprobs": None, "temperature": 0.8, "top_p": 0.95, "min_p": 0.05, "stop": None,
    "stream": False, "presence_penalty": 0.0, "frequency_penalty": 0.0, "logit_bias": None, "seed": None,
    "response_format": None, "top_k": 40, "repeat_penalty": 1.1, "mirostat_mode": 0, "mirostat_tau": 5.0,
    "mirostat_eta": 0.1, "grammar": None,
}

# Llama(...) reads llama.cpp's default model parameters while it builds them: the AMX guard swaps
# that function for the time of one construction, one construction at a time
_DEFAULT_PARAMS_LOCK = threading.Lock()


@contextlib.contextmanager
def without_extra_buffer_types() -> Iterator[None]:
    """Every ``Llama(...)`` built inside loads its weights without llama.cpp's extra buffer types
    (``llama_model_params.use_extra_bufts = False``; llama-cpp-python has no argument for it)."""
    from llama_cpp import llama_cpp as lib

    original = lib.llama_model_default_params

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    with _DEFAULT_PARAMS_LOCK:
        lib.llama_model_default_params = defaults
        try:
            yield
        finally:
            lib.llama_model_default_params = original


def resolve_gguf(model: str) -> str:
    """The GGUF file ``model`` names: the file, or the one GGUF file of a folder."""
    if not isinstance(model, str) or not model:
        raise ValueError("model: give the path of a GGUF file, e.g. 'models/smollm2.Q4_1.gguf'")
    path = os.path.expanduser(model)
    if os.path.isdir(path):
        ggufs = sorted(f for f in os.listdir(path) if f.lower().endswith(".gguf"))
        if len(ggufs) != 1:
            raise ValueError(f"model: the folder {model!r} holds {len(ggufs)} GGUF files"
                             + (f" ({', '.join(ggufs)}); name one" if ggufs else "; give the path of a GGUF file"))
        path = os.path.join(path, ggufs[0])
    if not os.path.isfile(path):
        raise ValueError(f"model: the GGUF file {model!r} does not exist ({os.path.abspath(path)}); give the path "
                         "of a GGUF file on this machine (nothing is downloaded)")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        # the bytes read are never quoted: the path may name a file that is not the caller's to read
        raise ValueError(f"model: {model!r} is not a GGUF file (its first 4 bytes are not the GGUF magic)")
    return os.path.abspath(path)


class LlamaCppJudge(Judge):
    """A GGUF model judged in process by llama.cpp (see the module docstring)."""

    backend = "gguf"
    Options = LlamaCppOptions
    _transient = ("_llama", "_worker")  # a pickle (a cluster's worker) loads the model again

    def __init__(self, model: str, n_ctx: int = 4096, chat_format: str | None = None, temperature: float = 0.0,
                 seed: int | None = None, max_tokens: int | None = None, response_format: str = "json_object_schema",
                 n_threads: int | None = None, n_threads_batch: int | None = None, n_gpu_layers: int = 0,
                 concurrency: int = 8, cache: Any = None, max_parse_attempts: int = 3,
                 prices: dict[str, tuple[float, float]] | None = None, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None) -> None:
        path = resolve_gguf(model)
        check_options(LlamaCppOptions, {"n_ctx": n_ctx, "max_tokens": max_tokens, "n_threads": n_threads,
                                        "n_threads_batch": n_threads_batch, "n_gpu_layers": n_gpu_layers,
                                        "temperature": temperature, "seed": seed, "response_format": response_format,
                                        "chat_format": chat_format, "concurrency": concurrency})
        if importlib.util.find_spec("llama_cpp") is None:
            raise ValueError(f"judge: a GGUF model in process needs the package llama-cpp-python: {_INSTALL}")
        super().__init__(path, concurrency=concurrency, cache=cache, max_parse_attempts=max_parse_attempts,
                         prices=prices, requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute)
        self.path = path
        self.n_ctx = int(n_ctx)
        self.chat_format = chat_format
        self.temperature = float(temperature)
        self.seed = seed
        self.max_tokens = max_tokens
        self.response_format = response_format
        self.n_threads = n_threads
        self.n_threads_batch = n_threads_batch
        self.n_gpu_layers = n_gpu_layers
        self.mode = response_format
        self._llama: Any = None
        self.amx_guarded: bool | None = None  # known once loaded: whether the AMX guard was needed
        self._worker: concurrent.futures.ThreadPoolExecutor | None = None
        self._load_lock = threading.Lock()
        self._call_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, n_ctx={self.n_ctx})"

    def describe(self) -> str:
        return f"the in-process llama.cpp judge on {self.path}"

    def settings(self, request: JudgeRequest) -> dict[str, Any]:
        s = super().settings(request)
        s.update(engine="llama.cpp", n_ctx=self.n_ctx, chat_format=self.chat_format, temperature=self.temperature,
                 seed=self.seed, max_tokens=self.max_tokens, response_format=self.response_format)
        return s

    def default_budget(self) -> int | None:
        return self.max_tokens

    # -- the model -------------------------------------------------------------------------
    def llama_options(self) -> dict[str, Any]:
        """The keyword arguments of ``Llama(...)``: the server's model settings, this judge's own."""
        cpus = multiprocessing.cpu_count()
        return dict(SERVER_MODEL_SETTINGS, model_path=self.path, n_ctx=self.n_ctx, chat_format=self.chat_format,
                    n_gpu_layers=self.n_gpu_layers, n_threads=self.n_threads or max(cpus // 2, 1),
                    n_threads_batch=self.n_threads_batch or max(cpus, 1), verbose=False)

    @property
    def llama(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (loads it on first use)."""
        return self._load()

    def _load(self) -> Any:
        with self._load_lock:
            if self._llama is None:
                try:
                    if "llama_cpp" not in sys.modules:  # before llama.cpp's OpenMP runtime reads it
                        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    from llama_cpp import Llama

                    self.amx_guarded = takes_amx_path(system_info(), cpu_flags())
                    with without_extra_buffer_types() if self.amx_guarded else contextlib.nullcontext():
                        self._llama = Llama(**self.llama_options())
                except ImportError as e:
                    raise JudgeFatalError(f"judge: llama-cpp-python cannot be imported ({e}): {_INSTALL}") from e
                except Exception as e:  # the same failure would repeat for every request
                    raise JudgeFatalError(f"cannot load the GGUF model {self.path} with llama.cpp: "
                                          f"{type(e).__name__}: {e}") from e
            return self._llama

    def _executor(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._load_lock:
            if self._worker is None:  # one thread: the model's calls in the order they come
                self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="llama.cpp-judge")
            return self._worker

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Any]:
        # load once, off the event loop; a model that cannot load stops the run here
        await asyncio.get_running_loop().run_in_executor(self._executor(), self._load)
        yield None

    # -- requests --------------------------------------------------------------------------
    def request_options(self, messages: list[Message], request: JudgeRequest) -> dict[str, Any]:
        """The keyword arguments of ``create_chat_completion`` for a request: what the server
        passes for the body ``OpenAIJudge`` sends it (its ``model`` aside)."""
        kw = dict(SERVER_REQUEST_DEFAULTS, messages=messages, temperature=self.temperature, seed=self.seed)
        budget = request.max_tokens or self.max_tokens
        if budget is not None:
            kw["max_tokens"] = budget
        if request.frequency_penalty:
            kw["frequency_penalty"] = request.frequency_penalty
        if request.logprobs:
            kw["logprobs"] = True
            if request.top_logprobs:
                kw["top_logprobs"] = request.top_logprobs
        if request.schema is not None and self.mode == "json_object_schema":
            kw["response_format"] = {"type": "json_object", "schema": _strict_schema(request.schema, True)}
        elif request.schema is not None and self.mode == "json_object":
            kw["response_format"] = {"type": "json_object"}
        return kw

    def complete(self, messages: list[Message], request: JudgeRequest) -> Completion:
        """Answer one request now, in the calling thread (one call at a time per model). What
        fails this request only: a prompt longer than the context, a conversation the GGUF file's
        chat template cannot render (Jinja's ``TemplateError``), a decode that llama.cpp refuses
        (``RuntimeError: llama_decode returned 1``: no room in its cache). Anything else raised
        here is a bug (of these options, or of llama-cpp-python) and stops the run."""
        from jinja2 import TemplateError  # llama-cpp-python's chat formats render with Jinja

        llama = self._load()
        options = self.request_options(messages, request)
        with self._call_lock:
            try:
                payload = llama.create_chat_completion(**options)
            except ValueError as e:
                if "exceed context window" in str(e):
                    raise JudgeError(f"the prompt is longer than the model's context ({e})") from e
                raise
            except TemplateError as e:
                raise JudgeError(f"the chat template of {self.path} cannot render this conversation "
                                 f"({type(e).__name__}: {e})") from e
            except RuntimeError as e:
                raise JudgeError(f"llama.cpp failed on this request ({e})") from e
        completion = _completion(payload)
        completion.model = None  # in process, the model is the file configured (its "model": a local path)
        return completion

    async def _acomplete(self, messages: list[Message], request: JudgeRequest, ctx: Any,
                         tally: JudgeResult) -> Completion:
        tally.sent()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), self.complete, messages, request)
