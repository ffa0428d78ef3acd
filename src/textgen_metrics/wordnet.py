"""WordNet 3.0 for METEOR, from Debian's ``wordnet-base`` and ``wordnet-sense-index`` packages.

nltk's ``WordNetCorpusReader`` needs a folder with ``index.*``, ``data.*``, ``*.exc`` and a
``lexnames`` file; Debian ships all but ``lexnames`` in ``/usr/share/wordnet``. This module
assembles such a folder (a copy of the Debian files plus the ``lexnames`` this package ships)
under the user's cache, once, and opens it. Nothing is downloaded; nltk's downloader is never used.

Where WordNet lives: ``$TEXTGEN_METRICS_WORDNET`` (a complete WordNet folder), else
``/usr/share/wordnet``.
"""

import os
import shutil
import tempfile
import threading
import warnings

__all__ = ["load_wordnet", "wordnet_dir", "WordNetMissingError"]

DEBIAN_DIR = "/usr/share/wordnet"
_REQUIRED = [f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")]
_NEEDED = _REQUIRED + [f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")]
_LOCK = threading.Lock()
_READER = None


class WordNetMissingError(RuntimeError):
    pass


def _cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "textgen_metrics")


def wordnet_dir():
    """A folder nltk's WordNet reader can open; built once from the Debian files."""
    source = os.environ.get("TEXTGEN_METRICS_WORDNET") or DEBIAN_DIR
    missing = [f for f in _REQUIRED if not os.path.isfile(os.path.join(source, f))]
    if missing:
        raise WordNetMissingError(
            f"WordNet 3.0 not found in {source} (missing {', '.join(missing)}). METEOR needs it: "
            "install Debian's packages with `apt-get install wordnet-base wordnet-sense-index` "
            "(the Makefile does), or set TEXTGEN_METRICS_WORDNET to a WordNet 3.0 folder."
        )
    if os.path.isfile(os.path.join(source, "lexnames")):
        return source
    lexnames = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wordnet_lexnames")
    for root in (_cache_root(), tempfile.gettempdir()):
        target = os.path.join(root, "wordnet-" + source.strip("/").replace("/", "_"))
        try:
            os.makedirs(target, exist_ok=True)
            for name in _NEEDED:
                src_file = os.path.join(source, name)
                dest = os.path.join(target, name)
                if os.path.isfile(src_file) and not os.path.exists(dest):
                    # nltk's reader refuses symlinks and hard links that could lead outside its
                    # folder, so the files are copied, once (about 28 MB)
                    tmp = f"{dest}.{os.getpid()}"
                    shutil.copyfile(src_file, tmp)
                    os.replace(tmp, dest)
            dest = os.path.join(target, "lexnames")
            if not os.path.exists(dest):
                tmp = f"{dest}.{os.getpid()}"
                shutil.copyfile(lexnames, tmp)
                os.replace(tmp, dest)
            return target
        except OSError:
            continue
    raise WordNetMissingError("could not assemble a WordNet folder in the cache or temp directory")


def load_wordnet():
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
            class LocalWordNet(WordNetCorpusReader):
                def map_wn(self, version="wordnet"):
                    # nltk maps other WordNets to the downloadable "wordnet" corpus for its
                    # multilingual data; this is WordNet 3.0 itself and METEOR needs no mapping
                    return None

            with warnings.catch_warnings():
                # "multilingual functions are not available": no Open Multilingual Wordnet,
                # which METEOR does not use
                warnings.simplefilter("ignore", UserWarning)
                _READER = LocalWordNet(root, None)
        return _READER
