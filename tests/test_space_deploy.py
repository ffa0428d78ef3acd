"""A Space assembled by ``make space`` (tools/build_space.py) deploys as it is: the BLEU Space's
folder is installed into a fresh virtual environment from its own requirements.txt (packages of the
package index: textgen-metrics is none of them), started with ``python app.py`` as a Space starts
it, and driven in Debian's chromium; the score it shows is the library's."""

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import textgen_metrics
import textgen_metrics.registry
from conftest import ROOT
from test_spaces import TYPED, browser, edit_cell, free_port, page, read_key_values, same, type_options  # noqa: F401
from textgen_metrics.spaces import parse_rows

sys.path.insert(0, str(ROOT / "tools"))
import build_space  # noqa: E402


@pytest.fixture(scope="module")
def assembled(tmp_path_factory, checkout_wheel):
    """``make space NAME=bleu`` into a temporary folder (with the run's one build of this
    checkout's wheel: ``--wheel``), and a fresh venv with its requirements."""
    out = tmp_path_factory.mktemp("spaces")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_space.py"), "bleu", "--out", str(out),
                           "--wheel", str(checkout_wheel)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    folder = out / "bleu"
    built = time.monotonic() - started
    venv = tmp_path_factory.mktemp("venv") / "space"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    started = time.monotonic()
    # pip's own cache (the user's): the packages come from the package index, as on a Space;
    # --no-compile: Python compiles what it imports when it imports it (a third of the time saved)
    proc = subprocess.run([python, "-m", "pip", "install", "-q", "--no-compile", "-r", "requirements.txt"],
                          cwd=folder, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(f"\nassembled in {built:.0f} s; installed in {time.monotonic() - started:.0f} s; "
          f"{build_space.folder_size(folder) / 1e6:.1f} MB")
    return folder, python


def test_the_folder_holds_the_space_and_a_fresh_build(assembled):
    folder, _ = assembled
    names = {p.name for p in folder.iterdir()}
    assert {"app.py", "bleu.py", "README.md", "requirements.txt", "textgen_metrics", ".gitattributes"} <= names
    assert not (folder / "bin").exists()
    cores = list((folder / "textgen_metrics" / "_native").glob("_core*.so"))
    assert len(cores) == 1 and f"cpython-{sys.version_info.major}{sys.version_info.minor}" in cores[0].name
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert f'\npython_version: "{sys.version_info.major}.{sys.version_info.minor}"\n---\n' in card
    reqs = [r for r in (folder / "requirements.txt").read_text().splitlines() if r and not r.startswith("#")]
    assert not any(r.lower().startswith(("textgen-metrics", "textgen_metrics", ".", "/")) for r in reqs)
    assert {"evaluate==0.4.6", "gradio>=6", "sacrebleu<3,>=2.2"} <= set(reqs)
    # the library in the folder is this checkout's
    assert (folder / "textgen_metrics" / "lexical" / "bleu.py").read_bytes() == \
        (ROOT / "src" / "textgen_metrics" / "lexical" / "bleu.py").read_bytes()


def test_a_given_wheel_must_be_a_textgen_metrics_wheel(tmp_path):
    other = tmp_path / "other-1.0-py3-none-any.whl"
    other.write_bytes(b"")
    for wheel, says in ((other, "is not a textgen-metrics wheel"), (tmp_path / "missing.whl", "no file")):
        proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_space.py"), "bleu", "--out",
                               str(tmp_path / "out"), "--wheel", str(wheel)], capture_output=True, text=True)
        assert proc.returncode == 2 and proc.stderr.startswith("error: --wheel: ") and says in proc.stderr, proc.stderr


def test_the_fresh_environment_has_no_textgen_metrics_but_the_folders(assembled, tmp_path):
    folder, python = assembled
    # as a Space runs it: no PYTHONPATH (the cluster tests of the same session set one to src/)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    outside = subprocess.run([python, "-c", "import textgen_metrics"], cwd=tmp_path, capture_output=True, text=True,
                             env=env)
    assert outside.returncode == 1 and "No module named 'textgen_metrics'" in outside.stderr
    shown = subprocess.run([python, "-m", "pip", "show", "textgen-metrics"], cwd=tmp_path, capture_output=True,
                           text=True, env=env)
    assert shown.returncode == 1  # pip installed no textgen-metrics from any index
    inside = subprocess.run([python, "-c", "import textgen_metrics._native._core, textgen_metrics as t; "
                             "print(t.__file__)"], cwd=folder, capture_output=True, text=True, env=env)
    assert inside.returncode == 0, inside.stderr
    assert Path(inside.stdout.strip()).is_relative_to(folder)


def test_the_assembled_space_starts_and_scores_in_the_browser(assembled, page, tmp_path):  # noqa: F811
    folder, python = assembled
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
               GRADIO_ANALYTICS_ENABLED="False", HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    log = open(tmp_path / "app.log", "w")  # noqa: SIM115  # closed below, after the process
    app = subprocess.Popen([python, "app.py"], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert app.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "app.log").read_text()[-3000:]
            time.sleep(0.5)
        page.goto(url)
        columns = textgen_metrics.registry.get_metric("bleu").columns
        for col, column in enumerate(columns):
            edit_cell(page, "inputs", 0, col, TYPED[column])
        type_options(page, '{"confidence_level": 0.95}')
        page.click("#compute")
        shown = read_key_values(page, "result-table")
        want = textgen_metrics.bleu(**parse_rows([[TYPED[c] for c in columns]], columns), confidence_level=0.95)
        assert 0 <= want["bleu_ci"][0] <= want["bleu"] <= want["bleu_ci"][1] <= 1 + 1e-12
        for key in ("bleu", "brevity_penalty", "precisions", "bleu_ci"):
            assert same(shown[key], want[key]), (key, shown[key], want[key])
        assert shown["signature"] == want["signature"] and "interval:percentile" in shown["signature"]
        assert "Metric Card for BLEU" in page.content()
        assert page.locator("#error").inner_text().strip() == ""
    finally:
        app.terminate()
        app.wait(timeout=30)
        log.close()
