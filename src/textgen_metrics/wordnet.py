"""WordNet 3.0 for METEOR, from Debian's ``wordnet-base`` and ``wordnet-sense-index`` packages.

METEOR reads WordNet through a compact index (``wordnet_index``): what nltk's ``synsets(word)``
and the synsets' lemma names need (lemma forms, their synsets per part of speech, the synsets'
names, the morphological exception lists), built once by the compiled core from the WordNet files
into one binary file under the user's cache folder, keyed by the files' identity (folder, names,
sizes, modification times) and the index format. Every later process reads that file (a few
MB, milliseconds) instead of parsing the WordNet text files again.

``load_wordnet`` opens nltk's own reader over the same files (the reference of the parity tests).

nltk's ``WordNetCorpusReader`` needs a folder with ``index.*``, ``data.*``, ``*.exc`` and a
``lexnames`` file; Debian ships all but ``lexnames`` in ``/usr/share/wordnet``. This module
assembles such a folder (a copy of the Debian files plus the ``lexnames`` this package ships)
under the user's cache, once, and opens it. Nothing is downloaded; nltk's downloader is never used.

The copy and the index are the user's own: files 0600 in folders 0700 (``private_files``); in the
temp folder (the cache folder read-only), a folder or index that another user made is not used.

Where WordNet lives: ``$TEXTGEN_METRICS_WORDNET`` (a complete WordNet folder), else
``/usr/share/wordnet``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import warnings
from typing import Any

from .private_files import cache_root, make_private, private_folder

__all__ = ["load_wordnet", "wordnet_dir", "wordnet_index", "wordnet_index_path", "WordNetMissingError"]

DEBIAN_DIR = "/usr/share/wordnet"
_REQUIRED = [f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")]
_NEEDED = _REQUIRED + [f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")]
_LOCK = threading.Lock()
_READER: Any = None  # nltk's WordNetCorpusReader (nltk ships no types)
_INDEXES: dict[str, Any] = {}  # the compiled core's WordNetIndex
# bump when the index's content or layout changes: old files are then simply not used
INDEX_FORMAT = 1


class WordNetMissingError(RuntimeError):
    pass


def _check_source(source: str, required: list[str]) -> None:
    """A WordNetMissingError naming the files of ``required`` that ``source`` lacks."""
    missing = [f for f in required if not os.path.isfile(os.path.join(source, f))]
    if missing:
        raise WordNetMissingError(
            f"WordNet 3.0 not found in {source} (missing {', '.join(missing)}). METEOR needs it: "
            "install Debian's packages with `apt-get install wordnet-base wordnet-sense-index` "
            "(the Makefile does), or set TEXTGEN_METRICS_WORDNET to a WordNet 3.0 folder."
        )


def _source_dir(required: list[str] = _REQUIRED) -> str:
    source = os.environ.get("TEXTGEN_METRICS_WORDNET") or DEBIAN_DIR
    _check_source(source, required)
    return source


def wordnet_dir() -> str:
    """A folder nltk's WordNet reader can open; built once from the Debian files."""
    source = _source_dir()
    if os.path.isfile(os.path.join(source, "lexnames")):
        return source
    lexnames = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wordnet_lexnames")
    for root in (cache_root(), tempfile.gettempdir()):
        target = os.path.join(root, "wordnet-" + source.strip("/").replace("/", "_"))
        try:
            private_folder(target)
            if os.stat(target).st_uid != os.getuid():  # another user's folder (the temp folder): not trusted
                continue
            for name in _NEEDED:
                src_file = os.path.join(source, name)
                dest = os.path.join(target, name)
                if os.path.isfile(src_file) and not os.path.exists(dest):
                    # nltk's reader refuses symlinks and hard links that could lead outside its
                    # folder, so the files are copied, once (about 28 MB)
                    tmp = f"{dest}.{os.getpid()}"
                    shutil.copyfile(src_file, tmp)
                    make_private(tmp)
                    os.replace(tmp, dest)
            dest = os.path.join(target, "lexnames")
            if not os.path.exists(dest):
                tmp = f"{dest}.{os.getpid()}"
                shutil.copyfile(lexnames, tmp)
                make_private(tmp)
                os.replace(tmp, dest)
            return target
        except OSError:
            continue
    raise WordNetMissingError("could not assemble a WordNet folder in the cache or temp directory")


