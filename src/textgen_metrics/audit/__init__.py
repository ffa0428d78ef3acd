"""Judge audits: is a judge fit to trust? Position, verbosity, repeat variance and calibration,
each with a percentile bootstrap interval, run through the judge engine like any scoring run
(``run.audit``, ``textgen-metrics audit``) or computed on verdicts already made
(:mod:`textgen_metrics.stats.audit`: ``position_audit`` and the other probe statistics).

- ``probes``: the probes run through a real judge (the metric's own runs: plain, padded,
  repeated, swapped);
- ``run``: ``audit(...)``, the probes chosen, the JSON result, the dry-run estimate;
- ``report``: the judge card (HTML with inline SVG charts, plain-words findings) and the text
  summary;
- ``cli``: the ``audit`` subcommand (``add_audit_parser``).
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    """This package, callable as :func:`~textgen_metrics.audit.run.audit`: ``textgen_metrics.audit``
    names both the function (the public ``textgen_metrics.audit(...)``) and this package, and which of
    the two the package attribute holds depends on what was imported first (importing a submodule
    sets the attribute to the package). Either way ``textgen_metrics.audit(...)`` runs the audit."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        from .run import audit

        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
