"""A native crash never loses a run (issue 44): the suite's runner as the Makefile starts it
(pytest-xdist's workers, setup.cfg's options, tests/conftest.py's backstop) on a planted suite: a
test that kills its own process with SIGSEGV, one that aborts, one that hangs in Python, one that
hangs where no signal reaches it (as in native code), and tests that pass around them. Each is
reported as that test's failure by name, and the run goes on to its summary."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PLANTED = '''
import os, signal, time

def test_a_passes_before():
    assert True

def test_b_segfaults():
    os.kill(os.getpid(), signal.SIGSEGV)

def test_c_aborts():
    os.abort()

def test_d_hangs():
    time.sleep(600)

def test_f_hangs_where_no_signal_reaches():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(600)

def test_e_passes_after():
    assert True
'''


def _makefile_pytest_options() -> list[str]:
    """The pytest options of the Makefile's $(PYTEST) line: the worker count and distribution."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = re.search(r"^PYTEST := (?:env (?:-u \w+ )+)?\$\(PY\) -m pytest (.*)$", text, re.M)
    assert line, "Makefile: no PYTEST line"
    return re.sub(r"\$\(or \$\(WORKERS\),(\d+)\)", r"\1", line.group(1)).split()


@pytest.mark.slow
def test_a_crashing_or_hanging_test_fails_by_name_and_the_run_reaches_its_summary(tmp_path: Path):
    (tmp_path / "test_planted.py").write_text(PLANTED)
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    # setup.cfg's [tool:pytest] (markers, the timeout and its method), with a short timeout for the planted hangs
    pytest_section = (ROOT / "setup.cfg").read_text().split("[tool:pytest]", 1)[1]
    (tmp_path / "setup.cfg").write_text("[tool:pytest]" + pytest_section.replace("testpaths = tests", "testpaths = ."))
    proc = subprocess.run([sys.executable, "-m", "pytest", *_makefile_pytest_options(), "-o", "timeout=10",
                           "-p", "no:cacheprovider", "test_planted.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    summary = proc.stdout.strip().splitlines()[-1]
    assert re.search(r"\b4 failed, 2 passed\b", summary), out[-3000:]
    for name in ("test_b_segfaults", "test_c_aborts", "test_d_hangs", "test_f_hangs_where_no_signal_reaches"):
        assert re.search(rf"FAILED test_planted.py::{name}\b", out), (name, out[-3000:])
    for name in ("test_b_segfaults", "test_c_aborts", "test_f_hangs_where_no_signal_reaches"):
        assert f"crashed while running 'test_planted.py::{name}'" in out, (name, out[-3000:])
    assert re.search(r"FAILED test_planted.py::test_d_hangs - Failed: Timeout", out), out[-3000:]
    for name in ("test_a_passes_before", "test_e_passes_after"):
        assert f"test_planted.py::{name}" not in out.split("short test summary info")[-1], out[-3000:]
