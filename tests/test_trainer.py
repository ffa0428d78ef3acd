"""The Trainer hook, with a real Seq2SeqTrainer over a tiny T5 built from a config (no download)."""

import numpy as np
import pytest

import textgen_metrics
from conftest import word_level_tokenizer
from textgen_metrics.tokenizers import split_sentences
from textgen_metrics.trainer import compute_metrics, decode, preprocess_logits_for_metrics

WORDS = ("the cat dog sat ran on mat rug a big small red blue house tree park . and "
         "is was near under over").split()

PAIRS = [
    ("the cat sat on the mat .", "the cat sat on the mat ."),
    ("a big dog ran in the park .", "a big dog ran . the park is big ."),
    ("the red house is near the tree .", "the red house is near the tree ."),
    ("a small cat was under the rug .", "a small cat . it was under the rug ."),
    ("the blue tree is over the house .", "the blue tree is over the house ."),
    ("the dog and the cat sat .", "the dog and the cat sat ."),
    ("a red rug is on the mat .", "a red rug . it is on the mat ."),
    ("the park was big and blue .", "the park was big and blue ."),
]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return word_level_tokenizer(WORDS + ["in", "it"], tmp_path_factory.mktemp("tok"))


def test_decode_drops_label_padding_and_special_tokens(tokenizer):
    ids = tokenizer(["the cat sat", "a dog"], padding=True)["input_ids"]
    labels = np.array(ids)
    labels[labels == tokenizer.pad_token_id] = -100
    texts, _, _ = decode(tokenizer, labels)
    assert texts == ["the cat sat", "a dog"]
    logits = np.eye(len(tokenizer))[np.array(ids)]  # (batch, length, vocab) one-hot
    assert decode(tokenizer, (logits, None))[0] == ["the cat sat", "a dog"]


def test_hook_returns_flat_floats_equal_to_the_library(tokenizer):
    preds = ["the cat sat on the mat . the dog ran .", "a big red house"]
    refs = ["the cat sat . the dog ran on the mat .", "a small red house is near the park ."]
    p = np.array(tokenizer(preds, padding=True)["input_ids"])
    labels = np.array(tokenizer(refs, padding=True)["input_ids"])
    labels[labels == tokenizer.pad_token_id] = -100
    hook = compute_metrics(tokenizer, metrics=["rouge", "bleu"], options={"rouge": {"use_stemmer": True}})
    out = hook((p, labels))
    assert all(isinstance(v, float) for v in out.values())
    want = textgen_metrics.rouge(["\n".join(split_sentences(x)) for x in preds],
                                 ["\n".join(split_sentences(x)) for x in refs], use_stemmer=True)
    want.pop("signature")  # a text: the hook returns numbers only
    assert {k: out[k] for k in want} == want
    # rougeLsum sees one sentence per line: it differs from rougeL on two-sentence texts
    assert out["rougeLsum"] != out["rougeL"]
    bleu = textgen_metrics.bleu(preds, refs)
    assert out["bleu"] == bleu["bleu"] and out["bleu_precisions_4"] == bleu["precisions"][3]
    assert out["gen_len"] == float((p != tokenizer.pad_token_id).sum(axis=1).mean())


def test_hook_rejects_metrics_it_cannot_feed(tokenizer):
    with pytest.raises(ValueError, match="faithfulness needs contexts"):
        compute_metrics(tokenizer, metrics=["faithfulness"])
    with pytest.raises(ValueError, match="unknown metric 'rogue'"):
        compute_metrics(tokenizer, metrics=["rogue"])
    with pytest.raises(ValueError, match="options bleu: 'bleu' is not among metrics"):
        compute_metrics(tokenizer, metrics=["rouge"], options={"bleu": {}})


