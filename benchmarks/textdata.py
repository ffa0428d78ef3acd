"""Deterministic English-like summaries for benchmarks (Zipf-distributed words with inflections)."""

import random

_BASE = (
    "report state city council govern plan budget tax transport public spend rise fall market "
    "company job cut worker strike union price energy power water flood storm fire forest "
    "police court judge law vote elect party leader minister health hospital doctor patient "
    "school student teacher study research scientist discover space planet climate weather "
    "farm crop harvest food bank rate inflation econom trade export import bridge road rail "
    "airport flight travel tour museum art music film festival award team match win lose "
    "play season player coach score goal record crowd river mountain village region nation "
    "border peace talk agree deal sign announce warn expect increase reduce build open close "
    "help support protest demand accept reject control manage develop produce sell buy grow"
).split()
_SUFFIX = ["", "", "", "s", "ed", "ing", "er", "ers", "ly", "ation", "ations", "ment", "ness"]
_FUNCTION = ("the a of to in and on for with by at from as is was were has have will that "
             "this its their after before over under about more than new last first two three").split()


def vocabulary():
    words = [b + s for b in _BASE for s in _SUFFIX]
    return words


def _zipf_sampler(rng, words, s=1.05):
    weights = [1.0 / (i + 1) ** s for i in range(len(words))]
    order = words[:]
    rng.shuffle(order)
    return lambda k: rng.choices(order, weights=weights, k=k)


def summary(rng, draw, tokens):
    out, lines, line = [], [], []
    while len(out) < tokens:
        n = rng.randint(8, 22)
        sent = []
        for w in draw(n):
            sent.append(rng.choice(_FUNCTION) if rng.random() < 0.35 else w)
        sent[0] = sent[0].capitalize()
        out.extend(sent)
        lines.append(" ".join(sent) + ".")
    return "\n".join(lines)


def perturb(rng, draw, text):
    lines = []
    for line in text.split("\n"):
        toks = line.split()
        toks = [t for t in toks if rng.random() > 0.25]
        for _ in range(max(1, len(toks) // 5)):
            if toks:
                toks[rng.randrange(len(toks))] = draw(1)[0]
        lines.append(" ".join(toks))
    if len(lines) > 2 and rng.random() < 0.3:
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return "\n".join(lines)


def pairs(n, tokens, seed=0):
    """``n`` (prediction, reference) pairs of about ``tokens`` tokens each."""
    rng = random.Random(seed)
    draw = _zipf_sampler(rng, vocabulary())
    out = []
    for _ in range(n):
        ref = summary(rng, draw, tokens)
        out.append((perturb(rng, draw, ref), ref))
    return out


def stream(n, tokens, seed=0):
    """The same kind of pairs, generated one at a time (constant memory)."""
    rng = random.Random(seed)
    draw = _zipf_sampler(rng, vocabulary())
    for _ in range(n):
        ref = summary(rng, draw, tokens)
        yield perturb(rng, draw, ref), ref
