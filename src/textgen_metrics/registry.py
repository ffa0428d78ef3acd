"""The metrics that the command line, the playground Space and the Trainer hook run, by name.

Each entry names the library function and the input columns it takes. The LLM-guided metrics
are registered from ``textgen_metrics.llm.METRICS`` (their columns come from their
definitions), so a new metric there plugs into every front end with no further code.

``COLUMN_FIELDS`` is the one table of the record fields each input column is read from
(``query`` or ``queries`` ...); ``MetricSpec.options`` gives each metric's options with the kind
of value each takes, which the command line parses by and the Spaces check names against.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["METRICS", "MetricSpec", "get_metric", "score_columns", "COLUMN_FIELDS", "column_fields",
           "OPTION_KINDS", "FRONT_END_ARGS"]

# The record fields an input column is read from, in order of preference: its name, then its
# singular (what README, the playground and the command line promise).
COLUMN_FIELDS: dict[str, tuple[str, ...]] = {
    "predictions": ("predictions", "prediction"),
    "references": ("references", "reference"),
    "queries": ("queries", "query"),
    "contexts": ("contexts", "context"),
    "sources": ("sources", "source"),
    "baselines": ("baselines", "baseline"),
}


def column_fields(column: str) -> tuple[str, ...]:
    """The record fields that may hold ``column``, in order of preference."""
    return COLUMN_FIELDS.get(column, (column,))


# The kinds of option values: what the command line parses a text into.
#   bool: true/false, yes/no, on/off, 1/0; int, float, number (an int or a float); str;
#   list: a JSON list, or names separated by commas; floats: a JSON list of numbers, or numbers
#   separated by commas; json: a JSON value when the text is one, else the text.
OPTION_KINDS = ("bool", "int", "float", "number", "str", "list", "floats", "json")

# the kinds of the interval options every metric takes (their default, None, does not tell)
_INTERVAL_KINDS = {"confidence_level": "float", "n_resamples": "int", "seed": "int"}

# arguments that the front ends set themselves, never options
FRONT_END_ARGS = frozenset({"use_aggregator", "judge", "judge_options", "progress"})


def score_columns(result: Mapping[str, Any], n: int) -> dict[str, list[Any]]:
    """The per-example score lists of ``result``: values that are lists of ``n`` numbers (or None);
    never an interval (``<key>_ci``, a list of two numbers)."""
    out: dict[str, list[Any]] = {}
    for key, value in result.items():
        if (isinstance(value, list) and len(value) == n and not key.endswith("_ci")
                and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in value)):
            out[key] = value
    return out


def _kind_of_default(default: Any) -> str:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, (int, float)):
        return "number"
    if isinstance(default, str):
        return "str"
    if isinstance(default, (list, tuple)):
        return "list"
    return "json"


class MetricSpec:
    """A metric as the front ends see it.

    ``columns`` maps each input (``predictions``, ``references``, ``queries``, ``contexts``,
    ``sources``, ``baselines``) to its kind (``text``, ``text_or_list``, ``list``);
    ``optional_columns`` are inputs used when the data has them (G-Eval's ``sources``,
    ``references``, ``queries``). ``corpus=True``: the
    aggregate is a corpus statistic (BLEU), not the mean of the examples. ``judge=True``: the
    metric takes ``judge`` and ``judge_options`` and reports progress per example itself, as does
    a metric with ``reports_progress=True`` (a ``progress`` argument).
    ``scores`` names the per-example scores to chart (default: the keys that start with the
    metric's name). ``chunkable(options)`` says whether per-example scores may be computed in slices (for a
    progress bar, or a Trainer's batches) without changing them by a single bit; a metric that
    reports its own progress is never sliced (BERTScore: float32 sums differ in the last bits
    between batch shapes, and its idf weights come from the whole corpus).
    ``statistics`` (a corpus metric's): the function that gives its per-example sufficient
    statistics, which ``compare`` resamples.
    ``option_kinds`` gives the kind (``OPTION_KINDS``) of options whose default (None) does not
    tell it; the others follow their default. ``score_range`` is the range of the main scores
    (a chart's axis): (0, 1) unless given.
    """

    def __init__(self, name: str, target: tuple[str, str], columns: Mapping[str, str], corpus: bool = False,
                 judge: bool = False, chunkable: Callable[[Mapping[str, Any]], bool] | None = None,
                 scores: tuple[str, ...] | None = None, option_kinds: Mapping[str, str] | None = None,
                 score_range: tuple[float, float] = (0.0, 1.0), reports_progress: bool = False,
                 statistics: tuple[str, str] | None = None,
                 optional_columns: Mapping[str, str] | None = None) -> None:
        self.name = name
        self._scores = scores
        self._statistics = statistics
        self._target = target
        self.columns = dict(columns)
        self.optional_columns = dict(optional_columns or {})
        self.corpus = corpus
        self.judge = judge
        self._chunkable = chunkable
        self._option_kinds = dict(option_kinds or {})
        self.score_range = score_range
        self.reports_progress = reports_progress or judge

    @property
    def function(self) -> Callable[..., dict[str, Any]]:
        module, attr = self._target
        function: Callable[..., dict[str, Any]] = getattr(importlib.import_module(module), attr)
        return function

    @property
    def statistics(self) -> Callable[..., Any] | None:
        """The per-example statistics function of a corpus metric (None for the others)."""
        if self._statistics is None:
            return None
        module, attr = self._statistics
        statistics: Callable[..., Any] = getattr(importlib.import_module(module), attr)
        return statistics

    @property
    def main_key(self) -> str:
        """The key of the metric's main score (``bleu``; ``score`` for chrF and TER)."""
        return self._scores[0] if self._scores else self.name

    @property
    def options(self) -> dict[str, str]:
        """``{option: kind}`` of the metric's keyword options (its function's parameters beside
        the input columns and the arguments the front ends set)."""
        out = {}
        for name, p in inspect.signature(self.function).parameters.items():
            if (name in self.columns or name in self.optional_columns or name in FRONT_END_ARGS
                    or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)):
                continue
            out[name] = (self._option_kinds.get(name) or _INTERVAL_KINDS.get(name)
                         or _kind_of_default(p.default))
        return out

    def check_options(self, options: Mapping[str, Any], where: str = "options") -> None:
        """A ValueError naming an option that the metric does not take, and the ones it does."""
        known = self.options
        for name in options:
            if name not in known and not (self.judge and name == "judge"):
                raise ValueError(f"{where}: {self.name} has no option {name!r}; its options: "
                                 f"{', '.join(sorted(known)) or 'none'}")

    def main_scores(self, per_example: Mapping[str, Any], n: int) -> list[str]:
        """The names of the per-example scores worth a chart: the metric's own (``rouge1``,
        ``bleu``, ``faithfulness``; BERTScore's P, R, F), not BLEU's lengths."""
        columns = score_columns(per_example, n)
        if self._scores:
            return [k for k in self._scores if k in columns]
        return [k for k in columns if k.startswith(self.name)]

    def chunkable(self, options: Mapping[str, Any]) -> bool:
        if self.reports_progress:
            return False
        return self._chunkable(options) if self._chunkable else True

    def compute(self, inputs: Mapping[str, list[Any]], per_example: bool = False, **options: Any) -> dict[str, Any]:
        """The library function over ``inputs`` ({column: values}); per-example lists when asked."""
        given = {c: inputs[c] for c in (*self.columns, *self.optional_columns) if inputs.get(c) is not None}
        return self.function(**given, use_aggregator=not per_example, **options)

    def compute_both(self, inputs: Mapping[str, list[Any]], progress: Callable[[int], Any] | None = None,
                     chunk_size: int = 512, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """(aggregate, per-example) results, computing once where the aggregate is a mean.

        ``progress(k)`` is called as ``k`` more examples are scored.
        """
        from .aggregation import mean

        n = len(inputs[next(iter(self.columns))])
        if self.reports_progress:
            per_example = self.compute(inputs, per_example=True, progress=progress, **options)
        elif progress is not None and self.chunkable(options) and n > chunk_size:
            per_example = {}
            for start in range(0, n, chunk_size):
                part = {c: v[start:start + chunk_size] for c, v in inputs.items()}
                size = len(part[next(iter(self.columns))])
                res = self.compute(part, per_example=True, **options)
                if not per_example:
                    per_example = res
                else:  # per-example lists grow; the rest (a hashcode) is the same for every slice
                    for key, values in res.items():
                        if isinstance(values, list) and len(values) == size:
                            per_example[key].extend(values)
                progress(size)
        else:
            per_example = self.compute(inputs, per_example=True, **options)
            if progress is not None:
                progress(n)
        if self.corpus:
            return self.compute(inputs, **options), per_example
        scores = score_columns(per_example, n)
        return {k: mean(v) if k in scores else v for k, v in per_example.items()}, per_example


_LEXICAL = {"predictions": "text", "references": "text_or_list"}

METRICS: dict[str, MetricSpec] = {
    "rouge": MetricSpec("rouge", ("textgen_metrics.lexical.rouge", "rouge"), _LEXICAL,
                        option_kinds={"rouge_types": "list", "tokenizer": "str", "seed": "int"}),
    "bleu": MetricSpec("bleu", ("textgen_metrics.lexical.bleu", "bleu"), _LEXICAL, corpus=True,
                       option_kinds={"tokenizer": "str", "weights": "floats", "max_order": "int",
                                     "smooth_method": "str", "smooth_value": "float"},
                       statistics=("textgen_metrics.lexical.bleu", "bleu_statistics")),
    "google_bleu": MetricSpec("google_bleu", ("textgen_metrics.lexical.bleu", "google_bleu"), _LEXICAL,
                              corpus=True, option_kinds={"tokenizer": "str", "min_len": "int", "max_len": "int"},
                              statistics=("textgen_metrics.lexical.bleu", "google_bleu_statistics")),
    "chrf": MetricSpec("chrf", ("textgen_metrics.lexical.chrf", "chrf"), _LEXICAL, corpus=True, scores=("score",),
                       statistics=("textgen_metrics.lexical.chrf", "chrf_statistics")),
    "ter": MetricSpec("ter", ("textgen_metrics.lexical.ter", "ter"), _LEXICAL, corpus=True, scores=("score",),
                      statistics=("textgen_metrics.lexical.ter", "ter_statistics")),
    "meteor": MetricSpec("meteor", ("textgen_metrics.lexical.meteor", "meteor"), _LEXICAL),
    "bertscore": MetricSpec("bertscore", ("textgen_metrics.semantic.bertscore", "bertscore"), _LEXICAL,
                            reports_progress=True, scores=("precision", "recall", "f1"),
                            option_kinds={"model_type": "str", "num_layers": "int", "idf": "bool",
                                          "batch_size": "int", "nthreads": "int", "device": "str",
                                          "lang": "str", "baseline_path": "str"}),
}

# the range of an LLM-guided metric's score where it is not [0, 1]
_LLM_RANGES = {"summary_coherence": (1.0, 5.0), "g_eval": (1.0, 5.0)}


def _register_llm_metrics() -> None:
    from .llm.metrics import METRICS as LLM

    for name, metric in LLM.items():
        scores = (metric.score_key,) if metric.score_key != name else None
        score_range = getattr(metric, "chart_range", None) or _LLM_RANGES.get(name, (0.0, 1.0))
        METRICS[name] = MetricSpec(name, ("textgen_metrics.llm", name), metric.columns, judge=True, scores=scores,
                                   optional_columns=metric.optional_columns,
                                   option_kinds={"on_error": "str", "return_details": "bool"},
                                   score_range=(float(score_range[0]), float(score_range[1])))


_register_llm_metrics()


def get_metric(name: str) -> MetricSpec:
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"metrics: unknown metric {name!r}; available: {', '.join(sorted(METRICS))}") from None
