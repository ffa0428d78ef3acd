"""A metric fed batch by batch, with the result of everything fed so far.

Used by the Trainer hook's ``batch_eval_metrics=True`` mode, where transformers hands over one
evaluation batch at a time. Each batch becomes the metric's statistics
(:meth:`~textgen_metrics.metric.Metric.statistics`: per-example scores for a mean metric,
per-example sufficient statistics for a corpus metric such as BLEU), merged with those of the
batches before (``Stats + Stats``, exact); the result is the metric's score of the merged
statistics, equal to the one-call result to the last digit. Nothing of a batch is kept but its
statistics, except for a metric whose statistics are its inputs (BERTScore: see
:class:`~textgen_metrics.metric.ScoredTogether`), as it declares. An LLM-guided metric judges
each batch as it comes (its statistics: the per-example scores, verdicts and the judge's usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .metric import Metric, Result, Stats

__all__ = ["MetricStream"]


class MetricStream:
    """``add(inputs)`` per batch (``{column: values}``), ``result()`` the aggregate over all
    batches, as ``metric.compute(all inputs, **options)`` gives it; ``reset()`` to start again."""

    def __init__(self, metric: type[Metric], options: Mapping[str, Any] | None = None) -> None:
        self.spec = metric
        self.options = dict(options or {})
        self.metric = metric(**self.options)  # the options checked once, before any batch
        # a metric whose statistics are its inputs keeps them (declared by the metric itself)
        self.keeps_texts = metric.scores_together
        self.reset()

    def reset(self) -> None:
        self._stats: Stats | None = None

    @property
    def count(self) -> int:
        return 0 if self._stats is None else self._stats.count

    def add(self, inputs: Mapping[str, list[Any]]) -> None:
        if not len(inputs[next(iter(self.spec.columns))]):
            return
        stats = self.metric.statistics(inputs)
        self._stats = stats if self._stats is None else self._stats + stats

    def score(self) -> Result:
        """The metric's result over every example added; a ValueError when nothing was added."""
        if self._stats is None:
            raise ValueError(f"{self.spec.name}: no examples were added")
        return self.metric.score(self._stats)

    def result(self) -> dict[str, Any]:
        """The aggregate over every example added, as the library function gives it."""
        return self.score().as_dict(True)
