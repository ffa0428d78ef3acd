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

The edits come from :mod:`textgen_metrics.lexical.tercom`, sacrebleu's algorithm with the same
results, faster; the scores from sacrebleu's ``TER`` formulas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..results import corpus_result
from ..signature import count_references
from ..significance import DEFAULT_RESAMPLES, DEFAULT_SEED, CorpusStatistics, check_interval_options, sum_statistics
from ..tokenizers import TercomTokenizer
from .checks import flag, texts_and_references
from .sacrebleu_scoring import SacrebleuScoring
from .tercom import translation_edit_rate

__all__ = ["ter", "ter_statistics"]


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
        out: list[list[Any]] = []
        for pred, refs in zip(predictions, references, strict=True):
            words_hyp = tok(pred)
            best = int(1e16)
            ref_lengths = 0
            for ref in refs:
                edits, ref_len = translation_edit_rate(words_hyp, self.reference_words(ref))
                ref_lengths += ref_len
                if edits < best:
                    best = edits
            out.append([best, ref_lengths / len(refs)])
        return out


def ter_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                   normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                   case_sensitive: bool = False) -> CorpusStatistics:
    """TER's per-example statistics and its corpus formula, for intervals and paired tests."""
    predictions, refs = texts_and_references(predictions, references)
    t = _Ter(normalized, no_punct, asian_support, case_sensitive)
    return t.corpus_statistics(t.statistics(predictions, refs), count_references(refs))


def ter(predictions: Sequence[str], references: Sequence[str | Sequence[str]], normalized: bool = False,
        no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False,
        use_aggregator: bool = True, *, ignore_punct: bool | None = None,
        support_zh_ja_chars: bool | None = None, confidence_level: float | None = None,
        n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """TER of ``predictions`` against ``references`` (a string or a list of strings each).

    ``score``: sacrebleu's ``TER(...).corpus_score`` (0-100 and above; lower is better) with
    ``use_aggregator=True``, the per-example ``sentence_score`` list otherwise; ``num_edits``
    and ``ref_length`` (sums, or per-example lists), as Hugging Face's ter; ``signature``
    (sacrebleu's). ``ignore_punct`` and ``support_zh_ja_chars`` are Hugging Face's names of
    ``no_punct`` and ``asian_support``. ``confidence_level`` adds ``score_ci``, sacrebleu's
    ``--confidence`` interval for ``n_resamples`` resamples and ``seed``.
    """
    predictions, refs = texts_and_references(predictions, references)
    no_punct = _alias("no_punct", no_punct, "ignore_punct", ignore_punct)
    asian_support = _alias("asian_support", asian_support, "support_zh_ja_chars", support_zh_ja_chars)
    t = _Ter(normalized, no_punct, asian_support, case_sensitive)
    if confidence_level is not None:
        check_interval_options(confidence_level, n_resamples, seed)
    stats = t.statistics(predictions, refs)
    out: dict[str, Any]
    if flag("use_aggregator", use_aggregator):
        total = t.sacre._compute_score_from_stats(sum_statistics(stats))
        out = {"score": float(total.score), "num_edits": total.num_edits, "ref_length": total.ref_length}
    else:
        scores = [t.sacre._compute_score_from_stats(row) for row in stats]
        out = {"score": [float(s.score) for s in scores], "num_edits": [s.num_edits for s in scores],
               "ref_length": [s.ref_length for s in scores]}
    return corpus_result(out, "score", t.corpus_statistics(stats, count_references(refs)), confidence_level,
                         n_resamples, seed)
