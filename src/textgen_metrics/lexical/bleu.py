"""BLEU (Papineni et al., 2002), corpus and sentence level, and Google BLEU (GLEU).

Corpus BLEU follows sacrebleu 2.x ``corpus_bleu`` (``smooth_method="none"``): clipped n-gram
counts against the per-n-gram maximum over the example's references, the closest reference
length (the shorter one on ties), the statistics summed over the corpus, then the geometric
mean times the brevity penalty. Sentence BLEU follows nltk's ``sentence_bleu`` (its method0 or,
with ``smooth=True``, method2 smoothing). With ``weights`` the corpus value is nltk's
``corpus_bleu`` with those weights. GLEU follows nltk's ``corpus_gleu`` / ``sentence_gleu``.
"""

import math
import sys
from collections import Counter

from .. import __version__
from ..tokenizers import get_bleu_tokenizer
from ..validation import check_bool, check_references, check_same_length, check_texts

__all__ = ["bleu", "google_bleu", "BleuStats", "corpus_stats"]

_FLOAT_MIN = sys.float_info.min


def _ngram_counts(tokens, max_order, min_order=1):
    """All n-grams of orders min_order..max_order as one Counter of tuples."""
    counts = Counter()
    n_tok = len(tokens)
    for n in range(min_order, max_order + 1):
        if n == 1:
            counts.update((t,) for t in tokens)
        elif n <= n_tok:
            counts.update(zip(*[tokens[i:] for i in range(n)]))
    return counts


def _closest_ref_len(hyp_len, ref_lens):
    return min(ref_lens, key=lambda r: (abs(r - hyp_len), r))


class BleuStats:
    """Sufficient statistics of one example: lengths, matches and totals per order."""

    __slots__ = ("hyp_len", "ref_len", "correct", "total", "denominators")

    def __init__(self, hyp_tokens, refs_tokens, max_order):
        hyp_len = len(hyp_tokens)
        hyp = _ngram_counts(hyp_tokens, max_order)
        max_ref = {}
        for ref in refs_tokens:
            ref_counts = _ngram_counts(ref, max_order)
            for g in hyp:
                c = ref_counts.get(g, 0)
                if c > max_ref.get(g, 0):
                    max_ref[g] = c
        correct = [0] * max_order
        total = [0] * max_order
        for g, c in hyp.items():
            n = len(g) - 1
            total[n] += c
            m = max_ref.get(g)
            if m:
                correct[n] += c if c < m else m
        self.hyp_len = hyp_len
        self.ref_len = _closest_ref_len(hyp_len, [len(r) for r in refs_tokens])
        self.correct = correct
        self.total = total
        # nltk's modified_precision denominators: at least 1 per order and example
        self.denominators = [max(1, t) for t in total]


def _sacrebleu_score(correct, total, sys_len, ref_len, max_order):
    """sacrebleu ``BLEU.compute_bleu`` with ``smooth_method="none"``, on the 0-100 scale."""
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if not any(correct):
        return 0.0, bp
    precisions = [0.0] * max_order
    for n in range(1, max_order + 1):
        if total[n - 1] == 0:
            break
        if correct[n - 1] != 0:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
    log_sum = sum([math.log(p) if p != 0 else -9999999999 for p in precisions])
    return bp * math.exp(log_sum / max_order), bp


def _nltk_brevity_penalty(ref_len, hyp_len):
    if hyp_len > ref_len:
        return 1
    if hyp_len == 0:
        return 0
    return math.exp(1 - ref_len / hyp_len)


def _nltk_bleu(numerators, denominators, hyp_len, ref_len, weights, smooth):
    """nltk ``corpus_bleu`` from summed statistics (method0, or method2 when ``smooth``)."""
    if numerators[0] == 0:
        return 0.0
    bp = _nltk_brevity_penalty(ref_len, hyp_len)
    probs = []
    for i, (num, den) in enumerate(zip(numerators, denominators)):
        if smooth and i != 0:
            num, den = num + 1, den + 1
        probs.append(num / den if num != 0 else _FLOAT_MIN)
    s = math.fsum(w * math.log(p) for w, p in zip(weights, probs) if p > 0)
    return float(bp * math.exp(s))


def _weights(max_order, weights):
    if weights is None:
        if not isinstance(max_order, int) or isinstance(max_order, bool) or max_order < 1:
            raise ValueError(f"max_order: {max_order!r} must be a positive integer")
        return None, max_order
    try:
        weights = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise TypeError(f"weights: expected a sequence of numbers, got {weights!r}") from None
    if not weights or any(w < 0 or not math.isfinite(w) for w in weights):
        raise ValueError(f"weights: {weights!r} must be a non-empty sequence of finite non-negative numbers")
    return weights, len(weights)


def corpus_stats(predictions, references, tokenizer, max_order):
    """Per-example ``BleuStats`` (references: list of lists of strings)."""
    return [BleuStats(tokenizer(p), [tokenizer(r) for r in refs], max_order)
            for p, refs in zip(predictions, references)]


def _prepare(predictions, references):
    predictions = check_texts("predictions", predictions)
    references = check_references("references", references)
    n = check_same_length(predictions=predictions, references=references)
    if n == 0:
        raise ValueError("predictions: no examples; give at least one prediction")
    return predictions, references


