"""The thin ``evaluate`` layer: a Metric base class shared by every script under ``metrics/``.

A script declares its input columns (``columns``) and delegates ``_compute`` to the library.
This base turns the columns into ``evaluate`` features and checks the inputs *before*
``evaluate`` encodes them, so bad input gets an error that names the argument and the example
index instead of a pyarrow message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import datasets
import evaluate

from ._version import __version__
from .errors import InputError
from .metric import Metric, Stats
from .run import Run
from .validation import check_columns

__all__ = ["TextgenMetric", "features_for"]

_KINDS = ("text", "text_or_list", "list")


def features_for(columns: Mapping[str, str]) -> Any:
    """evaluate features for ``{"predictions": "text", "references": "text_or_list"}``.

    A ``text_or_list`` column accepts a string or a list of strings per example (the list form
    comes first, as Hugging Face's own rouge and bleu).
    """
    variants: list[dict[str, Any]] = [{}]
    for name, kind in columns.items():
        if kind not in _KINDS:
            raise ValueError(f"columns: unknown kind {kind!r} for {name!r}; one of {_KINDS}")
        text = datasets.Value("string", id="sequence")
        seq = datasets.Sequence(datasets.Value("string", id="sequence"), id="references")
        if kind == "text":
            variants = [dict(v, **{name: text}) for v in variants]
        elif kind == "list":
            variants = [dict(v, **{name: seq}) for v in variants]
        else:
            variants = [dict(v, **{name: seq}) for v in variants] + [
                dict(v, **{name: text}) for v in variants]
    feats = [datasets.Features(v) for v in variants]
    return feats if len(feats) > 1 else feats[0]


class TextgenMetric(evaluate.Metric):  # type: ignore[misc]  # evaluate ships no types
    """Base of the textgen-metrics modules: a script names its library metric
    (``metric_name``), whose :class:`~textgen_metrics.metric.Metric` gives the columns (and so
    evaluate's features), the arguments and the computation; inputs are checked early."""

    metric_name = ""
    columns: dict[str, str] = {"predictions": "text", "references": "text_or_list"}
    optional_columns: dict[str, str] = {}
    reference_urls: tuple[str, ...] = ()
    writer: Any  # evaluate's cache writer (evaluate ships no types)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("metric_name"):
            cls.columns = dict(cls.spec().columns)
            cls.optional_columns = dict(cls.spec().optional_columns)

    @classmethod
    def spec(cls) -> type[Metric]:
        """The library metric this module computes."""
        from .registry import get_metric

        return get_metric(cls.metric_name)

    def _compute(self, **inputs_and_options: Any) -> dict[str, Any]:
        """The library metric over the inputs evaluate gathered: their statistics, scored; in a
        multi-process evaluation, the statistics each process computed of its own examples,
        merged in process order (see :meth:`compute`)."""
        spec = self.spec()
        inputs = {c: inputs_and_options.pop(c) for c in (*spec.columns, *spec.optional_columns)
                  if c in inputs_and_options}
        if not getattr(self, "_merging", False):
            return spec.function()(**inputs, **inputs_and_options)
        parts = []
        for process_id in range(self.num_process):
            path = self._statistics_path(process_id)
            with open(path, encoding="utf-8") as f:
                parts.append(Stats.from_dict(json.load(f)))
            os.remove(path)
        stats = sum(parts)  # not placed: in process order, as evaluate gathers the examples
        gathered = len(next(iter(inputs.values()))) if inputs else 0
        if not isinstance(stats, Stats) or stats.count != gathered:
            raise RuntimeError(f"{spec.name}: the processes' statistics hold {getattr(stats, 'count', 0)} examples, "
                               f"evaluate gathered {gathered}")
        return self._run(inputs_and_options).result_dicts({spec.name: stats})[spec.name]

    def _run(self, options: Mapping[str, Any]) -> Run:
        """The :class:`~textgen_metrics.run.Run` of this module's metric with ``options`` (the
        front end's own, ``use_aggregator``, among them), checked."""
        return Run.build([self.metric_name], options={self.metric_name: dict(options)}, front_end=True)

    def _statistics_path(self, process_id: int) -> str:
        return os.path.join(self.data_dir, f"{self.experiment_id}-{self.num_process}-{process_id}.stats.json")

    def _compute_by_statistics(self, **kwargs: Any) -> dict[str, Any] | None:
        """evaluate's multi-process protocol on the metric's statistics: each process scores its
        own examples (its statistics, written beside its cache file before its lock is released)
        and process 0, once evaluate has seen every process done, merges them and scores."""
        spec = self.spec()
        inputs = {c: kwargs.pop(c) for c in spec.columns if c in kwargs}
        if any(v is not None for v in inputs.values()):
            self.add_batch(**inputs)
        run = self._run(kwargs)  # the options, checked before any work
        own: dict[str, list[Any]] = {c: [] for c in spec.columns}
        if self.writer is not None:
            self.writer.finalize()  # evaluate's _finalize then only releases the lock
            self.writer = None
            rows = datasets.Dataset.from_file(self.cache_file_name)
            own = {c: rows[c] for c in spec.columns}
        stats = run.statistics(own, texts=False)[spec.name]
        path = self._statistics_path(self.process_id)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(stats.to_dict(), f)
        os.replace(path + ".tmp", path)
        self._merging = True
        try:
            result: dict[str, Any] | None = super().compute(**kwargs)
        finally:
            self._merging = False
        return result

    def _info(self) -> Any:
        """The info from the script module's ``_DESCRIPTION``, ``_CITATION`` and
        ``_KWARGS_DESCRIPTION`` and the class's ``reference_urls``."""
        import sys

        module = sys.modules[type(self).__module__]
        return self.metric_info(module._DESCRIPTION, module._CITATION, module._KWARGS_DESCRIPTION,
                                self.reference_urls)

    def metric_info(self, description: str, citation: str, inputs_description: str,
                    reference_urls: Sequence[str] = (), codebase_urls: Sequence[str] = ()) -> Any:
        return evaluate.MetricInfo(
            description=description,
            citation=citation,
            inputs_description=inputs_description,
            features=features_for(self.columns),
            codebase_urls=list(codebase_urls) or ["https://github.com/textgen-metrics/textgen-metrics"],
            reference_urls=list(reference_urls),
        )

    def _split_inputs(self, predictions: Any, references: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        inputs = {"predictions": predictions, "references": references}
        inputs.update({k: kwargs[k] for k in self.columns if k in kwargs})
        return {k: inputs.get(k) for k in self.columns}

    def _no_examples(self, checked: Mapping[str, Any]) -> bool:
        """True when every given column is an empty list (evaluate cannot encode an empty batch:
        it reads the first example to pick the features, an IndexError from inside it)."""
        return bool(checked) and all(len(v) == 0 for v in checked.values())

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        """Compute the metric over the given inputs (and any added with ``add_batch``).

        Empty lists with nothing added before are a ValueError naming the first input. With
        ``num_process > 1`` each process computes the statistics of its own examples and
        process 0 merges them (a metric whose examples are scored together, BERTScore, is
        scored by process 0 over every example, as evaluate does)."""
        checked: dict[str, Any] = check_columns(self.columns, self._split_inputs(predictions, references, kwargs),
                                                normalize_references=True)
        if self._no_examples(checked):
            if self.writer is None and self.num_process == 1:
                raise InputError("no examples (empty lists); give at least one example", next(iter(self.columns)))
            checked = {k: None for k in checked}  # nothing to add: score what add_batch gave
        kwargs.update(checked)
        if self.num_process > 1 and self.metric_name and not self.spec().scores_together and not self.spec().judge:
            return self._compute_by_statistics(**kwargs)
        result: dict[str, Any] | None = super().compute(**kwargs)
        return result

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Add a batch of inputs; they are checked (argument and index) before evaluate's encoder.
        An empty batch adds nothing."""
        checked = check_columns(self.columns, self._split_inputs(predictions, references, kwargs),
                                normalize_references=True)
        if self._no_examples(checked):
            return
        kwargs.update(checked)
        super().add_batch(**kwargs)

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Add one example; checked like a batch of one (a text reference becomes a list of one)."""
        one = {"predictions": prediction, "references": reference}
        one.update({k: kwargs.pop(k) for k in self.columns if k in kwargs})
        one = {k: None if one.get(k) is None else [one[k]] for k in self.columns}
        checked = check_columns(self.columns, one, normalize_references=True)
        example = {k: v[0] for k, v in checked.items()}
        super().add(prediction=example.pop("predictions", None),
                    reference=example.pop("references", None), **example, **kwargs)

    @property
    def library_version(self) -> str:
        return __version__


SACREBLEU_CITATION = """\
@inproceedings{post-2018-call,
    title = "A Call for Clarity in Reporting {BLEU} Scores",
    author = "Post, Matt",
    booktitle = "Proceedings of the Third Conference on Machine Translation: Research Papers",
    year = "2018",
    url = "https://www.aclweb.org/anthology/W18-6319",
    pages = "186--191",
}
"""

VALOR_CITATION = """\
@misc{valor_text_generation,
    title = {Valor: text generation metrics},
    author = {Striveworks},
    year = {2024},
    url = {https://striveworks.github.io/valor/},
}
"""


class JudgeMetric(TextgenMetric):
    """Base of the LLM-guided modules: ``judge=`` at ``evaluate.load`` or at ``compute``.

    A script sets ``metric_name``; its library metric gives the columns and the optional columns
    (G-Eval's ``sources``, ``references``, ``queries``), which are not evaluate features: they
    are given to ``compute`` as keyword arguments, one entry per example, and checked by the
    library. The info comes from its module's constants. ``space_options`` are the options the
    metric's Space opens with (a required ``criteria``)."""

    metric_name = ""
    space_options: dict[str, Any] = {}

    reference_urls: tuple[str, ...] = ("https://striveworks.github.io/valor/text_generation/metrics/",)

    def __init__(self, *args: Any, judge: Any = None, judge_options: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        self.judge = judge
        self.judge_options = judge_options
        self._optional_inputs: dict[str, Any] = {}
        super().__init__(*args, **kwargs)

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        """Compute the metric; optional inputs (``sources=``...) go with the other arguments."""
        optional = {c: kwargs.pop(c) for c in list(kwargs) if c in self.optional_columns}
        if "references" in self.optional_columns and "references" not in self.columns:
            optional["references"], references = references, None  # evaluate would take it as a feature
        self._optional_inputs = {k: v for k, v in optional.items() if v is not None}
        try:
            return super().compute(predictions=predictions, references=references, **kwargs)
        finally:
            self._optional_inputs = {}

    def _compute(self, **kwargs: Any) -> dict[str, Any]:
        kwargs["judge"] = kwargs.get("judge") or self.judge
        kwargs["judge_options"] = kwargs.get("judge_options") or self.judge_options
        return super()._compute(**self._optional_inputs, **kwargs)
