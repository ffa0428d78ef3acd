"""Sentence splitting without a model (ROUGE-Lsum's ``split_summaries``)."""

from __future__ import annotations

import re

__all__ = ["split_sentences"]

_SENT_END = re.compile(r"(?<=[.!?\u2026])\s+|(?<=[.!?\u2026][\"'\u201d\u2019)\]])\s+")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences without a model (no punkt download).

    Splits after ``.``, ``!``, ``?`` or ``…`` (and closing quotes or brackets) followed by
    whitespace, and on newlines. It is not nltk's punkt: abbreviations such as "Dr." split too.
    """
    parts: list[str] = []
    for line in text.split("\n"):
        parts.extend(_SENT_END.split(line))
    return [p.strip() for p in parts if p.strip()]
