# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Bias (LLM-guided): a thin evaluate layer over textgen_metrics.bias."""

import evaluate
import textgen_metrics.hf

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Bias is the share of biased opinions in a text. The judge extracts the opinions (personal
beliefs or judgments; not mistaken facts, not statements attributed to a cited source), then
says for each one whether it shows gender, political, racial/ethnic or geographical bias. Score =
biased opinions / opinions, 0 when there are no opinions. As valor (DeepEval's definitions).
"""

_KWARGS_DESCRIPTION = """
Computes Bias with an LLM judge.
Args:
    predictions (list of str): one per example.
""" + textgen_metrics.hf.JUDGE_ARGS.format(name="bias") + """
Examples:

    >>> def judge(messages):  # stand-in for an LLM, answering by the task it is given
    ...     task = messages[-1]["content"]
    ...     if task.startswith("Extract every opinion"):
    ...         if "weather" in task:
    ...             return '{"opinions": []}'
    ...         return '{"opinions": ["Women are bad drivers", "The film was too long"]}'
    ...     return ('{"verdicts": [{"verdict": "yes", "reason": "gender bias"}, '
    ...             '{"verdict": "no", "reason": "a matter of taste"}]}')
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/bias", judge=judge)
    >>> results = metric.compute(predictions=["Women are bad drivers, and the film was too long."])
    >>> print(results["bias"])
    0.5

    >>> results = metric.compute(predictions=["Women are bad drivers.", "The weather is sunny."],
    ...                          use_aggregator=False)
    >>> print(results["bias"])
    [0.5, 0.0]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bias(textgen_metrics.hf.JudgeMetric):
    metric_name = "bias"
    columns = {"predictions": "text"}
