"""ROUGE: N (1-9), L, Lsum, W, S, S<k>, SU, SU<k>.

Per example and reference the scores are those of the reference implementations:

- ``rouge1``..``rouge9``, ``rougeL``, ``rougeLsum``: rouge-score 0.1.2 ``RougeScorer.score``
  (same tokenizer and Porter stemmer, same LCS path for the summary-level union LCS), bit for
  bit;
- ``rougeW``, ``rougeS*``, ``rougeSU*``: the official ROUGE-1.5.5 script on the same tokens,
  each line (or sentence, with ``split_summaries``) a sentence unit for ``rougeW``. Its two
  quirks are reproduced: the ROUGE-W recall applies the weight twice (identical texts of six
  tokens get recall 0.69883), and ROUGE-SU counts the unigrams of every token but the last.

With several references, ``multi_ref`` says how an example's score is formed:

- ``"best"`` (default): per type, the scores against the reference with the best F-measure (the
  first one on ties), as rouge-score's ``score_multi`` and the MATLAB ``rougeEvaluationScore``;
- ``"mean"``: per type, P, R and F each the mean of the example's per-reference scores
  (``RougeScorer.score(reference, prediction)`` for each reference, as rouge-score gives them),
  averaged independently: F is the mean of the F-measures, not the F of the mean P and R. The
  mean is correctly rounded in float64 (``math.fsum`` of the values / their count), so an example
  with one reference scores as with ``"best"``. This is the multi-reference ROUGE of SummEval's
  and BARTScore's analyses. The corpus aggregate is then the exact mean over examples of these
  per-example means (the scores rouge-score's ``BootstrapAggregator`` would be given); intervals
  resample the examples as with ``"best"``. The core keeps only the best reference's scores, so each
  (prediction, reference) pair is scored as an example of its own, in the same one batch call
  (the prediction tokenised once per reference; ``split_summaries`` splits each text on its own),
  and the means are taken in Python. A batch whose examples all have one reference takes
  ``"best"``'s path (the same scores).

Every score is computed by the compiled core (``textgen_metrics._native``): tokenising and
stemming (rouge-score's default tokenizer), n-gram matching, LCS, union LCS, weighted LCS and
skip-bigrams, over whole batches, without the GIL, on ``num_threads`` threads. Other tokenizers
(``"unicode"``, ``"whitespace"``, a callable) tokenise in Python and the core scores their tokens.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from .. import _native
from .._native._core import ExactSum
from .._version import __version__
from ..aggregation import bootstrap_interval, mean
from ..errors import OptionError
from ..metric import MeanMetric, Options, Result, Stats, option
from ..significance import DEFAULT_CONFIDENCE
from ..tokenizers import RougeScoreTokenizer, _Tokenizer, get_tokenizer, split_sentences
from ..validation import check_bool, check_number

__all__ = ["Score", "RougeScorer", "RougeAggregator", "Rouge", "RougeOptions", "rouge", "DEFAULT_ROUGE_TYPES",
           "MULTI_REF", "parse_rouge_type"]

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

# examples per call into the core when scoring a list: bounds the memory of the inputs'
# views and of the per-example results whatever the number of examples
_CHUNK = 8192
_RefSet = str | list[str] | tuple[str, ...]  # one example's references, as check_reference_sets gives them
MULTI_REF = ("best", "mean")  # how several references make one example's score


class Score(NamedTuple):
    precision: float
    recall: float
    fmeasure: float


_TYPE_RE = re.compile(r"^rouge(?:(?P<n>[1-9])|(?P<l>L)|(?P<lsum>Lsum)|(?P<w>W)|(?P<s>SU?)(?P<gap>\d*))$")


def parse_rouge_type(rouge_type: str) -> tuple[str, int | None]:
    """``rouge_type`` -> ``(kind, parameter)``: ``("n", 2)``, ``("L", None)``, ``("S", 4)``..."""
    m = _TYPE_RE.match(rouge_type) if isinstance(rouge_type, str) else None
    if m is None:
        raise OptionError(
            f"rouge_types: unknown rouge type {rouge_type!r}; valid: rouge1..rouge9, rougeL, "
            "rougeLsum, rougeW, rougeS, rougeS<k>, rougeSU, rougeSU<k> (k = maximum skip gap)"
        )
    if m.group("n"):
        return "n", int(m.group("n"))
    if m.group("l"):
        return "L", None
    if m.group("lsum"):
        return "Lsum", None
    if m.group("w"):
        return "W", None
    gap = int(m.group("gap")) if m.group("gap") else None
    return m.group("s"), gap


class _Doc:
    """A text with its tokens and sentence units (computed on first use)."""

    __slots__ = ("text", "_tokens", "_sents", "_scorer")

    def __init__(self, text: str, scorer: RougeScorer) -> None:
        self.text = text
        self._scorer = scorer
        self._tokens: list[str] | None = None
        self._sents: list[list[str]] | None = None

    @property
    def tokens(self) -> list[str]:
        if self._tokens is None:
            scorer = self._scorer
            if scorer._derive_tokens:
                # built-in tokenizers never join across the whitespace where sentences split,
                # so the text's tokens are its sentences' tokens end to end: tokenise once
                self._tokens = [t for s in self.sents for t in s]
            else:
                self._tokens = scorer._tokenizer(self.text)
        return self._tokens

    @property
    def sents(self) -> list[list[str]]:
        """Token lists of the sentence units (rougeLsum, rougeW)."""
        if self._sents is None:
            tok = self._scorer._tokenizer
            if self._scorer.split_summaries:
                self._sents = [tok(s) for s in split_sentences(self.text)]
            elif type(tok) is RougeScoreTokenizer:  # the core's per-line tokens, one call
                self._sents = tok.lines(self.text)
            else:
                self._sents = [tok(s) for s in self.text.split("\n") if len(s)]
        return self._sents


def _check_multi_ref(name: str, value: Any) -> str:
    """``multi_ref`` as given, when it is one of :data:`MULTI_REF`; else an OptionError naming it."""
    if not isinstance(value, str) or value not in MULTI_REF:
        raise OptionError(f"{name}: {value!r} is not one of 'best', 'mean' (best: the scores against the "
                          "best reference; mean: the mean of the scores against each reference)", name)
    return value


def _group_means(values: list[float], bounds: list[tuple[int, int]]) -> list[float]:
    """Per group ``values[a:b]``, their correctly rounded mean (one value: itself)."""
    fsum = math.fsum
    return [values[a] if b - a == 1 else (fsum(values[a:b]) / (b - a) if b > a else 0.0) for a, b in bounds]


class RougeScorer:
    """Scores one prediction against one or several references (rouge-score's interface), or
    whole lists at once (``score_batch``).

    The positional order is rouge-score's: ``RougeScorer(rouge_types, use_stemmer,
    split_summaries, tokenizer)``; ``rouge_w_weight`` and ``multi_ref`` (``"best"`` or
    ``"mean"``, see the module) come after them.

    >>> scorer = RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    >>> round(scorer.score("The cat sat on the mat.", "The cats sat.")["rouge1"].fmeasure, 6)
    0.666667
    """

    _CACHE_SIZE = 2048

    def __init__(self, rouge_types: Sequence[str] | str | None = DEFAULT_ROUGE_TYPES, use_stemmer: bool = False,
                 split_summaries: bool = False, tokenizer: Any = None, rouge_w_weight: float = 1.2,
                 multi_ref: str = "best") -> None:
        if rouge_types is None:
            rouge_types = DEFAULT_ROUGE_TYPES
        if isinstance(rouge_types, str):
            rouge_types = [rouge_types]
        rouge_types = list(rouge_types)
        if not rouge_types:
            raise OptionError("rouge_types: empty; give at least one rouge type", "rouge_types")
        self.rouge_types = rouge_types
        self._kinds = [(t,) + parse_rouge_type(t) for t in rouge_types]
        self.rouge_w_weight = float(check_number("rouge_w_weight", rouge_w_weight, minimum=1.0, min_open=True))
        self.split_summaries = check_bool("split_summaries", split_summaries)
        self.multi_ref = _check_multi_ref("multi_ref", multi_ref)
        self._tokenizer = get_tokenizer(tokenizer, check_bool("use_stemmer", use_stemmer))
        self.use_stemmer = self._tokenizer.use_stemmer
        # rouge-score's own tokenizer (not a subclass that may tokenise otherwise) runs inside
        # the core's scoring call: texts go in, no token lists cross into Python
        self._native_tokens = type(self._tokenizer) is RougeScoreTokenizer
        self._needs_sents = any(k in ("Lsum", "W") for _, k, _ in self._kinds)
        self._derive_tokens = (isinstance(self._tokenizer, _Tokenizer) or self._native_tokens) and self._needs_sents
        types = [(_native.ROUGE_KINDS[kind], (-1 if param is None else param)) for _, kind, param in self._kinds]
        self._core = _native.RougeCore(types, self.use_stemmer, self.rouge_w_weight)
        self._cache: dict[str, _Doc] = {}

    @property
    def signature(self) -> str:
        """Every setting that changes a score, sacrebleu style."""
        parts = [
            "rouge",
            f"tok:{self._tokenizer.signature}",
            f"sent:{'split' if self.split_summaries else 'newline'}",
            "refs:best-f" if self.multi_ref == "best" else "refs:mean",
        ]
        if any(k == "W" for _, k, _ in self._kinds):
            parts.append(f"w:{self.rouge_w_weight:g}")
        parts.append(f"version:{__version__}")
        return "|".join(parts)

    # -- documents -------------------------------------------------------------------------
    def _doc(self, text: str) -> _Doc:
        cache = self._cache
        doc = cache.get(text)
        if doc is None:
            if len(cache) >= self._CACHE_SIZE:
                cache.clear()  # bounded: memory stays flat over any number of examples
            doc = cache[text] = _Doc(text, self)
        return doc

    def _inputs(self, texts: Sequence[str]) -> tuple[list[Any], _native.RougeInput]:
        """Texts as the core takes them, and the core's input mode."""
        if self._native_tokens:
            if self.split_summaries:
                return [split_sentences(t) for t in texts], _native.RougeInput.UNITS
            return list(texts), _native.RougeInput.TEXT
        out = []
        for t in texts:
            doc = self._doc(t)
            out.append((doc.tokens, doc.sents if self._needs_sents else []))
        return out, _native.RougeInput.TOKENS

    # -- public -----------------------------------------------------------------------------
    def score_batch(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                    num_threads: int | None = 1) -> dict[str, list[Score]]:
        """``{rouge_type: [Score per example]}`` over the example's references (a string or a
        list of strings): the best F-measure's (first reference on ties), or with
        ``multi_ref="mean"`` the means over them. ``num_threads``: threads of the core (None or
        0: every core)."""
        raw = self._score_raw(predictions, references, num_threads)
        out = {}
        for k, name in enumerate(self.rouge_types):
            out[name] = [Score(p, r, f) for p, r, f in zip(raw[3 * k], raw[3 * k + 1], raw[3 * k + 2], strict=True)]
        return out

    def _score_raw(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                   num_threads: int | None = 1) -> list[list[float]]:
        """The core's P, R, F lists of each type, per example (see :meth:`score_batch`)."""
        threads = _native.resolve_threads(num_threads)
        preds, mode = self._inputs(predictions)
        refs: Sequence[Any] = references  # texts: the core takes a str or a list per example
        if mode != _native.RougeInput.TEXT:
            refs = [self._inputs([rs] if isinstance(rs, str) else rs)[0] for rs in references]
        if self.multi_ref == "mean" and any(type(rs) is not str and len(rs) != 1 for rs in refs):
            return self._score_mean(preds, refs, mode, threads)
        scores: list[list[float]] = self._core.score(preds, refs, mode, threads)
        return scores

    def _score_mean(self, preds: list[Any], refs: Sequence[Any], mode: _native.RougeInput,
                    threads: int) -> list[list[float]]:
        """``multi_ref="mean"``: every (prediction, reference) pair scored as an example of its
        own in one call into the core (one reference each, so the core's best is that
        reference's score), then P, R and F of each type averaged over the example's pairs."""
        flat_preds: list[Any] = []
        flat_refs: list[Any] = []
        bounds: list[tuple[int, int]] = []
        for pred, group in zip(preds, refs, strict=True):
            start = len(flat_refs)
            if type(group) is str:
                flat_refs.append(group)
            else:
                flat_refs.extend([r] for r in group)  # a one-reference list: any input mode
            flat_preds.extend([pred] * (len(flat_refs) - start))
            bounds.append((start, len(flat_refs)))
        pairs: list[list[float]] = self._core.score(flat_preds, flat_refs, mode, threads)
        return [_group_means(column, bounds) for column in pairs]

    def score(self, target: str, prediction: str) -> dict[str, Score]:
        """``{rouge_type: Score}`` for one reference ``target`` and one ``prediction``."""
        return self.score_multi([target], prediction)

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Score]:
        """Per type, the scores against the target with the best F-measure (first on ties), or
        with ``multi_ref="mean"`` P, R and F each the mean over ``targets``."""
        raw = self._score_raw([prediction], [list(targets)])
        return {name: Score(raw[3 * k][0], raw[3 * k + 1][0], raw[3 * k + 2][0])
                for k, name in enumerate(self.rouge_types)}


