"""Assemble a Hugging Face Space folder that deploys as it is: ``make space NAME=<metric>``.

    python tools/build_space.py NAME [--out DIR] [--python PYTHON] [--wheel WHEEL]

NAME is a metric folder (``metrics/NAME/``) or ``playground`` (``spaces/playground/``). The
Space lands in ``DIR/NAME/`` (default ``build/spaces/NAME/``), replaced if it is there:

- the folder's own files: ``app.py``, the evaluate script, ``README.md`` (its front matter given
  ``python_version``: the Python the package was built for) and ``packages.txt`` (Debian
  packages, METEOR's WordNet) where the folder has one;
- ``textgen_metrics`` itself, beside ``app.py``: a wheel built now from this checkout
  (``pip wheel --no-deps``; the compiled core is built for this Python and platform), installed
  into the folder with ``pip install --no-deps --target``. ``python app.py`` imports it from
  there, since a script's own folder comes first on ``sys.path``;
- ``requirements.txt``: what that wheel's metadata requires, for the extras the source folder's
  ``requirements.txt`` names (``textgen-metrics[spaces,bertscore]``), and the folder's other
  lines (``gradio>=6``): packages of the package index only;
- ``.gitattributes``: the compiled core and the packaged data files go through Git LFS when the
  folder is pushed with git (``hf upload`` needs no such file).

Why the package sits in the folder rather than a wheel named in ``requirements.txt``: a Space's
builder runs ``pip install -r requirements.txt`` with that one file mounted, before the rest of
the repository is copied in, so a path to a wheel beside it does not resolve there. Why a wheel
and not the sdist: the sdist would have to be compiled on the Space, at the same install step,
from the same missing path. The price: the Space must run the same Python (``python_version``
in the front matter says so) on Linux x86_64 (what Spaces run); a glibc at least as new as the
build machine's is needed (Debian 12's 2.36 here, that of the Spaces' Debian images).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterable
from email.parser import Parser
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:  # a venv with the library alone: pip's own copy of packaging
    from pip._vendor.packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "textgen-metrics"
# what the Space folder never needs of the source folder
SKIP = {"__pycache__", ".ipynb_checkpoints"}
LFS_PATTERNS = ("*.so", "*.xz")


class SpaceBuildError(Exception):
    """A Space cannot be assembled (unknown name, wrong platform, a failed build): the message says why."""


def source_folder(name: str) -> Path:
    """The folder of the Space ``name``: ``metrics/NAME`` or ``spaces/playground``."""
    folder = ROOT / "spaces" / "playground" if name == "playground" else ROOT / "metrics" / name
    if not re.fullmatch(r"[a-z0-9_]+", name) or not (folder / "app.py").is_file():
        names = sorted(p.parent.name for p in ROOT.glob("metrics/*/app.py")) + ["playground"]
        raise SpaceBuildError(f"NAME: {name!r} is not a Space; one of {', '.join(names)}")
    return folder


def declared(folder: Path) -> tuple[list[str], list[str]]:
    """(extras of textgen-metrics, other requirement lines) of the folder's requirements.txt."""
    extras: list[str] = []
    others: list[str] = []
    for raw in (folder / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        if req.name == PACKAGE:
            extras += sorted(req.extras)
        else:
            others.append(line)
    return extras, others


def check_platform() -> None:
    """Spaces run Linux x86_64: a compiled core built elsewhere would not load there."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        raise SpaceBuildError(f"this machine is {sys.platform} {platform.machine()}: the compiled core must be built "
                              "on Linux x86_64, as Spaces run (e.g. in a python:3.11 container)")


def build_wheel(python: str, out: Path) -> Path:
    """A wheel of this checkout (``pip wheel --no-deps``), built from a copy of its files (those
    git tracks or would track) so that the checkout gets no build folders."""
    with tempfile.TemporaryDirectory(prefix="textgen-metrics-src-") as tmp:
        src = Path(tmp) / "src"
        for rel in checkout_files():
            dest = src / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest)
        _reuse_core(python, src)
        run([python, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(out)])
    wheels = sorted(out.glob("textgen_metrics-*.whl"))
    if len(wheels) != 1:
        raise SpaceBuildError(f"pip wheel left {len(wheels)} wheels in {out}")
    return wheels[0]


def _reuse_core(python: str, src: Path) -> None:
    """The checkout's compiled core (``pip install -e .`` built it in place), where it is newer than
    every source of it, put where setuptools keeps its build in the copy ``src``: setuptools then
    takes it as built (it compares the same times as an in-place rebuild) instead of compiling
    the C++ again (about 26 s of CPU on this 2-core machine). Nothing is put where it is older
    or built for another Python."""
    code = ("import sys, sysconfig; print(sysconfig.get_platform(), sys.implementation.cache_tag, "
            "sysconfig.get_config_var('EXT_SUFFIX'))")
    try:
        plat, tag, suffix = subprocess.run([python, "-c", code], check=True, capture_output=True,
                                           text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError, ValueError):
        return
    native = ROOT / "src" / "textgen_metrics" / "_native"
    built = native / f"_core{suffix}"
    sources = [*native.glob("*.cpp"), *native.glob("*.hpp")]
    if not built.is_file() or not sources or built.stat().st_mtime <= max(f.stat().st_mtime for f in sources):
        return
    dest = src / "build" / f"lib.{plat}-{tag}" / "textgen_metrics" / "_native" / built.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, dest)


def checkout_files() -> list[str]:
    """The checkout's files as git sees them (tracked, and untracked ones it does not ignore)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             check=True, capture_output=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SpaceBuildError(f"git ls-files failed in {ROOT}: {e}") from e
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def wheel_requirements(wheel: Path, extras: Iterable[str]) -> list[str]:
    """The wheel's ``Requires-Dist`` that hold without an extra or for one of ``extras``."""
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(name).decode("utf-8"))
    wanted = ["", *extras]
    known = set(meta.get_all("Provides-Extra") or [])
    unknown = [e for e in extras if e not in known]
    if unknown:
        raise SpaceBuildError(f"requirements.txt: {PACKAGE} has no extra {unknown[0]!r}; its extras: "
                              f"{', '.join(sorted(known))}")
    out: list[str] = []
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in wanted):
            req.marker = None
            out.append(str(req))
    return out


