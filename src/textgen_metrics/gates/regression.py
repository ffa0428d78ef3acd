"""``regression`` and ``assert_no_regression``: did the candidate get worse than the baseline?

docs/gating.md. Paired per item: the same inputs, the baseline's and the candidate's
predictions, ``delta = candidate - baseline`` signed so that negative is worse (a lower-is-better
metric's difference is negated). Per metric (and key): the item means over ``repeats`` (repeat
``r`` of both sides asked with ``judge.repeated(r)``), the differences of the items both sides
scored, their mean, its paired bootstrap interval (the bootstrap over items of the mean
difference) and the one-sided paired sign-flip permutation p-value of a drop below ``-margin``;
with several metrics or keys the p-values are Holm-adjusted. ``regressed`` when the interval lies
below ``-margin`` and the adjusted p-value is below ``1 - confidence_level``; ``not_regressed``
when the interval lies above ``-margin``; ``inconclusive`` otherwise. Unlike
lm-evaluation-harness's unpaired z-test, the pairing is kept.

``mde`` is the smallest mean drop found with 80% power at the paired differences' spread
(:func:`.stats.mde`); ``plan=True`` gives it before any judge call: from the metric's own
scores where the metric needs no judge (they cost nothing), else from ``sd`` (default: the
width of the metric's score range, the largest spread a difference of two of its scores can
have: the safe side).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from ..run import resolve_judge
from ..significance import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TRIALS,
    check_interval_options,
    percentile_interval,
)
from ..stats import gates as S
from .scoring import make_target

__all__ = ["regression", "assert_no_regression", "REGRESSION_VERDICTS"]

REGRESSION_VERDICTS = ("regressed", "not_regressed", "inconclusive")


def _names(metrics: Any) -> list[Any]:
    if isinstance(metrics, str):
        names: list[Any] = [m.strip() for m in metrics.split(",") if m.strip()]
    elif isinstance(metrics, Sequence):
        names = list(metrics)
    else:
        names = [metrics]
    if not names:
        raise ValueError("metrics: name at least one metric")
    return names


def _pairs(metrics: list[Any], keys: Any) -> list[tuple[Any, str | None]]:
    """(metric, key) pairs: ``keys`` None (each metric's main key), a list, or {metric: [keys]}."""
    if keys is None:
        return [(m, None) for m in metrics]
    if isinstance(keys, Mapping):
        return [(m, k) for m in metrics for k in (keys.get(m) or [None])]
    if isinstance(keys, str):
        keys = [keys]
    return [(m, k) for m in metrics for k in keys]


def _check_repeats(repeats: Any) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats: {repeats!r} must be a positive integer (a regression test asks a fixed number)")
    return repeats


def _side_inputs(inputs: Mapping[str, Any], predictions: Any) -> dict[str, Any]:
    return {**inputs, "predictions": predictions}


def regression(metrics: Any, *, baseline: Sequence[Any], candidate: Sequence[Any], margin: float = 0.0,
               judge: Any = None, keys: Any = None, repeats: int = 1, confidence_level: float = DEFAULT_CONFIDENCE,
               n_resamples: int = DEFAULT_RESAMPLES, n_permutations: int = DEFAULT_TRIALS, seed: int = DEFAULT_SEED,
               options: Mapping[str, Mapping[str, Any]] | None = None, plan: bool = False, sd: float | None = None,
               judge_replay: str = "off", judge_recording: Any = None, judge_options: Mapping[str, Any] | None = None,
               **inputs: Any) -> dict[str, Any]:
    """The regression test of ``candidate`` against ``baseline`` (predictions of the same items)
    on one or several ``metrics`` (see the module's docstring). Returns ``{"verdict", "results":
    [per metric and key: {"metric", "key", "verdict", "delta", "ci", "p_value", "p_adjusted", "n",
    "mde", "requests", "unscored"}], "margin", "alpha"}``; with one metric and key its figures
    are at the top level too. ``judge_options`` go to the judge's constructor when ``judge`` is a
    string (``base_url``, ``concurrency``, ``cache``...)."""
    check_interval_options(confidence_level, n_resamples, seed)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or margin < 0:
        raise ValueError(f"margin: {margin!r} must be a number >= 0 (the drop that still counts as none)")
    repeats = _check_repeats(repeats)
    if len(baseline) != len(candidate):
        raise ValueError(f"candidate: {len(candidate)} predictions for {len(baseline)} baseline predictions; "
                         "a regression test pairs them item by item")
    if "predictions" in inputs:
        raise TypeError("predictions: pass baseline= and candidate= (the predictions of each side)")
    alpha = round(1.0 - confidence_level, 12)
    if judge_options:
        judge = resolve_judge(judge, judge_options)
    pairs = _pairs(_names(metrics), keys)
    per_metric_options = dict(options or {})
    names = {getattr(m, "name", m) for m, _ in pairs}
    for name in per_metric_options:
        if name not in names:
            raise ValueError(f"options: {name!r} is not a metric of this regression ({', '.join(map(str, names))}); "
                             "give the options per metric: {metric: {option: value}}")
    targets = []
    for metric, key in pairs:
        name = getattr(metric, "name", metric)
        given = {c: v for c, v in inputs.items()}
        made = [make_target(metric, key, _side_inputs(given, side), per_metric_options.get(name), judge,
                            judge_replay, judge_recording, (confidence_level, n_resamples, seed))
                for side in (baseline, candidate)]
        targets.append(made)
    if plan:
        return _plan(targets, len(baseline), alpha, len(pairs), sd, margin)
    rows: list[dict[str, Any]] = []
    for base, cand in targets:
        means: list[list[float | None]] = []
        requests = 0
        for side in (base, cand):
            per_item: list[list[float | None]] = [[] for _ in range(len(baseline))]
            for number in range(repeats if side.judged else 1):
                scored = side.repeat(number)
                requests += scored.requests
                for item, value in zip(per_item, scored.values, strict=True):
                    item.append(value)
            means.append(S.item_means(per_item))
        if base.recorder is not None and cand.recorder is not None:  # one recording for both sides
            base.recorder.entries.update(cand.recorder.entries)
        base.save_recording()
        sign = -1.0 if base.lower_is_better else 1.0
        differences = [sign * (c - b) for b, c in zip(*means, strict=True) if b is not None and c is not None]
        rows.append({"metric": base.name, "key": base.key,
                     **paired_figures(differences, margin, confidence_level, n_resamples, n_permutations, seed,
                                      len(pairs)),
                     "requests": requests, "unscored": len(baseline) - len(differences),
                     "lower_is_better": base.lower_is_better})
    return _summary(decide_paired(rows, margin, alpha), margin, alpha)


def paired_figures(differences: list[float], margin: float, confidence_level: float, n_resamples: int,
                   n_permutations: int, seed: int | None, tests: int) -> dict[str, Any]:
    """One metric's figures from its per-item differences (negative is worse): ``delta``,
    ``ci``, ``p_value`` (one-sided, of a drop below ``-margin``), ``n``, ``sd``, ``mde``."""
    delta = math.fsum(differences) / len(differences) if differences else None
    low, high = percentile_interval(differences, confidence_level, n_resamples, seed)
    spread = statistics.stdev(differences) if len(differences) > 1 else 0.0
    return {"delta": delta, "ci": [low, high], "p_value": S.sign_flip_p(differences, -margin, n_permutations, seed),
            "n": len(differences), "sd": spread, "mde": S.mde(spread, len(differences), 1 - confidence_level, tests)}


def decide_paired(rows: list[dict[str, Any]], margin: float, alpha: float) -> list[dict[str, Any]]:
    """The rows (:func:`paired_figures` each) with ``p_adjusted`` (Holm over the rows), their
    ``verdict`` and ``reasons``."""
    for row, adjusted in zip(rows, S.holm([r["p_value"] for r in rows]), strict=True):
        row["p_adjusted"] = adjusted
        row["verdict"] = _verdict(row["ci"], adjusted, margin, alpha)
        row["reasons"] = _reasons(row, margin)
    return rows


def _verdict(ci: list[float | None], p_adjusted: float, margin: float, alpha: float) -> str:
    low, high = ci
    if low is None or high is None:
        return "inconclusive"
    if high < -margin and p_adjusted < alpha:
        return "regressed"
    if low > -margin:
        return "not_regressed"
    return "inconclusive"


def _reasons(row: Mapping[str, Any], margin: float) -> list[str]:
    if row["verdict"] != "inconclusive" or row["delta"] is None:
        return [] if row["delta"] is not None else ["no item has a score on both sides"]
    return [f"a drop below {-margin} cannot be told apart from none at n={row['n']}: the smallest drop this "
            f"test finds with 80% power is {row['mde']:.4f}"]


def _summary(rows: list[dict[str, Any]], margin: float, alpha: float) -> dict[str, Any]:
    verdicts = {r["verdict"] for r in rows}
    overall = "regressed" if "regressed" in verdicts else "inconclusive" if "inconclusive" in verdicts \
        else "not_regressed"
    out: dict[str, Any] = {"verdict": overall, "results": rows, "margin": margin, "alpha": alpha}
    if len(rows) == 1:
        out.update({k: v for k, v in rows[0].items() if k != "verdict"})
    return out


def _plan(targets: list[list[Any]], n: int, alpha: float, tests: int, sd: float | None, margin: float
          ) -> dict[str, Any]:
    """``mde`` per metric and key before any judge call (see the module's docstring)."""
    rows = []
    for base, cand in targets:
        if sd is not None:
            spread, source = float(sd), "sd given"
        elif not base.judged:
            sign = -1.0 if base.lower_is_better else 1.0
            pairs = zip(base.repeat(0).values, cand.repeat(0).values, strict=True)
            differences = [sign * (c - b) for b, c in pairs if b is not None and c is not None]
            spread = statistics.stdev(differences) if len(differences) > 1 else 0.0
            source = "the metric's scores (no judge)"
        else:
            low, high = base.options.get("score_range") or base.spec.score_range  # G-Eval: its own scale
            spread, source = float(high - low), "the widest spread of the score range (pass sd= to narrow it)"
        rows.append({"metric": base.name, "key": base.key, "n": n, "sd": spread, "sd_source": source,
                     "mde": S.mde(spread, n, alpha, tests), "requests": 0})
    out: dict[str, Any] = {"plan": True, "results": rows, "margin": margin, "alpha": alpha}
    if len(rows) == 1:
        out.update(rows[0])
    return out


def assert_no_regression(metrics: Any, *, strict: bool = False, **arguments: Any) -> dict[str, Any]:
    """:func:`regression`, raising ``AssertionError`` on ``regressed`` (with ``strict=True``
    also on ``inconclusive``): a change too small to see is not a regression, and the message
    of an inconclusive one says how small a drop the data could show."""
    result = regression(metrics, **arguments)
    bad = [r for r in result["results"] if r["verdict"] == "regressed" or (strict and r["verdict"] == "inconclusive")]
    if bad:
        raise AssertionError("; ".join(
            f"{r['metric']}.{r['key']}: {r['verdict']} (delta {r['delta']}, interval {r['ci']}, p_adjusted "
            f"{r['p_adjusted']:.4g}, n {r['n']}, mde {r['mde']:.4f})" for r in bad))
    return result
