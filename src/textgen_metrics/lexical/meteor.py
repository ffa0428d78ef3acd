"""METEOR as nltk's ``meteor_score`` (nltk 3.x), step for step, with memoised look-ups.

Alignment in three stages, each matching from the last hypothesis word backwards to the last
free reference position of an equal word: exact (lower-cased) words, Porter stems, then WordNet
synonyms (of the *stemmed* leftovers, as nltk does). Score: ``Fmean = P*R / (alpha*P +
(1-alpha)*R)``, penalty ``gamma * (chunks/matches)**beta``, METEOR ``= (1 - penalty) * Fmean``,
the maximum over references. nltk spends its time in WordNet look-ups and stemming; here each
distinct word is stemmed and looked up once per process, which changes no score.

This is nltk's METEOR, which differs from the original Java METEOR 1.5 (no paraphrase table,
no function-word weighting, different chunk handling).
"""

from __future__ import annotations

from typing import Any

from ..aggregation import mean
from ..results import meteor_signature, reported
from ..validation import check_bool, check_number, check_references, check_same_length, check_texts
from ..tokenizers import TreebankWordTokenizer
from ..wordnet import load_wordnet

__all__ = ["meteor", "single_meteor", "word_tokenize", "MeteorScorer"]


_TOKENIZER = None


def word_tokenize(text):
    """nltk ``word_tokenize(text, preserve_line=True)``: Treebank rules, no punkt model."""
    global _TOKENIZER
    if _TOKENIZER is None:
        _TOKENIZER = TreebankWordTokenizer()
    return _TOKENIZER(text)


def _match(hyp_idx, hyp_words, ref_idx, ref_words):
    """nltk ``_match_enums`` on parallel index/word lists.

    From the last hypothesis word backwards, each word takes the last free reference position
    holding the same word. Returns the matches and the unmatched (indices, words) of both sides.
    """
    positions = {}
    for j, w in enumerate(ref_words):
        lst = positions.get(w)
        if lst is None:
            positions[w] = [j]
        else:
            lst.append(j)
    matches = []
    hyp_left = []
    ref_used = set()
    for i in range(len(hyp_words) - 1, -1, -1):
        lst = positions.get(hyp_words[i])
        if lst:
            j = lst.pop()
            ref_used.add(j)
            matches.append((hyp_idx[i], ref_idx[j]))
        else:
            hyp_left.append(i)
    if not matches:
        return matches, hyp_idx, hyp_words, ref_idx, ref_words
    hyp_left.reverse()
    keep = [j for j in range(len(ref_words)) if j not in ref_used]
    return (matches, [hyp_idx[i] for i in hyp_left], [hyp_words[i] for i in hyp_left],
            [ref_idx[j] for j in keep], [ref_words[j] for j in keep])


