"""A persistent cache of judge answers: SQLite, safe with several processes and threads.

The key is a SHA-256 of the backend, the model, the messages as first asked and every
generation setting (never the API key). Only answers that parsed and validated are stored, each
as soon as it arrives, so a rerun makes no call for them and an interrupted or partly failed run
asks again only what is missing.

The file is created private: mode 0600 (its ``-wal`` and ``-shm`` files take the same), in a folder
created 0700, whatever the umask (``private_files``); docs/judges.md says what it holds.

A cache never ends a run. A file that is not a cache (not a SQLite database, or a database
without the cache's table) is a clear ``ValueError`` naming it when the cache is opened. A file
or folder that cannot be written is used read-only. A write that fails (a full disk, a file-size
limit: SQLite's "disk I/O error", "database or disk is full"), also while the cache is opened,
turns writing off, and a read that fails turns the whole cache off: each for that ``JudgeCache``
object from then on, which is the rest of the run for the command line (one judge per run) and,
in Python, as long as the judge that holds it is used; a cache opened on the file later (the next
judge made with ``cache=PATH``, e.g. by the next metric call) tries again. Each kind of failure
(and a read-only file) is warned about once per file and process, however many judges open it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from typing import Any, Protocol, runtime_checkable

from ..private_files import cache_root, create_private, private_folder
from .shared_cache import DirectoryCache, _warn_once

__all__ = ["JudgeCache", "AnswerCache", "resolve_cache", "cache_key", "default_cache_path"]


@runtime_checkable
class AnswerCache(Protocol):
    """What the judge engine asks of a cache: ``JudgeCache`` (SQLite, one machine) and
    ``shared_cache.DirectoryCache`` (one file per answer, many machines)."""

    def get(self, key: str) -> Any | None: ...
    def put(self, key: str, value: Any) -> None: ...
    def stage(self, key: str, value: Any) -> None: ...
    def flush(self) -> None: ...

logger = logging.getLogger("textgen_metrics.judges")


def default_cache_path() -> str:
    return os.path.join(cache_root(), "judge_cache.sqlite")


def cache_key(backend: str, model: str, messages: Any, settings: dict[str, Any]) -> str:
    payload = json.dumps({"backend": backend, "model": model, "messages": messages,
                          "settings": settings}, sort_keys=True, ensure_ascii=False,
                         separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


# SQLite's primary result codes that say the file's content is not a judge cache: SQLITE_ERROR (a
# database without the table), SQLITE_CORRUPT, SQLITE_NOTADB; the others (SQLITE_IOERR,
# SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_BUSY...) are about the disk or the moment
_NOT_A_CACHE = frozenset({1, 11, 26})


def _not_a_cache(error: sqlite3.DatabaseError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in _NOT_A_CACHE
    # Python 3.10: NOTADB and CORRUPT are raised as DatabaseError itself, the others as subclasses
    return type(error) is sqlite3.DatabaseError or "no such table" in str(error)


class JudgeCache:
    """``get(key)`` / ``put(key, value)`` of JSON values in one SQLite file (WAL mode).

    ``stage(key, value)`` keeps a value in memory (``get`` sees it at once); a writer thread
    stores the staged values, ``STAGE_LIMIT`` at a time in one transaction, and ``flush()`` waits
    until all are stored. The judge engine stages its answers and flushes at the end of every run
    (also a run stopped by an error or Ctrl-C): an answer costs its event loop a dictionary
    entry, not a JSON encoding and a transaction, which would hold up every answer in flight.
    """

    STAGE_LIMIT = 64

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        self._local = threading.local()
        self.writable = True
        self.readable = True
        self._lock = threading.Lock()
        self._staged: dict[str, Any] = {}  # staged or being written: get() sees them
        self._batch: list[str] = []  # keys staged since the last batch went to the writer
        self._writer: concurrent.futures.ThreadPoolExecutor | None = None
        self._writes: list[concurrent.futures.Future[None]] = []
        folder = os.path.dirname(self.path)
        try:
            private_folder(folder, own=folder == cache_root())
        except OSError as e:
            raise ValueError(f"cache: cannot create the folder {folder!r} ({e.strerror}); pass a cache "
                             "path in a folder you can write, or cache=None") from None
        if os.path.isdir(self.path):
            raise ValueError(f"cache: {self.path!r} is a folder; pass the path of a cache file")
        exists = os.path.exists(self.path)
        if (exists and not os.access(self.path, os.W_OK)) or (not exists and not os.access(folder, os.W_OK)):
            if not exists:
                raise ValueError(f"cache: cannot create {self.path!r} (the folder is read-only); pass a "
                                 "cache path in a folder you can write, or cache=None")
            self.writable = False
        if not exists:
            self._create()
        read_only = not self.writable
        try:
            self._check()
        except sqlite3.DatabaseError as e:
            if _not_a_cache(e):
                raise ValueError(f"cache: {self.path!r} is not a judge cache ({e}); delete it or pass another "
                                 "cache path") from None
            # the disk, not the file (full, a file-size limit...): read what is there, store nothing
            self._drop_connection()
            if self.writable:
                self._off("writable", self._write_failed(e))
                try:
                    self._check()
                except sqlite3.DatabaseError as again:
                    self._drop_connection()
                    self._off("readable", self._read_failed(again))
            else:
                self._off("readable", self._read_failed(e))
        if read_only:
            _warn_once(self.path, "writable",
                       f"cache: {self.path} is read-only: cached answers are used, new ones are not stored")

    def _create(self) -> None:
        """The empty file, mode 0600, before SQLite opens it: SQLite would create it with the
        umask's mode (0644), and gives its ``-wal`` and ``-shm`` files the mode of the database."""
        try:
            os.close(create_private(self.path))
        except FileExistsError:  # made meanwhile by another process
            pass
        except OSError as e:
            raise ValueError(f"cache: cannot create {self.path!r} ({e.strerror}); pass a cache path in a "
                             "folder you can write, or cache=None") from None

    def _check(self) -> None:
        """Open this thread's connection and check the table (creating it when writable)."""
        conn = self._conn()
        if self.writable:
            conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                         "created REAL NOT NULL)")
        else:
            conn.execute("SELECT key, value FROM calls LIMIT 1").fetchall()

    def _drop_connection(self) -> None:
        """Close this thread's connection (the next ``_conn()`` opens one as the flags say)."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _write_failed(self, error: BaseException) -> str:
        return (f"cache: writing to {self.path} failed ({error}); new answers are not stored from now on "
                "(a judge made later tries again)")

    def _read_failed(self, error: BaseException) -> str:
        return (f"cache: reading {self.path} failed ({error}); the cache is off from now on (a judge made "
                "later tries again)")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.writable:
                conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA busy_timeout=60000")
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            else:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True, timeout=60,
                                       isolation_level=None, check_same_thread=False)
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Any | None:
        """The stored value, or None (also when reading fails: then the cache is turned off)."""
        staged = self._staged.get(key)
        if staged is not None:
            return staged
        if not self.readable:
            return None
        try:
            row = self._conn().execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError, OSError) as e:
            self._off("readable", self._read_failed(e))
            return None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` now; a failed write (a full disk, a lost file) turns writing off."""
        self._write([(key, json.dumps(value, ensure_ascii=False))])

    def stage(self, key: str, value: Any) -> None:
        """Store ``value`` soon, in a batch, by the writer thread (``get`` sees it at once)."""
        if not self.writable:
            return
        with self._lock:
            self._staged[key] = value
            self._batch.append(key)
            if len(self._batch) < self.STAGE_LIMIT:
                return
            batch, self._batch = self._batch, []
        self._submit(batch)

    def flush(self) -> None:
        """Store everything staged; return when it is written."""
        with self._lock:
            batch, self._batch = self._batch, []
        if batch:
            self._submit(batch)
        with self._lock:
            writes, self._writes = self._writes, []
        for write in writes:
            write.result()

    def _submit(self, keys: list[str]) -> None:
        with self._lock:
            if self._writer is None:
                self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judge-cache")
            self._writes = [w for w in self._writes if not w.done()]
            self._writes.append(self._writer.submit(self._write_staged, keys))

    def _write_staged(self, keys: list[str]) -> None:
        with self._lock:
            values = {key: self._staged[key] for key in keys}
        try:
            self._write([(key, json.dumps(value, ensure_ascii=False)) for key, value in values.items()])
        except (TypeError, ValueError) as e:  # a value that is not JSON: a bug, said once
            self._off("writable", f"cache: an answer could not be stored ({e}); new answers are not "
                                  "stored from now on (a judge made later tries again)")
        finally:
            with self._lock:  # a key staged again meanwhile keeps its newer value until its own batch
                for key, value in values.items():
                    if self._staged.get(key) is value:
                        del self._staged[key]

    def _write(self, rows: list[tuple[str, str]]) -> None:
        if not self.writable:
            return
        now = time.time()
        try:
            conn = self._conn()  # the writer thread's own connection, opened on its first batch
            with conn:  # one transaction
                conn.execute("BEGIN")
                conn.executemany("INSERT OR REPLACE INTO calls (key, value, created) VALUES (?, ?, ?)",
                                 [(key, value, now) for key, value in rows])
        except (sqlite3.Error, ValueError, OSError) as e:
            self._off("writable", self._write_failed(e))

    def _off(self, flag: str, message: str) -> None:
        """Turn ``writable`` or ``readable`` off for this object; warn once per file and process."""
        with self._lock:
            if not getattr(self, flag):
                return
            setattr(self, flag, False)
        _warn_once(self.path, flag, message)

    def __len__(self) -> int:
        self.flush()
        return int(self._conn().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def __repr__(self) -> str:
        return f"JudgeCache({self.path!r})"

    def __getstate__(self) -> dict[str, Any]:  # another process opens the file again
        self.flush()
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]


def resolve_cache(cache: Any) -> AnswerCache | None:
    """None/False: off; True: the default file; a path (SQLite); ``"dir:<folder>"`` (a
    ``DirectoryCache``, shared by many machines); a JudgeCache or DirectoryCache."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return JudgeCache(default_cache_path())
    if isinstance(cache, JudgeCache):
        return cache
    if isinstance(cache, str) and cache.startswith("dir:"):
        return DirectoryCache(cache[len("dir:"):])
    if isinstance(cache, (str, os.PathLike)):
        return JudgeCache(cache)
    if isinstance(cache, AnswerCache) and not isinstance(cache, type):
        return cache
    raise TypeError(f"cache: expected None, True, a path, 'dir:<folder>', a JudgeCache or a DirectoryCache, got "
                    f"{type(cache).__name__}")
