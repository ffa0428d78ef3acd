# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""chrF metric: a thin evaluate layer over textgen_metrics.chrf."""

import evaluate

import textgen_metrics
import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@inproceedings{popovic-2015-chrf,
    title = "chr{F}: character n-gram {F}-score for automatic {MT} evaluation",
    author = "Popovi{\\'c}, Maja",
    booktitle = "Proceedings of the Tenth Workshop on Statistical Machine Translation",
    year = "2015",
    url = "https://aclanthology.org/W15-3049",
    pages = "392--395",
}
@inproceedings{popovic-2017-chrf,
    title = "chr{F}++: words helping character n-grams",
    author = "Popovi{\\'c}, Maja",
    booktitle = "Proceedings of the Second Conference on Machine Translation",
    year = "2017",
    url = "https://aclanthology.org/W17-4770",
    pages = "612--618",
}
""" + textgen_metrics.hf.SACREBLEU_CITATION

_DESCRIPTION = """\
chrF scores a generated text by the F-score of its character n-grams (orders 1 to 6) against a
reference, recall weighted beta (2) times as much as precision; chrF++ (word_order=2) adds word
unigrams and bigrams. Statistics are summed over the corpus before the F-score is taken. Scores
are sacrebleu's CHRF, digit for digit, on its 0-100 scale; with several references each example
keeps the one with the best sentence chrF. The result carries sacrebleu's signature.
"""

_EXAMPLES = """\
Returns:
    score (float, or list of float): chrF, 0 to 100.
    char_order, word_order, beta: the settings, as Hugging Face's chrf.
    score_ci ([low, high]): with confidence_level.
    signature (str): sacrebleu's signature of the settings; report it with the score.
Examples:

    >>> import evaluate
    >>> chrf = evaluate.load("./metrics/chrf")
    >>> predictions = ["The relationship between cats and dogs is not exactly friendly.",
    ...                "a good bookshop is just a genteel black hole that knows how to read."]
    >>> references = [["The relationship between dogs and cats is not exactly friendly."],
    ...               ["A good bookshop is just a genteel Black Hole that knows how to read."]]
    >>> results = chrf.compute(predictions=predictions, references=references)
    >>> print(round(results["score"], 4), results["signature"])
    84.6421 nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0

    chrF++, lower-cased, per example:

    >>> results = chrf.compute(predictions=predictions, references=references, word_order=2,
    ...                        lowercase=True, use_aggregator=False)
    >>> print([round(s, 4) for s in results["score"]])
    [83.3085, 100.0]

    A 95% bootstrap interval of the corpus score:

    >>> results = chrf.compute(predictions=predictions, references=references,
    ...                        confidence_level=0.95, n_resamples=100)
    >>> print(results["score_ci"][0] <= results["score"] <= results["score_ci"][1])
    True
"""

_KWARGS_DESCRIPTION = """
Computes chrF (or chrF++) of predictions against references.
""" + textgen_metrics.option_docs.arguments_text("chrf") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Chrf(textgen_metrics.hf.TextgenMetric):
    metric_name = "chrf"
    reference_urls = [
        "https://aclanthology.org/W15-3049",
        "https://aclanthology.org/W17-4770",
        "https://github.com/mjpost/sacrebleu",
    ]
