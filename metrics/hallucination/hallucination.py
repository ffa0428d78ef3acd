# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Hallucination (LLM-guided): a thin evaluate layer over textgen_metrics.hallucination."""

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
Hallucination is the share of contexts that the text contradicts. The judge gives one
verdict per context: does the prediction directly contradict it? Agreeing with a context, or not
addressing it, is not a contradiction. Score = contradicted contexts / contexts; lower is better
(the opposite direction of faithfulness). As valor (following DeepEval).
"""

_KWARGS_DESCRIPTION = """
Computes Hallucination with an LLM judge.
Args:
    predictions (list of str): one per example.
    contexts (list of list of str): one per example.
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
    hallucination (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
Examples:

    >>> def judge(messages):  # stand-in for an LLM: "Lyon" contradicts the first context
    ...     return ('{"verdicts": [{"verdict": "yes", "reason": "the capital is Paris"}, '
    ...             '{"verdict": "no", "reason": "not addressed"}]}')
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/hallucination", judge=judge)
    >>> results = metric.compute(predictions=["The capital of France is Lyon."],
    ...                          contexts=[["Paris is the capital of France.", "France is in Europe."]])
    >>> print(results["hallucination"])
    0.5

    >>> try:
    ...     metric.compute(predictions=["Lyon."], contexts=[[]])
    ... except ValueError as e:
    ...     print(e)
    contexts[0]: empty list; hallucination is undefined without contexts (it divides by their number)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Hallucination(textgen_metrics.hf.JudgeMetric):
    metric_name = "hallucination"
    columns = {"predictions": "text", "contexts": "list"}

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
