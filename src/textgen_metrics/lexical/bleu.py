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

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .. import _native
from ..results import corpus_result
from ..signature import bootstrap_fields, count_references, sacrebleu_signature, with_fields
from ..signature import signature as make_signature
from ..significance import DEFAULT_RESAMPLES, DEFAULT_SEED, CorpusStatistics, check_interval_options
from ..tokenizers import Lowercased, NoneTokenizer, Tokenizer, Tokenizer13a, get_tokenizer
from .checks import flag, texts_and_references

__all__ = ["bleu", "google_bleu", "bleu_statistics", "google_bleu_statistics", "BleuCounts",
           "corpus_stats", "SMOOTH_METHODS"]

_FLOAT_MIN = sys.float_info.min
SMOOTH_METHODS = ("none", "floor", "add-k", "exp")

# what the core reads: the texts themselves (13a / str.split() in the core) or token lists
_CoreInput = tuple[Sequence[str] | list[list[str]], Sequence[Sequence[str]] | list[list[list[str]]],
                   _native.BleuInput, bool]


def _core_input(tok: Tokenizer, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> _CoreInput:
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
    preds, refs, code, lowercase = _core_input(tokenizer, predictions, references)
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
            raise ValueError(f"max_order: {max_order!r} must be a positive integer")
        return None, max_order
    try:
        weights = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise TypeError(f"weights: expected a sequence of numbers, got {weights!r}") from None
    if not weights or any(w < 0 or not math.isfinite(w) for w in weights):
        raise ValueError(f"weights: {weights!r} must be a non-empty sequence of finite non-negative numbers")
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
            raise ValueError(f"smooth_method: {smooth_method!r} is not one of {list(SMOOTH_METHODS)}")
        # sacrebleu's formula for both levels when one of its own options is asked for
        self.sacrebleu = smooth_method is not None or self.effective_order
        if self.sacrebleu and (self.smooth or self.weights is not None):
            raise ValueError("smooth_method: give sacrebleu's smooth_method/effective_order or Hugging "
                             "Face's smooth/weights, not both")
        if smooth_value is not None and (isinstance(smooth_value, bool)
                                         or not isinstance(smooth_value, (int, float))
                                         or not math.isfinite(smooth_value) or smooth_value < 0):
            raise ValueError(f"smooth_value: {smooth_value!r} must be a non-negative number")
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


def _threads(num_threads: int | None) -> int:
    """``num_threads`` checked (None: every core) before any work."""
    return _native.resolve_threads(num_threads)


def bleu_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                    tokenizer: Any = None, max_order: int = 4, smooth: bool = False,
                    weights: Sequence[float] | None = None, lowercase: bool = False, *,
                    smooth_method: str | None = None, smooth_value: float | None = None,
                    effective_order: bool = False, num_threads: int | None = 1) -> CorpusStatistics:
    """BLEU's per-example sufficient statistics and its corpus formula (for intervals and
    paired tests). The score is on sacrebleu's 0-100 scale; ``divisor`` 100 gives bleu's."""
    predictions, refs = texts_and_references(predictions, references)
    s = _Settings(tokenizer, max_order, smooth, weights, lowercase, smooth_method, smooth_value,
                  effective_order)
    stats = corpus_stats(predictions, refs, s.tokenizer, s.max_order, _threads(num_threads))
    return _statistics(s, stats, count_references(refs))


def _statistics(s: _Settings, stats: BleuCounts, num_refs: int, per_example: bool = False) -> CorpusStatistics:
    n = s.max_order
    score: Callable[[Any], Any]
    if s.weights is not None:
        weights = s.weights

        def score(row: Any) -> Any:
            return 100.0 * _nltk_bleu(row[2:2 + n], row[2 + n:], row[0], row[1], weights, s.smooth)

        rows = [[h, r, *c, *d] for h, r, c, d in zip(stats.hyp_len, stats.ref_len, stats.correct,
                                                      stats.denominators(), strict=True)]
    elif s.smooth:
        def score(row: Any) -> Any:
            return 100.0 * _lin_och(row[2:2 + n], row[2 + n:], row[0], row[1], n)

        rows = stats.sacrebleu_rows()
    else:
        def score(row: Any) -> Any:
            return s.sacrebleu_score(row).score

        rows = stats.sacrebleu_rows()

    def sign(**fields: Any) -> str:
        return s.signature(num_refs, per_example, **fields)

    return CorpusStatistics(rows, score, divisor=100.0, sign=sign,
                            sacrebleu=s.weights is None and not s.smooth)


