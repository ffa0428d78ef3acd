"""Self-contained HTML reports and SVG charts of per-example scores (no scripts, no network).

The report is for a person: every figure says what it is (a corpus score or a mean, a score of one
example, a time), numbers read as :func:`~textgen_metrics.numbers.format_readable` writes them
(``< 0.0001``, the exact value in a tooltip), tables scroll inside their own box and charts scale
to the page (``viewBox``) from a phone's width up, and a run judged by a tiny local model says
that it checks the plumbing, not a judge's quality.
"""

from __future__ import annotations

import datetime
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .judges.redaction import mask_url_credentials
from .numbers import exact_number, format_readable
from .scoring import locate

__all__ = ["histogram", "svg_histogram", "svg_bars", "report_html", "is_plumbing_judge"]

_W, _H, _PAD = 420, 200, 28
_TOP = 42  # the plot's top: below the title, with room for the tallest bar's count
_TITLE_CHARS = 52  # a 13 px bold title's characters that fit the chart's width


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
    """An axis value: 3 significant digits, never in exponent notation."""
    return format_readable(float(x), 3)


def _svg_open(width: float, height: float, attrs: str) -> str:
    """An ``<svg>`` that keeps its size where there is room and scales down (``viewBox``) where
    there is not (a phone)."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet" '
            f'style="max-width:100%;height:auto" role="img" font-family="sans-serif" {attrs}>')


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def svg_histogram(values: Sequence[float | None], title: str, bins: int = 10,
                  value_range: tuple[float, float] | None = None) -> str:
    """An SVG histogram of ``values`` with the bin edges and counts labelled."""
    edges, counts = histogram(values, bins, value_range)
    esc = html.escape(title)
    shown = html.escape(_short(title, _TITLE_CHARS))
    if not counts:
        return _svg_open(_W, 40, f'class="histogram" data-metric="{esc}"') + \
            f'<title>{esc}</title><text x="4" y="24" font-size="13">{shown}: no scores</text></svg>'
    top = max(counts)
    plot_w, plot_h = _W - 2 * _PAD, _H - _TOP - 40
    bar_w = plot_w / len(counts)
    parts = [_svg_open(_W, _H, f'class="histogram" data-metric="{esc}"') + f'<title>{esc}</title>',
             f'<text x="4" y="16" font-size="13" font-weight="bold" class="chart-title">{shown}</text>']
    for i, c in enumerate(counts):
        h = plot_h * c / top
        x, y = _PAD + i * bar_w, _TOP + plot_h - h
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" fill="#4f7cc4">'
                     f'<title>[{_fmt(edges[i])}, {_fmt(edges[i + 1])}): {c}</title></rect>')
        if c:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" font-size="11" '
                         f'text-anchor="middle">{c}</text>')
    base = _TOP + plot_h
    parts.append(f'<line x1="{_PAD}" y1="{base}" x2="{_PAD + plot_w}" y2="{base}" stroke="#333"/>')
    for i in (0, len(counts) // 2, len(counts)):
        parts.append(f'<text x="{_PAD + i * bar_w:.1f}" y="{base + 14}" font-size="11" '
                     f'text-anchor="middle">{_fmt(edges[i])}</text>')
    parts.append(f'<text x="{_PAD + plot_w / 2:.1f}" y="{base + 30}" font-size="11" text-anchor="middle" '
                 f'fill="#555">score of one example; above each bar: how many examples</text>')
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

    shown = html.escape(_short(title, _TITLE_CHARS))
    parts = [_svg_open(width, height, f'class="bars" data-metric="{esc}"') + f'<title>{esc}</title>',
             f'<text x="4" y="16" font-size="13" font-weight="bold" class="chart-title">{shown}</text>']
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
        parts.append(f'<text x="{x1 + 4:.1f}" y="{y + 12}" font-size="10">{html.escape(format_readable(v))}</text>')
    base = height - 20
    parts.append(f'<line x1="{label_w}" y1="{base}" x2="{label_w + plot_w}" y2="{base}" stroke="#333"/>')
    for t in ticks:
        parts.append(f'<text x="{x_of(t):.1f}" y="{base + 14}" font-size="10" text-anchor="middle">{_fmt(t)}</text>')
    parts.append("</svg>")
    return "".join(parts)


_STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:2em;color:#222;line-height:1.4;max-width:1100px}
@media (max-width:600px){body{margin:1em .75em}}
p,li{overflow-wrap:anywhere}
code{overflow-wrap:anywhere;word-break:break-word}
.table-wrap{width:fit-content;max-width:100%;overflow-x:auto;margin:.5em 0 1.5em}
table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;white-space:nowrap}
th{background:#f2f4f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th.group{white-space:normal;font-weight:normal;background:#fff;color:#444;padding-top:.6em}
th.group b{color:#222}
#per-example th:first-child,#per-example td:first-child{position:sticky;left:0;background:#fff;
  max-width:12em;overflow:hidden;text-overflow:ellipsis}
#per-example th:first-child{background:#f2f4f8}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,300px),420px));gap:1em}
.charts svg{width:100%;height:auto}
.note{background:#f6f8fb;border-left:4px solid #4f7cc4;padding:.5em .8em}
.caveat{background:#fff6e0;border-left:4px solid #d08a00;padding:.5em .8em}
.meta{color:#555}
.scroll-hint{display:none;color:#555;font-size:.9em}
@media (max-width:700px){.scroll-hint{display:block}}
"""

