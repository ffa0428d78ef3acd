# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Faithfulness (LLM-guided): a thin evaluate layer over textgen_metrics.faithfulness."""

import evaluate

import textgen_metrics.hf

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Faithfulness is the share of a text's claims that the retrieved contexts imply. The judge
extracts the claims of the prediction, then says for each one whether the contexts imply it. A
claim that contradicts a context, and a claim unrelated to the contexts, both count against (the
RAGAS definition that valor follows; DeepEval counts unrelated claims in favour). Score =
implied claims / claims.
"""

_KWARGS_DESCRIPTION = """
Computes Faithfulness with an LLM judge.
Args:
    predictions (list of str): one per example.
    contexts (list of list of str): one per example.
""" + textgen_metrics.hf.JUDGE_ARGS.format(name="faithfulness") + """
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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Faithfulness(textgen_metrics.hf.JudgeMetric):
    metric_name = "faithfulness"
