"""The judge card: an audit's result (``run.audit``) said in plain words, as a text summary for
the terminal and as one HTML page with charts (inline SVG, no script): bars with their intervals
for the rates, the score shift on an axis through zero, and a reliability diagram for the
calibration. As TruLens' alignment report, the findings are computed once (:func:`findings`)
and rendered twice; each says what was found, how sure it is (the interval) and whether the
probe is flagged by its rule (docs/audit.md).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..significance import DEFAULT_CONFIDENCE

__all__ = ["Finding", "findings", "format_summary", "judge_card_html"]


@dataclasses.dataclass(frozen=True)
class Finding:
    """One sentence of the card: the probe, what was found, and its flag (None: no flag rule)."""

    probe: str
    text: str
    flagged: bool | None = None

    def line(self) -> str:
        mark = {True: ": flagged", False: "", None: ""}[self.flagged]
        return f"{self.text}{mark}"


def _pct(stat: Mapping[str, Any] | None) -> str:
    if not stat or stat.get("value") is None:
        return "undefined"
    ci = stat.get("ci")
    text = f"{stat['value']:.0%}"
    return text + (f" [{ci[0]:.0%}, {ci[1]:.0%}]" if ci else "")


def _num(stat: Mapping[str, Any] | None, signed: bool = False) -> str:
    if not stat or stat.get("value") is None:
        return "undefined"
    ci = stat.get("ci")
    f = "{:+.3f}" if signed else "{:.3f}"
    text = f.format(stat["value"])
    return text + (f" [{f.format(ci[0])}, {f.format(ci[1])}]" if ci else "")


def _position(p: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Finding]:
    out = [Finding("position", f"prefers the answer shown first in {_pct(p['first_position_rate'])} of usable verdicts"
                               + ("" if p["flagged"] else " (no position preference shown: the interval holds 50%)"),
                   bool(p["flagged"])),
           Finding("position", f"keeps its verdict when the two answers swap places in "
                               f"{_pct(p['positional_agreement'])} of pairs; kappa between the orders "
                               f"{_num(p['kappa'])}")]
    if p["accuracy_first"]["value"] is not None:
        out.append(Finding("position", f"agrees with the gold label in {_pct(p['accuracy_first'])} of verdicts in the "
                                       f"original order and {_pct(p['accuracy_second'])} in the swapped order"))
    kept = settings.get("missing") == "as_verdict"
    out.append(Finding("position", f"{p['pairs']} pairs audited; {p['missing']} with an unusable verdict "
                                   + ("kept, 'no verdict' a verdict of its own" if kept else "left out")))
    return out


def _verbosity(v: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Finding]:
    words = len(str(v.get("filler", "")).split())
    return [Finding("verbosity", f"a content-free filler of {words} words appended to the judged text moves its score "
                                 f"by {_num(v['mean_shift'], signed=True)} on average"
                                 + (" (the judge favours the longer text)" if v["flagged"]
                                    and (v["mean_shift"]["value"] or 0) > 0 else ""), bool(v["flagged"])),
            Finding("verbosity", f"the verdict changes on {_pct(v['changed_share'])} of {v['examples']} examples "
                                 f"({v['missing']} left out: unscored in either run)")]


def _repeat(r: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Finding]:
    needed = r["repeats_needed"]
    return [Finding("repeat", f"asked {r['repeats']} times, the verdict flips on {_pct(r['flip_rate'])} of "
                              f"examples", bool(r["flagged"])),
            Finding("repeat", f"intraclass correlation ICC(1,1) {_num(r['icc'])}; mean spread of a score "
                              f"{_num(r['spread'])}; a stable majority verdict (95%) needs "
                              f"{needed if needed < 99 else 'at least 99'} repeat{'s' if needed != 1 else ''}"),
            Finding("repeat", f"{r['examples']} examples scored in every repeat; {r['missing']} left out")]


def _calibration(c: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Finding]:
    return [Finding("calibration", f"Brier score {_num(c['brier'])}; expected calibration error (10 bins) "
                                   f"{_num(c['ece'])}"),
            Finding("calibration", f"after an isotonic recalibration fitted on {c['recalibration']['fitted']} rows, "
                                   f"the ECE on the other {c['recalibration']['measured']} is "
                                   f"{_num(c['ece_recalibrated'])}"),
            Finding("calibration", f"{c['examples']} examples with a score and a label; {c['missing']} left out")]


def _p(value: float | None) -> str:
    if value is None:
        return "undefined"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def _alt_test(a: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Finding]:
    wins, tested, eps = a["wins"], a["tested"], f"{a['epsilon']:g}"
    verdict = "can" if a["passed"] else "cannot"
    out = [Finding("alt_test", f"the judge {verdict} stand in for an annotator: it beats {wins} of {tested} "
                               f"annotator{'s' if tested != 1 else ''} at epsilon {eps} (winning rate "
                               f"{_pct(a['winning_rate'])}; it passes at 50% or more)", not a["passed"]),
           Finding("alt_test", f"advantage probability {_pct(a['advantage_probability'])}: how often the judge "
                               "matches the other annotators at least as well as the annotator left out")]
    for e in a["per_annotator"]:
        if "skipped" in e:
            out.append(Finding("alt_test", f"annotator {e['annotator']!r} skipped: {e['skipped']}"))
        else:
            out.append(Finding("alt_test", f"annotator {e['annotator']!r}: "
                                           f"{'beaten' if e['rejected'] else 'not beaten'} on {e['rows']} rows (the "
                                           f"judge as good or better on {e['judge_advantage']:.0%}, the annotator on "
                                           f"{e['annotator_advantage']:.0%}; one-sided p {_p(e['p_value'])}, "
                                           f"Benjamini-Yekutieli at {a['alpha']:g})"))
    out.append(Finding("alt_test", f"{a['rows']} rows rated by the judge and at least 2 annotators "
                                   f"({a['alignment']} alignment); {a['missing']} without a judge value left out"))
    return out


_PROBE_TEXT = {"position": _position, "verbosity": _verbosity, "repeat": _repeat, "calibration": _calibration,
               "alt_test": _alt_test}


def findings(result: Mapping[str, Any]) -> list[Finding]:
    """The card's sentences, probe by probe, then the unusable answers."""
    out: list[Finding] = []
    for probe, value in result["probes"].items():
        if "skipped" in value:
            out.append(Finding(probe, f"skipped: {value['skipped']}"))
        else:
            out.extend(_PROBE_TEXT[probe](value, result.get("settings") or {}))
    unscored = int(result.get("unscored", 0))
    out.append(Finding("answers", f"{result.get('requests', 0)} requests sent; {unscored} verdict"
                                  f"{'s' if unscored != 1 else ''} stayed unusable after the re-asks (counted, "
                                  "never scored)", unscored > 0))
    return out


