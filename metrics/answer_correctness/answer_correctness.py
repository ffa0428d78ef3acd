# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Answer Correctness (LLM-guided): a thin evaluate layer over textgen_metrics.answer_correctness."""

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
Answer correctness compares the statements of a predicted answer with those of a ground
truth answer. The judge extracts the statements of both, then says for each prediction statement
whether the ground truth supports it (true positive, else false positive) and for each ground truth
statement whether the prediction states it (else false negative). The score is the F1
tp / (tp + 0.5 * (fp + fn)), 0 when there is no true positive; with several references, the maximum
over references. As valor (adapted from RAGAS without its embedding similarity term).
"""

_KWARGS_DESCRIPTION = """
Computes Answer Correctness with an LLM judge.
Args:
    predictions (list of str): one per example.
    references (list of str or list of str): one per example.
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
    answer_correctness (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
Examples:

    >>> def judge(messages):  # stand-in for an LLM, answering by the task it is given
    ...     task = messages[-1]["content"]
    ...     if task.startswith("Break the text") and "<<<DATA prediction" in task:
    ...         return '{"statements": ["The Eiffel Tower is in Paris", "It is 330 m tall"]}'
    ...     if task.startswith("Break the text"):
    ...         return '{"statements": ["The Eiffel Tower is in Paris", "It was built in 1889"]}'
    ...     return ('{"prediction_verdicts": [{"verdict": "yes", "reason": "stated"}, '
    ...             '{"verdict": "no", "reason": "height not given"}], '
    ...             '"ground_truth_verdicts": [{"verdict": "yes", "reason": "stated"}, '
    ...             '{"verdict": "no", "reason": "year missing"}]}')
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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnswerCorrectness(textgen_metrics.hf.JudgeMetric):
    metric_name = "answer_correctness"
    columns = {"predictions": "text", "references": "text_or_list"}

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
