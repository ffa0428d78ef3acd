"""What every lexical and semantic result carries: a ``signature`` and, on request, intervals.

:func:`reported` decorates a metric function whose aggregate is the mean of per-example
scores (ROUGE, METEOR, BERTScore). The decorated function takes three more keyword arguments,
``confidence_level`` (None: no interval), ``n_resamples`` (1,000) and ``seed`` (12345), and
its result gets ``signature`` and, with a level, ``<key>_ci = [low, high]`` for every
per-example score: the percentile bootstrap interval of the mean (see
:mod:`textgen_metrics.significance`). The scores come from one call with
``use_aggregator=False``; the aggregate is their exact mean, as the metric's own.

The corpus metrics (BLEU, chrF, TER, Google BLEU) resample their sufficient statistics
instead and add their intervals themselves.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from .aggregation import mean
from .signature import bootstrap_fields, count_references, signature, with_fields
from .significance import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    CorpusStatistics,
    check_interval_options,
    corpus_interval,
    mean_interval,
)

__all__ = ["reported", "score_keys", "add_intervals", "corpus_result", "meteor_signature",
           "bertscore_signature"]

SignatureFn = Callable[[Mapping[str, Any], Mapping[str, Any]], str]

_INTERVAL_DOC = """

    Every result has ``signature``, the settings that change the score. ``confidence_level``
    (e.g. 0.95) adds ``<key>_ci = [low, high]`` for each score: the percentile bootstrap
    interval of its mean over ``n_resamples`` resamples of the examples (default 1,000), fixed
    by ``seed`` (default 12345)."""


def score_keys(result: Mapping[str, Any], n: int) -> list[str]:
    """The keys of ``result`` that hold per-example scores: lists of ``n`` numbers (or None)."""
    return [k for k, v in result.items()
            if isinstance(v, list) and len(v) == n
            and all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in v)]


def add_intervals(result: dict[str, Any], per_example: Mapping[str, list[Any]], keys: list[str],
                  confidence_level: float, n_resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Set ``result[f"{key}_ci"]`` to the bootstrap interval of the mean of
    ``per_example[key]`` for each key (scores that are None left out); returns ``result``."""
    for key in keys:
        values = [v for v in per_example[key] if v is not None]
        result[f"{key}_ci"] = (list(mean_interval(values, confidence_level, n_resamples, seed)) if values
                               else [None, None])
    return result


def corpus_result(out: dict[str, Any], key: str, stats: CorpusStatistics, confidence_level: float | None,
                  n_resamples: int, seed: int) -> dict[str, Any]:
    """A corpus metric's result completed: ``<key>_ci``, the bootstrap interval of the corpus
    score from ``stats`` (with a ``confidence_level``), and ``signature`` (``stats.sign``)."""
    fields: dict[str, Any] = {}
    if confidence_level is not None:
        out[f"{key}_ci"] = list(corpus_interval(stats, confidence_level, n_resamples, seed))
        fields = {"n_bootstrap": n_resamples, "seed": seed, "ci": confidence_level}
    if stats.sign is not None:
        out["signature"] = stats.sign(**fields)
    return out


_OWN = ("confidence_level", "n_resamples", "seed")


def reported(make_signature: SignatureFn) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Decorate a mean metric's function (arguments ``predictions``, ``references``,
    ``use_aggregator``) so that its result carries a signature and, on request, intervals.

    ``make_signature(arguments, result)`` gives the metric's signature from the call's arguments
    (defaults filled in) and its result; the number of references and the bootstrap settings
    are added to it here. A function that has its own ``confidence_level`` or ``seed``
    (ROUGE's ``bootstrap_samples`` intervals) still receives them when they are given; while
    its ``bootstrap_samples`` is on, its own intervals are the result's.
    """

    def decorate(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        sig = inspect.signature(fn)
        accepted = set(sig.parameters)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
            own = {k: kwargs[k] if k in accepted else kwargs.pop(k) for k in _OWN if k in kwargs}
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            confidence_level = own.get("confidence_level")
            if arguments.get("bootstrap_samples"):
                confidence_level = None  # the function's own intervals
            fields: dict[str, Any] = {}
            if confidence_level is None:
                result = fn(*bound.args, **bound.kwargs)
            else:
                n_resamples = own.get("n_resamples", DEFAULT_RESAMPLES)
                seed = own.get("seed", DEFAULT_SEED)
                check_interval_options(confidence_level, n_resamples, seed)
                bound.arguments["use_aggregator"] = False
                per_example = fn(*bound.args, **bound.kwargs)
                keys = score_keys(per_example, len(arguments["predictions"]))
                if arguments["use_aggregator"]:
                    result = {k: mean(v) if k in keys else v for k, v in per_example.items()}
                else:
                    result = dict(per_example)
                add_intervals(result, per_example, keys, confidence_level, n_resamples, seed)
                fields = bootstrap_fields(n_resamples, seed, ci=confidence_level)
            num_refs = count_references(arguments["references"])
            result["signature"] = with_fields(make_signature(arguments, result),
                                              nrefs="var" if num_refs == -1 else num_refs, **fields)
            return result

        params = list(sig.parameters.values())
        annotations = {"confidence_level": ("float | None", None), "n_resamples": ("int", DEFAULT_RESAMPLES),
                       "seed": ("int", DEFAULT_SEED)}
        extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
                 for name, (annotation, default) in annotations.items() if name not in accepted]
        at = next((i for i, p in enumerate(params) if p.kind == inspect.Parameter.VAR_KEYWORD), len(params))
        run.__signature__ = sig.replace(parameters=params[:at] + extra + params[at:])  # type: ignore[attr-defined]
        run.__doc__ = (fn.__doc__ or "").rstrip() + _INTERVAL_DOC
        return run

    return decorate


def meteor_signature(arguments: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """METEOR's signature: nltk's tokens, the three parameters, WordNet's version."""
    return signature("meteor", tok="treebank", alpha=arguments["alpha"], beta=arguments["beta"],
                     gamma=arguments["gamma"], wordnet="3.0")


def bertscore_signature(arguments: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """BERTScore's signature: bert_score's hash code (model, layer, idf, baseline, versions)."""
    return signature("bertscore", hashcode=result["hashcode"])
