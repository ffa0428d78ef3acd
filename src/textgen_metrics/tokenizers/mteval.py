"""The mteval tokenizers of BLEU: ``13a`` (mteval-v13a, sacrebleu's default) and ``intl``
(mteval-v14's international tokenization)."""

from __future__ import annotations

import re

from .base import SacrebleuTokenizer, Tokenizer

__all__ = ["Tokenizer13a", "TokenizerIntl"]


class Tokenizer13a(Tokenizer):
    """mteval-v13a tokenization as sacrebleu's ``13a`` (the BLEU default), returning tokens.

    Same rules in the same order as sacrebleu 2.x, including its ``rstrip`` of the segment; a
    bounded memo makes repeated segments (shared references) free. Hand-written rather than
    sacrebleu's own because it is faster (one character translation table instead of the first
    regular expression, rules skipped when the text lacks the characters they need) and gives
    tokens, not a string to split again; tests hold the two equal.
    """

    name = "13a"
    # sacrebleu's first rule, r"([\{-\~\[-\` -\&\(-\+\:-\@\/])" -> r" \1 ", pads each
    # character of a fixed class with spaces: the same as a character translation table
    _PAD = str.maketrans({c: f" {c} " for c in
                          "{|}~" "[\\]^_`" " !\"#$%&" "()*+" ":;<=>?@" "/"})
    _rules = [
        (re.compile(r"([^0-9])([\.,])"), r"\1 \2 ", ".,"),
        (re.compile(r"([\.,])([^0-9])"), r" \1 \2", ".,"),
        (re.compile(r"([0-9])(-)"), r"\1 \2 ", "-"),
    ]

    def __init__(self, lowercase: bool = False) -> None:
        self.lowercase = bool(lowercase)
        self._memo: dict[str, list[str]] = {}

    def __call__(self, text: str) -> list[str]:
        memo = self._memo
        tokens = memo.get(text)
        if tokens is None:
            line = text.lower() if self.lowercase else text
            line = line.rstrip()
            line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
            if "&" in line:
                line = (line.replace("&quot;", '"').replace("&amp;", "&")
                        .replace("&lt;", "<").replace("&gt;", ">"))
            line = f" {line} ".translate(self._PAD)
            for pattern, repl, needs in self._rules:
                if needs[0] in line or needs[-1] in line:  # else the rule cannot match
                    line = pattern.sub(repl, line)
            tokens = line.split()
            if len(memo) >= 65536:
                memo.clear()
            memo[text] = tokens
        return tokens

    def __repr__(self) -> str:
        return f"Tokenizer13a(lowercase={self.lowercase})"


class TokenizerIntl(SacrebleuTokenizer):
    """sacrebleu's ``intl``: mteval-v14's international tokenization (Unicode punctuation and
    symbols split off, except a punctuation mark between digits)."""

    name = "intl"
    _module = "tokenizer_intl"
    _class = "TokenizerV14International"
