"""Self-contained HTML reports and SVG charts of per-example scores (no scripts, no network)."""

from __future__ import annotations

import datetime
import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from .numbers import format_number

__all__ = ["histogram", "svg_histogram", "svg_bars", "report_html"]

_W, _H, _PAD = 420, 180, 28


def histogram(values: Sequence[float | None], bins: int = 10,
              value_range: tuple[float, float] | None = None) -> tuple[list[float], list[int]]:
    """(edges, counts) over the non-None values: over ``value_range`` when given (widened to take
    every value), else [0, 1] when they all lie there, else their range."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return [], []
    if value_range is not None:
        lo, hi = min([value_range[0]] + vals), max([value_range[1]] + vals)
    else:
        lo, hi = (0.0, 1.0) if all(0.0 <= v <= 1.0 for v in vals) else (min(vals), max(vals))
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in vals:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    return [lo + i * width for i in range(bins + 1)], counts


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def svg_histogram(values: Sequence[float | None], title: str, bins: int = 10,
                  value_range: tuple[float, float] | None = None) -> str:
    """An SVG histogram of ``values`` with the bin edges and counts labelled."""
    edges, counts = histogram(values, bins, value_range)
    esc = html.escape(title)
    if not counts:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="40" role="img">' \
               f'<title>{esc}</title><text x="4" y="24">{esc}: no scores</text></svg>'
    top = max(counts)
    plot_w, plot_h = _W - 2 * _PAD, _H - 2 * _PAD
    bar_w = plot_w / len(counts)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img" '
             f'class="histogram" data-metric="{esc}"><title>{esc}</title>',
             f'<text x="{_PAD}" y="16" font-size="13" font-weight="bold">{esc}</text>']
    for i, c in enumerate(counts):
        h = plot_h * c / top
        x, y = _PAD + i * bar_w, _PAD + plot_h - h
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" fill="#4f7cc4">'
                     f'<title>[{_fmt(edges[i])}, {_fmt(edges[i + 1])}): {c}</title></rect>')
        if c:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" font-size="10" '
                         f'text-anchor="middle">{c}</text>')
    base = _PAD + plot_h
    parts.append(f'<line x1="{_PAD}" y1="{base}" x2="{_PAD + plot_w}" y2="{base}" stroke="#333"/>')
    for i in (0, len(counts) // 2, len(counts)):
        parts.append(f'<text x="{_PAD + i * bar_w:.1f}" y="{base + 14}" font-size="10" '
                     f'text-anchor="middle">{_fmt(edges[i])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_bars(labels: Sequence[Any], values: Sequence[float | None], title: str,
             value_range: tuple[float, float] = (0.0, 1.0)) -> str:
    """A horizontal SVG bar chart, one bar per example: its label (id) on the left, its value
    (4 significant digits) at the bar's end, None marked "n/a". The axis runs over
    ``value_range`` (widened to take any value outside it); one row per example keeps every
    label readable however many examples there are."""
    esc = html.escape(title)
    finite = [v for v in values if v is not None and math.isfinite(v)]
    lo = min([value_range[0]] + finite)
    hi = max([value_range[1]] + finite)
    if hi == lo:
        hi = lo + 1.0
    row_h, label_w, value_w, plot_w = 16, 110, 52, 260
    top = 40
    height = top + row_h * len(values) + 24
    width = label_w + plot_w + value_w

    def x_of(v: float) -> float:
        return label_w + plot_w * (v - lo) / (hi - lo)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'class="bars" data-metric="{esc}" font-family="sans-serif"><title>{esc}</title>',
             f'<text x="4" y="16" font-size="13" font-weight="bold">{esc}</text>']
    ticks = [lo, (lo + hi) / 2, hi]
    for t in ticks:  # the axis: gridlines and their values above the bars
        x = x_of(t)
        parts.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 20}" stroke="#ddd"/>')
        parts.append(f'<text x="{x:.1f}" y="{top - 8}" font-size="10" text-anchor="middle">{_fmt(t)}</text>')
    for i, (label, v) in enumerate(zip(labels, values, strict=False)):
        y = top + i * row_h
        name = html.escape(str(label))
        short = name if len(str(label)) <= 16 else html.escape(str(label)[:15]) + "…"
        parts.append(f'<text x="{label_w - 6}" y="{y + 12}" font-size="11" text-anchor="end">'
                     f'<title>{name}</title>{short}</text>')
        if v is None or not math.isfinite(v):
            parts.append(f'<text x="{label_w + 4}" y="{y + 12}" font-size="10" fill="#a00">n/a</text>')
            continue
        x0, x1 = x_of(lo), x_of(v)
        parts.append(f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 1):.1f}" height="{row_h - 4}" '
                     f'fill="#4f7cc4"><title>{name}: {v:.4g}</title></rect>')
        parts.append(f'<text x="{x1 + 4:.1f}" y="{y + 12}" font-size="10">{v:.4g}</text>')
    base = height - 20
    parts.append(f'<line x1="{label_w}" y1="{base}" x2="{label_w + plot_w}" y2="{base}" stroke="#333"/>')
    for t in ticks:
        parts.append(f'<text x="{x_of(t):.1f}" y="{base + 14}" font-size="10" text-anchor="middle">{_fmt(t)}</text>')
    parts.append("</svg>")
    return "".join(parts)


_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f2f4f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:1em}
"""


