"""Generated text for parity tests: random and adversarial, reproducible from a seed."""

import random

WORDS = (
    "the a an of to and in on for with is was were be been running runs ran runner easily "
    "easy happiness happy happily cats cat dog dogs generously generous generation generated "
    "summary summaries summarize summarization model models modeling evaluation evaluated "
    "police killed gunman policeman quick brown fox jumped over lazy fast animal 2024 42 3.14 "
    "don't it's U.S. e-mail state-of-the-art caf\u00e9 na\u00efve \u00fcber stra\u00dfe "
    "\u4e2d\u6587 \u0939\u093f\u0928\u094d\u0926\u0940 \u0645\u0631\u062d\u0628\u0627 "
    "\u0130stanbul \ufb01ne ALLCAPS MixedCase x y z"
).split()
PUNCT = [".", ",", "!", "?", ";", ":", "-", "--", "(", ")", '"', "'", "...", "$", "%", "&"]
ADVERSARIAL = [
    "", " ", "\n", "\n\n", ".", "!!! ???", "...\n---", "a", "A.", "the the the the the",
    "\u4e2d\u6587\u6587\u672c", "\u0939\u093f\u0928\u094d\u0926\u0940 \u092a\u093e\u0920",
    "\t tabs\tand  spaces ", "line one\n\nline three\n", "caf\u00e9 CAF\u00c9 cafe",
    "running runs ran run", "x " * 300,
]


def sentence(rng, lo=1, hi=14):
    out = []
    for _ in range(rng.randint(lo, hi)):
        w = rng.choice(WORDS)
        if rng.random() < 0.15:
            w = w.capitalize()
        out.append(w)
        if rng.random() < 0.12:
            out.append(rng.choice(PUNCT))
    return " ".join(out)


def text(rng, max_sents=4, hi=14):
    return "\n".join(sentence(rng, 1, hi) for _ in range(rng.randint(1, max_sents)))


def perturb(rng, src):
    """A prediction that shares material with ``src``: drop, swap, replace words."""
    lines = []
    for line in src.split("\n"):
        toks = line.split()
        toks = [t for t in toks if rng.random() > 0.2]
        for _ in range(rng.randint(0, 2)):
            if toks:
                toks[rng.randrange(len(toks))] = rng.choice(WORDS)
        if len(toks) > 2 and rng.random() < 0.3:
            i = rng.randrange(len(toks) - 1)
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
        lines.append(" ".join(toks))
    if rng.random() < 0.3:
        rng.shuffle(lines)
    return "\n".join(lines)


def pairs(n, seed=0, long_every=40):
    """``n`` (prediction, reference) pairs: mostly related, some random, some adversarial."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = rng.random()
        if i % long_every == long_every - 1:
            ref = text(rng, max_sents=30, hi=40)  # long: several hundred tokens
            pred = perturb(rng, ref)
        elif r < 0.1:
            ref = rng.choice(ADVERSARIAL)
            pred = rng.choice(ADVERSARIAL + [text(rng)])
        elif r < 0.2:
            ref, pred = text(rng), text(rng)
        else:
            ref = text(rng)
            pred = perturb(rng, ref)
        if rng.random() < 0.5:
            pred, ref = ref, pred
        out.append((pred, ref))
    return out


def multi_references(n, seed=0, max_refs=4):
    rng = random.Random(seed)
    base = pairs(n, seed)
    return [(p, [r] + [perturb(rng, r) if rng.random() < 0.7 else text(rng)
                       for _ in range(rng.randint(0, max_refs - 1))]) for p, r in base]
