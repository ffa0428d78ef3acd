"""Every snippet of README.md, the pages of docs/ and the metric cards runs as written after the
installs the document names before it, in a fresh virtual environment: a missing extra fails here.

A document is read as a reader follows it, top to bottom. Its shell blocks (```bash, ```sh,
```shell, ```console) that install (``make demo``, ``pip install ...``) are applied, in order, to
one fresh venv; every Python and shell snippet after them runs in that venv as it stands then. The
installs add up, as in the reader's one ``.venv``. README.md comes first and the pages of
docs/ (in docs/index.md's order) go on from where it ends; the metric cards and the playground's
card, which name no install, start from what their folder's ``requirements.txt`` names (the
Space's extras: ``textgen-metrics[spaces]``, or ``[spaces,bertscore]``).

How an install is run: the package itself (``-e .``, ``".[extra]"``, ``textgen-metrics[extra]``)
is this checkout's wheel, built once for the session (as ``make space`` builds it), with the same
extras; every other requirement comes from the package index (pip's cache). ``make demo`` is the
Makefile's own install lines (``install-core``, ``install-demo``) read from the Makefile.

Each snippet runs from a fresh folder where ``./metrics`` and ``./data`` are the repository's and
``.venv`` is the fresh venv, with ``PATH`` starting at its ``bin``, no ``PYTHONPATH``, and the
hosted judges pointed at loopback stand-ins (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``,
``AZURE_OPENAI_ENDPOINT``, their keys). A block that cannot run in a test (the test suite itself, a
long-lived server, your own files) carries ``<!-- not run: why -->`` on the line before its
fence, and the reason is shown to the reader in the text; every other block must run and exit 0.
Python snippets written as doctests (``>>>``) must also print what they show.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chat_server import AnthropicServer, AzureServer, ChatServer, schema_answer
from conftest import ROOT, machine_lock, shared_folder

SHELL = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^```([\w+-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->\s*$", re.S)
PIP = re.compile(r"^(?:\S*/)?(?:pip3?|python3? -m pip) install\s+(.*)$")
# llama.cpp built for this CPU without its AMX kernels (README's offline judge): an install, from
# the project's wheel cache (the user's, as pip's cache is: `make test` built it)
LLAMA_INSTALL = re.compile(r"^(?:\S*/)?python3? -m textgen_metrics\.llama_install(\s.*)?$")
PACKAGE = re.compile(r"""^(?:-e\s+)?["']?(?:\.|textgen-metrics)(\[[\w,-]+\])?(?:[<>=!~][^"'\s]*)?["']?$""")


@dataclass
class Block:
    doc: str
    number: int  # 1-based among the document's snippets
    lang: str
    code: str
    line: int
    not_run: str | None = None

    @property
    def id(self):
        return f"{self.doc}#{self.number}"

    @property
    def shell(self):
        return self.lang in SHELL


def blocks(path: Path) -> list[Block]:
    """The document's Python and shell snippets in order, each with its `not run` mark."""
    text = path.read_text(encoding="utf-8")
    doc = path.relative_to(ROOT).as_posix()
    out = []
    for m in FENCE.finditer(text):
        lang = m.group(1).lower()
        if lang != "python" and lang not in SHELL:
            continue
        comments = []  # the HTML comment lines right above the fence
        for line in reversed(text[:m.start()].rstrip("\n").splitlines()):
            if not (line.startswith("<!--") and line.rstrip().endswith("-->")):
                break
            comments.append(line)
        mark = next((NOT_RUN.search(c) for c in comments if NOT_RUN.search(c)), None)
        out.append(Block(doc, len(out) + 1, lang, m.group(2), text.count("\n", 0, m.start()) + 1,
                         mark.group(1) if mark else None))
    return out


def commands(code: str) -> list[str]:
    """A shell block's commands, continuation lines joined, comments and blank lines dropped, a
    console prompt (``$ ``) taken off."""
    joined = re.sub(r"\\\n\s*", " ", code)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        if line and not line.startswith("#"):
            out.append(line)
    return out


