"""A persistent cache of judge calls: SQLite, safe with several processes and threads.

The key is a SHA-256 of the backend, the model, the messages and every generation setting
(never the API key). A rerun of the same evaluation makes no calls; an interrupted run resumes
where it stopped, since each answer is stored as soon as it arrives.
"""

import hashlib
import json
import os
import sqlite3
import threading
import time

__all__ = ["JudgeCache", "resolve_cache", "cache_key", "default_cache_path"]


def default_cache_path():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "textgen_metrics", "judge_cache.sqlite")


def cache_key(backend, model, messages, settings):
    payload = json.dumps({"backend": backend, "model": model, "messages": messages,
                          "settings": settings}, sort_keys=True, ensure_ascii=False,
                         separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class JudgeCache:
    """``get(key)`` / ``put(key, value)`` of JSON values in one SQLite file (WAL mode)."""

    def __init__(self, path):
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                         "created REAL NOT NULL)")

    def _conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
        return conn

    def get(self, key):
        row = self._conn().execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key, value):
        self._conn().execute("INSERT OR REPLACE INTO calls (key, value, created) VALUES (?, ?, ?)",
                             (key, json.dumps(value, ensure_ascii=False), time.time()))

    def __len__(self):
        return self._conn().execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def __repr__(self):
        return f"JudgeCache({self.path!r})"


def resolve_cache(cache):
    """None/False: off; True: the default file; a path; or a JudgeCache."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return JudgeCache(default_cache_path())
    if isinstance(cache, JudgeCache):
        return cache
    if isinstance(cache, (str, os.PathLike)):
        return JudgeCache(cache)
    raise TypeError(f"cache: expected None, True, a path or a JudgeCache, got {type(cache).__name__}")
