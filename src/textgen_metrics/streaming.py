"""A registry metric fed batch by batch, with the aggregate of everything fed so far.

Used by the Trainer hook's ``batch_eval_metrics=True`` mode, where transformers hands over one
evaluation batch at a time. Where the aggregate is the mean of per-example scores (ROUGE,
METEOR, BERTScore without idf, the LLM-guided metrics), each batch is scored at once and only
running means are kept (``aggregation.RunningMean``, exact as ``math.fsum``: the result equals
the one-call aggregate to the last digit). Where it is not (BLEU and Google BLEU are corpus
statistics; BERTScore's idf weights come from every reference), the decoded texts are kept, a
few bytes per token, and scored together at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .aggregation import RunningMean
from .registry import MetricSpec, score_columns

__all__ = ["MetricStream"]


class MetricStream:
    """``add(inputs)`` per batch (``{column: values}``), ``result()`` the aggregate over all
    batches, as ``spec.compute(all inputs, **options)`` gives it; ``reset()`` to start again."""

    def __init__(self, spec: MetricSpec, options: Mapping[str, Any] | None = None) -> None:
        self.spec = spec
        self.options = dict(options or {})
        # keep the texts where per-example scores cannot be averaged into the aggregate
        self.keeps_texts = spec.corpus or not spec.chunkable(self.options)
        self.reset()

    def reset(self) -> None:
        self._texts: dict[str, list[Any]] = {c: [] for c in self.spec.columns}
        self._means: dict[str, RunningMean] = {}
        self._other: dict[str, Any] = {}
        self._keys: list[str] = []
        self.count = 0

    def add(self, inputs: Mapping[str, list[Any]]) -> None:
        n = len(inputs[next(iter(self.spec.columns))])
        if n == 0:
            return
        if self.keeps_texts:
            self.count += n
            for c in self.spec.columns:
                self._texts[c].extend(inputs[c])
            return
        start = self.count
        self.count += n
        per_example = self.spec.compute(inputs, per_example=True, **self.options)
        scores = score_columns(per_example, n)
        for key, value in per_example.items():
            if key not in self._keys:
                self._keys.append(key)
            if key in scores:
                mean = self._means.setdefault(key, RunningMean())
                for v in value:
                    if v is not None:
                        mean.add(v)
            elif key == "errors" and isinstance(value, list):  # per-example errors, indexed overall
                self._other.setdefault(key, []).extend(
                    dict(e, index=e["index"] + start) if isinstance(e, dict) and "index" in e else e
                    for e in value)
            elif isinstance(value, dict) and all(isinstance(v, (int, float)) for v in value.values()):
                total = self._other.setdefault(key, {})  # counts (judge usage) add up
                for k, v in value.items():
                    total[k] = total.get(k, 0) + v
            else:  # a setting such as a hashcode or the judge's model, the same for every batch
                self._other[key] = value

    def result(self) -> dict[str, Any]:
        """The aggregate over every example added (the mean of each per-example score, or the
        corpus statistic); a ValueError when nothing was added."""
        if not self.count:
            raise ValueError(f"{self.spec.name}: no examples were added")
        if self.keeps_texts:
            return self.spec.compute(self._texts, **self.options)
        return {k: self._means[k].value if k in self._means else self._other[k] for k in self._keys}