def install_of(command: str) -> list[str] | None:
    """The pip arguments of an install command (the package itself as ``{wheel}[extras]``), or
    None when it is no install."""
    command = command.split(" #", 1)[0].strip()
    if command in ("make demo", "make install-demo", "make install-core"):
        return makefile_installs(command.split()[-1])
    llama = LLAMA_INSTALL.match(command)
    if llama:
        return ["textgen_metrics.llama_install" + (llama.group(1) or "")]
    m = PIP.match(command)
    if not m:
        return None
    args, editable = [], False
    for arg in shlex.split(m.group(1)):
        if arg == "-e":
            editable = True
            continue
        package = PACKAGE.match(arg) if (editable or arg.startswith((".", "textgen-metrics"))) else None
        args.append("{wheel}" + (package.group(1) or "") if package else shlex.quote(arg))
        editable = False
    return [" ".join(args)]


def makefile_installs(target: str) -> list[str]:
    """The pip arguments of the Makefile's install lines for ``make demo`` (install-core, then
    install-demo), the package (``-e .``) as the wheel."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    stamps = {"install-core": ["CORE_STAMP"], "install-demo": ["CORE_STAMP", "DEMO_STAMP"],
              "demo": ["CORE_STAMP", "DEMO_STAMP"]}[target]
    out = []
    for stamp in stamps:
        recipe = re.search(rf"^\$\({stamp}\):.*\n((?:\t.*\n)+)", text, re.M)
        assert recipe, f"Makefile: no recipe for $({stamp})"
        for line in recipe.group(1).splitlines():
            m = re.search(r"\$\(PY\) -m pip install (.*)$", line.strip())
            if m:
                args = [a for a in shlex.split(m.group(1)) if a not in ("--progress-bar", "on")]
                args = ["{wheel}" if a == "." else a for a in args if a != "-e"]
                out.append(" ".join(shlex.quote(a) if "{wheel}" not in a else a for a in args))
    assert out, f"Makefile: no pip install line for make {target}"
    return out


def docs_pages() -> list[Path]:
    """docs/*.md in docs/index.md's order (pages it does not list last, by name)."""
    index = ROOT / "docs" / "index.md"
    listed = re.findall(r"\]\(([\w-]+\.md)\)", index.read_text(encoding="utf-8")) if index.exists() else []
    pages = [ROOT / "docs" / name for name in dict.fromkeys(listed) if (ROOT / "docs" / name).exists()]
    return pages + [p for p in sorted((ROOT / "docs").glob("*.md")) if p not in pages]


def card_extras(folder: Path) -> str:
    for line in (folder / "requirements.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(r"textgen-metrics(\[[\w,-]+\])?", line.strip())
        if m:
            return m.group(1) or ""
    raise AssertionError(f"{folder}/requirements.txt names no textgen-metrics")


def paths() -> dict[str, list[tuple[list[str], list[Block]]]]:
    """Each fresh venv's path: a list of steps, each (pip installs to apply, snippets to run after)."""
    guide: list[tuple[list[str], list[Block]]] = [([], [])]
    for doc in [ROOT / "README.md", *docs_pages()]:
        for b in blocks(doc):
            installs = [] if (b.not_run or not b.shell) else [install_of(c) for c in commands(b.code)]
            if installs and all(i is not None for i in installs):
                guide.append(([a for i in installs for a in i], [b]))  # the install block itself: it ran
            else:
                guide[-1][1].append(b)
    cards: dict[str, list[Block]] = {}
    for folder in [*sorted(p.parent for p in ROOT.glob("metrics/*/README.md")), ROOT / "spaces" / "playground"]:
        cards.setdefault(card_extras(folder), []).extend(blocks(folder / "README.md"))
    card_path = [([f"{{wheel}}{extras}"], found) for extras, found in sorted(cards.items(), key=lambda kv: len(kv[0]))]
    return {"guide": guide, "cards": card_path}


PATHS = paths()
ALL = [b for steps in PATHS.values() for _, found in steps for b in found]

RUNNER = r'''
import doctest, json, os, sys, traceback
results = {}
home = os.getcwd()
for name, code in json.load(open(sys.argv[1])):
    os.chdir(home)
    try:
        if ">>>" in code:
            test = doctest.DocTestParser().get_doctest(code, {"__name__": "__main__"}, name, name, 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test)
            r = runner.summarize(verbose=False)
            results[name] = None if r.attempted and not r.failed else f"{r.failed} example(s) failed"
        else:
            exec(compile(code, name, "exec"), {"__name__": "__main__"})
            results[name] = None
    except BaseException:
        results[name] = traceback.format_exc()[-4000:]
    sys.stdout.flush()
json.dump(results, open(sys.argv[2], "w"))
'''