class MeteorScorer:
    """Holds the stemmer, WordNet and the per-word memos shared by all examples."""

    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5, wordnet: Any = None) -> None:
        from nltk.stem.porter import PorterStemmer

        check_number("alpha", alpha, minimum=0.0, maximum=1.0)
        check_number("beta", beta, minimum=0.0)
        check_number("gamma", gamma, minimum=0.0, maximum=1.0)
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self._stem = PorterStemmer().stem
        self._wordnet = wordnet if wordnet is not None else load_wordnet()
        self._stems = {}
        self._synonyms = {}
        self._tokens = {}

    def tokenize(self, text):
        toks = self._tokens.get(text)
        if toks is None:
            if len(self._tokens) >= 65536:
                self._tokens.clear()
            toks = self._tokens[text] = word_tokenize(text)
        return toks

    def _stem_of(self, word):
        s = self._stems.get(word)
        if s is None:
            s = self._stems[word] = self._stem(word)
        return s

    def _synonyms_of(self, word):
        syns = self._synonyms.get(word)
        if syns is None:
            syns = {
                lemma.name()
                for synset in self._wordnet.synsets(word)
                for lemma in synset.lemmas()
                if lemma.name().find("_") < 0
            }
            syns.add(word)
            syns = self._synonyms[word] = frozenset(syns)
        return syns

    def _wordnet_match(self, hyp_idx, hyp_words, ref_idx, ref_words):
        """nltk ``_enum_wordnetsyn_match``: each remaining hypothesis word, last first, takes
        the free reference position furthest right whose word is one of its synonyms."""
        positions = {}
        for j, w in enumerate(ref_words):
            positions.setdefault(w, []).append(j)
        matches = []
        for i in range(len(hyp_words) - 1, -1, -1):
            syns = self._synonyms_of(hyp_words[i])
            best_j = -1
            best_word = None
            # the same maximum, looked for on the smaller side
            if len(positions) < len(syns):
                for w, lst in positions.items():
                    if lst and lst[-1] > best_j and w in syns:
                        best_j = lst[-1]
                        best_word = w
            else:
                for w in syns:
                    lst = positions.get(w)
                    if lst and lst[-1] > best_j:
                        best_j = lst[-1]
                        best_word = w
            if best_word is not None:
                positions[best_word].pop()
                matches.append((hyp_idx[i], ref_idx[best_j]))
        return matches

    def align(self, hyp_tokens, ref_tokens):
        """Sorted (hypothesis index, reference index) matches, as nltk's ``align_words``."""
        hyp_words = [w.lower() for w in hyp_tokens]
        ref_words = [w.lower() for w in ref_tokens]
        exact, hi, hw, ri, rw = _match(range(len(hyp_words)), hyp_words,
                                       range(len(ref_words)), ref_words)
        if not hw or not rw:
            return sorted(exact)
        stem = self._stem_of
        stemmed, hi, hw, ri, rw = _match(hi, [stem(w) for w in hw], ri, [stem(w) for w in rw])
        matches = exact + stemmed
        if hw and rw:
            matches += self._wordnet_match(hi, hw, ri, rw)
        matches.sort()
        return matches

    def single(self, hyp_tokens, ref_tokens):
        """nltk ``single_meteor_score``."""
        matches = self.align(hyp_tokens, ref_tokens)
        count = len(matches)
        if not count or not hyp_tokens or not ref_tokens:
            return 0.0
        precision = float(count) / len(hyp_tokens)
        recall = float(count) / len(ref_tokens)
        denom = self.alpha * precision + (1 - self.alpha) * recall
        if denom == 0:
            return 0.0
        fmean = (precision * recall) / denom
        chunks = 1
        for k in range(count - 1):
            a, b = matches[k], matches[k + 1]
            if not (b[0] == a[0] + 1 and b[1] == a[1] + 1):
                chunks += 1
        frag_frac = float(chunks) / count
        penalty = self.gamma * frag_frac ** self.beta
        return (1 - penalty) * fmean

    def score(self, prediction, references):
        """METEOR of one prediction: the maximum over its references."""
        hyp = self.tokenize(prediction)
        return max(self.single(hyp, self.tokenize(r)) for r in references)


def single_meteor(hyp_tokens, ref_tokens, alpha=0.9, beta=3.0, gamma=0.5):
    return MeteorScorer(alpha, beta, gamma).single(hyp_tokens, ref_tokens)


@reported(meteor_signature)
def meteor(predictions: Any, references: Any, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5,
           use_aggregator: bool = True) -> dict[str, Any]:
    """METEOR per example (nltk ``meteor_score`` on ``word_tokenize`` tokens); the mean with
    ``use_aggregator=True``."""
    use_aggregator = check_bool("use_aggregator", use_aggregator)
    predictions = check_texts("predictions", predictions)
    references = check_references("references", references)
    n = check_same_length(predictions=predictions, references=references)
    if n == 0:
        raise ValueError("predictions: no examples; give at least one prediction")
    scorer = MeteorScorer(alpha, beta, gamma)
    scores = [scorer.score(p, refs) for p, refs in zip(predictions, references)]
    if use_aggregator:
        return {"meteor": mean(scores)}
    return {"meteor": scores}
