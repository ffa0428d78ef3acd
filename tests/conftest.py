"""Test-wide rules: no network but loopback, and the Hugging Face libraries told to stay offline."""

import os
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

for var in ("HF_HUB_OFFLINE", "HF_EVALUATE_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[var] = "1"
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# Ray and Spark started by a test (or a README snippet) bind to loopback, not the machine's interface
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

_real_connect = socket.socket.connect

# The suite runs on pytest-xdist workers with --dist loadgroup (Makefile): a test runs on the worker
# of its group. A test's group is its file unless it names one (``pytest.mark.xdist_group``), so a
# file's module-scoped servers, clusters and models start once, on one worker; the files that start
# Ray share one worker (one local Ray at a time on the machine).
SHARED_GROUPS = {"test_ray_cluster.py": "ray", "test_ray_budget.py": "ray"}


# The groups are handed to the workers in the order of the collected tests: the long tiers first
# (the longest jobs first keeps the run's tail short), the unmarked tests after them.
TIER_ORDER = ("fresh_venv", "cluster", "browser", "real_model", "server", "slow")


def _tier_rank(item) -> int:
    return next((rank for rank, tier in enumerate(TIER_ORDER) if item.get_closest_marker(tier)), len(TIER_ORDER))


def pytest_collection_modifyitems(config, items):
    group_rank: dict[str, int] = {}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            name = item.path.name
            item.add_marker(pytest.mark.xdist_group(SHARED_GROUPS.get(name, name)))
        group = item.get_closest_marker("xdist_group").args[0]
        group_rank[group] = min(group_rank.get(group, len(TIER_ORDER)), _tier_rank(item))
    # a group moves as a whole (its module-scoped fixtures start once); stable: tests keep their order
    items.sort(key=lambda item: group_rank[item.get_closest_marker("xdist_group").args[0]])


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
