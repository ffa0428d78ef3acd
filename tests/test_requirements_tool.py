"""tools/requirements.py lists what ``pip install -e '.[test]'`` would install beside the package
(``make install`` gives pip that list while a second pip builds the package alone): the same
requirements setuptools wrote into the installed package's metadata from setup.cfg."""

from __future__ import annotations

import importlib.metadata
import sys

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import requirements  # noqa: E402


def _applying(lines: list[str], extra: str) -> set[tuple[str, frozenset[str], str]]:
    """The requirements that apply with ``extra`` on this Python, each as (name, extras, specifier)."""
    out = set()
    for line in lines:
        r = Requirement(line)
        if r.marker is None or r.marker.evaluate({"extra": extra}):
            out.add((canonicalize_name(r.name), frozenset(r.extras), str(r.specifier)))
    return out


@pytest.mark.parametrize("extra", ["test", "bertscore", "spaces"])
def test_the_list_is_the_packages_own_metadata(extra):
    listed = requirements.requirements([extra])
    assert len(listed) == len(set(listed))
    written = importlib.metadata.requires("textgen-metrics") or []
    assert _applying(listed, extra) == _applying(written, extra)
    # and the base requirements come first, as in setup.cfg
    base = requirements.requirements([])
    assert listed[:len(base)] == base and {"numpy>=1.23", "sacrebleu>=2.2,<3"} <= set(base)


def test_an_unknown_extra_is_refused_by_name(capsys):
    with pytest.raises(SystemExit, match=r"no extra 'tset' \(it has evaluate, .*test"):
        requirements.main(["tset"])
    assert requirements.main(["ray"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "ray[data]>=2.40,<3" and "numpy>=1.23" in out
