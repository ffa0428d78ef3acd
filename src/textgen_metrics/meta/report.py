"""A meta-evaluation's result as a terminal table and as one self-contained HTML page.

The page has, per human dimension and statistic, a forest plot (each metric's value with its
interval, the metrics of rank 1 in a darker colour, the statistic's zero line), the table behind
it, and the pairwise tests; it says what each statistic measures and how the intervals were
made. No scripts, no network: the SVG is written here, as :mod:`textgen_metrics.report` does.
"""

from __future__ import annotations

import datetime
import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..numbers import format_number
from ..stats.statistic import STATISTICS

__all__ = ["format_table", "meta_eval_html", "STATISTIC_TEXT", "blocks", "baseline_of"]

# what each statistic measures, in a line (the report and --help show them): its declaration's
STATISTIC_TEXT: dict[str, str] = {s.name: s.text for s in STATISTICS.values()}
_GROUPING = {"none": "all rows pooled", "item": "per item, then the mean over items",
             "system": "per system, then the mean over systems"}


def blocks(result: Mapping[str, Any]) -> list[tuple[tuple[str, str, str, str], list[dict[str, Any]]]]:
    """The results grouped by (human, level, group_by, statistic), in order of first appearance,
    each block's rows sorted by rank, then value (best first), undefined ones last."""
    out: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for r in result["results"]:
        out.setdefault((r["human"], r["level"], r["group_by"], r["statistic"]), []).append(r)
    for rows in out.values():
        rows.sort(key=lambda r: (r["value"] is None, r.get("rank") or 0, -(r["value"] or 0.0), r["metric"]))
    return list(out.items())


def baseline_of(result: Mapping[str, Any], key: tuple[str, str, str, str]) -> dict[str, Any] | None:
    """The block's baseline (the value of a constant metric), None where the result has none."""
    for b in result.get("baselines") or []:
        if (b["human"], b["level"], b["group_by"], b["statistic"]) == key:
            return dict(b)
    return None


def _mark(r: Mapping[str, Any]) -> str:
    """`` (~)`` after a value whose interval holds the baseline's value."""
    return " (~)" if r.get("includes_baseline") else ""


def _notes(result: Mapping[str, Any]) -> list[str]:
    """What the reader must know about the rows: systems left out, systems cut at system level."""
    out = []
    if result.get("excluded_systems"):
        out.append(f"systems left out: {', '.join(result['excluded_systems'])} (a bundled set's references are "
                   "left out of reference-based metrics by default; --include-system keeps them)")
    incomplete = result.get("incomplete_systems") or {}
    if incomplete:
        named = ", ".join(f"{k} lacks {v} item(s)" for k, v in incomplete.items())
        out.append(f"incomplete systems: {named}; at system level every system is averaged over the items all "
                   "share")
    return out


def _ci(ci: Sequence[float] | None) -> str:
    return "-" if not ci else f"[{format_number(ci[0], 3)}, {format_number(ci[1], 3)}]"


def _title(key: tuple[str, str, str, str]) -> str:
    human, level, group_by, statistic = key
    where = f"{level} level" + (f", {_GROUPING.get(group_by, group_by)}" if level == "segment" else "")
    return f"{statistic} with people's {human} ({where})"


def format_table(result: Mapping[str, Any]) -> str:
    """The result as text: one table per human dimension and statistic (rank, metric, value,
    interval, counts), then the notes (what a missing row means, the tiny judges' caveat)."""
    level = result.get("confidence_level", 0.95)
    split = f" ({result['split']})" if result.get("split") else ""
    lines = [f"{result['rows']} rows from {result['source']}{split}"]
    for key, rows in blocks(result):
        lines.append("")
        lines.append(_title(key))
        header = ["rank", "metric", "value", f"{level:.0%} CI", "n", "groups", "skipped", "missing"]
        table = [header]
        for r in rows:
            value = format_number(r["value"], 4) if r["value"] is not None else f"n/a ({r.get('reason', '')})"
            if r.get("threshold") is not None:
                value += f" (tie threshold {format_number(r['threshold'], 4)})"
            table.append([str(r.get("rank") or "-"), r["metric"], value + _mark(r), _ci(r.get("ci")), str(r["n"]),
                          str(r.get("groups", "-")), str(r.get("groups_skipped", 0)), str(r.get("missing", 0))])
        base = baseline_of(result, key)
        if base is not None:
            table.append(["-", "(constant)", format_number(base["value"], 4) if base["value"] is not None
                          else f"n/a ({base.get('reason', '')})", "-", "-", "-", "-", "-"])
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        text = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
        text.insert(1, "  ".join("-" * w for w in widths))
        lines.extend(text)
    lines.append("")
    lines.extend(_notes(result))
    if any(r.get("includes_baseline") for r in result["results"]):
        lines.append("(~): the interval holds the (constant) row's value: the metric does no better than a "
                     "constant score")
    lines.append("rank: metrics that no other metric beats significantly (one-sided permutation test, p <= 0.05) "
                 "share rank 1, as the WMT metrics tasks rank them")
    for name, run in (result.get("runs") or {}).items():
        if run.get("unscored"):
            lines.append(f"{name}: {run['unscored']} row(s) got no score and are left out of its statistics "
                         "(never scored as 0)")
    if result.get("plumbing_judge"):
        lines.append("note: the tiny local judges (SmolLM2-135M, Gemma 3 270M) check the plumbing, not a judge's "
                     "quality: their agreement figures say nothing about what a real judge would reach")
    lines.append(f"signature: {result['signature']}")
    return "\n".join(lines)