def load_wordnet() -> Any:
    """The shared nltk ``WordNetCorpusReader`` over the local WordNet (loaded once)."""
    global _READER
    with _LOCK:
        if _READER is None:
            import nltk.data
            from nltk.corpus.reader.wordnet import WordNetCorpusReader

            root = wordnet_dir()
            # nltk >= 3.9 reads only below the folders of nltk.data.path
            if root not in nltk.data.path:
                nltk.data.path.append(root)
            class LocalWordNet(WordNetCorpusReader):  # type: ignore[misc]  # nltk ships no types
                def map_wn(self, version: str = "wordnet") -> None:
                    # nltk maps other WordNets to the downloadable "wordnet" corpus for its
                    # multilingual data; this is WordNet 3.0 itself and METEOR needs no mapping
                    return None

            with warnings.catch_warnings():
                # "multilingual functions are not available": no Open Multilingual Wordnet,
                # which METEOR does not use
                warnings.simplefilter("ignore", UserWarning)
                _READER = LocalWordNet(root, None)
        return _READER


def _index_key(source: str) -> str:
    """Identity of the WordNet files the index is built from, and of the index format."""
    h = hashlib.sha256(f"textgen-metrics wordnet index {INDEX_FORMAT}\n{os.path.realpath(source)}\n".encode())
    for name in _NEEDED:
        st = os.stat(os.path.join(source, name))
        h.update(f"{name} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:24]


def wordnet_index_path(source: str | None = None) -> str:
    """Where the index of ``source`` (default: the WordNet folder in use) lives in the cache."""
    source = source or _source_dir(_NEEDED)
    return os.path.join(cache_root(), f"wordnet-index-{_index_key(source)}.bin")


def _load_or_build(path: str, source: str) -> Any:
    from ._native._core import WordNetIndex

    if os.path.isfile(path):
        if os.stat(path).st_uid != os.getuid():  # another user's file (the temp folder): not trusted
            raise OSError(f"{path} belongs to another user")
        try:
            return WordNetIndex(path)
        except RuntimeError:
            pass  # damaged (e.g. a full disk): rebuilt below
    private_folder(os.path.dirname(path), own=os.path.dirname(path) == cache_root())
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        WordNetIndex.build(source, tmp)
        make_private(tmp)
        os.replace(tmp, path)  # atomic: concurrent builders each write their own file
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return WordNetIndex(path)


def wordnet_index(source: str | None = None) -> Any:
    """The compact WordNet index of ``source`` (default: ``$TEXTGEN_METRICS_WORDNET`` or
    ``/usr/share/wordnet``), loaded once per process; built on first use into the user's cache
    folder (``$XDG_CACHE_HOME/textgen_metrics``, else the temp folder when that is read-only)."""
    source = source or _source_dir(_NEEDED)
    _check_source(source, _NEEDED)
    key = _index_key(source)
    with _LOCK:
        index = _INDEXES.get(key)
        if index is None:
            name = f"wordnet-index-{key}.bin"
            errors = []
            for root in (cache_root(), tempfile.gettempdir()):
                try:
                    index = _load_or_build(os.path.join(root, name), source)
                    break
                except OSError as exc:
                    errors.append(f"{root}: {exc}")
                except RuntimeError as exc:  # the core's I/O errors
                    errors.append(f"{root}: {exc}")
            if index is None:
                raise WordNetMissingError("could not write the WordNet index: " + "; ".join(errors))
            _INDEXES[key] = index
        return index
