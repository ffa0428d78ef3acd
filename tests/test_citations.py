"""Nothing in docs/ or src/ points at a file the repository does not have: every relative Markdown
link of docs/, every repository path the library's sources and the docs cite (``docs/...md``,
``tests/...py``, ``benchmarks/...py``, ``tools/...py``, ``metrics/<name>/...``) and every citation of a
SPEC (the repository ships none: a docstring or page that cites one sends the reader nowhere)."""

import re

from conftest import ROOT

DOCS = sorted(ROOT.glob("docs/*.md"))
SOURCES = sorted((ROOT / "src" / "textgen_metrics").rglob("*.py"))
FILES = [*DOCS, *SOURCES]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# a path into the repository, as prose cites one
PATH = re.compile(r"(?<![\w/.-])((?:docs|tests|benchmarks|tools|metrics)/[\w./-]*\w\.(?:md|py|json|toml|txt))")
SPEC = re.compile(r"\bSPEC(?:\.md|'s|\b)")


def _name(path):
    return path.relative_to(ROOT).as_posix()


def test_every_relative_link_of_the_docs_reaches_a_file():
    broken = []
    for path in DOCS:
        text = FENCE.sub("", path.read_text(encoding="utf-8"))
        for target in (m.group(1) for m in LINK.finditer(text)):
            file = target.partition("#")[0]
            if re.match(r"[a-z]+:", target) or not file:
                continue
            if not (path.parent / file).resolve().exists():
                broken.append(f"{_name(path)}: {target}")
    assert not broken, f"links to missing files: {broken}"


def test_every_cited_repository_path_exists():
    cited = [(path, p) for path in FILES for p in sorted(set(PATH.findall(path.read_text(encoding="utf-8"))))]
    missing = [f"{_name(path)}: {p}" for path, p in cited
               if "<" not in p and not (ROOT / p).exists() and not (path.parent / p).exists()]
    assert not missing, f"files cited that the repository does not have: {missing}"


def test_no_citation_of_a_spec_the_repository_does_not_ship():
    assert not (ROOT / "SPEC.md").exists(), "SPEC.md exists now: check the citations against its headings instead"
    cited = [f"{_name(path)}:{i}: {line.strip()[:80]}" for path in FILES
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if SPEC.search(line)]
    assert not cited, f"citations of a SPEC the repository does not have: {cited}"


def test_the_checks_catch_what_they_look_for():
    """The patterns find a missing path and a SPEC citation, and pass the ordinary prose."""
    assert PATH.findall("see docs/nowhere.md and tests/test_x.py.") == ["docs/nowhere.md", "tests/test_x.py"]
    assert SPEC.search('(SPEC "Judge audits")') and SPEC.search("SPEC.md") and SPEC.search("the SPEC's rule")
    assert not SPEC.search("a SPECIAL case") and not SPEC.search("spec.columns")
