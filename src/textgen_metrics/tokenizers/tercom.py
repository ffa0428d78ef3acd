"""TER's tokenizer: sacrebleu's re-implementation of Tercom's normaliser."""

from __future__ import annotations

from .base import SacrebleuTokenizer

__all__ = ["TercomTokenizer"]


class TercomTokenizer(SacrebleuTokenizer):
    """sacrebleu's ``TercomTokenizer`` with TER's four options, as sacrebleu's TER applies it
    (``tokenizer(text.rstrip()).split()``): lower-cased unless ``case_sensitive``; with
    ``normalized``, Tercom's normalisation of punctuation and XML entities (and, with
    ``asian_support``, CJK characters split one per token); with ``no_punct``, punctuation
    removed (with ``asian_support`` CJK and full-width punctuation too)."""

    name = "tercom"
    _module = "tokenizer_ter"
    _class = "TercomTokenizer"

    def __init__(self, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False) -> None:
        self.normalized = bool(normalized)
        self.no_punct = bool(no_punct)
        self.asian_support = bool(asian_support)
        self.case_sensitive = bool(case_sensitive)
        self.lowercase = not self.case_sensitive
        super().__init__(normalized=self.normalized, no_punct=self.no_punct, asian_support=self.asian_support,
                         case_sensitive=self.case_sensitive)

    def __repr__(self) -> str:
        return (f"TercomTokenizer(normalized={self.normalized}, no_punct={self.no_punct}, "
                f"asian_support={self.asian_support}, case_sensitive={self.case_sensitive})")
