"""Every Python snippet of README.md and of the metric cards runs as written, each on its own (a
fresh namespace), from a folder where ``./metrics`` and ``./data`` are the repository's; a
snippet written as a doctest (``>>>``) must also print what it shows. The LLM-guided snippets
talk to a local chat-completions server through ``OPENAI_BASE_URL``, as a user's would."""

import doctest
import os
import re

import pytest

from chat_server import ChatServer, schema_answer
from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted(ROOT.glob("metrics/*/README.md")), ROOT / "spaces" / "playground" / "README.md"]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def snippets():
    out = []
    for path in DOCS:
        for k, m in enumerate(FENCE.finditer(path.read_text(encoding="utf-8")), 1):
            out.append(pytest.param(path, m.group(1), id=f"{path.relative_to(ROOT)}#{k}"))
    return out


SNIPPETS = snippets()


def test_the_snippets_are_found():
    names = {p.values[0].relative_to(ROOT).as_posix() for p in SNIPPETS}
    assert "README.md" in names and "metrics/rouge/README.md" in names and len(SNIPPETS) >= 20


@pytest.fixture(scope="module")
def server():
    with ChatServer(schema_answer) as srv:
        yield srv


@pytest.fixture
def workdir(tmp_path, monkeypatch, server):
    for name in ("metrics", "data"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-test")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize("path, code", SNIPPETS)
def test_snippet_runs_as_written(path, code, workdir):
    name = f"{path.relative_to(ROOT)}"
    if ">>>" in code:
        test = doctest.DocTestParser().get_doctest(code, {"__name__": "__main__"}, name, str(path), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        result = runner.summarize(verbose=False)
        assert result.attempted and result.failed == 0, f"{name}: {result.failed} example(s) failed"
    else:
        exec(compile(code, name, "exec"), {"__name__": "__main__"})
    assert os.getcwd() == str(workdir)
