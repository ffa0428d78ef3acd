"""TER, translation edit rate (Snover et al., 2006), as sacrebleu 2.x computes it.

Per example: the words of the hypothesis and of each reference after sacrebleu's Tercom
tokenizer (lower-cased unless ``case_sensitive``; ``normalized``, ``no_punct`` and
``asian_support`` as sacrebleu's), the fewest edits (insertions, deletions, substitutions and
shifts of phrases) over the references, and the average reference length. The corpus TER sums
both over the examples: ``100 * edits / reference length`` (100 when the references are empty
and the hypotheses are not, 0 when both are). Lower is better.

sacrebleu's quirk, followed on purpose (as ``lexical.rouge`` follows ROUGE-1.5.5's): sacrebleu
2.x tokenizes each reference twice (``Metric._cache_references`` preprocesses it, then
``TER._extract_reference_info`` preprocesses the result again) and the hypothesis once. With
``normalized=True`` the Tercom tokenizer is not idempotent: "Mary's." becomes "mary's ." on the
first pass (the possessive rule needs a space after "'s", the period is split off later) and
"mary 's ." on the second. So the identical pair "The priest absolved him and told him to say
ten Hail Mary's." scores 14.29 (two edits in fourteen reference words), not 0, as in sacrebleu
and in Hugging Face's ``ter``, which calls it. References here are tokenized twice as well, for
every option, so every score is sacrebleu's.

The edits come from the compiled core (``_native.ter_edits``, ``_native/tercom.hpp``):
sacrebleu's algorithm with the same results, over the whole batch in one call without the GIL
(tokenization stays in Python); the scores from sacrebleu's ``TER`` formulas. :class:`Ter` is the metric:
per-example statistics ``[fewest edits, average reference length]``, summed for the corpus score.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from .. import _native
from ..metric import CorpusOptions, Stats, option
from ..significance import CorpusStatistics, sum_statistics
from ..tokenizers import TercomTokenizer
from .checks import flag
from .sacrebleu_scoring import SacrebleuMetric, SacrebleuScoring

__all__ = ["Ter", "TerOptions", "ter", "ter_statistics"]


def _alias(name: str, value: Any, hf_name: str, hf_value: Any) -> bool:
    """A sacrebleu option, or its Hugging Face name (``ignore_punct``, ``support_zh_ja_chars``)."""
    given = flag(name, value)
    if hf_value is None:
        return given
    alias = flag(hf_name, hf_value)
    if given and not alias:
        raise ValueError(f"{hf_name}: {hf_name}=False contradicts {name}=True; give one of them")
    return alias


class _Ter(SacrebleuScoring):
    """TER's settings, its tokenizer and the sacrebleu ``TER`` object whose formulas score."""

    def __init__(self, normalized: Any, no_punct: Any, asian_support: Any, case_sensitive: Any) -> None:
        from sacrebleu.metrics.ter import TER

        self.tokenizer = TercomTokenizer(flag("normalized", normalized), flag("no_punct", no_punct),
                                         flag("asian_support", asian_support),
                                         flag("case_sensitive", case_sensitive))
        t = self.tokenizer
        self.sacre = TER(normalized=t.normalized, no_punct=t.no_punct, asian_support=t.asian_support,
                         case_sensitive=t.case_sensitive)

    def reference_words(self, reference: str) -> list[str]:
        """A reference's words as sacrebleu's TER scores them: the tokenizer applied twice (see
        the module's docstring; with ``normalized``, "Mary's." gives "mary 's .")."""
        tok = self.tokenizer
        return tok(" ".join(tok(reference)))

    def statistics(self, predictions: list[str], references: list[list[str]]) -> list[list[Any]]:
        """Per example sacrebleu's ``[fewest edits, average reference length]``."""
        tok = self.tokenizer
        words_refs = [[self.reference_words(ref) for ref in refs] for refs in references]
        edits = _native.ter_edits([tok(pred) for pred in predictions], words_refs)
        return [[best, ref_lengths / len(refs)] for (best, ref_lengths), refs in zip(edits, references, strict=True)]


