# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""TER metric: a thin evaluate layer over textgen_metrics.ter."""

import evaluate

import textgen_metrics
import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@inproceedings{snover-etal-2006-study,
    title = "A Study of Translation Edit Rate with Targeted Human Annotation",
    author = "Snover, Matthew and Dorr, Bonnie and Schwartz, Rich and Micciulla, Linnea and Makhoul, John",
    booktitle = "Proceedings of the 7th Conference of the Association for Machine Translation in the Americas",
    year = "2006",
    url = "https://aclanthology.org/2006.amta-papers.25",
    pages = "223--231",
}
""" + textgen_metrics.hf.SACREBLEU_CITATION

_DESCRIPTION = """\
TER (translation edit rate) counts the fewest edits that turn a generated text into a reference:
insertions, deletions and substitutions of words, and shifts of whole phrases, divided by the
reference length (averaged over the references; the best reference gives the edits). Lower is
better; it can exceed 100. Scores are sacrebleu's TER (Tercom's algorithm), digit for digit,
its quirk included: sacrebleu tokenizes references twice, so with normalized=True a possessive
before punctuation ("Mary's.") costs two edits even in a prediction equal to its reference.
The result carries sacrebleu's signature.
"""

_EXAMPLES = """\
Returns:
    score (float, or list of float): TER, 0 and up (100 * edits / reference length).
    num_edits (int, or list), ref_length (float, or list): the edits and reference length.
    score_ci ([low, high]): with confidence_level.
    signature (str): sacrebleu's signature of the settings; report it with the score.
Examples:

    >>> import evaluate
    >>> ter = evaluate.load("./metrics/ter")
    >>> predictions = ["does this sentence match??", "what about this sentence?",
    ...                "What did the TER metric user say to the developer?"]
    >>> references = [["does this sentence match", "does this sentence match!?!"],
    ...               ["wHaT aBoUt ThIs SeNtEnCe?", "wHaT aBoUt ThIs SeNtEnCe?"],
    ...               ["Your jokes are...", "...TERrible"]]
    >>> results = ter.compute(predictions=predictions, references=references, case_sensitive=True)
    >>> print(results["score"], results["num_edits"], results["ref_length"])
    150.0 15 10.0

    Punctuation removed, per example:

    >>> results = ter.compute(predictions=predictions, references=references, no_punct=True,
    ...                       use_aggregator=False)
    >>> print(results["score"], results["signature"])
    [0.0, 0.0, 500.0] nrefs:2|case:lc|tok:tercom|norm:no|punct:no|asian:no|version:2.6.0
"""

_KWARGS_DESCRIPTION = """
Computes TER of predictions against references.
""" + textgen_metrics.option_docs.arguments_text("ter") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ter(textgen_metrics.hf.TextgenMetric):
    metric_name = "ter"
    reference_urls = [
        "https://aclanthology.org/2006.amta-papers.25",
        "https://github.com/mjpost/sacrebleu",
    ]
