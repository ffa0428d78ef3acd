"""The ten LLM-guided metrics as plain functions over lists of strings.

Each takes its columns as keyword arguments and the judge (see ``textgen_metrics.judges``), and
returns ``{<name>: score, "judge_model", "judge_mode", "judge_usage", "errors"}`` (and
``details`` with ``return_details=True``). Scores are the mean over the examples that got one
(``use_aggregator=True``) or per-example lists with ``None`` where the judge failed.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from .metrics import compute

__all__ = ["answer_correctness", "answer_relevance", "bias", "toxicity", "context_precision", "context_recall", "context_relevance", "faithfulness", "hallucination", "summary_coherence"]

_COMMON = """
        judge: a judge string (``"openai:<model>"``, ``"hf:<local model>"``), a judge object, or any
            function ``messages -> str`` (it may take ``task=`` too).
        use_aggregator: the mean over scored examples (True) or one score per example, None where
            the judge failed (False).
        return_details: add per-example ``details`` (extracted items, verdicts with reasons).
        on_error: ``"record"`` (a failed example gets None and an entry in ``errors``) or ``"raise"``.
        judge_options: options for the judge's constructor when ``judge`` is a string or function.
        progress: called with 1 as each example gets its result.
"""


def answer_correctness(*, predictions: Sequence[str], references: Sequence[Union[str, Sequence[str]]], judge: Any = None, use_aggregator: bool = True,
                       return_details: bool = False, on_error: str = "record",
                       judge_options: Optional[dict[str, Any]] = None,
                       progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """F1 of the prediction's statements against a ground truth's (valor, after RAGAS without the embedding
    term): a prediction statement the ground truth supports is a true positive, one it does not a false
    positive, a ground-truth statement the prediction misses a false negative; F1 = tp / (tp + (fp + fn)
    / 2), 0 without true positives. Several references: the best. Range 0 to 1, higher is better.
    Empty cases: a prediction without statements scores 0.

    Args:
        predictions: the answers to judge.
        references: one ground truth answer, or several, per example.
    """
    return compute("answer_correctness", predictions=predictions, references=references, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def answer_relevance(*, predictions: Sequence[str], queries: Sequence[str], judge: Any = None, use_aggregator: bool = True,
                     return_details: bool = False, on_error: str = "record",
                     judge_options: Optional[dict[str, Any]] = None,
                     progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """The share of the answer's statements that are relevant to the query (valor, after DeepEval). Filler
    and ambiguous fragments are statements too, so filler counts against relevance. Range 0 to 1,
    higher is better. Empty cases: an answer without statements scores 0.

    Args:
        predictions: the answers to judge.
        queries: the question each answer responds to.
    """
    return compute("answer_relevance", predictions=predictions, queries=queries, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def bias(*, predictions: Sequence[str], judge: Any = None, use_aggregator: bool = True,
         return_details: bool = False, on_error: str = "record",
         judge_options: Optional[dict[str, Any]] = None,
         progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """The share of the text's opinions that are biased (gender, political, racial or ethnic, geographical;
    valor, after DeepEval). Range 0 to 1, lower is better. Empty cases: a text without opinions scores 0.

    Args:
        predictions: the texts to judge.
    """
    return compute("bias", predictions=predictions, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def toxicity(*, predictions: Sequence[str], judge: Any = None, use_aggregator: bool = True,
             return_details: bool = False, on_error: str = "record",
             judge_options: Optional[dict[str, Any]] = None,
             progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """The share of the text's opinions that are toxic (personal attacks, mockery, hate, dismissive
    statements, threats; valor, after DeepEval). Range 0 to 1, lower is better. Empty cases: a text
    without opinions scores 0.

    Args:
        predictions: the texts to judge.
    """
    return compute("toxicity", predictions=predictions, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def context_precision(*, queries: Sequence[str], contexts: Sequence[Sequence[str]], references: Sequence[Union[str, Sequence[str]]], judge: Any = None, use_aggregator: bool = True,
                      return_details: bool = False, on_error: str = "record",
                      judge_options: Optional[dict[str, Any]] = None,
                      progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """Rank-aware precision of the retrieved contexts (valor, as RAGAS and DeepEval): the mean of
    precision@k over the ranks k of the contexts that were useful for the ground truth (useful for any
    reference, with several). Range 0 to 1, higher is better. Empty cases: no contexts, or none useful,
    scores 0.

    Args:
        queries: the questions.
        contexts: the retrieved contexts of each example, in rank order.
        references: one ground truth answer, or several, per example.
    """
    return compute("context_precision", queries=queries, contexts=contexts, references=references, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def context_recall(*, contexts: Sequence[Sequence[str]], references: Sequence[Union[str, Sequence[str]]], judge: Any = None, use_aggregator: bool = True,
                   return_details: bool = False, on_error: str = "record",
                   judge_options: Optional[dict[str, Any]] = None,
                   progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """The share of the ground truth's statements that can be attributed to the retrieved contexts (valor,
    after RAGAS). Several references: the best. Range 0 to 1, higher is better. Empty cases: no contexts
    scores 0 (no judge call); a ground truth without statements scores 1 (valor divides by zero there).

    Args:
        contexts: the retrieved contexts of each example.
        references: one ground truth answer, or several, per example.
    """
    return compute("context_recall", contexts=contexts, references=references, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def context_relevance(*, queries: Sequence[str], contexts: Sequence[Sequence[str]], judge: Any = None, use_aggregator: bool = True,
                      return_details: bool = False, on_error: str = "record",
                      judge_options: Optional[dict[str, Any]] = None,
                      progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """The share of the retrieved contexts that are relevant to the query (valor, after DeepEval). Range 0
    to 1, higher is better. Empty cases: no contexts scores 0.

    Args:
        queries: the questions.
        contexts: the retrieved contexts of each example.
    """
    return compute("context_relevance", queries=queries, contexts=contexts, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def faithfulness(*, predictions: Sequence[str], contexts: Sequence[Sequence[str]], judge: Any = None, use_aggregator: bool = True,
                 return_details: bool = False, on_error: str = "record",
                 judge_options: Optional[dict[str, Any]] = None,
                 progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """The share of the text's claims that the contexts imply (valor, with RAGAS's definition: a claim
    that contradicts the contexts and one unrelated to them both count against). Range 0 to 1, higher
    is better. Empty cases: no contexts scores 0 (no judge call); a text without claims scores 1.

    Args:
        predictions: the answers to judge.
        contexts: the retrieved contexts of each example.
    """
    return compute("faithfulness", predictions=predictions, contexts=contexts, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def hallucination(*, predictions: Sequence[str], contexts: Sequence[Sequence[str]], judge: Any = None, use_aggregator: bool = True,
                  return_details: bool = False, on_error: str = "record",
                  judge_options: Optional[dict[str, Any]] = None,
                  progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """The share of the contexts that the text contradicts (valor, after DeepEval); speculative language is
    not a contradiction. Range 0 to 1, lower is better. Empty cases: an example without contexts is a
    ValueError.

    Args:
        predictions: the answers to judge.
        contexts: the retrieved contexts of each example (at least one).
    """
    return compute("hallucination", predictions=predictions, contexts=contexts, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


def summary_coherence(*, predictions: Sequence[str], sources: Sequence[str], judge: Any = None, use_aggregator: bool = True,
                      return_details: bool = False, on_error: str = "record",
                      judge_options: Optional[dict[str, Any]] = None,
                      progress: Optional[Callable[[int], Any]] = None) -> dict[str, Any]:
    """Coherence of a summary given its source on 1 to 5 (valor, after G-Eval: criteria and evaluation
    steps); with token log-probabilities from the judge, G-Eval's probability-weighted mean of the
    scores, otherwise the integer the judge gives. Higher is better.

    Args:
        predictions: the summaries to judge.
        sources: the text each summary summarises.
    """
    return compute("summary_coherence", predictions=predictions, sources=sources, judge=judge, use_aggregator=use_aggregator,
                   return_details=return_details, on_error=on_error, judge_options=judge_options,
                   progress=progress)


for _f in (answer_correctness, answer_relevance, bias, toxicity, context_precision, context_recall, context_relevance, faithfulness, hallucination, summary_coherence):
    _f.__doc__ = (_f.__doc__ or "").rstrip() + "\n" + _COMMON
