"""The compiled core of the lexical metrics: one home for every hot kernel.

``_core`` is a C++17 extension built by the package's own build (``setup.py``, with pybind11 from
PyPI as a build requirement; only gcc/g++ and Python's headers are needed on the machine). The
kernels take whole batches of Python strings and give back numbers (or tokens where a tokenizer
is the product), and release the GIL while they run, so ``num_threads`` and Python threads scale.

Kernels (each the one implementation in the product; the slow Python versions live only in
``tests/`` as references, held equal by property tests):

- rouge-score's tokenizer, nltk's Porter stemmer (NLTK_EXTENSIONS mode, nltk 3.10's rules,
  every word, any Unicode) and Python's exact ``str.lower`` (CPython's own case tables);
- ROUGE-N n-gram matching, LCS (bit-parallel), the summary-level union LCS of rougeLsum, the
  weighted LCS of ROUGE-1.5.5 (rougeW; linear memory for long lines) and skip-bigrams (rougeS
  with any gap without listing the O(n^2) pairs; gap-limited rougeS and rougeSU in linear time);
- METEOR's alignment and score over a compact WordNet index (built once, kept on disk);
- sacrebleu's 13a and nltk's Treebank tokenizers, BLEU and GLEU n-gram statistics;
- TER's edits, sacrebleu's Tercom algorithm (``tercom.hpp``: beam edit distance, shifts, its
  1,000-candidate limit; candidates that cannot win abandoned early, rows of prefixes cached);
- the sign-flip permutation counts of soft pairwise accuracy's bootstrap (``perm.hpp``: a table
  of signed sums per block of 6 items instead of a float32 product per resample).

Why pybind11, and not Cython, nanobind or the bare C API:

- the kernels are C++ (hash tables, bit-parallel rows, threads), and pybind11 binds C++ classes,
  exceptions and ``py::gil_scoped_release`` directly, without a second language (Cython) between
  Python and the C++ code;
- it is headers only and installs from PyPI as a build requirement, and
  ``pybind11.setup_helpers`` builds with plain setuptools: no CMake and no scikit-build, which
  nanobind's supported build needs (nanobind also compiles its own runtime library);
- its per-call cost (about a microsecond) does not matter for batch APIs, and the hot paths read
  ``str`` buffers through CPython's C API (``PyUnicode_AsUTF8AndSize``) without conversions.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

try:
    from . import _core
except ImportError as exc:  # pragma: no cover - exercised only on a broken install
    raise ImportError(
        "textgen_metrics._native._core is not built. Install the package with "
        "`pip install -e .` (or `pip install .`), or build in place with "
        "`python setup.py build_ext --inplace`; it needs g++ and Python's headers."
    ) from exc

__all__ = [
    "RougeCore",
    "RougeTokenizer",
    "lcs_length",
    "lcs_indices",
    "lcs_table",
    "union_lcs_indices",
    "wlcs_hits",
    "porter_stem",
    "lower",
    "treebank_tokenize",
    "perm_counts",
    "ter_edits",
    "pair_counts",
    "PERM_BITS",
    "tokenize_13a",
    "split_whitespace",
    "bleu_core",
    "resolve_threads",
    "RougeKind",
    "RougeInput",
    "BleuInput",
    "WLCS_FULL",
    "ROUGE_KINDS",
]

RougeCore = _core.RougeCore
perm_counts = _core.perm_counts  # stats.agreement.spa_resampled: sign-flip permutation counts (perm.hpp)
PERM_BITS: int = _core.PERM_BITS  # items per block of perm_counts' sign patterns
pair_counts = _core.pair_counts  # stats.agreement.p_values: pce's counts from its own product's sums
RougeTokenizer = _core.RougeTokenizer

# The codes of the core's arguments are its enumerations (pybind11 enums defined in _core.cpp
# from the headers' enum classes): Python names a code, it never writes its number. A bare int
# where a code is expected is a TypeError; a value outside an enumeration (RougeKind(99)) a
# ValueError.
RougeKind = _core.RougeKind    # RougeCore's types: N, L, LSUM, W, S, SU
RougeInput = _core.RougeInput  # RougeCore.score's mode: TEXT, UNITS, TOKENS
BleuInput = _core.BleuInput    # BleuCore's tokenizer: TEXT_13A, TEXT_SPLIT, TOKENS

# lexical.rouge's kinds (parse_rouge_type's names) as the core's
ROUGE_KINDS = {"n": RougeKind.N, "L": RougeKind.L, "Lsum": RougeKind.LSUM, "W": RougeKind.W, "S": RougeKind.S,
               "SU": RougeKind.SU}

# wlcs_hits keeps every move of a table of up to this many cells (2**30, 256 MB of 2-bit moves)
WLCS_FULL: int = _core.WLCS_FULL


def resolve_threads(num_threads: int | None) -> int:
    """``num_threads``: None or 0 means every core; otherwise a positive count."""
    if num_threads is None:
        return 0
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 0:
        raise ValueError(f"num_threads: {num_threads!r} must be a non-negative integer or None")
    return num_threads


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences."""
    return _core.lcs_length(a, b)


