"""Google BLEU (GLEU, Wu et al. 2016) as nltk's ``corpus_gleu`` and ``sentence_gleu``.

Per example: the n-grams of orders ``min_len`` to ``max_len`` of the prediction and of each
reference, their clipped matches and the larger of the two totals, kept for the reference with
the best GLEU (nltk's rule; ties to the first); an example without n-grams on either side is
skipped by nltk's corpus formula, and scores 0 alone. The corpus score is the summed matches
over the summed totals, which is not the mean of the sentence scores.

The statistics are computed by the compiled core (``_native.BleuCore``), as BLEU's: from the
texts for ``13a`` and ``none``, from the tokens of any other tokenizer.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from .. import _native
from ..metric import CorpusMetric, CorpusOptions, Stats, option
from ..signature import bootstrap_fields
from ..signature import signature as make_signature
from ..significance import CorpusStatistics
from ..tokenizers import Tokenizer, get_tokenizer
from .bleu import core_input
from .checks import flag

__all__ = ["GoogleBleu", "GoogleBleuOptions", "google_bleu", "google_bleu_statistics"]


def _order(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}: {value!r} must be a positive integer")
    return value


def _threads(name: str, value: Any) -> Any:
    _native.resolve_threads(value)  # a ValueError naming num_threads, before any work
    return value


@dataclasses.dataclass(frozen=True)
class GoogleBleuOptions(CorpusOptions):
    tokenizer: Any = option(None, kind="str", doc="13a (default) or any sacrebleu tokenizer (intl, none, "
                                                       "char, zh, ja-mecab, ko-mecab), or a function str -> list of "
                                                       "str")
    min_len: int = option(1, check=_order, doc="the smallest n-gram order")
    max_len: int = option(4, check=_order, doc="the largest n-gram order")
    use_aggregator: bool = option(True, check=flag, front_end=True,
                                  doc="True: the corpus score; False: per-example lists")
    num_threads: int | None = option(1, kind="int", check=_threads, kw_only=True,
                                     doc="threads of the core's n-gram counting (None: every core)")

    def check(self) -> None:
        if self.min_len > self.max_len:
            raise ValueError(f"min_len: {self.min_len} is greater than max_len ({self.max_len})")


def _gleu_score(row: Any) -> float:
    return float(row[0]) / float(row[1]) if row[1] else 0.0


class GoogleBleu(CorpusMetric):
    """Google BLEU: nltk ``corpus_gleu`` (aggregate) or ``sentence_gleu`` (per example), in [0, 1].

    The n-grams of orders ``min_len`` to ``max_len`` on ``tokenizer``'s tokens (13a by
    default); with several references each example keeps the best one. An empty prediction
    scores 0. ``confidence_level`` adds ``google_bleu_ci``, a bootstrap interval of the corpus
    score over resamples of the examples' statistics: the percentile interval (within [0, 1]),
    or with ``interval="sacrebleu"`` the rule of sacrebleu's intervals (mean ± half the spread);
    ``signature`` names the tokenizer, the n-gram orders and the number of references.
    """

    name = "google_bleu"
    Options = GoogleBleuOptions
    STATISTICS = ("matches", "total")

    @functools.cached_property
    def tokenizer(self) -> Tokenizer:
        return get_tokenizer(self.options.tokenizer, default="13a")

    def statistic_names(self) -> tuple[str, ...]:
        return self.STATISTICS

    def settings_signature(self) -> str:
        return make_signature("google_bleu", tok=self.tokenizer.signature,
                              ngram=f"{self.options.min_len}-{self.options.max_len}")

    def signature(self, nrefs: int | None, *, per_example: bool = False, n_bootstrap: int | None = None,
                  seed: int | None = None, test: tuple[str, int] | None = None, ci: float | None = None) -> str:
        """``google_bleu|nrefs:..|tok:..|ngram:min-max|...``."""
        return make_signature("google_bleu", nrefs=None if nrefs is None else "var" if nrefs == -1 else nrefs,
                              tok=self.tokenizer.signature, ngram=f"{self.options.min_len}-{self.options.max_len}",
                              **bootstrap_fields(n_bootstrap, seed, test, ci))

    def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        refs = [[r] if isinstance(r, str) else list(r) for r in inputs["references"]]
        preds, ref_in, code, lowercase = core_input(self.tokenizer, inputs["predictions"], refs)
        o = self.options
        matches, total = _native.bleu_core().gleu_stats(preds, ref_in, code, lowercase, o.min_len, o.max_len,
                                                        _native.resolve_threads(o.num_threads))
        return {"matches": matches, "total": total}

    def aggregate(self, stats: Stats) -> dict[str, Any]:
        n_all = sum(stats.columns["total"])
        return {"google_bleu": sum(stats.columns["matches"]) / n_all if n_all else 0.0}

    def per_example_values(self, stats: Stats) -> dict[str, list[Any]]:
        return {"google_bleu": [m / t if t else 0.0
                                for m, t in zip(stats.columns["matches"], stats.columns["total"], strict=True)]}

    def resampling(self, stats: Stats) -> CorpusStatistics:
        rows = [[m, t] for m, t in zip(stats.columns["matches"], stats.columns["total"], strict=True)]
        return CorpusStatistics(rows, _gleu_score)


google_bleu = GoogleBleu.function()


def google_bleu_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                           **options: Any) -> CorpusStatistics:
    """Google BLEU's per-example statistics ``[matches, total]`` of the best reference, as its
    intervals and paired tests resample them."""
    metric = GoogleBleu(**options)
    return metric.resampling(metric.statistics({"predictions": predictions, "references": references}))
