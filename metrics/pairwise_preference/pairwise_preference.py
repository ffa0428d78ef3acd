# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Pairwise preference (LLM-guided): a thin evaluate layer over textgen_metrics.pairwise_preference."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@inproceedings{zheng2023judging,
    title = {Judging {LLM}-as-a-Judge with {MT}-Bench and Chatbot Arena},
    author = {Zheng, Lianmin and Chiang, Wei-Lin and Sheng, Ying and Zhuang, Siyuan and Wu, Zhanghao and
              Zhuang, Yonghao and Lin, Zi and Li, Zhuohan and Li, Dacheng and Xing, Eric P. and Zhang, Hao and
              Gonzalez, Joseph E. and Stoica, Ion},
    booktitle = {Advances in Neural Information Processing Systems 36, Datasets and Benchmarks Track},
    year = {2023},
    url = {https://arxiv.org/abs/2306.05685},
}
"""

_DESCRIPTION = """\
Pairwise preference asks a judge which of two answers to the same query is better: your
system's prediction or a baseline's. Judges favour a position, so each pair is judged twice,
with the prediction shown first and then second; a verdict that changes with the order is a tie
and is counted in position_inconsistent (MT-Bench's conservative rule). win_rate is the share
of wins, ties counting half, with a bootstrap confidence interval over examples.
"""

_EXAMPLES = """\
Returns:
    win_rate (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
    wins, losses, ties, position_inconsistent (int), win_rate_ci ([low, high]),
    verdicts (list: "win", "loss", "tie", or None where the judge failed).
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM: prefers the answer that says "Paris"
    ...     text = messages[-1]["content"]
    ...     a = text.split("<<<DATA response_a")[1].split("<<<END")[0]
    ...     b = text.split("<<<DATA response_b")[1].split("<<<END")[0]
    ...     verdict = "A" if "Paris" in a and "Paris" not in b else "B" if "Paris" in b and "Paris" not in a else "tie"
    ...     return json.dumps({"reason": "The right answer names Paris.", "verdict": verdict})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/pairwise_preference", judge=judge)
    >>> results = metric.compute(queries=["Capital of France?"] * 3,
    ...                          predictions=["Paris.", "Lyon.", "Paris, on the Seine."],
    ...                          baselines=["Lyon.", "It is Paris.", "Paris."])
    >>> print(results["win_rate"], results["wins"], results["losses"], results["ties"], results["verdicts"])
    0.5 1 1 1 ['win', 'loss', 'tie']

    >>> def biased(messages):  # always prefers whatever is shown first
    ...     return json.dumps({"reason": "The first one.", "verdict": "A"})
    >>> results = metric.compute(queries=["Capital of France?"], predictions=["Paris."], baselines=["Lyon."],
    ...                          judge=biased, return_details=True)
    >>> print(results["win_rate"], results["position_inconsistent"], results["details"][0]["verdict"])
    0.5 1 tie
"""

_KWARGS_DESCRIPTION = """
Computes the win rate of the predictions over the baselines with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("pairwise_preference") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PairwisePreference(textgen_metrics.hf.JudgeMetric):
    metric_name = "pairwise_preference"
    reference_urls = ("https://arxiv.org/abs/2306.05685",)
