"""chrF (Popović 2015) and chrF++ (Popović 2017, ``word_order=2``) as sacrebleu 2.x computes them.

Per example and reference: for character n-grams of orders 1..``char_order`` (whitespace
removed unless ``whitespace=True``) and word n-grams of orders 1..``word_order`` (words with
a leading or trailing punctuation mark split off, as sacrebleu's ``_remove_punctuation``), the
hypothesis count, the reference count and the clipped matches; with several references, the
statistics of the reference with the best sentence chrF (the first on ties). The corpus score
sums the statistics over the examples, then sacrebleu's ``_compute_f_score``: the F-beta of the
precision and recall averaged over the orders that have n-grams on both sides, or with
``eps_smoothing=True`` the mean of the per-order F-scores (chrF++.py, Moses and nltk). Scores
are on sacrebleu's 0-100 scale, as Hugging Face's chrf module.

The counts come from :mod:`textgen_metrics.ngrams` (integer codes sorted with numpy, several
times faster than sacrebleu's ``Counter`` objects, same integers); the scores from sacrebleu's
own ``CHRF`` formulas, so every number is sacrebleu's.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any

from ..metric import CorpusOptions, Stats, option
from ..ngrams import char_codes, match_statistics, word_codes
from ..significance import CorpusStatistics, sum_statistics
from .checks import flag, whole
from .sacrebleu_scoring import SacrebleuMetric, SacrebleuScoring

__all__ = ["Chrf", "ChrfOptions", "chrf", "chrf_statistics"]


class _Chrf(SacrebleuScoring):
    """chrF's settings (checked by :class:`ChrfOptions`) and the sacrebleu ``CHRF`` object whose
    formulas score."""

    def __init__(self, options: ChrfOptions) -> None:
        self.char_order, self.word_order = options.char_order, options.word_order
        self.lowercase, self.whitespace = options.lowercase, options.whitespace
        from sacrebleu.metrics.chrf import CHRF

        sacre: Any = CHRF
        self.sacre = sacre(char_order=self.char_order, word_order=self.word_order, beta=options.beta,
                           lowercase=self.lowercase, whitespace=self.whitespace,
                           eps_smoothing=options.eps_smoothing)

    def statistics(self, predictions: list[str], references: list[list[str]]) -> list[list[int]]:
        """Per example: sacrebleu's chrF statistics against its best reference."""
        lower = self.lowercase
        hyps = [p.lower() if lower else p for p in predictions]
        refs = [[r.lower() if lower else r for r in rs] for rs in references]
        pair_hyps = [h for h, rs in zip(hyps, refs, strict=True) for _ in rs]
        pair_refs = [r for rs in refs for r in rs]
        blocks = []
        if self.char_order:
            def chars(texts: list[str]) -> list[str]:
                return texts if self.whitespace else ["".join(t.split()) for t in texts]

            blocks.append(match_statistics(char_codes(chars(pair_hyps)), char_codes(chars(pair_refs)),
                                           self.char_order))
        if self.word_order:
            split = self.sacre._remove_punctuation
            memo: dict[str, list[str]] = {}

            def words(texts: list[str]) -> list[list[str]]:
                out = []
                for t in texts:
                    w = memo.get(t)
                    if w is None:
                        w = memo[t] = split(t)
                    out.append(w)
                return out

            vocabulary: dict[str, int] = {}
            blocks.append(match_statistics(word_codes(words(pair_hyps), vocabulary),
                                           word_codes(words(pair_refs), vocabulary), self.word_order))
        import numpy as np

        rows: list[list[int]] = np.concatenate(blocks, axis=1).reshape(len(pair_refs), -1).tolist()
        out: list[list[int]] = []
        at = 0
        f_score = self.sacre._compute_f_score
        for rs in refs:
            if len(rs) == 1:
                out.append(rows[at])
            else:  # sacrebleu: the reference with the best sentence chrF, the first on ties
                best, best_f = rows[at], -1.0
                for row in rows[at:at + len(rs)]:
                    f = f_score(row)
                    if f > best_f:
                        best, best_f = row, f
                out.append(best)
            at += len(rs)
        return out


def _order(name: str, value: Any) -> int:
    return whole(name, value)


def _beta(name: str, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name}: {value!r} must be a non-negative number")
    return value


@dataclasses.dataclass(frozen=True)
class ChrfOptions(CorpusOptions):
    char_order: int = option(6, check=_order, doc="the largest character n-gram order")
    word_order: int = option(0, check=_order, doc="the largest word n-gram order; 2 gives chrF++")
    beta: float = option(2, kind="number", check=_beta, doc="recall counts beta times as much as precision "
                                                                   "in the F-score")
    lowercase: bool = option(False, check=flag, doc="compare lower-cased texts")
    whitespace: bool = option(False, check=flag, doc="keep whitespace in the character n-grams")
    eps_smoothing: bool = option(False, check=flag,
                                 doc="the mean of the per-order F-scores with a tiny epsilon for empty orders "
                                     "(chrF++.py, Moses, nltk) instead of sacrebleu's default, the F-score of "
                                     "precision and recall averaged over the orders that have n-grams on both sides")
    use_aggregator: bool = option(True, check=flag, front_end=True,
                                  doc="True: the corpus score; False: per-example lists")

    def check(self) -> None:
        if self.char_order + self.word_order == 0:
            raise ValueError("char_order: char_order and word_order are both 0; give at least one order")


class Chrf(SacrebleuMetric):
    """chrF (chrF++ with ``word_order=2``) of ``predictions`` against ``references``.

    ``score``: sacrebleu's ``CHRF(...).corpus_score`` (0-100) with ``use_aggregator=True``, the
    per-example ``sentence_score`` list otherwise (each example against its best reference).
    Also ``char_order``, ``word_order`` and ``beta`` (as Hugging Face's chrf), and ``signature``
    (sacrebleu's). ``confidence_level`` adds ``score_ci``, the bootstrap interval of the corpus
    score for ``n_resamples`` resamples and ``seed``: the percentile interval (within 0-100), or
    with ``interval="sacrebleu"`` sacrebleu's ``--confidence`` interval (mean ± half the spread,
    which can leave the range). An empty prediction scores 0.
    """

    name = "chrf"
    Options = ChrfOptions
    score_range = (0.0, 100.0)

    @functools.cached_property
    def scoring(self) -> _Chrf:
        return _Chrf(self.options)

    @functools.cached_property
    def statistics_settings(self) -> str:
        o = self.options  # the n-gram counts depend on these only
        return (f"chrf|c:{o.char_order}|w:{o.word_order}|case:{'lc' if o.lowercase else 'mixed'}"
                f"|ws:{'yes' if o.whitespace else 'no'}")

    def aggregate(self, stats: Stats) -> dict[str, Any]:
        return {"score": float(self.scoring.score(sum_statistics(stats.columns["stats"])))}

    def per_example_values(self, stats: Stats) -> dict[str, list[Any]]:
        f_score = self.scoring.sacre._compute_f_score
        return {"score": [float(f_score(row)) for row in stats.columns["stats"]]}

    def extras(self) -> dict[str, Any]:
        o = self.options
        return {"char_order": o.char_order, "word_order": o.word_order, "beta": o.beta}


chrf = Chrf.function()


def chrf_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any
                    ) -> CorpusStatistics:
    """chrF's per-example statistics (against each example's best reference) and its corpus
    formula, as its intervals and paired tests resample them."""
    metric = Chrf(**options)
    return metric.resampling(metric.statistics({"predictions": predictions, "references": references}))
