"""The meta-evaluation statistics are objects that carry their computation
(textgen_metrics.stats.statistic): the evaluator asks the object for the value, the resamples,
the permutation batches, the system-level value and the baseline, so a statistic declared once
is meta-evaluated without a change to the evaluator."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from textgen_metrics.meta.evaluate import meta_evaluate
from textgen_metrics.stats.statistic import STATISTICS, Rows, Statistic


@dataclass(frozen=True)
class _NegativeMeanGap(Statistic):
    """A statistic the house does not have: minus the mean absolute gap between the scores."""

    levels: tuple[str, ...] = ("segment",)
    baseline: str = "minus the mean absolute human score"

    def segment(self, r: Rows) -> dict[str, float | int]:
        h, m = np.asarray(r.h, dtype=np.float64), np.asarray(r.m, dtype=np.float64)
        value = -float(np.abs(h - m).mean()) if h.size else math.nan
        return {"value": value, "n": int(h.size), "groups": 1, "groups_skipped": 0}


def _table(n: int = 40, seed: int = 3) -> tuple[list[float], dict[str, list[float]]]:
    rng = np.random.default_rng(seed)
    h = rng.normal(size=n)
    return h.tolist(), {"close": (h + 0.1 * rng.normal(size=n)).tolist(), "far": (h + 2 * rng.normal(size=n)).tolist()}


def test_a_statistic_declared_once_is_meta_evaluated_with_interval_comparison_and_baseline(monkeypatch):
    declared = _NegativeMeanGap("neg_gap", "minus the mean absolute gap")
    monkeypatch.setitem(STATISTICS, "neg_gap", declared)
    human, scores = _table()
    out = meta_evaluate(scores, human, statistics=["neg_gap"], n_resamples=60, seed=5)
    by_metric = {r["metric"]: r for r in out["results"]}
    for name, values in scores.items():
        expected = -float(np.abs(np.asarray(human) - np.asarray(values)).mean())
        assert by_metric[name]["value"] == pytest.approx(expected, abs=1e-15)
        low, high = by_metric[name]["ci"]
        assert low <= by_metric[name]["value"] <= high
    [baseline] = out["baselines"]
    assert baseline["value"] == pytest.approx(-float(np.abs(human).mean()), abs=1e-15)
    [comparison] = out["comparisons"]
    assert (comparison["a"], comparison["b"]) == ("close", "far")
    assert comparison["p_value"] is not None and comparison["p_value"] < 0.05
    assert by_metric["close"]["rank"] == 1 and by_metric["far"]["rank"] == 2


def test_a_declared_segment_statistic_is_refused_at_system_level(monkeypatch):
    monkeypatch.setitem(STATISTICS, "neg_gap", _NegativeMeanGap("neg_gap", "minus the mean absolute gap"))
    human, scores = _table()
    with pytest.raises(ValueError, match="'neg_gap' is a segment-level statistic"):
        meta_evaluate(scores, human, items=list(range(40)), systems=[i % 4 for i in range(40)], level="system",
                      statistics=["neg_gap"], n_resamples=0)


@pytest.mark.parametrize("name", [s.name for s in STATISTICS.values() if "segment" in s.levels and not s.labels])
def test_each_object_gives_the_evaluators_value_and_baseline(name):
    """The object's own value on the rows is the reported value, and on a constant metric's
    rows the reported baseline."""
    human, scores = _table(60, seed=8)
    systems = [i % 5 for i in range(60)]
    out = meta_evaluate({"close": scores["close"]}, human, systems=systems, statistics=[name], n_resamples=0)
    [result], [baseline] = out["results"], out["baselines"]
    rows = Rows(np.asarray(human), np.asarray(scores["close"]), np.arange(60), np.asarray(systems),
                np.zeros(60, dtype=np.int64))
    assert result["value"] == STATISTICS[name].value_on(rows, "segment", 5, 1000, 12345)
    constant = STATISTICS[name].value_on(rows.with_metric(np.zeros(60)), "segment", 5, 1000, 12345)
    assert baseline["value"] == (None if math.isnan(constant) else constant)
