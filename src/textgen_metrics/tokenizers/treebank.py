"""nltk's Treebank word tokenizer (``word_tokenize(text, preserve_line=True)``), as METEOR uses it."""

from __future__ import annotations

from collections.abc import Sequence

from .. import _native
from .base import Tokenizer

__all__ = ["TreebankWordTokenizer"]


class TreebankWordTokenizer(Tokenizer):
    """nltk's ``word_tokenize(text, preserve_line=True)``, token for token, computed by the core.

    The core (``_native.treebank_tokenize``) applies nltk's own ``NLTKWordTokenizer`` rules in
    its order, with the ``regex`` module's ``\\w``, ``\\s`` and ``\\d`` classes (tables generated
    from the installed ``regex``); tests hold it equal to nltk's on adversarial and random
    Unicode text. nltk is not imported.
    """

    name = "treebank"

    def __call__(self, text: str) -> list[str]:
        return _native.treebank_tokenize([text])[0]

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        return _native.treebank_tokenize(texts)
