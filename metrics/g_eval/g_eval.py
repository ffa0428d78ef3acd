# Copyright 2026 The textgen-metrics Authors.
# Licensed under the Apache License, Version 2.0.
"""G-Eval (LLM-guided, your own criteria): a thin evaluate layer over textgen_metrics.g_eval."""

import evaluate

import textgen_metrics.hf
import textgen_metrics.option_docs

_CITATION = """\
@inproceedings{liu-etal-2023-g,
    title = {{G}-Eval: {NLG} Evaluation using {GPT}-4 with Better Human Alignment},
    author = {Liu, Yang and Iter, Dan and Xu, Yichong and Wang, Shuohang and Xu, Ruochen and Zhu, Chenguang},
    booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
    year = {2023},
    pages = {2511--2522},
    url = {https://aclanthology.org/2023.emnlp-main.153},
}
"""

_DESCRIPTION = """\
G-Eval turns a rubric written in words into a score. You give the criteria ("Faithfulness: the
summary states only what the source says"); the judge writes evaluation steps for them once (or
you give them), then rates each prediction by the steps on an integer scale (default 1 to 5),
giving its reason first. Where the judge returns token log-probabilities, the score is G-Eval's
probability-weighted mean over the scale, sum(s * p(s)) / sum(p(s)); otherwise the integer. The
steps come back in the result, so a run can be repeated exactly by passing them in again.
"""

_EXAMPLES = """\
Returns:
    g_eval (float, or list): the score.
    judge_model (str), judge_mode (str), judge_usage (dict: requests, retries, cached,
    prompt_tokens, completion_tokens), errors (list of {"index", "error"}), details (list, with
    return_details=True), signature (str: the settings, the prompts' version, the judge, its mode).
    evaluation_steps (list of str), score_range: the steps and scale used.
Examples:

    >>> import json
    >>> def judge(messages, task):  # stand-in for an LLM, answering by the task id of each request
    ...     if task == "g_eval/steps":
    ...         return json.dumps({"steps": ["Read the source.", "Check each sentence of the summary against it."]})
    ...     summary = messages[-1]["content"].split("<<<DATA prediction")[1]
    ...     score = 5 if "closed schools on Monday" in summary else 2
    ...     return json.dumps({"reason": "Checked against the source.", "score": score})
    >>> import evaluate
    >>> metric = evaluate.load("./metrics/g_eval", judge=judge)
    >>> criteria = "Faithfulness: the summary states only what the source says."
    >>> results = metric.compute(predictions=["Snow closed schools on Monday.", "Schools will close all week."],
    ...                          sources=["Heavy snow closed schools on Monday."] * 2, criteria=criteria)
    >>> print(results["g_eval"], results["evaluation_steps"])
    3.5 ['Read the source.', 'Check each sentence of the summary against it.']

    >>> def judge_with_logprobs(messages):  # the score token's log-probabilities give a finer score
    ...     top = [{"token": "4", "logprob": -0.223}, {"token": "5", "logprob": -1.609}]
    ...     tokens = ['{"', 'reason', '":', ' "', 'Faithful', '",', ' "', 'score', '":', ' ']
    ...     return {"text": '{"reason": "Faithful", "score": 4}',
    ...             "logprobs": [{"token": t, "logprob": 0.0} for t in tokens]
    ...                         + [{"token": "4", "logprob": -0.223, "top_logprobs": top}, {"token": "}", "logprob": 0.0}]}
    >>> again = metric.compute(predictions=["Snow closed schools."], sources=["Snow closed schools."],
    ...                        criteria=criteria, evaluation_steps=results["evaluation_steps"],
    ...                        judge=judge_with_logprobs, return_details=True)
    >>> print(round(again["g_eval"], 4), again["details"][0]["reason"])
    4.2 Faithful
"""

_KWARGS_DESCRIPTION = """
Computes G-Eval with an LLM judge on your criteria.
""" + textgen_metrics.option_docs.arguments_text("g_eval") + _EXAMPLES


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GEval(textgen_metrics.hf.JudgeMetric):
    metric_name = "g_eval"
    space_options = {"criteria": "Coherence: the text is well structured and builds from sentence to sentence "
                                 "into a coherent whole."}
    reference_urls = ("https://arxiv.org/abs/2303.16634",)