# tiny local models whose verdicts are close to chance: a run judged by one checks the plumbing
_PLUMBING_JUDGES = re.compile(r"(^|[^a-z])(tiny:|smollm2?[-_. ]?135m|gemma[-_ ]?3[-_. ]?270m)", re.IGNORECASE)


def is_plumbing_judge(model: object) -> bool:
    """Whether the judge ``model`` is a tiny local model (the ``tiny:`` judges; SmolLM2-135M or
    Gemma 3 270M by any route, a GGUF file or a server's model name): its scores check the
    pipeline, never a text's quality."""
    return isinstance(model, str) and bool(_PLUMBING_JUDGES.search(model))


def _num(v: object) -> str:
    """A table cell's number: readable (never ``3.363e-78``), the exact value in a tooltip where
    the two differ."""
    shown = format_readable(v)
    exact = exact_number(v)
    title = f" title='{html.escape(exact)}'" if isinstance(v, float) and shown != exact else ""
    return f"<td class='num'{title}>{html.escape(shown)}</td>"


def _signature_field(signature: object, key: str) -> str | None:
    match = re.search(rf"(?:^|\|){re.escape(key)}:([^|]*)", signature) if isinstance(signature, str) else None
    return match.group(1) if match else None


def _sentence_text(signature: object) -> str:
    """What one example's score of a corpus metric is, from its per-example signature."""
    smooth = _signature_field(signature, "smooth")
    if smooth == "nltk-method0":
        return ("nltk's <code>sentence_bleu</code> with no smoothing (method0): a sentence with no matching "
                "n-gram of some order (a short sentence's 4-grams, often) gets a near-zero score (nltk puts the "
                "smallest float in for that precision: about 10<sup>-78</sup> with four orders, shown here as "
                "&lt; 0.0001), however well its other orders match")
    if smooth == "nltk-method2":
        return ("nltk's <code>sentence_bleu</code> with method2 smoothing (one added to the matches and the "
                "totals of orders 2 and up)")
    if smooth:
        return f"sacrebleu's <code>sentence_bleu</code> (smooth_method {html.escape(smooth)})"
    return "the same formula on that example's statistics alone"


def _mean(values: Sequence[Any]) -> float | None:
    """The exact mean (:func:`~textgen_metrics.aggregation.mean`) of the finite numbers."""
    from .aggregation import mean

    return mean([v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)])


def _corpus_note(name: str, m: Mapping[str, Any], n: int) -> str:
    """Why a corpus metric's figure is not the mean of its per-example scores, beside both."""
    e = html.escape
    key = m["scores"][0] if m["scores"] else name
    corpus, mean = m["aggregate"].get(key), _mean(m["per_example"].get(key) or [])
    label = name if key == name else f"{name} {key}"
    figures = ""
    if isinstance(corpus, (int, float)) and mean is not None:
        figures = (f" Here: corpus {e(label)} <b>{e(format_readable(float(corpus)))}</b>, mean of the "
                   f"per-example scores <b>{e(format_readable(mean))}</b>.")
    return (f"<p class='note'><b>Corpus and per-example figures differ.</b> The summary's {e(label)} is a "
            f"corpus score: the statistics of all {n} examples (for BLEU, the n-gram matches and lengths) are "
            f"summed, then scored once. It is <b>not the mean of the per-example scores</b>.{figures} "
            f"Each per-example score scores that example alone: "
            f"{_sentence_text(m['per_example'].get('signature'))}.</p>")


def _aggregate_text(m: Mapping[str, Any], n: int) -> str:
    if m.get("corpus"):
        return f"corpus score of all {n} examples (not a mean of the per-example scores)"
    scored = len([v for v in (m["per_example"].get(m["scores"][0]) or []) if v is not None]) if m["scores"] else n
    return f"mean over the {scored} examples with a score" + ("" if scored == n else f" (of {n})")


def _caveat(models: Sequence[str]) -> str:
    e = html.escape
    names = ", ".join(f"<code>{e(x)}</code>" for x in models)
    return (f"<p class='caveat' role='note'><b>This run checks the plumbing, not a judge's quality.</b> "
            f"The judge {names} is a tiny local model (SmolLM2-135M or Gemma 3 270M class): its verdicts are "
            f"close to chance, so its scores say nothing about the texts. Judge with a capable model before "
            f"reading them as quality.</p>")


