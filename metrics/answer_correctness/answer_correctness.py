# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Answer Correctness (LLM-guided): a thin evaluate layer over textgen_metrics.answer_correctness."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Answer correctness compares the statements of a predicted answer with those of a ground
truth answer. The judge extracts the statements of both, then says for each prediction statement
whether the ground truth supports it (true positive, else false positive) and for each ground truth
statement whether the prediction states it (else false negative). The score is the F1
tp / (tp + 0.5 * (fp + fn)), 0 when there is no true positive; with several references, the maximum
over references. As valor (adapted from RAGAS without its embedding similarity term).
"""

_EXAMPLES = """\
Returns:
    answer_correctness (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM, answering by the task id of each request
    ...     if task == "answer_correctness/statements" and "<<<DATA prediction " in messages[-1]["content"]:
    ...         return json.dumps({"statements": ["The Eiffel Tower is in Paris", "It is 330 m tall"]})
    ...     if task == "answer_correctness/statements":
    ...         return json.dumps({"statements": ["The Eiffel Tower is in Paris", "It was built in 1889"]})
    ...     return json.dumps({
    ...         "prediction": [{"index": 1, "reason": "stated", "verdict": "yes"},
    ...                        {"index": 2, "reason": "height not given", "verdict": "no"}],
    ...         "ground_truth": [{"index": 1, "reason": "stated", "verdict": "yes"},
    ...                          {"index": 2, "reason": "year missing", "verdict": "no"}]})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/answer_correctness", judge=judge)
    >>> results = metric.compute(predictions=["The Eiffel Tower is in Paris and is 330 m tall."],
    ...                          references=["The Eiffel Tower, built in 1889, stands in Paris."])
    >>> print(results["answer_correctness"], results["judge_usage"]["requests"])
    0.5 3

    >>> results = metric.compute(predictions=["The Eiffel Tower is in Paris and is 330 m tall."],
    ...                          references=[["The Eiffel Tower, built in 1889, stands in Paris."]],
    ...                          use_aggregator=False, return_details=True)
    >>> detail = results["details"][0]["references"][0]
    >>> print(results["answer_correctness"], detail["tp"], detail["fp"], detail["fn"])
    [0.5] 1 1 1
"""

_KWARGS_DESCRIPTION = """
Computes Answer Correctness with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("answer_correctness") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnswerCorrectness(textgen_metrics.hf.JudgeMetric):
    metric_name = "answer_correctness"
