"""How well a judge agrees with people, from the command line: ``score --human-column`` checks
its fields before scoring and reports each judged metric's :func:`agreement` with them. The
statistics are :mod:`textgen_metrics.stats.correlation`'s (re-exported here: ``agreement``,
``pearson``, ``spearman``, ``kendall_tau``, ``cohen_kappa``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .stats.correlation import agreement, cohen_kappa, kendall_tau, pearson, spearman

__all__ = ["agreement", "pearson", "spearman", "kendall_tau", "cohen_kappa", "check_human_columns",
           "agreement_report", "describe"]


# -- the command line's --human-column --------------------------------------------------------

def _human_value(value: Any) -> Any:
    """A human score as read from a file: numbers stay, a numeric string becomes a number, an
    empty cell is missing, any other string is a label."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            return text
        return number if math.isfinite(number) else text
    return value


def _human_fields(columns: Sequence[str], metrics: Sequence[str], judged: Sequence[str]) -> dict[str, str]:
    """``{metric: field}`` from ``FIELD`` / ``METRIC=FIELD`` items."""
    fields: dict[str, str] = {}
    for item in columns:
        metric, sep, field = item.partition("=")
        if not sep:
            fields.update({name: item for name in judged})
        elif metric not in metrics:
            raise ValueError(f"--human-column: {metric!r} is not among the metrics scored ({', '.join(metrics)})")
        else:
            fields[metric] = field
    if not fields:
        raise ValueError("--human-column: no LLM-guided metric is scored; human scores are compared with a judge's")
    return fields


def check_human_columns(rows: Sequence[dict[str, Any]], columns: Sequence[str], metrics: Sequence[str]) -> None:
    """Before scoring: every ``--human-column`` names a field some row has, and a scored metric."""
    from .registry import METRICS

    judged = [m for m in metrics if m in METRICS and METRICS[m].judge]
    for field in _human_fields(columns, metrics, judged).values():
        if not any(field in row for row in rows):
            have = ", ".join(sorted({str(k) for row in rows[:1] for k in row}))
            raise ValueError(f"--human-column: no row has the field {field!r} (the first has: {have})")


def agreement_report(report: dict[str, Any], rows: Sequence[dict[str, Any]], columns: Sequence[str],
                     **options: Any) -> dict[str, dict[str, Any]]:
    """The agreement of each judged metric of a scoring ``report`` with people's scores in the
    ``rows``: ``columns`` holds ``FIELD`` (every judged metric against that field) or
    ``METRIC=FIELD`` items. Scores are compared with the metric's per-example score; labels
    (strings: "win", "yes"...) with its per-example ``verdicts`` where it has them. A row without
    the field counts as missing."""
    judged = [name for name, m in report["metrics"].items() if "judge_model" in m["aggregate"]]
    out: dict[str, dict[str, Any]] = {}
    for metric, field in _human_fields(columns, list(report["metrics"]), judged).items():
        human = [_human_value(row.get(field)) for row in rows]
        entry = report["metrics"][metric]
        per_example = entry["per_example"]
        labels = any(isinstance(h, str) for h in human)
        if labels and isinstance(per_example.get("verdicts"), list):
            judge = per_example["verdicts"]
        else:
            judge = per_example[entry["scores"][0]]
        out[metric] = dict(agreement(judge, human, **options), human_column=field)
    return out


def describe(result: dict[str, Any]) -> str:
    """One line for an ``agreement`` result: each statistic with its interval, and the counts."""
    stats = ("spearman", "kendall_tau", "pearson") if result["kind"] == "scores" else ("cohen_kappa", "accuracy")
    parts = []
    for key in stats:
        value, ci = result[key], result.get(f"{key}_ci")
        text = "n/a" if value is None else f"{value:.4f}"
        parts.append(f"{key} {text}" + (f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else ""))
    return (f"{'; '.join(parts)} ({result['n']} examples; {result['judge_missing']} without a judge score, "
            f"{result['human_missing']} without a human one)")
