"""Shared prompt prefixes in one batch of ``HFJudge``: computed once, not once per row.

Every prompt of a metric starts with the same fixed part (the chat template's opening, the
system text, the task and its worked example) and differs only where the example's own text
begins: on the metrics' own prompts with SmolLM2's tokenizer, 320 of about 365 tokens of a
faithfulness claim request and 472 of about 590 of a summary-coherence request are shared. A
batch left-padded to its longest prompt computes every one of those tokens once per row; the
prefill, not the answer, is most of what a constrained judge's batch costs on a CPU.

``plan`` groups the rows of a batch by a shared prefix and says whether sharing pays; then the
batch is laid out as ``[pad] prefix [pad] suffix`` per row::

    row 0:  . . P P P P P P P P | . . s s s s      (group 0, prefix of 8 tokens)
    row 1:  . . P P P P P P P P | s s s s s s
    row 2:  Q Q Q Q Q Q Q Q Q Q | . . . s s s      (group 1, prefix of 10 tokens)

``prefill`` runs the distinct prefixes once (one row per group, with position ids counted over
the real tokens, as ``generate`` counts them from the attention mask), copies each group's cache
rows to its members, and ``generate`` goes on from there with the whole layout: it feeds only the
suffix columns and writes the same tokens as the plain layout (the padding between prefix and
suffix is masked out, and every real token keeps its position). The grouping minimises the
positions computed, ``groups * prefix_width + rows * suffix_width``, against ``rows * width`` for
the plain layout, and is used only when it saves at least a tenth.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import Any

__all__ = ["PrefixPlan", "plan", "prefill", "sliding_window", "cache_argument"]

MIN_PREFIX = 32  # tokens: a shorter shared prefix is not worth a second forward pass
MIN_SAVING = 0.1  # the share of computed positions sharing must save to be used


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


@dataclasses.dataclass(frozen=True)
class PrefixPlan:
    """How the rows of one batch share prefixes."""

    lengths: tuple[int, ...]  # per group: the length of its shared prefix
    leaders: tuple[int, ...]  # per group: a row that holds the prefix
    group_of: tuple[int, ...]  # per row: its group
    prefix_width: int  # the prefix columns (the longest group prefix)
    suffix_width: int  # the suffix columns (the longest remainder)

    def cost(self) -> int:
        """Positions computed: each distinct prefix once, each row's suffix columns."""
        return len(self.lengths) * self.prefix_width + len(self.group_of) * self.suffix_width

    def layout(self, rows: Sequence[Sequence[int]], pad: int) -> tuple[list[list[int]], list[list[int]]]:
        """The batch's token rows and attention mask, ``[pad] prefix [pad] suffix`` per row."""
        ids, mask = [], []
        for r, row in enumerate(rows):
            p = self.lengths[self.group_of[r]]
            lead, gap = self.prefix_width - p, self.suffix_width - (len(row) - p)
            ids.append([pad] * lead + list(row[:p]) + [pad] * gap + list(row[p:]))
            mask.append([0] * lead + [1] * p + [0] * gap + [1] * (len(row) - p))
        return ids, mask


def _grouped(rows: Sequence[Sequence[int]], shared: list[list[int]], threshold: int) -> PrefixPlan:
    """Greedy groups: each row joins the group it shares most with, at ``threshold`` tokens or more."""
    leaders: list[int] = []
    lengths: list[int] = []
    group_of: list[int] = []
    for r, row in enumerate(rows):
        best = max(range(len(leaders)), key=lambda g: shared[r][leaders[g]], default=None)
        if best is not None and shared[r][leaders[best]] >= threshold:
            lengths[best] = min(lengths[best], shared[r][leaders[best]], len(row) - 1)
            group_of.append(best)
        else:
            leaders.append(r)
            lengths.append(len(row) - 1)  # at least one token of each row is fed to generate
            group_of.append(len(leaders) - 1)
    prefix_width = max(lengths)
    suffix_width = max(len(row) - lengths[g] for row, g in zip(rows, group_of, strict=True))
    return PrefixPlan(tuple(lengths), tuple(leaders), tuple(group_of), prefix_width, suffix_width)


def plan(rows: Sequence[Sequence[int]], min_prefix: int = MIN_PREFIX,
         min_saving: float = MIN_SAVING) -> PrefixPlan | None:
    """The cheapest grouping of ``rows`` by shared prefixes, or None when sharing does not pay
    (a single row, no prefix of ``min_prefix`` tokens, or less than ``min_saving`` saved)."""
    if len(rows) < 2 or min(len(r) for r in rows) < 2:
        return None
    shared = [[common_prefix(a, b) for b in rows] for a in rows]
    thresholds = sorted({shared[i][j] for i in range(len(rows)) for j in range(i)
                         if shared[i][j] >= min_prefix})
    plans = [p for p in (_grouped(rows, shared, t) for t in thresholds) if len(p.lengths) < len(rows)]
    if not plans:
        return None
    best = min(plans, key=PrefixPlan.cost)
    plain = len(rows) * max(len(r) for r in rows)
    return best if best.cost() <= (1 - min_saving) * plain and min(best.lengths) >= 1 else None


def cache_argument(model: Any) -> str:
    """The keyword under which ``model`` takes a key/value cache: ``cache`` from transformers 5.x
    on (``past_key_values`` is deprecated there), ``past_key_values`` before."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def sliding_window(config: Any) -> int | None:
    """The attention window of a model whose layers (some or all) see only the last tokens, else None.

    The padding between prefix and suffix takes columns of such a window, so a row would see fewer
    of its own tokens than in the plain layout: sharing is used only where the whole row, answer
    included, fits in the window (``HFJudge._generate``)."""
    window = getattr(config, "sliding_window", None)
    if not window or not getattr(config, "use_sliding_window", True):
        return None
    types = getattr(config, "layer_types", None)
    if types is not None and not any("sliding" in str(t) for t in types):
        return None
    return int(window)


def prefill(model: Any, the_plan: PrefixPlan, rows: Sequence[Sequence[int]], pad: int, device: Any) -> Any:
    """The key/value cache of every row's prefix columns, each distinct prefix computed once."""
    import torch
    from transformers import DynamicCache

    width = the_plan.prefix_width
    groups = zip(the_plan.lengths, the_plan.leaders, strict=True)
    ids = [[pad] * (width - n) + list(rows[leader][:n]) for n, leader in groups]
    mask = torch.tensor([[0] * (width - n) + [1] * n for n in the_plan.lengths], dtype=torch.long, device=device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)  # as generate counts them: over the real tokens
    cache = DynamicCache(config=model.config)
    model(input_ids=torch.tensor(ids, dtype=torch.long, device=device), attention_mask=mask,
          position_ids=positions, use_cache=True, logits_to_keep=1, **{cache_argument(model): cache})
    cache.reorder_cache(torch.tensor(the_plan.group_of, dtype=torch.long, device=device))  # type: ignore[arg-type]
    return cache
