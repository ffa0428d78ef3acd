"""A corpus metric's result completed with its interval and signature, for the functions of
``lexical/ter.py`` (kept until that module's own rework). Every metric's result now comes from
its :class:`~textgen_metrics.metric.Metric` (:meth:`~textgen_metrics.metric.Metric.score`).
"""

from __future__ import annotations

from typing import Any

from .significance import CorpusStatistics, corpus_interval

__all__ = ["corpus_result"]


def corpus_result(out: dict[str, Any], key: str, stats: CorpusStatistics, confidence_level: float | None,
                  n_resamples: int, seed: int) -> dict[str, Any]:
    """A corpus metric's result completed: ``<key>_ci``, the bootstrap interval of the corpus
    score from ``stats`` (with a ``confidence_level``), and ``signature`` (``stats.sign``)."""
    fields: dict[str, Any] = {}
    if confidence_level is not None:
        out[f"{key}_ci"] = list(corpus_interval(stats, confidence_level, n_resamples, seed))
        fields = {"n_bootstrap": n_resamples, "seed": seed, "ci": confidence_level}
    if stats.sign is not None:
        out["signature"] = stats.sign(**fields)
    return out
