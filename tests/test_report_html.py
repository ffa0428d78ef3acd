"""The HTML report of ``textgen-metrics score --html`` as a person reads it, in Debian's chromium
driven by Playwright at a laptop's width (1280x900) and a phone's (390x844): no horizontal
overflow of the page, tables that scroll inside their own box with every column reachable, SVG
charts whose texts (title, counts, axis) never overlap, numbers never in exponent notation, the
corpus/per-example difference said beside the figures, and a tiny judge's plumbing caveat.
Screenshots land under ``artifacts/screenshots/`` (or ``$TEXTGEN_METRICS_ARTIFACTS``)."""

import itertools
import json
import os
import re
import subprocess
import sys

import pytest

from chat_server import ChatServer, schema_answer
from conftest import ROOT
from scaleout_judge import answer
from textgen_metrics.judges.function import CallableJudge
from textgen_metrics.report import is_plumbing_judge, report_html
from textgen_metrics.scoring import read_table, score_records

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = os.environ.get("TEXTGEN_METRICS_ARTIFACTS") or str(ROOT / "artifacts" / "screenshots")
SAMPLE = ROOT / "data" / "sample_summaries.jsonl"
VIEWPORTS = {"laptop": (1280, 900), "phone": (390, 844)}
PLUMBING = "checks the plumbing, not a judge's quality"


class TinyStandIn(CallableJudge):
    """A function judge that reports itself as the packaged tiny judge (backend ``tiny``)."""

    backend = "tiny"


@pytest.fixture(scope="module")
def cli_report(tmp_path_factory):
    """The CLI's report of the bundled sample: rouge, bleu, meteor, and faithfulness judged by a
    loopback server whose model is the tiny SmolLM2 GGUF (the server route of the tiny judge)."""
    out = tmp_path_factory.mktemp("report")
    with ChatServer(schema_answer) as srv:
        proc = subprocess.run(
            [sys.executable, "-m", "textgen_metrics", "score", str(SAMPLE),
             "--metrics", "rouge,bleu,meteor,faithfulness", "--column", "contexts=source",
             "--judge", "openai:SmolLM2-135M-Instruct.Q4_1.gguf",
             "--judge-url", srv.url, "--html", str(out / "r.html"), "--out", str(out / "r.json")],
            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "OPENAI_API_KEY": "k"})
    assert proc.returncode == 0, proc.stderr
    return (out / "r.html").read_text(), json.loads((out / "r.json").read_text())


@pytest.fixture(scope="module")
def library_report():
    """The same run through the library with a function judge named as the tiny judge."""
    rows, lines = read_table(str(SAMPLE))
    judge = TinyStandIn(answer, model="tiny:smollm2")
    report = score_records(rows, ["rouge", "bleu", "meteor", "faithfulness"], columns={"contexts": "source"},
                           judge=judge, source=str(SAMPLE), lines=lines)
    return report_html(report), report


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "Debian's chromium is missing: `make system` installs it"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
            "--disable-background-networking", "--disable-component-update"])
        yield b
        b.close()


def visible_text(page_html):
    """The page's text outside tags (tooltips in attributes left out)."""
    return re.sub(r"<[^>]*>", " ", page_html)


def test_figures_are_labelled_and_readable(cli_report):
    page, report = cli_report
    bleu = report["metrics"]["bleu"]
    sentence = bleu["per_example"]["bleu"]
    assert any(0 < v < 1e-4 for v in sentence)  # the sample has unsmoothed near-zero sentence BLEU
    text = visible_text(page)
    assert not re.search(r"\d(\.\d+)?e[-+]\d", text), re.findall(r"\S*\de[-+]\d\S*", text)[:5]
    assert "&lt; 0.0001" in page
    tiny = next(v for v in sentence if 0 < v < 1e-4)
    assert f"title='{tiny!r}'>&lt; 0.0001</td>" in page  # the exact value in the tooltip
    # corpus BLEU beside the mean of the sentence scores, and why they differ
    assert "not the mean of the per-example scores" in page and "method0" in page
    mean = sum(sentence) / len(sentence)
    from textgen_metrics.numbers import format_readable

    assert f"<b>{format_readable(bleu['aggregate']['bleu'])}</b>" in page
    assert f"<b>{format_readable(mean)}</b>" in page
    assert "corpus score of all 30 examples" in page and "mean over the 30 examples with a score" in page
    for name in ("rouge", "bleu", "meteor", "faithfulness"):
        assert f"{name} computed in " in page
    assert not re.search(r"<p>\d+\.\d+ s</p>", page)  # no unlabelled time
    assert PLUMBING in page and "SmolLM2-135M-Instruct.Q4_1.gguf" in page