def bleu(predictions, references, tokenizer=None, max_order=4, smooth=False, weights=None,
         use_aggregator=True, lowercase=False):
    """BLEU of ``predictions`` against ``references`` (a string or list of strings each).

    Aggregated (default): the corpus BLEU as sacrebleu ``corpus_bleu(tokenize="13a",
    smooth_method="none")`` with ``smooth=False``; with ``smooth=True`` the precisions are
    Lin and Och's add-one ``(m+1)/(t+1)`` of every order, as Hugging Face's bleu; with ``weights``
    nltk's ``corpus_bleu`` with those weights. ``use_aggregator=False``: per example, nltk's
    ``sentence_bleu`` on the same tokens (method0, or method2 with ``smooth``).
    """
    predictions, references = _prepare(predictions, references)
    smooth, use_aggregator = check_bool("smooth", smooth), check_bool("use_aggregator", use_aggregator)
    lowercase = check_bool("lowercase", lowercase)
    weights, max_order = _weights(max_order, weights)
    tok = get_bleu_tokenizer(tokenizer, lowercase)
    stats = corpus_stats(predictions, references, tok, max_order)
    if not use_aggregator:
        w = weights or (1.0 / max_order,) * max_order
        out = {"bleu": [], "precisions": [], "brevity_penalty": [], "length_ratio": [],
               "translation_length": [], "reference_length": []}
        for s in stats:
            out["bleu"].append(_nltk_bleu(s.correct, s.denominators, s.hyp_len, s.ref_len, w, smooth))
            out["precisions"].append([c / d for c, d in zip(s.correct, s.denominators)])
            out["brevity_penalty"].append(float(_nltk_brevity_penalty(s.ref_len, s.hyp_len)))
            out["length_ratio"].append(s.hyp_len / s.ref_len if s.ref_len else 0.0)
            out["translation_length"].append(s.hyp_len)
            out["reference_length"].append(s.ref_len)
        return out

    sys_len = sum(s.hyp_len for s in stats)
    ref_len = sum(s.ref_len for s in stats)
    correct = [sum(s.correct[i] for s in stats) for i in range(max_order)]
    total = [sum(s.total[i] for s in stats) for i in range(max_order)]
    if weights is not None:
        denominators = [sum(s.denominators[i] for s in stats) for i in range(max_order)]
        score = _nltk_bleu(correct, denominators, sys_len, ref_len, weights, smooth)
        bp = float(_nltk_brevity_penalty(ref_len, sys_len))
    elif smooth:
        precisions = [(c + 1.0) / (t + 1.0) for c, t in zip(correct, total)]
        bp = 1.0
        if sys_len < ref_len:
            bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
        geo = math.exp(sum((1.0 / max_order) * math.log(p) for p in precisions))
        score = geo * bp
    else:
        score100, bp = _sacrebleu_score(correct, total, sys_len, ref_len, max_order)
        score = score100 / 100.0
    if smooth and weights is None:
        precisions = [(c + 1.0) / (t + 1.0) for c, t in zip(correct, total)]
    else:
        precisions = [c / t if t else 0.0 for c, t in zip(correct, total)]
    return {
        "bleu": score,
        "precisions": precisions,
        "brevity_penalty": bp,
        "length_ratio": sys_len / ref_len if ref_len else 0.0,
        "translation_length": sys_len,
        "reference_length": ref_len,
    }


def _gleu_counts(hyp_tokens, refs_tokens, min_len, max_len):
    """nltk ``corpus_gleu``'s best (matches, total) of one example, or None."""
    hyp = _ngram_counts(hyp_tokens, max_len, min_len)
    tpfp = sum(hyp.values())
    best = None
    for ref_tokens in refs_tokens:
        ref = _ngram_counts(ref_tokens, max_len, min_len)
        tpfn = sum(ref.values())
        if len(ref) < len(hyp):
            tp = sum(min(c, hyp[g]) for g, c in ref.items() if g in hyp)
        else:
            tp = sum(min(c, ref[g]) for g, c in hyp.items() if g in ref)
        n_all = max(tpfp, tpfn)
        if n_all > 0 and (best is None or tp / n_all > best[0] / best[1]):
            best = (tp, n_all)
    return best


def google_bleu(predictions, references, tokenizer=None, min_len=1, max_len=4,
                use_aggregator=True):
    """Google BLEU: nltk ``corpus_gleu`` (aggregate) or ``sentence_gleu`` (per example)."""
    predictions, references = _prepare(predictions, references)
    use_aggregator = check_bool("use_aggregator", use_aggregator)
    for name, v in (("min_len", min_len), ("max_len", max_len)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: {v!r} must be a positive integer")
    if min_len > max_len:
        raise ValueError(f"min_len: {min_len} is greater than max_len ({max_len})")
    tok = get_bleu_tokenizer(tokenizer)
    counts = [_gleu_counts(tok(p), [tok(r) for r in refs], min_len, max_len)
              for p, refs in zip(predictions, references)]
    if not use_aggregator:
        return {"google_bleu": [c[0] / c[1] if c else 0.0 for c in counts]}
    matches = sum(c[0] for c in counts if c)
    n_all = sum(c[1] for c in counts if c)
    return {"google_bleu": matches / n_all if n_all else 0.0}


def signature(name, tokenizer=None, **settings):
    tok = get_bleu_tokenizer(tokenizer, settings.pop("lowercase", False))
    parts = [name, f"tok:{tok.signature}"] + [f"{k}:{v}" for k, v in settings.items()]
    return "|".join(parts + [f"version:{__version__}"])
