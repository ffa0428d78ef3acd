"""The Gradio Spaces in a real browser: Debian's chromium driven by Playwright against each
``app.py`` served on 127.0.0.1. Type inputs, click, read the score; screenshots are saved under
``artifacts/screenshots/`` (or ``$TEXTGEN_METRICS_ARTIFACTS``), and, with
``TEXTGEN_METRICS_DOCS=1``, those of each state that README shows into ``docs/``."""

import contextlib
import dataclasses
import itertools
import json
import os
import runpy
import shutil
import socket
import time

import pytest

import textgen_metrics
from chat_server import ChatServer, schema_answer
from conftest import ROOT
from textgen_metrics.spaces import FIRST_ANSWER_TIMEOUT, format_value, parse_rows

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


def screenshot(page, name, locator=None, docs=False, full_page=True):
    """A PNG of the page (or of one element) under ARTIFACTS; with docs=True and
    TEXTGEN_METRICS_DOCS=1 also into docs/ for README."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, f"{name}.png")
    if locator is not None:
        locator.screenshot(path=path)
    else:
        page.screenshot(path=path, full_page=full_page)
    assert os.path.getsize(path) > (2_000 if locator is not None else 10_000)
    if docs and os.environ.get("TEXTGEN_METRICS_DOCS") == "1":
        shutil.copy(path, ROOT / "docs" / f"{name}.png")
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


def upload(page, path):
    """Give the Space's file box ``path`` and wait until the server has stored it: the file's
    download link appears. (The file name itself is not a signal to wait for: Gradio shows it
    twice, once in a transient "uploading" line and then as ``<span>stem</span> <span>.ext</span>``,
    whose text is not the name; under load the transient line can come and go between two of
    Playwright's polls, and the wait then timed out with the upload done.)"""
    page.locator("#upload input[type=file]").set_input_files(str(path))
    page.locator(f"#upload a[data-testid=download-link][download='{path.name}']").wait_for()


def fill_judge(page, srv):
    page.locator("#judge-url textarea, #judge-url input").first.fill(srv.url)
    page.locator("#judge-model textarea, #judge-model input").first.fill("judge-space")
    page.locator("#judge-key input, #judge-key textarea").first.fill(SECRET)


def same(cell, value):
    """The cell shows the value with 4 significant digits (lists and dicts: as JSON so)."""
    return cell == format_value(value)


def toast(page):
    """The text of the gr.Error pop-up."""
    box = page.locator("[data-testid=toast-body]").last
    box.wait_for()
    return box.inner_text()


def close_toasts(page):
    for close in page.locator("[data-testid=toast-close]").all():
        with contextlib.suppress(Exception):
            close.click(timeout=2_000)


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
        keys = [k for k in want if k.startswith(name) or k in ("f1", "precision", "recall", "win_rate", "score")]
        assert keys, want
        for key in keys:
            assert same(shown[key], want[key]), (key, shown[key], want[key])
        if is_judged:
            assert shown["judge_model"] == "judge-space" and not json.loads(shown["errors"])
            assert json.loads(shown["judge_usage"])["requests"] >= 1
            assert SECRET not in page.content()
            assert from_browser and all(h.get("Authorization") == f"Bearer {SECRET}" for h in from_browser)
        assert "Metric Card for" in page.content()  # the card below the widget
        assert page.locator("#error").inner_text().strip() == ""
        screenshot(page, f"space-{name}", docs=name in ("rouge", "faithfulness"))


def type_options(page, text):
    page.locator("#options textarea, #options .cm-content").first.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def shows_error(page, expected, shot=None):
    """Both the pop-up and the line under the button say ``expected``; returns the line.
    ``shot``: the name of a screenshot of the view with both (for docs/)."""
    from playwright.sync_api import expect

    expect(page.locator("#error")).to_contain_text(expected, timeout=60_000)
    line = page.locator("#error").inner_text()
    assert "Error:" in line
    expect(page.locator("[data-testid=toast-body]").last).to_contain_text(expected)
    if shot:
        page.locator("#error").scroll_into_view_if_needed()
        page.wait_for_timeout(800)  # the pop-up fades in
        screenshot(page, shot, docs=True, full_page=False)
    close_toasts(page)
    return line


def test_metric_space_shows_bad_input_as_an_error(page):
    with serve(ROOT / "metrics" / "rouge" / "app.py") as url:
        page.goto(url)
        type_options(page, '{"rouge_types": ["rougeX"]}')
        page.click("#compute")
        shows_error(page, "Options: rouge_types: unknown rouge type 'rougeX'")


def test_metric_space_mistakes_are_sentences_naming_row_and_field(page):
    """Each mistake a sentence with the row and the field (or the box), as a gr.Error pop-up and
    under the button, escaped (``<model>`` stays visible), never a bare exception text."""
    with serve(ROOT / "metrics" / "rouge" / "app.py") as url:
        page.goto(url)
        add = page.locator("#add-row")
        add.wait_for()
        assert add.is_visible() and "Add row" in add.inner_text()  # a visible control
        add.click()
        page.locator("#inputs [data-testid=cell-1-0]").wait_for()
        edit_cell(page, "inputs", 1, 0, "a second prediction")
        screenshot(page, "space-add-row", docs=True, full_page=False)
        page.click("#compute")
        line = shows_error(page, "Row 2, references: the cell is empty", shot="space-error-row-field")
        assert "Traceback" not in line and "list index" not in line
        edit_cell(page, "inputs", 1, 1, "||| a reference")
        page.click("#compute")
        shows_error(page, "Row 2, references: a text between the ||| separators is empty")
        edit_cell(page, "inputs", 1, 1, "a second reference")
        type_options(page, '{"stemmer": true}')
        page.click("#compute")
        shows_error(page, "Options rouge.stemmer: rouge has no option 'stemmer'; its options:")
        # a text for a flag is read by the one option parser ("yes" is true, as on the command line)
        type_options(page, '{"use_stemmer": "maybe"}')
        page.click("#compute")
        shows_error(page, "Options rouge.use_stemmer: expected a boolean (true/false, yes/no, on/off, 1/0), "
                          "got 'maybe'")
        type_options(page, '{"use_stemmer": true,}')
        page.click("#compute")
        shows_error(page, "Options: not valid JSON")
        type_options(page, '{"tokenizer": "<model>"}')
        page.click("#compute")
        line = shows_error(page, "unknown tokenizer '<model>'", shot="space-error-escaped")  # not eaten as a tag
        type_options(page, '{"use_stemmer": true}')
        page.click("#compute")
        shown = read_key_values(page, "result-table")
        want = textgen_metrics.rouge(["The cat sat on the mat.", "a second prediction"],
                                     [["The cat is on the mat.", "A cat sat on a mat."], "a second reference"],
                                     use_stemmer=True)
        assert shown == {k: f"{v:.4g}" if isinstance(v, float) else v for k, v in want.items()}
        assert page.locator("#error").inner_text().strip() == ""


@contextlib.contextmanager
def silent_judge():
    """A loopback server that accepts every connection and never answers (nor closes one)."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted = []

    def accept():
        with contextlib.suppress(OSError):
            while True:
                accepted.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted
    finally:
        listener.close()
        for conn in accepted:
            conn.close()


def test_a_judge_that_does_not_answer_is_an_error_within_15_s(page):
    """A server that accepts connections and answers nothing (a server that answers HTTP but is
    slow with its first judgement is alive, and waited for: test_real_judges.py)."""
    assert FIRST_ANSWER_TIMEOUT + 2 < 15

    class Silent:  # what fill_judge reads
        url = ""

    with silent_judge() as (judge_url, accepted), serve(ROOT / "metrics" / "faithfulness" / "app.py") as url:
        Silent.url = judge_url
        page.goto(url)
        fill_judge(page, Silent)
        start = time.monotonic()
        page.click("#compute")
        page.locator("#error").get_by_text("Error:").wait_for(timeout=15_000)
        took = time.monotonic() - start
        assert took < 15, took
        line = page.locator("#error").inner_text()
        assert "Judge" in line and "answered no request within 10 s" in line, line
        assert accepted and SECRET not in page.content()
        toast(page)
        page.locator("#error").scroll_into_view_if_needed()
        page.wait_for_timeout(800)  # the pop-up fades in
        screenshot(page, "space-judge-not-answering", docs=True, full_page=False)
    with socket.socket() as s:  # nobody listens: refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with serve(ROOT / "metrics" / "faithfulness" / "app.py") as url:
        page.goto(url)
        page.locator("#judge-url textarea, #judge-url input").first.fill(f"http://127.0.0.1:{port}/v1")
        page.locator("#judge-model textarea, #judge-model input").first.fill("m")
        start = time.monotonic()
        page.click("#compute")
        page.locator("#error").get_by_text("Error:").wait_for(timeout=15_000)
        assert time.monotonic() - start < 15
        assert f"127.0.0.1:{port}" in page.locator("#error").inner_text()


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_playground_a_judge_that_does_not_answer_is_an_error_within_15_s(page, tmp_path):
    rows = [{"prediction": f"Paris is in France. It has {i} bridges.", "references": ["Paris is in France."],
             "query": "Where is Paris?", "contexts": ["Paris is the capital of France."]} for i in range(20)]
    data = tmp_path / "rag.jsonl"
    write_jsonl(data, rows)
    with silent_judge() as (judge_url, accepted), serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        upload(page, data)
        dropdown = page.locator("#metrics input")
        for metric in ("faithfulness", "answer_relevance"):
            dropdown.click()
            dropdown.fill(metric)
            page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        page.get_by_text("Judge (an OpenAI-compatible server").click()
        page.locator("#judge-url textarea, #judge-url input").first.fill(judge_url)
        page.locator("#judge-model textarea, #judge-model input").first.fill("judge-space")
        page.locator("#judge-key input, #judge-key textarea").first.fill(SECRET)
        start = time.monotonic()
        page.click("#score")
        page.locator("#error").get_by_text("Error:").wait_for(timeout=15_000)
        took = time.monotonic() - start
        assert took < 15, took
        line = page.locator("#error").inner_text()
        # one sentence naming the judge, its URL and what went wrong, not one error per row
        assert line.startswith("Error: Judge: ") and judge_url.removesuffix("/v1") in line, line
        assert "answered no request within 10 s" in line and "row" not in line.lower(), line
        assert accepted and SECRET not in page.content()


def test_playground_upload_metrics_judge_table_and_chart(page, judge_server, tmp_path):
    answers = ["Paris is in France.", "Paris is in France. It has 37 bridges.", "Lyon is a city in France.",
               "Paris has bridges. It is in Spain. It is big.", "Rome is the capital of Italy."]
    rows = [{"id": f"ex{i}", "prediction": a, "references": ["Paris is in France.", "Paris has 37 bridges."],
             "contexts": ["Paris is the capital of France.", "Paris has 37 bridges."]} for i, a in enumerate(answers)]
    data = tmp_path / "rag.jsonl"
    write_jsonl(data, rows)
    with serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        upload(page, data)
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
            assert shown[key] == f"{value:.4g}", key  # 4 significant digits
        # schema_answer: the claims are the sentences, verdicts yes, no, yes...: 1, 0.5, 1, 2/3, 1
        assert want["faithfulness"] == pytest.approx((1 + 0.5 + 1 + 2 / 3 + 1) / 5)
        # the chart: one bar chart per score, one bar per example
        charts = page.locator("#chart svg.bars")
        assert charts.count() == 6  # rouge1, rouge2, rougeL, rougeLsum, bleu, faithfulness
        assert page.locator("#chart svg.bars[data-metric=faithfulness] rect").count() == 5
        # the per-example table: ids and scores
        assert page.locator("#per-example [data-testid=cell-4-0] span").first.inner_text().strip() == "ex4"
        assert SECRET not in page.content()
        screenshot(page, "playground", docs=True)


def test_playground_errors_are_shown_not_raised(page, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("answer,ref\nthe cat,the cat sat\n")
    with serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        page.click("#score")
        shows_error(page, "File: upload a CSV")
        upload(page, data)
        page.click("#score")
        shows_error(page, "row 1 has no field 'predictions' or 'prediction' for rouge's predictions "
                          "(it has: answer, ref); choose one with the Columns box", shot="playground-error")
        columns = page.locator("#columns textarea, #columns input").first
        columns.fill('{"predictions": "answer", "references": "ref"}')
        page.click("#score")
        shown = read_key_values(page, "summary")
        assert float(shown["rouge1"]) == textgen_metrics.rouge(["the cat"], ["the cat sat"])["rouge1"]


def test_playground_chart_reads_at_50_rows(page, tmp_path):
    from corpus import pairs

    rows = [{"id": f"example-{i:02d}-with-a-long-name", "prediction": p, "references": [r]}
            for i, (p, r) in enumerate(pairs(50, seed=11))]
    rows[7]["id"] = "<b>tag</b>"
    data = tmp_path / "fifty.jsonl"
    write_jsonl(data, rows)
    with serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        upload(page, data)
        page.click("#score")
        read_key_values(page, "summary")
        chart = page.locator("#chart svg.bars[data-metric=rouge1]")
        chart.wait_for()
        assert page.locator("#chart svg.bars").count() == 5  # rouge1, rouge2, rougeL, rougeLsum, bleu
        labels = chart.locator("text[text-anchor=end]")
        assert labels.count() == 50 and chart.locator("rect").count() == 50
        boxes = [labels.nth(i).bounding_box() for i in range(50)]
        for a, b in itertools.pairwise(boxes):  # one row each: no label overlaps the next
            assert a["y"] + a["height"] <= b["y"] + 0.5, (a, b)
            assert a["height"] >= 9  # a readable size
        assert "<b>tag</b>" in labels.nth(7).text_content()  # shown as text, not markup
        want = textgen_metrics.rouge([r["prediction"] for r in rows], [r["references"] for r in rows],
                                     use_aggregator=False)["rouge1"]
        values = chart.locator("rect title").all_text_contents()
        assert values[0] == f"{rows[0]['id']}: {want[0]:.4g}"
        screenshot(page, "playground-chart-50-rows", locator=page.locator("#chart"), docs=True)


def test_playground_coherence_axis_runs_from_1_to_5(page, judge_server, tmp_path):
    rows = [{"id": f"s{i}", "prediction": "A cat sat.", "source": "A cat sat on a mat all day."} for i in range(3)]
    data = tmp_path / "summaries.jsonl"
    write_jsonl(data, rows)
    with serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        upload(page, data)
        dropdown = page.locator("#metrics input")
        for remove in page.locator("#metrics button.token-remove, #metrics .token-remove").all()[::-1]:
            with contextlib.suppress(Exception):
                remove.click(timeout=2_000)
        dropdown.click()
        dropdown.fill("summary_coherence")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        page.get_by_text("Judge (an OpenAI-compatible server").click()
        fill_judge(page, judge_server)
        page.click("#score")
        chart = page.locator("#chart svg.bars[data-metric=summary_coherence]")
        chart.wait_for()
        ticks = chart.locator("text[text-anchor=middle]").all_text_contents()
        assert ticks[:3] == ["1", "3", "5"], ticks  # the scale of the score, not 0 to 4
        widths = [float(w) for w in chart.locator("rect").evaluate_all("rs => rs.map(r => r.getAttribute('width'))")]
        assert widths == [pytest.approx(260 * (4 - 1) / (5 - 1), abs=0.1)] * 3  # schema_answer: score 4
        screenshot(page, "playground-coherence", locator=page.locator("#chart"), docs=True)


def test_unscored_messages_list_the_first_rows_and_count_the_rest():
    from textgen_metrics.spaces import _SHOWN_ERRORS, _playground_unscored, _unscored_message

    errors = [{"index": i, "error": f"cut off\n at {i} tokens"} for i in range(_SHOWN_ERRORS + 2)]
    text = _unscored_message("faithfulness", {"errors": errors}, 20)
    head = f"{_SHOWN_ERRORS + 2} of 20 example(s) got no faithfulness score: row 1: cut off at 0 tokens; "
    assert text.startswith(head)
    assert f"row {_SHOWN_ERRORS}: " in text and f"row {_SHOWN_ERRORS + 1}: " not in text
    assert text.endswith("; and 2 more")
    assert _unscored_message("faithfulness", {"errors": []}, 20) == ""
    report = {"ids": ["a", "b"], "metrics": {"bias": {"aggregate": {"errors": [{"index": 1, "error": "HTTP 500"}]},
                                                      "per_example": {"bias": [0.5, None]}, "scores": ["bias"]}}}
    assert _playground_unscored(report) == "1 score(s) missing: bias, row 2: HTTP 500"


def test_one_examples_judge_failure_names_its_row_from_1():
    from textgen_metrics.llm.metrics import ExampleJudgeError
    from textgen_metrics.spaces import _user_message

    def stand_in(messages, task):  # the second example's claims stay unusable
        if task == "faithfulness/claims" and "BAD" in messages[1]["content"]:
            return "no JSON here"
        return json.dumps({"claims": []}) if task == "faithfulness/claims" else "{}"

    with pytest.raises(ExampleJudgeError) as raised:
        textgen_metrics.faithfulness(predictions=["fine", "BAD"], contexts=[["c"], ["c"]], judge=stand_in,
                                     on_error="raise")
    assert raised.value.index == 1 and str(raised.value).startswith("faithfulness: example 1: ")
    text = _user_message(raised.value, ["predictions", "contexts"])
    assert text.startswith("Judge: faithfulness, row 2: faithfulness/claims: invalid answer"), text


def test_the_judge_picker_takes_the_packaged_tiny_judge_without_a_url():
    from textgen_metrics.judges import TinyJudge
    from textgen_metrics.spaces import make_judge

    judge = make_judge("", "tiny:smollm2", "")
    assert isinstance(judge, TinyJudge) and judge.model == "tiny:smollm2" and judge.judge_mode == "json_object_schema"


def test_the_spaces_judge_boxes_are_the_judge_declarations_fields(monkeypatch):
    """A label changed in the OpenAI-compatible judge's declaration is the label of both Spaces'
    box (Gradio's own components, as served)."""
    from textgen_metrics.judges.options import OpenAIOptions
    from textgen_metrics.spaces import metric_app, playground_app

    url, model, key = OpenAIOptions.space_fields
    monkeypatch.setattr(OpenAIOptions, "space_fields",
                        (dataclasses.replace(url, label="Endpoint", placeholder="https://host/v1"), model, key))
    for demo in (playground_app(["rouge", "faithfulness"]), metric_app(str(ROOT / "metrics" / "faithfulness"))):
        boxes = {c["props"].get("elem_id"): c["props"] for c in demo.get_config_file()["components"]}
        assert (boxes["judge-url"]["label"], boxes["judge-url"]["placeholder"]) == ("Endpoint", "https://host/v1")
        assert (boxes["judge-model"]["label"], boxes["judge-model"]["type"]) == ("Model", "text")
        assert (boxes["judge-key"]["label"], boxes["judge-key"]["type"]) == ("API key", "password")
