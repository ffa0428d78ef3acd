"""Gradio Space for a metric folder: a table of inputs, the options, the result, the card.

``evaluate.utils.launch_gradio_widget`` (evaluate 0.4.6) does not run on current Gradio, so
every ``metrics/<name>/app.py`` calls :func:`metric_app` instead.
"""

import json
import os
import re

__all__ = ["metric_app", "parse_rows", "run_metric", "card_body", "LIST_SEPARATOR"]

LIST_SEPARATOR = "|||"  # separates several references typed in one table cell


def card_body(readme_path):
    """The card's Markdown without its YAML header."""
    with open(readme_path, encoding="utf-8") as f:
        text = f.read()
    return re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)


def parse_rows(rows, columns):
    """Table rows (lists of cells) -> ``{column: values}``; blank rows are skipped.

    In a list column (``text_or_list`` or ``list``) a cell holds several strings separated by
    ``|||``; a ``text_or_list`` cell without a separator stays one string.
    """
    names = list(columns)
    out = {name: [] for name in names}
    for row in rows or []:
        cells = ["" if c is None else str(c) for c in list(row)[: len(names)]]
        if not any(c.strip() for c in cells):
            continue
        cells += [""] * (len(names) - len(cells))
        for name, cell in zip(names, cells):
            kind = columns[name]
            if kind == "list" or (kind == "text_or_list" and LIST_SEPARATOR in cell):
                out[name].append([p.strip() for p in cell.split(LIST_SEPARATOR)])
            else:
                out[name].append(cell)
    return out


def run_metric(metric, rows, options_json):
    """Compute ``metric`` on table rows with JSON options: (result table rows, result dict)."""
    try:
        options = json.loads(options_json or "{}")
    except json.JSONDecodeError as e:
        raise ValueError(f"options: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(options, dict):
        raise ValueError("options: expected a JSON object such as {\"use_stemmer\": true}")
    inputs = parse_rows(rows, type(metric).columns)
    result = metric.compute(**inputs, **options)
    table = [[k, json.dumps(v) if isinstance(v, (list, dict)) else v] for k, v in result.items()]
    return table, result


def metric_app(metric_dir):
    """The Gradio Blocks of the Space in ``metric_dir`` (the folder of app.py)."""
    import evaluate
    import gradio as gr

    metric_dir = os.path.abspath(metric_dir)
    metric = evaluate.load(metric_dir)
    columns = type(metric).columns
    name = os.path.basename(metric_dir)
    with gr.Blocks(title=f"{name} - textgen-metrics") as demo:
        gr.Markdown(f"# {name}\nType one example per row. Several references in one cell: "
                    f"separate them with `{LIST_SEPARATOR}`.")
        table = gr.Dataframe(headers=list(columns), column_count=(len(columns), "fixed"),
                             row_count=2, type="array", interactive=True, label="Inputs",
                             elem_id="inputs")
        options = gr.Code(value="{}", language="json", label="Options (JSON)", elem_id="options")
        button = gr.Button("Compute", variant="primary", elem_id="compute")
        result_table = gr.Dataframe(headers=["key", "value"], label="Result", elem_id="result-table")
        result_json = gr.JSON(label="Result (JSON)", elem_id="result-json")
        error = gr.Markdown(elem_id="error")

        def on_click(rows, opts):
            try:
                res_table, res = run_metric(metric, rows, opts)
                return res_table, res, ""
            except (ValueError, TypeError) as e:
                return [], {}, f"**Error:** {e}"

        button.click(on_click, [table, options], [result_table, result_json, error])
        gr.Markdown(card_body(os.path.join(metric_dir, "README.md")))
    return demo
