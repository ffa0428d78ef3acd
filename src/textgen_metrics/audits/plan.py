"""What to audit, declared as one value: an :class:`AuditPlan`, as a
:class:`~textgen_metrics.meta.study.Study` declares a meta-evaluation, so that an audit can be
written down, kept beside its results and run again on another judge. :func:`textgen_metrics.audit`
takes it (``audit(plan, judge=...)`` or ``audit(rows, plan=plan, judge=...)``); the command line
builds one from its flags.

The judge (and its options) and ``dry_run`` are the call's, not the plan's: the same plan audits
any judge, and a judge audited twice on the same plan is audited the same way.

This module imports nothing heavy (no judge, no metric), so that the command line can build its
parser and a plan without loading them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..significance import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED

__all__ = ["AuditPlan", "PLAN_FIELDS", "PROBES", "ALT_TEST", "ALL_PROBES"]

PROBES = ("position", "verbosity", "repeat", "calibration")
ALT_TEST = "alt_test"  # run whenever annotator columns are given (no request of its own)
ALL_PROBES = (*PROBES, ALT_TEST)


@dataclass(frozen=True)
class AuditPlan:
    """One judge audit, declared as data; each field is also :func:`textgen_metrics.audit`'s
    keyword of the same name.

    ``metrics``: the LLM-guided metric to audit the judge on (one name, as ``score --metrics``
    takes it, or a ``JudgedMetric`` class); ``source``: the rows (a list of records, a file as
    ``score`` reads it, a bundled set's name; None: given to ``audit`` beside the plan);
    ``split``: a bundled set's or a datasets folder's split; ``allow_empty``: a file's blank
    required text scored as an empty text (by default an error naming its line and column, as
    ``score`` reads files: a blank cell usually means missing data); ``columns`` / ``options``: the
    column map and the metrics' options as ``score`` takes them; ``probes``: the probes to run (a
    sequence or a comma-separated string); ``repeats``: requests asked ``K`` times in all by the
    repeat probe; ``threshold``: the verdict cut on the score mapped to [0, 1];
    ``human_column``: people's labels (gold ``"a"``/``"b"`` for a comparison, 0/1 otherwise);
    ``missing``: the position probe's unusable verdicts, left out (``"omit"``) or a verdict of
    their own (``"as_verdict"``, as LLMBar's statistics.json counts them);
    ``annotator_columns``: several annotators' fields for the alt-test, with ``epsilon`` (its
    allowance for the judge: 0.2 expert annotators, 0.15 skilled, 0.1 crowd workers) and
    ``alt_alpha`` (the false discovery rate of its Benjamini-Yekutieli correction);
    ``confidence_level``, ``n_resamples`` (0: no intervals), ``seed`` (None: fresh randomness):
    every probe's percentile bootstrap interval.

    The values are checked when the audit runs, each error naming its field."""

    metrics: Any = None
    source: Any = None
    split: str | None = None
    allow_empty: bool = False
    columns: Mapping[str, str] | None = None
    options: Mapping[str, Mapping[str, Any]] | None = None
    probes: Sequence[str] | str = PROBES
    repeats: int = 3
    threshold: float = 0.5
    human_column: str | None = None
    missing: str = "omit"
    annotator_columns: Sequence[str] | None = None
    epsilon: float = 0.2
    alt_alpha: float = 0.05
    confidence_level: float = DEFAULT_CONFIDENCE
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int | None = DEFAULT_SEED

    def __post_init__(self) -> None:
        for name in ("probes", "annotator_columns"):  # lists as tuples: a plan equals another declaring the same
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))

    def interval(self) -> dict[str, Any]:
        """The probes' interval settings, as each probe statistic takes them."""
        return {"confidence_level": self.confidence_level, "n_resamples": self.n_resamples, "seed": self.seed}


PLAN_FIELDS = tuple(f.name for f in fields(AuditPlan))
