"""The mteval tokenizers of BLEU: ``13a`` (mteval-v13a, sacrebleu's default) and ``intl``
(mteval-v14's international tokenization)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import _native
from .base import SacrebleuTokenizer, Tokenizer

__all__ = ["Tokenizer13a", "TokenizerIntl"]


class Tokenizer13a(Tokenizer):
    """mteval-v13a tokenization as sacrebleu's ``13a`` (the BLEU default), returning tokens.

    Computed by the compiled core (``_native.tokenize_13a``): sacrebleu 2.x's rules in its order,
    on ``text.rstrip()`` as sacrebleu's BLEU calls it, lower-cased first (Python's ``str.lower``)
    with ``lowercase``. Hand-written rather than sacrebleu's own because it is faster and gives
    tokens, not a string to split again; tests hold it equal to sacrebleu's on adversarial and
    random Unicode text.
    """

    name = "13a"

    def __init__(self, lowercase: bool = False) -> None:
        self.lowercase = bool(lowercase)

    def __call__(self, text: str) -> list[str]:
        return _native.tokenize_13a([text], self.lowercase)[0]

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        return _native.tokenize_13a(texts, self.lowercase)

    def __repr__(self) -> str:
        return f"Tokenizer13a(lowercase={self.lowercase})"


class TokenizerIntl(SacrebleuTokenizer):
    """sacrebleu's ``intl``: mteval-v14's international tokenization (Unicode punctuation and
    symbols split off, except a punctuation mark between digits)."""

    name = "intl"
    _module = "tokenizer_intl"
    _class = "TokenizerV14International"
