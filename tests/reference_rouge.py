"""Reference (slow, pure Python) ROUGE scorer: the product's former implementation, kept only as
the reference that tests/test_native.py holds the compiled core equal to.

ROUGE: N (1-9), L, Lsum, W, S, S<k>, SU, SU<k>.

Per example and reference the scores are those of the reference implementations:

- ``rouge1``..``rouge9``, ``rougeL``, ``rougeLsum``: rouge-score 0.1.2 ``RougeScorer.score``
  (same tokenizer and Porter stemmer, same LCS path for the summary-level union LCS), bit for
  bit;
- ``rougeW``, ``rougeS*``, ``rougeSU*``: the official ROUGE-1.5.5 script on the same tokens,
  each line (or sentence, with ``split_summaries``) a sentence unit for ``rougeW``. Its two
  quirks are reproduced: the ROUGE-W recall applies the weight twice (identical texts of six
  tokens get recall 0.69883), and ROUGE-SU counts the unigrams of every token but the last.

With several references an example keeps, per type, the reference with the best F-measure (the
first one on ties), as rouge-score's ``score_multi`` and the MATLAB ``rougeEvaluationScore``.
"""

from __future__ import annotations

import collections
from typing import Any

from reference_kernels import lcs_length, union_lcs_indices, wlcs_mark
from textgen_metrics.lexical.rouge import parse_rouge_type  # the type names, not a kernel
from textgen_metrics.tokenizers import _Tokenizer, get_tokenizer, split_sentences

__all__ = ["Score", "RougeScorer", "DEFAULT_ROUGE_TYPES", "parse_rouge_type"]

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

Score = collections.namedtuple("Score", ["precision", "recall", "fmeasure"])
_ZERO = Score(0.0, 0.0, 0.0)

def _fmeasure(precision: float, recall: float) -> float:
    # rouge-score's scoring.fmeasure
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _fmeasure_perl(precision: float, recall: float, alpha: float = 0.5) -> float:
    # ROUGE-1.5.5: P*R / ((1-alpha)*P + alpha*R)
    denom = (1 - alpha) * precision + alpha * recall
    return precision * recall / denom if denom > 0 else 0.0


class _Doc:
    """A text with its tokenizations and counts computed once, on first use."""

    __slots__ = ("text", "_tokens", "_sents", "_ngrams", "_skips", "_scorer")

    def __init__(self, text: str, scorer: RougeScorer) -> None:
        self.text = text
        self._scorer = scorer
        self._tokens = None
        self._sents = None
        self._ngrams = {}
        self._skips = {}

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
            if self._scorer.split_summaries:
                units = split_sentences(self.text)
            else:
                units = [s for s in self.text.split("\n") if len(s)]
            tok = self._scorer._tokenizer
            self._sents = [tok(s) for s in units]
        return self._sents

    def ngrams(self, n: int) -> collections.Counter:
        c = self._ngrams.get(n)
        if c is None:
            toks = self.tokens
            if n == 1:
                c = collections.Counter(toks)
            else:
                c = collections.Counter(zip(*[toks[i:] for i in range(n)], strict=False))
            self._ngrams[n] = c
        return c

    def skip_bigrams(self, gap: int | None, with_unigrams: bool) -> tuple[collections.Counter, int]:
        """ROUGE-1.5.5 ``createSkipBigram``: (counts, total)."""
        key = (gap, with_unigrams)
        got = self._skips.get(key)
        if got is None:
            toks = self.tokens
            n = len(toks)
            counts = collections.Counter()
            for i in range(n - 1):
                first = toks[i]
                end = n if gap is None else min(n, i + gap + 2)
                counts.update((first, second) for second in toks[i + 1:end])
            total = sum(counts.values())
            if with_unigrams and n > 1:
                # the script adds a unigram inside the same loop, so the last token gets none
                counts.update(toks[: n - 1])
                total += n - 1
            got = self._skips[key] = (counts, total)
        return got


