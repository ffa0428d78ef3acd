"""chrF, chrF++ and TER against sacrebleu, same run, same inputs, identical scores.

Summary-like pairs (~40 tokens, a Zipf-distributed vocabulary of ~1,300 inflected words), one
reference each: 2,000 for chrF, 300 for TER (sacrebleu's TER takes tens of milliseconds a
sentence). Text in, corpus score out, as Hugging Face's chrf and ter modules run sacrebleu.
sacrebleu's tokenizer caches are cleared before every run (TER's tokenizer is sacrebleu's in
both contenders, so both start cold).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from common import print_table, timed
from textdata import pairs

N_CHRF = 2000
N_TER = 300


def _clear_sacrebleu_caches() -> None:
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    TercomTokenizer.__call__.cache_clear()


def main() -> dict[str, Any]:
    import sacrebleu

    import textgen_metrics

    rows: list[list[str]] = []
    results: dict[str, Any] = {}

    def record(name: str, peer: str, t_peer: float, t_ours: float) -> None:
        rows.append([f"{name} | {peer}", f"{t_peer:.3f}", "1.0x"])
        rows.append([f"{name} | textgen-metrics", f"{t_ours:.3f}", f"{t_peer / t_ours:.1f}x"])
        results[name] = {"peer": peer, "peer_s": t_peer, "ours_s": t_ours, "speedup": t_peer / t_ours}

    data = pairs(N_CHRF, 40, seed=11)
    preds = [p.replace("\n", " ") for p, _ in data]
    refs = [r.replace("\n", " ") for _, r in data]
    for name, word_order in (("chrF", 0), ("chrF++", 2)):
        t_ref, want = timed(lambda wo=word_order: sacrebleu.metrics.CHRF(word_order=wo).corpus_score(preds, [refs]))
        t_ours, got = timed(lambda wo=word_order: textgen_metrics.chrf(preds, refs, word_order=wo))
        assert got["score"] == want.score
        record(f"{name}, {N_CHRF:,} pairs", "sacrebleu CHRF", t_ref, t_ours)

    preds, refs = preds[:N_TER], refs[:N_TER]
    t_ref, want = timed(lambda: sacrebleu.metrics.TER().corpus_score(preds, [refs]), setup=_clear_sacrebleu_caches)
    t_ours, got = timed(lambda: textgen_metrics.ter(preds, refs), setup=_clear_sacrebleu_caches)
    assert (got["score"], got["num_edits"]) == (want.score, want.num_edits)
    record(f"TER, {N_TER:,} pairs", "sacrebleu TER", t_ref, t_ours)

    print_table("chrF / chrF++ / TER speed (corpus score, ~40 tokens a text; identical scores)", rows)
    return results


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps(main(), indent=2))
