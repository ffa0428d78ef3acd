# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Answer Relevance (LLM-guided): a thin evaluate layer over textgen_metrics.answer_relevance."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Answer relevance is the share of an answer's statements that are relevant to the query.
The judge extracts the statements of the answer, then gives one verdict per statement: relevant
to the query or not. Score = relevant statements / statements, 0 when there are none. As valor
(following DeepEval's two-step strategy).
"""

_EXAMPLES = """\
Returns:
    answer_relevance (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
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

_KWARGS_DESCRIPTION = """
Computes Answer Relevance with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("answer_relevance") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnswerRelevance(textgen_metrics.hf.JudgeMetric):
    metric_name = "answer_relevance"
