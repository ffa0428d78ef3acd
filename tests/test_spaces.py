"""The Gradio Spaces in a real browser: Debian's chromium driven by Playwright against each
``app.py`` served on 127.0.0.1. Type inputs, click, read the score; screenshots are saved under
``artifacts/screenshots/`` (or ``$TEXTGEN_METRICS_ARTIFACTS``)."""

import contextlib
import json
import os
import runpy
import socket

import pytest

import textgen_metrics
from chat_server import ChatServer, schema_answer
from conftest import ROOT
from textgen_metrics.spaces import parse_rows

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = os.environ.get("TEXTGEN_METRICS_ARTIFACTS") or str(ROOT / "artifacts" / "screenshots")
METRIC_DIRS = sorted(p.parent for p in ROOT.glob("metrics/*/app.py"))
SECRET = "sk-space-SECRET-777"

# what the test types, by input column ("|||" separates several texts in one cell)
TYPED = {"predictions": "the cat sat on the mat . it was warm",
         "references": "the cat is on the mat ||| a cat sat on a mat",
         "queries": "where did the cat sit ?",
         "contexts": "the cat sat on the mat . ||| dogs bark .",
         "sources": "the cat sat on the mat all day . it was warm .",
         "baselines": "on a mat ."}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(app_py):
    """Run the Space's own app.py and serve its ``demo`` on 127.0.0.1."""
    demo = runpy.run_path(str(app_py))["demo"]
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "Debian's chromium is missing: `make system` installs it"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
            "--disable-background-networking", "--disable-component-update"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def judge_server():
    with ChatServer(schema_answer) as srv:
        yield srv


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def screenshot(page, name):
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, f"{name}.png")
    page.screenshot(path=path, full_page=True)
    assert os.path.getsize(path) > 10_000
    return path


def edit_cell(page, table, row, col, text):
    cell = page.locator(f"#{table} [data-testid=cell-{row}-{col}]")
    cell.dblclick()
    editor = cell.locator("textarea")
    editor.wait_for()
    editor.fill(text)
    editor.press("Enter")
    assert cell.locator("span[data-editable]").inner_text().strip() == text


def read_key_values(page, table):
    """The rows of a two-column key/value table as a dict of cell texts."""
    page.locator(f"#{table} [data-testid=cell-0-0]").wait_for()
    out, row = {}, 0
    while page.locator(f"#{table} [data-testid=cell-{row}-0]").count():
        key = page.locator(f"#{table} [data-testid=cell-{row}-0] span").first.inner_text().strip()
        out[key] = page.locator(f"#{table} [data-testid=cell-{row}-1] span").first.inner_text().strip()
        row += 1
    return out


def fill_judge(page, srv):
    page.locator("#judge-url textarea, #judge-url input").first.fill(srv.url)
    page.locator("#judge-model textarea, #judge-model input").first.fill("judge-space")
    page.locator("#judge-key input, #judge-key textarea").first.fill(SECRET)


def same(cell, value):
    if isinstance(value, (list, dict)):
        return json.loads(cell) == value
    return float(cell) == value


@pytest.mark.parametrize("metric_dir", METRIC_DIRS, ids=[p.name for p in METRIC_DIRS])
def test_metric_space_in_the_browser(metric_dir, page, judge_server):
    import evaluate

    name = metric_dir.name
    with serve(metric_dir / "app.py") as url:
        page.goto(url)
        metric = evaluate.load(str(metric_dir))
        columns = type(metric).columns
        for col, column in enumerate(columns):
            edit_cell(page, "inputs", 0, col, TYPED[column])
        is_judged = "judge-url" in page.content()
        if is_judged:
            fill_judge(page, judge_server)
        sent = len(judge_server.headers)
        page.click("#compute")
        shown = read_key_values(page, "result-table")
        from_browser = judge_server.headers[sent:]
        # the same computation outside the browser
        options = dict(getattr(type(metric), "space_options", {}))  # what the options box opens with
        if is_judged:
            options["judge"] = textgen_metrics.OpenAIJudge("judge-space", base_url=judge_server.url, api_key="k")
        want = metric.compute(**parse_rows([[TYPED[c] for c in columns]], columns), **options)
        keys = [k for k in want if k.startswith(name) or k in ("f1", "precision", "recall", "win_rate")]
        assert keys, want
        for key in keys:
            assert same(shown[key], want[key]), (key, shown[key], want[key])
        if is_judged:
            assert shown["judge_model"] == "judge-space" and not json.loads(shown["errors"])
            assert json.loads(shown["judge_usage"])["requests"] >= 1
            assert SECRET not in page.content()
            assert from_browser and all(h.get("Authorization") == f"Bearer {SECRET}" for h in from_browser)
        assert "Metric Card for" in page.content()  # the card below the widget
        screenshot(page, f"space-{name}")


