"""LLM-guided metrics: answer correctness and relevance, bias, toxicity, context precision,
recall and relevance, faithfulness, hallucination, summary coherence."""

from .metrics import METRICS, compute

__all__ = ["METRICS", "compute", *METRICS]


def _make(name):
    metric = METRICS[name]
    cols = ", ".join(metric.columns)

    def fn(*args, judge=None, use_aggregator=True, return_details=False, on_error="record",
           judge_options=None, progress=None, **kwargs):
        inputs = dict(zip(metric.columns, args))
        inputs.update({k: v for k, v in kwargs.items()})
        return compute(name, judge=judge, use_aggregator=use_aggregator, return_details=return_details,
                       on_error=on_error, judge_options=judge_options, progress=progress, **inputs)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = (f"{name}({cols}, judge=..., use_aggregator=True, return_details=False, "
                  f"on_error='record'): the LLM-guided metric over the given columns.")
    return fn


globals().update({name: _make(name) for name in METRICS})