def set_python_version(readme: str, version: str) -> str:
    """The card with ``python_version: "X.Y"`` in its front matter (replaced or added)."""
    m = re.match(r"\A---\n(.*?\n)---\n", readme, re.S)
    if m is None:
        raise SpaceBuildError("README.md: no Space front matter (--- ... ---) at its top")
    lines = [line for line in m.group(1).splitlines(keepends=True) if not line.startswith("python_version:")]
    lines.append(f'python_version: "{version}"\n')
    return "---\n" + "".join(lines) + "---\n" + readme[m.end():]


def run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise SpaceBuildError(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n{proc.stderr[-3000:]}")


def build_space(name: str, out_root: Path, python: str = sys.executable, wheel: Path | None = None) -> Path:
    """Assemble the Space ``name`` in ``out_root/name`` and return that folder; ``wheel``: this
    checkout's wheel, built before for ``python`` (None: build it now)."""
    folder = source_folder(name)
    check_platform()
    if wheel is not None and not wheel.is_file():
        raise SpaceBuildError(f"--wheel: no file {wheel}")
    if wheel is not None and not re.fullmatch(r"textgen_metrics-[^-]+-(?:\d[^-]*-)?[^-]+-[^-]+-[^-]+\.whl", wheel.name):
        raise SpaceBuildError(f"--wheel: {wheel.name!r} is not a textgen-metrics wheel")
    extras, others = declared(folder)
    target = out_root / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for item in sorted(folder.iterdir()):
        if item.name in SKIP or item.name == "requirements.txt":
            continue
        if item.is_dir():
            shutil.copytree(item, target / item.name, ignore=shutil.ignore_patterns(*SKIP))
        else:
            shutil.copy2(item, target / item.name)
    version = python_version(python)
    readme = target / "README.md"
    readme.write_text(set_python_version(readme.read_text(encoding="utf-8"), version), encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="textgen-metrics-wheel-") as tmp:
        wheel = wheel or build_wheel(python, Path(tmp))
        run([python, "-m", "pip", "install", "--no-deps", "--no-compile", "--no-index", "-q", "--target", str(target),
             str(wheel)])
        requirements = wheel_requirements(wheel, extras)
        wheel_name = wheel.name
    shutil.rmtree(target / "bin", ignore_errors=True)  # the console script: no use in a Space
    lines = list(dict.fromkeys(requirements + others))
    (target / "requirements.txt").write_text(
        f"# Written by tools/build_space.py (make space NAME={name}). textgen_metrics itself is in this\n"
        f"# folder, installed from {wheel_name} (CPython {version}, Linux x86_64), not on the\n"
        f"# package index; these are its dependencies{' with the extras ' + ', '.join(extras) if extras else ''}.\n"
        + "".join(f"{line}\n" for line in lines), encoding="utf-8")
    (target / ".gitattributes").write_text(
        "".join(f"{p} filter=lfs diff=lfs merge=lfs -text\n" for p in LFS_PATTERNS), encoding="utf-8")
    return target


def python_version(python: str) -> str:
    """``X.Y`` of ``python``."""
    if python == sys.executable:
        return sysconfig.get_python_version()
    proc = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_python_version())"],
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def folder_size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("name", help="a metric folder's name (metrics/NAME) or playground")
    p.add_argument("--out", default=str(ROOT / "build" / "spaces"), help="where NAME/ goes (default build/spaces)")
    p.add_argument("--python", default=sys.executable,
                   help="the Python that builds the wheel and that the Space will run (default: this one)")
    p.add_argument("--wheel", type=Path,
                   help="this checkout's wheel, built before for that Python (default: build it now)")
    args = p.parse_args(argv)
    try:
        target = build_space(args.name, Path(args.out), args.python, args.wheel)
    except SpaceBuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rel = os.path.relpath(target)
    print(f"{rel}: {folder_size(target) / 1e6:.1f} MB; deploy it as it is, e.g. "
          f"hf upload USER/SPACE {rel} . --repo-type space")
    return 0


if __name__ == "__main__":
    sys.exit(main())