def test_metric_space_shows_bad_input_as_an_error(page):
    with serve(ROOT / "metrics" / "rouge" / "app.py") as url:
        page.goto(url)
        page.locator("#options textarea, #options .cm-content").first.click()
        page.keyboard.press("Control+A")
        page.keyboard.type('{"rouge_types": ["rougeX"]}')
        page.click("#compute")
        page.get_by_text("Error:").wait_for()
        assert "rougeX" in page.locator("#error").inner_text()


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_playground_upload_metrics_judge_table_and_chart(page, judge_server, tmp_path):
    answers = ["Paris is in France.", "Paris is in France. It has 37 bridges.", "Lyon is a city in France.",
               "Paris has bridges. It is in Spain. It is big.", "Rome is the capital of Italy."]
    rows = [{"id": f"ex{i}", "prediction": a, "references": ["Paris is in France.", "Paris has 37 bridges."],
             "contexts": ["Paris is the capital of France.", "Paris has 37 bridges."]} for i, a in enumerate(answers)]
    data = tmp_path / "rag.jsonl"
    write_jsonl(data, rows)
    with serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        page.locator("#upload input[type=file]").set_input_files(str(data))
        page.get_by_text("rag.jsonl").first.wait_for()
        dropdown = page.locator("#metrics input")
        dropdown.click()
        dropdown.fill("faithfulness")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        page.get_by_text("Judge (an OpenAI-compatible server").click()
        fill_judge(page, judge_server)
        page.click("#score")
        shown = read_key_values(page, "summary")
        judge = textgen_metrics.OpenAIJudge("judge-space", base_url=judge_server.url, api_key="k")
        from textgen_metrics.scoring import score_records

        want = score_records(rows, ["rouge", "bleu", "faithfulness"], judge=judge)["summary"]
        assert set(shown) == set(want)
        for key, value in want.items():
            assert float(shown[key]) == pytest.approx(value, rel=1e-12), key
        # schema_answer: the claims are the sentences, verdicts yes, no, yes...: 1, 0.5, 1, 2/3, 1
        assert want["faithfulness"] == pytest.approx((1 + 0.5 + 1 + 2 / 3 + 1) / 5)
        # the chart: one bar chart per score, one bar per example
        charts = page.locator("#chart svg.bars")
        assert charts.count() == 6  # rouge1, rouge2, rougeL, rougeLsum, bleu, faithfulness
        assert page.locator("#chart svg.bars[data-metric=faithfulness] rect").count() == 5
        # the per-example table: ids and scores
        assert page.locator("#per-example [data-testid=cell-4-0] span").first.inner_text().strip() == "ex4"
        assert SECRET not in page.content()
        screenshot(page, "playground")


def test_playground_errors_are_shown_not_raised(page, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("answer,ref\nthe cat,the cat sat\n")
    with serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        page.click("#score")
        page.get_by_text("Error:").wait_for()
        assert "upload a CSV" in page.locator("#error").inner_text()
        page.locator("#upload input[type=file]").set_input_files(str(data))
        page.get_by_text("d.csv").first.wait_for()
        page.click("#score")
        page.get_by_text("no field 'prediction'").wait_for()
        columns = page.locator("#columns textarea, #columns input").first
        columns.fill('{"predictions": "answer", "references": "ref"}')
        page.click("#score")
        shown = read_key_values(page, "summary")
        assert float(shown["rouge1"]) == textgen_metrics.rouge(["the cat"], ["the cat sat"])["rouge1"]
