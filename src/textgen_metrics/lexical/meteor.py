"""METEOR as nltk's ``meteor_score`` (nltk 3.x), step for step, in the compiled core.

Alignment in three stages, each matching from the last hypothesis word backwards to the last
free reference position of an equal word: exact (lower-cased) words, Porter stems, then WordNet
synonyms (of the *stemmed* leftovers, as nltk does). Score: ``Fmean = P*R / (alpha*P +
(1-alpha)*R)``, penalty ``gamma * (chunks/matches)**beta``, METEOR ``= (1 - penalty) * Fmean``,
the maximum over references.

The core (``textgen_metrics._native``) lower-cases with Python's own case tables, stems with its
port of nltk's Porter stemmer, and reads WordNet through a compact index built once and kept on
disk (``textgen_metrics.wordnet.wordnet_index``): nltk's synsets of a word (with its morphy rules
and exception lists) and their lemma names, without parsing WordNet in every process. Each
distinct word is lowered, stemmed and looked up once per process, which changes no score.

This is nltk's METEOR, which differs from the original Java METEOR 1.5 (no paraphrase table,
no function-word weighting, different chunk handling).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from .. import _native
from ..metric import MeanMetric, Options, option
from ..signature import signature
from ..validation import check_bool, check_number
from ..wordnet import wordnet_index

__all__ = ["Meteor", "MeteorOptions", "meteor", "word_tokenize", "MeteorScorer"]


def word_tokenize(text: str) -> list[str]:
    """nltk ``word_tokenize(text, preserve_line=True)``: Treebank rules, no punkt model (the
    core's Treebank tokenizer)."""
    return _native.treebank_tokenize([text])[0]


class MeteorScorer:
    """Holds the core's METEOR state (per-word memos) shared by all examples.

    ``wordnet``: None (the WordNet in use, see ``textgen_metrics.wordnet``), a WordNet folder, or
    an index from ``wordnet_index``.
    """

    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5, wordnet: Any = None) -> None:
        check_number("alpha", alpha, minimum=0.0, maximum=1.0)
        check_number("beta", beta, minimum=0.0)
        check_number("gamma", gamma, minimum=0.0, maximum=1.0)
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        if wordnet is None or isinstance(wordnet, str):
            wordnet = wordnet_index(wordnet)
        self._core: Any = _native._core.MeteorCore(wordnet)

    def tokenize(self, text: str) -> list[str]:
        return word_tokenize(text)

    def align(self, hyp_tokens: Sequence[str], ref_tokens: Sequence[str]) -> list[tuple[int, int]]:
        """Sorted (hypothesis index, reference index) matches, as nltk's ``align_words``."""
        matches: list[tuple[int, int]] = self._core.align(list(hyp_tokens), list(ref_tokens))
        return matches

    def synonyms(self, word: str) -> list[str]:
        """The words METEOR's WordNet stage accepts for ``word`` (itself included), sorted."""
        words: list[str] = self._core.synonyms(word)
        return words

    def single(self, hyp_tokens: Sequence[str], ref_tokens: Sequence[str]) -> float:
        """nltk ``single_meteor_score``."""
        return self.score_tokens([hyp_tokens], [[ref_tokens]])[0]

    def score_tokens(self, hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[Sequence[str]]],
                     num_threads: int | None = 1) -> list[float]:
        """Per example, the best ``single`` score over its references (token lists in)."""
        scores: list[float] = self._core.score(hyps, refs, float(self.alpha), float(self.beta), float(self.gamma),
                                               _native.resolve_threads(num_threads), False)
        return scores

    def score(self, prediction: str, references: Sequence[str]) -> float:
        """METEOR of one prediction: the maximum over its references."""
        return self.score_batch([prediction], [references])[0]

    def score_batch(self, predictions: Sequence[str], references: Sequence[Sequence[str]],
                    num_threads: int | None = 1) -> list[float]:
        """METEOR of each prediction against its list of references (texts in: the core
        tokenises them with nltk's Treebank rules)."""
        scores: list[float] = self._core.score(predictions, references, float(self.alpha), float(self.beta),
                                               float(self.gamma), _native.resolve_threads(num_threads), True)
        return scores


def _unit(name: str, value: Any) -> Any:
    return check_number(name, value, minimum=0.0, maximum=1.0)


def _non_negative(name: str, value: Any) -> Any:
    return check_number(name, value, minimum=0.0)


def _threads(name: str, value: Any) -> Any:
    _native.resolve_threads(value)  # a ValueError naming num_threads, before any work
    return value


@dataclasses.dataclass(frozen=True)
class MeteorOptions(Options):
    alpha: float = option(0.9, check=_unit, doc="the weight of precision against recall in the "
                                                                "harmonic mean Fmean, as in nltk")
    beta: float = option(3.0, check=_non_negative, doc="the exponent (shape) of the "
                                                                        "fragmentation penalty, as in nltk")
    gamma: float = option(0.5, check=_unit, doc="the fragmentation penalty's weight, as in nltk")
    use_aggregator: bool = option(True, check=check_bool, front_end=True,
                                  doc="True: the mean over examples; False: per-example lists")
    num_threads: int | None = option(1, kind="int", check=_threads,
                                     doc="threads of the compiled core (None or 0: every core); scores do not "
                                         "depend on it")


class Meteor(MeanMetric):
    """METEOR per example (nltk ``meteor_score`` on ``word_tokenize`` tokens), the best over the
    example's references; the exact mean with ``use_aggregator=True``. Range 0 to 1; an empty
    prediction or reference scores 0. Exact, then stemmed, then WordNet 3.0 synonym matches;
    ``Fmean = P*R / (alpha*P + (1-alpha)*R)`` times ``1 - gamma * (chunks/matches)**beta``.
    """

    name = "meteor"
    Options = MeteorOptions

    @functools.cached_property
    def scorer(self) -> MeteorScorer:
        return MeteorScorer(self.options.alpha, self.options.beta, self.options.gamma)

    def settings_signature(self) -> str:
        """nltk's tokens, the three parameters, WordNet's version."""
        o = self.options
        return signature("meteor", tok="treebank", alpha=o.alpha, beta=o.beta, gamma=o.gamma, wordnet="3.0")

    def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        refs = [[r] if isinstance(r, str) else list(r) for r in inputs["references"]]
        return {"meteor": self.scorer.score_batch(inputs["predictions"], refs, self.options.num_threads)}


meteor = Meteor.function()
