"""Judge audits: is a judge fit to trust? Position, verbosity, repeat variance and calibration,
each with a percentile bootstrap interval, run through the judge engine like any scoring run
(``textgen_metrics.audit``, ``textgen-metrics audit``) or computed on verdicts already made
(:mod:`textgen_metrics.stats.audit`: ``position_audit`` and the other probe statistics).

- ``plan``: :class:`AuditPlan`, what to audit declared as one value;
- ``probes``: the probes run through a real judge (the metric's own runs: plain, padded,
  repeated, swapped);
- ``run``: ``audit(...)`` (the public ``textgen_metrics.audit``), the JSON result, the dry-run
  estimate;
- ``report``: the judge card (HTML with inline SVG charts, plain-words findings) and the text
  summary;
- ``cli``: the ``audit`` subcommand (``add_audit_parser``).

The package is named ``audits`` so that ``textgen_metrics.audit`` is only ever the function,
whatever was imported first. Importing it loads no judge and no metric.
"""

from .plan import AuditPlan as AuditPlan
