# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Faithfulness (LLM-guided): a thin evaluate layer over textgen_metrics.faithfulness."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Faithfulness is the share of a text's claims that the retrieved contexts imply. The judge
extracts the claims of the prediction, then says for each one whether the contexts imply it. A
claim that contradicts a context, and a claim unrelated to the contexts, both count against (the
RAGAS definition that valor follows; DeepEval counts unrelated claims in favour). Score =
implied claims / claims.
"""

_EXAMPLES = """\
Returns:
    faithfulness (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM, answering by the task id of each request
    ...     if task == "faithfulness/claims":
    ...         if "Hello" in messages[-1]["content"]:
    ...             return json.dumps({"claims": []})
    ...         return json.dumps({"claims": ["Paris is the capital of France", "Paris has 50 million people"]})
    ...     return json.dumps({"verdicts": [{"index": 1, "reason": "context_1 says so", "verdict": "yes"},
    ...                                     {"index": 2, "reason": "not in the contexts", "verdict": "no"}]})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/faithfulness", judge=judge)
    >>> results = metric.compute(predictions=["Paris, the capital of France, has 50 million people."],
    ...                          contexts=[["Paris is the capital of France."]])
    >>> print(results["faithfulness"])
    0.5

    >>> results = metric.compute(predictions=["Hello!", "Paris has 50 million people."],
    ...                          contexts=[["Paris is in France."], ["Paris is in France."]],
    ...                          use_aggregator=False, return_details=True)
    >>> print(results["faithfulness"], results["details"][0]["claims"])
    [1.0, 0.5] []
"""

_KWARGS_DESCRIPTION = """
Computes Faithfulness with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("faithfulness") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Faithfulness(textgen_metrics.hf.JudgeMetric):
    metric_name = "faithfulness"
