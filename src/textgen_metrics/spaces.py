"""Gradio Spaces: one per metric folder (``metric_app``) and the playground (``playground_app``).

``evaluate.utils.launch_gradio_widget`` (evaluate 0.4.6) does not run on current Gradio, so
every ``metrics/<name>/app.py`` calls :func:`metric_app`, and ``spaces/playground/app.py`` calls
:func:`playground_app`. Both build everything from a metric's declared columns and the
registry, so a new module needs no Space code of its own.
"""

import json
import os
import re
from typing import Any

__all__ = ["metric_app", "playground_app", "parse_rows", "run_metric", "card_body", "make_judge",
           "run_playground", "LIST_SEPARATOR"]

LIST_SEPARATOR = "|||"  # separates several references (or contexts) typed in one table cell
_MAX_CHARTED = 200      # examples drawn one bar each; more: a histogram
# the example row a metric Space opens with, by input column
_EXAMPLE = {"predictions": "The cat sat on the mat.",
            "references": f"The cat is on the mat. {LIST_SEPARATOR} A cat sat on a mat.",
            "queries": "Where did the cat sit?",
            "contexts": f"The cat sat on the mat all afternoon. {LIST_SEPARATOR} Dogs bark at night.",
            "sources": "The cat sat on the mat all afternoon, ignoring the dogs that barked outside.",
            "baselines": "On the mat."}


def card_body(readme_path):
    """The card's Markdown without its YAML header."""
    with open(readme_path, encoding="utf-8") as f:
        text = f.read()
    return re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)


def parse_rows(rows, columns):
    """Table rows (lists of cells) -> ``{column: values}``; blank rows are skipped.

    In a list column (``text_or_list`` or ``list``) a cell holds several strings separated by
    ``|||``; a ``text_or_list`` cell without a separator stays one string; a ``list`` cell
    without one is a list of one (an empty cell: an empty list).
    """
    if hasattr(rows, "values") and hasattr(rows, "columns"):  # a pandas DataFrame
        rows = rows.values.tolist()
    names = list(columns)
    out = {name: [] for name in names}
    for row in rows or []:
        cells = ["" if c is None else str(c) for c in list(row)[: len(names)]]
        if not any(c.strip() for c in cells):
            continue
        cells += [""] * (len(names) - len(cells))
        for name, cell in zip(names, cells):
            kind = columns[name]
            if kind == "list":
                out[name].append([p.strip() for p in cell.split(LIST_SEPARATOR) if p.strip()])
            elif kind == "text_or_list" and LIST_SEPARATOR in cell:
                out[name].append([p.strip() for p in cell.split(LIST_SEPARATOR)])
            else:
                out[name].append(cell)
    return out


def _json_object(text, what, example):
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as e:
        raise ValueError(f"{what}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what}: expected a JSON object such as {example}")
    return value


def make_judge(base_url, model, api_key):
    """A judge for the URL and model typed in the judge picker; None when both are blank. A model
    written as ``azure:<deployment>``, ``anthropic:<model>``, ``gemini:<model>`` or
    ``openai:<model>`` picks that provider (the URL, optional there, is its endpoint or base URL;
    a blank key: the provider's environment variable); any other model is served by the
    OpenAI-compatible server at the URL. The key stays in the judge object (never in results,
    logs or the cache)."""
    from .judges import BACKENDS, get_judge

    base_url, model = (base_url or "").strip(), (model or "").strip()
    if not base_url and not model:
        return None
    prefix, sep, name = model.partition(":")
    if sep and name and prefix in BACKENDS and prefix != "hf":
        options = {"concurrency": 8, "api_key": (api_key or "").strip() or None}
        if base_url:
            options["endpoint" if prefix == "azure" else "base_url"] = base_url
        return get_judge(model, **options)
    if not base_url or not model:
        raise ValueError("judge: give both the server URL (e.g. http://127.0.0.1:8000/v1) and the model")
    from .judges.openai import OpenAIJudge

    return OpenAIJudge(model, base_url=base_url, api_key=(api_key or "").strip() or "none", concurrency=8)