def format_summary(result: Mapping[str, Any]) -> str:
    """The card as text for the terminal."""
    head = (f"judge audit: {result.get('judge', '?')} on {result.get('metric', '?')}, {result.get('examples', '?')} "
            f"examples from {result.get('source', '?')}")
    level = (result.get("settings") or {}).get("confidence_level", DEFAULT_CONFIDENCE)
    lines = [head, f"[intervals: {level:.0%} percentile bootstrap]"]
    current = None
    for f in findings(result):
        if f.probe != current:
            current = f.probe
            lines.append(f"{f.probe}:")
        lines.append(f"  {'! ' if f.flagged else '- '}{f.line()}")
    flagged = [p for p, v in result["probes"].items() if v.get("flagged")]
    if result.get("unscored"):
        flagged.append("unusable answers")
    lines.append("flagged: " + (", ".join(flagged) if flagged else "nothing"))
    return "\n".join(lines)


# -- charts --------------------------------------------------------------------------------------
_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:60em;color:#222;line-height:1.45}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
ul.findings{padding-left:1.2em}li.flag{color:#8a1c1c;font-weight:600}
.note{color:#555;font-size:.9em}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em}
td.num{text-align:right;font-variant-numeric:tabular-nums}
svg{max-width:100%;height:auto}
"""


def _bars(rows: Sequence[tuple[str, Mapping[str, Any], float | None]], title: str) -> str:
    """Rates on [0, 1]: a bar per rate with its interval and, where given, a reference line."""
    e = html.escape
    label_w, plot_w, value_w, row_h, top = 190, 360, 150, 24, 26
    width, height = label_w + plot_w + value_w, top + row_h * len(rows) + 26

    def x(v: float) -> float:
        return label_w + plot_w * min(max(v, 0.0), 1.0)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" role="img" font-family="sans-serif"><title>{e(title)}</title>']
    base = height - 20
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{base}" stroke="#eee"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{base + 14}" font-size="10" text-anchor="middle">{t:.0%}</text>')
    for i, (name, stat, ref) in enumerate(rows):
        y = top + i * row_h
        parts.append(f'<text x="{label_w - 8}" y="{y + 15}" font-size="12" text-anchor="end">{e(name)}</text>')
        value = stat.get("value")
        if value is None:
            parts.append(f'<text x="{label_w + 4}" y="{y + 15}" font-size="11" fill="#a00">undefined</text>')
            continue
        parts.append(f'<rect x="{label_w}" y="{y + 5}" width="{x(value) - label_w:.1f}" height="{row_h - 10}" '
                     f'fill="#8aa6d6"><title>{e(name)}: {value:.3f}</title></rect>')
        ci = stat.get("ci")
        if ci:
            mid = y + row_h / 2
            parts.append(f'<line x1="{x(ci[0]):.1f}" y1="{mid}" x2="{x(ci[1]):.1f}" y2="{mid}" stroke="#1f4e99" '
                         'stroke-width="2"/>')
            for end in ci:
                parts.append(f'<line x1="{x(end):.1f}" y1="{mid - 5}" x2="{x(end):.1f}" y2="{mid + 5}" '
                             'stroke="#1f4e99" stroke-width="2"/>')
        if ref is not None:
            parts.append(f'<line x1="{x(ref):.1f}" y1="{y + 2}" x2="{x(ref):.1f}" y2="{y + row_h - 2}" stroke="#c33" '
                         'stroke-dasharray="3,2"/>')
        parts.append(f'<text x="{label_w + plot_w + 8}" y="{y + 15}" font-size="11">{e(_pct(stat))}</text>')
    parts.append(f'<line x1="{label_w}" y1="{base}" x2="{label_w + plot_w}" y2="{base}" stroke="#333"/></svg>')
    return "".join(parts)


def _shift(stat: Mapping[str, Any], span: Sequence[float]) -> str:
    """The mean shift and its interval on an axis through zero (the score's own units)."""
    e = html.escape
    width, height, left, plot_w = 560, 70, 40, 480
    seen = [abs(float(v)) for v in [*(stat.get("ci") or []), stat.get("value") or 0.0]]
    reach = 1.2 * max([0.05 * (float(span[1]) - float(span[0])), *seen])
    lo, hi = -reach, reach

    def x(v: float) -> float:
        return left + plot_w * (v - lo) / (hi - lo)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" role="img" font-family="sans-serif"><title>mean score shift</title>',
             f'<line x1="{left}" y1="40" x2="{left + plot_w}" y2="40" stroke="#333"/>',
             f'<line x1="{x(0):.1f}" y1="15" x2="{x(0):.1f}" y2="48" stroke="#c33" stroke-dasharray="3,2"/>']
    for t in (lo, 0.0, hi):
        parts.append(f'<text x="{x(t):.1f}" y="62" font-size="10" text-anchor="middle">{t:+.2g}</text>')
    if stat.get("value") is not None:
        ci = stat.get("ci")
        if ci:
            parts.append(f'<line x1="{x(ci[0]):.1f}" y1="28" x2="{x(ci[1]):.1f}" y2="28" stroke="#1f4e99" '
                         'stroke-width="2"/>')
        parts.append(f'<circle cx="{x(stat["value"]):.1f}" cy="28" r="5" fill="#1f4e99"><title>'
                     f'{e(_num(stat, signed=True))}</title></circle>')
        parts.append(f'<text x="{left}" y="12" font-size="11">mean shift {e(_num(stat, signed=True))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _reliability(bins: Sequence[Mapping[str, Any]]) -> str:
    """The reliability diagram: share of 1s against mean p per bin (a dot sized by its count),
    the diagonal of perfect calibration, and the bins' counts as bars beneath."""
    e = html.escape
    size, left, top = 300, 40, 14
    total = sum(b["count"] for b in bins) or 1

    def x(v: float) -> float:
        return left + size * v

    def y(v: float) -> float:
        return top + size * (1 - v)

    h = top + size + 90
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {left + size + 20} {h}" width="{left + size + 20}"'
             f' height="{h}" role="img" font-family="sans-serif"><title>reliability diagram</title>',
             f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="#333"/>',
             f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#c33" stroke-dasharray="4,3"/>']
    for t in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{x(t):.1f}" y="{y(0) + 14}" font-size="10" text-anchor="middle">{t:g}</text>')
        parts.append(f'<text x="{left - 6}" y="{y(t) + 4:.1f}" font-size="10" text-anchor="end">{t:g}</text>')
    parts.append(f'<text x="{x(0.5)}" y="{y(0) + 28}" font-size="11" text-anchor="middle">mean judge probability'
                 '</text>')
    parts.append(f'<text x="12" y="{y(0.5)}" font-size="11" transform="rotate(-90 12 {y(0.5)})" '
                 'text-anchor="middle">share of 1s</text>')
    bar_base = y(0) + 80
    for b in bins:
        lo, hi = b["range"]
        height = 40 * b["count"] / total
        parts.append(f'<rect x="{x(lo) + 1:.1f}" y="{bar_base - height:.1f}" width="{size / len(bins) - 2:.1f}" '
                     f'height="{height:.1f}" fill="#c9d6ee"><title>{lo:g}-{hi:g}: {b["count"]} rows</title></rect>')
        if b["count"]:
            r = 3 + 7 * (b["count"] / total) ** 0.5
            parts.append(f'<circle cx="{x(b["mean_p"]):.1f}" cy="{y(b["share"]):.1f}" r="{r:.1f}" fill="#1f4e99" '
                         f'fill-opacity="0.8"><title>{e(f"{lo:g}-{hi:g}")}: {b["count"]} rows, mean p '
                         f'{b["mean_p"]:.3f}, share of 1s {b["share"]:.3f}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def judge_card_html(result: Mapping[str, Any]) -> str:
    """The audit as one HTML page: the findings in words, then each probe's chart and table."""
    e = html.escape
    probes = result["probes"]
    settings = result.get("settings") or {}
    level = settings.get("confidence_level", DEFAULT_CONFIDENCE)
    title = f"Judge card: {result.get('judge', '?')} on {result.get('metric', '?')}"
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
           "<meta name='viewport' content='width=device-width, initial-scale=1'>",
           f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>", f"<h1>{e(title)}</h1>",
           f"<p class='note'>{e(str(result.get('examples', '?')))} examples from {e(str(result.get('source', '?')))}; "
           f"{e(str(result.get('requests', 0)))} requests sent; intervals: {level:.0%} percentile bootstrap over pairs "
           f"or examples ({e(str(settings.get('n_resamples', '')))} resamples, seed "
           f"{e(str(settings.get('seed')))}).</p>", "<h2>Findings</h2><ul class='findings'>"]
    for f in findings(result):
        out.append(f"<li class='{'flag' if f.flagged else ''}'>{e(f.probe)}: {e(f.line())}</li>")
    out.append("</ul>")
    rates: list[tuple[str, Mapping[str, Any], float | None]] = []
    if "position" in probes and "skipped" not in probes["position"]:
        p = probes["position"]
        rates += [("first position rate", p["first_position_rate"], 0.5),
                  ("positional agreement", p["positional_agreement"], None)]
        if p["accuracy_first"]["value"] is not None:
            rates += [("accuracy, original order", p["accuracy_first"], None),
                      ("accuracy, swapped order", p["accuracy_second"], None)]
    if "verbosity" in probes and "skipped" not in probes["verbosity"]:
        rates.append(("verdicts changed by filler", probes["verbosity"]["changed_share"], None))
    if "repeat" in probes and "skipped" not in probes["repeat"]:
        rates.append(("verdicts flipping over repeats", probes["repeat"]["flip_rate"], None))
    if rates:
        out.append("<h2>Rates</h2>" + _bars(rates, "rates with their intervals")
                   + "<p class='note'>Bars: the rate; lines: its interval; dashed red: 50%, no position "
                     "preference.</p>")
    if "verbosity" in probes and "skipped" not in probes["verbosity"]:
        v = probes["verbosity"]
        out.append("<h2>Verbosity</h2>" + _shift(v["mean_shift"], settings.get("score_range") or (0.0, 1.0)))
        out.append(f"<p class='note'>Filler appended after a blank line: <q>{e(str(v.get('filler', '')))}</q></p>")
    if "calibration" in probes and "skipped" not in probes["calibration"]:
        c = probes["calibration"]
        out.append("<h2>Calibration</h2>" + _reliability(c["bins"]))
        out.append("<table><tr><th>bin</th><th>rows</th><th>mean p</th><th>share of 1s</th></tr>")
        for b in c["bins"]:
            mean_p = "-" if b["mean_p"] is None else f"{b['mean_p']:.3f}"
            share = "-" if b["share"] is None else f"{b['share']:.3f}"
            out.append(f"<tr><td>{b['range'][0]:g}-{b['range'][1]:g}</td><td class='num'>{b['count']}</td>"
                       f"<td class='num'>{mean_p}</td><td class='num'>{share}</td></tr>")
        out.append("</table>")
    if "alt_test" in probes and "skipped" not in probes["alt_test"]:
        a = probes["alt_test"]
        out.append("<h2>Can the judge stand in for an annotator? (alt-test)</h2>"
                   + _bars([("winning rate", a["winning_rate"], 0.5),
                            ("advantage probability", a["advantage_probability"], None)], "alt-test")
                   + f"<p class='note'>Leaving out one annotator at a time, the judge and that annotator are each "
                     f"compared with the other annotators ({e(str(a['alignment']))} per row); the judge beats the "
                     f"annotator when a one-sided paired t-test, allowing epsilon {a['epsilon']:g} for its lower "
                     f"cost, rejects that the annotator is better (Benjamini-Yekutieli across annotators at "
                     f"{a['alpha']:g}). It passes when it beats half of them or more (dashed red: 50%). Calderon, "
                     "Reichart and Dror, ACL 2025.</p>")
        out.append("<table><tr><th>annotator</th><th>rows</th><th>judge as good or better</th><th>annotator as "
                   "good or better</th><th>p</th><th>beaten</th></tr>")
        for row in a["per_annotator"]:
            if "skipped" in row:
                out.append(f"<tr><td>{e(str(row['annotator']))}</td><td class='num'>{row['rows']}</td>"
                           f"<td colspan='4'>skipped: {e(str(row['skipped']))}</td></tr>")
                continue
            out.append(f"<tr><td>{e(str(row['annotator']))}</td><td class='num'>{row['rows']}</td>"
                       f"<td class='num'>{row['judge_advantage']:.0%}</td>"
                       f"<td class='num'>{row['annotator_advantage']:.0%}</td>"
                       f"<td class='num'>{e(_p(row['p_value']))}</td><td>{'yes' if row['rejected'] else 'no'}</td>"
                       "</tr>")
        out.append("</table>")
    runs = result.get("runs") or []
    if runs:
        out.append("<h2>Runs</h2><table><tr><th>run</th><th>requests</th><th>cached</th><th>unscored</th></tr>")
        for r in runs:
            out.append(f"<tr><td>{e(str(r['run']))}</td><td class='num'>{r['requests']}</td>"
                       f"<td class='num'>{r['cached']}</td><td class='num'>{r['unscored']}</td></tr>")
        out.append("</table><p class='note'>An answer that stayed unusable after the re-asks leaves its example "
                   "without a score in that run: counted here, left out of every statistic, never scored.</p>")
    out.append("</body></html>")
    return "\n".join(out)
