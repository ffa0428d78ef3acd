"""BLEU (Papineni et al., 2002), corpus and sentence level, and Google BLEU (GLEU).

Corpus BLEU follows sacrebleu 2.x ``corpus_bleu``: clipped n-gram counts against the
per-n-gram maximum over the example's references, the closest reference length (the shorter
one on ties), the statistics summed over the corpus, then sacrebleu's own ``compute_bleu``
(geometric mean of the precisions with its smoothing, times the brevity penalty). By default
there is no smoothing (``smooth_method="none"``), as Hugging Face's bleu; sacrebleu's
``smooth_method`` (``none``, ``floor``, ``add-k``, ``exp``), ``smooth_value`` and
``effective_order`` give sacrebleu's scores for those settings, per example too.

Hugging Face's options are kept beside them: ``smooth=True`` is Lin and Och's add-one on every
order of the corpus precisions; ``weights`` make the corpus value nltk's ``corpus_bleu`` with
those weights; per example (``use_aggregator=False``) without a ``smooth_method`` the scores
are nltk's ``sentence_bleu`` (method0, or method2 with ``smooth=True``). GLEU follows nltk's
``corpus_gleu`` / ``sentence_gleu``.

Tokens: every sacrebleu tokenizer by name (``13a`` default, ``intl``, ``none``, ``char``,
``zh``, ``ja-mecab``, ``ko-mecab``) or a callable; ``lowercase=True`` lower-cases the text
before any tokenizer, as sacrebleu. Statistics are kept per example, so the corpus score, the
bootstrap interval (``confidence_level``) and the paired tests of ``compare`` reuse them.

The statistics (clipped n-gram matches and totals per order, closest reference length; GLEU's
best matches and total) are computed by the compiled core (``_native.BleuCore``) over the whole
batch in one call, without the GIL, on ``num_threads`` threads: from the texts for ``13a`` and
``none`` (tokenised in the core), from the tokens of any other tokenizer. Python only turns the
summed statistics into scores, with sacrebleu's or nltk's formula.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .. import _native
from ..errors import OptionError, OptionTypeError
from ..metric import AnyOptions, CorpusMetric, CorpusOptions, Stats, option
from ..signature import sacrebleu_signature, with_fields
from ..significance import CorpusStatistics
from ..tokenizers import Lowercased, NoneTokenizer, Tokenizer, Tokenizer13a, get_tokenizer
from .checks import flag

__all__ = ["Bleu", "BleuOptions", "bleu", "bleu_statistics", "BleuCounts", "corpus_stats", "SMOOTH_METHODS",
           "core_input"]

_FLOAT_MIN = sys.float_info.min
SMOOTH_METHODS = ("none", "floor", "add-k", "exp")

# what the core reads: the texts themselves (13a / str.split() in the core) or token lists
_CoreInput = tuple[Sequence[str] | list[list[str]], Sequence[Sequence[str]] | list[list[list[str]]],
                   _native.BleuInput, bool]


def core_input(tok: Tokenizer, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> _CoreInput:
    """``(predictions, references, input code, lowercase)`` for ``BleuCore``: the texts when
    the core has the tokenizer (``13a``, ``none``, lower-cased or not), else ``tok``'s tokens."""
    inner, lowercase = (tok.inner, True) if isinstance(tok, Lowercased) else (tok, False)
    if type(inner) is Tokenizer13a:
        return predictions, references, _native.BleuInput.TEXT_13A, lowercase or inner.lowercase
    if type(inner) is NoneTokenizer:
        return predictions, references, _native.BleuInput.TEXT_SPLIT, lowercase
    flat = iter(tok.batch([r for refs in references for r in refs]))
    ref_tokens = [[next(flat) for _ in refs] for refs in references]
    return tok.batch(predictions), ref_tokens, _native.BleuInput.TOKENS, False


