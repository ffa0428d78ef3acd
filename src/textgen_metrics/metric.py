"""The spine of the package: every metric is one :class:`Metric` that says what it is, once.

The shape is sacrebleu's ``Metric`` (a few hooks over per-sentence sufficient statistics, which
corpus scores, intervals and paired tests all reuse) with torchmetrics' ``add_state`` (state
that merges across processes). A metric declares:

- ``name``; ``columns``, its inputs with their kinds (``text``, ``text_or_list``, ``list``), and
  ``optional_columns``;
- ``Options``: a frozen dataclass of its keyword options, each field an :func:`option` with its
  kind (how a text becomes a value), its check and its help. It is the one source of the
  library function's keyword arguments, of evaluate's arguments, of the command line's
  ``--option`` and of the Spaces' option boxes. Every metric's options end with the interval
  options of :class:`Options` (``confidence_level``, ``n_resamples``, ``seed``; a corpus
  metric's, :class:`CorpusOptions`, add ``interval``: percentile, or sacrebleu's for parity);
- ``score_range`` and :meth:`Metric.keys`, the per-example scores (charted, resampled, compared);
- :meth:`Metric.signature`, every setting that changes a score;
- :meth:`Metric.statistics` ``(inputs) -> Stats`` and :meth:`Metric.score` ``(stats) -> Result``.

:class:`Stats` merge exactly with ``+`` (per-example columns are concatenated in row order,
counters added, settings checked equal) and travel as JSON (:meth:`Stats.to_dict`,
:meth:`Stats.from_dict`: ints stay ints, floats keep every bit), so that a score from the merged
statistics of parts of a corpus is the score of all its rows at once, to the bit, wherever the
parts were computed. Three families share the work:

- :class:`MeanMetric`: the statistics are the per-example scores (ROUGE, METEOR); the
  aggregate is their exact mean (examples without a score left out);
- :class:`CorpusMetric`: the statistics are per-example sufficient statistics (BLEU's lengths
  and n-gram counts, chrF's, TER's); the aggregate is the score of their sum;
- :class:`ScoredTogether`: a metric whose per-example scores depend on which examples are
  scored together (BERTScore: its batches' float32 sums, and its idf weights come from every
  reference): its statistics are its checked inputs, scored at once when asked;
- ``llm.metrics.JudgedMetric`` (a mean metric): the LLM-guided metrics, whose statistics a
  judge gives: the per-example scores, verdicts and errors, the judge's usage and model.

Everything else derives from the declaration: the registry and the package's names, the
evaluate scripts' features, the command line's and the Spaces' options, the Trainer hook's
streaming, ``compare``, the intervals.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from .aggregation import mean
from .errors import InputError, OptionError, OptionTypeError
from .signature import bootstrap_fields, with_fields
from .significance import (
    DEFAULT_INTERVAL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    CorpusStatistics,
    check_interval_method,
    check_interval_options,
    corpus_interval,
    percentile_interval,
)
from .validation import check_reference_sets, check_same_length, check_text_lists, check_texts

__all__ = ["Metric", "MeanMetric", "CorpusMetric", "ScoredTogether", "Stats", "Result", "Options", "CorpusOptions",
           "option",
           "OPTION_KINDS", "MetricFunction", "metric_classes", "parse_option_text"]

# The kinds of option values, what a text typed on the command line or in a Space becomes:
#   bool: true/false, yes/no, on/off, 1/0; int, float, number (an int or a float); str;
#   list: a JSON list, or names separated by commas; floats: a JSON list of numbers, or numbers
#   separated by commas; json: a JSON value when the text is one, else the text.
OPTION_KINDS = ("bool", "int", "float", "number", "str", "list", "floats", "json")

_STATS_FORMAT = "textgen-metrics/stats/1"


# -- options ---------------------------------------------------------------------------------------
def _kind_of(default: Any) -> str:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, (int, float)):
        return "number"  # an int or a float: the option's check takes what it accepts
    if isinstance(default, str):
        return "str"
    if isinstance(default, (list, tuple)):
        return "list"
    return "json"


def option(default: Any, *, kind: str | None = None, check: Callable[[str, Any], Any] | None = None,
           doc: str = "", front_end: bool = False, kw_only: bool = False, decoded: Any = dataclasses.MISSING) -> Any:
    """A field of a metric's ``Options`` dataclass.

    ``kind``: one of :data:`OPTION_KINDS` (default: from the default's type; give it where the
    default is None). ``check(name, value)`` raises a ValueError or TypeError naming the option,
    and returns the value to keep (a flag's ``1`` becomes ``True``). ``doc``: one line of help.
    ``front_end``: an argument the front ends set themselves (``use_aggregator``, ``progress``),
    not an option a user gives with ``--option``. ``kw_only``: keyword-only in the function.
    ``decoded``: the value that suits text decoded from a model's ids (the Trainer hook's
    default, unless the user sets the option: ROUGE's ``split_summaries=True``).
    """
    kind = kind or _kind_of(default)
    if kind not in OPTION_KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {OPTION_KINDS}")
    metadata = {"kind": kind, "check": check, "doc": doc, "front_end": front_end}
    if decoded is not dataclasses.MISSING:
        metadata["decoded"] = decoded
    return dataclasses.field(default=default, kw_only=kw_only, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Options:
    """The options every metric takes: a bootstrap interval of its scores.

    A metric's ``Options`` subclasses this with its own fields (each an :func:`option`); the
    checks run when an instance is made, before any scoring.
    """

    confidence_level: float | None = option(
        None, kind="float", kw_only=True,
        doc="e.g. 0.95: add <key>_ci = [low, high], a bootstrap interval over resamples of the examples")
    n_resamples: int = option(DEFAULT_RESAMPLES, kind="int", kw_only=True, doc="resamples of the interval")
    seed: int = option(DEFAULT_SEED, kind="int", kw_only=True, doc="fixes the resamples")

    # a seed of None draws fresh resamples (the LLM-guided metrics take it); others need an integer
    unseeded: ClassVar[bool] = False

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check = f.metadata.get("check")
            if check is not None:
                with _option_errors(f.name):
                    object.__setattr__(self, f.name, check(f.name, getattr(self, f.name)))
        with _option_errors(None):
            if self.confidence_level is not None:
                check_interval_options(self.confidence_level, self.n_resamples, self.seed, optional=self.unseeded)
            self.check()

    def check(self) -> None:
        """The hook for checks of several options together (each option's own check has run)."""



@contextlib.contextmanager
def _option_errors(name: str | None) -> Iterator[None]:
    """A ValueError or TypeError of an option's check is that option's error (an OptionError,
    which the front ends recognise by its class), whoever raised it."""
    try:
        yield
    except OptionError:
        raise
    except TypeError as e:
        raise OptionTypeError(str(e), name) from e
    except ValueError as e:
        raise OptionError(str(e), name) from e


@dataclasses.dataclass(frozen=True)
class CorpusOptions(Options):
    """The options of a corpus metric (BLEU, Google BLEU, chrF, TER): the interval options and
    ``interval``, the rule of its bootstrap interval."""

    interval: str = option(
        DEFAULT_INTERVAL, kind="str", kw_only=True, check=check_interval_method,
        doc="the rule of <key>_ci: percentile (default; the 2.5th and 97.5th percentiles of the resampled "
            "scores at 0.95, within the metric's range) or sacrebleu (sacrebleu's --confidence interval, "
            "mean ± half that spread, for parity with sacrebleu; it can leave the range on few examples)")


_INTERVAL_OPTIONS = ("confidence_level", "n_resamples", "seed", "interval")
AnyOptions = Options  # the base, for annotations inside a Metric (whose ``Options`` is its own)


def ordered_fields(options: type[Any]) -> list[dataclasses.Field[Any]]:
    """The fields of an options dataclass in the order of the function's parameters: the
    metric's own (positional ones first, then its keyword-only ones), the interval options last."""
    fields = list(dataclasses.fields(options))
    own = [f for f in fields if f.name not in _INTERVAL_OPTIONS]
    return ([f for f in own if not f.kw_only] + [f for f in own if f.kw_only]
            + [f for f in fields if f.name in _INTERVAL_OPTIONS])


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _number(where: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise OptionError(f"{where}: expected a number, got {text!r}") from None


def parse_option_text(kind: str, raw: str, where: str) -> Any:
    """The text ``raw`` as a value of ``kind`` (:data:`OPTION_KINDS`): the one parser of typed
    option values (the command line's ``--option``). Booleans accept true/false, yes/no, on/off,
    1/0 in any case; integers, numbers and lists must parse as such; anything else is an
    OptionError naming ``where``."""
    text = raw.strip()
    if kind == "bool":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise OptionError(f"{where}: expected a boolean (true/false, yes/no, on/off, 1/0), got {raw!r}")
    if kind == "int":
        if re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        raise OptionError(f"{where}: expected an integer, got {raw!r}")
    if kind in ("float", "number"):
        if kind == "number" and re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        return _number(where, text)
    if kind in ("list", "floats"):
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as e:
                raise OptionError(f"{where}: not a valid JSON list ({e.msg}): {raw!r}") from None
            if not isinstance(value, list):
                raise OptionError(f"{where}: expected a list, got {raw!r}")
        else:
            value = [part.strip() for part in text.split(",") if part.strip()]
        if kind == "floats":
            out = []
            for v in value:
                if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                    raise OptionError(f"{where}: expected a list of numbers, got {raw!r}")
                out.append(_number(where, v) if isinstance(v, str) else float(v))
            return out
        return value
    if kind == "str":
        return raw
    try:  # json: a JSON value where the text is one, else the text
        return json.loads(text)
    except json.JSONDecodeError:
        return raw


# -- statistics ------------------------------------------------------------------------------------
Runs = tuple[tuple[int, int], ...]


def _coalesce(runs: Iterable[tuple[int, int]]) -> Runs:
    out: list[tuple[int, int]] = []
    for start, stop in runs:
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], stop)
        elif start < stop:
            out.append((start, stop))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class Stats:
    """Per-example statistics of one metric over some examples, in row order.

    ``columns``: one value per example under each name (merge: concatenate, in row order);
    ``totals``: counters (merge: add; integers, so the sum is exact in any order); ``shared``:
    values every part has alike (merge: must be equal), such as a judge's model. ``settings``
    names what the statistics depend on (the metric's settings): parts merge only with the same.

    ``rows``: the row numbers the examples are, as ``(start, stop)`` runs, or None. Parts of one
    corpus scored apart (partitions, processes) are placed with :meth:`placed` and merge in row
    order whatever order they come in (``sum(parts)``); parts that are not placed merge in the
    order they are added (``a + b``: ``a``'s examples, then ``b``'s).
    """

    metric: str
    settings: str
    columns: dict[str, list[Any]]
    totals: dict[str, int] = dataclasses.field(default_factory=dict)
    shared: dict[str, Any] = dataclasses.field(default_factory=dict)
    rows: Runs | None = None

    def __post_init__(self) -> None:
        lengths = {len(v) for v in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"{self.metric} statistics: columns of different lengths "
                             f"({ {k: len(v) for k, v in self.columns.items()} })")
        if self.rows is not None and sum(b - a for a, b in self.rows) != self.count:
            raise ValueError(f"{self.metric} statistics: rows {self.rows} do not cover {self.count} examples")

    @property
    def count(self) -> int:
        """The number of examples."""
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __len__(self) -> int:
        return self.count

    def placed(self, offset: int) -> Stats:
        """These statistics as rows ``offset``, ``offset + 1``, ... of a larger corpus."""
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset: {offset!r} must be a non-negative integer")
        return dataclasses.replace(self, rows=_coalesce([(offset, offset + self.count)]))

    def _check_mergeable(self, other: Stats) -> None:
        if (other.metric, other.settings) != (self.metric, self.settings):
            raise ValueError(f"statistics of {other.metric} ({other.settings}) do not merge with those of "
                             f"{self.metric} ({self.settings}): the same metric and settings are needed")
        if set(other.columns) != set(self.columns):
            raise ValueError(f"{self.metric} statistics: columns {sorted(other.columns)} and "
                             f"{sorted(self.columns)} differ")
        for key in self.shared.keys() & other.shared.keys():
            if self.shared[key] != other.shared[key]:
                raise ValueError(f"{self.metric} statistics: {key} differs ({self.shared[key]!r}, "
                                 f"{other.shared[key]!r})")

    def __add__(self, other: Stats) -> Stats:
        if not isinstance(other, Stats):
            return NotImplemented
        self._check_mergeable(other)
        totals = dict(self.totals)
        for key, value in other.totals.items():
            totals[key] = totals.get(key, 0) + value
        shared = {**self.shared, **other.shared}
        if self.rows is None and other.rows is None:
            columns = {k: v + other.columns[k] for k, v in self.columns.items()}
            return Stats(self.metric, self.settings, columns, totals, shared)
        if self.rows is None or other.rows is None:
            raise ValueError(f"{self.metric} statistics: place every part (Stats.placed) or none")
        if not self.count or not other.count:
            kept = self if self.count else other
            return dataclasses.replace(kept, totals=totals, shared=shared)
        if self.rows[-1][1] <= other.rows[0][0]:
            first, second = self, other
        elif other.rows[-1][1] <= self.rows[0][0]:
            first, second = other, self
        else:
            return self._interleave(other, totals, shared)
        columns = {k: v + second.columns[k] for k, v in first.columns.items()}
        return Stats(self.metric, self.settings, columns, totals, shared,
                     _coalesce(first.rows + second.rows))  # type: ignore[operator]

    def _segments(self) -> list[tuple[int, int, Stats, int]]:
        out, at = [], 0
        for start, stop in self.rows or ():
            out.append((start, stop, self, at))
            at += stop - start
        return out

    def _interleave(self, other: Stats, totals: dict[str, int], shared: dict[str, Any]) -> Stats:
        segments = sorted(self._segments() + other._segments(), key=lambda s: s[0])
        for (_, stop, _, _), (start, _, _, _) in zip(segments, segments[1:], strict=False):
            if start < stop:
                raise ValueError(f"{self.metric} statistics: the parts overlap at row {start}")
        columns: dict[str, list[Any]] = {k: [] for k in self.columns}
        for start, stop, part, at in segments:
            for k, values in columns.items():
                values.extend(part.columns[k][at:at + stop - start])
        return Stats(self.metric, self.settings, columns, totals, shared,
                     _coalesce((a, b) for a, b, _, _ in segments))

    def __radd__(self, other: Any) -> Stats:
        if other == 0:  # sum(parts)
            return self
        return NotImplemented

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (``json.dumps`` keeps every float's bits: Python writes the shortest
        repr that reads back to the same float). Values are plain ints, floats, strings, None,
        lists and dicts, as the metric made them."""
        return {"format": _STATS_FORMAT, "metric": self.metric, "settings": self.settings,
                "rows": None if self.rows is None else [list(r) for r in self.rows],
                "columns": self.columns, "totals": self.totals, "shared": self.shared}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Stats:
        """The statistics of :meth:`to_dict` (after a JSON round trip too)."""
        if data.get("format") != _STATS_FORMAT:
            raise ValueError(f"statistics: format {data.get('format')!r} is not {_STATS_FORMAT!r}")
        rows = data.get("rows")
        return cls(data["metric"], data["settings"], {k: list(v) for k, v in data["columns"].items()},
                   dict(data.get("totals") or {}), dict(data.get("shared") or {}),
                   None if rows is None else tuple((int(a), int(b)) for a, b in rows))


# -- results ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class Result:
    """A metric's result over some statistics.

    ``aggregate``: the values of the aggregate (``use_aggregator=True``) in output order;
    ``per_example``: the same keys per example (computed on first use); ``keys``: the
    per-example scores among them; ``extras``: settings reported beside the scores (chrF's
    orders, BERTScore's hash code); ``intervals``: ``{key: [low, high]}``; ``signature``: the
    aggregate's signature (``per_example_signature`` where the per-example scores' differ, as
    BLEU's smoothing). :meth:`as_dict` gives the library's plain result dict.
    """

    metric: str
    keys: tuple[str, ...]
    count: int
    aggregate: dict[str, Any]
    make_per_example: Callable[[], dict[str, Any]] = dataclasses.field(repr=False, compare=False)
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)
    intervals: dict[str, list[float | None]] = dataclasses.field(default_factory=dict)
    signature: str | None = None
    per_example_signature: str | None = None

    @functools.cached_property
    def per_example(self) -> dict[str, Any]:
        return self.make_per_example()

    def as_dict(self, use_aggregator: bool = True) -> dict[str, Any]:
        """The result as the library functions return it: the values (aggregate, or per-example
        lists), the extras, ``<key>_ci`` for each interval, then ``signature``."""
        out = dict(self.aggregate if use_aggregator else self.per_example)
        out.update(self.extras)
        for key, interval in self.intervals.items():
            out[f"{key}_ci"] = interval
        sign = self.signature if use_aggregator or self.per_example_signature is None else self.per_example_signature
        if sign is not None:
            out["signature"] = sign
        return out


class MetricFunction(Protocol):
    """A metric's library function (``textgen_metrics.rouge``...): its columns and options as
    arguments, the result dict out."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]: ...


# -- the metric ------------------------------------------------------------------------------------
_CLASSES: dict[str, type[Metric]] = {}
_REPLACED: set[str] = set()  # names a class took over with replace=True


def metric_classes() -> dict[str, type[Metric]]:
    """Every metric class defined so far, by name (the registry imports the metric modules)."""
    return _CLASSES


def _register(cls: type[Metric], replace: bool) -> None:
    """Register ``cls`` under its name. A name already taken is an error unless ``replace``;
    the same class defined again (a module reloaded, a notebook cell run again: the same module
    and qualified name) takes its place. A class of the package defined after a user's
    ``replace=True`` under its name leaves the user's in place."""
    name = cls.name
    existing = _CLASSES.get(name)
    same = existing is not None and (existing.__module__, existing.__qualname__) == (cls.__module__, cls.__qualname__)
    if existing is None or replace or same:
        _CLASSES[name] = cls
        if replace:
            _REPLACED.add(name)
        return
    ours = cls.__module__.startswith("textgen_metrics.")
    if name in _REPLACED and ours:
        return
    new, old = (existing, cls) if ours else (cls, existing)  # a user's class defined before the package's
    raise ValueError(f"metric name {name!r}: {new.__module__}.{new.__qualname__} takes the name of "
                     f"{old.__module__}.{old.__qualname__}; give it another name, or replace that metric on "
                     f"purpose: class {new.__name__}(..., replace=True)")


class Metric:
    """One metric: its declaration and its two steps, :meth:`statistics` and :meth:`score`.

    ``Metric(**options)`` (or ``Metric(options)`` with an ``Options`` instance) checks the
    options; ``metric.score(metric.statistics({"predictions": [...], "references": [...]}))``
    gives a :class:`Result`. A subclass with a ``name`` is registered when it is defined; a name
    already taken is an error unless the class asks to replace that metric:
    ``class MyBLEU(BLEU, replace=True): name = "bleu"``.
    """

    name: ClassVar[str] = ""
    columns: ClassVar[dict[str, str]] = {"predictions": "text", "references": "text_or_list"}
    optional_columns: ClassVar[dict[str, str]] = {}
    Options: ClassVar[type[Options]] = Options
    score_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    # a lower score is better (TER, an error rate; bias, toxicity, hallucination, rates of faults): a
    # gate takes its threshold as a ceiling, a regression its rise as the drop, a meta-evaluation its negation
    lower_is_better: ClassVar[bool] = False
    corpus: ClassVar[bool] = False        # the aggregate is the score of summed statistics
    scores_together: ClassVar[bool] = False  # the statistics are the inputs (ScoredTogether)
    judge: ClassVar[bool] = False         # takes judge= and judge_options=
    # the per-example scores have a signature of their own (BLEU: nltk's smoothing per sentence)
    own_per_example_signature: ClassVar[bool] = False
    # the library function takes the columns as keyword arguments only (the LLM-guided metrics')
    keyword_columns: ClassVar[bool] = False

    def __init_subclass__(cls, replace: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):
            _register(cls, replace)
        elif replace:
            raise TypeError(f"{cls.__qualname__}: replace=True replaces the metric of the class's name; it has none")

    def __init__(self, options: AnyOptions | None = None, **kwargs: Any) -> None:
        if options is None:
            options = self.Options(**kwargs)
        elif kwargs:
            options = dataclasses.replace(options, **kwargs)
        self.options: Any = options

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"

    # -- what it is ------------------------------------------------------------------------------
    def keys(self) -> tuple[str, ...]:
        """The per-example scores, in output order (the main one first)."""
        return (self.name,)

    @property
    def main_key(self) -> str:
        return self.keys()[0]

    def settings_signature(self) -> str:
        """``name|setting:value|...|version:...``: the settings that change the score (without
        the number of references and the bootstrap's fields)."""
        from .signature import signature

        return signature(self.name)

    @functools.cached_property
    def statistics_settings(self) -> str:
        """What the statistics depend on: parts merge only when it is the same."""
        return self.settings_signature()

    def signature(self, nrefs: int | None, *, per_example: bool = False, n_bootstrap: int | None = None,
                  seed: int | None = None, test: tuple[str, int] | None = None, ci: float | None = None) -> str:
        """The signature of a result: the settings, the number of references per example (-1:
        it varies) and, for an interval or a paired test, the bootstrap's fields."""
        fields = {} if nrefs is None else {"nrefs": "var" if nrefs == -1 else nrefs}
        return with_fields(self.settings_signature(), **fields, **bootstrap_fields(n_bootstrap, seed, test, ci))

    # -- the two steps ---------------------------------------------------------------------------
    def check_inputs(self, inputs: Mapping[str, Any]) -> dict[str, list[Any]]:
        """The columns checked (an error names the argument and the example index): a
        ``text_or_list`` column keeps each example as given (a str, or a list of str)."""
        checked: dict[str, list[Any]] = {}
        wanted = {**self.columns, **{c: k for c, k in self.optional_columns.items() if inputs.get(c) is not None}}
        for column, kind in wanted.items():
            values = inputs.get(column)
            if kind == "text":
                checked[column] = check_texts(column, values)
            elif kind == "text_or_list":
                checked[column] = check_reference_sets(column, values)
            else:
                checked[column] = check_text_lists(column, values)
        check_same_length(**checked)
        return checked

    def statistics(self, inputs: Mapping[str, Any]) -> Stats:
        """The per-example statistics of ``inputs`` (``{column: values}``), in input order."""
        checked = self.check_inputs(inputs)
        columns = self.example_statistics(checked) if len(next(iter(checked.values()))) else self.no_statistics()
        refs = checked.get("references")
        if refs is not None:
            columns["nrefs"] = [1 if type(r) is str else len(r) for r in refs]
        return Stats(self.name, self.statistics_settings, columns)

    def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        """The hook: per-example statistics of checked inputs (at least one example), one list
        per name."""
        raise NotImplementedError

    def asks_once(self) -> bool:
        """Whether a run of these options decides something once for all its examples (G-Eval's
        steps, which its judge writes when not given): parts of a corpus scored apart then get
        it decided once, by :meth:`pin_run`."""
        return False

    def pin_run(self, columns: Sequence[str]) -> tuple[dict[str, Any], dict[str, int]]:
        """What a run decides once (:meth:`asks_once`), decided now for a run given the inputs
        ``columns``: the options that make every part of a corpus scored apart run alike, and
        the counters (a judge's usage) deciding it cost, which the merged statistics' totals
        count as one run's would. Nothing to decide: ``({}, {})``."""
        return {}, {}

    def no_statistics(self) -> dict[str, list[Any]]:
        """The columns of no examples (an empty part of a corpus)."""
        return {k: [] for k in self.statistic_names()}

    def statistic_names(self) -> tuple[str, ...]:
        """The names of the per-example statistics (the columns of :meth:`example_statistics`)."""
        return self.keys()

    def score(self, stats: Stats) -> Result:
        """The result over ``stats``: the aggregate, the per-example values, the intervals asked
        for (``confidence_level``) and the signature."""
        raise NotImplementedError

    # -- the parts of a score --------------------------------------------------------------------
    def _check_stats(self, stats: Stats) -> None:
        if stats.metric != self.name or stats.settings != self.statistics_settings:
            raise ValueError(f"statistics of {stats.metric} ({stats.settings}) cannot be scored by "
                             f"{self.name} ({self.statistics_settings})")
        if not stats.count:
            raise InputError("no examples; give at least one prediction", next(iter(self.columns)))

    @staticmethod
    def nrefs(stats: Stats) -> int | None:
        """sacrebleu's ``num_refs``: the references per example when every example has as many,
        else -1; None for a metric without references."""
        counts = stats.columns.get("nrefs")
        if counts is None:
            return None
        kinds = set(counts)
        return kinds.pop() if len(kinds) == 1 else -1

    def _bootstrap_signatures(self, stats: Stats) -> tuple[str, str | None]:
        """(aggregate's, per example's or None) signature, with the interval's fields when one is
        asked; the per-example scores' own only where the metric declares one."""
        level = self.options.confidence_level
        fields: dict[str, Any] = {}
        if level is not None:
            fields = {"n_bootstrap": self.options.n_resamples, "seed": self.options.seed, "ci": level}
        nrefs = self.nrefs(stats)
        per_example = self.signature(nrefs, per_example=True, **fields) if self.own_per_example_signature else None
        return self.signature(nrefs, **fields), per_example

    def resampling(self, stats: Stats) -> CorpusStatistics:
        """What a corpus metric's intervals and paired tests resample: its per-example
        statistics and the score of their sum."""
        raise NotImplementedError(f"{self.name} resamples its per-example scores")

    # -- front ends ------------------------------------------------------------------------------
    @classmethod
    def option_fields(cls) -> list[dataclasses.Field[Any]]:
        return ordered_fields(cls.Options)

    @classmethod
    def option_kinds(cls) -> dict[str, str]:
        """``{option: kind}`` of the options a user sets (the command line's ``--option``, the
        Spaces' option box); not the arguments the front ends set themselves."""
        return {f.name: f.metadata.get("kind", "json") for f in cls.option_fields() if not f.metadata.get("front_end")}

    @classmethod
    def option_help(cls) -> dict[str, str]:
        return {f.name: f.metadata.get("doc", "") for f in cls.option_fields() if not f.metadata.get("front_end")}

    @classmethod
    def decoded_text_options(cls) -> dict[str, Any]:
        """``{option: value}`` that suit text decoded from a model's ids (each option's
        ``decoded``), the Trainer hook's defaults."""
        return {f.name: f.metadata["decoded"] for f in cls.option_fields() if "decoded" in f.metadata}

    @classmethod
    def takes(cls, argument: str) -> bool:
        """Whether the options have a field ``argument`` (``progress``, ``judge``...)."""
        return any(f.name == argument for f in dataclasses.fields(cls.Options))

    @classmethod
    def check_options(cls, options: Mapping[str, Any], where: str = "options") -> None:
        """A ValueError naming an option that the metric does not take, and the ones it does."""
        known = cls.option_kinds()
        for name in options:
            if name not in known and not (cls.judge and name == "judge"):
                raise OptionError(f"{where}: {cls.name} has no option {name!r}; its options: "
                                  f"{', '.join(sorted(known)) or 'none'}", name)

    @classmethod
    def parse_option(cls, name: str, text: str, where: str | None = None) -> Any:
        """The option ``name`` from the text a user typed (the command line's ``--option``), by
        its kind (:func:`parse_option_text`); an OptionError naming ``where`` (default: the
        option) for a text that is not one."""
        cls.check_options({name: None}, where=where or "options")
        return parse_option_text(cls.option_kinds()[name], text, where or name)

    @classmethod
    def function(cls) -> MetricFunction:
        """The library function (``textgen_metrics.<name>``): the columns, then the options as
        keyword arguments with their defaults; the class's docstring with the options' help."""
        made = cls.__dict__.get("_function")
        if made is None:
            made = _make_function(cls)
            cls._function = made  # type: ignore[attr-defined]
        return made


def _make_function(cls: type[Metric]) -> MetricFunction:
    column_kind = inspect.Parameter.KEYWORD_ONLY if cls.keyword_columns else inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter(c, column_kind) for c in cls.columns]
    params += [inspect.Parameter(c, inspect.Parameter.KEYWORD_ONLY, default=None) for c in cls.optional_columns]
    fields = cls.option_fields()
    for f in fields:
        kind = inspect.Parameter.KEYWORD_ONLY if f.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(inspect.Parameter(f.name, kind, default=f.default, annotation=f.type))
    params.sort(key=lambda p: p.kind)  # keyword-only after the others
    sig = inspect.Signature(params)
    columns = {*cls.columns, *cls.optional_columns}
    positional = [p.name for p in params if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    known = {p.name for p in params}

    def fn(*args: Any, **kwargs: Any) -> dict[str, Any]:
        # the binding of ``sig``, with its errors, written out (inspect's costs 40 us a call)
        if len(args) > len(positional):
            raise TypeError(f"{cls.name}() takes {len(positional)} positional arguments but {len(args)} were given")
        arguments = dict(zip(positional, args, strict=False))
        for key in kwargs:
            if key in arguments:
                raise TypeError(f"{cls.name}() got multiple values for argument {key!r}")
            if key not in known:
                raise TypeError(f"{cls.name}() got an unexpected keyword argument {key!r}")
        arguments.update(kwargs)
        for column in cls.columns:
            if column not in arguments:
                raise TypeError(f"{cls.name}() missing a required argument: {column!r}")
        inputs = {c: arguments.pop(c) for c in columns if c in arguments}
        metric = cls(**arguments)
        result = metric.score(metric.statistics(inputs))
        return result.as_dict(getattr(metric.options, "use_aggregator", True))

    fn.__signature__ = sig  # type: ignore[attr-defined]
    fn.__name__ = fn.__qualname__ = cls.name
    fn.__module__ = cls.__module__
    lines = [f"    {f.name}: {f.metadata['doc']}" for f in fields if f.metadata.get("doc")]
    fn.__doc__ = inspect.cleandoc(cls.__doc__ or cls.name) + ("\n\nArguments beside the inputs:\n" + "\n".join(lines)
                                                              if lines else "")
    return fn


# -- the families ----------------------------------------------------------------------------------
class MeanMetric(Metric):
    """A metric whose aggregate is the exact mean of per-example scores (examples without a
    score, None, left out). Its statistics are the per-example scores themselves: the hook is
    :meth:`example_statistics`, a list per score key."""

    def score(self, stats: Stats) -> Result:
        self._check_stats(stats)
        return self.mean_result(stats, {k: stats.columns[k] for k in self.keys()})

    def mean_result(self, stats: Stats, per_example: dict[str, list[Any]], extras: dict[str, Any] | None = None,
                    aggregate: dict[str, Any] | None = None, intervals_asked: bool = True) -> Result:
        """The result of per-example scores: their means (or ``aggregate``), their intervals
        (with ``confidence_level``, unless not ``intervals_asked``), the signature."""
        if aggregate is None:
            aggregate = {k: mean(v) for k, v in per_example.items()}
        intervals: dict[str, list[float | None]] = {}
        level = self.options.confidence_level
        if level is not None and intervals_asked:
            for key in self.keys():
                low, high = percentile_interval(per_example[key], level, self.options.n_resamples,
                                                self.options.seed, bounds=self.score_range)
                intervals[key] = [low, high]
        sign, per_sign = self._bootstrap_signatures(stats)
        return Result(self.name, self.keys(), stats.count, aggregate, lambda: dict(per_example), dict(extras or {}),
                      intervals, sign, per_sign)


class CorpusMetric(Metric):
    """A metric whose aggregate is the score of its per-example sufficient statistics summed
    (BLEU, chrF, TER: not the mean of sentence scores). Hooks: :meth:`example_statistics`,
    :meth:`aggregate` (from the statistics, summed in row order), :meth:`per_example_values`
    (each example's own score) and :meth:`resampling` (for intervals and paired tests)."""

    corpus = True
    Options: ClassVar[type[Options]] = CorpusOptions

    def _bootstrap_signatures(self, stats: Stats) -> tuple[str, str | None]:
        """With an interval, the signatures name its rule when it is not sacrebleu's
        (``interval:percentile``): sacrebleu's own string is kept for sacrebleu's interval."""
        sign, per_sign = super()._bootstrap_signatures(stats)
        if self.options.confidence_level is None or self.options.interval == "sacrebleu":
            return sign, per_sign
        mark = functools.partial(with_fields, interval=self.options.interval)
        return mark(sign), None if per_sign is None else mark(per_sign)

    def aggregate(self, stats: Stats) -> dict[str, Any]:
        raise NotImplementedError

    def per_example_values(self, stats: Stats) -> dict[str, list[Any]]:
        raise NotImplementedError

    def extras(self) -> dict[str, Any]:
        """Settings reported beside the scores (chrF's orders)."""
        return {}

    def score(self, stats: Stats) -> Result:
        self._check_stats(stats)
        intervals: dict[str, list[float | None]] = {}
        level = self.options.confidence_level
        aggregate = self.aggregate(stats)
        if level is not None:  # (examples all alike: the aggregate for both bounds)
            low, high = corpus_interval(self.resampling(stats), level, self.options.n_resamples, self.options.seed,
                                        self.options.interval, score=aggregate[self.main_key],
                                        bounds=self.score_range)
            intervals[self.main_key] = [low, high]
        sign, per_sign = self._bootstrap_signatures(stats)
        return Result(self.name, self.keys(), stats.count, aggregate,
                      lambda: self.per_example_values(stats), self.extras(), intervals, sign, per_sign)


class ScoredTogether(MeanMetric):
    """A mean metric whose per-example scores depend on which examples are scored together
    (BERTScore's float32 sums follow its batches; with idf its weights come from every
    reference): its statistics are its checked inputs, and :meth:`score_inputs` scores them all
    at once, so that merged parts score exactly as the whole corpus in one call."""

    scores_together = True

    @functools.cached_property
    def statistics_settings(self) -> str:
        return f"{self.name}|inputs"

    def statistic_names(self) -> tuple[str, ...]:
        return tuple(self.columns)

    def example_statistics(self, inputs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        return {c: list(v) for c, v in inputs.items()}

    def score_inputs(self, inputs: dict[str, list[Any]]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
        """(per-example scores by key, extras) of every example at once."""
        raise NotImplementedError

    def score(self, stats: Stats) -> Result:
        self._check_stats(stats)
        inputs = {c: stats.columns[c] for c in (*self.columns, *self.optional_columns) if c in stats.columns}
        per_example, extras = self.score_inputs(inputs)
        return self.mean_result(stats, per_example, extras)
