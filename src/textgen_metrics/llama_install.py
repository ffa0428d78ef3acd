"""llama.cpp without its AMX kernels, on every x86-64 CPU: the build the project installs, and what
llama.cpp reports of the build a user has.

llama.cpp's AMX matrix kernels (``ggml_backend_amx_mul_mat``, compiled in when the compiler
targets a CPU with AMX-INT8: a Xeon of the Sapphire Rapids generation or later, where
llama-cpp-python's sdist builds with ``-march=native``) crash in ``decode`` (ggml-org/llama.cpp
#20824, open; stanfordnlp/dspy PR #10079 dropped the AMX build from its CI for it). So:

- ``python -m textgen_metrics.llama_install [--extras server]`` builds llama-cpp-python for this
  CPU with the AMX instructions switched off (``-mno-amx-tile -mno-amx-int8 -mno-amx-bf16``
  after ``-march=native``: every other instruction the CPU has is kept, so nothing changes where
  AMX is absent) and installs it into the running Python's environment. pip's own wheel cache
  is bypassed: pip keys a built wheel by the sdist alone, so a wheel built natively once would
  come back whatever the flags. The wheel is kept in a cache of this project's, keyed by the
  version, the flags, the CPU's instruction sets and the Python tag, so a second environment on
  the same machine installs it in seconds and another CPU never gets it. After installing, the
  build is checked from llama.cpp's own system info (``AMX_INT8 = 0``) and refused otherwise.
- ``--check`` only reports: llama.cpp's system info, whether the CPU has AMX-INT8 (its
  ``amx_int8`` flag) and whether the installed build would take the AMX path on it (exit 1).
- ``textgen_metrics.judges.llamacpp`` reads the same report to guard a llama-cpp-python built
  otherwise (by the user, or from a ``tiny-judge`` install): a build that has the AMX kernels
  loads its models without llama.cpp's extra buffer types, which keeps the weights out of the
  AMX buffer (docs/real_judges.md, "CPUs").

The module needs nothing but the standard library: the Makefile runs it before the package is
installed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

__all__ = ["LLAMA_CPP_VERSION", "NO_AMX_FLAGS", "cpu_flags", "parse_system_info", "system_info", "build_has_amx",
           "takes_amx_path", "wheel_folder", "install", "main"]

LLAMA_CPP_VERSION = "0.3.36"
# GCC and Clang: an -mno-* flag wins over what -march=native turns on, wherever it stands
NO_AMX_FLAGS = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
# the multimodal library: never loaded by the project, a third of the compile
CMAKE_ARGS = "-DLLAVA_BUILD=OFF"


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The instruction sets this CPU reports (the ``flags`` line of ``/proc/cpuinfo``; empty where
    there is none, as on macOS)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def parse_system_info(text: str) -> dict[str, str]:
    """``llama_print_system_info()``'s ``NAME = VALUE`` pairs (``"CPU : SSE3 = 1 | ... | AMX_INT8 =
    1 |"`` -> ``{"SSE3": "1", ..., "AMX_INT8": "1"}``)."""
    return dict(re.findall(r"([A-Za-z0-9_]+)\s*=\s*([^|\s]+)", text))


def system_info() -> str:
    """llama.cpp's own report of the installed build (imports llama-cpp-python)."""
    from llama_cpp import llama_cpp as lib

    raw: bytes = lib.llama_print_system_info()
    return raw.decode("utf-8", errors="replace")


def build_has_amx(info: str | dict[str, str]) -> bool:
    """Whether the build has llama.cpp's AMX kernels (``AMX_INT8 = 1`` in its system info: the
    kernels are compiled in only with AMX-INT8, and the system info says what was compiled)."""
    features = parse_system_info(info) if isinstance(info, str) else info
    return features.get("AMX_INT8") == "1"


def takes_amx_path(info: str | dict[str, str], flags: frozenset[str] | None = None) -> bool:
    """Whether the build would run its AMX kernels here: compiled in, and a CPU that has AMX-INT8."""
    return build_has_amx(info) and "amx_int8" in (cpu_flags() if flags is None else flags)


def _cache_root() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "textgen-metrics", "llama-cpp-wheels")


