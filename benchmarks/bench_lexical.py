"""BLEU, Google BLEU and METEOR against their reference implementations, same run, same inputs.

2,000 summary-like pairs (~40 tokens), one reference each. Scores must be identical. "End to
end" is text in, score out, as Hugging Face's modules run (they tokenize, then call sacrebleu or
nltk); "scoring only" gives both sides the same tokens. Each contender starts cold: sacrebleu's
tokenizer caches are cleared, our memos are per call. The WordNet reader is loaded, and warmed
by an untimed nltk run, before timing.
"""

import json
import os
import sys
import warnings

from common import print_table, timed
from textdata import pairs

N = 2000


def _clear_sacrebleu_caches():
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    Tokenizer13a.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()


def _cold_tokenizers():
    from textgen_metrics.lexical import meteor

    meteor._TOKENIZER = None  # no token memo carried over between runs


def main():
    import sacrebleu
    from nltk.translate.gleu_score import corpus_gleu
    from nltk.translate.meteor_score import meteor_score

    import textgen_metrics
    from textgen_metrics.lexical.meteor import word_tokenize
    from textgen_metrics.tokenizers import Tokenizer13a
    from textgen_metrics.wordnet import load_wordnet

    data = pairs(N, 40, seed=7)
    preds = [p.replace("\n", " ") for p, _ in data]
    refs = [r.replace("\n", " ") for _, r in data]
    rows = []
    results = {}

    def record(name, peer, t_peer, t_ours):
        rows.append([f"{name} | {peer}", f"{t_peer:.3f}", "1.0x"])
        rows.append([f"{name} | textgen-metrics", f"{t_ours:.3f}", f"{t_peer / t_ours:.1f}x"])
        results[name] = {"peer": peer, "peer_s": t_peer, "ours_s": t_ours, "speedup": t_peer / t_ours}

    # BLEU: corpus score
    t_ref, want = timed(lambda: sacrebleu.corpus_bleu(preds, [refs], tokenize="13a", smooth_method="none"),
                        setup=_clear_sacrebleu_caches)
    t_ours, got = timed(lambda: textgen_metrics.bleu(preds, refs))
    assert got["bleu"] == want.score / 100
    record("bleu, end to end", "sacrebleu corpus_bleu", t_ref, t_ours)

    # Google BLEU. End to end, as Hugging Face's google_bleu runs: 13a tokens, then nltk's
    # corpus_gleu. Scoring only: both sides get the same tokens.
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a as SacreTokenizer13a

    from textgen_metrics.lexical.bleu import _gleu_counts

    def nltk_gleu_end_to_end():
        t = SacreTokenizer13a()
        return corpus_gleu([[t(r.rstrip()).split()] for r in refs], [t(p.rstrip()).split() for p in preds])

    t_ref, want = timed(nltk_gleu_end_to_end, setup=_clear_sacrebleu_caches)
    t_ours, got = timed(lambda: textgen_metrics.google_bleu(preds, refs))
    assert got["google_bleu"] == want
    record("google_bleu, end to end", "13a + nltk corpus_gleu", t_ref, t_ours)
    tok = Tokenizer13a()
    hyps = [tok(p) for p in preds]
    refss = [[tok(r)] for r in refs]

    def ours_gleu_tokens():
        counts = [_gleu_counts(h, rs, 1, 4) for h, rs in zip(hyps, refss)]
        return sum(c[0] for c in counts if c) / sum(c[1] for c in counts if c)

    t_ref, want = timed(lambda: corpus_gleu(refss, hyps))
    t_ours, got = timed(ours_gleu_tokens)
    assert got == want
    record("google_bleu, scoring only", "nltk corpus_gleu", t_ref, t_ours)

    # METEOR. End to end, as Hugging Face's meteor runs: nltk word_tokenize, then
    # meteor_score per example. Scoring only: both sides get the same tokens.
    from nltk.tokenize import word_tokenize as nltk_word_tokenize

    from textgen_metrics.lexical.meteor import MeteorScorer

    wn = load_wordnet()

    def nltk_meteor_end_to_end():
        return [meteor_score([nltk_word_tokenize(r, preserve_line=True)],
                             nltk_word_tokenize(p, preserve_line=True), wordnet=wn)
                for p, r in zip(preds, refs)]

    def ours_meteor():
        return textgen_metrics.meteor(preds, refs, use_aggregator=False)["meteor"]

    hyp_tok = [word_tokenize(p) for p in preds]
    ref_tok = [word_tokenize(r) for r in refs]

    def nltk_meteor_tokens():
        return [meteor_score([r], h, wordnet=wn) for h, r in zip(hyp_tok, ref_tok)]

    def ours_meteor_tokens():
        scorer = MeteorScorer()
        return [scorer.single(h, r) for h, r in zip(hyp_tok, ref_tok)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nltk_meteor_tokens()  # warm the WordNet reader's own caches (they serve nltk)
        t_ref, want = timed(nltk_meteor_end_to_end)
        t_ours, got = timed(ours_meteor, setup=_cold_tokenizers)
        assert got == want
        record("meteor, end to end", "word_tokenize + nltk meteor_score", t_ref, t_ours)
        t_ref, want = timed(nltk_meteor_tokens)
        t_ours, got = timed(ours_meteor_tokens)
        assert got == want
        record("meteor, scoring only", "nltk meteor_score", t_ref, t_ours)

    print_table(f"BLEU / Google BLEU / METEOR speed ({N:,} pairs, ~40 tokens; identical scores)", rows)
    return results


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(main(), indent=2))
