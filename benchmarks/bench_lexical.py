"""BLEU, Google BLEU and METEOR against their reference and compiled peers, on realistic text
(WordNet glosses, see textdata.py), every repetition in a fresh process after one tiny warm-up
call per side. Text in, score out, as a user runs them (Hugging Face's modules tokenise, then
call sacrebleu or nltk).

- BLEU corpus, 2,000 pairs: sacrebleu ``corpus_bleu`` (13a), bleuscore (Rust); ours as
  ``textgen_metrics.bleu`` on this branch, and the core's statistics (``BleuCore.bleu_stats``, the
  kernel ``bleu.py`` calls once wired) with sacrebleu's formula;
- Google BLEU, 2,000 pairs: 13a + nltk ``corpus_gleu`` (Hugging Face's google_bleu);
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
        t_core, core = timed_fresh("bleu:core", inp)
        assert got == want == core and abs(bs - want) <= 1e-12, (got, want, core, bs)
        rows.append(["bleu corpus | textgen-metrics bleu() (this branch)", f"{t_ours:.3f}", "1.00x", ""])
        record("bleu corpus", "sacrebleu corpus_bleu", t_sacre, t_ours, "")
        record("bleu corpus", "bleuscore", t_bs, t_ours, ">= 1 (after wiring: next row)")
        rows.append(["bleu corpus | core statistics (BleuCore, to be wired)", f"{t_core:.3f}",
                     f"bleuscore/core {t_bs / t_core:.2f}x", ">= 1"])
        results["bleu corpus core vs bleuscore"] = {"peer_s": t_bs, "ours_s": t_core, "speedup": t_bs / t_core}

        t_nltk, want = timed_fresh("gleu:nltk", inp)
        t_ours, got = timed_fresh("gleu:ours", inp)
        t_core, core = timed_fresh("gleu:core", inp)
        assert got == want == core, (got, want, core)
        rows.append(["google_bleu | textgen-metrics google_bleu() (this branch)", f"{t_ours:.3f}", "1.00x", ""])
        record("google_bleu", "13a + nltk corpus_gleu", t_nltk, t_ours, ">= 5")
        rows.append(["google_bleu | core statistics (BleuCore, to be wired)", f"{t_core:.3f}",
                     f"nltk/core {t_nltk / t_core:.2f}x", ">= 5"])
        results["google_bleu core vs nltk"] = {"peer_s": t_nltk, "ours_s": t_core, "speedup": t_nltk / t_core}

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
