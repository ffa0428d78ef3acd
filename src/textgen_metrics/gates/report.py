"""The gates' tables: one row per gate or regression, as text (the terminal) and as Markdown
(``--gate-summary``, ``--summary``, ``$GITHUB_STEP_SUMMARY``), from the result dicts."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["rows_of", "markdown", "text", "write_summary", "COLUMNS"]

COLUMNS = ("name", "metric", "score", "interval", "bound", "n", "repeats", "unscored", "verdict")


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def rows_of(results: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, str]]:
    """``(name, result dict)`` pairs as table rows: a gate's (``gate(...).as_dict()``) or one
    metric of a regression (its ``delta`` as the score, the margin as the bound)."""
    rows = []
    for name, r in results:
        low, high = r.get("ci") or (None, None)
        if "threshold" in r:
            bound = ("<= " if r.get("lower_is_better") else ">= ") + _number(r["threshold"])
            score, repeats = r.get("score"), r.get("repeats")
        else:
            bound, score, repeats = f"delta > -{_number(r.get('margin', 0.0))}", r.get("delta"), "-"
        rows.append({"name": name, "metric": f"{r['metric']}.{r['key']}", "score": _number(score),
                     "interval": f"[{_number(low)}, {_number(high)}]", "bound": bound, "n": _number(r.get("n")),
                     "repeats": _number(repeats), "unscored": _number(r.get("unscored")), "verdict": r["verdict"]})
    return rows


def markdown(rows: Sequence[Mapping[str, str]], title: str = "Quality gates") -> str:
    """A Markdown table of ``rows`` under a heading."""
    lines = [f"### {title}", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r[c].replace("|", "\\|") for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def text(rows: Sequence[Mapping[str, str]]) -> str:
    """A plain text table of ``rows``, columns aligned."""
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS}
    lines = ["  ".join(c.ljust(widths[c]) for c in COLUMNS).rstrip()]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in COLUMNS).rstrip() for r in rows]
    return "\n".join(lines)


def write_summary(table: str, path: str | None) -> None:
    """Write the Markdown ``table`` to ``path`` (when given) and append it to the file named by
    ``$GITHUB_STEP_SUMMARY`` (when set: GitHub Actions shows it on the run's page)."""
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(table)
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        with open(step, "a", encoding="utf-8") as f:
            f.write(table + "\n")
