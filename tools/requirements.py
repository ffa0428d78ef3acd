"""The requirements of the package with extras, as pip reads them from setup.cfg, one per line.

    python tools/requirements.py test [EXTRA ...]

``make install`` (the test install) gives pip these to install while a second pip builds the
package itself (``pip install --no-deps -e .``: the compiled core, about 25 s of one core) on
the other core; one ``pip install -e '.[test]'`` would compile first and unpack the wheels after
(about 50 s), one core idle throughout. Needs nothing but the standard library: it runs before
anything is installed.
"""

from __future__ import annotations

import argparse
import configparser
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def requirements(extras: list[str], setup_cfg: str = os.path.join(ROOT, "setup.cfg")) -> list[str]:
    """``install_requires`` and each extra's requirements (in that order, each once), as
    setuptools reads them (a line that starts with ``#`` is a comment)."""
    parser = configparser.ConfigParser(interpolation=None)
    with open(setup_cfg, encoding="utf-8") as f:
        parser.read_file(f)
    sections = [parser.get("options", "install_requires", fallback="")]
    for extra in extras:
        if not parser.has_option("options.extras_require", extra):
            known = ", ".join(parser.options("options.extras_require"))
            raise SystemExit(f"extras: setup.cfg has no extra {extra!r} (it has {known})")
        sections.append(parser.get("options.extras_require", extra))
    out: list[str] = []
    for text in sections:
        for line in text.splitlines():
            line = line.strip()
            if line and not line.startswith("#") and line not in out:
                out.append(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("extras", nargs="*", help="extras of setup.cfg's [options.extras_require]")
    args = ap.parse_args(argv)
    sys.stdout.write("".join(f"{r}\n" for r in requirements(args.extras)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
