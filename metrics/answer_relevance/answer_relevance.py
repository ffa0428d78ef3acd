# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Answer Relevance (LLM-guided): a thin evaluate layer over textgen_metrics.answer_relevance."""

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
Answer relevance is the share of an answer's statements that are relevant to the query.
The judge extracts the statements of the answer, then gives one verdict per statement: relevant
to the query or not. Score = relevant statements / statements, 0 when there are none. As valor
(following DeepEval's two-step strategy).
"""

_KWARGS_DESCRIPTION = """
Computes Answer Relevance with an LLM judge.
Args:
    predictions (list of str): one per example.
    queries (list of str): one per example.
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
    answer_relevance (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
Examples:

    >>> def judge(messages):  # stand-in for an LLM, answering by the task it is given
    ...     task = messages[-1]["content"]
    ...     if task.startswith("Break the text"):
    ...         return '{"statements": ["Paris is the capital of France", "I like cheese"]}'
    ...     return ('{"verdicts": [{"verdict": "yes", "reason": "answers the query"}, '
    ...             '{"verdict": "no", "reason": "off topic"}]}')
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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnswerRelevance(textgen_metrics.hf.JudgeMetric):
    metric_name = "answer_relevance"
    columns = {"predictions": "text", "queries": "text"}

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
