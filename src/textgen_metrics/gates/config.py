"""``textgen-metrics gate CONFIG.toml``: the gates and regression tests of a TOML file, the
verdicts of ``gate`` and ``regression``, one exit status (docs/gating.md).

The file::

    judge = "openai:gpt-4o-mini"          # the defaults of every entry below (each may set its own)
    judge_options = {base_url = "http://127.0.0.1:8000/v1"}
    judge_replay = "strict"               # --judge-replay wins
    judge_recording = "judge.jsonl"       # --judge-recording wins; paths are relative to this file

    [[gate]]
    data = "answers.jsonl"                # a file score reads (JSONL, JSON, CSV, Parquet...)
    metric = "faithfulness"
    threshold = 0.8
    key = "faithfulness"                  # optional: the result key
    columns = {predictions = "answer"}    # optional: a metric input to the file's field
    options = {}                          # optional: the metric's options
    repeats = "auto"                      # optional, as gate's; also max_repeats, unscored,
                                          # max_unscored, lower_is_better, confidence_level, seed

    [[regression]]
    baseline = "before.jsonl"             # the same rows, each side's predictions in its file
    candidate = "after.jsonl"
    metrics = ["rouge", "chrf"]
    margin = 0.0                          # optional; also keys, repeats, options ({metric: {...}})

``--plan`` prints each regression's minimum detectable drop before any judge call.

Exit status: 0 when every gate passes and nothing regressed, 1 when a gate fails or a metric
regressed, 3 when none failed and one is inconclusive, 2 for a usage error (a bad file, key,
value, a missing recording or a request missing from it).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["add_gate_parser", "gate_command", "run_config", "EXIT_PASS", "EXIT_FAIL", "EXIT_INCONCLUSIVE"]

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INCONCLUSIVE = 0, 1, 2, 3
_SHARED = ("judge", "judge_options", "judge_replay", "judge_recording", "confidence_level", "seed", "n_resamples")
_GATE_KEYS = {"name", "data", "metric", "threshold", "key", "options", "columns", "repeats", "max_repeats", "unscored",
              "max_unscored", "lower_is_better", *_SHARED}
_REGRESSION_KEYS = {"name", "baseline", "candidate", "metrics", "margin", "keys", "options", "columns", "repeats",
                    "n_permutations", *_SHARED}


class ConfigError(ValueError):
    """A config file that cannot be run: the message names the entry and the key."""


def _load(path: str) -> dict[str, Any]:
    # the standard library's reader from Python 3.11, its backport tomli before (setup.cfg)
    toml: Any = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    try:
        with open(path, "rb") as f:
            loaded: dict[str, Any] = toml.load(f)
            return loaded
    except toml.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not TOML ({e})") from None


def _entry(config: Mapping[str, Any], entry: Mapping[str, Any], where: str, allowed: set[str],
           required: tuple[str, ...]) -> dict[str, Any]:
    """The entry with the file's defaults beneath, its keys checked."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: expected a table")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(sorted(allowed))}")
    for key in required:
        if key not in entry:
            raise ConfigError(f"{where}: {key!r} is missing")
    return {**{k: config[k] for k in _SHARED if k in config}, **entry}


