"""What to meta-evaluate, declared as one value: a :class:`Study`, as mt-metrics-eval's
``tasks.Task`` declares a task, so that a whole protocol (G-Eval's on SummEval, FRANK's, the WMT
metrics task's) is a list of declarations. :func:`textgen_metrics.meta.run.meta_eval` takes it
(``meta_eval(study)`` or ``meta_eval(source, study=study)``); the command line builds one from its
flags, and the metric cards (tools/cards.py) declare theirs with it.

How sure the figures are (confidence level, resamples, permutations, seed, comparisons) and who
computes the scores (the judge) are the call's, not the study's: the same study can be run with
another seed or judge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["Study", "STUDY_FIELDS", "declaration"]

D = TypeVar("D", bound="DataclassInstance")


@dataclass(frozen=True)
class Study:
    """One meta-evaluation, declared as data.

    ``source``: a bundled set's name or a file (None: given to :func:`meta_eval` beside the
    study); ``metrics``: the library's metrics to compute on the rows, each with its options
    (``{"rouge": {"use_stemmer": True}, "bleu": {}}``; a sequence of names takes every metric's
    defaults); ``columns``: the field holding each metric input, as ``score``'s ``--column``;
    ``score_columns``: scores the source already has; ``human_columns``: the human dimensions (a
    bundled set's own by default); ``item_column`` / ``system_column``: a file's item and system
    fields; ``split``: a bundled set's or a datasets folder's split; ``level``, ``group_by``,
    ``statistics``: a bundled set's defaults, else ``segment``, ``none`` and Pearson, Spearman
    and Kendall; ``exclude_systems``: systems whose rows are left out; ``include_systems``: a
    bundled set's reference systems kept (reference-based metrics leave them out by default)."""

    source: str | None = None
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    columns: Mapping[str, str] = field(default_factory=dict)
    score_columns: Sequence[str] = ()
    human_columns: Sequence[str] | None = None
    item_column: str | None = None
    system_column: str | None = None
    split: str | None = None
    level: str | None = None
    group_by: str | None = None
    statistics: Sequence[str] | None = None
    exclude_systems: Sequence[str] = ()
    include_systems: Sequence[str] = ()

    def __post_init__(self) -> None:
        given: object = self.metrics
        if isinstance(given, (str, Sequence)):  # names: each metric with its defaults
            names = [given] if isinstance(given, str) else list(given)
            object.__setattr__(self, "metrics", {name: {} for name in names})
        for name in _NAME_LISTS:  # lists as tuples: a study equals another declaring the same
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))

    def metric_options(self) -> dict[str, dict[str, Any]]:
        """The metrics' options as :meth:`textgen_metrics.run.Run.build` takes them (the metrics
        that set any)."""
        return {name: dict(options) for name, options in self.metrics.items() if options}


STUDY_FIELDS = tuple(f.name for f in fields(Study))
_NAME_LISTS = ("score_columns", "human_columns", "statistics", "exclude_systems", "include_systems")


def declaration(call: str, param: str, kind: type[D], first: Any, given: D | None, keywords: Mapping[str, Any],
                known: Collection[str], make: Callable[[dict[str, Any]], D]) -> D:
    """The declaration a call runs (a :class:`Study` for ``meta_eval``, an ``AuditPlan`` for
    ``audit``): given as the first argument or as ``param``, or made by ``make`` of the call's
    ``keywords`` (each one of ``known``, the declaration's fields as the call names them); on
    ``first``, the source, where one is given beside it. A declaration and one of its fields in
    the same call are refused, so that what ran is what the declaration says."""
    if isinstance(first, kind):
        if given is not None:
            raise TypeError(f"{call}: give the {param} once, as the first argument or as {param}=")
        first, given = None, first
    unknown = sorted(set(keywords) - set(known))
    if unknown:
        raise TypeError(f"{call}() got an unexpected keyword argument {unknown[0]!r}")
    if given is not None and keywords:
        raise TypeError(f"{call}: {sorted(keywords)[0]!r} is the {param}'s; declare it in the {kind.__name__} "
                        f"(dataclasses.replace), or give every field as a keyword without a {param}")
    value = given if given is not None else make(dict(keywords))
    return value if first is None else dataclasses.replace(value, source=first)
