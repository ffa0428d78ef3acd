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

from collections import defaultdict

from ..aggregation import mean
from ..validation import check_references, check_same_length, check_texts
from ..wordnet import load_wordnet

__all__ = ["meteor", "single_meteor", "word_tokenize", "MeteorScorer"]


def word_tokenize(text):
    """nltk ``word_tokenize(text, preserve_line=True)``: Treebank rules, no punkt model."""
    from nltk.tokenize import word_tokenize as nltk_word_tokenize

    return nltk_word_tokenize(text, preserve_line=True)


def _match(hyp, ref):
    """nltk ``_match_enums`` on (index, word) lists: (matches, hyp left, ref left)."""
    positions = defaultdict(list)
    for j, (_, word) in enumerate(ref):
        positions[word].append(j)
    matches = []
    hyp_used = set()
    ref_used = set()
    for i in range(len(hyp) - 1, -1, -1):
        pos = positions.get(hyp[i][1])
        if pos:
            j = pos.pop()
            hyp_used.add(i)
            ref_used.add(j)
            matches.append((hyp[i][0], ref[j][0]))
    if not matches:
        return matches, hyp, ref
    return (matches, [p for i, p in enumerate(hyp) if i not in hyp_used],
            [p for j, p in enumerate(ref) if j not in ref_used])


class MeteorScorer:
    """Holds the stemmer, WordNet and the per-word memos shared by all examples."""

    def __init__(self, alpha=0.9, beta=3.0, gamma=0.5, wordnet=None):
        from nltk.stem.porter import PorterStemmer

        for name, value in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name}: expected a number, got {value!r}")
        if not 0 <= alpha <= 1:
            raise ValueError(f"alpha: {alpha!r} must lie in [0, 1]")
        if beta < 0 or not 0 <= gamma <= 1:
            raise ValueError(f"beta/gamma: beta must be >= 0 and gamma in [0, 1] (got {beta!r}, {gamma!r})")
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

    def _wordnet_match(self, hyp, ref):
        """nltk ``_enum_wordnetsyn_match``."""
        positions = defaultdict(list)
        for j, (_, word) in enumerate(ref):
            positions[word].append(j)
        matches = []
        for i in range(len(hyp) - 1, -1, -1):
            best_j = -1
            best_word = None
            for syn in self._synonyms_of(hyp[i][1]):
                pos = positions.get(syn)
                if pos and pos[-1] > best_j:
                    best_j = pos[-1]
                    best_word = syn
            if best_word is not None:
                positions[best_word].pop()
                matches.append((hyp[i][0], ref[best_j][0]))
        return matches

    def align(self, hyp_tokens, ref_tokens):
        """Sorted (hypothesis index, reference index) matches, as nltk's ``align_words``."""
        hyp = list(enumerate(w.lower() for w in hyp_tokens))
        ref = list(enumerate(w.lower() for w in ref_tokens))
        exact, hyp, ref = _match(hyp, ref)
        stem = self._stem_of
        stemmed, hyp, ref = _match([(i, stem(w)) for i, w in hyp], [(j, stem(w)) for j, w in ref])
        synonyms = self._wordnet_match(hyp, ref) if hyp and ref else []
        return sorted(exact + stemmed + synonyms, key=lambda pair: pair[0])

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


def meteor(predictions, references, alpha=0.9, beta=3.0, gamma=0.5, use_aggregator=True):
    """METEOR per example (nltk ``meteor_score`` on ``word_tokenize`` tokens); the mean with
    ``use_aggregator=True``."""
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