def report_html(report: Mapping[str, Any], max_rows: int = 2000) -> str:
    """The report (from ``score_records``) as one HTML page: the summary table (each figure with
    what it is: a corpus score or a mean), per metric its options, a note where its corpus score
    is not the mean of its per-example scores, the judge's usage (and the plumbing caveat of a
    tiny judge), a histogram of each per-example score and its time; then the per-example scores.
    The credentials of any URL in it are masked (``http://***@host/v1``)."""
    e = html.escape
    n = report["examples"]
    plumbing = sorted({str(m["aggregate"].get("judge_model")) for m in report["metrics"].values()
                       if is_plumbing_judge(m["aggregate"].get("judge_model"))})
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
           "<meta name='viewport' content='width=device-width, initial-scale=1'>",
           f"<title>textgen-metrics report: {e(str(report.get('source', '')))}</title>",
           f"<style>{_STYLE}</style></head><body>",
           "<h1>textgen-metrics report</h1>",
           f"<p class='meta'>{n} examples from <code>{e(str(report.get('source', '')))}</code>; "
           f"textgen-metrics {e(report['textgen_metrics'])}; "
           f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC</p>"]
    if plumbing:
        out.append(_caveat(plumbing))
    out.append("<h2>Summary</h2><div class='table-wrap'><table id='summary'>"
               "<tr><th>score</th><th>value</th></tr>")
    for name, m in report["metrics"].items():  # each metric's rows under what its values are
        out.append(f"<tr><th colspan='2' class='group'><b>{e(name)}</b>: {e(_aggregate_text(m, n))}</th></tr>")
        out += [f"<tr><td>{e(k)}</td>{_num(v)}</tr>" for k, v in m["summary"].items()]
    out.append("</table></div>")
    if any(m.get("corpus") for m in report["metrics"].values()):
        out.append("<p>A corpus score is not the mean of the per-example scores below: each metric's section "
                   "says why.</p>")
    ids = report["ids"]
    lines = report.get("lines")
    columns = []
    for name, m in report["metrics"].items():
        out.append(f"<h2 id='metric-{e(name)}'>{e(name)}</h2>")
        if m["options"]:
            out.append(f"<p>options: <code>{e(json.dumps(m['options'], default=str))}</code></p>")
        agg = m["aggregate"]
        if m.get("corpus"):
            out.append(_corpus_note(name, m, n))
        if "judge_usage" in agg:
            u = agg["judge_usage"]
            out.append(f"<p>judge <code>{e(str(agg.get('judge_model')))}</code>: "
                       + ", ".join(f"{e(k.replace('_', ' '))} {e(format_readable(v))}" for k, v in u.items()) + "</p>")
            if is_plumbing_judge(agg.get("judge_model")):
                out.append(_caveat([str(agg.get("judge_model"))]))
        errors = agg.get("errors") or []
        if errors:
            def where(i: int) -> str:
                return locate(str(report.get("source", "")), lines, i) if lines and i < len(lines) else f"row {i + 1}"

            out.append(f"<p>{len(errors)} example(s) got no score: " + "; ".join(
                f"{where(x['index'])} ({e(str(ids[x['index']]) if x['index'] < len(ids) else '')}): "
                f"{e(str(x['error'])[:200])}" for x in errors[:20]) + "</p>")
        out.append("<div class='charts'>")
        for key in m["scores"]:
            label = f"{name}: {key}" if key != name else name
            out.append(svg_histogram(m["per_example"][key], label))
            columns.append((f"{name}.{key}" if key != name else name, m["per_example"][key]))
        out.append(f"</div><p class='meta'>{e(name)} computed in {m['seconds']:.3f} s</p>")
    corpus = [name for name, m in report["metrics"].items() if m.get("corpus")]
    out.append("<h2>Per example</h2><p>Each value scores one example alone"
               + (f"; for {e(', '.join(corpus))} these are sentence-level scores, whose mean is not the corpus "
                  "score of the summary" if corpus else "")
               + ". A value under 0.0001 reads &lt; 0.0001 (its exact value is in the cell's tooltip and the JSON "
               "report).</p><p class='scroll-hint'>Scroll the table sideways for every score.</p>")
    out.append("<div class='table-wrap'><table id='per-example'><tr><th>id</th>"
               + "".join(f"<th>{e(c)}</th>" for c, _ in columns) + "</tr>")
    for i in range(min(len(ids), max_rows)):
        out.append(f"<tr><td title='{e(str(ids[i]))}'>{e(str(ids[i]))}</td>"
                   + "".join(_num(v[i]) for _, v in columns) + "</tr>")
    out.append("</table></div>")
    if len(ids) > max_rows:
        out.append(f"<p>First {max_rows} of {len(ids)} examples shown; all are in the JSON report.</p>")
    out.append("</body></html>")
    return mask_url_credentials("\n".join(out))  # a judge URL's user:password@, wherever it was quoted
