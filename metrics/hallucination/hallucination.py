# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Hallucination (LLM-guided): a thin evaluate layer over textgen_metrics.hallucination."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Hallucination is the share of contexts that the text contradicts. The judge gives one
verdict per context: does the prediction directly contradict it? Agreeing with a context, or not
addressing it, is not a contradiction. Score = contradicted contexts / contexts; lower is better
(the opposite direction of faithfulness). As valor (following DeepEval).
"""

_EXAMPLES = """\
Returns:
    hallucination (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM: "Lyon" contradicts the first context
    ...     return json.dumps({"verdicts": [{"index": 1, "reason": "the capital is Paris", "verdict": "yes"},
    ...                                     {"index": 2, "reason": "not addressed", "verdict": "no"}]})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/hallucination", judge=judge)
    >>> results = metric.compute(predictions=["The capital of France is Lyon."],
    ...                          contexts=[["Paris is the capital of France.", "France is in Europe."]])
    >>> print(results["hallucination"])
    0.5

    >>> try:
    ...     metric.compute(predictions=["Lyon."], contexts=[[]])
    ... except ValueError as e:
    ...     print(e)
    contexts[0]: empty list; hallucination is undefined without contexts (it divides by their number)
"""

_KWARGS_DESCRIPTION = """
Computes Hallucination with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("hallucination") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Hallucination(textgen_metrics.hf.JudgeMetric):
    metric_name = "hallucination"
