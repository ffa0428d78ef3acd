"""Every metric by name: the :class:`~textgen_metrics.metric.Metric` classes where they live.

A metric is a module of :data:`METRIC_PACKAGES` (``textgen_metrics.lexical``,
``textgen_metrics.semantic``) that defines a ``Metric`` subclass with a ``name``. On first use
the registry imports those modules and takes every class defined; nothing lists a metric a
second time. The package's names (``textgen_metrics.<name>``), the command line, the Spaces, the
Trainer hook and ``compare`` all read :data:`METRICS`.

The LLM-guided metrics join through a thin adapter (:func:`_llm_metric`) over
``llm.metrics.METRICS`` and their functions in ``llm.functions``, until they are ``Metric``
classes themselves: their statistics are then their inputs, scored by the LLM function.

``COLUMN_FIELDS`` is the one table of the record fields each input column is read from
(``query`` or ``queries`` ...).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from .metric import OPTION_KINDS, Metric, MetricFunction, Result, ScoredTogether, Stats, metric_classes, option

__all__ = ["METRICS", "METRIC_PACKAGES", "get_metric", "COLUMN_FIELDS", "column_fields", "OPTION_KINDS"]

# the packages whose modules define the metrics
METRIC_PACKAGES = ("textgen_metrics.lexical", "textgen_metrics.semantic")

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


# -- the LLM-guided metrics, until they are Metric classes ---------------------------------------------
# the arguments of an LLM function that the front ends set themselves
_LLM_FRONT_END = frozenset({"use_aggregator", "judge", "judge_options", "progress"})
# the range of an LLM-guided metric's score where it is not [0, 1]
_LLM_RANGES = {"summary_coherence": (1.0, 5.0), "g_eval": (1.0, 5.0)}
_LLM_KINDS = {"on_error": "str", "return_details": "bool", "confidence_level": "float", "n_resamples": "int",
              "seed": "int"}


class _LLMAdapter(ScoredTogether):
    """An LLM-guided metric of ``llm.metrics.METRICS`` as a Metric: its statistics are its
    inputs; :meth:`score` runs its function once, per example, and averages the score key."""

    judge = True
    llm_function: ClassVar[Any] = None
    score_key: ClassVar[str] = ""

    def keys(self) -> tuple[str, ...]:
        return (self.score_key,)

    def check_inputs(self, inputs: Mapping[str, Any]) -> dict[str, list[Any]]:
        # the LLM function checks its inputs itself (argument and index), as it always has
        wanted = {**self.columns, **self.optional_columns}
        return {c: list(v) for c, v in inputs.items() if v is not None and c in wanted}

    def score(self, stats: Stats) -> Result:
        inputs = {c: stats.columns[c] for c in (*self.columns, *self.optional_columns) if c in stats.columns}
        options = {f.name: getattr(self.options, f.name) for f in dataclasses.fields(self.options)}
        options["use_aggregator"] = False
        per_example = self.llm_function(**inputs, **options)
        key = self.score_key
        from .aggregation import mean

        aggregate = {k: mean(v) if k == key else v for k, v in per_example.items()}
        return Result(self.name, self.keys(), stats.count, aggregate, lambda: per_example)

    @classmethod
    def function(cls) -> MetricFunction:
        function: MetricFunction = cls.llm_function
        return function


def _llm_metric(name: str, llm: Any, function: Any) -> type[Metric]:
    fields = []
    for param in inspect.signature(function).parameters.values():
        if param.name in llm.columns or param.name in llm.optional_columns:
            continue
        kind = _LLM_KINDS.get(param.name) or ("json" if param.default is None else None)
        fields.append((param.name, Any, option(param.default, kind=kind, front_end=param.name in _LLM_FRONT_END,
                                                kw_only=True)))
    options = dataclasses.make_dataclass(f"{name}_options", fields, frozen=True)
    score_range = getattr(llm, "chart_range", None) or _LLM_RANGES.get(name, (0.0, 1.0))
    attributes = {"name": name, "columns": dict(llm.columns), "optional_columns": dict(llm.optional_columns),
                  "Options": options, "llm_function": staticmethod(function), "score_key": llm.score_key,
                  "score_range": (float(score_range[0]), float(score_range[1])), "__doc__": function.__doc__}
    cls: type[Metric] = type(f"LLM_{name}", (_LLMAdapter,), attributes)
    return cls


def _register_llm_metrics() -> None:
    llm = importlib.import_module("textgen_metrics.llm")
    for name, metric in llm.METRICS.items():
        if name not in metric_classes():
            _llm_metric(name, metric, getattr(llm, name))


# -- the table ---------------------------------------------------------------------------------------
class _Metrics(Mapping[str, type[Metric]]):
    """The metrics by name, found on first use: those of the modules of :data:`METRIC_PACKAGES`
    (in alphabetical order), then the LLM-guided ones, then any defined since (a trial's). A
    look-up by name that the metric packages answer imports no LLM-guided metric."""

    _found: list[str] | None = None
    _with_llm = False

    def _table(self, with_llm: bool = True) -> dict[str, type[Metric]]:
        classes = metric_classes()
        if self._found is None:
            for package in METRIC_PACKAGES:
                path = importlib.import_module(package).__path__
                for module in sorted(m.name for m in pkgutil.iter_modules(path)):
                    importlib.import_module(f"{package}.{module}")
            type(self)._found = [n for prefix in METRIC_PACKAGES
                                 for n, c in sorted(classes.items(), key=lambda kv: kv[1].__module__)
                                 if c.__module__.startswith(prefix + ".")]
        if with_llm and not self._with_llm:
            type(self)._with_llm = True
            _register_llm_metrics()
        found = self._found or []
        return {**{n: classes[n] for n in found if n in classes}, **classes}

    def __getitem__(self, name: str) -> type[Metric]:
        table = self._table(with_llm=False)
        return table[name] if name in table else self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._table(with_llm=False) or name in self._table())


METRICS: Mapping[str, type[Metric]] = _Metrics()


def get_metric(name: str) -> type[Metric]:
    """The metric ``name``; a ValueError naming the ones there are."""
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"metrics: unknown metric {name!r}; available: {', '.join(sorted(METRICS))}") from None