class BleuCounts(NamedTuple):
    """BLEU's sufficient statistics, one entry per example: hypothesis length, closest reference
    length (the shorter on ties), and per order the clipped matches and the n-gram totals."""

    hyp_len: list[int]
    ref_len: list[int]
    correct: list[list[int]]
    total: list[list[int]]

    def sacrebleu_rows(self) -> list[list[int]]:
        """sacrebleu's segment statistics: ``[hyp_len, ref_len, correct..., total...]`` each."""
        return [[h, r, *c, *t] for h, r, c, t in zip(self.hyp_len, self.ref_len, self.correct, self.total,
                                                      strict=True)]

    def denominators(self) -> list[list[int]]:
        """nltk's ``modified_precision`` denominators: the totals, at least 1 per order."""
        return [[t if t > 0 else 1 for t in row] for row in self.total]


def corpus_stats(predictions: Sequence[str], references: Sequence[Sequence[str]], tokenizer: Tokenizer,
                 max_order: int, num_threads: int | None = 1) -> BleuCounts:
    """Per-example :class:`BleuCounts` (references: a list of strings per example), computed by
    the core in one call over the whole batch."""
    preds, refs, code, lowercase = core_input(tokenizer, predictions, references)
    hyp_len, ref_len, correct, total = _native.bleu_core().bleu_stats(
        preds, refs, code, lowercase, max_order, _native.resolve_threads(num_threads))
    return BleuCounts(hyp_len, ref_len, correct, total)


def _nltk_brevity_penalty(ref_len: float, hyp_len: float) -> float:
    if hyp_len > ref_len:
        return 1
    if hyp_len == 0:
        return 0
    return math.exp(1 - ref_len / hyp_len)


def _nltk_bleu(numerators: Sequence[float], denominators: Sequence[float], hyp_len: float,
               ref_len: float, weights: Sequence[float], smooth: bool) -> float:
    """nltk ``corpus_bleu`` from summed statistics (method0, or method2 when ``smooth``)."""
    if numerators[0] == 0:
        return 0.0
    bp = _nltk_brevity_penalty(ref_len, hyp_len)
    probs = []
    for i, (num, den) in enumerate(zip(numerators, denominators, strict=True)):
        if smooth and i != 0:
            num, den = num + 1, den + 1
        probs.append(num / den if num != 0 else _FLOAT_MIN)
    s = math.fsum(w * math.log(p) for w, p in zip(weights, probs, strict=True) if p > 0)
    return float(bp * math.exp(s))


def _brevity_penalty(sys_len: float, ref_len: float) -> float:
    """sacrebleu's brevity penalty."""
    if sys_len < ref_len:
        return math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    return 1.0


def _lin_och(correct: Sequence[float], total: Sequence[float], sys_len: float, ref_len: float,
             max_order: int) -> float:
    """Hugging Face bleu's ``smooth=True``: (m+1)/(t+1) on every order, uniform weights."""
    precisions = [(c + 1.0) / (t + 1.0) for c, t in zip(correct, total, strict=True)]
    geo = math.exp(sum((1.0 / max_order) * math.log(p) for p in precisions))
    return geo * _brevity_penalty(sys_len, ref_len)


def _weights(max_order: Any, weights: Any) -> tuple[tuple[float, ...] | None, int]:
    if weights is None:
        if not isinstance(max_order, int) or isinstance(max_order, bool) or max_order < 1:
            raise OptionError(f"max_order: {max_order!r} must be a positive integer")
        return None, max_order
    try:
        weights = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise OptionTypeError(f"weights: expected a sequence of numbers, got {weights!r}") from None
    if not weights or any(w < 0 or not math.isfinite(w) for w in weights):
        raise OptionError(f"weights: {weights!r} must be a non-empty sequence of finite non-negative numbers")
    return weights, len(weights)