def _keys(rouge_types: Sequence[str], return_precision_recall: bool) -> list[str]:
    keys = []
    for t in rouge_types:
        keys.append(t)
        if return_precision_recall:
            keys += [f"{t}_precision", f"{t}_recall"]
    return keys


def _columns(raw: list[list[float]], rouge_types: Sequence[str], return_precision_recall: bool
             ) -> Iterator[tuple[str, list[float]]]:
    """(key, values) in output order from the core's P, R, F lists."""
    for k, t in enumerate(rouge_types):
        yield t, raw[3 * k + 2]
        if return_precision_recall:
            yield f"{t}_precision", raw[3 * k]
            yield f"{t}_recall", raw[3 * k + 1]


class _ExactMean:
    """Mean of a stream, fed whole lists, as exact as ``aggregation.mean`` (fsum's partials)."""

    __slots__ = ("_sum",)

    def __init__(self) -> None:
        self._sum = ExactSum()

    def add_many(self, values: list[float]) -> None:
        self._sum.add_many(values)

    @property
    def count(self) -> int:
        count: int = self._sum.count
        return count

    @property
    def value(self) -> float | None:
        if not self._sum.count:
            return None
        return math.fsum(self._sum.partials) / self.count


class RougeAggregator:
    """Streams examples into exact means in constant memory (per-example scores not kept)."""

    def __init__(self, scorer: RougeScorer, return_precision_recall: bool = False) -> None:
        self.scorer = scorer
        self.return_precision_recall = return_precision_recall
        self._means = {k: _ExactMean() for k in _keys(scorer.rouge_types, return_precision_recall)}

    def add(self, prediction: str, references: str | Sequence[str]) -> None:
        if isinstance(references, str):
            references = [references]
        self.add_batch([prediction], [list(references)])

    def add_batch(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                  num_threads: int | None = 1) -> None:
        """Adds many examples in one call into the core (references: a string or a list of
        strings per example)."""
        raw = self.scorer._score_raw(predictions, references, num_threads)
        for key, values in _columns(raw, self.scorer.rouge_types, self.return_precision_recall):
            self._means[key].add_many(values)

    @property
    def count(self) -> int:
        return self._means[self.scorer.rouge_types[0]].count

    def result(self) -> dict[str, float | None]:
        return {k: m.value for k, m in self._means.items()}


