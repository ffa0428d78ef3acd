# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Context Recall (LLM-guided): a thin evaluate layer over textgen_metrics.context_recall."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Context recall is the share of the ground truth's statements that the retrieved contexts
support. The judge extracts the statements of the ground truth answer, then says for each one
whether it can be attributed to the contexts. Score = attributable statements / statements; with
several references, the maximum over references. As valor (loosely following RAGAS).
"""

_EXAMPLES = """\
Returns:
    context_recall (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM, answering by the task id of each request
    ...     if task == "context_recall/statements":
    ...         return json.dumps({"statements": ["Paris is the capital of France", "Paris has 2 million people"]})
    ...     return json.dumps({"verdicts": [{"index": 1, "reason": "context_1", "verdict": "yes"},
    ...                                     {"index": 2, "reason": "population not given", "verdict": "no"}]})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/context_recall", judge=judge)
    >>> results = metric.compute(contexts=[["Paris is the capital of France."]],
    ...                          references=["Paris, the capital of France, has 2 million people."])
    >>> print(results["context_recall"])
    0.5

    >>> results = metric.compute(contexts=[[]], references=["Paris has 2 million people."],
    ...                          use_aggregator=False)
    >>> print(results["context_recall"], results["judge_usage"]["requests"])
    [0.0] 0
"""

_KWARGS_DESCRIPTION = """
Computes Context Recall with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("context_recall") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ContextRecall(textgen_metrics.hf.JudgeMetric):
    metric_name = "context_recall"
