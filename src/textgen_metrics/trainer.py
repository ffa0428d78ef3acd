"""A ``compute_metrics`` hook for transformers' ``Seq2SeqTrainer`` (``predict_with_generate=True``).

    from textgen_metrics.trainer import compute_metrics

    trainer = Seq2SeqTrainer(..., compute_metrics=compute_metrics(tokenizer, metrics=["rouge", "bleu"]))
    trainer.evaluate()   # {'eval_rouge1': ..., 'eval_rougeLsum': ..., 'eval_bleu': ..., 'eval_gen_len': ...}

The hook decodes the generated ids and the labels (label padding -100 and special tokens
removed), puts each sentence on its own line for ``rougeLsum``, runs the chosen metrics and
returns a flat dict of floats. Any metric of the registry whose inputs are predictions and
references (or predictions alone) works, the LLM-guided ones with ``judge=``.
"""

from .registry import get_metric
from .scoring import flat_scores
from .tokenizers import split_sentences

__all__ = ["compute_metrics", "decode"]

IGNORE_INDEX = -100


def _ids(array, pad_id):
    import numpy as np

    if isinstance(array, tuple):  # (generated ids or logits, extra outputs...)
        array = array[0]
    array = np.asarray(array)
    if array.ndim == 3:  # logits (predict_with_generate=False): the most likely token
        array = array.argmax(-1)
    if array.ndim != 2:
        raise ValueError(f"compute_metrics: expected a (batch, length) array of token ids, got shape {array.shape}")
    return np.where(array == IGNORE_INDEX, pad_id, array).astype(np.int64)


def decode(tokenizer, token_ids):
    """(texts, ids, pad id) from a batch of ids or logits: -100 read as padding, special
    tokens dropped, whitespace stripped."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad is None:
        raise ValueError("tokenizer: it has neither a pad nor an eos token to stand for -100")
    ids = _ids(token_ids, pad)
    # the tokenizer's own clean-up setting, as in transformers' examples
    return [t.strip() for t in tokenizer.batch_decode(ids, skip_special_tokens=True)], ids, pad


def compute_metrics(tokenizer, metrics=("rouge",), options=None, judge=None, gen_len=True):
    """A function ``EvalPrediction -> {name: float}`` for ``Seq2SeqTrainer(compute_metrics=...)``.

    ``metrics``: names of the registry (rouge, bleu, google_bleu, meteor, bertscore, and the
    LLM-guided metrics that take predictions and references). ``options``: per metric, its
    keyword options (``{"rouge": {"use_stemmer": True}}``). ``judge``: for LLM-guided metrics.
    ``gen_len``: add the mean length of the generated ids (without padding).
    """
    specs = [get_metric(m) for m in metrics]
    for spec in specs:
        extra = [c for c in spec.columns if c not in ("predictions", "references")]
        if extra:
            raise ValueError(f"metrics: {spec.name} needs {', '.join(extra)}, which a Trainer's "
                             "predictions and labels do not give")
    options = {k: dict(v) for k, v in (options or {}).items()}
    unknown = sorted(set(options) - {s.name for s in specs})
    if unknown:
        raise ValueError(f"options: {unknown[0]!r} is not among metrics {list(metrics)}")
    if judge is not None and any(s.judge for s in specs):
        from .scoring import resolve_judge

        judge = resolve_judge(judge)

    def hook(eval_prediction):
        predictions, labels = eval_prediction[0], eval_prediction[1]
        preds, pred_ids, pad = decode(tokenizer, predictions)
        refs, _, _ = decode(tokenizer, labels)
        if len(preds) != len(refs):
            raise ValueError(f"compute_metrics: {len(preds)} predictions but {len(refs)} labels")
        result = {}
        for spec in specs:
            opts = dict(options.get(spec.name, {}))
            if spec.name == "rouge":  # rougeLsum reads one sentence per line
                inputs = {"predictions": ["\n".join(split_sentences(p)) for p in preds],
                          "references": ["\n".join(split_sentences(r)) for r in refs]}
            else:
                inputs = {"predictions": preds, "references": refs}
            if spec.judge:
                opts.setdefault("judge", judge)
            result.update(flat_scores(spec.compute(inputs, **opts), spec.name))
        if gen_len:
            result["gen_len"] = float((pred_ids != pad).sum(axis=1).mean())
        return result

    return hook
