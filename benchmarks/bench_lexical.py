"""BLEU, Google BLEU and METEOR against their reference and compiled peers, on realistic text
(WordNet glosses, see textdata.py), every repetition in a fresh process after one tiny warm-up
call per side. Text in, score out, as a user runs them (Hugging Face's modules tokenise, then
call sacrebleu or nltk).

- BLEU corpus, 2,000 pairs: sacrebleu ``corpus_bleu`` (13a), bleuscore (Rust, every core); ours the
  public ``textgen_metrics.bleu``, text in, result dict out, with one thread and with every core;
- Google BLEU, 2,000 pairs: 13a + nltk ``corpus_gleu`` (Hugging Face's google_bleu); ours the public
  ``textgen_metrics.google_bleu``, one thread and every core;
- METEOR, 2,000 short and 200 long pairs: nltk ``word_tokenize`` + ``meteor_score`` over the same
  WordNet, whose reader (and index) the warm-up call loads; ours with one thread and every core.

Scores must be identical (bleuscore: within 1e-12, it sums in another order).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from common import print_table
from fresh import Inputs, timed_fresh
from textdata import pairs


def _versions() -> str:
    from importlib.metadata import version

    return (f"sacrebleu {version('sacrebleu')}, bleuscore {version('bleuscore')}, nltk {version('nltk')}")


def main() -> dict[str, Any]:
    results: dict[str, Any] = {"peers": _versions(), "cores": os.cpu_count()}
    rows: list[list[str]] = []

    def record(name: str, peer: str, t_peer: float, t_ours: float, target: str) -> None:
        rows.append([f"{name} | {peer}", f"{t_peer:.3f}", f"{t_peer / t_ours:.2f}x", target])
        results[f"{name} vs {peer}"] = {"peer_s": t_peer, "ours_s": t_ours, "speedup": t_peer / t_ours}

    data = pairs(2000, 32, seed=7)
    flat = {"preds": [p.replace("\n", " ") for p, _ in data], "refs": [r.replace("\n", " ") for _, r in data]}
    with Inputs(flat) as inp:
        t_sacre, want = timed_fresh("bleu:sacrebleu", inp)
        t_bs, bs = timed_fresh("bleu:bleuscore", inp)
        t_ours, got = timed_fresh("bleu:ours", inp)
        t_all, got_all = timed_fresh("bleu:ours_all_cores", inp)
        assert got == got_all == want and abs(bs - want) <= 1e-12, (got, got_all, want, bs)
        rows.append(["bleu corpus, 2,000 pairs | textgen-metrics bleu(), 1 thread", f"{t_ours:.3f}", "1.00x", ""])
        record("bleu corpus, 2,000 pairs", "sacrebleu corpus_bleu", t_sacre, t_ours, "")
        record("bleu corpus, 2,000 pairs", "bleuscore (every core)", t_bs, t_ours, ">= 1")
        rows.append(["bleu corpus, 2,000 pairs | textgen-metrics bleu(), all cores", f"{t_all:.3f}",
                     f"bleuscore/ours {t_bs / t_all:.2f}x", ">= 1"])
        results["bleu corpus, 2,000 pairs, all cores vs bleuscore"] = {"peer_s": t_bs, "ours_s": t_all,
                                                                        "speedup": t_bs / t_all}

        t_nltk, want = timed_fresh("gleu:nltk", inp)
        t_ours, got = timed_fresh("gleu:ours", inp)
        t_all, got_all = timed_fresh("gleu:ours_all_cores", inp)
        assert got == got_all == want, (got, got_all, want)
        rows.append(["google_bleu, 2,000 pairs | textgen-metrics google_bleu(), 1 thread", f"{t_ours:.3f}", "1.00x",
                     ""])
        record("google_bleu, 2,000 pairs", "13a + nltk corpus_gleu", t_nltk, t_ours, ">= 5")
        rows.append(["google_bleu, 2,000 pairs | textgen-metrics google_bleu(), all cores", f"{t_all:.3f}",
                     f"nltk/ours {t_nltk / t_all:.2f}x", ">= 5"])

    for label, n, words, slow_reps in (("meteor, 2,000 x ~37 words", 2000, 32, 3),
                                       ("meteor, 200 x ~750 words", 200, 750, 1)):
        data = pairs(n, words, seed=n + words)
        flat = {"preds": [p.replace("\n", " ") for p, _ in data], "refs": [r.replace("\n", " ") for _, r in data]}
        with Inputs(flat) as inp:
            t_nltk, want = timed_fresh("meteor:nltk", inp, reps=slow_reps)
            t_ours, got = timed_fresh("meteor:ours", inp)
            t_all, got_all = timed_fresh("meteor:ours_all_cores", inp)
        assert got == want == got_all
        rows.append([f"{label} | textgen-metrics, 1 thread", f"{t_ours:.3f}", "1.00x", ""])
        record(label, "word_tokenize + nltk meteor_score", t_nltk, t_ours, ">= 10")
        rows.append([f"{label} | textgen-metrics, all cores", f"{t_all:.3f}", f"{t_nltk / t_all:.2f}x", ""])

    print_table(f"BLEU / Google BLEU / METEOR, WordNet-gloss text, fresh process per run ({_versions()}; "
                f"{os.cpu_count()} cores); identical scores", rows,
                header=("contender", "seconds", "peer/ours", "target"))
    return results


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(main(), indent=2))
