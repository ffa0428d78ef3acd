"""The metrics the command line and the Trainer hook can run, by name.

Each entry names the library function, the input columns it takes (in the order of its
positional arguments) and the options that the per-example report uses.
"""

import importlib

__all__ = ["METRICS", "get_metric"]


class MetricSpec:
    def __init__(self, name, target, columns, per_example_option="use_aggregator", corpus=False):
        self.name = name
        # corpus=True: the aggregate is a corpus statistic (BLEU), not the mean of the examples
        self.corpus = corpus
        self._target = target
        self.columns = columns
        self.per_example_option = per_example_option

    @property
    def function(self):
        module, attr = self._target
        return getattr(importlib.import_module(module), attr)

    def compute(self, inputs, per_example=False, **options):
        args = [inputs[c] for c in self.columns]
        options[self.per_example_option] = not per_example
        return self.function(*args, **options)

    def compute_both(self, inputs, **options):
        """(aggregate, per-example) results, computing once where the aggregate is a mean."""
        from .aggregation import mean

        per_example = self.compute(inputs, per_example=True, **options)
        if self.corpus:
            return self.compute(inputs, **options), per_example
        return {k: mean(v) if isinstance(v, list) else v for k, v in per_example.items()}, per_example


METRICS = {
    "rouge": MetricSpec("rouge", ("textgen_metrics.lexical.rouge", "rouge"),
                        {"predictions": "text", "references": "text_or_list"}),
    "bleu": MetricSpec("bleu", ("textgen_metrics.lexical.bleu", "bleu"),
                       {"predictions": "text", "references": "text_or_list"}, corpus=True),
    "google_bleu": MetricSpec("google_bleu", ("textgen_metrics.lexical.bleu", "google_bleu"),
                              {"predictions": "text", "references": "text_or_list"}, corpus=True),
    "bertscore": MetricSpec("bertscore", ("textgen_metrics.semantic.bertscore", "bertscore"),
                            {"predictions": "text", "references": "text_or_list"}),
    "meteor": MetricSpec("meteor", ("textgen_metrics.lexical.meteor", "meteor"),
                         {"predictions": "text", "references": "text_or_list"}),
}


def get_metric(name):
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"metrics: unknown metric {name!r}; available: {', '.join(sorted(METRICS))}") from None
