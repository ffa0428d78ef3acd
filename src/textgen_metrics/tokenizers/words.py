"""Word tokenizers of the ROUGE family, with optional Porter stemming.

- ``rouge_score`` (the ROUGE default): rouge-score 0.1.2's tokenizer, for parity: lower-case,
  every run of characters outside ``[a-z0-9]`` becomes a space, split; with the stemmer, Porter
  (nltk, as rouge-score) on tokens longer than 3 characters. Non-Latin scripts are dropped.
- ``unicode``: NFKC, case-folded, keeps letters, digits and combining marks of every script;
  scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) give one
  token per character. The stemmer, when on, applies to ASCII tokens only.
- ``whitespace``: lower-case, split on whitespace, punctuation kept.

These tokenizers never join text across whitespace, so a text's tokens are its lines' tokens
end to end (ROUGE-Lsum relies on that).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Callable

from .base import Tokenizer

__all__ = ["PorterStemmer", "WordTokenizer", "RougeScoreTokenizer", "UnicodeTokenizer",
           "WhitespaceTokenizer"]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_VALID = re.compile(r"^[a-z0-9]+$")


class PorterStemmer:
    """nltk's Porter stemmer (the NLTK_EXTENSIONS mode rouge-score uses) with a memo.

    Stemming is a pure function of the word, so each distinct word is stemmed once per process;
    the memo grows with the vocabulary, not with the number of texts.
    """

    _shared: PorterStemmer | None = None

    def __init__(self) -> None:
        from nltk.stem import porter  # lazy: only the stemmer needs nltk

        self._stem: Callable[[str], str] = porter.PorterStemmer().stem
        self._memo: dict[str, str] = {}

    @classmethod
    def shared(cls) -> PorterStemmer:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def __call__(self, word: str) -> str:
        memo = self._memo
        out = memo.get(word)
        if out is None:
            out = memo[word] = self._stem(word)
        return out


class WordTokenizer(Tokenizer):
    """Base of the ROUGE-family tokenizers: lower-cased words, optionally stemmed."""

    name = "words"
    lowercase = True

    def __init__(self, use_stemmer: bool = False) -> None:
        self.use_stemmer = bool(use_stemmer)
        self._stemmer: PorterStemmer | None = PorterStemmer.shared() if self.use_stemmer else None

    @property
    def signature(self) -> str:
        return f"{self.name}{'+porter' if self.use_stemmer else ''}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(use_stemmer={self.use_stemmer})"


class RougeScoreTokenizer(WordTokenizer):
    """rouge-score 0.1.2 ``tokenize.tokenize``, token for token, with a memoised stemmer."""

    name = "rouge_score"

    def __init__(self, use_stemmer: bool = False) -> None:
        super().__init__(use_stemmer)
        # word -> token after stemming and validation (None when the stem is not [a-z0-9]+)
        self._memo: dict[str, str | None] = {}
        self._invalid = False

    def __call__(self, text: str) -> list[str]:
        words = _NON_ALNUM.sub(" ", text.lower()).split()
        if self._stemmer is None:
            return words
        memo = self._memo
        try:
            out = [memo[w] for w in words]
        except KeyError:
            stem = self._stemmer
            for w in words:
                if w not in memo:
                    t = stem(w) if len(w) > 3 else w
                    if _VALID.match(t):
                        memo[w] = t
                    else:  # rouge-score drops a stem that is not [a-z0-9]+
                        memo[w] = None
                        self._invalid = True
            out = [memo[w] for w in words]
        if self._invalid:
            return [t for t in out if t is not None]
        return out  # type: ignore[return-value]  # no None without an invalid stem


class UnicodeTokenizer(WordTokenizer):
    """Script-aware tokenizer that keeps every script (rouge-score drops non-Latin text)."""

    name = "unicode"
    _pattern: Any = None

    def __init__(self, use_stemmer: bool = False) -> None:
        super().__init__(use_stemmer)
        if UnicodeTokenizer._pattern is None:
            import regex  # installed with nltk; needed for \p{..} classes

            nospace = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
            UnicodeTokenizer._pattern = regex.compile(
                rf"[{nospace}][\p{{M}}]*|(?:(?![{nospace}])[\p{{L}}\p{{N}}\p{{M}}])+"
            )

    def __call__(self, text: str) -> list[str]:
        tokens: list[str] = self._pattern.findall(unicodedata.normalize("NFKC", text).casefold())
        if self._stemmer is None:
            return tokens
        stem = self._stemmer
        return [stem(t) if len(t) > 3 and t.isascii() and t.isalpha() else t for t in tokens]


class WhitespaceTokenizer(WordTokenizer):
    """Lower-case and split on whitespace; punctuation stays attached."""

    name = "whitespace"

    def __call__(self, text: str) -> list[str]:
        tokens = text.lower().split()
        if self._stemmer is None:
            return tokens
        stem = self._stemmer
        return [stem(t) if len(t) > 3 else t for t in tokens]
