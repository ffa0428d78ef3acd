"""The metrics the command line and the Trainer hook can run, by name.

Each entry names the library function, the input columns it takes (in the order of its
positional arguments) and the options that the per-example report uses.
"""

import importlib

__all__ = ["METRICS", "get_metric"]


class MetricSpec:
    def __init__(self, name, target, columns, per_example_option="use_aggregator"):
        self.name = name
        self._target = target
        self.columns = columns
        self.per_example_option = per_example_option

    @property
    def function(self):
        module, attr = self._target
        return getattr(importlib.import_module(module), attr)

    def compute(self, inputs, per_example=False, **options):
        args = [inputs[c] for c in self.columns]
        if per_example:
            options[self.per_example_option] = False
        return self.function(*args, **options)


METRICS = {
    "rouge": MetricSpec("rouge", ("textgen_metrics.lexical.rouge", "rouge"),
                        {"predictions": "text", "references": "text_or_list"}),
}


def get_metric(name):
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"metrics: unknown metric {name!r}; available: {', '.join(sorted(METRICS))}") from None
