"""The part chrF and TER share: a sacrebleu metric object whose own formulas turn summed
statistics into scores."""

from __future__ import annotations

from typing import Any

__all__ = ["SacrebleuScoring"]


class SacrebleuScoring:
    """Scores from sacrebleu's ``_compute_score_from_stats`` on statistics computed here."""

    sacre: Any = None  # the sacrebleu metric (CHRF, TER) with the same settings

    def score(self, stats: Any) -> Any:
        """sacrebleu's score of summed statistics, of sacrebleu's type (float32 for float32
        statistics: the bootstrap keeps sacrebleu's arithmetic)."""
        return self.sacre._compute_score_from_stats(stats).score
