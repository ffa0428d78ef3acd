"""Files and folders only their owner can read: every cache the library writes (judge answers,
the shared cache's integrity key, the WordNet copy and index, a tiny judge's assembled model) is
created with mode 0600 in folders of mode 0700, whatever the umask.

Why: a judge's answers quote the texts judged (a user's data), and a cache another user can
write is a cache another user can rewrite. The umask alone does not do it: the usual 022 leaves
new files readable by everyone on the machine.
"""

from __future__ import annotations

import os

__all__ = ["FILE_MODE", "FOLDER_MODE", "cache_root", "private_folder", "create_private", "make_private"]

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def cache_root() -> str:
    """The library's own cache folder: ``$XDG_CACHE_HOME/textgen_metrics`` (``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "textgen_metrics")


def private_folder(path: str, own: bool = False) -> None:
    """Create ``path`` and its missing parents with mode 0700 (``os.makedirs`` gives the parents
    the umask's mode). A folder that exists is left as it is (a folder the user made, maybe
    shared on purpose), unless ``own``: the library's own folder (:func:`cache_root`) is made
    0700 when it belongs to this user (a folder made by an older version was 0755).
    Raises ``OSError`` as ``os.mkdir`` does."""
    missing = []
    folder = os.path.abspath(path)
    while not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:  # made meanwhile by another process (or a file: the caller's error)
            continue
        os.chmod(folder, FOLDER_MODE)  # the umask may have taken bits from the owner too
    if own and not missing and os.stat(path).st_uid == os.getuid():
        os.chmod(path, FOLDER_MODE)


def create_private(path: str) -> int:
    """A new file ``path`` (it must not exist; a link there is not followed), mode 0600, open for
    writing: its descriptor."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd


def make_private(path: str) -> None:
    """Mode 0600 for a file that other code wrote (a copy, a native index) before it is renamed
    into a cache folder."""
    os.chmod(path, FILE_MODE)
