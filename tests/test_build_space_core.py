"""``make space``'s wheel takes the compiled core the checkout already has, where it is newer than
every source of it (tools/build_space.py ``_reuse_core``), and compiles it otherwise."""

from __future__ import annotations

import os
import sys
import sysconfig
import zipfile
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import build_space  # noqa: E402

SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def _checkout(tmp_path: Path, core_age: float) -> Path:
    """A checkout whose core was built ``core_age`` seconds after its sources (negative: before)."""
    native = tmp_path / "checkout" / "src" / "textgen_metrics" / "_native"
    native.mkdir(parents=True)
    for name in ("_core.cpp", "rouge.hpp"):
        (native / name).write_text("// source\n")
        os.utime(native / name, (1_000_000, 1_000_000))
    (native / f"_core{SUFFIX}").write_bytes(b"\x7fELF built")
    os.utime(native / f"_core{SUFFIX}", (1_000_000 + core_age, 1_000_000 + core_age))
    return tmp_path / "checkout"


def test_a_core_newer_than_its_sources_is_put_where_setuptools_keeps_its_build(tmp_path, monkeypatch):
    monkeypatch.setattr(build_space, "ROOT", _checkout(tmp_path, 60))
    build_space._reuse_core(sys.executable, tmp_path / "copy")
    placed = list((tmp_path / "copy" / "build").rglob(f"_core{SUFFIX}"))
    assert [p.relative_to(tmp_path / "copy").as_posix() for p in placed] == [
        f"build/lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}/textgen_metrics/_native/_core{SUFFIX}"]
    assert placed[0].read_bytes() == b"\x7fELF built" and placed[0].stat().st_mtime == 1_000_060


def test_a_core_older_than_a_source_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setattr(build_space, "ROOT", _checkout(tmp_path, -60))
    build_space._reuse_core(sys.executable, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_the_checkout_wheel_holds_the_checkouts_own_core(checkout_wheel):
    """The run's wheel (a fresh clone's ``make test``: the editable install built the core after
    the sources were checked out) holds the very file the checkout imports."""
    native = ROOT / "src" / "textgen_metrics" / "_native"
    core = native / f"_core{SUFFIX}"
    newest_source = max(f.stat().st_mtime for f in [*native.glob("*.cpp"), *native.glob("*.hpp")])
    with zipfile.ZipFile(checkout_wheel) as z:
        in_wheel = z.read(f"textgen_metrics/_native/_core{SUFFIX}")
    if core.stat().st_mtime > newest_source:
        assert in_wheel == core.read_bytes()
    else:  # a source edited since the core was built: the wheel compiled its own
        assert in_wheel and in_wheel != core.read_bytes()
