# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Google BLEU (GLEU) metric: a thin evaluate layer over textgen_metrics.google_bleu."""

import evaluate

import textgen_metrics
import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@misc{wu2016googles,
    title={Google's Neural Machine Translation System: Bridging the Gap between Human and Machine Translation},
    author={Yonghui Wu and Mike Schuster and Zhifeng Chen and Quoc V. Le and Mohammad Norouzi and others},
    year={2016},
    eprint={1609.08144},
    archivePrefix={arXiv},
    primaryClass={cs.CL}
}
"""

_DESCRIPTION = """\
Google BLEU (GLEU, Wu et al. 2016) counts the n-grams of orders min_len..max_len that the
prediction shares with a reference and divides by the larger of the two n-gram totals, i.e. the
minimum of n-gram precision and recall. It suits single sentences better than BLEU. The corpus
score sums matches and totals over examples (each with its best reference), as nltk's
corpus_gleu; per example it is nltk's sentence_gleu. Tokens: the 13a tokenizer.
"""

_EXAMPLES = """\
Returns:
    google_bleu (float, or list of float): in [0, 1].
    signature (str): tokenizer, n-gram orders, number of references, version.
Examples:

    >>> import evaluate
    >>> google_bleu = evaluate.load("./metrics/google_bleu")
    >>> predictions = ["It is a guide to action which ensures that the rubber duck always disobeys the commands of the cat",
    ...                "he read the book because he was interested in world history"]
    >>> references = [["It is the guiding principle which guarantees the rubber duck forces never being under the command of the cat"],
    ...               ["he was interested in world history because he read the book"]]
    >>> results = google_bleu.compute(predictions=predictions, references=references)
    >>> print(round(results["google_bleu"], 2))
    0.44

    Several references for the first example, bigrams and up:

    >>> references[0] += ["It is a guide to action that ensures that the rubber duck will never heed the cat commands",
    ...                   "It is the practical guide for the rubber duck army never to heed the directions of the cat"]
    >>> results = google_bleu.compute(predictions=predictions, references=references, min_len=2)
    >>> print(round(results["google_bleu"], 2))
    0.53
    >>> results = google_bleu.compute(predictions=predictions, references=references, use_aggregator=False)
    >>> print([round(s, 4) for s in results["google_bleu"]])
    [0.5143, 0.7895]
"""

_KWARGS_DESCRIPTION = """
Computes Google BLEU of predictions against references.
""" + textgen_metrics.option_docs.arguments_text("google_bleu") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GoogleBleu(textgen_metrics.hf.TextgenMetric):
    metric_name = "google_bleu"
    reference_urls = [
        "https://arxiv.org/abs/1609.08144",
        "https://www.nltk.org/_modules/nltk/translate/gleu_score.html",
    ]
