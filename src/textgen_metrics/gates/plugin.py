"""The pytest plugin (entry point ``pytest11``: ``textgen_metrics_gates``); docs/gating.md documents it.

The shape of pytest-xdist's and deepeval's plugins: options in :func:`pytest_addoption`, a
fixture, the figures through ``record_property`` (JUnit XML properties) and a table in
:func:`pytest_terminal_summary`.

- fixture ``metric_gate(metric, threshold, **gate_arguments)``: calls
  :func:`~textgen_metrics.gates.gate`, records the gate's figures as the test's properties
  (metric, score, ci_low, ci_high, n, repeats, unscored, verdict), fails the test on ``fail``
  and treats ``inconclusive`` as ``--gate-inconclusive`` says (fail, skip or pass); returns the
  :class:`~textgen_metrics.gates.GateResult`.
- ``--judge-replay off|record|strict`` and ``--judge-recording PATH``: the defaults of the
  fixture's ``judge_replay`` and ``judge_recording`` (an argument given in the test wins).
- ``--gate-summary PATH``: the Markdown table of every gate of the run, also appended to
  ``$GITHUB_STEP_SUMMARY`` where that is set; the terminal shows the table at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .gate import GateResult

__all__ = ["metric_gate", "pytest_addoption", "pytest_configure", "pytest_terminal_summary", "properties"]

_RESULTS = pytest.StashKey[list[tuple[str, "GateResult"]]]()
INCONCLUSIVE = ("fail", "skip", "pass")
# replay.REPLAY_MODES, written out: pytest loads this plugin in every run of every project of the
# environment, and the package (its judges, NumPy) is imported only when a gate runs
REPLAY_MODES = ("off", "record", "strict")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("textgen-metrics", "quality gates of textgen-metrics")
    group.addoption("--judge-replay", choices=REPLAY_MODES, default=None,
                    help="replay the judge of metric_gate: strict (from the recording, nothing sent), record "
                         "(call the judge, write the recording) or off")
    group.addoption("--judge-recording", default=None, metavar="PATH",
                    help="the judge recording (sorted JSON lines) of --judge-replay")
    group.addoption("--gate-inconclusive", choices=INCONCLUSIVE, default="fail",
                    help="what an inconclusive gate does to its test (default: fail)")
    group.addoption("--gate-summary", default=None, metavar="PATH",
                    help="write a Markdown table of the gates (also appended to $GITHUB_STEP_SUMMARY when set)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RESULTS] = []


def properties(result: GateResult) -> list[tuple[str, Any]]:
    """The JUnit XML properties of a gate."""
    low, high = result.ci
    return [("metric", f"{result.metric}.{result.key}"), ("score", result.score), ("ci_low", low), ("ci_high", high),
            ("n", result.n), ("repeats", result.repeats), ("unscored", result.unscored), ("verdict", result.verdict)]


@pytest.fixture
def metric_gate(request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
                ) -> Callable[..., GateResult]:
    """``metric_gate(metric, threshold, **gate_arguments)``: a gate that fails the test unless it
    passes (see the module's docstring)."""
    from .gate import gate

    config = request.config

    def run(metric: Any, threshold: float, **arguments: Any) -> GateResult:
        replay = config.getoption("judge_replay")
        if replay is not None:
            arguments.setdefault("judge_replay", replay)
        recording = config.getoption("judge_recording")
        if recording is not None:
            arguments.setdefault("judge_recording", recording)
        result = gate(metric, threshold, **arguments)
        for name, value in properties(result):
            record_property(name, value)
        config.stash[_RESULTS].append((request.node.nodeid, result))
        policy = config.getoption("gate_inconclusive")
        if result.verdict == "fail" or (result.verdict == "inconclusive" and policy == "fail"):
            pytest.fail(result.describe(), pytrace=False)
        if result.verdict == "inconclusive" and policy == "skip":
            pytest.skip(result.describe())
        return result

    return run


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, [])
    if not results:
        return
    from . import report

    rows = report.rows_of([(name, r.as_dict()) for name, r in results])
    terminalreporter.write_sep("=", "quality gates")
    terminalreporter.write_line(report.text(rows))
    report.write_summary(report.markdown(rows), config.getoption("gate_summary"))
