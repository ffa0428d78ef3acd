# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Context Precision (LLM-guided): a thin evaluate layer over textgen_metrics.context_precision."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Context precision evaluates a retriever by the order of its contexts. The judge gives one
verdict per context: was it useful for arriving at the ground truth answer to the query? With
several references a context counts as useful if any reference finds it so. Score = the mean of
precision@k over the positions k of useful contexts (precision@k = useful among the first k / k);
0 when none is useful. Order matters: ["yes", "no", "no", "yes"] scores (1 + 0.5) / 2 = 0.75,
["no", "yes", "no", "yes"] scores 0.5. As valor (the same computation as RAGAS and DeepEval).
"""

_EXAMPLES = """\
Returns:
    context_precision (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM: contexts that mention Paris are useful
    ...     contexts = [part.split("<<<END")[0] for part in messages[-1]["content"].split("<<<DATA context_")[1:]]
    ...     return json.dumps({"verdicts": [
    ...         {"index": i, "reason": "...", "verdict": "yes" if "Paris" in c else "no"}
    ...         for i, c in enumerate(contexts, 1)]})
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

_KWARGS_DESCRIPTION = """
Computes Context Precision with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("context_precision") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ContextPrecision(textgen_metrics.hf.JudgeMetric):
    metric_name = "context_precision"
