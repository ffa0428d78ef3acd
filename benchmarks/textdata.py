"""Realistic benchmark text: sentences from WordNet 3.0's glosses (Debian's ``wordnet-base``).

Every synset's gloss (its definition and quoted examples) is real English prose over a large real
vocabulary (about 60,000 word types, Zipf-like frequencies). A reference is a run of gloss
sentences, one per line, until it reaches the asked length; its prediction keeps most of it and
changes the rest as a system output would (words dropped, words replaced by other words of the
corpus, neighbouring lines swapped). Deterministic for a seed.
"""

from __future__ import annotations

import functools
import os
import random
import re
from collections.abc import Callable, Iterator

WORDNET = os.environ.get("TEXTGEN_METRICS_WORDNET") or "/usr/share/wordnet"
_QUOTED = re.compile(r'"([^"]+)"')


@functools.lru_cache(maxsize=1)
def sentences() -> tuple[str, ...]:
    """Every gloss sentence of WordNet (definitions and examples), in file order."""
    out: list[str] = []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, f"data.{pos}"), encoding="utf-8") as f:
            for line in f:
                if line.startswith(" "):
                    continue  # the license header
                _, _, gloss = line.partition(" | ")
                gloss = gloss.strip()
                if not gloss:
                    continue
                examples = _QUOTED.findall(gloss)
                definition = _QUOTED.sub("", gloss).strip(" ;")
                for part in [definition] + examples:
                    part = part.strip(" ;")
                    if len(part.split()) >= 3:
                        out.append(part[0].upper() + part[1:] + ("" if part[-1] in ".!?" else "."))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def vocabulary() -> tuple[str, ...]:
    """The corpus's word types (as written, punctuation attached), most frequent first."""
    counts: dict[str, int] = {}
    for s in sentences():
        for w in s.split():
            counts[w] = counts.get(w, 0) + 1
    return tuple(sorted(counts, key=lambda w: (-counts[w], w)))


def _drawer(rng: random.Random) -> Callable[[], str]:
    words: list[str] = []
    for s in sentences()[::7]:  # a frequency-faithful sample of running words
        words.extend(s.split())
    return lambda: rng.choice(words)


def summary(rng: random.Random, tokens: int) -> str:
    sents = sentences()
    lines: list[str] = []
    n = 0
    start = rng.randrange(len(sents))
    step = rng.choice([1, 1, 1, 2, 3, 17])
    while n < tokens:
        s = sents[start % len(sents)]
        start += step
        lines.append(s)
        n += len(s.split())
    return "\n".join(lines)


def perturb(rng: random.Random, draw: Callable[[], str], text: str) -> str:
    lines = []
    for line in text.split("\n"):
        toks = [t for t in line.split() if rng.random() > 0.2]
        for _ in range(max(1, len(toks) // 6)):
            if toks:
                toks[rng.randrange(len(toks))] = draw()
        lines.append(" ".join(toks))
    if len(lines) > 2 and rng.random() < 0.3:
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return "\n".join(lines)


def pairs(n: int, tokens: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (prediction, reference) pairs of about ``tokens`` words each."""
    return list(stream(n, tokens, seed))


def stream(n: int, tokens: int, seed: int = 0) -> Iterator[tuple[str, str]]:
    """The same pairs, generated one at a time (constant memory)."""
    rng = random.Random(seed)
    draw = _drawer(rng)
    for _ in range(n):
        ref = summary(rng, tokens)
        yield perturb(rng, draw, ref), ref


def long_line(tokens: int, seed: int = 0) -> str:
    """One line of ``tokens`` words of running gloss text (rougeW / rougeS stress inputs)."""
    rng = random.Random(seed)
    return " ".join(summary(rng, tokens).split()[:tokens])