def test_a_tiny_judge_report_carries_the_caveat_and_a_clean_signature(library_report):
    page, report = library_report
    agg = report["metrics"]["faithfulness"]["aggregate"]
    assert agg["judge_model"] == "tiny:smollm2" and PLUMBING in page
    assert "|judge:tiny:smollm2|" in agg["signature"] and "tiny:tiny" not in agg["signature"]
    assert report["lines"] == list(range(1, 31))
    for model, want in [("tiny:gemma3", True), ("hf:/m/SmolLM2-135M-Instruct.Q4_1.gguf", True),
                        ("gemma-3-270m-it", True), ("gpt-4o-mini", False), ("gemma-3-27b-it", False),
                        ("smollm2-1.7b", False), (None, False)]:
        assert is_plumbing_judge(model) is want, model


def test_a_real_judge_report_has_no_caveat():
    rows, lines = read_table(str(SAMPLE))
    report = score_records(rows[:3], ["faithfulness"], columns={"contexts": "source"},
                           judge=CallableJudge(answer, model="gpt-4o"), source=str(SAMPLE), lines=lines[:3])
    assert PLUMBING not in report_html(report)


def _overlaps(a, b, tol=0.5):
    return (a["x"] + tol < b["x"] + b["width"] and b["x"] + tol < a["x"] + a["width"]
            and a["y"] + tol < b["y"] + b["height"] and b["y"] + tol < a["y"] + a["height"])


@pytest.mark.parametrize("which", ["cli", "library"])
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_the_report_fits_the_screen_and_nothing_collides(browser, cli_report, library_report, tmp_path,
                                                         which, viewport):
    page_html = (cli_report if which == "cli" else library_report)[0]
    path = tmp_path / "report.html"
    path.write_text(page_html)
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        # the page never scrolls sideways
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        # every chart's texts apart (the title above the tallest bar's count, the axis values)
        charts = page.locator("svg")
        assert charts.count() == 7  # rouge's four, bleu, meteor, faithfulness
        for i in range(charts.count()):
            chart = charts.nth(i)
            box = chart.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (i, box)
            texts = chart.locator("text")
            boxes = [texts.nth(j).bounding_box() for j in range(texts.count())]
            for a, b in itertools.combinations(boxes, 2):
                assert not _overlaps(a, b), (chart.get_attribute("data-metric"), a, b)
            title = chart.locator("text.chart-title").bounding_box()
            assert title["x"] + title["width"] <= box["x"] + box["width"] + 0.5  # never cut off
        # every table inside the page, its last column reachable by scrolling its own box
        wraps = page.locator(".table-wrap")
        assert wraps.count() == 2
        for i in range(wraps.count()):
            wrap = wraps.nth(i)
            box = wrap.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5
            fits = wrap.evaluate("w => w.scrollWidth <= w.clientWidth")
            if not fits:
                assert wrap.evaluate("w => getComputedStyle(w).overflowX") in ("auto", "scroll")
            table_width = wrap.evaluate("w => w.querySelector('table').getBoundingClientRect().width")
            assert wrap.evaluate("w => w.scrollWidth") >= table_width - 1  # no column cut off
            wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
            last = wrap.locator("tr").first.locator("th").last.bounding_box()
            now = wrap.bounding_box()
            assert last["x"] + last["width"] <= now["x"] + now["width"] + 1, (i, last, now)
            wrap.evaluate("w => { w.scrollLeft = 0; }")
        assert page.locator("#per-example tr").count() == 31
        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, f"report-{which}-{viewport}.png")
        page.screenshot(path=shot, full_page=True)
        assert os.path.getsize(shot) > 10_000
    finally:
        context.close()
