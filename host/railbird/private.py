"""Files only their owner may read (mode 0600): whatever holds a secret (a config with the
broker password or the referee PIN, a password file) and what the host writes about a venue
(the journal and its -wal and -shm, the stats file, exported inputs).

The mode is set when the file is created (os.open with the mode, then fchmod against a
umask that would narrow it further), never by a chmod after the content is written: a
reader could open the file in between and keep reading through that descriptor. A file that
already exists is narrowed to 0600 too. `write_whole` replaces a file whole or not at all
(also for a file that is not private: an export passes its own mode).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

MODE = 0o600


def _open(path, flags: int) -> int:
    fd = os.open(path, flags | os.O_CLOEXEC, MODE)
    try:
        os.fchmod(fd, MODE)  # an existing file keeps its mode through os.open
    except OSError:
        os.close(fd)
        raise
    return fd


def open_private(path, mode: str = "w", **kwargs):
    """Like open(path, mode) for writing ("w", "wb", "a", "ab"), the file 0600."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode.startswith("a") else os.O_TRUNC)
    return os.fdopen(_open(path, flags), mode, **kwargs)


def write_private(path, data) -> None:
    """Write `data` (str or bytes) to a 0600 file, replacing what it held."""
    with open_private(path, "wb" if isinstance(data, (bytes, bytearray)) else "w") as f:
        f.write(data)


def write_whole(path, text: str, mode: int = MODE) -> None:
    """Replace `path` by a file holding `text`, whole or not at all: written to a temporary
    file beside it (created 0600, then given `mode`), synced, renamed over it, and the
    directory synced. A crash or a full disk leaves the old file (or none), never half of
    one."""
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        if mode != MODE:
            os.fchmod(fd, mode)  # set before the content, like `_open`
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    # the rename is durable only once the directory is synced; best effort (some
    # filesystems refuse to open a directory or to sync it)
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def ensure_private(path) -> None:
    """Create `path` empty and 0600 if it does not exist; narrow it to 0600 if it does and is
    ours (another user's file is left as it is: it is theirs to guard)."""
    try:
        os.close(_open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        narrow(path)


def narrow(path) -> None:
    """chmod 0600 where we may: an existing file we own."""
    with contextlib.suppress(OSError):
        if (os.stat(path).st_mode & 0o777) != MODE:
            os.chmod(path, MODE)
