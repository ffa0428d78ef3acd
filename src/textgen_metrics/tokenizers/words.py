"""Word tokenizers of the ROUGE family, with optional Porter stemming.

- ``rouge_score`` (the ROUGE default): rouge-score 0.1.2's tokenizer, for parity: lower-case,
  every run of characters outside ``[a-z0-9]`` becomes a space, split; with the stemmer, Porter
  (nltk's rules, as rouge-score) on tokens longer than 3 characters. Non-Latin scripts are dropped.
- ``unicode``: NFKC, case-folded, keeps letters, digits and combining marks of every script;
  scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) give one
  token per character. The stemmer, when on, applies to ASCII tokens only.
- ``whitespace``: lower-case, split on whitespace, punctuation kept.

These tokenizers never join text across whitespace, so a text's tokens are its lines' tokens
end to end (ROUGE-Lsum relies on that).

``rouge_score``'s tokenising and every Porter stem are computed by the compiled core
(:mod:`textgen_metrics._native`): a batch of texts, or a text's new tokens, per call. nltk is not
imported (its Porter stemmer is the reference the core's is tested against, word for word).
"""

from __future__ import annotations

import importlib
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from .. import _native
from .base import Tokenizer

__all__ = ["PorterStemmer", "WordTokenizer", "RougeScoreTokenizer", "UnicodeTokenizer",
           "WhitespaceTokenizer"]


class PorterStemmer:
    """nltk's Porter stemmer (the NLTK_EXTENSIONS mode rouge-score uses), computed by the core.

    ``stemmer(word)`` stems one word; :meth:`stem_many` stems a list in one call into the core.
    """

    _shared: PorterStemmer | None = None

    @classmethod
    def shared(cls) -> PorterStemmer:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def __call__(self, word: str) -> str:
        return _native.porter_stem([word])[0]

    def stem_many(self, words: Sequence[str]) -> list[str]:
        """The stem of every word, in one call into the core."""
        return _native.porter_stem(words)


class _Stems:
    """Tokens -> tokens with the Porter stem of every token that ``stems(token)`` picks; the
    others as they are. The core stems a text's new tokens in one call; a bounded memo (stemming
    is a pure function of the word) makes a known token a dictionary look-up."""

    _LIMIT = 1 << 20

    def __init__(self, stems: Callable[[str], bool]) -> None:
        self._stems = stems
        self._memo: dict[str, str] = {}

    def __call__(self, tokens: list[str]) -> list[str]:
        memo = self._memo
        try:
            return [memo[t] for t in tokens]
        except KeyError:
            pass
        if len(memo) > self._LIMIT:
            memo.clear()
        new = [t for t in dict.fromkeys(tokens) if t not in memo]
        picked = [t for t in new if self._stems(t)]
        for t in new:
            memo[t] = t
        for t, stem in zip(picked, _native.porter_stem(picked), strict=True):
            memo[t] = stem
        return [memo[t] for t in tokens]


# rouge-score stems tokens longer than 3 characters; the unicode tokenizer only ASCII words
_stem_long = _Stems(lambda t: len(t) > 3)
_stem_ascii_words = _Stems(lambda t: len(t) > 3 and t.isascii() and t.isalpha())


class WordTokenizer(Tokenizer):
    """Base of the ROUGE-family tokenizers: lower-cased words, optionally stemmed."""

    name = "words"
    lowercase = True

    def __init__(self, use_stemmer: bool = False) -> None:
        self.use_stemmer = bool(use_stemmer)

    @property
    def signature(self) -> str:
        return f"{self.name}{'+porter' if self.use_stemmer else ''}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(use_stemmer={self.use_stemmer})"


class RougeScoreTokenizer(WordTokenizer):
    """rouge-score 0.1.2 ``tokenize.tokenize``, token for token, computed by the core
    (``_native.RougeTokenizer``: Python's ``str.lower``, ``[a-z0-9]`` runs, Porter stems of
    tokens longer than 3 characters, stems that are not ``[a-z0-9]+`` dropped)."""

    name = "rouge_score"
    _made: _native.RougeTokenizer | None = None

    @property
    def _core(self) -> _native.RougeTokenizer:
        """The core's tokenizer, made on first use: ROUGE's text path never needs it (its
        scoring core tokenises the texts itself)."""
        if self._made is None:
            self._made = _native.RougeTokenizer(self.use_stemmer)
        return self._made

    def __call__(self, text: str) -> list[str]:
        return self._core.tokenize_batch([text], False)[0]

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        return self._core.tokenize_batch(texts, False)

    def lines(self, text: str) -> list[list[str]]:
        """Tokens of each non-empty line (ROUGE-Lsum's sentence units)."""
        return self._core.tokenize_batch([text], True)[0]


class UnicodeTokenizer(WordTokenizer):
    """Script-aware tokenizer that keeps every script (rouge-score drops non-Latin text)."""

    name = "unicode"
    _pattern: Any = None

    def __init__(self, use_stemmer: bool = False) -> None:
        super().__init__(use_stemmer)
        if UnicodeTokenizer._pattern is None:
            # the regex module (a dependency) for \p{..} classes; imported by name, as it ships
            # no type stubs (the pattern is typed Any)
            regex = importlib.import_module("regex")
            nospace = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
            UnicodeTokenizer._pattern = regex.compile(
                rf"[{nospace}][\p{{M}}]*|(?:(?![{nospace}])[\p{{L}}\p{{N}}\p{{M}}])+"
            )

    def __call__(self, text: str) -> list[str]:
        tokens: list[str] = self._pattern.findall(unicodedata.normalize("NFKC", text).casefold())
        return _stem_ascii_words(tokens) if self.use_stemmer else tokens


class WhitespaceTokenizer(WordTokenizer):
    """Lower-case and split on whitespace; punctuation stays attached."""

    name = "whitespace"

    def __call__(self, text: str) -> list[str]:
        tokens = text.lower().split()
        return _stem_long(tokens) if self.use_stemmer else tokens

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        out = _native.split_whitespace(texts, True)
        return [_stem_long(t) for t in out] if self.use_stemmer else out