def _space_columns(metric: Any) -> dict[str, str]:
    """The table's columns: the metric's inputs, then its optional ones (G-Eval's sources...)."""
    return {**type(metric).columns, **getattr(type(metric), "optional_columns", {})}


def run_metric(metric, rows, options_json, judge=None):
    """Compute ``metric`` on table rows with JSON options: (result table rows, result dict). An
    optional input column left blank in every row is not given."""
    options = _json_object(options_json, "options", '{"use_stemmer": true}')
    inputs = parse_rows(rows, _space_columns(metric))
    for column in getattr(type(metric), "optional_columns", {}):
        if not any(str(v).strip() for v in inputs[column]):
            del inputs[column]
    if judge is not None:
        options["judge"] = judge
    result = metric.compute(**inputs, **options)
    table = [[k, json.dumps(v) if isinstance(v, (list, dict)) else v] for k, v in result.items()]
    return table, result


def _judge_picker(gr, open_=True):
    with gr.Accordion("Judge (an OpenAI-compatible server: OpenAI, vLLM, Ollama, TGI, llama.cpp; or a model "
                      "written azure:<deployment>, anthropic:<model>, gemini:<model>)", open=open_):
        with gr.Row():
            url = gr.Textbox(label="Server URL", placeholder="http://127.0.0.1:8000/v1", elem_id="judge-url")
            model = gr.Textbox(label="Model", placeholder="gpt-4o-mini", elem_id="judge-model")
            key = gr.Textbox(label="API key", type="password", placeholder="(none for a local server)",
                             elem_id="judge-key")
    return url, model, key


def _error(e):
    return f"**Error:** {e}"


def metric_app(metric_dir):
    """The Gradio Blocks of the Space in ``metric_dir`` (the folder of app.py)."""
    import evaluate
    import gradio as gr

    from .hf import JudgeMetric

    metric_dir = os.path.abspath(metric_dir)
    metric = evaluate.load(metric_dir)
    columns = _space_columns(metric)
    name = os.path.basename(metric_dir)
    needs_judge = isinstance(metric, JudgeMetric)
    with gr.Blocks(title=f"{name} - textgen-metrics") as demo:
        gr.Markdown(f"# {name}\nType one example per row. Several references or contexts in one cell: "
                    f"separate them with `{LIST_SEPARATOR}`.")
        example = [_EXAMPLE.get(c, "") if c in type(metric).columns else "" for c in columns]  # optional: blank
        table = gr.Dataframe(value=[example], headers=list(columns),
                             column_count=(len(columns), "fixed"), type="array", interactive=True,
                             label="Inputs", elem_id="inputs")
        judge_fields = list(_judge_picker(gr)) if needs_judge else []
        start = json.dumps(getattr(type(metric), "space_options", {}), indent=1, ensure_ascii=False)
        options = gr.Code(value=start, language="json", label="Options (JSON)", elem_id="options")
        button = gr.Button("Compute", variant="primary", elem_id="compute")
        error = gr.Markdown(elem_id="error")
        result_table = gr.Dataframe(headers=["key", "value"], label="Result", elem_id="result-table")
        result_json = gr.JSON(label="Result (JSON)", elem_id="result-json")

        def on_click(rows, opts, *judge_args):
            try:
                judge = make_judge(*judge_args) if judge_args else None
                res_table, res = run_metric(metric, rows, opts, judge)
                return res_table, res, ""
            except Exception as e:  # shown to the user, the app keeps running
                return [], {}, _error(e)

        button.click(on_click, [table, options, *judge_fields], [result_table, result_json, error])
        gr.Markdown(card_body(os.path.join(metric_dir, "README.md")))
    return demo