# -- HTML -----------------------------------------------------------------------------------------
_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}
.wrap{overflow-x:auto}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.92em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;white-space:nowrap}
th{background:#f2f4f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.best td{background:#eef5ee}
.note{color:#555;font-size:.9em;max-width:60em}
.caveat{background:#fff4d6;border:1px solid #e0c060;padding:.5em .8em;max-width:60em}
svg{max-width:100%;height:auto}
"""


def _ticks(lo: float, hi: float) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) from ``lo`` to ``hi``, 3 to 7."""
    import math

    span = hi - lo
    if span <= 0:
        return [lo]
    step = 10.0 ** math.floor(math.log10(span / 3))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if span / (step * factor) <= 6:
            step *= factor
            break
    first = math.ceil(lo / step - 1e-9)
    return [round(k * step, 10) for k in range(first, int(math.floor(hi / step + 1e-9)) + 1)]


def _forest(rows: list[dict[str, Any]], title: str) -> str:
    """Each metric's value (a dot) and interval (a line), rank 1 dark, on one axis with zero."""
    e = html.escape
    shown = [r for r in rows if r["value"] is not None]
    label_w, plot_w, value_w, row_h, top = 170, 420, 150, 22, 34
    width = label_w + plot_w + value_w
    height = top + row_h * max(len(rows), 1) + 30
    points = [v for r in shown for v in [r["value"], *(r.get("ci") or [])]]
    lo, hi = min([0.0, *points]), max([0.0, *points]) if points else 1.0
    if hi - lo < 1e-9:
        hi = lo + 1.0
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return float(label_w + plot_w * (v - lo) / (hi - lo))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" role="img" class="forest" font-family="sans-serif"><title>{e(title)}</title>']
    base = height - 24
    for t in _ticks(lo + pad, hi - pad):
        parts.append(f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{base}" stroke="#e4e4e4"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{base + 16}" font-size="11" text-anchor="middle">'
                     f'{e(format_number(t, 3))}</text>')
    if lo < 0 < hi:
        parts.append(f'<line x1="{x(0):.1f}" y1="{top - 6}" x2="{x(0):.1f}" y2="{base}" stroke="#888" '
                     'stroke-dasharray="3,3"/>')
    parts.append(f'<text x="{label_w}" y="14" font-size="11" fill="#555">value with its interval; '
                 'dark: rank 1 (not significantly worse than the best)</text>')
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        name = str(r["metric"])
        short = name if len(name) <= 24 else name[:23] + "…"
        parts.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">'
                     f'<title>{e(name)}</title>{e(short)}</text>')
        if r["value"] is None:
            parts.append(f'<text x="{label_w + 4}" y="{y + 4:.1f}" font-size="11" fill="#a00">'
                         f'undefined: {e(str(r.get("reason", ""))[:60])}</text>')
            continue
        colour = "#1f4e99" if r.get("rank") == 1 else "#8aa6d6"
        ci = r.get("ci")
        if ci:
            parts.append(f'<line x1="{x(ci[0]):.1f}" y1="{y:.1f}" x2="{x(ci[1]):.1f}" y2="{y:.1f}" '
                         f'stroke="{colour}" stroke-width="2"/>')
            for end in ci:
                parts.append(f'<line x1="{x(end):.1f}" y1="{y - 5:.1f}" x2="{x(end):.1f}" y2="{y + 5:.1f}" '
                             f'stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(r["value"]):.1f}" cy="{y:.1f}" r="5" fill="{colour}">'
                     f'<title>{e(name)}: {e(format_number(r["value"]))}</title></circle>')
        text = format_number(r["value"], 3) + (f"  {_ci(ci)}" if ci else "")
        parts.append(f'<text x="{label_w + plot_w + 8}" y="{y + 4:.1f}" font-size="11">{e(text)}</text>')
    parts.append(f'<line x1="{label_w}" y1="{base}" x2="{label_w + plot_w}" y2="{base}" stroke="#333"/>')
    parts.append("</svg>")
    return "".join(parts)


def _comparisons(result: Mapping[str, Any], key: tuple[str, str, str, str]) -> str:
    e = html.escape
    rows = [c for c in result.get("comparisons") or []
            if (c["human"], c["level"], c["group_by"], c["statistic"]) == key]
    if not rows:
        return ""
    out = ["<details><summary>pairwise tests (" + str(len(rows)) + ")</summary><div class='wrap'><table>",
           "<tr><th>better (a)</th><th>b</th><th>a &minus; b</th><th>one-sided p</th></tr>"]
    for c in rows:
        p = c.get("p_value")
        out.append(f"<tr><td>{e(c['a'])}</td><td>{e(c['b'])}</td><td class='num'>{e(format_number(c['delta']))}</td>"
                   f"<td class='num'>{e(format_number(p))}{' *' if p is not None and p <= 0.05 else ''}</td></tr>")
    out.append("</table></div><p class='note'>* a beats b at p &le; 0.05 (paired permutation test on the rows "
               "both metrics scored).</p></details>")
    return "".join(out)


def meta_eval_html(result: Mapping[str, Any]) -> str:
    """The result of :func:`~textgen_metrics.meta.run.meta_eval` as one HTML page."""
    e = html.escape
    level = result.get("confidence_level", 0.95)
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
           "<meta name='viewport' content='width=device-width, initial-scale=1'>",
           f"<title>Which score to trust: {e(str(result['source']))}</title><style>{_STYLE}</style></head><body>",
           f"<h1>Which score to trust: {e(str(result['source']))}</h1>",
           f"<p>{result['rows']} rows; intervals: {level:.0%} percentile bootstrap over items "
           f"({e(str(result.get('n_resamples', '')))} resamples); "
           f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.</p>"]
    if result.get("plumbing_judge"):
        out.append("<p class='caveat'><strong>Plumbing check, not a quality score.</strong> The tiny local judges "
                   "(SmolLM2-135M, Gemma 3 270M) show that the path works end to end; their agreement with people "
                   "says nothing about what a real judge would reach.</p>")
    for note in _notes(result):
        out.append(f"<p class='caveat'>{e(note)}</p>")
    s = result.get("set")
    if s:
        out.append(f"<p class='note'>Set: <strong>{e(str(s.get('title') or s['name']))}</strong>, licence "
                   f"{e(str(s.get('licence')))}; source {e(str(s.get('source')))}.</p>")
    for key, rows in blocks(result):
        title = _title(key)
        out.append(f"<h2>{e(title)}</h2>")
        out.append(f"<p class='note'>{e(STATISTIC_TEXT.get(key[3], key[3]))}.</p>")
        out.append(_forest(rows, title))
        out.append("<div class='wrap'><table class='results'><tr><th>rank</th><th>metric</th><th>value</th>"
                   f"<th>{level:.0%} interval</th><th>rows used</th><th>groups</th><th>groups left out</th>"
                   "<th>missing scores</th></tr>")
        for r in rows:
            value = format_number(r["value"]) if r["value"] is not None else f"undefined: {r.get('reason', '')}"
            if r.get("threshold") is not None:
                value += f" (tie threshold {format_number(r['threshold'])})"
            out.append(f"<tr class='{'best' if r.get('rank') == 1 else ''}'><td class='num'>"
                       f"{e(str(r.get('rank') or '-'))}</td><td>{e(r['metric'])}</td>"
                       f"<td class='num'>{e(value + _mark(r))}</td>"
                       f"<td class='num'>{e(_ci(r.get('ci')))}</td><td class='num'>{r['n']}</td>"
                       f"<td class='num'>{e(str(r.get('groups', '-')))}</td>"
                       f"<td class='num'>{e(str(r.get('groups_skipped', 0)))}</td>"
                       f"<td class='num'>{e(str(r.get('missing', 0)))}</td></tr>")
        base = baseline_of(result, key)
        if base is not None:
            shown = format_number(base["value"]) if base["value"] is not None else f"undefined: {base.get('reason')}"
            out.append(f"<tr class='baseline'><td class='num'>-</td><td>(constant)</td><td class='num'>{e(shown)}</td>"
                       "<td class='num'>-</td><td class='num'>-</td><td class='num'>-</td><td class='num'>-</td>"
                       "<td class='num'>-</td></tr>")
        out.append("</table></div>")
        if any(r.get("includes_baseline") for r in rows):
            out.append("<p class='note'>(~): the interval holds the (constant) row's value: the metric does no "
                       "better than a constant score.</p>")
        out.append(_comparisons(result, key))
    runs = result.get("runs") or {}
    if runs:
        out.append("<h2>Metrics computed</h2><div class='wrap'><table><tr><th>metric</th><th>signature or judge</th>"
                   "<th>rows without a score</th></tr>")
        for name, run in runs.items():
            what = run.get("signature") or run.get("judge_model") or ""
            out.append(f"<tr><td>{e(name)}</td><td><code>{e(str(what))}</code></td>"
                       f"<td class='num'>{run.get('unscored', 0)}</td></tr>")
        out.append("</table></div><p class='note'>A row a metric could not score is left out of that metric's "
                   "statistics and counted under missing scores; it is never scored as 0.</p>")
    out.append("<p class='note'>Rank: metrics sorted by value; the next rank starts where a metric of the current "
               "rank beats the next one with a one-sided p &le; 0.05 (as the WMT metrics tasks assign ranks).</p>")
    out.append(f"<p class='note'>signature: <code>{e(str(result['signature']))}</code></p>")
    if s and s.get("citation"):
        out.append(f"<details><summary>citation</summary><pre>{e(str(s['citation']))}</pre></details>")
    out.append("</body></html>")
    return "\n".join(out)
