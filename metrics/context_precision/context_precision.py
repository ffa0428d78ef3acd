# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Context Precision (LLM-guided): a thin evaluate layer over textgen_metrics.context_precision."""

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
Context precision evaluates a retriever by the order of its contexts. The judge gives one
verdict per context: was it useful for arriving at the ground truth answer to the query? With
several references a context counts as useful if any reference finds it so. Score = the mean of
precision@k over the positions k of useful contexts (precision@k = useful among the first k / k);
0 when none is useful. Order matters: ["yes", "no", "no", "yes"] scores (1 + 0.5) / 2 = 0.75,
["no", "yes", "no", "yes"] scores 0.5. As valor (the same computation as RAGAS and DeepEval).
"""

_KWARGS_DESCRIPTION = """
Computes Context Precision with an LLM judge.
Args:
    queries (list of str): one per example.
    contexts (list of list of str): one per example.
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
    context_precision (float, or list): the score.
    judge_model (str), judge_usage (dict: requests, cached, prompt_tokens, completion_tokens),
    errors (list of {"index", "error"}), details (list, with return_details=True).
Examples:

    >>> def judge(messages):  # stand-in for an LLM: contexts mentioning Paris are useful
    ...     blocks = messages[-1]["content"].split("<<<DATA context_")[1:]
    ...     verdicts = ["yes" if "Paris" in b.split("<<<END")[0] else "no" for b in blocks]
    ...     return '{"verdicts": [%s]}' % ", ".join(
    ...         '{"verdict": "%s", "reason": "..."}' % v for v in verdicts)
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/context_precision", judge=judge)
    >>> contexts = [["Paris is the capital of France.", "Lyon is in France.",
    ...              "Berlin is in Germany.", "Paris has the Louvre."]]
    >>> results = metric.compute(queries=["What is the capital of France?"], contexts=contexts,
    ...                          references=["Paris"])
    >>> print(results["context_precision"])
    0.75

    >>> results = metric.compute(queries=["What is the capital of France?"],
    ...                          contexts=[[contexts[0][i] for i in (0, 3, 1, 2)]], references=["Paris"],
    ...                          return_details=True)
    >>> print(results["context_precision"], results["details"][0]["useful"])
    1.0 [True, True, False, False]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ContextPrecision(textgen_metrics.hf.JudgeMetric):
    metric_name = "context_precision"
    columns = {"queries": "text", "contexts": "list", "references": "text_or_list"}

    def _info(self):
        return self.metric_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            reference_urls=["https://striveworks.github.io/valor/text_generation/metrics/"],
        )
