"""The LLM-guided metrics as plain functions over lists of strings: valor's ten, G-Eval with the
user's criteria, and pairwise preference.

Each takes its columns as keyword arguments and the judge (see ``textgen_metrics.judges``), and
returns ``{<name>: score, "judge_model", "judge_mode", "judge_usage", "errors"}`` (and
``details`` with ``return_details=True``). Scores are the mean over the examples that got one
(``use_aggregator=True``) or per-example lists with ``None`` where the judge failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import geval as _g_eval_metric  # noqa: F401  (registers the metric)
from . import pairwise as _pairwise_metric  # noqa: F401  (registers the metric)
from .metrics import compute

__all__ = ["answer_correctness", "answer_relevance", "bias", "toxicity", "context_precision", "context_recall",
           "context_relevance", "faithfulness", "hallucination", "summary_coherence", "g_eval",
           "pairwise_preference"]

_COMMON = """
        judge: a judge string (``"openai:<model>"``, ``"hf:<local model>"``), a judge object, or any
            function ``messages -> str`` (it may take ``task=`` too).
        use_aggregator: the mean over scored examples (True) or one score per example, None where
            the judge failed (False).
        return_details: add per-example ``details`` (extracted items, verdicts with reasons).
        on_error: ``"record"`` (a failed example gets None and an entry in ``errors``) or ``"raise"``.
        judge_options: options for the judge's constructor when ``judge`` is a string or function.
        progress: called with 1 as each example gets its result.
        confidence_level, n_resamples, seed: with ``confidence_level`` (e.g. 0.95), ``<name>_ci``
            is the seeded bootstrap interval of the mean over the examples that got a score
            (the others left out; their number is ``len(errors)``); no judge call is repeated.
