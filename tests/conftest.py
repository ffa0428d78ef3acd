"""Test-wide rules: no network but loopback, and the Hugging Face libraries told to stay offline."""

import ast
import faulthandler
import functools
import os
import socket
import sys
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

for var in ("HF_HUB_OFFLINE", "HF_EVALUATE_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[var] = "1"
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# Ray and Spark started by a test (or a README snippet) bind to loopback, not the machine's interface
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# The JVMs a test starts (Spark's driver and executors, here and in the docs' snippets) live
# seconds to minutes: C1 only (no C2 compiler threads) and the serial collector. Spark's results do
# not depend on either. tests/test_spark_cluster.py alone: 80 s of CPU with the JVM's defaults, 44 s
# with these (85 s and 71 s wall). The JVM notes "Picked up JAVA_TOOL_OPTIONS" on its stderr.
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
# The parallel run puts 4 workers on 2 cores: there a torch (OpenMP) pool of one thread per core in
# each worker spins against the other workers (BERTScore of 300 pairs beside two busy processes:
# 18.4 s of CPU with 2 threads, 9.8 s with 1; alone: 9.3 s and 8.6 s). One thread per worker, and
# the processes a test starts (fresh venvs, servers, Spark) inherit it. Ray sets the same for its
# workers. BERTScore of 200 pairs is the same to the bit with 1 thread and with 2.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
# OpenMP threads that wait for work sleep rather than spin (libgomp spins by default): llama.cpp's
# server (two threads for prompts) spun against the suite's other processes. One module of
# test_real_judges.py beside a busy core: 80.3 s of CPU and 79 s wall with the default, 64.2 s and 64 s
# passive. Answers and scores do not depend on it (the in-process judge sets the same for itself).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# ast.parse one thread at a time in a test process. CPython before 3.13 counts the AST constructor's
# recursion depth per interpreter, not per call, so two threads in ast.parse at once can fail one of
# them with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905, seen in
# threaded programs): it failed Gradio's import (it parses each component's source) in one full run
# here, a Space test beside another thread of the same worker.
if sys.version_info < (3, 13):
    _ast_parse, _ast_lock = ast.parse, threading.RLock()

    @functools.wraps(_ast_parse)
    def _parse_one_at_a_time(*args, **kwargs):
        with _ast_lock:
            return _ast_parse(*args, **kwargs)

    ast.parse = _parse_one_at_a_time

_real_connect = socket.socket.connect

# The suite runs on pytest-xdist workers (Makefile: --dist worksteal; the scope-based modes of
# pytest-xdist 3.8 lose count when a crashed worker is replaced). What must happen once on the
# machine, or once at a time, takes a lock in the folder the workers share (machine_lock).
# One local Ray on the machine at a time: a lock in the system's temp folder, which every pytest run
# on the machine sees (a run's workers, and another run with base temp folders of its own).
EXCLUSIVE = {name: "ray" for name in ("test_ray_cluster.py", "test_ray_budget.py", "test_ray_node_loss.py")}
RESOURCE_LOCKS = Path(tempfile.gettempdir()) / "textgen-metrics-test-locks"


def shared_folder(tmp_path_factory) -> Path:
    """A folder every worker of this run shares (the run's base temp folder; without xdist, its parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def machine_lock(tmp_path_factory, name: str):
    """A lock held by one worker of this run at a time (filelock: released if its holder dies)."""
    from filelock import FileLock

    return FileLock(str(shared_folder(tmp_path_factory) / f"{name}.lock"))


@pytest.fixture(scope="session")
def checkout_wheel(tmp_path_factory) -> Path:
    """This checkout's wheel (tools/build_space.py's build), built once for the run: the fresh-venv
    docs and the assembled Space share it (building it compiles the C++ core, minutes on 2 cores)."""
    import sys
    import time

    sys.path.insert(0, str(ROOT / "tools"))
    import build_space

    with machine_lock(tmp_path_factory, "checkout-wheel"):
        out = shared_folder(tmp_path_factory) / "checkout-wheel"
        built = sorted(out.glob("textgen_metrics-*.whl"))
        if built:
            return built[0]
        out.mkdir(exist_ok=True)
        started = time.monotonic()
        wheel = build_space.build_wheel(sys.executable, out)
        print(f"\nthe wheel: {time.monotonic() - started:.0f} s")
        return wheel


@pytest.fixture(scope="module", autouse=True)
def exclusive_resource(request):
    name = EXCLUSIVE.get(request.path.name)
    if name is None:
        yield
        return
    from filelock import FileLock

    RESOURCE_LOCKS.mkdir(exist_ok=True)
    with FileLock(str(RESOURCE_LOCKS / f"{name}.lock")):
        yield


# The tiers of whole files and of single tests in otherwise fast files (markers registered in
# setup.cfg; `make test-fast` leaves every one of them out; CONTRIBUTING.md says which to run when).
# A test of its own marks it where it is written; these are the files and tests measured slow.
FILE_TIERS = {
    "test_docs.py": ("slow",),  # snippets run as written: the offline judge, Ray and Spark among them
    "test_real_judges.py": ("real_model", "server", "browser"),
    "test_llamacpp_judge.py": ("real_model", "server"),
    "test_bertscore.py": ("real_model",),
    "test_trainer.py": ("real_model",),
    "test_spaces.py": ("browser", "server"),
    "test_space_security.py": ("browser", "server"),
    "test_space_deploy.py": ("fresh_venv", "browser"),
    "test_metric_cards_agreement.py": ("slow",),  # every study of the cards, BERTScore's included
    "test_ray_cluster.py": ("cluster",),
    "test_ray_budget.py": ("cluster", "serial"),
    "test_ray_node_loss.py": ("cluster",),
    "test_spark_cluster.py": ("cluster",),
    "test_spark_budget.py": ("cluster", "serial"),
    "test_judge_budget.py": ("serial",),  # request rates measured against the clock
    "test_distributed.py": ("server",),
    "test_tercom_kernel.py": ("slow",),
}
TEST_TIERS = {
    # the Space's answer to a silent judge, timed against the clock: alone, as the rate tests
    "test_spaces.py::test_a_judge_that_does_not_answer_is_an_error_within_15_s": ("serial",),
    "test_spaces.py::test_playground_a_judge_that_does_not_answer_is_an_error_within_15_s": ("serial",),
    "test_gate.py::test_bertscore_gates_on_the_packaged_model": ("real_model",),
    "test_native.py::test_wordnet_index_synonyms_equal_nltk_synsets_lemma_names": ("slow",),
    "test_native.py::test_treebank_tokenizer_equals_nltk_word_tokenize_and_the_python_rules": ("slow",),
    "test_audit_probes.py::test_position_and_repeat_audits_on_the_real_smollm2_behind_the_real_server":
        ("real_model", "server"),
    "test_ter.py::test_edits_equal_sacrebleus_tercom": ("slow",),
    "test_rouge_multi_ref.py::test_bertscore_mean_is_the_mean_of_bert_scores_per_reference_scores": ("real_model",),
    "test_agreement.py::test_intervals_equal_resampling_with_the_reference_functions": ("slow",),
    "test_audit_stats.py::test_each_planted_defect_is_flagged_in_at_least_90_percent_of_seeds": ("slow",),
    "test_prefix_sharing.py::test_shared_prefixes_write_the_tokens_of_the_plain_batch": ("real_model",),
    "test_hf_differences.py::test_bertscore_all_layers_with_several_references_maximises_per_layer": ("real_model",),
    "test_rouge_multi_ref.py::test_bertscore_mean_with_all_layers_and_aggregate": ("real_model",),
    "test_native.py::test_wordnet_index_is_built_once_and_reused": ("slow",),
    "test_native.py::test_rouge_s_any_gap_equals_pair_counting_on_long_texts": ("slow",),
    "test_native.py::test_rouge_scores_do_not_depend_on_threads_and_equal_rouge_score": ("slow",),
    "test_native.py::test_porter_equals_nltk_on_every_wordnet_word_and_random_unicode_words": ("slow",),
    "test_meta_evaluate.py::test_coverage_kendall_spearman_by_item": ("slow",),
}


# Files whose tests run first: the fresh-venv walks of the docs (tests/test_docs_fresh.py: minutes
# each, and every snippet test of a path waits for its one walk). pytest-xdist's worksteal hands
# each worker a contiguous share of the run in order, and these sat in one share's middle: they
# started 10 minutes into a 14-minute run and ended it, one worker walking while another waited
# for the walk and two ran out of tests. First, they start with the run and the other workers take
# the rest of that share.
FIRST = ("test_docs_fresh.py",)


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = f"{item.path.name}::{item.originalname}"
        for tier in FILE_TIERS.get(item.path.name, ()) + TEST_TIERS.get(name, ()):
            item.add_marker(tier)
    _deselect_snippets_run_in_fresh_venvs(config, items)
    items.sort(key=lambda item: item.path.name not in FIRST)  # stable: the order within each part kept


def _deselect_snippets_run_in_fresh_venvs(config, items):
    """tests/test_docs.py runs each Python snippet of the docs in this venv, the quick loop while
    a page is written; tests/test_docs_fresh.py runs the same snippet, with the same checks, after
    its document's installs in a fresh venv. In a run that holds both (``make test``), the first is
    the second's duplicate (Ray and Spark started twice, about 40 s of CPU): deselected, and said."""
    fresh = {item.callspec.id for item in items
             if item.path.name == "test_docs_fresh.py" and item.originalname == "test_snippet_runs_after_its_install"}
    twice = [item for item in items if item.path.name == "test_docs.py"
             and item.originalname == "test_snippet_runs_as_written" and item.callspec.id in fresh]
    if twice:
        config.hook.pytest_deselected(items=twice)
        kept = set(map(id, twice))
        items[:] = [item for item in items if id(item) not in kept]