def _token_counts(sents: list[list[str]]) -> collections.Counter:
    """Token counts over all sentences of a text (the clipping budget of Lsum and W)."""
    counts = collections.Counter()
    for s in sents:
        counts.update(s)
    return counts


def _clipped_hits(model: collections.Counter, peer: collections.Counter) -> int:
    if len(peer) < len(model):
        return sum(min(c, model[g]) for g, c in peer.items() if g in model)
    return sum(min(c, peer[g]) for g, c in model.items() if g in peer)


class RougeScorer:
    """Scores one prediction against one or several references (rouge-score's interface).

    >>> scorer = RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    >>> round(scorer.score("The cat sat on the mat.", "The cats sat.")["rouge1"].fmeasure, 6)
    0.666667
    """

    _CACHE_SIZE = 2048

    def __init__(self, rouge_types: Any = DEFAULT_ROUGE_TYPES, use_stemmer: bool = False, tokenizer: Any = None,
                 split_summaries: bool = False, rouge_w_weight: float = 1.2) -> None:
        if rouge_types is None:
            rouge_types = DEFAULT_ROUGE_TYPES
        if isinstance(rouge_types, str):
            rouge_types = [rouge_types]
        rouge_types = list(rouge_types)
        if not rouge_types:
            raise ValueError("rouge_types: empty; give at least one rouge type")
        self.rouge_types = rouge_types
        self._kinds = [(t,) + parse_rouge_type(t) for t in rouge_types]
        try:
            w = float(rouge_w_weight)
        except (TypeError, ValueError):
            raise TypeError(f"rouge_w_weight: expected a number, got {rouge_w_weight!r}") from None
        if not w > 1.0:
            raise ValueError(f"rouge_w_weight: {rouge_w_weight!r} must be greater than 1")
        self.rouge_w_weight = w
        self.split_summaries = bool(split_summaries)
        self._tokenizer = get_tokenizer(tokenizer, use_stemmer)
        self.use_stemmer = self._tokenizer.use_stemmer
        self._derive_tokens = isinstance(self._tokenizer, _Tokenizer) and any(
            k in ("Lsum", "W") for _, k, _ in self._kinds)
        self._powers = [0.0, 1.0]
        self._cache = {}

    # -- documents -------------------------------------------------------------------------
    def _doc(self, text: str) -> _Doc:
        cache = self._cache
        doc = cache.get(text)
        if doc is None:
            if len(cache) >= self._CACHE_SIZE:
                cache.clear()  # bounded: memory stays flat over any number of examples
            doc = cache[text] = _Doc(text, self)
        return doc

    def _power(self, k: int) -> list[float]:
        powers = self._powers
        while len(powers) <= k:
            powers.append(len(powers) ** self.rouge_w_weight)
        return powers

    # -- the types --------------------------------------------------------------------------
    @staticmethod
    def _score_n(target: _Doc, prediction: _Doc, n: int) -> Score:
        t = target.ngrams(n)
        p = prediction.ngrams(n)
        hits = _clipped_hits(t, p)
        t_count = max(len(target.tokens) - n + 1, 0)
        p_count = max(len(prediction.tokens) - n + 1, 0)
        precision = hits / max(p_count, 1)
        recall = hits / max(t_count, 1)
        return Score(precision, recall, _fmeasure(precision, recall))

    @staticmethod
    def _score_lcs(target_tokens: list[str], prediction_tokens: list[str]) -> Score:
        if not target_tokens or not prediction_tokens:
            return _ZERO
        lcs = lcs_length(target_tokens, prediction_tokens)
        precision = lcs / len(prediction_tokens)
        recall = lcs / len(target_tokens)
        return Score(precision, recall, _fmeasure(precision, recall))

    @staticmethod
    def _score_lsum(ref_sents: list[list[str]], can_sents: list[list[str]]) -> Score:
        # rouge-score's _summary_level_lcs
        if not ref_sents or not can_sents:
            return _ZERO
        m = sum(map(len, ref_sents))
        n = sum(map(len, can_sents))
        if not n or not m:
            return _ZERO
        if len(ref_sents) == 1 and len(can_sents) == 1:
            hits = lcs_length(ref_sents[0], can_sents[0])  # one LCS: no clipping can apply
        else:
            cnt_r = _token_counts(ref_sents)
            cnt_c = _token_counts(can_sents)
            hits = 0
            for r, union in zip(ref_sents, union_lcs_indices(ref_sents, can_sents), strict=True):
                for i in union:
                    tok = r[i]
                    if cnt_c[tok] > 0 and cnt_r[tok] > 0:
                        hits += 1
                        cnt_c[tok] -= 1
                        cnt_r[tok] -= 1
        recall = hits / m
        precision = hits / n
        return Score(precision, recall, _fmeasure(precision, recall))

    def _score_w(self, target: _Doc, prediction: _Doc) -> Score:
        # ROUGE-1.5.5 computeWLCSScore for one model (reference)
        w = self.rouge_w_weight
        model_sents = target.sents
        peer_sents = prediction.sents
        longest = max([len(s) for s in model_sents] + [len(s) for s in peer_sents] + [1])
        powers = self._power(longest + 1)
        model_counts = _token_counts(model_sents)
        peer_counts = _token_counts(peer_sents)
        n_peer = sum(map(len, peer_sents))
        hit = 0
        base = 0
        for ms in model_sents:
            size = len(ms)
            mask = [0] * size
            base += powers[size]
            for ps in peer_sents:
                wlcs_mark(ms, ps, mask, powers)
            run = 0
            for j in range(size):
                if mask[j] == 1:
                    tok = ms[j]
                    if model_counts[tok] > 0 and peer_counts[tok] > 0:
                        run += 1
                        if j + 1 < size and mask[j + 1] == 0:
                            hit += powers[run]
                            run = 0
                        elif j + 1 == size:
                            hit += powers[run]
                            run = 0
                        model_counts[tok] -= 1
                        peer_counts[tok] -= 1
        count = base ** w
        count_p = n_peer ** w
        inv = 1 / w
        recall = (hit / count) ** inv if count != 0 else 0.0
        precision = (hit / count_p) ** inv if count_p != 0 else 0.0
        return Score(precision, recall, _fmeasure_perl(precision, recall))

    @staticmethod
    def _score_skip(target: _Doc, prediction: _Doc, gap: int | None, with_unigrams: bool) -> Score:
        # ROUGE-1.5.5 computeSkipBigramScore for one model
        model, model_total = target.skip_bigrams(gap, with_unigrams)
        peer, peer_total = prediction.skip_bigrams(gap, with_unigrams)
        hits = _clipped_hits(model, peer)
        recall = hits / model_total if model_total else 0.0
        precision = hits / peer_total if peer_total else 0.0
        return Score(precision, recall, _fmeasure_perl(precision, recall))

    def _score_docs(self, target: _Doc, prediction: _Doc) -> dict[str, Score]:
        out = {}
        for name, kind, param in self._kinds:
            if kind == "n":
                s = self._score_n(target, prediction, param)
            elif kind == "L":
                s = self._score_lcs(target.tokens, prediction.tokens)
            elif kind == "Lsum":
                s = self._score_lsum(target.sents, prediction.sents)
            elif kind == "W":
                s = self._score_w(target, prediction)
            else:
                s = self._score_skip(target, prediction, param, kind == "SU")
            out[name] = s
        return out

    # -- public -----------------------------------------------------------------------------
    def score(self, target: str, prediction: str) -> dict[str, Score]:
        """``{rouge_type: Score}`` for one reference ``target`` and one ``prediction``."""
        return self._score_docs(self._doc(target), self._doc(prediction))

    def score_multi(self, targets: list[str], prediction: str) -> dict[str, Score]:
        """Best F-measure over ``targets`` per type (first reference on ties)."""
        pred = self._doc(prediction)
        best = None
        for target in targets:
            scores = self._score_docs(self._doc(target), pred)
            if best is None:
                best = scores
            else:
                for k, s in scores.items():
                    if s.fmeasure > best[k].fmeasure:
                        best[k] = s
        return best