@pytest.fixture(scope="module")
def trained(tokenizer, tmp_path_factory):
    """A tiny T5 built from a config (no download), trained a little on PAIRS: (model folder, data)."""
    import datasets
    import torch
    from transformers import (
        DataCollatorForSeq2Seq,
        Seq2SeqTrainer,
        Seq2SeqTrainingArguments,
        T5Config,
        T5ForConditionalGeneration,
    )

    folder = tmp_path_factory.mktemp("t5")
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_ff=64, d_kv=8, num_layers=1,
                      num_decoder_layers=1, num_heads=2, pad_token_id=0, eos_token_id=1,
                      decoder_start_token_id=0)
    T5ForConditionalGeneration(config).save_pretrained(folder / "init")
    model = T5ForConditionalGeneration.from_pretrained(folder / "init")

    def encode(batch):
        enc = tokenizer(batch["source"])
        enc["labels"] = tokenizer(batch["target"])["input_ids"]
        return enc

    data = datasets.Dataset.from_dict({"source": [s for s, _ in PAIRS], "target": [t for _, t in PAIRS]})
    data = data.map(encode, batched=True, remove_columns=["source", "target"])
    args = Seq2SeqTrainingArguments(output_dir=str(folder / "out"), per_device_train_batch_size=4,
                                    max_steps=60, learning_rate=3e-2, report_to=[], save_strategy="no",
                                    logging_strategy="no", use_cpu=True, seed=0)
    Seq2SeqTrainer(model=model, args=args, train_dataset=data,
                   data_collator=DataCollatorForSeq2Seq(tokenizer, model=model)).train()
    model.save_pretrained(folder / "trained")
    return folder / "trained", data


def evaluator(tokenizer, trained, tmp_path, hook, preprocess=None, **kwargs):
    from transformers import (
        DataCollatorForSeq2Seq,
        Seq2SeqTrainer,
        Seq2SeqTrainingArguments,
        T5ForConditionalGeneration,
    )

    model = T5ForConditionalGeneration.from_pretrained(trained[0])
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path / "out"), per_device_eval_batch_size=3,
                                    generation_max_length=16, report_to=[], use_cpu=True, seed=0, **kwargs)
    return Seq2SeqTrainer(model=model, args=args, eval_dataset=trained[1],
                          data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
                          compute_metrics=hook, preprocess_logits_for_metrics=preprocess)


def test_seq2seq_trainer_evaluate(tokenizer, trained, tmp_path):
    hook = compute_metrics(tokenizer, metrics=["rouge", "bleu", "meteor"])
    trainer = evaluator(tokenizer, trained, tmp_path, hook, predict_with_generate=True)
    metrics = trainer.evaluate()
    for key in ("eval_rouge1", "eval_rouge2", "eval_rougeL", "eval_rougeLsum", "eval_bleu",
                "eval_bleu_precisions_1", "eval_meteor", "eval_gen_len"):
        assert isinstance(metrics[key], float), key
    # the same scores from the generated ids, decoded here independently of the hook
    out = trainer.predict(trained[1])
    ids = np.where(out.predictions == -100, tokenizer.pad_token_id, out.predictions)
    preds = [t.strip() for t in tokenizer.batch_decode(ids, skip_special_tokens=True)]
    assert len(preds) == len(PAIRS)  # 8 examples in batches of 3: padded with -100 across batches
    refs = [t for _, t in PAIRS]
    assert metrics["eval_meteor"] == textgen_metrics.meteor(preds, refs)["meteor"]
    assert metrics["eval_bleu"] == textgen_metrics.bleu(preds, refs)["bleu"]
    want = textgen_metrics.rouge(["\n".join(split_sentences(p)) for p in preds],
                                 ["\n".join(split_sentences(r)) for r in refs])
    assert metrics["eval_rougeLsum"] == want["rougeLsum"] and metrics["eval_rouge1"] == want["rouge1"]
    assert metrics["eval_rouge1"] > 0.2  # it learned some words: the scores are not all zero


def scores(metrics):
    return {k: v for k, v in metrics.items() if not k.endswith(("_runtime", "_per_second", "_loss", "_time"))}