def _path(folder: str, value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: expected a file path, got {value!r}")
    return value if os.path.isabs(value) else os.path.join(folder, value)


def _inputs(metric: str, path: str, columns: Mapping[str, str] | None, judge: Any) -> dict[str, list[Any]]:
    """The metric's inputs from the file, through the run's one reader of tables."""
    from ..run import Run
    from ..scoring import read_table

    rows, lines = read_table(path)
    run = Run.build([metric], columns=dict(columns or {}), judge=judge)
    return run.inputs(rows, source=path, lines=lines, hint="columns = {input = \"FIELD\"}")[metric]


def _judged(metric: Any) -> bool:
    """Whether ``metric`` takes a judge (the file's judge defaults apply to those only)."""
    from ..registry import METRICS

    return isinstance(metric, str) and metric in METRICS and METRICS[metric].judge


def _judge(entry: Mapping[str, Any], metrics: list[Any]) -> Any:
    """The entry's judge made with its ``judge_options``, where one of ``metrics`` takes one."""
    if entry.get("judge") is None or not any(map(_judged, metrics)):
        return None
    from ..judges import resolve_judge

    options = entry.get("judge_options") or {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"judge_options: expected a table, got {options!r}")
    return resolve_judge(entry["judge"], options)


def _replay(entry: dict[str, Any], folder: str) -> dict[str, Any]:
    out = {"judge_replay": entry.get("judge_replay", "off")}
    if entry.get("judge_recording") is not None:
        out["judge_recording"] = _path(folder, entry["judge_recording"], "judge_recording")
    return out


def _gate(entry: dict[str, Any], folder: str, where: str) -> dict[str, Any]:
    from .gate import gate

    options = dict(entry.get("options") or {})
    data = _path(folder, entry["data"], f"{where}.data")
    inputs = _inputs(entry["metric"], data, entry.get("columns"), entry.get("judge"))
    arguments: dict[str, Any] = {k: entry[k] for k in ("key", "repeats", "max_repeats", "unscored", "max_unscored",
                                                       "lower_is_better", "confidence_level", "seed", "n_resamples")
                                 if k in entry}
    arguments.update(_replay(entry, folder), **inputs)
    result = gate(entry["metric"], entry["threshold"], judge=_judge(entry, [entry["metric"]]), options=options or None,
                  **arguments)
    return {"name": entry.get("name", f"{where} {entry['metric']}"), "kind": "gate", **result.as_dict()}


def _regression(entry: dict[str, Any], folder: str, where: str, plan: bool = False) -> list[dict[str, Any]]:
    from .regression import regression

    metrics = entry["metrics"] if isinstance(entry["metrics"], list) else [entry["metrics"]]
    columns = dict(entry.get("columns") or {})
    base_path = _path(folder, entry["baseline"], f"{where}.baseline")
    cand_path = _path(folder, entry["candidate"], f"{where}.candidate")
    inputs: dict[str, Any] = {}
    sides = []
    for metric in metrics:
        inputs.update(_inputs(metric, base_path, columns, entry.get("judge")))
        sides.append(_inputs(metric, cand_path, columns, entry.get("judge"))["predictions"])
    candidate = sides[0]
    baseline = inputs.pop("predictions")
    options = {m: dict(o) for m, o in (entry.get("options") or {}).items()}
    arguments: dict[str, Any] = {k: entry[k] for k in ("margin", "keys", "repeats", "confidence_level", "seed",
                                                       "n_resamples", "n_permutations") if k in entry}
    arguments.update(_replay(entry, folder), **inputs)
    result = regression(metrics, baseline=baseline, candidate=candidate, judge=_judge(entry, metrics),
                        options=options or None, plan=plan, **arguments)
    name = entry.get("name", f"{where}")
    kind = "plan" if plan else "regression"
    return [{"name": f"{name} {r['metric']}.{r['key']}", "kind": kind, "margin": result["margin"], **r}
            for r in result["results"]]


def run_config(path: str, judge_replay: str | None = None, judge_recording: str | None = None,
               plan: bool = False) -> list[dict[str, Any]]:
    """Every entry of the file, run: one result dict per gate, one per metric and key of a
    regression (``name``, ``kind``, the figures, ``verdict``). ``plan``: the regressions' minimum
    detectable drops only (``kind`` "plan"), before any judge call; the gates are not run."""
    config = _load(path)
    folder = os.path.dirname(os.path.abspath(path))
    unknown = sorted(set(config) - {"gate", "regression", *_SHARED})
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; the file holds [[gate]], [[regression]] and the "
                          f"defaults {', '.join(_SHARED)}")
    if judge_replay is not None:
        config["judge_replay"] = judge_replay
    if judge_recording is not None:
        config["judge_recording"] = os.path.abspath(judge_recording)
    gates, regressions = config.get("gate", []), config.get("regression", [])
    if not gates and not regressions:
        raise ConfigError(f"{path}: no [[gate]] and no [[regression]] to run")
    results: list[dict[str, Any]] = []
    for i, raw in enumerate([] if plan else gates):
        where = f"gate[{i}]"
        entry = _entry(config, raw, where, _GATE_KEYS, ("data", "metric", "threshold"))
        results.append(_gate(entry, folder, where))
    for i, raw in enumerate(regressions):
        where = f"regression[{i}]"
        entry = _entry(config, raw, where, _REGRESSION_KEYS, ("baseline", "candidate", "metrics"))
        results.extend(_regression(entry, folder, where, plan))
    return results


def exit_status(results: list[dict[str, Any]]) -> int:
    """1 when one failed or regressed, 3 when none did and one is inconclusive, else 0."""
    verdicts = {r["verdict"] for r in results}
    if verdicts & {"fail", "regressed"}:
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if "inconclusive" in verdicts else EXIT_PASS


def write_json(path: str, results: list[dict[str, Any]], status: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"results": results, "exit_status": status}, f, indent=2, sort_keys=True, default=str)
        f.write("\n")


def gate_command(args: argparse.Namespace) -> int:
    """Run ``gate``: print the table, write ``--json`` and ``--summary``; the exit status."""
    from . import report

    if not os.path.isfile(args.config):
        raise ConfigError(f"CONFIG: {args.config} does not exist")
    results = run_config(args.config, args.judge_replay, args.judge_recording, args.plan)
    if args.plan:
        for r in results:
            print(f"{r['name']}: n {r['n']}, sd {r['sd']:.4g} ({r['sd_source']}), smallest drop found with 80% "
                  f"power: {r['mde']:.4g}")
        if args.json:
            write_json(args.json, results, EXIT_PASS)
        return EXIT_PASS
    rows = report.rows_of([(r["name"], r) for r in results])
    print(report.text(rows))
    status = exit_status(results)
    if args.json:
        write_json(args.json, results, status)
    report.write_summary(report.markdown(rows), args.summary)
    return status


def add_gate_parser(sub: Any) -> None:
    """The ``gate`` subcommand's parser on the command line's subparsers."""
    g = sub.add_parser("gate", help="run the quality gates and regression tests of a TOML file",
                       description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="exit status: 0 every gate passed, 1 a gate failed or a metric regressed, "
                              "3 none failed and one is inconclusive, 2 a usage error")
    g.add_argument("config", metavar="CONFIG.toml", help="the gates ([[gate]]) and regression tests ([[regression]])")
    g.add_argument("--judge-replay", choices=("off", "record", "strict"), default=None,
                   help="replay the judge: strict (from the recording, nothing sent), record, off (default: the "
                        "file's judge_replay, else off)")
    g.add_argument("--judge-recording", default=None, metavar="PATH", help="the judge recording (default: the file's)")
    g.add_argument("--json", default=None, metavar="OUT", help="write every result as JSON")
    g.add_argument("--summary", default=None, metavar="OUT",
                   help="write a Markdown table (also appended to $GITHUB_STEP_SUMMARY when set)")
    g.add_argument("--plan", action="store_true",
                   help="print each regression's minimum detectable drop (80%% power) before any judge call; "
                        "run nothing else")
    g.add_argument("--debug", action="store_true", help="show the traceback of an error")
    g.set_defaults(run=gate_command)
