# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Context Relevance (LLM-guided): a thin evaluate layer over textgen_metrics.context_relevance."""

import evaluate

import textgen_metrics.hf

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Context relevance is the share of retrieved contexts that are relevant to the query: a
context is relevant if any part of it helps answer the query. The judge gives one verdict per
context. Score = relevant contexts / contexts. As valor (following DeepEval).
"""

_KWARGS_DESCRIPTION = """
Computes Context Relevance with an LLM judge.
Args:
    queries (list of str): one per example.
    contexts (list of list of str): one per example.
""" + textgen_metrics.hf.JUDGE_ARGS.format(name="context_relevance") + """
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM: contexts that mention Paris are relevant
    ...     contexts = [part.split("<<<END")[0] for part in messages[-1]["content"].split("<<<DATA context_")[1:]]
    ...     return json.dumps({"verdicts": [
    ...         {"index": i, "reason": "...", "verdict": "yes" if "Paris" in c else "no"}
    ...         for i, c in enumerate(contexts, 1)]})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/context_relevance", judge=judge)
    >>> results = metric.compute(queries=["What is the capital of France?"],
    ...                          contexts=[["Paris is the capital of France.", "Berlin is in Germany."]])
    >>> print(results["context_relevance"])
    0.5

    >>> results = metric.compute(queries=["Capital of France?", "Capital of France?"],
    ...                          contexts=[["Paris!"], ["Rome.", "Madrid.", "Paris."]], use_aggregator=False)
    >>> print([round(s, 4) for s in results["context_relevance"]])
    [1.0, 0.3333]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ContextRelevance(textgen_metrics.hf.JudgeMetric):
    metric_name = "context_relevance"
