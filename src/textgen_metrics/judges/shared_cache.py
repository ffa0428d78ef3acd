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
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import warnings
from typing import Any

__all__ = ["DirectoryCache"]

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


class DirectoryCache:
    """``get``/``put``/``stage``/``flush`` of JSON values, one file per key under ``path``.
    Pickles as its path: every worker a judge is shipped to opens the same folder."""

    def __init__(self, path: str | os.PathLike[str], fsync: bool = False) -> None:
        if isinstance(path, str) and not path.strip():
            raise ValueError("cache: give the folder of the shared cache, e.g. cache='dir:/shared/judge-cache'")
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        self.fsync = bool(fsync)
        self.writable = True
        self._lock = threading.Lock()
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise ValueError(f"cache: {self.path!r} is a file; a shared cache is a folder (dir:<folder>)")
        try:
            os.makedirs(self.path, exist_ok=True)
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
        """The stored value, or None (missing, unreadable or not JSON: a miss)."""
        try:
            with open(self.file(key), "rb") as f:
                return json.loads(f.read())
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` now (a temporary file renamed onto the key's file)."""
        if not self.writable:
            return
        try:
            data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError) as e:  # a value that is not JSON: a bug, said once
            self._off(f"cache: an answer could not be stored ({e}); new answers are not stored from now on")
            return
        target = self.file(key)
        tmp = f"{target}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(tmp, "wb") as f:
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
        return {"path": self.path, "fsync": self.fsync}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], fsync=state.get("fsync", False))  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"DirectoryCache({self.path!r})"