class _Settings:
    """BLEU's settings, checked once: which formula gives the corpus and the sentence scores."""

    def __init__(self, tokenizer: Any, max_order: Any, smooth: Any, weights: Any, lowercase: Any,
                 smooth_method: Any, smooth_value: Any, effective_order: Any) -> None:
        self.weights, self.max_order = _weights(max_order, weights)
        self.smooth = flag("smooth", smooth)
        self.lowercase = flag("lowercase", lowercase)
        self.effective_order = flag("effective_order", effective_order)
        if smooth_method is not None and smooth_method not in SMOOTH_METHODS:
            raise OptionError(f"smooth_method: {smooth_method!r} is not one of {list(SMOOTH_METHODS)}")
        # sacrebleu's formula for both levels when one of its own options is asked for
        self.sacrebleu = smooth_method is not None or self.effective_order
        if self.sacrebleu and (self.smooth or self.weights is not None):
            raise OptionError("smooth_method: give sacrebleu's smooth_method/effective_order or Hugging "
                             "Face's smooth/weights, not both")
        if smooth_value is not None and (isinstance(smooth_value, bool)
                                         or not isinstance(smooth_value, (int, float))
                                         or not math.isfinite(smooth_value) or smooth_value < 0):
            raise OptionError(f"smooth_value: {smooth_value!r} must be a non-negative number")
        self.smooth_method: str = smooth_method or "none"
        self.smooth_value = smooth_value
        self.tokenizer: Tokenizer = get_tokenizer(tokenizer, lowercase=self.lowercase, default="13a")
        from sacrebleu.metrics.bleu import BLEU

        self.sacre = BLEU(tokenize="none", smooth_method=self.smooth_method, smooth_value=smooth_value,
                          max_ngram_order=self.max_order, effective_order=self.effective_order,
                          lowercase=self.lowercase)

    def sacrebleu_score(self, stats: Sequence[Any]) -> Any:
        """sacrebleu's ``BLEUScore`` from summed statistics (its ``compute_bleu``)."""
        return self.sacre._compute_score_from_stats(list(stats))

    def signature(self, num_refs: int, per_example: bool, **fields: Any) -> str:
        self.sacre.tokenizer_signature = self.tokenizer.signature
        extra: dict[str, Any] = {}
        if self.weights is None and self.max_order != 4:
            extra["ngram"] = self.max_order  # sacrebleu's signature leaves the order out
        sig = sacrebleu_signature(self.sacre, num_refs, **fields, **extra)
        if self.sacrebleu:
            return sig
        nltk = f"nltk-method{2 if self.smooth else 0}"
        if per_example or self.weights is not None:
            method = nltk
        else:
            method = "lin-och" if self.smooth else "none"
        sig = sig.replace("|smooth:none|", f"|smooth:{method}|")
        return with_fields(sig, weights=self.weights)


def _threads(name: str, value: Any) -> Any:
    _native.resolve_threads(value)  # a ValueError naming num_threads, before any work
    return value


@dataclasses.dataclass(frozen=True)
class BleuOptions(CorpusOptions):
    tokenizer: Any = option(None, kind="str",
                            doc="any sacrebleu tokenizer, with sacrebleu's tokens: 13a (default, mteval-v13a), intl "
                                "(mteval-v14), none (split on whitespace), char, zh (Chinese), ja-mecab (Japanese), "
                                "ko-mecab (Korean); or a function str -> list of str")
    max_order: int = option(4, doc="the largest n-gram order")
    smooth: bool = option(False, check=flag,
                         doc="Lin and Och's add-one smoothing, (matches + 1) / (total + 1) for every order of the "
                             "corpus score, as Hugging Face's bleu; nltk's method2 per example (which, as nltk "
                             "defines it, leaves unigrams unsmoothed)")
    weights: tuple[float, ...] | None = option(None, kind="floats",
                                               doc="n-gram weights, e.g. [0.4, 0.3, 0.2, 0.1] or valor's uniform "
                                                   "BLEU-4 [0.25, 0.25, 0.25, 0.25]; overrides max_order; the corpus "
                                                   "score is then nltk's corpus_bleu with these weights")
    use_aggregator: bool = option(True, check=flag, front_end=True,
                                  doc="True: the corpus score; False: per-example lists")
    lowercase: bool = option(False, check=flag, doc="lower-case the texts before any tokenizer")
    smooth_method: str | None = option(None, kind="str", kw_only=True,
                                       doc="sacrebleu's smoothing, none, floor, add-k or exp, for the corpus and "
                                           "the per-example scores (sacrebleu's sentence_bleu); None: no smoothing "
                                           "for the corpus, nltk's sentence_bleu per example")
    smooth_value: float | None = option(None, kind="float", kw_only=True, doc="the value of floor (sacrebleu's default "
                                                                                "0.1) and add-k (1)")
    effective_order: bool = option(False, check=flag, kw_only=True, doc="sacrebleu's effective order (orders "
                                                                                "without n-grams left out)")
    num_threads: int | None = option(1, kind="int", check=_threads, kw_only=True,
                                     doc="threads of the core's n-gram counting (None: every core)")