@dataclass
class Outcome:
    ran: dict[str, str | None] = field(default_factory=dict)  # snippet id: None when it passed, else why
    timings: dict[str, float] = field(default_factory=dict)


@pytest.fixture(scope="session")
def stand_ins():
    with ChatServer(schema_answer) as openai, AnthropicServer(schema_answer) as anthropic, \
            AzureServer(schema_answer) as azure:
        yield {"OPENAI_BASE_URL": openai.url, "OPENAI_API_KEY": "sk-docs-test",
               "ANTHROPIC_BASE_URL": anthropic.root, "ANTHROPIC_API_KEY": "sk-ant-docs-test",
               "AZURE_OPENAI_ENDPOINT": azure.url, "AZURE_OPENAI_API_KEY": "azure-docs-test",
               "OPENAI_API_VERSION": "2024-10-21"}


def walk(name, steps, wheel, stand_ins, tmp: Path) -> Outcome:
    """Build the path's venv step by step and run each step's snippets in it."""
    outcome = Outcome()
    venv = tmp / "venv"
    # pip as `make test` upgrades it: the pip of a new venv (Python's bundled one) keys its cache of
    # wheels built from sdists otherwise, and would compile llama-cpp-python again (minutes)
    subprocess.run([sys.executable, "-m", "venv", "--upgrade-deps", str(venv)], check=True, capture_output=True)
    work = tmp / "work"
    work.mkdir()
    for link in ("metrics", "data"):
        (work / link).symlink_to(ROOT / link)
    (work / ".venv").symlink_to(venv)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # pip's own cache stays the user's (the snippets get a cache folder of their own)
    pip_cache = env.get("PIP_CACHE_DIR") or str(Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip")
    env.update(stand_ins, PATH=f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}", VIRTUAL_ENV=str(venv),
               PIP_CACHE_DIR=pip_cache,
               XDG_CACHE_HOME=str(tmp / "cache"), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    # bytecode in a folder of the walk's own, not beside the sources: the repository's metrics/ gets
    # no __pycache__, and the venv's packages (installed --no-compile, as the Makefile installs
    # them) are compiled once for the walk, not again by every snippet's process (importing torch
    # and transformers: 5.9 s of CPU compiling them, 4.7 s compiled)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    user_cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    for k, (installs, found) in enumerate(steps):
        for args in installs:
            started = time.monotonic()
            line = args.replace("{wheel}", shlex.quote(str(wheel)))
            if args.startswith("textgen_metrics.llama_install"):
                command, step_env = f"{venv / 'bin' / 'python'} -m {line} --quiet", dict(env, XDG_CACHE_HOME=user_cache)
            else:
                command, step_env = f"{venv / 'bin' / 'python'} -m pip install -q --no-compile {line}", env
            proc = subprocess.run(command, shell=True, cwd=work, env=step_env, capture_output=True, text=True)
            outcome.timings[f"install {args}"] = time.monotonic() - started
            if proc.returncode:
                why = f"install {args} failed:\n{proc.stderr[-3000:]}"
                for b in found:
                    outcome.ran[b.id] = why
        python = [b for b in found if not b.shell and not b.not_run and b.id not in outcome.ran]
        if python:
            started = time.monotonic()
            (tmp / f"snippets{k}.json").write_text(json.dumps([(b.id, b.code) for b in python]))
            (tmp / "runner.py").write_text(RUNNER)
            proc = subprocess.run([str(venv / "bin" / "python"), str(tmp / "runner.py"), str(tmp / f"snippets{k}.json"),
                                   str(tmp / f"results{k}.json")], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=900)
            try:
                results = json.loads((tmp / f"results{k}.json").read_text())
            except FileNotFoundError:
                results = {b.id: f"the runner died ({proc.returncode}):\n{proc.stderr[-3000:]}" for b in python}
            for b in python:
                why = results.get(b.id)
                outcome.ran[b.id] = None if why is None else f"{why}\n--- output:\n{proc.stdout[-2000:]}"
            outcome.timings[f"python step {k}"] = time.monotonic() - started
        for b in found:
            if not b.shell or b.not_run or b.id in outcome.ran:
                continue
            if all(install_of(c) is not None for c in commands(b.code)):
                outcome.ran[b.id] = None  # an install block: applied above
                continue
            started = time.monotonic()
            proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", b.code], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=600)
            outcome.timings[b.id] = time.monotonic() - started
            outcome.ran[b.id] = None if proc.returncode == 0 else \
                f"exit {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    print(f"\n{name}: " + ", ".join(f"{k} {v:.0f} s" for k, v in outcome.timings.items()))
    return outcome


_WALKED: dict[str, Outcome] = {}


@pytest.fixture(scope="session")
def walked(request, tmp_path_factory):
    """A path's outcome: walked once per run (the suite's parallel workers share it: the first to
    need it walks it under a lock and leaves its outcome beside the lock; the wheel and the
    stand-in servers are made only where a path is walked)."""
    def get(name):
        if name not in _WALKED:
            with machine_lock(tmp_path_factory, f"fresh-{name}"):
                done = shared_folder(tmp_path_factory) / f"fresh-{name}.json"
                if done.exists():
                    _WALKED[name] = Outcome(**json.loads(done.read_text()))
                else:
                    try:
                        _WALKED[name] = walk(name, PATHS[name], request.getfixturevalue("checkout_wheel"),
                                             request.getfixturevalue("stand_ins"),
                                             tmp_path_factory.mktemp(f"fresh-{name}"))
                    except Exception as e:  # the walk itself broke: every snippet of the path says so, once
                        why = f"the walk of the {name} path failed: {type(e).__name__}: {e}"
                        _WALKED[name] = Outcome({b.id: why for _, found in PATHS[name] for b in found})
                    done.write_text(json.dumps(dataclasses.asdict(_WALKED[name])))
        return _WALKED[name]
    return get


def test_the_snippets_are_found():
    docs = {b.doc for b in ALL}
    assert {"README.md", "metrics/rouge/README.md", "docs/judges.md"} <= docs
    assert sum(not b.shell for b in ALL) >= 20 and sum(b.shell for b in ALL) >= 10
    readme_installs = [installs for installs, found in PATHS["guide"][1:] if found and found[0].doc == "README.md"]
    assert readme_installs, "README.md names no install"


def test_a_block_not_run_says_why():
    for b in ALL:
        if b.not_run:
            assert len(b.not_run) >= 12, f"{b.id} (line {b.line}): say why it does not run"
    assert not [b.id for b in ALL if b.not_run and b.doc == "README.md" and not b.shell], \
        "every Python snippet of the README runs"


CANNOT_RUN = r"(make (test|lint|bench|bench-peers|space|run)\b|apt-get|sudo|git clone|hf upload)"


def test_commands_that_cannot_run_here_are_marked():
    for b in ALL:
        if b.shell and not b.not_run:
            for c in commands(b.code):
                assert not re.match(CANNOT_RUN, c), f"{b.id} (line {b.line}): `{c}` needs `<!-- not run: why -->`"
                assert not c.rstrip().endswith("&"), f"{b.id} (line {b.line}): a server left running: mark it"


# Snippets that fail for a bug outside the docs (a card section that tools/cards.py
# writes), by document and a piece of the snippet: strict, so the fix is noticed and the entry removed.
KNOWN_BUGS: dict[tuple[str, str], str] = {}


def path_of(block: Block) -> str:
    return next(n for n, steps in PATHS.items() if any(block in found for _, found in steps))


def params():
    out = []
    for b in ALL:
        if b.not_run:
            continue
        bug = next((why for (doc, piece), why in KNOWN_BUGS.items() if b.doc == doc and piece in b.code), None)
        marks = [pytest.mark.xfail(reason=bug, strict=True)] if bug else []
        out.append(pytest.param(b, id=b.id, marks=marks))
    return out


@pytest.mark.fresh_venv
@pytest.mark.parametrize("block", params())
def test_snippet_runs_after_its_install(block, walked):
    outcome = walked(path_of(block))
    assert block.id in outcome.ran, f"{block.id} (line {block.line}) did not run"
    assert outcome.ran[block.id] is None, f"{block.id} (line {block.line}):\n{outcome.ran[block.id]}"
