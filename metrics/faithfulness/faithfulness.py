# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Faithfulness (LLM-guided): a thin evaluate layer over textgen_metrics.faithfulness."""

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
Faithfulness is the share of a text's claims that the retrieved contexts imply. The judge
extracts the claims of the prediction, then says for each one whether the contexts imply it. A
claim that contradicts a context, and a claim unrelated to the contexts, both count against (the
RAGAS definition that valor follows; DeepEval counts unrelated claims in favour). Score =
implied claims / claims.
"""

_KWARGS_DESCRIPTION = """
Computes Faithfulness with an LLM judge.
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
    faithfulness (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
Examples:

    >>> def judge(messages):  # stand-in for an LLM, answering by the task it is given
    ...     task = messages[-1]["content"]
    ...     if task.startswith("Extract every claim"):
    ...         if "Hello" in task:
    ...             return '{"claims": []}'
    ...         return '{"claims": ["Paris is the capital of France", "Paris has 50 million people"]}'
    ...     return ('{"verdicts": [{"verdict": "yes", "reason": "context_1 says so"}, '
    ...             '{"verdict": "no", "reason": "not in the contexts"}]}')
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/faithfulness", judge=judge)
    >>> results = metric.compute(predictions=["Paris, the capital of France, has 50 million people."],
    ...                          contexts=[["Paris is the capital of France."]])
    >>> print(results["faithfulness"])
    0.5

    >>> results = metric.compute(predictions=["Hello!", "Paris has 50 million people."],
    ...                          contexts=[["Paris is in France."], ["Paris is in France."]],
    ...                          use_aggregator=False, return_details=True)
    >>> print(results["faithfulness"], results["details"][0]["claims"])
    [1.0, 0.5] []
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Faithfulness(textgen_metrics.hf.JudgeMetric):
    metric_name = "faithfulness"
    columns = {"predictions": "text", "contexts": "list"}

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