class Bleu(CorpusMetric):
    """BLEU of ``predictions`` against ``references`` (a string or list of strings each).

    Aggregated (default): the corpus BLEU in [0, 1], sacrebleu's ``corpus_bleu`` score / 100
    for the same tokenizer, ``lowercase``, ``smooth_method`` (default ``"none"``),
    ``smooth_value`` and ``effective_order``. Hugging Face's options instead: ``smooth=True``,
    Lin and Och's add-one ``(m+1)/(t+1)`` on every order; ``weights``, nltk's ``corpus_bleu``
    with those weights. ``use_aggregator=False``: per example, sacrebleu's ``sentence_bleu``
    when ``smooth_method`` or ``effective_order`` is given, else nltk's ``sentence_bleu`` on
    the same tokens (method0, or method2 with ``smooth``). Also ``precisions``,
    ``brevity_penalty``, ``length_ratio``, ``translation_length`` and ``reference_length``.

    ``confidence_level`` (e.g. 0.95) adds ``bleu_ci``: the bootstrap interval of the corpus
    score over ``n_resamples`` resamples of the examples' statistics with ``seed``: by default
    the percentile interval, within [0, 1]; with ``interval="sacrebleu"``, sacrebleu's
    ``--confidence`` interval (``SACREBLEU_SEED=seed``) divided by 100, the resamples' mean plus
    and minus half their spread, which can pass 1 on a few examples. Every result has
    ``signature``: sacrebleu's signature for the same settings (with ``interval:percentile``
    for the default interval, which sacrebleu does not have).
    Empty predictions score 0; no matching n-gram of some order gives a corpus score of 0.
    """

    name = "bleu"
    Options = BleuOptions
    own_per_example_signature = True
    STATISTICS = ("hyp_len", "ref_len", "correct", "total")

    def __init__(self, options: AnyOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        o = self.options
        self.settings = _Settings(o.tokenizer, o.max_order, o.smooth, o.weights, o.lowercase, o.smooth_method,
                                  o.smooth_value, o.effective_order)

    def statistic_names(self) -> tuple[str, ...]:
        return self.STATISTICS

    @functools.cached_property
    def statistics_settings(self) -> str:
        s = self.settings  # the counts depend on the tokens and the largest order only
        return f"bleu|tok:{s.tokenizer.signature}|case:{'lc' if s.lowercase else 'mixed'}|ngram:{s.max_order}"

    def settings_signature(self) -> str:
        return self.settings.signature(1, False)

    def signature(self, nrefs: int | None, *, per_example: bool = False, n_bootstrap: int | None = None,
                  seed: int | None = None, test: tuple[str, int] | None = None, ci: float | None = None) -> str:
        return self.settings.signature(1 if nrefs is None else nrefs, per_example, n_bootstrap=n_bootstrap,
                                       seed=seed, test=test, ci=ci)

    def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        refs = [[r] if isinstance(r, str) else list(r) for r in inputs["references"]]
        counts = corpus_stats(inputs["predictions"], refs, self.settings.tokenizer, self.settings.max_order,
                              self.options.num_threads)
        return dict(zip(self.STATISTICS, counts, strict=True))

    @staticmethod
    def counts(stats: Stats) -> BleuCounts:
        c = stats.columns
        return BleuCounts(c["hyp_len"], c["ref_len"], c["correct"], c["total"])

    def aggregate(self, stats: Stats) -> dict[str, Any]:
        return _corpus(self.settings, self.counts(stats))

    def per_example_values(self, stats: Stats) -> dict[str, list[Any]]:
        return _per_example(self.settings, self.counts(stats))

    def resampling(self, stats: Stats) -> CorpusStatistics:
        s, counts = self.settings, self.counts(stats)
        n = s.max_order
        score: Callable[[Any], Any]
        if s.weights is not None:
            weights = s.weights

            def score(row: Any) -> Any:
                return 100.0 * _nltk_bleu(row[2:2 + n], row[2 + n:], row[0], row[1], weights, s.smooth)

            rows = [[h, r, *c, *d] for h, r, c, d in zip(counts.hyp_len, counts.ref_len, counts.correct,
                                                          counts.denominators(), strict=True)]
        elif s.smooth:
            def score(row: Any) -> Any:
                return 100.0 * _lin_och(row[2:2 + n], row[2 + n:], row[0], row[1], n)

            rows = counts.sacrebleu_rows()
        else:
            def score(row: Any) -> Any:
                return s.sacrebleu_score(row).score

            rows = counts.sacrebleu_rows()
        return CorpusStatistics(rows, score, divisor=100.0, sacrebleu=s.weights is None and not s.smooth)


bleu = Bleu.function()


def bleu_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any
                    ) -> CorpusStatistics:
    """BLEU's per-example sufficient statistics (sacrebleu's rows) and its corpus formula, as its
    intervals and paired tests resample them. The score is on sacrebleu's 0-100 scale."""
    metric = Bleu(**options)
    return metric.resampling(metric.statistics({"predictions": predictions, "references": references}))