"""


def answer_correctness(*, predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                       judge: Any = None, use_aggregator: bool = True,
                       return_details: bool = False, on_error: str = "record",
                       judge_options: dict[str, Any] | None = None,
                       progress: Callable[[int], Any] | None = None,
                       confidence_level: float | None = None, n_resamples: int = 1000,
                       seed: int = 12345) -> dict[str, Any]:
    """F1 of the prediction's statements against a ground truth's (valor, after RAGAS without the embedding
    term): a prediction statement the ground truth supports is a true positive, one it does not a false
    positive, a ground-truth statement the prediction misses a false negative; F1 = tp / (tp + (fp + fn)
    / 2), 0 without true positives. Several references: the best. Range 0 to 1, higher is better.
    Empty cases: a prediction without statements scores 0.

    Args:
        predictions: the answers to judge.
        references: one ground truth answer, or several, per example.
    """
    return compute("answer_correctness", **locals())


def answer_relevance(*, predictions: Sequence[str], queries: Sequence[str],
                     judge: Any = None, use_aggregator: bool = True,
                     return_details: bool = False, on_error: str = "record",
                     judge_options: dict[str, Any] | None = None,
                     progress: Callable[[int], Any] | None = None,
                     confidence_level: float | None = None, n_resamples: int = 1000,
                     seed: int = 12345) -> dict[str, Any]:
    """The share of the answer's statements that are relevant to the query (valor, after DeepEval). Filler
    and ambiguous fragments are statements too, so filler counts against relevance. Range 0 to 1,
    higher is better. Empty cases: an answer without statements scores 0.

    Args:
        predictions: the answers to judge.
        queries: the question each answer responds to.
    """
    return compute("answer_relevance", **locals())


def bias(*, predictions: Sequence[str], judge: Any = None, use_aggregator: bool = True,
         return_details: bool = False, on_error: str = "record",
         judge_options: dict[str, Any] | None = None,
         progress: Callable[[int], Any] | None = None,
         confidence_level: float | None = None, n_resamples: int = 1000,
         seed: int = 12345) -> dict[str, Any]:
    """The share of the text's opinions that are biased (gender, political, racial or ethnic, geographical;
    valor, after DeepEval). Range 0 to 1, lower is better. Empty cases: a text without opinions scores 0.

    Args:
        predictions: the texts to judge.
    """
    return compute("bias", **locals())


def toxicity(*, predictions: Sequence[str], judge: Any = None, use_aggregator: bool = True,
             return_details: bool = False, on_error: str = "record",
             judge_options: dict[str, Any] | None = None,
             progress: Callable[[int], Any] | None = None,
             confidence_level: float | None = None, n_resamples: int = 1000,
             seed: int = 12345) -> dict[str, Any]:
    """The share of the text's opinions that are toxic (personal attacks, mockery, hate, dismissive
    statements, threats; valor, after DeepEval). Range 0 to 1, lower is better. Empty cases: a text
    without opinions scores 0.

    Args:
        predictions: the texts to judge.
    """
    return compute("toxicity", **locals())


def context_precision(*, queries: Sequence[str], contexts: Sequence[Sequence[str]],
                      references: Sequence[str | Sequence[str]],
                      judge: Any = None, use_aggregator: bool = True,
                      return_details: bool = False, on_error: str = "record",
                      judge_options: dict[str, Any] | None = None,
                      progress: Callable[[int], Any] | None = None,
                      confidence_level: float | None = None, n_resamples: int = 1000,
                      seed: int = 12345) -> dict[str, Any]:
    """Rank-aware precision of the retrieved contexts (valor, as RAGAS and DeepEval): the mean of
    precision@k over the ranks k of the contexts that were useful for the ground truth (useful for any
    reference, with several). Range 0 to 1, higher is better. Empty cases: no contexts, or none useful,
    scores 0.

    Args:
        queries: the questions.
        contexts: the retrieved contexts of each example, in rank order.
        references: one ground truth answer, or several, per example.
    """
    return compute("context_precision", **locals())


def context_recall(*, contexts: Sequence[Sequence[str]], references: Sequence[str | Sequence[str]],
                   judge: Any = None, use_aggregator: bool = True,
                   return_details: bool = False, on_error: str = "record",
                   judge_options: dict[str, Any] | None = None,
                   progress: Callable[[int], Any] | None = None,
                   confidence_level: float | None = None, n_resamples: int = 1000,
                   seed: int = 12345) -> dict[str, Any]:
    """The share of the ground truth's statements that can be attributed to the retrieved contexts (valor,
    after RAGAS). Several references: the best. Range 0 to 1, higher is better. Empty cases: no contexts
    scores 0 (no judge call); a ground truth without statements scores 1 (valor divides by zero there).

    Args:
        contexts: the retrieved contexts of each example.
        references: one ground truth answer, or several, per example.
    """
    return compute("context_recall", **locals())


def context_relevance(*, queries: Sequence[str], contexts: Sequence[Sequence[str]],
                      judge: Any = None, use_aggregator: bool = True,
                      return_details: bool = False, on_error: str = "record",
                      judge_options: dict[str, Any] | None = None,
                      progress: Callable[[int], Any] | None = None,
                      confidence_level: float | None = None, n_resamples: int = 1000,
                      seed: int = 12345) -> dict[str, Any]:
    """The share of the retrieved contexts that are relevant to the query (valor, after DeepEval). Range 0
    to 1, higher is better. Empty cases: no contexts scores 0.

    Args:
        queries: the questions.
        contexts: the retrieved contexts of each example.
    """
    return compute("context_relevance", **locals())


def faithfulness(*, predictions: Sequence[str], contexts: Sequence[Sequence[str]],
                 judge: Any = None, use_aggregator: bool = True,
                 return_details: bool = False, on_error: str = "record",
                 judge_options: dict[str, Any] | None = None,
                 progress: Callable[[int], Any] | None = None,
                 confidence_level: float | None = None, n_resamples: int = 1000,
                 seed: int = 12345) -> dict[str, Any]:
    """The share of the text's claims that the contexts imply (valor, with RAGAS's definition: a claim
    that contradicts the contexts and one unrelated to them both count against). Range 0 to 1, higher
    is better. Empty cases: no contexts scores 0 (no judge call); a text without claims scores 1.

    Args:
        predictions: the answers to judge.
        contexts: the retrieved contexts of each example.
    """
    return compute("faithfulness", **locals())


def hallucination(*, predictions: Sequence[str], contexts: Sequence[Sequence[str]],
                  judge: Any = None, use_aggregator: bool = True,
                  return_details: bool = False, on_error: str = "record",
                  judge_options: dict[str, Any] | None = None,
                  progress: Callable[[int], Any] | None = None,
                  confidence_level: float | None = None, n_resamples: int = 1000,
                  seed: int = 12345) -> dict[str, Any]:
    """The share of the contexts that the text contradicts (valor, after DeepEval); speculative language is
    not a contradiction. Range 0 to 1, lower is better. Empty cases: an example without contexts is a
    ValueError.

    Args:
        predictions: the answers to judge.
        contexts: the retrieved contexts of each example (at least one).
    """
    return compute("hallucination", **locals())


def summary_coherence(*, predictions: Sequence[str], sources: Sequence[str],
                      judge: Any = None, use_aggregator: bool = True,
                      return_details: bool = False, on_error: str = "record",
                      judge_options: dict[str, Any] | None = None,
                      progress: Callable[[int], Any] | None = None,
                      confidence_level: float | None = None, n_resamples: int = 1000,
                      seed: int = 12345) -> dict[str, Any]:
    """Coherence of a summary given its source on 1 to 5 (valor, after G-Eval: criteria and evaluation
    steps); with token log-probabilities from the judge, G-Eval's probability-weighted mean of the
    scores, otherwise the integer the judge gives. Higher is better.

    Args:
        predictions: the summaries to judge.
        sources: the text each summary summarises.
    """
    return compute("summary_coherence", **locals())


def g_eval(*, predictions: Sequence[str], criteria: str | None = None, evaluation_steps: Sequence[str] | None = None,
           score_range: tuple[int, int] = (1, 5), sources: Sequence[str] | None = None,
           references: Sequence[str] | None = None, queries: Sequence[str] | None = None, judge: Any = None,
           use_aggregator: bool = True, return_details: bool = False, on_error: str = "record",
           judge_options: dict[str, Any] | None = None, progress: Callable[[int], Any] | None = None,
           confidence_level: float | None = None, n_resamples: int = 1000,
           seed: int | None = 12345) -> dict[str, Any]:
    """G-Eval with your own criteria (Liu et al. 2023): the judge writes evaluation steps for the
    criteria once (or takes ``evaluation_steps``), then scores each prediction by them, a reason
    first. Score: an integer in ``score_range`` (default 1 to 5, higher is better), or, where the
    judge gives token log-probabilities, G-Eval's probability-weighted mean of the score values.
    The result carries ``evaluation_steps`` (pass them back to repeat a run exactly) and
    ``score_range``. Empty cases: an empty prediction is scored like any other text.

    Args:
        predictions: the texts to rate.
        criteria: what a good text does, in words (e.g. "Coherence: the text is well structured
            and builds from sentence to sentence into a coherent whole"). Required: without it,
            a ValueError says how to give it.
        evaluation_steps: the steps to follow; None: the judge writes them (one request per run).
        score_range: the integer scale (low, high), 0 <= low < high.
        sources, references, queries: optional texts the criteria need (one per example each):
            the source a text was written from, a reference text, the query it answers.
        confidence_level, n_resamples, seed: ``confidence_level`` (e.g. 0.95) adds ``g_eval_ci``,
            a seeded percentile bootstrap interval of the mean over examples.
    """
    return compute("g_eval", **locals())


def pairwise_preference(*, queries: Sequence[str], predictions: Sequence[str], baselines: Sequence[str],
                        references: Sequence[str] | None = None, criteria: str | None = None,
                        judge: Any = None, use_aggregator: bool = True, return_details: bool = False,
                        on_error: str = "record", judge_options: dict[str, Any] | None = None,
                        progress: Callable[[int], Any] | None = None, confidence_level: float | None = 0.95,
                        n_resamples: int = 1000, seed: int | None = 12345) -> dict[str, Any]:
    """Is each prediction better than its baseline? (MT-Bench's pairwise judge.) Each pair is
    judged in both orders; a verdict that changes with the order is a tie, counted in
    ``position_inconsistent``. ``win_rate``: the share of wins, ties counting half (0 to 1,
    higher means the predictions are preferred); also ``wins``, ``losses``, ``ties``,
    ``position_inconsistent``, per-example ``verdicts`` ("win", "loss", "tie", None where the
    judge failed) and ``win_rate_ci`` (seeded percentile bootstrap over examples). Empty cases:
    a prediction identical to its baseline is a tie, with no judge call.

    Args:
        queries: the question or instruction each pair answers.
        predictions: the outputs of the system under test.
        baselines: the outputs of the system it is compared with.
        references: an optional reference answer per example (correctness is judged against it).
        criteria: what makes a response better, in words; default MT-Bench's (helpfulness,
            relevance, accuracy, depth, creativity, level of detail).
        confidence_level, n_resamples, seed: the interval ``win_rate_ci`` (None: left out).
    """
    return compute("pairwise_preference", **locals())


for _name in __all__:  # every metric function documents the arguments they share
    _f = globals()[_name]
    _f.__doc__ = (_f.__doc__ or "").rstrip() + "\n" + _COMMON
