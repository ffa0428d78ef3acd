# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Context Relevance (LLM-guided): a thin evaluate layer over textgen_metrics.context_relevance."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Context relevance is the share of retrieved contexts that are relevant to the query: a
context is relevant if any part of it helps answer the query. The judge gives one verdict per
context. Score = relevant contexts / contexts. As valor (following DeepEval).
"""

_EXAMPLES = """\
Returns:
    context_relevance (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
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

_KWARGS_DESCRIPTION = """
Computes Context Relevance with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("context_relevance") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ContextRelevance(textgen_metrics.hf.JudgeMetric):
    metric_name = "context_relevance"
