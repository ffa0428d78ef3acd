# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Answer Relevance (LLM-guided): a thin evaluate layer over textgen_metrics.answer_relevance."""

import evaluate

import textgen_metrics.hf

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Answer relevance is the share of an answer's statements that are relevant to the query.
The judge extracts the statements of the answer, then gives one verdict per statement: relevant
to the query or not. Score = relevant statements / statements, 0 when there are none. As valor
(following DeepEval's two-step strategy).
"""

_KWARGS_DESCRIPTION = """
Computes Answer Relevance with an LLM judge.
Args:
    predictions (list of str): one per example.
    queries (list of str): one per example.
""" + textgen_metrics.hf.JUDGE_ARGS.format(name="answer_relevance") + """
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM, answering by the task id of each request
    ...     if task == "answer_relevance/statements":
    ...         return json.dumps({"statements": ["Paris is the capital of France", "I like cheese"]})
    ...     return json.dumps({"verdicts": [{"index": 1, "reason": "answers the query", "verdict": "yes"},
    ...                                     {"index": 2, "reason": "off topic", "verdict": "no"}]})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/answer_relevance", judge=judge)
    >>> results = metric.compute(predictions=["Paris is the capital of France. I like cheese."],
    ...                          queries=["What is the capital of France?"])
    >>> print(results["answer_relevance"], results["judge_model"])
    0.5 judge

    >>> results = metric.compute(predictions=["Paris. I like cheese."], queries=["Capital of France?"],
    ...                          return_details=True)
    >>> print([v["verdict"] for v in results["details"][0]["verdicts"]])
    ['yes', 'no']
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnswerRelevance(textgen_metrics.hf.JudgeMetric):
    metric_name = "answer_relevance"
