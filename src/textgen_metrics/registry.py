"""The metrics that the command line, the playground Space and the Trainer hook run, by name.

Each entry names the library function and the input columns it takes. The LLM-guided metrics
are registered from ``textgen_metrics.llm.METRICS`` (their columns come from their
definitions), so a new metric there plugs into every front end with no further code.
"""

import importlib

__all__ = ["METRICS", "MetricSpec", "get_metric", "score_columns"]


def score_columns(result, n):
    """The per-example score lists of ``result``: values that are lists of ``n`` numbers (or None);
    never an interval (``<key>_ci``, a list of two numbers)."""
    out = {}
    for key, value in result.items():
        if (isinstance(value, list) and len(value) == n and not key.endswith("_ci")
                and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in value)):
            out[key] = value
    return out


class MetricSpec:
    """A metric as the front ends see it.

    ``columns`` maps each input (``predictions``, ``references``, ``queries``, ``contexts``,
    ``sources``, ``baselines``) to its kind (``text``, ``text_or_list``, ``list``);
    ``optional_columns`` are inputs used when the data has them (G-Eval's ``sources``,
    ``references``, ``queries``). ``corpus=True``: the
    aggregate is a corpus statistic (BLEU), not the mean of the examples. ``judge=True``: the
    metric takes ``judge`` and ``judge_options`` and reports progress per example itself.
    ``scores`` names the per-example scores to chart (default: the keys that start with the
    metric's name). ``chunkable(options)`` says whether per-example scores may be computed in slices (for a
    progress bar) without changing them; BERTScore's idf weights come from the whole corpus.
    ``statistics`` (a corpus metric's): the function that gives its per-example sufficient
    statistics, which ``compare`` resamples.
    """

    def __init__(self, name, target, columns, corpus=False, judge=False, chunkable=None, scores=None,
                 statistics=None, optional_columns=None):
        self.name = name
        self._scores = scores
        self._statistics = statistics
        self._target = target
        self.columns = dict(columns)
        self.optional_columns = dict(optional_columns or {})
        self.corpus = corpus
        self.judge = judge
        self._chunkable = chunkable

    @property
    def function(self):
        module, attr = self._target
        return getattr(importlib.import_module(module), attr)

    @property
    def statistics(self):
        """The per-example statistics function of a corpus metric (None for the others)."""
        if self._statistics is None:
            return None
        module, attr = self._statistics
        return getattr(importlib.import_module(module), attr)

    @property
    def main_key(self):
        """The key of the metric's main score (``bleu``; ``score`` for chrF and TER)."""
        return self._scores[0] if self._scores else self.name

    def main_scores(self, per_example, n):
        """The names of the per-example scores worth a chart: the metric's own (``rouge1``,
        ``bleu``, ``faithfulness``; BERTScore's P, R, F), not BLEU's lengths."""
        columns = score_columns(per_example, n)
        if self._scores:
            return [k for k in self._scores if k in columns]
        return [k for k in columns if k.startswith(self.name)]

    def chunkable(self, options):
        if self.judge:
            return False
        return self._chunkable(options) if self._chunkable else True

    def compute(self, inputs, per_example=False, **options):
        """The library function over ``inputs`` ({column: values}); per-example lists when asked."""
        given = {c: inputs[c] for c in (*self.columns, *self.optional_columns) if inputs.get(c) is not None}
        return self.function(**given, use_aggregator=not per_example, **options)

    def compute_both(self, inputs, progress=None, chunk_size=512, **options):
        """(aggregate, per-example) results, computing once where the aggregate is a mean.

        ``progress(k)`` is called as ``k`` more examples are scored.
        """
        from .aggregation import mean

        n = len(inputs[next(iter(self.columns))])
        if self.judge:
            per_example = self.compute(inputs, per_example=True, progress=progress, **options)
        elif progress is not None and self.chunkable(options) and n > chunk_size:
            per_example = None
            for start in range(0, n, chunk_size):
                part = {c: v[start:start + chunk_size] for c, v in inputs.items()}
                size = len(part[next(iter(self.columns))])
                res = self.compute(part, per_example=True, **options)
                if per_example is None:
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

METRICS = {
    "rouge": MetricSpec("rouge", ("textgen_metrics.lexical.rouge", "rouge"), _LEXICAL),
    "bleu": MetricSpec("bleu", ("textgen_metrics.lexical.bleu", "bleu"), _LEXICAL, corpus=True,
                       statistics=("textgen_metrics.lexical.bleu", "bleu_statistics")),
    "google_bleu": MetricSpec("google_bleu", ("textgen_metrics.lexical.bleu", "google_bleu"), _LEXICAL,
                              corpus=True, statistics=("textgen_metrics.lexical.bleu", "google_bleu_statistics")),
    "chrf": MetricSpec("chrf", ("textgen_metrics.lexical.chrf", "chrf"), _LEXICAL, corpus=True, scores=("score",),
                       statistics=("textgen_metrics.lexical.chrf", "chrf_statistics")),
    "ter": MetricSpec("ter", ("textgen_metrics.lexical.ter", "ter"), _LEXICAL, corpus=True, scores=("score",),
                      statistics=("textgen_metrics.lexical.ter", "ter_statistics")),
    "meteor": MetricSpec("meteor", ("textgen_metrics.lexical.meteor", "meteor"), _LEXICAL),
    "bertscore": MetricSpec("bertscore", ("textgen_metrics.semantic.bertscore", "bertscore"), _LEXICAL,
                            chunkable=lambda options: not options.get("idf"),
                            scores=("precision", "recall", "f1")),
}


def _register_llm_metrics():
    from .llm.metrics import METRICS as LLM

    for name, metric in LLM.items():
        scores = (metric.score_key,) if metric.score_key != name else None
        METRICS[name] = MetricSpec(name, ("textgen_metrics.llm", name), metric.columns, judge=True, scores=scores,
                                   optional_columns=metric.optional_columns)


_register_llm_metrics()


def get_metric(name):
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"metrics: unknown metric {name!r}; available: {', '.join(sorted(METRICS))}") from None
