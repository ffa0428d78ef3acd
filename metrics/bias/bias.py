# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Bias (LLM-guided): a thin evaluate layer over textgen_metrics.bias."""

import evaluate
import textgen_metrics.hf

_CITATION = """\
@misc{valor_text_generation,
    title = {Valor: text generation metrics},
    author = {Striveworks},
    year = {2024},
    url = {https://striveworks.github.io/valor/},
}
"""

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
    judge: the judge, here or at evaluate.load(..., judge=...): "openai:<model>" (an
        OpenAI-compatible server; OPENAI_BASE_URL, OPENAI_API_KEY), "hf:<local model>", a
        textgen_metrics judge object (OpenAIJudge, HFJudge, CallableJudge) or any function
        messages -> str.
    judge_options (dict): options for a judge given as a string (concurrency, cache, ...).
    use_aggregator (bool): True (default) gives the mean over the examples that got a score;
        False the per-example list (None where the judge's answers stayed unusable).
    return_details (bool): add per-example details: the extracted items, each verdict with the
        judge's reason, and any error.
    on_error (str): "record" (default) keeps going and lists failures under "errors";
        "raise" raises on the first example that failed.
Returns:
    bias (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
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

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
