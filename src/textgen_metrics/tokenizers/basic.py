"""The plain tokenizers of BLEU: ``none`` (split on whitespace) and ``char`` (one token per
character)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import _native
from .base import Tokenizer

__all__ = ["NoneTokenizer", "CharTokenizer", "SplitTokenizer"]


class NoneTokenizer(Tokenizer):
    """sacrebleu's ``none``: the text split on whitespace (``str.split()``), nothing else;
    computed by the core (``_native.split_whitespace``)."""

    name = "none"

    def __call__(self, text: str) -> list[str]:
        return _native.split_whitespace([text])[0]

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        return _native.split_whitespace(texts)


SplitTokenizer = NoneTokenizer  # the earlier name


class CharTokenizer(Tokenizer):
    """sacrebleu's ``char``: every character that is not whitespace is a token.

    sacrebleu joins the characters with spaces and splits the result on whitespace, which
    leaves exactly the characters for which ``str.isspace`` is false; this does that in one
    pass (faster, same tokens).
    """

    name = "char"

    def __call__(self, text: str) -> list[str]:
        return [c for c in text if not c.isspace()]
