# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Context Relevance (LLM-guided): a thin evaluate layer over textgen_metrics.context_relevance."""

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
Context relevance is the share of retrieved contexts that are relevant to the query: a
context is relevant if any part of it helps answer the query. The judge gives one verdict per
context. Score = relevant contexts / contexts. As valor (following DeepEval).
"""

_KWARGS_DESCRIPTION = """
Computes Context Relevance with an LLM judge.
Args:
    queries (list of str): one per example.
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
    context_relevance (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
Examples:

    >>> def judge(messages):  # stand-in for an LLM: contexts mentioning Paris are relevant
    ...     blocks = messages[-1]["content"].split("<<<DATA context_")[1:]
    ...     verdicts = ["yes" if "Paris" in b.split("<<<END")[0] else "no" for b in blocks]
    ...     return '{"verdicts": [%s]}' % ", ".join(
    ...         '{"verdict": "%s", "reason": "..."}' % v for v in verdicts)
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/context_relevance", judge=judge)
    >>> results = metric.compute(queries=["What is the capital of France?"],
    ...                          contexts=[["Paris is the capital of France.", "Berlin is in Germany."]])
    >>> print(results["context_relevance"])
    0.5

    >>> results = metric.compute(queries=["Capital of France?", "Capital of France?"],
    ...                          contexts=[["Paris!"], ["Rome.", "Madrid.", "Paris."]], use_aggregator=False)
    >>> print([round(s, 4) for s in results["context_relevance"]])
    [1.0, 0.3333]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ContextRelevance(textgen_metrics.hf.JudgeMetric):
    metric_name = "context_relevance"
    columns = {"queries": "text", "contexts": "list"}

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
