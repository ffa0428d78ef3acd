"""The part chrF and TER share: a sacrebleu metric object whose own formulas turn summed
statistics into scores, and the Metric built on it (one statistics column, sacrebleu's
signature, the corpus score resampled with sacrebleu's arithmetic)."""

from __future__ import annotations

from typing import Any

from ..metric import CorpusMetric, Stats
from ..signature import sacrebleu_signature
from ..significance import CorpusStatistics

__all__ = ["SacrebleuScoring", "SacrebleuMetric"]


class SacrebleuScoring:
    """Scores from sacrebleu's ``_compute_score_from_stats`` on statistics computed here."""

    sacre: Any = None  # the sacrebleu metric (CHRF, TER) with the same settings

    def score(self, stats: Any) -> Any:
        """sacrebleu's score of summed statistics, of sacrebleu's type (float32 for float32
        statistics: the bootstrap keeps sacrebleu's arithmetic)."""
        return self.sacre._compute_score_from_stats(stats).score


class SacrebleuMetric(CorpusMetric):
    """A corpus metric scored by sacrebleu's formulas (chrF, TER): :attr:`scoring` computes each
    example's statistics (against its references) and scores their sums."""

    @property
    def scoring(self) -> Any:
        """The metric's ``SacrebleuScoring`` (``statistics(predictions, references)``, ``score``,
        ``sacre``) for its options."""
        raise NotImplementedError

    def keys(self) -> tuple[str, ...]:
        return ("score",)

    def statistic_names(self) -> tuple[str, ...]:
        return ("stats",)

    def settings_signature(self) -> str:
        return self.signature(1)

    def signature(self, nrefs: int | None, *, per_example: bool = False, n_bootstrap: int | None = None,
                  seed: int | None = None, test: tuple[str, int] | None = None, ci: float | None = None) -> str:
        return sacrebleu_signature(self.scoring.sacre, 1 if nrefs is None else nrefs, n_bootstrap=n_bootstrap,
                                   seed=seed, test=test, ci=ci)

    def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        refs = [[r] if isinstance(r, str) else list(r) for r in inputs["references"]]
        return {"stats": self.scoring.statistics(inputs["predictions"], refs)}

    def resampling(self, stats: Stats) -> CorpusStatistics:
        return CorpusStatistics(stats.columns["stats"], self.scoring.score, sacrebleu=True)
