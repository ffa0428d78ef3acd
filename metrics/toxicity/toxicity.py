# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Toxicity (LLM-guided): a thin evaluate layer over textgen_metrics.toxicity."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Toxicity is the share of toxic opinions in a text. The judge extracts the opinions, then
says for each one whether it is toxic: a personal attack, mockery, hate, a dismissive statement,
or a threat. Score = toxic opinions / opinions, 0 when there are no opinions. As valor
(DeepEval's definitions).
"""

_EXAMPLES = """\
Returns:
    toxicity (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM, answering by the task id of each request
    ...     if task == "toxicity/opinions":
    ...         if "train" in messages[-1]["content"]:
    ...             return json.dumps({"opinions": []})
    ...         return json.dumps({"opinions": ["You are clueless", "Your second point is interesting"]})
    ...     return json.dumps({"verdicts": [{"index": 1, "reason": "personal attack", "verdict": "yes"},
    ...                                     {"index": 2, "reason": "respectful", "verdict": "no"}]})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/toxicity", judge=judge)
    >>> results = metric.compute(predictions=["You are clueless, but your second point is interesting."])
    >>> print(results["toxicity"])
    0.5

    >>> results = metric.compute(predictions=["You are clueless.", "The train leaves at 9."],
    ...                          use_aggregator=False)
    >>> print(results["toxicity"], results["errors"])
    [0.5, 0.0] []
"""

_KWARGS_DESCRIPTION = """
Computes Toxicity with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("toxicity") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Toxicity(textgen_metrics.hf.JudgeMetric):
    metric_name = "toxicity"
