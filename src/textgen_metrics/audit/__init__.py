"""Judge audits: is a judge fit to trust? Position, verbosity, repeat variance and calibration,
each with a percentile bootstrap interval, run through the judge engine like any scoring run
(``run.audit``, ``textgen-metrics audit``) or computed on verdicts already made
(``stats.position_audit`` and the other probe statistics).

- ``stats``: the probe statistics on verdicts and scores already made (NumPy, vectorised);
- ``probes``: the probes run through a real judge (the metric's own runs: plain, padded,
  repeated, swapped);
- ``run``: ``audit(...)``, the probes chosen, the JSON result, the dry-run estimate;
- ``report``: the judge card (HTML with inline SVG charts, plain-words findings) and the text
  summary;
- ``cli``: the ``audit`` subcommand (``add_audit_parser``).
"""
