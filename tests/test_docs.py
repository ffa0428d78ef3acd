"""Every Python snippet of README.md, the pages of docs/ and the metric cards runs as written in
the test environment (which has every extra), each on its own (a fresh namespace), from a folder
where ``./metrics`` and ``./data`` are the repository's; a snippet written as a doctest (``>>>``)
must also print what it shows. The LLM-guided snippets talk to a local chat-completions server
through ``OPENAI_BASE_URL``, as a user's would. A snippet marked ``<!-- not run: why -->`` is left
out. That each snippet also runs after the installs its document names, in a fresh virtual
environment, is tests/test_docs_fresh.py's."""

import doctest
import os

import pytest

from chat_server import AnthropicServer, AzureServer, ChatServer, schema_answer
from conftest import ROOT
from test_docs_fresh import blocks

DOCS = [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md")), *sorted(ROOT.glob("metrics/*/README.md")),
        ROOT / "spaces" / "playground" / "README.md"]


def snippets():
    return [pytest.param(ROOT / b.doc, b.code, id=b.id) for path in DOCS for b in blocks(path)
            if b.lang == "python" and not b.not_run]


SNIPPETS = snippets()


def test_the_snippets_are_found():
    names = {p.values[0].relative_to(ROOT).as_posix() for p in SNIPPETS}
    assert "README.md" in names and "metrics/rouge/README.md" in names and len(SNIPPETS) >= 20


@pytest.fixture(scope="module")
def server():
    with ChatServer(schema_answer) as srv, AnthropicServer(schema_answer) as anthropic, \
            AzureServer(schema_answer) as azure:
        srv.anthropic, srv.azure = anthropic, azure
        yield srv


@pytest.fixture
def workdir(tmp_path, monkeypatch, server):
    for name in ("metrics", "data"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic.root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs-test")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.azure.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-docs-test")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
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


def test_a_run_with_the_fresh_venv_walks_runs_each_snippet_there_only():
    """With tests/test_docs_fresh.py in the same run, every snippet test of this file is deselected
    (the fresh venv runs it with the same checks) and the summary says how many; alone, none is."""
    import re
    import subprocess
    import sys

    def collected(*files):
        proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               "-n", "0", *files], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        return proc.stdout

    both = collected("tests/test_docs.py", "tests/test_docs_fresh.py")
    assert re.search(rf"\({len(SNIPPETS)} deselected\)", both), both[-500:]
    assert "test_docs.py::test_snippet_runs_as_written" not in both
    alone = collected("tests/test_docs.py")
    assert "deselected" not in alone and alone.count("test_docs.py::test_snippet_runs_as_written[") == len(SNIPPETS)