def bleu(predictions: Sequence[str], references: Sequence[str | Sequence[str]], tokenizer: Any = None,
         max_order: int = 4, smooth: bool = False, weights: Sequence[float] | None = None,
         use_aggregator: bool = True, lowercase: bool = False, *, smooth_method: str | None = None,
         smooth_value: float | None = None, effective_order: bool = False,
         confidence_level: float | None = None, n_resamples: int = DEFAULT_RESAMPLES,
         seed: int = DEFAULT_SEED, num_threads: int | None = 1) -> dict[str, Any]:
    """BLEU of ``predictions`` against ``references`` (a string or list of strings each).

    Aggregated (default): the corpus BLEU in [0, 1], sacrebleu's ``corpus_bleu`` score / 100
    for the same tokenizer, ``lowercase``, ``smooth_method`` (default ``"none"``),
    ``smooth_value`` and ``effective_order``. Hugging Face's options instead: ``smooth=True``,
    Lin and Och's add-one ``(m+1)/(t+1)`` on every order; ``weights``, nltk's ``corpus_bleu``
    with those weights. ``use_aggregator=False``: per example, sacrebleu's ``sentence_bleu``
    when ``smooth_method`` or ``effective_order`` is given, else nltk's ``sentence_bleu`` on
    the same tokens (method0, or method2 with ``smooth``).

    ``confidence_level`` (e.g. 0.95) adds ``bleu_ci``: the bootstrap interval of the corpus
    score over ``n_resamples`` resamples of the examples' statistics with ``seed``, equal to
    sacrebleu's ``--confidence`` interval (``SACREBLEU_SEED=seed``) divided by 100. Every
    result has ``signature``: sacrebleu's signature for the same settings.
    ``num_threads``: threads of the core's n-gram counting (default 1; None: every core); the
    scores do not depend on it.
    Empty predictions score 0; no matching n-gram of some order gives a corpus score of 0.
    """
    predictions, refs = texts_and_references(predictions, references)
    s = _Settings(tokenizer, max_order, smooth, weights, lowercase, smooth_method, smooth_value,
                  effective_order)
    if confidence_level is not None:
        check_interval_options(confidence_level, n_resamples, seed)
    aggregate = flag("use_aggregator", use_aggregator)
    stats = corpus_stats(predictions, refs, s.tokenizer, s.max_order, _threads(num_threads))
    out = _corpus(s, stats) if aggregate else _per_example(s, stats)
    return corpus_result(out, "bleu", _statistics(s, stats, count_references(refs), not aggregate),
                         confidence_level, n_resamples, seed)


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


class _GleuCounts(NamedTuple):
    """nltk ``corpus_gleu``'s best (matches, total) per example; total 0 where nltk skips it."""

    matches: list[int]
    total: list[int]
    tokenizer: Tokenizer
    num_refs: int


def _gleu_counts_of(predictions: Any, references: Any, tokenizer: Any, min_len: Any, max_len: Any,
                    num_threads: int | None) -> _GleuCounts:
    predictions, refs = texts_and_references(predictions, references)
    for name, v in (("min_len", min_len), ("max_len", max_len)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: {v!r} must be a positive integer")
    if min_len > max_len:
        raise ValueError(f"min_len: {min_len} is greater than max_len ({max_len})")
    threads = _threads(num_threads)
    tok = get_tokenizer(tokenizer, default="13a")
    preds, ref_in, code, lowercase = _core_input(tok, predictions, refs)
    matches, total = _native.bleu_core().gleu_stats(preds, ref_in, code, lowercase, min_len, max_len, threads)
    return _GleuCounts(matches, total, tok, count_references(refs))


def _gleu_score(row: Any) -> float:
    return float(row[0]) / float(row[1]) if row[1] else 0.0


def _gleu_signature(tok: Tokenizer, min_len: int, max_len: int, num_refs: int, **fields: Any) -> str:
    """``google_bleu|nrefs:..|tok:..|ngram:min-max|...``; ``fields`` as
    :func:`~textgen_metrics.signature.bootstrap_fields` takes them."""
    return make_signature("google_bleu", nrefs="var" if num_refs == -1 else num_refs,
                          tok=tok.signature, ngram=f"{min_len}-{max_len}", **bootstrap_fields(**fields))


def google_bleu_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                           tokenizer: Any = None, min_len: int = 1, max_len: int = 4, *,
                           num_threads: int | None = 1) -> CorpusStatistics:
    """Google BLEU's per-example statistics ``[matches, total]`` of the best reference."""
    counts = _gleu_counts_of(predictions, references, tokenizer, min_len, max_len, num_threads)
    return _gleu_statistics(counts, min_len, max_len)


def _gleu_statistics(counts: _GleuCounts, min_len: int, max_len: int) -> CorpusStatistics:
    def sign(**fields: Any) -> str:
        return _gleu_signature(counts.tokenizer, min_len, max_len, counts.num_refs, **fields)

    rows = [[m, t] for m, t in zip(counts.matches, counts.total, strict=True)]
    return CorpusStatistics(rows, _gleu_score, sign=sign)


def google_bleu(predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                tokenizer: Any = None, min_len: int = 1, max_len: int = 4, use_aggregator: bool = True,
                *, confidence_level: float | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                seed: int = DEFAULT_SEED, num_threads: int | None = 1) -> dict[str, Any]:
    """Google BLEU: nltk ``corpus_gleu`` (aggregate) or ``sentence_gleu`` (per example).

    ``confidence_level`` adds ``google_bleu_ci``, a bootstrap interval of the corpus score
    over the examples' statistics (as sacrebleu's intervals of corpus metrics); ``signature``
    names the tokenizer, the n-gram orders and the number of references. ``num_threads``:
    threads of the core's n-gram counting (default 1; None: every core).
    """
    if confidence_level is not None:
        check_interval_options(confidence_level, n_resamples, seed)
    aggregate = flag("use_aggregator", use_aggregator)
    counts = _gleu_counts_of(predictions, references, tokenizer, min_len, max_len, num_threads)
    out: dict[str, Any]
    if not aggregate:
        out = {"google_bleu": [m / t if t else 0.0 for m, t in zip(counts.matches, counts.total, strict=True)]}
    else:
        n_all = sum(counts.total)
        out = {"google_bleu": sum(counts.matches) / n_all if n_all else 0.0}
    return corpus_result(out, "google_bleu", _gleu_statistics(counts, min_len, max_len), confidence_level,
                         n_resamples, seed)
