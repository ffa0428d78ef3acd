"""The tokenizer base class, the wrapper for a user's function, and the lower-casing wrapper.

A tokenizer is a callable ``str -> list[str]`` with a ``signature``: a short string that names
every setting of the tokenizer that changes a score (sacrebleu's tokenizers have a
``signature()`` method; here it is a property, so that it reads like the other settings).
``batch(texts)`` gives the tokens of many texts; the tokenizers computed by the compiled core
do the whole list in one call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Tokenizer", "CallableTokenizer", "Lowercased", "SacrebleuTokenizer"]


class Tokenizer(ABC):
    """A callable ``str -> list[str]`` with a ``name`` and a ``signature``.

    ``name`` is the tokenizer's registered name; ``signature`` is what sacrebleu prints after
    ``tok:`` (the name, with a version for MeCab, ``+porter`` when stemmed). Case is reported
    apart, as sacrebleu's ``case:lc``: ``lowercase`` says whether the text is lower-cased
    before tokenization; ``use_stemmer`` whether the tokens are stemmed.
    """

    name: str = "base"
    lowercase: bool = False
    use_stemmer: bool = False

    @abstractmethod
    def __call__(self, text: str) -> list[str]:
        """The tokens of ``text``."""

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        """The tokens of every text (``[self(t) for t in texts]``, or one call into the core)."""
        return [self(t) for t in texts]

    @property
    def signature(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class CallableTokenizer(Tokenizer):
    """A user's ``str -> list[str]`` function (or an object with ``.tokenize``), used as is.

    As in rouge-score and Hugging Face's rouge, a user tokenizer's tokens are not stemmed.
    """

    name = "callable"

    def __init__(self, fn: Callable[[str], Any] | Any) -> None:
        tokenize = getattr(fn, "tokenize", None)
        self._fn: Callable[[str], Any] = tokenize if callable(tokenize) else fn
        qualname = getattr(fn, "__qualname__", None) or type(fn).__name__
        self._signature = f"callable:{qualname}"

    @property
    def signature(self) -> str:
        return self._signature

    def __call__(self, text: str) -> list[str]:
        tokens = self._fn(text)
        if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(
                f"tokenizer: a tokenizer must return a list of str, got {type(tokens).__name__}"
            )
        return list(tokens)


class Lowercased(Tokenizer):
    """Any tokenizer applied to the lower-cased text, as sacrebleu's ``lowercase=True``
    (which lower-cases a segment before its tokenizer sees it)."""

    lowercase = True

    def __init__(self, inner: Tokenizer) -> None:
        self.inner = inner
        self.name = inner.name  # sacrebleu prints the case apart from the tokenizer's name
        self.use_stemmer = inner.use_stemmer

    @property
    def signature(self) -> str:
        return self.inner.signature

    def __call__(self, text: str) -> list[str]:
        return self.inner(text.lower())

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        return self.inner.batch([t.lower() for t in texts])

    def __repr__(self) -> str:
        return f"Lowercased({self.inner!r})"


class SacrebleuTokenizer(Tokenizer):
    """A sacrebleu tokenizer, used as is: ``sacrebleu_tokenizer(text.rstrip()).split()``,
    exactly what sacrebleu's BLEU does with a segment. Its ``signature`` is sacrebleu's."""

    _module = ""
    _class = ""

    def __init__(self, **options: Any) -> None:
        import importlib

        cls = getattr(importlib.import_module(f"sacrebleu.tokenizers.{self._module}"), self._class)
        self._tok: Any = cls(**options)
        self._signature: str = self._tok.signature()

    @property
    def signature(self) -> str:
        return self._signature

    def __call__(self, text: str) -> list[str]:
        out: str = self._tok(text.rstrip())
        return out.split()
