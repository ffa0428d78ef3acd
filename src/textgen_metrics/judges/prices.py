"""Prices and token counts for cost estimates (``textgen_metrics.estimate_cost``, ``--dry-run``).

``PRICES``: list prices in US dollars per million tokens (prompt, completion) of the hosted
models, as the providers published them in 2025 (OpenAI's and Anthropic's pricing pages). They
change: pass ``prices={model: (prompt, completion)}`` to a judge or to ``estimate_cost`` to
use your own (that table wins). A model is found by its name or the longest name in the table
that its name starts with (``gpt-4o-mini-2024-07-18`` is ``gpt-4o-mini``; an Azure deployment
is looked up by its deployment name). ``BATCH_DISCOUNT``: both providers' batch APIs charge
half of the live price.

Token counts: the provider's tokenizer where a package ships its vocabulary (``o200k_base`` and
``cl100k_base`` from the ``bpe-openai`` package, extra ``cost``: no download at run time;
``tiktoken`` downloads its files when first used, so it is not used here). ``o200k_base`` is
exact for OpenAI's GPT-4o, GPT-4.1, GPT-5 and o-series models and ``cl100k_base`` for GPT-4 and
GPT-3.5; for any other model (Claude: Anthropic publishes no tokenizer for its current models;
local models) the count is ``o200k_base``'s, an approximation, and says so. Without the
package: characters / 4, an approximation, and says so.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from .schema import define_once

__all__ = ["PRICES", "PRICES_AS_OF", "BATCH_DISCOUNT", "price_for", "TokenCounter", "token_counter_for",
           "chat_tokens"]

PRICES_AS_OF = "2025"
BATCH_DISCOUNT = 0.5

# (backend, model name or prefix) -> (USD per 1M prompt tokens, USD per 1M completion tokens)
PRICES: dict[str, dict[str, tuple[float, float]]] = {
    "openai": {
        "gpt-4o": (2.50, 10.00), "gpt-4o-mini": (0.15, 0.60),
        "gpt-4.1": (2.00, 8.00), "gpt-4.1-mini": (0.40, 1.60), "gpt-4.1-nano": (0.10, 0.40),
        "gpt-5": (1.25, 10.00), "gpt-5-mini": (0.25, 2.00), "gpt-5-nano": (0.05, 0.40),
        "o3": (2.00, 8.00), "o4-mini": (1.10, 4.40), "o3-mini": (1.10, 4.40),
        "gpt-4-turbo": (10.00, 30.00), "gpt-3.5-turbo": (0.50, 1.50),
    },
    "anthropic": {
        "claude-opus-4": (15.00, 75.00), "claude-sonnet-4": (3.00, 15.00), "claude-haiku-4-5": (1.00, 5.00),
        "claude-3-7-sonnet": (3.00, 15.00), "claude-3-5-sonnet": (3.00, 15.00), "claude-3-5-haiku": (0.80, 4.00),
        "claude-3-haiku": (0.25, 1.25), "claude-3-opus": (15.00, 75.00),
    },
}
PRICES["azure"] = PRICES["openai"]  # a deployment named after its model


def price_for(backend: str, model: str, prices: Mapping[str, tuple[float, float]] | None = None
              ) -> tuple[tuple[float, float] | None, str]:
    """``((prompt, completion) per 1M tokens, where from)`` for ``model``; ``(None, why)`` when
    neither ``prices`` nor the table has it."""
    if prices and model in prices:
        p_in, p_out = prices[model]
        return (float(p_in), float(p_out)), "prices="
    table = PRICES.get(backend, {})
    matches = [name for name in table if model == name or model.startswith(name + "-")]
    if not matches:
        return None, (f"no price for {backend}:{model} in the table: pass prices={{{model!r}: (prompt, "
                      "completion)}} in USD per 1M tokens")
    name = max(matches, key=len)
    return table[name], f"list price of {name} ({PRICES_AS_OF}; textgen_metrics.judges.prices.PRICES)"


class TokenCounter:
    """``count(text) -> int`` and ``name``: how the count was made (exact or an approximation).
    Counts a provider's tokens for a cost estimate; not a tokenizer of the metrics
    (``textgen_metrics.tokenizers.Tokenizer``), which splits text into the units scored."""

    def __init__(self, name: str, count: Callable[[str], int], exact: bool) -> None:
        self.name, self.count, self.exact = name, count, exact

    def __repr__(self) -> str:
        return f"TokenCounter({self.name!r})"


@functools.cache
def _encoding(name: str) -> Any:
    import bpe_openai

    return bpe_openai.get_encoding(name)


def _openai_encoding(model: str) -> str | None:
    m = model.lower()
    if m.startswith(("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")):
        return "o200k_base"
    if m.startswith(("gpt-4", "gpt-3.5")):
        return "cl100k_base"
    return None


def token_counter_for(backend: str, model: str) -> TokenCounter:
    """The tokenizer of ``model`` where a package ships it (exact), else an approximation."""
    encoding = _openai_encoding(model) if backend in ("openai", "azure") else None
    try:
        enc = _encoding(encoding or "o200k_base")
    except ImportError:
        return TokenCounter("characters / 4 (an approximation: pip install 'textgen-metrics[cost]' for "
                         "OpenAI's o200k_base tokenizer)", lambda text: (len(text) + 3) // 4, False)

    def count(text: str) -> int:
        return len(enc.encode(text))

    if encoding is not None:
        return TokenCounter(f"{encoding} (OpenAI's tokenizer for {model}, from bpe-openai)", count, True)
    why = ("Anthropic publishes no tokenizer for its current models" if backend == "anthropic"
           else f"no tokenizer of {model!r} is installed")
    return TokenCounter(f"o200k_base (an approximation: {why})", count, False)


def chat_tokens(tokenizer: TokenCounter, messages: list[dict[str, Any]], schema: Any = None) -> int:
    """Prompt tokens of a chat request: each message's text and its framing (OpenAI's: 3 tokens
    per message and 3 that open the answer), plus the answer's JSON schema, which a provider
    adds to the prompt (OpenAI's structured outputs, Anthropic's tool definition), with its
    repeated parts defined once as the hosted judges send it (``schema.define_once``)."""
    total = 3
    for m in messages:
        total += 3 + tokenizer.count(str(m.get("role", ""))) + tokenizer.count(str(m.get("content", "")))
    if schema is not None:
        total += tokenizer.count(json.dumps(define_once(schema), ensure_ascii=False, separators=(",", ":")))
    return total