# pytest-timeout (setup.cfg: timeout, method signal) fails a hung test by name and the worker goes
# on; a test stuck in native code never returns to the interpreter to take the signal, so
# faulthandler's watchdog thread (C, not Python) dumps every thread's stack and ends the process
# NATIVE_HANG_MARGIN seconds later: pytest-xdist reports that test as crashed and starts a worker.
NATIVE_HANG_MARGIN = 30.0


@pytest.fixture(autouse=True)
def native_hang_backstop(request):
    marker = request.node.get_closest_marker("timeout")
    timeout = float(marker.args[0] if marker and marker.args else request.config.getini("timeout") or 0)
    if timeout <= 0:
        yield
        return
    faulthandler.dump_traceback_later(timeout + NATIVE_HANG_MARGIN, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def _guarded_connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and self.family in (socket.AF_INET, socket.AF_INET6):
        if not (host.startswith("127.") or host in ("localhost", "::1")):
            raise OSError(f"network access to {host!r} attempted in a test (offline only)")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def offline_network(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    yield


@pytest.fixture(autouse=True)
def fresh_dialect_memo():
    """Each test meets its servers afresh: the judge remembers the dialect a server at a URL speaks
    for the rest of the process, and the OS hands a closed test server's port to the next one."""
    from textgen_metrics.judges import openai

    openai._LEARNED.clear()
    yield
    openai._LEARNED.clear()


@pytest.fixture
def repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)
    return ROOT


def word_level_tokenizer(words, folder):
    """A word-level fast tokenizer of ``words`` (pad 0, eos 1, unk 2; every text ends with
    </s>), built offline and saved to ``folder``, as a Trainer's tokenizer is loaded."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    for word in words:
        vocab.setdefault(word, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    fast.save_pretrained(folder)
    return PreTrainedTokenizerFast.from_pretrained(folder)
