"""Quality gates (docs/gating.md): a verdict with confidence, a paired regression test, a
judge replayed exactly, from Python, pytest (:mod:`.plugin`) and the command line (:mod:`.config`).

- :mod:`.gate`: ``gate`` / ``assert_gate``, pass / fail / inconclusive from the interval over items;
- :mod:`.regression`: ``regression`` / ``assert_no_regression``, paired per item, Holm over metrics;
- :mod:`.replay`: the judge recording, built on the judge cache;
- :mod:`.scoring`: a metric scored per item and repeat; :mod:`.stats`: the statistics.
"""

from __future__ import annotations

from .gate import VERDICTS, GateResult, assert_gate, gate
from .regression import REGRESSION_VERDICTS, assert_no_regression, regression
from .replay import ReplayError, ReplayFingerprintError, ReplayMissError

__all__ = ["gate", "assert_gate", "GateResult", "VERDICTS", "regression", "assert_no_regression",
           "REGRESSION_VERDICTS", "ReplayError", "ReplayMissError", "ReplayFingerprintError"]
