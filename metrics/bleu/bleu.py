# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""BLEU metric: a thin evaluate layer over textgen_metrics.bleu."""

import evaluate

import textgen_metrics
import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    address = "Philadelphia, Pennsylvania, USA",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/P02-1040",
    pages = "311--318",
}
""" + textgen_metrics.hf.SACREBLEU_CITATION

_DESCRIPTION = """\
BLEU (Bilingual Evaluation Understudy) scores a generated text by its modified n-gram
precisions against one or more references (each n-gram counted at most as often as the
reference holding it most often), combined as a geometric mean and multiplied by a brevity
penalty for outputs shorter than their closest reference.

The corpus score (default) is sacrebleu's corpus_bleu with the 13a tokenizer and no smoothing,
digit for digit (divided by 100); per example (use_aggregator=False) the scores are nltk's
sentence_bleu on the same tokens.
"""

_EXAMPLES = """\
Returns:
    bleu (float): the score, in [0, 1].
    precisions (list of float): the n-gram precisions.
    brevity_penalty (float), length_ratio (float),
    translation_length (int), reference_length (int).
    signature (str): sacrebleu's signature of the settings; report it with the score.
Examples:

    >>> import evaluate
    >>> bleu = evaluate.load("./metrics/bleu")
    >>> predictions = ["hello there general kenobi", "foo bar foobar"]
    >>> references = [["hello there general kenobi", "hello there !"], ["foo bar foobar"]]
    >>> results = bleu.compute(predictions=predictions, references=references)
    >>> print(round(results["bleu"], 6), results["precisions"], results["translation_length"])
    1.0 [1.0, 1.0, 1.0, 1.0] 7

    Per example, with valor's weights and smoothing:

    >>> predictions = ["the cat sat on the mat", "a quick brown fox jumps"]
    >>> references = [["the cat is on the mat", "there is a cat on the mat"], "the quick brown fox jumped"]
    >>> results = bleu.compute(predictions=predictions, references=references,
    ...                        weights=[0.4, 0.3, 0.2, 0.1], smooth=True, use_aggregator=False)
    >>> print([round(s, 4) for s in results["bleu"]])
    [0.5966, 0.5455]

    Chinese, with sacrebleu's zh tokenizer and exp smoothing, and the signature to report:

    >>> results = bleu.compute(predictions=["猫坐在垫子上。"], references=["猫在垫子上。"],
    ...                        tokenizer="zh", smooth_method="exp")
    >>> print(round(results["bleu"], 4), results["signature"])
    0.6435 nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.6.0
"""

_KWARGS_DESCRIPTION = """
Computes BLEU of predictions against references.
""" + textgen_metrics.option_docs.arguments_text("bleu") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bleu(textgen_metrics.hf.TextgenMetric):
    metric_name = "bleu"
    reference_urls = [
        "https://aclanthology.org/P02-1040",
        "https://github.com/mjpost/sacrebleu",
    ]
