"""Who holds a store's write lock, for the message a writer gets when it waited too long
(living's proposal, taken as it was offered).

In WAL mode SQLite's writers take a POSIX advisory lock on one byte of the ``-shm`` file (the
write lock, byte 120 of the shared-memory index). ``fcntl(F_GETLK)`` asks the kernel which
process holds a lock that would conflict, so a writer that gave up can name the holder (its pid,
and its command line where ``/proc`` shows it) instead of SQLite's bare "database is locked".
Nothing here takes a lock or writes; on a system without fcntl the holder is simply unknown.
"""

from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

WAL_WRITE_LOCK_OFFSET = 120  # WALINDEX_LOCK_OFFSET + WAL_WRITE_LOCK in SQLite's wal.c
# struct flock as each kernel lays it out: (type, whence, start, len, pid) on Linux, (start, len,
# pid, type, whence) on the BSDs and macOS.
_FLOCK_LINUX = "hhqqi"
_FLOCK_BSD = "qqihh"


@dataclass
class LockHolder:
    pid: int
    command: str  # the holder's command line, "" when the system does not show it

    def __str__(self) -> str:
        return f"pid {self.pid}: {self.command}" if self.command else f"pid {self.pid}"


def write_lock_holder(path: str | Path) -> LockHolder | None:
    """The process holding the store's write lock, or None (nobody, or it cannot be told)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(f"{path}-shm", os.O_RDONLY)
    except OSError:
        return None
    try:
        pid = _conflicting_pid(fd, WAL_WRITE_LOCK_OFFSET)
    except OSError:
        return None
    finally:
        os.close(fd)
    return LockHolder(pid, _command_of(pid)) if pid else None


def _conflicting_pid(fd: int, offset: int) -> int:
    linux = sys.platform.startswith("linux")
    layout = _FLOCK_LINUX if linux else _FLOCK_BSD
    fields = (fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0) if linux else (offset, 1, 0, fcntl.F_WRLCK, os.SEEK_SET)
    answer = struct.unpack(layout, fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(layout, *fields)))
    kind, pid = (answer[0], answer[4]) if linux else (answer[3], answer[2])
    return pid if kind != fcntl.F_UNLCK else 0


def _command_of(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    if len(words) > 2 and Path(words[0]).name.startswith("python") and words[1] == "-m":
        words = words[2:]  # "python3 -m mnemoscope ingest x" reads as "mnemoscope ingest x"
    elif words and Path(words[0]).name.startswith("python") and len(words) > 1 and words[1].endswith("mnemoscope"):
        words = words[1:]
    if words:
        words[0] = Path(words[0]).name
    text = " ".join(" ".join(words).split())
    return text if len(text) <= 80 else text[:77] + "..."

