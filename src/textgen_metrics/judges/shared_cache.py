"""A judge cache that many processes on many machines share: one JSON file per answer in a
folder (a network file system: NFS, a cluster's shared disk, a mounted bucket with POSIX
renames).

Why not the SQLite cache (``cache.py``) on a shared folder: SQLite's locking relies on POSIX
advisory locks (and, in WAL mode, on shared memory mapped by every process), which NFS and most
network file systems implement partly, slowly or not at all; SQLite's own documentation warns
that a database on a network file system can be corrupted by concurrent writers. A folder of
files needs no lock:

- **Content-addressed**: an answer is stored under the same key as in the SQLite cache
  (``cache.cache_key``: backend, model, messages as first asked, every generation setting; never
  the API key), in the file ``<folder>/<key[:2]>/<key[2:4]>/<key>.json``: the fan-out keeps
  every folder small with millions of answers.
- **Atomic**: each answer is written to a temporary file beside its place and renamed onto it
  (``os.replace``: atomic on POSIX file systems and, one RPC, on an NFS server). A reader sees
  the whole file or none; two writers of the same key write the same validated answer, and the
  last rename wins.
- **Write-through**: ``stage`` writes at once, so an answer is on disk as soon as it is
  validated: a worker killed mid-run loses no validated answer, and a rerun (or the retried
  partition) asks again only what was never validated. ``fsync=True`` also flushes each file
  to the disk before its rename (durable through a power cut; NFS's close-to-open consistency
  already puts it on the server at close).
- Same rules as the SQLite cache: only validated answers are stored (the engine's rule); a
  write that fails (a full disk, a read-only folder) turns writing off for this object with one
  warning, a read that fails is a miss.
- **Private**: folders are created 0700 and files 0600, whatever the umask (``private_files``).
- **Checked**: each file holds the answer, its key and an HMAC-SHA256 over both, keyed with a
  secret of the user's (``TEXTGEN_METRICS_CACHE_KEY``, else 32 random bytes made once into
  ``$XDG_CONFIG_HOME/textgen_metrics/cache_key``, mode 0600; a pickled cache carries it to the
  workers it is shipped to). An entry whose HMAC does not match (rewritten outside the project,
  copied onto another key's file, written by an older version or under another secret) is
  refused: a miss, asked again and overwritten, counted in ``refused`` and warned about once
  per folder and process. A plain hash would not do: whoever can rewrite an entry can rewrite its
  hash. What it does not stop (docs/judges.md): someone who can read the secret; deleting
  entries (they are asked again); putting back an entry this secret once signed for the same
  request (the judge's own answer to it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import warnings
from typing import Any

from ..private_files import create_private, private_folder

__all__ = ["DirectoryCache", "cache_secret", "KEY_ENV"]

KEY_ENV = "TEXTGEN_METRICS_CACHE_KEY"
_FORMAT = "textgen-metrics judge answer, hmac-sha256 v1"

logger = logging.getLogger("textgen_metrics.judges")

# (file, "writable" or "readable"): the failures already warned about in this process
_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def _warn_once(path: str, what: str, message: str) -> None:
    """Log and warn ``message``, unless this process has warned about ``what`` of ``path`` (for
    this cache and for ``cache.JudgeCache``)."""
    with _warned_lock:
        if (path, what) in _warned:
            return
        _warned.add((path, what))
    logger.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)  # where the cache was used


def _key_file() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "textgen_metrics", "cache_key")


def cache_secret() -> bytes:
    """The user's secret that signs shared-cache entries: ``$TEXTGEN_METRICS_CACHE_KEY`` (any
    text; the same on every machine that shares a folder), else the key file, made once with 32
    random bytes (mode 0600, in a folder made 0700)."""
    given = os.environ.get(KEY_ENV)
    if given:
        return given.encode("utf-8", "surrogatepass")
    path = _key_file()
    try:
        with open(path, "rb") as f:
            key = f.read().strip()
        if key:
            return key
    except FileNotFoundError:
        pass
    except OSError as e:
        raise ValueError(f"cache: cannot read the shared cache's key {path!r} ({e.strerror}); set "
                         f"{KEY_ENV} instead") from None
    key = secrets.token_hex(32).encode("ascii")
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        private_folder(os.path.dirname(path))
        fd = create_private(tmp)
        with os.fdopen(fd, "wb") as f:
            f.write(key + b"\n")
        os.link(tmp, path)  # fails if another process made the key meanwhile: theirs is used
    except FileExistsError:
        with open(path, "rb") as f:
            key = f.read().strip()
    except OSError as e:
        raise ValueError(f"cache: cannot create the shared cache's key {path!r} ({e.strerror}); set "
                         f"{KEY_ENV} instead") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return key


def _digest(secret: bytes, key: str, value: Any) -> str:
    """HMAC-SHA256 of the request key and the answer (as canonical JSON)."""
    payload = key + "\n" + json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hmac.new(secret, payload.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


class DirectoryCache:
    """``get``/``put``/``stage``/``flush`` of JSON values, one file per key under ``path``, each
    signed with ``secret`` (default: :func:`cache_secret`). Pickles as its path and its secret:
    every worker a judge is shipped to opens the same folder and trusts the same entries."""

    def __init__(self, path: str | os.PathLike[str], fsync: bool = False, secret: bytes | str | None = None) -> None:
        if isinstance(path, str) and not path.strip():
            raise ValueError("cache: give the folder of the shared cache, e.g. cache='dir:/shared/judge-cache'")
        if isinstance(secret, str):
            secret = secret.encode("utf-8", "surrogatepass")
        if secret is not None and not secret:
            raise ValueError("secret: give a non-empty secret, or None for the user's (cache_secret())")
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        self.fsync = bool(fsync)
        self.writable = True
        self.refused = 0  # entries read that failed the integrity check
        self._secret = secret if secret is not None else cache_secret()
        self._lock = threading.Lock()
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise ValueError(f"cache: {self.path!r} is a file; a shared cache is a folder (dir:<folder>)")
        try:
            private_folder(self.path)
        except OSError as e:
            raise ValueError(f"cache: cannot create the folder {self.path!r} ({e.strerror}); pass a folder you "
                             "can write, or cache=None") from None
        if not os.access(self.path, os.W_OK):
            self.writable = False
            _warn_once(self.path, "writable",
                       f"cache: {self.path} is read-only: cached answers are used, new ones are not stored")

    def file(self, key: str) -> str:
        """Where the answer of ``key`` is stored."""
        if not key or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"cache: {key!r} is not a cache key (a hex digest)")
        return os.path.join(self.path, key[:2], key[2:4], key + ".json")

    def get(self, key: str) -> Any | None:
        """The stored value, or None (missing, unreadable or not JSON: a miss; failing the
        integrity check: a miss, counted in ``refused`` and warned about once)."""
        try:
            with open(self.file(key), "rb") as f:
                entry = json.loads(f.read())
        except (OSError, ValueError):
            return None
        if (isinstance(entry, dict) and entry.get("format") == _FORMAT and entry.get("key") == key
                and isinstance(entry.get("hmac"), str) and "value" in entry):
            try:
                if hmac.compare_digest(entry["hmac"], _digest(self._secret, key, entry["value"])):
                    return entry["value"]
            except (TypeError, ValueError):  # a digest with characters no digest has
                pass
        self._refuse(key)
        return None

    def _refuse(self, key: str) -> None:
        with self._lock:
            self.refused += 1
        logger.debug("cache: %s failed its integrity check", self.file(key))
        _warn_once(self.path, "integrity",
                   f"cache: an entry of {self.path} failed its integrity check (changed outside textgen-metrics, "
                   "written by an older version or signed with another cache key): it is not used, the request "
                   "is asked again and its entry rewritten; the cache's `refused` counts them")

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` now, signed (a temporary file renamed onto the key's file)."""
        if not self.writable:
            return
        target = self.file(key)
        try:
            entry = {"format": _FORMAT, "key": key, "hmac": _digest(self._secret, key, value), "value": value}
            data = json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError) as e:  # a value that is not JSON: a bug, said once
            self._off(f"cache: an answer could not be stored ({e}); new answers are not stored from now on")
            return
        tmp = f"{target}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            private_folder(os.path.dirname(target))
            with os.fdopen(create_private(tmp), "wb") as f:
                f.write(data)
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, target)
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            self._off(f"cache: writing to {self.path} failed ({e}); new answers are not stored from now on "
                      "(a judge made later tries again)")

    def stage(self, key: str, value: Any) -> None:
        """Write-through: the same as ``put`` (durable at once, for a worker killed mid-run)."""
        self.put(key, value)

    def flush(self) -> None:
        """Nothing waits: every answer was written when it came."""

    def _off(self, message: str) -> None:
        with self._lock:
            if not self.writable:
                return
            self.writable = False
        _warn_once(self.path, "writable", message)

    def __len__(self) -> int:
        count = 0
        for _, _, files in os.walk(self.path):
            count += sum(1 for name in files if name.endswith(".json"))
        return count

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "fsync": self.fsync, "secret": self._secret}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], fsync=state.get("fsync", False), secret=state.get("secret"))  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"DirectoryCache({self.path!r})"
