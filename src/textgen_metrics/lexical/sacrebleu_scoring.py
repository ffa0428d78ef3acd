"""The part chrF and TER share: a sacrebleu metric object whose own formulas turn summed
statistics into scores and print the signature."""

from __future__ import annotations

from typing import Any

from ..signature import sacrebleu_signature
from ..significance import CorpusStatistics

__all__ = ["SacrebleuScoring"]


class SacrebleuScoring:
    """Scores from sacrebleu's ``_compute_score_from_stats`` on statistics computed here."""

    sacre: Any = None  # the sacrebleu metric (CHRF, TER) with the same settings

    def score(self, stats: Any) -> Any:
        """sacrebleu's score of summed statistics, of sacrebleu's type (float32 for float32
        statistics: the bootstrap keeps sacrebleu's arithmetic)."""
        return self.sacre._compute_score_from_stats(stats).score

    def corpus_statistics(self, stats: list[list[Any]], num_refs: int) -> CorpusStatistics:
        """``stats`` with this metric's formula and signature, for intervals and paired tests."""
        def sign(**fields: Any) -> str:
            return sacrebleu_signature(self.sacre, num_refs, **fields)

        return CorpusStatistics(stats, self.score, sign=sign, sacrebleu=True)
