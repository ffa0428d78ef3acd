"""Every metric by name: the :class:`~textgen_metrics.metric.Metric` classes where they live.

A metric is a module of :data:`METRIC_PACKAGES` (``textgen_metrics.lexical``,
``textgen_metrics.semantic``) or of :data:`JUDGED_PACKAGE` (``textgen_metrics.llm``, the
LLM-guided metrics) that defines a ``Metric`` subclass with a ``name``. On first use the
registry imports those modules and takes every class defined; nothing lists a metric a second
time. The package's names (``textgen_metrics.<name>``), the command line, the Spaces, the
Trainer hook and ``compare`` all read :data:`METRICS`. A look-up by name that the first
packages answer imports no LLM-guided metric (and so not the judge engine).

``COLUMN_FIELDS`` is the one table of the record fields each input column is read from
(``query`` or ``queries`` ...).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping

from .metric import OPTION_KINDS, Metric, metric_classes

__all__ = ["METRICS", "METRIC_PACKAGES", "JUDGED_PACKAGE", "get_metric", "COLUMN_FIELDS", "column_fields",
           "OPTION_KINDS"]

# the packages whose modules define the metrics; the LLM-guided ones, imported when first needed
METRIC_PACKAGES = ("textgen_metrics.lexical", "textgen_metrics.semantic")
JUDGED_PACKAGE = "textgen_metrics.llm"

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


# -- the table ---------------------------------------------------------------------------------------
class _Metrics(Mapping[str, type[Metric]]):
    """The metrics by name, found on first use: those of the modules of :data:`METRIC_PACKAGES`,
    then those of :data:`JUDGED_PACKAGE` (each package's in the alphabetical order of their
    modules), then any defined since (a trial's). A look-up by name that the first packages
    answer imports no LLM-guided metric."""

    _found: list[str] | None = None
    _judged: list[str] | None = None

    @staticmethod
    def _import(package: str) -> list[str]:
        """The names of the metrics the modules of ``package`` define, in module order."""
        path = importlib.import_module(package).__path__
        for module in sorted(m.name for m in pkgutil.iter_modules(path)):
            importlib.import_module(f"{package}.{module}")
        classes = metric_classes()
        return [n for n, c in sorted(classes.items(), key=lambda kv: kv[1].__module__)
                if c.__module__.startswith(package + ".")]

    def _table(self, with_llm: bool = True) -> dict[str, type[Metric]]:
        if self._found is None:
            type(self)._found = [n for package in METRIC_PACKAGES for n in self._import(package)]
        if with_llm and self._judged is None:
            type(self)._judged = self._import(JUDGED_PACKAGE)
        classes = metric_classes()
        found = (self._found or []) + (self._judged or [])
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
