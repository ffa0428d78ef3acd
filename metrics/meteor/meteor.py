# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""METEOR metric: a thin evaluate layer over textgen_metrics.meteor."""

import evaluate

import textgen_metrics
import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@inproceedings{banarjee2005,
    title = {{METEOR}: An Automatic Metric for {MT} Evaluation with Improved Correlation with Human Judgments},
    author = {Banerjee, Satanjeev and Lavie, Alon},
    booktitle = {Proceedings of the {ACL} Workshop on Intrinsic and Extrinsic Evaluation Measures for Machine Translation and/or Summarization},
    month = jun,
    year = {2005},
    address = {Ann Arbor, Michigan},
    publisher = {Association for Computational Linguistics},
    url = {https://www.aclweb.org/anthology/W05-0909},
    pages = {65--72},
}
"""

_DESCRIPTION = """\
METEOR aligns the words of a prediction with a reference in three stages (exact words, Porter
stems, WordNet synonyms), computes a recall-weighted harmonic mean of unigram precision and
recall, and applies a fragmentation penalty for matches scattered in many chunks. Scores are
nltk's meteor_score, value for value, with WordNet 3.0 read from Debian's wordnet-base package
(nothing is downloaded); with several references the best one counts.
"""

_EXAMPLES = """\
Returns:
    meteor (float, or list of float): in [0, 1].
    signature (str): the settings that change the score; report it with it.
Examples:

    >>> import evaluate
    >>> meteor = evaluate.load("./metrics/meteor")
    >>> predictions = ["It is a guide to action which ensures that the military always obeys the commands of the party"]
    >>> references = ["It is a guide to action that ensures that the military will forever heed Party commands"]
    >>> results = meteor.compute(predictions=predictions, references=references)
    >>> print(round(results["meteor"], 4))
    0.6944

    Synonyms from WordNet, several references, per example:

    >>> results = meteor.compute(predictions=["the cat sat on the mat", "she drove a car"],
    ...                          references=[["the cat is on the mat", "a cat sat"], "she drove an auto"],
    ...                          use_aggregator=False)
    >>> print([round(s, 4) for s in results["meteor"]])
    [0.8067, 0.6389]
"""

_KWARGS_DESCRIPTION = """
Computes METEOR of predictions against references.
""" + textgen_metrics.option_docs.arguments_text("meteor") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Meteor(textgen_metrics.hf.TextgenMetric):
    metric_name = "meteor"
    reference_urls = [
        "https://aclanthology.org/W05-0909",
        "https://www.nltk.org/api/nltk.translate.meteor_score.html",
    ]
