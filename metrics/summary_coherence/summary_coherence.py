# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""Summary Coherence (LLM-guided): a thin evaluate layer over textgen_metrics.summary_coherence."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = textgen_metrics.hf.VALOR_CITATION

_DESCRIPTION = """\
Summary coherence rates a summary of a source text from 1 to 5: is it well structured
and organised, does it build a coherent body of information and hit the key points of the source?
The judge answers with an integer. Where the judge returns token log-probabilities (OpenAI-
compatible servers do when asked), the score is G-Eval's probability-weighted mean over 1..5,
sum(i * p(i)) / sum(p(i)), a finer grained value; otherwise the integer. As valor (its instruction
follows appendix A of the G-Eval paper).
"""

_EXAMPLES = """\
Returns:
    summary_coherence (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
Examples:

    >>> def judge(messages):  # stand-in for an LLM, with log-probabilities for the score token
    ...     top = [{"token": "4", "logprob": -0.223}, {"token": "5", "logprob": -1.609}]
    ...     tokens = ['{"', 'reason', '":', ' "', 'Clear', '",', ' "', 'score', '":', ' ']
    ...     return {"text": '{"reason": "Clear", "score": 4}',
    ...             "logprobs": [{"token": t, "logprob": 0.0} for t in tokens]
    ...                         + [{"token": "4", "logprob": -0.223, "top_logprobs": top}, {"token": "}", "logprob": 0.0}]}
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/summary_coherence", judge=judge)
    >>> results = metric.compute(predictions=["A storm closed schools on Monday."],
    ...                          sources=["Heavy snow hit the region on Monday, and all schools closed."])
    >>> print(round(results["summary_coherence"], 4))
    4.2

    >>> results = metric.compute(predictions=["Schools closed."], sources=["Snow closed schools."],
    ...                          judge=lambda messages: '{"reason": "Short but clear", "score": 3}',
    ...                          use_aggregator=False)
    >>> print(results["summary_coherence"])
    [3.0]
"""

_KWARGS_DESCRIPTION = """
Computes Summary Coherence with an LLM judge.
""" + textgen_metrics.option_docs.arguments_text("summary_coherence") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SummaryCoherence(textgen_metrics.hf.JudgeMetric):
    metric_name = "summary_coherence"