def _num(v: object) -> str:
    return html.escape(format_number(v))


def report_html(report: Mapping[str, Any], max_rows: int = 2000) -> str:
    """The report (from ``score_records``) as one HTML page: the summary table, per metric a
    histogram of each per-example score, the judge usage, and the per-example scores."""
    e = html.escape
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
           f"<title>textgen-metrics report: {e(str(report.get('source', '')))}</title>",
           f"<style>{_STYLE}</style></head><body>",
           "<h1>textgen-metrics report</h1>",
           f"<p>{report['examples']} examples from <code>{e(str(report.get('source', '')))}</code>; "
           f"textgen-metrics {e(report['textgen_metrics'])}; "
           f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC</p>",
           "<h2>Summary</h2><table id='summary'><tr><th>score</th><th>value</th></tr>"]
    out += [f"<tr><td>{e(k)}</td><td class='num'>{_num(v)}</td></tr>" for k, v in report["summary"].items()]
    out.append("</table>")
    ids = report["ids"]
    columns = []
    for name, m in report["metrics"].items():
        out.append(f"<h2 id='metric-{e(name)}'>{e(name)}</h2>")
        if m["options"]:
            out.append(f"<p>options: <code>{e(json.dumps(m['options'], default=str))}</code></p>")
        agg = m["aggregate"]
        if "judge_usage" in agg:
            u = agg["judge_usage"]
            out.append(f"<p>judge <code>{e(str(agg.get('judge_model')))}</code>: "
                       + ", ".join(f"{e(k)} {e(str(v))}" for k, v in u.items()) + "</p>")
        errors = agg.get("errors") or []
        if errors:
            out.append(f"<p>{len(errors)} example(s) got no score: " + "; ".join(
                f"row {x['index'] + 1}: {e(str(x['error']))[:200]}" for x in errors[:20]) + "</p>")
        out.append("<div class='charts'>")
        for key in m["scores"]:
            out.append(svg_histogram(m["per_example"][key], f"{name}: {key}" if key != name else name))
            columns.append((f"{name}.{key}" if key != name else name, m["per_example"][key]))
        out.append(f"</div><p>{m['seconds']:.3f} s</p>")
    out.append("<h2>Per example</h2><table id='per-example'><tr><th>id</th>"
               + "".join(f"<th>{e(c)}</th>" for c, _ in columns) + "</tr>")
    for i in range(min(len(ids), max_rows)):
        out.append(f"<tr><td>{e(str(ids[i]))}</td>"
                   + "".join(f"<td class='num'>{_num(v[i])}</td>" for _, v in columns) + "</tr>")
    out.append("</table>")
    if len(ids) > max_rows:
        out.append(f"<p>First {max_rows} of {len(ids)} examples shown; all are in the JSON report.</p>")
    out.append("</body></html>")
    return "\n".join(out)
