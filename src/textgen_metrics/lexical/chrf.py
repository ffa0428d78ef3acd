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

import math
from collections.abc import Sequence
from typing import Any

from ..ngrams import char_codes, match_statistics, word_codes
from ..results import corpus_result
from ..signature import count_references
from ..significance import DEFAULT_RESAMPLES, DEFAULT_SEED, CorpusStatistics, check_interval_options, sum_statistics
from .checks import flag, texts_and_references, whole
from .sacrebleu_scoring import SacrebleuScoring

__all__ = ["chrf", "chrf_statistics"]


class _Chrf(SacrebleuScoring):
    """chrF's settings, checked, and the sacrebleu ``CHRF`` object whose formulas score."""

    def __init__(self, char_order: Any, word_order: Any, beta: Any, lowercase: Any, whitespace: Any,
                 eps_smoothing: Any) -> None:
        self.char_order = whole("char_order", char_order)
        self.word_order = whole("word_order", word_order)
        if self.char_order + self.word_order == 0:
            raise ValueError("char_order: char_order and word_order are both 0; give at least one order")
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta) or beta < 0:
            raise ValueError(f"beta: {beta!r} must be a non-negative number")
        self.beta = beta
        self.lowercase = flag("lowercase", lowercase)
        self.whitespace = flag("whitespace", whitespace)
        self.eps_smoothing = flag("eps_smoothing", eps_smoothing)
        from sacrebleu.metrics.chrf import CHRF

        sacre: Any = CHRF
        self.sacre = sacre(char_order=self.char_order, word_order=self.word_order, beta=beta,
                          lowercase=self.lowercase, whitespace=self.whitespace,
                          eps_smoothing=self.eps_smoothing)

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


def chrf_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                    char_order: int = 6, word_order: int = 0, beta: float = 2, lowercase: bool = False,
                    whitespace: bool = False, eps_smoothing: bool = False) -> CorpusStatistics:
    """chrF's per-example statistics (against each example's best reference) and its corpus
    formula, for intervals and paired tests."""
    predictions, refs = texts_and_references(predictions, references)
    c = _Chrf(char_order, word_order, beta, lowercase, whitespace, eps_smoothing)
    return c.corpus_statistics(c.statistics(predictions, refs), count_references(refs))


def chrf(predictions: Sequence[str], references: Sequence[str | Sequence[str]], char_order: int = 6,
         word_order: int = 0, beta: float = 2, lowercase: bool = False, whitespace: bool = False,
         eps_smoothing: bool = False, use_aggregator: bool = True, *,
         confidence_level: float | None = None, n_resamples: int = DEFAULT_RESAMPLES,
         seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """chrF (chrF++ with ``word_order=2``) of ``predictions`` against ``references``.

    ``score``: sacrebleu's ``CHRF(...).corpus_score`` (0-100) with ``use_aggregator=True``, the
    per-example ``sentence_score`` list otherwise. Also ``char_order``, ``word_order`` and
    ``beta`` (as Hugging Face's chrf), and ``signature`` (sacrebleu's). ``confidence_level``
    adds ``score_ci``, sacrebleu's ``--confidence`` interval of the corpus score for
    ``n_resamples`` resamples and ``seed``. An empty prediction scores 0.
    """
    predictions, refs = texts_and_references(predictions, references)
    c = _Chrf(char_order, word_order, beta, lowercase, whitespace, eps_smoothing)
    if confidence_level is not None:
        check_interval_options(confidence_level, n_resamples, seed)
    stats = c.statistics(predictions, refs)
    out: dict[str, Any] = {}
    if flag("use_aggregator", use_aggregator):
        out["score"] = float(c.score(sum_statistics(stats)))
    else:
        out["score"] = [float(c.sacre._compute_f_score(row)) for row in stats]
    out.update(char_order=c.char_order, word_order=c.word_order, beta=beta)
    return corpus_result(out, "score", c.corpus_statistics(stats, count_references(refs)), confidence_level,
                         n_resamples, seed)
