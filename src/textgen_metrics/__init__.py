"""textgen-metrics: exact, fast, offline metrics for generated text.

The metric functions work on plain lists of strings; the ``evaluate`` modules under
``metrics/`` are thin layers over them. Submodules load lazily, so importing the package
costs nothing until a name is used; ``dir(textgen_metrics)`` lists the public API all the
same.

Where names come from, each in one place: every metric function (``textgen_metrics.rouge``,
``textgen_metrics.faithfulness``...) is its :class:`~textgen_metrics.metric.Metric`'s, found by
:mod:`textgen_metrics.registry` in the library's metric modules; the rest of the public API
(scorer classes, judges, ``compare``...) is :mod:`textgen_metrics.api`, plain imports that type
checkers read through the one star import below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .api import *  # noqa: F403  (the public API beside the metric functions)


def _metric_names() -> list[str]:
    from .registry import METRICS

    return list(METRICS)


def _api_names() -> tuple[str, ...]:
    names: tuple[str, ...] = importlib.import_module("textgen_metrics.api")._NAMES
    return names


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return ["__version__", *_metric_names(), *_api_names()]
    if name.startswith("_"):
        raise AttributeError(f"module 'textgen_metrics' has no attribute {name!r}")
    from .registry import METRICS

    if name in METRICS:
        value: Any = METRICS[name].function()
    elif name in _api_names():
        value = getattr(importlib.import_module("textgen_metrics.api"), name)
    else:
        raise AttributeError(f"module 'textgen_metrics' has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    """The public API (loaded lazily) and the submodules already imported."""
    imported = {k for k, v in globals().items() if not k.startswith("_") and type(v).__name__ == "module"}
    return sorted({"__version__", *_metric_names(), *_api_names()} | (imported - {"importlib"}))
