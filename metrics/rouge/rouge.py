# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""ROUGE metric: a thin evaluate layer over textgen_metrics.rouge."""

import evaluate

import textgen_metrics
import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    month = jul,
    year = "2004",
    address = "Barcelona, Spain",
    publisher = "Association for Computational Linguistics",
    url = "https://www.aclweb.org/anthology/W04-1013",
    pages = "74--81",
}
"""

_DESCRIPTION = """\
ROUGE (Recall-Oriented Understudy for Gisting Evaluation) compares a generated text with one or
more reference texts by their overlap: n-grams (rouge1..rouge9), the longest common subsequence
(rougeL; rougeLsum over sentences split on newlines), the weighted LCS that favours consecutive
matches (rougeW) and skip-bigrams with an optional maximum gap, with or without unigrams
(rougeS, rougeS<k>, rougeSU, rougeSU<k>).

Per example the scores are those of Google's rouge-score 0.1.2 for rougeN/L/Lsum and of the
official ROUGE-1.5.5 script for rougeW/S/SU, on the same tokens. With several references the
best F-measure is kept (multi_ref="best"), or P, R and F are each averaged over the references
(multi_ref="mean", as SummEval's and BARTScore's analyses). The aggregate is the exact mean of
the per-example F-measures (Hugging Face's rouge reports a bootstrap median instead).
"""

_EXAMPLES = """\
Returns:
    dict: rouge type -> F-measure (float, or list of floats with use_aggregator=False), and
    signature (str): the settings that change the scores; report it with them.
Examples:

    >>> import evaluate
    >>> rouge = evaluate.load("./metrics/rouge")
    >>> predictions = ["hello there", "general kenobi"]
    >>> references = ["hello there", "general kenobi"]
    >>> results = rouge.compute(predictions=predictions, references=references)
    >>> print(results)
    {'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0, 'rougeLsum': 1.0, 'signature': 'rouge|tok:rouge_score|sent:newline|refs:best-f|nrefs:1|version:...'}

    Per-example scores, several references, stemming:

    >>> predictions = ["the cats are running", "a dog barked loudly"]
    >>> references = [["the cat runs", "cats run fast"], "the dog barked"]
    >>> results = rouge.compute(predictions=predictions, references=references,
    ...                         use_aggregator=False, use_stemmer=True)
    >>> print([round(v, 4) for v in results["rouge1"]])
    [0.8571, 0.5714]

    Several references, averaged instead of the best one (SummEval's and BARTScore's rule):

    >>> results = rouge.compute(predictions=["the cats are running", "a dog barked loudly"],
    ...                         references=[["the cat runs", "cats run fast"], "the dog barked"],
    ...                         use_aggregator=False, use_stemmer=True, multi_ref="mean")
    >>> print([round(v, 4) for v in results["rouge1"]], results["signature"].split("|")[3])
    [0.7143, 0.5714] refs:mean

    The ROUGE-1.5.5 family, with precision and recall:

    >>> results = rouge.compute(predictions=["police killed the gunman"],
    ...                         references=["the gunman killed the policeman"],
    ...                         rouge_types=["rougeW", "rougeSU4"], return_precision_recall=True)
    >>> print({k: round(v, 5) for k, v in results.items() if k != "signature"})
    {'rougeW': 0.36702, 'rougeW_precision': 0.5, 'rougeW_recall': 0.28991, 'rougeSU4': 0.34783, 'rougeSU4_precision': 0.44444, 'rougeSU4_recall': 0.28571}

    Non-Latin scripts need the "unicode" tokenizer (the default drops them, as rouge-score):

    >>> print(rouge.compute(predictions=["नमस्ते दुनिया"], references=["नमस्ते दोस्त"],
    ...                     rouge_types=["rouge1"], tokenizer="unicode")["rouge1"])
    0.5
"""

_KWARGS_DESCRIPTION = """
Computes ROUGE F-measures of predictions against references.
""" + textgen_metrics.option_docs.arguments_text("rouge") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rouge(textgen_metrics.hf.TextgenMetric):
    metric_name = "rouge"
    reference_urls = [
        "https://aclanthology.org/W04-1013",
        "https://github.com/google-research/google-research/tree/master/rouge",
    ]
