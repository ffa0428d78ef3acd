"""A ``compute_metrics`` hook for transformers' ``Trainer`` and ``Seq2SeqTrainer``.

    from textgen_metrics.trainer import compute_metrics, preprocess_logits_for_metrics

    trainer = Seq2SeqTrainer(..., compute_metrics=compute_metrics(tokenizer, metrics=["rouge", "bleu"]))
    trainer.evaluate()   # {'eval_rouge1': ..., 'eval_rougeLsum': ..., 'eval_bleu': ..., 'eval_gen_len': ...}

The hook decodes the generated ids and the labels (label padding -100 and special tokens
removed), runs the chosen metrics with the options each declares for decoded text (ROUGE splits
sentences for ``rougeLsum``: ``split_summaries=True``) and returns a flat dict of floats. Any
metric of the registry whose inputs are predictions and references (or predictions alone)
works, the LLM-guided ones with ``judge=``.

Evaluating on logits (``predict_with_generate=False``, or a plain ``Trainer``): pass
``preprocess_logits_for_metrics=preprocess_logits_for_metrics``. It reduces each batch's
``[batch, length, vocab]`` logits to token ids *before* the Trainer gathers them; without it the
Trainer keeps every logit of the whole evaluation set (``N x length x vocab`` floats: 4 GB for
1,000 examples of 32 tokens with a 32k vocabulary) only for the hook to take the argmax
(transformers issues 12878, 15466, 31667; ``benchmarks/bench_trainer.py`` measures it).

``TrainingArguments(batch_eval_metrics=True)`` is supported: the Trainer then calls the hook
once per batch (``compute_result`` True on the last), and the hook's
:class:`~textgen_metrics.run.Run` turns each batch into its metrics' statistics: nothing of the
evaluation set is kept but each metric's statistics (per-example scores, or BLEU's per-example
counts; a metric whose statistics are its inputs, BERTScore, keeps those, as it declares),
merged batch by batch. The scores equal the one-call ones to the last digit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .aggregation import RunningMean
from .metric import Stats
from .registry import METRICS
from .run import Run
from .scoring import flat_scores

__all__ = ["compute_metrics", "decode", "preprocess_logits_for_metrics"]

IGNORE_INDEX = -100


def preprocess_logits_for_metrics(logits: Any, labels: Any = None) -> Any:
    """The most likely token id of each position: ``logits.argmax(-1)``, per batch, before the
    Trainer gathers the batches (``Trainer(preprocess_logits_for_metrics=...)``).

    A tuple of model outputs gives its first item (the logits of a seq2seq model come with the
    encoder's states). The ids are those the hook would take from the gathered logits, so the
    scores do not change; only the memory does. ``labels`` is the Trainer's second argument,
    not used."""
    if isinstance(logits, (tuple, list)):
        logits = logits[0]
    return logits.argmax(dim=-1)


def _ids(array: Any, pad_id: int) -> Any:
    import numpy as np

    if isinstance(array, tuple):  # (generated ids or logits, extra outputs...)
        array = array[0]
    if hasattr(array, "detach"):  # a torch tensor (batch_eval_metrics hands them over as they are)
        array = array.detach().cpu().numpy()
    array = np.asarray(array)
    if array.ndim == 3:  # logits (predict_with_generate=False): the most likely token
        array = array.argmax(-1)
    if array.ndim != 2:
        raise ValueError(f"compute_metrics: expected a (batch, length) array of token ids, got shape {array.shape}")
    return np.where(array == IGNORE_INDEX, pad_id, array).astype(np.int64)


def decode(tokenizer: Any, token_ids: Any) -> tuple[list[str], Any, int]:
    """(texts, ids, pad id) from a batch of ids or logits: -100 read as padding, special
    tokens dropped, whitespace stripped."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad is None:
        raise ValueError("tokenizer: it has neither a pad nor an eos token to stand for -100")
    ids = _ids(token_ids, pad)
    # the tokenizer's own clean-up setting, as in transformers' examples
    return [t.strip() for t in tokenizer.batch_decode(ids, skip_special_tokens=True)], ids, pad


def compute_metrics(tokenizer: Any, metrics: Sequence[str] = ("rouge",),
                    options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
                    gen_len: bool = True) -> Callable[..., dict[str, float]]:
    """A function ``(EvalPrediction, compute_result=True) -> {name: float}`` for
    ``Trainer(compute_metrics=...)`` and ``Seq2SeqTrainer(compute_metrics=...)``.

    ``metrics``: names of the registry (rouge, bleu, google_bleu, meteor, bertscore, and the
    LLM-guided metrics that take predictions and references). ``options``: per metric, its
    keyword options (``{"rouge": {"use_stemmer": True}}``). ``judge``: for LLM-guided metrics.
    ``gen_len``: add the mean length of the generated ids (without padding).

    With ``batch_eval_metrics=True`` the Trainer calls it per batch with ``compute_result``
    False, then True on the last batch, which gives the scores over every batch ({} before).
    """
    for spec in (METRICS[m] for m in metrics if m in METRICS):  # (an unknown name: the run's error)
        extra = [c for c in spec.columns if c not in ("predictions", "references")]
        if extra:
            raise ValueError(f"metrics: {spec.name} needs {', '.join(extra)}, which a Trainer's "
                             "predictions and labels do not give")
    run = Run.build(metrics, options=options, judge=judge, resolve=True)
    # what suits decoded text, as the metric declares it (ROUGE: rougeLsum splits sentences)
    run = run.with_defaults({spec.name: spec.decoded_text_options() for spec in run.specs()})
    statistics: dict[str, Stats] = {}
    lengths = RunningMean()

    def hook(eval_prediction: Any, compute_result: bool = True) -> dict[str, float]:
        nonlocal lengths
        predictions, labels = eval_prediction[0], eval_prediction[1]
        preds, pred_ids, pad = decode(tokenizer, predictions)
        refs, _, _ = decode(tokenizer, labels)
        if len(preds) != len(refs):
            raise ValueError(f"compute_metrics: {len(preds)} predictions but {len(refs)} labels")
        if preds:
            batch = {"predictions": preds, "references": refs}
            for name, stats in run.statistics(batch, texts=False, optional=False).items():
                statistics[name] = statistics[name] + stats if name in statistics else stats
        for n in (pred_ids != pad).sum(axis=1).tolist():
            lengths.add(n)
        if not compute_result:
            return {}
        result = {}
        try:
            if not statistics:
                raise ValueError(f"{run.metrics[0]}: no examples were added")
            for scored in run.results(statistics).values():
                result.update(flat_scores(scored))
            if gen_len:
                value = lengths.value
                assert value is not None  # every metric above had examples, and so has this
                result["gen_len"] = float(value)
        finally:  # the next evaluation starts afresh
            statistics.clear()
            lengths = RunningMean()
        return result

    return hook
