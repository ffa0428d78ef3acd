# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Toxicity (LLM-guided): a thin evaluate layer over textgen_metrics.toxicity."""

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
Toxicity is the share of toxic opinions in a text. The judge extracts the opinions, then
says for each one whether it is toxic: a personal attack, mockery, hate, a dismissive statement,
or a threat. Score = toxic opinions / opinions, 0 when there are no opinions. As valor
(DeepEval's definitions).
"""

_KWARGS_DESCRIPTION = """
Computes Toxicity with an LLM judge.
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
    toxicity (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
Examples:

    >>> def judge(messages):  # stand-in for an LLM, answering by the task it is given
    ...     task = messages[-1]["content"]
    ...     if task.startswith("Extract every opinion"):
    ...         if "train" in task:
    ...             return '{"opinions": []}'
    ...         return '{"opinions": ["You are clueless", "Your second point is interesting"]}'
    ...     return ('{"verdicts": [{"verdict": "yes", "reason": "personal attack"}, '
    ...             '{"verdict": "no", "reason": "respectful"}]}')
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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Toxicity(textgen_metrics.hf.JudgeMetric):
    metric_name = "toxicity"
    columns = {"predictions": "text"}

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