def _corpus(s: _Settings, stats: BleuCounts) -> dict[str, Any]:
    n = s.max_order
    sys_len = sum(stats.hyp_len)
    ref_len = sum(stats.ref_len)
    correct = [sum(col) for col in zip(*stats.correct, strict=True)] if stats.correct else [0] * n
    total = [sum(col) for col in zip(*stats.total, strict=True)] if stats.total else [0] * n
    bp: float
    if s.weights is not None:
        denominators = [sum(col) for col in zip(*stats.denominators(), strict=True)]
        score = _nltk_bleu(correct, denominators, sys_len, ref_len, s.weights, s.smooth)
        bp = float(_nltk_brevity_penalty(ref_len, sys_len))
    elif s.smooth:
        score = _lin_och(correct, total, sys_len, ref_len, n)
        bp = _brevity_penalty(sys_len, ref_len)
    else:
        result = s.sacrebleu_score([sys_len, ref_len, *correct, *total])
        score, bp = result.score / 100.0, result.bp
    if s.smooth and s.weights is None:
        precisions = [(c + 1.0) / (t + 1.0) for c, t in zip(correct, total, strict=True)]
    else:
        precisions = [c / t if t else 0.0 for c, t in zip(correct, total, strict=True)]
    return {
        "bleu": score,
        "precisions": precisions,
        "brevity_penalty": bp,
        "length_ratio": sys_len / ref_len if ref_len else 0.0,
        "translation_length": sys_len,
        "reference_length": ref_len,
    }


def _per_example(s: _Settings, stats: BleuCounts) -> dict[str, Any]:
    out: dict[str, list[Any]] = {"bleu": [], "precisions": [], "brevity_penalty": [], "length_ratio": [],
                                 "translation_length": stats.hyp_len, "reference_length": stats.ref_len}
    w = s.weights or (1.0 / s.max_order,) * s.max_order
    if s.sacrebleu:
        for row, correct, total in zip(stats.sacrebleu_rows(), stats.correct, stats.total, strict=True):
            result = s.sacrebleu_score(row)
            out["bleu"].append(result.score / 100.0)
            out["precisions"].append([c / t if t else 0.0 for c, t in zip(correct, total, strict=True)])
            out["brevity_penalty"].append(float(result.bp))
    else:
        for hyp_len, ref_len, correct, dens in zip(stats.hyp_len, stats.ref_len, stats.correct,
                                                   stats.denominators(), strict=True):
            out["bleu"].append(_nltk_bleu(correct, dens, hyp_len, ref_len, w, s.smooth))
            out["precisions"].append([c / d for c, d in zip(correct, dens, strict=True)])
            out["brevity_penalty"].append(float(_nltk_brevity_penalty(ref_len, hyp_len)))
    out["length_ratio"] = [h / r if r else 0.0 for h, r in zip(stats.hyp_len, stats.ref_len, strict=True)]
    return out


