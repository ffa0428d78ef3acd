"""Constrained decoding and token log-probabilities for the local judge (``HFJudge``).

- ``Grammars``: each request's JSON schema compiled once into a token-level grammar by xgrammar
  (the compiled engine vLLM and SGLang use), for one tokenizer. Compact JSON (no free
  whitespace: a small model cannot loop on spaces), the schema's own rules (required keys in
  order, enums, closed objects, ``minItems``): with the verdicts keyed by item number, an answer
  can only be complete and well formed.
- ``GrammarMasks``: a transformers logits processor that lets each row of a batch write only what
  its grammar allows (a row without a schema, or whose grammar has ended or been stopped by its
  own token budget, is left free). Unlike xgrammar's own processor it tolerates rows that stop at
  different times, which the judge's per-row budgets make the rule.
- ``FrequencyPenalty``: OpenAI's ``frequency_penalty`` for the rows that ask (the re-ask of an
  answer that looped): each token's logit lowered by the penalty times the times the row has
  written it.
- ``TopLogprobs``: records, for the rows that ask, the log-probabilities of the ``k`` most likely
  tokens at each step from the model's distribution before any mask (as llama.cpp and OpenAI
  report them), so G-Eval's probability weighting works on a local model too.

Why xgrammar: it compiles a schema in milliseconds and checks a token in microseconds, in C++,
where the Python engines measured earlier (outlines, lm-format-enforcer) cost 2 to 2.4 times the
generation time (benchmarks/constrained_decoding/README.md); the figures on the real models are in
docs/real_judges.md.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["Grammars", "GrammarMasks", "TopLogprobs", "FrequencyPenalty", "available"]


def available() -> bool:
    """xgrammar is installed (the ``hf`` extra installs it)."""
    try:
        import xgrammar  # noqa: F401
    except ImportError:
        return False
    return True


class Grammars:
    """Compiled grammars of JSON schemas for one tokenizer, each compiled once."""

    def __init__(self, tokenizer: Any, vocab_size: int, stop_ids: Sequence[int]) -> None:
        import xgrammar as xgr

        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=sorted(stop_ids))
        self.vocab_size = vocab_size
        self._compiler = xgr.GrammarCompiler(info)
        self._compiled: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            compiled = self._compiled.get(key)
            if compiled is None:
                compiled = self._compiler.compile_json_schema(json.dumps(schema), any_whitespace=False,
                                                              strict_mode=True)
                self._compiled[key] = compiled
            return compiled


def _processor_base() -> type:
    from transformers import LogitsProcessor

    return LogitsProcessor


class GrammarMasks(_processor_base()):  # type: ignore[misc]
    """Masks each row's logits to what its grammar allows next (rows with None: unmasked)."""

    def __init__(self, grammars: Sequence[Any | None], vocab_size: int) -> None:
        import xgrammar as xgr

        self._xgr = xgr
        self.matchers = [xgr.GrammarMatcher(g) if g is not None else None for g in grammars]
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self.vocab_size = vocab_size
        self.started = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.started:  # the token each row took at the last step
            last = input_ids[:, -1].tolist()
            for i, matcher in enumerate(self.matchers):
                if matcher is not None and not matcher.is_terminated() and not matcher.accept_token(last[i]):
                    self.matchers[i] = None  # a row stopped by its own budget, now padded: free
        self.started = True
        for i, matcher in enumerate(self.matchers):
            if matcher is not None and not matcher.is_terminated():
                matcher.fill_next_token_bitmask(self.bitmask, i)
            else:
                self.bitmask[i].fill_(-1)  # every token allowed
        device = scores.device
        masked = scores if device.type in ("cpu", "cuda") else scores.to("cpu")
        self._xgr.apply_token_bitmask_inplace(masked, self.bitmask.to(masked.device), vocab_size=self.vocab_size)
        return masked if masked.device == device else masked.to(device)


class TopLogprobs(_processor_base()):  # type: ignore[misc]
    """Records the top-``k`` log-probabilities of the unmasked distribution (every token's, for a
    vocabulary of fewer than ``k``), per step, for the rows in ``rows``. Put it first among the
    processors: it changes nothing."""

    def __init__(self, rows: Sequence[int], k: int) -> None:
        self.rows = list(rows)
        self.k = k
        self.steps: list[tuple[Any, Any]] = []  # (values, indices) of shape (len(rows), k), per step

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        logp = torch.log_softmax(scores[self.rows].float(), dim=-1)
        # never more alternatives than the vocabulary holds (torch.topk raises past its width)
        values, indices = torch.topk(logp, min(self.k, logp.shape[-1]), dim=-1)
        self.steps.append((values.cpu(), indices.cpu()))
        return scores

    def for_row(self, row: int, tokens: Sequence[int], decode: Any) -> list[dict[str, Any]]:
        """OpenAI's ``logprobs.content`` for ``row``'s generated ``tokens``: each token with its
        log-probability (when among the top ``k``) and the top ``k`` alternatives."""
        r = self.rows.index(row)
        out = []
        for step, token in enumerate(tokens):
            if step >= len(self.steps):
                break
            values, indices = self.steps[step]
            alts = [{"token": decode(int(t)), "logprob": float(v)}
                    for v, t in zip(values[r].tolist(), indices[r].tolist(), strict=True)]
            chosen = next((a["logprob"] for a, t in zip(alts, indices[r].tolist(), strict=True) if t == token), None)
            out.append({"token": decode(int(token)), "logprob": chosen, "top_logprobs": alts})
        return out


class FrequencyPenalty(_processor_base()):  # type: ignore[misc]
    """OpenAI's ``frequency_penalty`` per row: ``penalties`` maps a row of the batch to its
    penalty; ``width`` is where the generated tokens begin (the padded prompt's length)."""

    def __init__(self, penalties: dict[int, float], width: int) -> None:
        self.penalties = dict(penalties)
        self.width = width

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        written = input_ids[:, self.width:]
        if written.shape[1] == 0:
            return scores
        for row, penalty in self.penalties.items():
            counts = torch.bincount(written[row], minlength=scores.shape[1])[: scores.shape[1]]
            scores[row] = scores[row] - penalty * counts.to(scores.dtype)
        return scores