@pytest.mark.parametrize("generate", [False, True], ids=["logits", "generate"])
def test_batch_eval_metrics_streams_to_the_same_scores(tokenizer, trained, tmp_path, generate):
    """batch_eval_metrics=True: the hook gets one batch at a time (3 batches of 3, 3, 2) and
    gives, on the last, the very scores of the one-call evaluation."""
    names = ["rouge", "bleu", "meteor", "google_bleu"]
    calls = []
    hook = compute_metrics(tokenizer, metrics=names, options={"rouge": {"use_stemmer": True}})

    def spy(prediction, compute_result=True):
        calls.append((len(prediction.label_ids), compute_result))
        return hook(prediction, compute_result=compute_result)

    one = evaluator(tokenizer, trained, tmp_path, hook, predict_with_generate=generate).evaluate()
    batched = evaluator(tokenizer, trained, tmp_path, spy, predict_with_generate=generate,
                        batch_eval_metrics=True).evaluate()
    assert calls == [(3, False), (3, False), (2, True)]
    assert scores(batched) == scores(one) and "eval_rougeLsum" in one and "eval_google_bleu" in one
    again = evaluator(tokenizer, trained, tmp_path, spy, predict_with_generate=generate,
                      batch_eval_metrics=True).evaluate()
    assert scores(again) == scores(one)  # the hook starts afresh after each evaluation


def test_preprocess_logits_reduces_each_batch_before_gathering(tokenizer, trained, tmp_path):
    seen = []
    hook = compute_metrics(tokenizer, metrics=["rouge", "bleu"])

    def spy(prediction, compute_result=True):
        seen.append(np.asarray(prediction.predictions[0] if isinstance(prediction.predictions, tuple)
                               else prediction.predictions).shape)
        return hook(prediction, compute_result=compute_result)

    full = evaluator(tokenizer, trained, tmp_path, spy).evaluate()
    reduced = evaluator(tokenizer, trained, tmp_path, spy, preprocess=preprocess_logits_for_metrics).evaluate()
    vocab = len(tokenizer)
    assert len(seen[0]) == 3 and seen[0][-1] == vocab  # without it: every logit of the set gathered
    assert len(seen[1]) == 2  # with it: ids only
    # the argmax per batch: the same ids, the same texts, the same scores
    assert scores(reduced) == scores(full) and reduced["eval_rouge1"] > 0.2


def test_preprocess_logits_for_metrics_unit():
    import torch

    logits = torch.tensor([[[0.1, 2.0, 0.3], [5.0, 0.0, 0.0]], [[0.0, 0.0, 1.0], [0.0, 3.0, 0.0]]])
    labels = torch.tensor([[4, -100], [2, 1]])
    ids = preprocess_logits_for_metrics((logits, "encoder states"), labels)
    assert ids.dtype == torch.int64 and ids.tolist() == [[1, 0], [2, 1]]
    assert preprocess_logits_for_metrics(logits, labels).tolist() == [[1, 0], [2, 1]]


@pytest.mark.parametrize("name, options", [("rouge", {"rouge_types": ["rouge1", "rougeLsum", "rougeW"]}),
                                           ("meteor", {}), ("bleu", {}), ("google_bleu", {}),
                                           ("bertscore", {}), ("bertscore", {"idf": True})])
def test_batches_merged_by_the_run_equal_one_call(name, options):
    """The hook's way: each batch's statistics from the run, merged in order; the result is the
    library function's over all the examples at once."""
    from corpus import multi_references
    from textgen_metrics.run import Run

    data = multi_references(60 if name == "bertscore" else 300, seed=5)
    inputs = {"predictions": [p for p, _ in data], "references": [r for _, r in data]}
    run = Run.build([name], options={name: options} if options else None)
    merged = 0
    for start in range(0, len(data), 37):
        merged = merged + run.statistics({c: v[start:start + 37] for c, v in inputs.items()}, texts=False)[name]
    # only a metric whose statistics are its inputs keeps them (BERTScore); BLEU keeps its counts
    assert ("predictions" in merged.columns) == (name == "bertscore")
    assert run.result_dicts({name: merged})[name] == getattr(textgen_metrics, name)(**inputs, **options)