def wheel_folder(python_tag: str, flags: frozenset[str] | None = None) -> str:
    """Where the wheel for this version, these flags, this CPU and this Python is kept."""
    flags = cpu_flags() if flags is None else flags
    key = "\n".join([LLAMA_CPP_VERSION, NO_AMX_FLAGS, CMAKE_ARGS, platform.machine(), python_tag,
                     " ".join(sorted(flags))])
    return os.path.join(_cache_root(), f"{LLAMA_CPP_VERSION}-{hashlib.sha256(key.encode()).hexdigest()[:16]}")


def _python_tag(python: str) -> str:
    out = subprocess.run([python, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def _built_wheel(python: str, quiet: bool) -> str:
    """The AMX-free wheel for ``python``: from this project's cache, or built now (minutes)."""
    folder = wheel_folder(_python_tag(python))
    wheels = sorted(f for f in os.listdir(folder) if f.endswith(".whl")) if os.path.isdir(folder) else []
    if wheels:
        return os.path.join(folder, wheels[-1])
    flags = NO_AMX_FLAGS
    env = dict(os.environ, CMAKE_ARGS=f"{os.environ.get('CMAKE_ARGS', '')} {CMAKE_ARGS}".strip(),
               CFLAGS=f"{os.environ.get('CFLAGS', '')} {flags}".strip(),
               CXXFLAGS=f"{os.environ.get('CXXFLAGS', '')} {flags}".strip())
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    print(f"building llama-cpp-python {LLAMA_CPP_VERSION} for this CPU without AMX kernels (CFLAGS {flags}); "
          "a few minutes", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        # --no-cache-dir: pip's wheel cache would hand back a wheel built with other flags
        subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--no-binary",
                        "llama-cpp-python", *(["-q"] if quiet else []), "-w", tmp,
                        f"llama-cpp-python=={LLAMA_CPP_VERSION}"], check=True, env=env)
        built = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if len(built) != 1:
            raise SystemExit(f"llama_install: pip wheel left {built!r} in {tmp}, expected one wheel")
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, built[0])
        shutil.move(os.path.join(tmp, built[0]), target + ".part")
        os.replace(target + ".part", target)
    return target


def _installed_report(python: str) -> tuple[str, bool]:
    """(system info, takes the AMX path here) of the llama-cpp-python installed for ``python``."""
    code = "from llama_cpp import llama_cpp as lib; print(lib.llama_print_system_info().decode('utf-8', 'replace'))"
    info = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    return info, takes_amx_path(info)


def install(python: str = sys.executable, extras: str = "", quiet: bool = False) -> str:
    """Install the AMX-free llama-cpp-python (with ``extras``, e.g. ``"server"``) into ``python``'s
    environment and check it; returns llama.cpp's system info of the installed build."""
    wheel = _built_wheel(python, quiet)
    spec = f"llama-cpp-python[{extras}] @ file://{wheel}" if extras else wheel
    subprocess.run([python, "-m", "pip", "install", *(["-q"] if quiet else []), spec], check=True)
    info, _ = _installed_report(python)
    if build_has_amx(info):
        raise SystemExit(f"llama_install: the installed llama.cpp still has its AMX kernels ({info}); "
                         f"the compiler did not take {NO_AMX_FLAGS}")
    return info


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m textgen_metrics.llama_install",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--extras", default="", help="llama-cpp-python's extras to install with it (e.g. server)")
    parser.add_argument("--check", action="store_true",
                        help="only report the installed build; exit 1 if it would take the AMX path on this CPU")
    parser.add_argument("-q", "--quiet", action="store_true", help="pip's quiet output")
    args = parser.parse_args(argv)
    if args.check:
        info, amx = _installed_report(sys.executable)
        print(f"llama.cpp system info: {info}")
        print(f"CPU has AMX-INT8: {'amx_int8' in cpu_flags()}; build has AMX kernels: {build_has_amx(info)}")
        if amx:
            print("this build would run llama.cpp's AMX kernels here, which crash in decode (llama.cpp #20824): "
                  "reinstall with python -m textgen_metrics.llama_install", file=sys.stderr)
            return 1
        return 0
    info = install(extras=args.extras, quiet=args.quiet)
    print(f"llama-cpp-python {LLAMA_CPP_VERSION} installed without AMX kernels; llama.cpp system info: {info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