def _alias_flag(name: str, value: Any) -> Any:
    return None if value is None else flag(name, value)


@dataclasses.dataclass(frozen=True)
class TerOptions(CorpusOptions):
    normalized: bool = option(False, check=flag, doc="Tercom's normalisation of punctuation and XML entities")
    no_punct: bool = option(False, check=flag, doc="remove punctuation (Hugging Face's name: ignore_punct)")
    asian_support: bool = option(False, check=flag,
                                 doc="with normalized, split CJK characters; with no_punct, remove CJK "
                                     "punctuation too (Hugging Face's name: support_zh_ja_chars)")
    case_sensitive: bool = option(False, check=flag, doc="keep case (otherwise lower-cased)")
    use_aggregator: bool = option(True, check=flag, front_end=True,
                                  doc="True: the corpus score; False: per-example lists")
    ignore_punct: bool | None = option(None, kind="bool", check=_alias_flag, kw_only=True,
                                       doc="Hugging Face's name of no_punct")
    support_zh_ja_chars: bool | None = option(None, kind="bool", check=_alias_flag, kw_only=True,
                                              doc="Hugging Face's name of asian_support")

    def check(self) -> None:
        self.settings()

    def settings(self) -> tuple[bool, bool, bool, bool]:
        """(normalized, no_punct, asian_support, case_sensitive), Hugging Face's names applied."""
        no_punct = _alias("no_punct", self.no_punct, "ignore_punct", self.ignore_punct)
        asian = _alias("asian_support", self.asian_support, "support_zh_ja_chars", self.support_zh_ja_chars)
        return self.normalized, no_punct, asian, self.case_sensitive


class Ter(SacrebleuMetric):
    """TER of ``predictions`` against ``references`` (a string or a list of strings each).

    ``score``: sacrebleu's ``TER(...).corpus_score`` (0 and up; lower is better; 100 * edits /
    reference length) with ``use_aggregator=True``, the per-example ``sentence_score`` list
    otherwise; ``num_edits`` and ``ref_length`` (sums, or per-example lists), as Hugging Face's
    ter; ``signature`` (sacrebleu's). ``ignore_punct`` and ``support_zh_ja_chars`` are Hugging
    Face's names of ``no_punct`` and ``asian_support``. ``confidence_level`` adds ``score_ci``,
    the percentile bootstrap interval for ``n_resamples`` resamples and ``seed`` (never below
    0), or with ``interval="sacrebleu"`` sacrebleu's ``--confidence`` interval. Empty
    references against a non-empty prediction score 100; both empty, 0.
    """

    name = "ter"
    Options = TerOptions
    score_range = (0.0, 100.0)
    lower_is_better = True

    @functools.cached_property
    def scoring(self) -> Any:
        return _Ter(*self.options.settings())

    @functools.cached_property
    def statistics_settings(self) -> str:
        signature: str = self.scoring.tokenizer.signature
        return signature + "|" + "|".join(str(x) for x in self.options.settings())

    def aggregate(self, stats: Stats) -> dict[str, Any]:
        total = self.scoring.sacre._compute_score_from_stats(sum_statistics(stats.columns["stats"]))
        return {"score": float(total.score), "num_edits": total.num_edits, "ref_length": total.ref_length}

    def per_example_values(self, stats: Stats) -> dict[str, list[Any]]:
        scores = [self.scoring.sacre._compute_score_from_stats(row) for row in stats.columns["stats"]]
        return {"score": [float(s.score) for s in scores], "num_edits": [s.num_edits for s in scores],
                "ref_length": [s.ref_length for s in scores]}


ter = Ter.function()


def ter_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any
                   ) -> CorpusStatistics:
    """TER's per-example statistics and its corpus formula, as its intervals and paired tests
    resample them."""
    metric = Ter(**options)
    return metric.resampling(metric.statistics({"predictions": predictions, "references": references}))