def lcs_indices(ref: Sequence[str], can: Sequence[str]) -> list[int]:
    """Indices into ``ref`` of the LCS that rouge-score's ``lcs_ind(ref, can)`` returns."""
    return _core.lcs_indices(ref, can)


def lcs_table(a: Sequence[str], b: Sequence[str]) -> list[list[int]]:
    """The full ``(len(a)+1) x (len(b)+1)`` LCS table (small inputs)."""
    return _core.lcs_table(a, b)


def union_lcs_indices(ref_sents: Sequence[Sequence[str]],
                      can_sents: Sequence[Sequence[str]]) -> list[list[int]]:
    """Per reference sentence, the sorted union of its LCS indices against every candidate
    sentence (rouge-score's ``_union_lcs``, the summary-level LCS of rougeLsum)."""
    return _core.union_lcs_indices(ref_sents, can_sents)


def wlcs_hits(model: Sequence[str], peer: Sequence[str], weight: float,
              max_table_cells: int | None = None) -> list[int]:
    """ROUGE-1.5.5 ``wlcs_inner`` + ``markLCS``: 1 at the model positions on the weighted LCS.

    A table has ``len(model) * (len(peer) + 1)`` cells; one of more than ``max_table_cells``
    (default ``WLCS_FULL``, 2**30) is walked back from rows kept every ~sqrt(len(model)) rows
    instead of a full table of moves (same result)."""
    if max_table_cells is None:
        return _core.wlcs_hits(model, peer, weight)
    return _core.wlcs_hits(model, peer, weight, max_table_cells)


def porter_stem(words: Sequence[str]) -> list[str]:
    """nltk ``PorterStemmer().stem(word)`` of every word (NLTK_EXTENSIONS mode)."""
    return _core.porter_stem(words)


def lower(texts: Sequence[str]) -> list[str]:
    """``str.lower()`` of every text, computed in the core (exact: the interpreter's tables)."""
    return _core.lower(texts)


def treebank_tokenize(texts: Sequence[str]) -> list[list[str]]:
    """nltk ``word_tokenize(text, preserve_line=True)`` of every text (NLTKWordTokenizer's rules)."""
    return _core.treebank_tokenize(texts)


_LOCAL = threading.local()


def bleu_core() -> _core.BleuCore:
    """This Python thread's ``BleuCore``: its scratch (vocabulary, hash tables) is reused from
    call to call, and Python threads do not wait for each other's calls (a ``BleuCore`` runs
    one call at a time, without the GIL)."""
    core: _core.BleuCore | None = getattr(_LOCAL, "bleu", None)
    if core is None:
        core = _LOCAL.bleu = _core.BleuCore()
    return core


def tokenize_13a(texts: Sequence[str], lowercase: bool = False) -> list[list[str]]:
    """sacrebleu's ``13a`` tokens of every ``text.rstrip()`` (lower-cased first when asked)."""
    return bleu_core().tokenize(texts, BleuInput.TEXT_13A, lowercase)


def split_whitespace(texts: Sequence[str], lowercase: bool = False) -> list[list[str]]:
    """``text.split()`` (``text.lower().split()``) of every text: sacrebleu's ``none``."""
    return bleu_core().tokenize(texts, BleuInput.TEXT_SPLIT, lowercase)


def ter_edits(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]],
              num_threads: int | None = 1) -> list[tuple[int, int]]:
    """Per hypothesis (a token list) and its references (token lists): (the fewest edits over
    the references, the references' total length), the edits sacrebleu's
    ``lib_ter.translation_edit_rate`` counts (shifts plus beam edit distance). No references
    give (10**16, 0), sacrebleu's starting value of the fewest edits."""
    return _core.ter_edits(hypotheses, references, resolve_threads(num_threads))
