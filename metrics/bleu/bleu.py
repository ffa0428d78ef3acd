# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""BLEU metric: a thin evaluate layer over textgen_metrics.bleu."""

import evaluate

import textgen_metrics
import textgen_metrics.hf

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

_KWARGS_DESCRIPTION = """
Computes BLEU of predictions against references.
Args:
    predictions (list of str): the generated texts.
    references (list of str, or list of list of str): one or several references per
        prediction; the number may differ between examples.
    tokenizer (str or callable): any sacrebleu tokenizer, with sacrebleu's tokens: "13a"
        (default, mteval-v13a), "intl" (mteval-v14), "none" (split on whitespace), "char",
        "zh" (Chinese), "ja-mecab" (Japanese), "ko-mecab" (Korean); or a function
        str -> list of str.
    lowercase (bool): lower-case the texts before any tokenizer. Default False.
    max_order (int): the largest n-gram order. Default 4.
    smooth (bool): Lin and Och add-one smoothing, (matches + 1) / (total + 1) for every order of
        the corpus score as Hugging Face's bleu; nltk's method2 per example. Default False.
    weights (list of float): n-gram weights (e.g. [0.4, 0.3, 0.2, 0.1]); overrides max_order;
        the corpus score is then nltk's corpus_bleu with these weights.
    smooth_method (str): sacrebleu's smoothing, "none", "floor", "add-k" or "exp", for the corpus
        and the per-example scores (sacrebleu's sentence_bleu). Default None: no smoothing for
        the corpus, nltk's sentence_bleu per example.
    smooth_value (float): the value of "floor" (0.1) and "add-k" (1).
    effective_order (bool): sacrebleu's effective order (orders without n-grams left out).
    use_aggregator (bool): True (default) gives the corpus score; False per-example lists.
    confidence_level (float), n_resamples (int, default 1000), seed (int, default 12345): add
        bleu_ci, a bootstrap interval of the corpus score over resamples of the examples.
    interval (str): the rule of bleu_ci. "percentile" (default): the 2.5th and 97.5th
        percentiles of the resampled scores (at 0.95), within [0, 1]. "sacrebleu": sacrebleu's
        --confidence interval / 100 (the resamples' mean plus and minus half that spread), for
        parity with sacrebleu; on a few examples it can pass 1.
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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bleu(textgen_metrics.hf.TextgenMetric):
    metric_name = "bleu"
    reference_urls = [
        "https://aclanthology.org/P02-1040",
        "https://github.com/mjpost/sacrebleu",
    ]