def _chunks(predictions: list[str], references: list[_RefSet]) -> Iterable[tuple[list[str], list[_RefSet]]]:
    for start in range(0, len(predictions), _CHUNK):
        yield predictions[start:start + _CHUNK], references[start:start + _CHUNK]


def _rouge_types(name: str, value: Any) -> tuple[str, ...]:
    """``rouge_types`` as a tuple of known types (None: the default four)."""
    if value is None:
        return DEFAULT_ROUGE_TYPES
    types = (value,) if isinstance(value, str) else tuple(value)
    if not types:
        raise OptionError(f"{name}: empty; give at least one rouge type", name)
    for t in types:
        parse_rouge_type(t)
    return types


def _threads(name: str, value: Any) -> Any:
    _native.resolve_threads(value)  # a ValueError naming num_threads
    return value


def _at_least_zero(name: str, value: Any) -> Any:
    return check_number(name, value, minimum=0, integer=True)


def _weight(name: str, value: Any) -> Any:
    return check_number(name, value, minimum=1.0, min_open=True)


@dataclasses.dataclass(frozen=True)
class RougeOptions(Options):
    rouge_types: tuple[str, ...] | None = option(
        None, kind="list", check=_rouge_types,
        doc="any of rouge1..rouge9, rougeL, rougeLsum, rougeW, rougeS, rougeS<k>, rougeSU, rougeSU<k> "
            "(default rouge1, rouge2, rougeL, rougeLsum)")
    use_aggregator: bool = option(True, check=check_bool, front_end=True,
                                  doc="True: the mean over examples; False: per-example lists")
    use_stemmer: bool = option(False, check=check_bool,
                               doc="Porter stemming (nltk's, as rouge-score) of tokens longer than 3 characters")
    tokenizer: str | Callable[[str], list[str]] | None = option(
        None, kind="str",
        doc="rouge_score (default: rouge-score's, lower-cased runs of ASCII letters and digits, so it drops every "
            "non-Latin script: Hindi, Chinese, Arabic text scores 0), unicode (keeps letters, digits and marks of "
            "every script; one token per character for Chinese, Japanese, Thai, Lao, Khmer, Myanmar), whitespace "
            "(splits on spaces), or a function str -> list of str (used as is, not stemmed, as in rouge-score)")
    split_summaries: bool = option(False, check=check_bool, decoded=True,
                                   doc="the sentence units of rougeLsum and rougeW are the lines of the text; True "
                                       "also splits lines after ., ! or ? followed by a space (a rule, not nltk's "
                                       "punkt model, which would need a download)")
    rouge_w_weight: float = option(1.2, check=_weight, doc="the weight w of f(k) = k**w for rougeW")
    return_precision_recall: bool = option(False, check=check_bool,
                                           doc="also <type>_precision and <type>_recall")
    bootstrap_samples: int = option(0, check=_at_least_zero,
                                    doc="if > 0: add <type>_low and <type>_high, a percentile bootstrap interval "
                                        "of the mean at confidence_level (default 0.95), the same for the same seed "
                                        "(without it, confidence_level adds <type>_ci)")
    num_threads: int | None = option(1, kind="int", check=_threads,
                                     doc="threads of the compiled core (None or 0: every core); scores do not "
                                         "depend on it")
    multi_ref: str = option("best", check=_check_multi_ref, kw_only=True,
                            doc="with several references per prediction: best (default: per type, the scores "
                                "against the reference with the best F-measure, first on ties, as rouge-score's "
                                "score_multi) or mean (per type, P, R and F each the mean of rouge-score's "
                                "score(reference, prediction) over the example's references, averaged "
                                "independently, so F is the mean F, not the F of the mean P and R, and correctly "
                                "rounded in float64; the aggregate is the mean of these per-example means, what "
                                "rouge-score's BootstrapAggregator would be given; rougeLsum with split_summaries "
                                "splits each reference on its own; the signature says refs:mean instead of "
                                "refs:best-f). One reference scores the same either way")


