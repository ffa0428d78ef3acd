"""Score a table of records with several metrics: what the command line and the playground run.

Records come from CSV, TSV, JSON, JSONL, Parquet or a ``datasets`` folder (``save_to_disk``).
The result is a report: per metric its options, aggregate (the corpus score for BLEU and
Google BLEU, the mean over scored examples otherwise), per-example scores and time.
Messages name a row as an editor shows it where :func:`read_table`'s lines are given
(``lines=``: "line 3" of a CSV, TSV or JSONL file, the header being line 1; "row 3" from 1 of a
JSON list, Parquet or a datasets folder), else its row from 1, and a cell by its column (the
field). Cells are read as files hold them (:meth:`textgen_metrics.run.Run.inputs`): a list column's text
that starts like a JSON list is parsed, and one that does not parse is an error, never a
reference; an empty required text is an error unless ``allow_empty`` (the library's own
functions score an empty string: only a file's blank cell is taken for missing data).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ._version import __version__
from .errors import CellError, InputError
from .metric import Result
from .registry import get_metric
from .run import LIBRARY_WORDS, Run, locate, read_table

__all__ = ["read_records", "read_table", "score_records", "flat_scores", "score_name", "unscored", "Progress",
           "locate"]

# ``progress(metric, total)`` -> a context manager giving ``update(k)`` (or None), entered while
# that metric runs: the command line draws one bar per metric with it
Progress = Callable[[str, int], AbstractContextManager[Callable[[int], Any] | None]]


def read_records(path: str, split: str | None = None) -> list[dict[str, Any]]:
    """Rows of ``path`` as dicts: ``.jsonl``/``.json``/``.csv``/``.tsv``/``.parquet`` or a
    ``datasets`` folder (``split`` picks one split of a DatasetDict)."""
    return read_table(path, split)[0]


def score_name(metric: str, key: str) -> str:
    """A result key as a flat name: ``rouge1`` stays, ``f1`` of bertscore is ``bertscore_f1``."""
    return key if key.startswith(metric) else f"{metric}_{key}"


def flat_scores(result: Result) -> dict[str, float]:
    """The numbers of ``result``'s aggregate as a flat ``{name: float}``.

    A key that does not start with the metric's name gets it as a prefix (``bleu_precisions``,
    ``bertscore_f1``; ``rouge1`` stays); a list of numbers (BLEU's precisions) becomes
    ``name_1 ... name_n``; the aggregate's other values (texts) are left out, and so is a score
    that no example got (None). Settings reported beside the scores (chrF's orders), intervals
    and the signature are not scores."""
    out = {}
    for key, value in result.aggregate.items():
        name = score_name(result.metric, key)
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            out[name] = float(value)
        elif isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            out.update({f"{name}_{i + 1}": float(v) for i, v in enumerate(value)})
    return out


def score_records(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str],
                  columns: Mapping[str, str] | None = None,
                  options: Mapping[str, Mapping[str, Any]] | None = None, judge: Any = None,
                  progress: Progress | None = None, source: str = "input",
                  column_hint: str = "--column {column}=FIELD",
                  on_result: Callable[[str, Mapping[str, Any]], Any] | None = None, *,
                  lines: Sequence[int] | None = None, allow_empty: bool = True,
                  words: Mapping[str, str] = LIBRARY_WORDS, judge_options: Mapping[str, Any] | None = None,
                  run: Run | None = None) -> dict[str, Any]:
    """Score ``rows`` (a list of dicts) with each metric name in ``metrics``: a
    :class:`~textgen_metrics.run.Run` built of the arguments (or ``run``, built by the caller),
    its inputs read from the rows and scored, as a report.

    ``columns`` maps input columns to record fields, ``options`` maps a metric name to its
    keyword options, ``judge`` (a string, judge object or callable, with ``judge_options``)
    serves the LLM-guided metrics, ``progress(metric, total)`` gives a context manager with
    ``update(k)`` per metric (see ``Progress``). A record's ``id`` field names it; without one,
    its row number (from 1). ``on_result(metric, entry)`` is called as each metric's report
    entry is done (the command line prints its scores at once). ``words``: the front end's name
    of each argument in its messages (:data:`~textgen_metrics.run.CLI_WORDS`...).

    ``lines`` (:func:`read_table`'s) make every message name a row as the file's editor shows it,
    a metric's own error about one input value (``predictions[1]: ...``) included: the file's
    line and the column. ``allow_empty=False`` makes a blank required text an error (a file's
    blank cell usually means missing data). Each metric's entry says whether its aggregate is a
    corpus score (``corpus``: not the mean of the per-example scores); the report keeps ``lines``
    when given.
    """
    if not rows:
        raise ValueError(f"{source}: no rows")
    if run is None:
        run = Run.build(metrics, columns, options, judge, judge_options, words=words, resolve=True)
    inputs = run.inputs(rows, source=source, lines=lines, hint=column_hint, allow_empty=allow_empty)
    report: dict[str, Any] = {"source": source, "examples": len(rows), "textgen_metrics": __version__,
                              "ids": [row.get("id", i + 1) for i, row in enumerate(rows)], "metrics": {},
                              "summary": {}}
    if lines is not None:
        report["lines"] = list(lines)

    def done(name: str, result: Result, seconds: float) -> None:
        spec = get_metric(name)
        report["metrics"][name] = {
            "options": dict(run.options.get(name, {})),
            "aggregate": result.as_dict(True),
            "per_example": result.as_dict(False),
            "scores": list(result.keys),
            "summary": flat_scores(result),
            "corpus": spec.corpus,
            "seconds": round(seconds, 4),
        }
        for key in ("judge", "judge_options"):
            report["metrics"][name]["options"].pop(key, None)
        report["summary"].update(report["metrics"][name]["summary"])
        if on_result is not None:
            on_result(name, report["metrics"][name])

    try:
        run.score(inputs, progress=progress, on_result=done)
    except InputError as e:  # one value of one row: name it as the file does
        fields = {c: f for given in run.fields(rows[0]).values() for c, f in given.items()}
        if lines is None or e.argument not in fields or e.index is None or isinstance(e, CellError) \
                or not 0 <= e.index < len(rows):
            raise
        raise CellError(e.reason, source, locate(source, lines, e.index), fields[e.argument], e.argument,
                        e.index, e.item) from e
    return report


def unscored(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The examples that got no score, per metric and in row order: ``{"metric", "row" (from 1),
    "id", "error"}``; the error is the metric's message for that example where it gave one."""
    out = []
    ids = report.get("ids") or []
    for name, m in report["metrics"].items():
        messages = {e.get("index"): e.get("error") for e in (m["aggregate"].get("errors") or [])
                    if isinstance(e, Mapping)}
        scores = [m["per_example"][k] for k in m["scores"]]
        rows = {i for values in scores for i, v in enumerate(values) if v is None} | set(messages)
        for i in sorted(r for r in rows if isinstance(r, int)):
            out.append({"metric": name, "row": i + 1, "id": ids[i] if i < len(ids) else i + 1,
                        "error": messages.get(i) or "no score"})
    return out