def run_playground(path, metrics, columns_json, options_json, judge=None):
    """Score the uploaded file: (summary rows, per-example rows and headers, chart HTML, report)."""
    from .registry import METRICS
    from .report import svg_bars, svg_histogram
    from .scoring import read_records, score_name, score_records

    if not path:
        raise ValueError("file: upload a CSV, TSV, JSON or JSONL file with one example per row")
    if not metrics:
        raise ValueError("metrics: choose at least one metric")
    columns = _json_object(columns_json, "columns", '{"predictions": "answer"}')
    options = _json_object(options_json, "options", '{"rouge": {"use_stemmer": true}}')
    needs = [m for m in metrics if METRICS[m].judge]
    if needs and judge is None:
        raise ValueError(f"judge: {', '.join(needs)} needs a judge: fill in the server URL and model")
    rows = read_records(path)
    report = score_records(rows, metrics, columns=columns, options=options, judge=judge,
                           source=os.path.basename(path))
    summary = [[k, v] for k, v in report["summary"].items()]
    headers, scored = ["id"], []
    for name, m in report["metrics"].items():
        for key in m["scores"]:
            headers.append(score_name(name, key))
            scored.append(m["per_example"][key])
    ids = [str(i) for i in report["ids"]]
    per_example = [[ids[i], *[s[i] for s in scored]] for i in range(len(ids))]
    charts = [svg_bars(ids, s, h) if len(ids) <= _MAX_CHARTED else svg_histogram(s, h)
              for h, s in zip(headers[1:], scored)]
    chart = "<div id='score-charts' style='display:flex;flex-wrap:wrap;gap:1em'>" + "".join(charts) + "</div>"
    return summary, (headers, per_example), chart, report


def playground_app(metric_names=None):
    """One Space with every metric: upload a file, pick metrics and a judge, see the scores."""
    import gradio as gr
    import pandas

    from .registry import METRICS

    names = list(metric_names or METRICS)
    lexical = [n for n in names if not METRICS[n].judge]
    with gr.Blocks(title="textgen-metrics playground") as demo:
        gr.Markdown(
            "# textgen-metrics playground\n"
            "Upload a CSV, TSV, JSON or JSONL file with one example per row, pick the metrics and "
            "press **Score**. Fields by default: `prediction`, `references` (a text or a JSON list), "
            "`query`, `contexts` (a JSON list), `source`; map others under *Columns*. The LLM-guided "
            "metrics need a judge: an OpenAI-compatible server (none for the lexical ones).")
        with gr.Row():
            upload = gr.File(label="Data file", file_types=[".csv", ".tsv", ".json", ".jsonl"],
                             type="filepath", elem_id="upload")
            with gr.Column():
                chosen = gr.Dropdown(names, value=lexical[:2] or names[:1], multiselect=True,
                                     label="Metrics", elem_id="metrics")
                columns = gr.Textbox(value="{}", label="Columns (JSON: input -> field)", lines=1,
                                     elem_id="columns")
                options = gr.Textbox(value="{}", label='Options (JSON: {"rouge": {"use_stemmer": true}})',
                                     lines=1, elem_id="options")
        url, model, key = _judge_picker(gr, open_=False)
        button = gr.Button("Score", variant="primary", elem_id="score")
        error = gr.Markdown(elem_id="error")
        summary = gr.Dataframe(headers=["score", "value"], label="Summary", elem_id="summary")
        chart = gr.HTML(elem_id="chart")
        per_example = gr.Dataframe(label="Per example", elem_id="per-example")
        report_json = gr.JSON(label="Report (JSON)", elem_id="report")

        def on_click(path, metrics, cols, opts, judge_url, judge_model, judge_key):
            try:
                judge = make_judge(judge_url, judge_model, judge_key)
                rows, (headers, table), svg, report = run_playground(path, metrics, cols, opts, judge)
                return rows, svg, pandas.DataFrame(table, columns=headers), report, ""
            except Exception as e:  # shown to the user, the app keeps running
                return [], "", pandas.DataFrame(), {}, _error(e)

        button.click(on_click, [upload, chosen, columns, options, url, model, key],
                     [summary, chart, per_example, report_json, error])
    return demo