class Rouge(MeanMetric):
    """ROUGE of ``predictions`` against ``references`` (a string or a list of strings each).

    Per example, each type's F-measure against the best reference: rouge-score 0.1.2's for
    rouge1..rouge9, rougeL and rougeLsum, the official ROUGE-1.5.5 script's for rougeW, rougeS*
    and rougeSU* (with its two quirks, see the module). ``multi_ref="mean"`` takes instead, per
    type, P, R and F each averaged over the example's references (correctly rounded in float64;
    the module says how). Range 0 to 1; an empty prediction or reference scores 0.
    ``use_aggregator=True`` gives the exact mean over examples (with ``"mean"``: the mean of the
    per-example means).
    ``return_precision_recall=True`` adds ``<type>_precision`` and ``<type>_recall``;
    ``bootstrap_samples=N`` adds ``<type>_low`` and ``<type>_high``, a percentile bootstrap
    interval of the mean at ``confidence_level`` (0.95 by default) fixed by ``seed``.
    """

    name = "rouge"
    Options = RougeOptions
    # text decoded from a model's ids has no line per sentence: rougeLsum splits sentences itself

    @functools.cached_property
    def scorer(self) -> RougeScorer:
        o = self.options
        return RougeScorer(o.rouge_types, use_stemmer=o.use_stemmer, split_summaries=o.split_summaries,
                           tokenizer=o.tokenizer, rouge_w_weight=o.rouge_w_weight, multi_ref=o.multi_ref)

    def keys(self) -> tuple[str, ...]:
        return tuple(_keys(self.options.rouge_types, self.options.return_precision_recall))

    def settings_signature(self) -> str:
        return self.scorer.signature

    def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        scorer, with_pr = self.scorer, self.options.return_precision_recall
        per_example: dict[str, list[float]] = {}
        for preds, refs in _chunks(inputs["predictions"], inputs["references"]):
            raw = scorer._score_raw(preds, refs, self.options.num_threads)
            for key, values in _columns(raw, scorer.rouge_types, with_pr):
                if key in per_example:
                    per_example[key].extend(values)
                else:
                    per_example[key] = values
        return per_example

    def _bootstrap_signatures(self, stats: Stats) -> tuple[str, str | None]:
        if self.options.bootstrap_samples:  # its own intervals, without the bootstrap's fields
            return self.signature(self.nrefs(stats)), None
        return super()._bootstrap_signatures(stats)

    def score(self, stats: Stats) -> Result:
        samples = self.options.bootstrap_samples
        if not samples:
            return super().score(stats)
        self._check_stats(stats)
        per_example = {k: stats.columns[k] for k in self.keys()}
        aggregate: dict[str, Any] = {k: mean(v) for k, v in per_example.items()}
        level = self.options.confidence_level or DEFAULT_CONFIDENCE
        for key, values in per_example.items():
            low, high = bootstrap_interval(values, samples, level, self.options.seed)
            aggregate[f"{key}_low"] = low
            aggregate[f"{key}_high"] = high
        return self.mean_result(stats, per_example, aggregate=aggregate, intervals_asked=False)


rouge = Rouge.function()
