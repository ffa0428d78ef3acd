"""The documentation holds together: every relative link of README.md and docs/*.md reaches a file
that exists (and a heading that exists, for a link with an anchor to a Markdown page),
docs/index.md lists every page of docs/, and the README's Layout section names every top-level
folder and every module and subpackage of the library, and nothing that does not exist."""

import re
import subprocess

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchors(path):
    """GitHub's anchors of a Markdown page's headings."""
    out = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(text.replace(" ", "-"))
    return out


def links(path):
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [m.group(1) for m in LINK.finditer(text)]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_reaches_a_file_and_heading(path):
    broken = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_index_lists_every_page():
    listed = {t.partition("#")[0] for t in links(ROOT / "docs" / "index.md")}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages - listed == set(), f"docs/index.md does not list {sorted(pages - listed)}"
    readme = links(ROOT / "README.md")
    assert "docs/index.md" in readme


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for heading in ("## The two commands", "## Quick start", "## Headline figures", "## Layout"):
        assert heading in text
    assert "make demo" in text and "make test" in text and 'tiny:smollm2' in text
    assert "textgen_metrics.llama_install --extras server" in text and "tiny_model_file" in text


def layout():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```\n(.*?)^```", section, re.S | re.M).group(1)
    top, library = set(), set()
    for line in block.splitlines():
        m = re.match(r"(\s*)(\S.*?)\s{2,}\S", line)
        if not m:
            continue
        (library if m.group(1) else top).update(n.rstrip("/") for n in m.group(2).split(", "))
    return top, library


def test_the_layout_names_every_folder_and_nothing_else():
    top, _ = layout()
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    folders = {f.split("/", 1)[0] for f in tracked.splitlines() if "/" in f}
    named = {t.split("/", 1)[0] for t in top}
    assert named == folders, f"not named: {sorted(folders - named)}; named but not there: {sorted(named - folders)}"
    for entry in top:
        assert (ROOT / entry).exists(), entry


def test_the_layout_names_every_module_of_the_library():
    _, library = layout()
    package = ROOT / "src" / "textgen_metrics"
    modules = {p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    # folders with files of their own (one left with only __pycache__ by a renamed package is none)
    modules |= {p.name for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"
                and any(f.is_file() for f in p.rglob("*") if "__pycache__" not in f.parts)}
    assert library == modules, \
        f"not named: {sorted(modules - library)}; named but not there: {sorted(library - modules)}"
