"""Paired comparison of two systems on the same examples: ``textgen_metrics.compare``.

For any metric of the registry: each system's score, the difference B - A with its bootstrap
interval, and the p-value of a paired test (:mod:`textgen_metrics.significance`), from the
statistics of each system (:meth:`Metric.statistics <textgen_metrics.metric.Metric.statistics>`):

- corpus metrics (BLEU, Google BLEU, chrF, TER) resample their per-example sufficient
  statistics (:meth:`~textgen_metrics.metric.Metric.resampling`); for BLEU, chrF and TER the
  p-values and the systems' intervals are sacrebleu's (``sacrebleu -i A.txt B.txt --paired-bs``
  / ``--paired-ar``) for the same seed and count;
- every other metric (ROUGE, METEOR, BERTScore, the LLM-guided ones) resamples its per-example
  scores (its declared keys), computed once per system. Examples that either system
  left without a score (a judge's failure) are left out of the test and counted. With a judge
  that has a cache (``judge_options={"cache": True}`` or a judge object with ``cache=``), the
  answers of earlier runs of both systems are reused: nothing is asked twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .registry import get_metric
from .significance import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TRIALS,
    CorpusStatistics,
    check_interval_options,
    paired_test,
)

__all__ = ["compare", "METHODS", "describe_test", "describe_interval", "disagreement"]

METHODS = ("bootstrap", "randomization")
_TEST = {"bootstrap": "bs", "randomization": "ar"}


def compare(metric: str, predictions_a: Sequence[str], predictions_b: Sequence[str],
            references: Sequence[str | Sequence[str]] | None = None, *, method: str = "bootstrap",
            n_resamples: int | None = None, seed: int = DEFAULT_SEED, confidence_level: float = DEFAULT_CONFIDENCE,
            **inputs_and_options: Any) -> dict[str, Any]:
    """Compare system B with system A (the baseline) on ``metric`` by a paired test.

    ``predictions_a`` and ``predictions_b`` are the two systems' outputs for the same examples;
    ``references`` and the metric's other inputs (``queries``, ``contexts``, ``sources``) are
    shared and go with the metric's options (``tokenizer``, ``judge``, ...) in the keywords.
    ``method``: ``"bootstrap"`` (paired bootstrap resampling, ``n_resamples`` default 1,000)
    or ``"randomization"`` (paired approximate randomization, ``n_resamples`` trials, default
    10,000; its intervals come from a 1,000-resample paired bootstrap). ``seed`` fixes every
    draw (sacrebleu's default, 12345).

    Returns ``{"metric", "method", "n_resamples", "seed", "confidence_level", "examples",
    "signature", "scores"}`` where ``scores`` maps each score name (``bleu``; ``score`` for chrF
    and TER; ``rouge1``...; ``f1``...) to ``{"a", "b", "a_ci", "b_ci", "difference",
    "difference_ci", "p_value", "compared", "unscored"}``: the systems' scores, their intervals,
    B - A and its interval, the p-value (small: the difference is unlikely to be chance), the
    number of examples compared and of those left out for lack of a score. For BLEU, chrF and
    TER the p-value follows sacrebleu to the letter, which gives two systems with identical
    outputs p = 1/(n+1); for the other metrics a tie counts, and identical systems get p = 1.
    """
    if method not in METHODS:
        raise ValueError(f"method: {method!r} is not one of {list(METHODS)}")
    if n_resamples is None:
        n_resamples = DEFAULT_RESAMPLES if method == "bootstrap" else DEFAULT_TRIALS
    check_interval_options(confidence_level, n_resamples, seed)
    if "use_aggregator" in inputs_and_options:
        raise ValueError("use_aggregator: compare scores each example itself; leave it out")
    spec = get_metric(metric)
    shared = dict(inputs_and_options)
    if references is not None:
        shared["references"] = references
    inputs = {c: shared.pop(c) for c in (*spec.columns, *spec.optional_columns) if c != "predictions" and c in shared}
    missing = [c for c in spec.columns if c != "predictions" and c not in inputs]
    if missing:
        raise ValueError(f"{missing[0]}: {metric} needs {', '.join(spec.columns)}; give {missing[0]}=...")
    if len(predictions_a) != len(predictions_b):
        raise ValueError(f"predictions_b: {len(predictions_b)} examples, but predictions_a has "
                         f"{len(predictions_a)}; a paired test needs the same examples")
    test = (_TEST[method], n_resamples)
    n_bootstrap = DEFAULT_RESAMPLES if method == "randomization" else None
    out: dict[str, Any] = {"metric": metric, "method": method, "n_resamples": n_resamples, "seed": seed,
                           "confidence_level": confidence_level, "examples": len(predictions_a)}
    scorer = spec(**shared)
    stats_a = scorer.statistics({"predictions": predictions_a, **inputs})
    stats_b = scorer.statistics({"predictions": predictions_b, **inputs})
    signature = scorer.signature(scorer.nrefs(stats_a), n_bootstrap=n_bootstrap, seed=seed, test=test,
                                 ci=confidence_level)
    if spec.corpus:
        result = paired_test(scorer.resampling(stats_a), scorer.resampling(stats_b), method, n_resamples, seed,
                             confidence_level).as_dict()
        result.update(compared=len(stats_a), unscored=0)
        out["scores"] = {scorer.main_key: result}
        out["signature"] = signature
        return out
    result_a, result_b = scorer.score(stats_a), scorer.score(stats_b)
    n = len(predictions_a)
    scores = {}
    for key in scorer.keys():
        pairs = [(x, y) for x, y in zip(result_a.per_example[key], result_b.per_example[key], strict=True)
                 if x is not None and y is not None]
        entry: dict[str, Any] = {"compared": len(pairs), "unscored": n - len(pairs)}
        if pairs:
            sa = CorpusStatistics.of_means([x for x, _ in pairs])
            sb = CorpusStatistics.of_means([y for _, y in pairs])
            entry = {**paired_test(sa, sb, method, n_resamples, seed, confidence_level).as_dict(), **entry}
        scores[key] = entry
    out["scores"] = scores
    if result_a.signature is not None:
        out["signature"] = signature
    return out


# -- what a comparison's figures are, in words (the command line prints them) ----------------------
def describe_test(result: Mapping[str, Any]) -> str:
    """Which test gave the p-values of a :func:`compare` result, and how, in one sentence."""
    n = result["n_resamples"]
    if result["method"] == "randomization":
        return (f"p-value: paired approximate randomization (Riezler and Maxwell 2005; sacrebleu's --paired-ar), "
                f"{n} trials: the share of trials, each swapping the two systems' outputs on a random half of "
                f"the examples, whose |B - A| exceeds the observed |B - A|")
    return (f"p-value: paired bootstrap resampling (Koehn 2004; sacrebleu's --paired-bs), {n} resamples: the "
            f"share of resamples of the examples whose |B - A|, shifted to mean 0, exceeds the observed |B - A|")


def describe_interval(result: Mapping[str, Any]) -> str:
    """What the interval of B - A of a :func:`compare` result is, in one sentence."""
    n = result["n_resamples"] if result["method"] == "bootstrap" else DEFAULT_RESAMPLES
    level = f"{result['confidence_level']:.0%}"
    if get_metric(result["metric"]).corpus:
        rule = "the mean of the resampled B - A plus and minus half the spread of their percentiles (sacrebleu's rule)"
    else:
        rule = "the percentiles of the resampled B - A"
    return f"{level} CI of B - A ({result['metric']}): a paired bootstrap of {n} resamples, {rule}"


def disagreement(result: Mapping[str, Any], key: str) -> str | None:
    """A one-line note when the p-value and the interval of B - A of score ``key`` seem to
    disagree (p below ``1 - confidence_level`` while the interval holds 0, or the reverse),
    saying why both can hold; None when they agree.

    The paired bootstrap p-value (Koehn's, as sacrebleu) counts the resamples whose absolute
    difference, shifted to mean 0, exceeds the observed one: a test of the difference's size
    that acts one-sided (about 1.64 standard errors at 0.05), where the interval is two-sided
    (about 1.96), and it is centred on the observed difference where the interval is centred on
    the resamples. Approximate randomization's p-value comes from another procedure altogether
    (swapping outputs under the null of no difference) than the interval (a bootstrap).
    """
    s = result["scores"][key]
    if "p_value" not in s:
        return None
    alpha = 1 - result["confidence_level"]
    low, high = s["difference_ci"]
    holds_zero = low <= 0 <= high
    significant = s["p_value"] < alpha
    if significant != holds_zero:
        return None
    level = f"{result['confidence_level']:.0%}"
    p = f"{s['p_value']:.4g}"
    if significant:
        what = f"p = {p} < {alpha:.2g} while the {level} interval of B - A holds 0"
    else:
        what = f"p = {p} >= {alpha:.2g} while the {level} interval of B - A leaves 0 out"
    if result["method"] == "randomization":
        why = ("the p-value comes from approximate randomization (swapping the systems' outputs on random halves of "
               "the examples, a test of 'no difference') and the interval from a separate paired bootstrap: two "
               "procedures near their threshold can fall on either side")
    elif significant:
        why = ("the bootstrap p-value weighs the observed |B - A| against the resampled |B - A| shifted to mean 0, "
               "which acts as a one-sided test (about 1.64 standard errors at 0.05), while the interval is "
               "two-sided (about 1.96): a difference between the two passes the test but not the interval")
    else:
        why = ("the interval describes the resampled B - A around their own mean while the bootstrap p-value "
               "weighs the observed |B - A| against the resampled |B - A| shifted to mean 0: on a skewed or "
               "shifted resampling distribution (few examples; a corpus score is not a mean of its examples) "
               "one crosses its threshold and the other does not")
    return f"note: {result['metric']} {key}: {what}; both can hold: {why}. Read it as weak evidence either way."
