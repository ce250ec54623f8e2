"""A file of named numpy arrays that is written whole and checked before it is trusted.

The index saves its arrays in one (engine/index_file.py) so that a large store opens by mapping
them instead of rebuilding them from every row. Such a file is a cache beside the store: it may
be damaged (a crash mid-write on a file system that reorders, a full disk, a copy cut short), left
behind by another version, or not ours at all. So it is:

* written to a temporary file in the same folder, private (0600), flushed, fsynced, then renamed
  over the old one: a reader sees the old file or the new one, never half of one;
* checked when read: a magic line, the format, every array's bounds, the header's own CRC;
  numeric dtypes only (nothing is unpickled); owned by this user and private. Anything amiss
  reads as "no file" (:class:`Unusable`), and the caller rebuilds;
* checked whole (every array's CRC-32) once per version of the file, not at every open: at a
  million items the index's file is hundreds of megabytes, and reading it all at each open was
  most of what the app's cold start read from the disk (docs/scaling.md). A version is what the
  file system names the file by: its device, inode, size, modification and change times (and its
  header's CRC). The writer stamps the version it has just written and fsynced (its CRCs are of
  the very arrays it wrote: reading them back from the page cache would check nothing more), and
  a reader that had to read every CRC stamps the version it checked. The stamp is a small private
  file beside it (``<file>.checked``, :data:`STAMP_SUFFIX`); an open of the stamped version reads
  only the header. Whatever changes a file through the file system makes a new version: a copy
  or a file renamed over it (another inode), a write in place or a truncation (a new change
  time, which no program can set back), so it is checked whole again. A crash mid-write leaves
  the old file (and its stamp) or a temporary file nobody reads. A stamp is believed only if it
  was written in a later tick of the file system's clock than the file's change time (else a
  write in place within that tick would keep the stamped times), so the writer waits out a
  short tick (:func:`date_again`); a clock behind the file, or one that ticks in seconds, leaves
  the stamping to the next open, which checks the file whole. What no stamp sees is the disk
  itself changing bytes under an unchanged file, which the store's own pages (SQLite reads them
  unchecked) are exposed to as well.

  Two other ways were weighed: checking in the background after the open, with queries waiting
  for it (every path that reads the index, ingest and the areas' loads included, would have to
  wait or undo a rebuild after answers were given), and checking the small arrays at open and
  the big ones when first used (the first query uses the big ones: it would pay the read). A
  stamp takes the read off every open of an unchanged file and keeps the rule that nothing
  unchecked is used;
* mapped copy-on-write: the arrays are views of the file's pages, so opening costs no copy, and a
  caller may change them in place without touching the file. The checksum pass, when it runs,
  reads the file through a mapping of its own (:meth:`MappedArrays.check`), so a caller may run
  it in another thread while it reads the arrays (zlib lets go of the GIL), and trust what it
  made of them only once the check has passed.

Layout: ``MAGIC``, an 8-byte little-endian header length, the header (JSON: the container's
``format``, ``meta`` given by the caller, and for each array its dtype, shape, offset and CRC), a
4-byte CRC of the header, then the arrays, each at an offset aligned to ``ALIGN`` bytes.

The container has one layout, numbered 1 and 2 (``FORMATS``): every reader refuses a number it
does not know, so the caller may write 2 to keep older readers, which know only 1, away from a
file (engine/index_file.py does so once what the file holds is laid out as they cannot read).
"""

from __future__ import annotations

import json
import mmap
import os
import stat
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Mapping

import numpy as np

from .errors import FileRefused
from .files import atomic_writer

MAGIC = b"mnemoscope arrays\n"
FORMAT = 1
FORMATS = (1, 2)  # the container's numbers: one layout (see above)
ALIGN = 64
_KINDS = "biuf"  # bool, signed, unsigned, float: nothing that needs pickling
STAMP_SUFFIX = ".checked"  # beside a file: the version of it whose arrays were checked (see above)
# the coarsest tick of a kernel's clock of file times worth waiting out (HZ=100: 10 ms, with room);
# the stamp is dated again every _STAMP_WAIT seconds for at most two such ticks
_TICK_NS, _STAMP_WAIT = 20_000_000, 0.002


class Unusable(Exception):
    """The file is missing, damaged, foreign or of another format (the message says which)."""


@dataclass
class ArrayFile:
    """What :func:`read_arrays` found: the caller's metadata and the arrays by name."""

    meta: dict[str, object]
    arrays: dict[str, np.ndarray]


@dataclass(frozen=True)
class Version:
    """One version of a file, as the file system and the file's header name it: what a stamp
    vouches for (any write through the file system changes one of these)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    header_crc: int

    @classmethod
    def of(cls, info: os.stat_result, header_crc: int) -> "Version":
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, header_crc)


def _crc(a: np.ndarray) -> int:
    return zlib.crc32(memoryview(np.ascontiguousarray(a)).cast("B")) if a.size else 0


def write_arrays(path: Path, meta: Mapping[str, object], arrays: Mapping[str, np.ndarray], format: int = FORMAT) -> None:
    """Write ``arrays`` and ``meta`` (JSON-able) to ``path``, replacing it at once, in the
    container numbered ``format`` (see above)."""
    if format not in FORMATS:
        raise ValueError(f"no container format {format!r}")
    entries, offset = [], 0
    plain = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    for name, a in plain.items():
        if a.dtype.kind not in _KINDS:
            raise TypeError(f"array {name!r} has dtype {a.dtype}, which is not numeric")
        entries.append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape), "offset": offset, "crc": _crc(a)})
        offset += -(-a.nbytes // ALIGN) * ALIGN
    header = json.dumps({"format": format, "meta": dict(meta), "arrays": entries}).encode()
    start = -(-(len(MAGIC) + 8 + len(header) + 4) // ALIGN) * ALIGN
    with atomic_writer(path) as out:
        out.write(MAGIC + len(header).to_bytes(8, "little") + header + zlib.crc32(header).to_bytes(4, "little"))
        for entry, a in zip(entries, plain.values()):
            out.seek(start + entry["offset"])
            out.write(memoryview(a).cast("B") if a.size else b"")
        out.truncate(start + offset)
        out.flush()
        written = os.fstat(out.fileno())
    # the file just renamed to ``path``, if it is still the one written (the temporary file's
    # inode and modification time when complete; the rename gave it a new change time)
    _stamp_current(path, zlib.crc32(header),
                   lambda info: (info.st_dev, info.st_ino, info.st_mtime_ns) == (written.st_dev, written.st_ino, written.st_mtime_ns))


def _stamp_current(path: Path, header_crc: int, is_vouched: Callable[[os.stat_result], bool]) -> None:
    """Stamp the file now at ``path`` as checked if it is the one its writer or checker vouches
    for (``is_vouched``). Another process may have saved a file over it meanwhile (a whole check
    at a million items takes seconds), stamped by its own writer: that stamp is left as it is."""
    try:
        with open_private(path) as f:
            info = os.fstat(f.fileno())
    except Unusable:
        return
    if is_vouched(info):
        _stamp(path, Version.of(info, header_crc))


def _stamp(path: Path, version: Version) -> None:
    """Write the stamp saying ``version`` of ``path`` passed its checks, written (and so dated)
    in a later tick of the file system's clock than the version's change time (see above): dated
    again (its times set to now, not written again) while :func:`date_again` says waiting may
    help; else removed, and the next open, which checks the file whole, stamps it. A folder that
    cannot be written costs the next open a whole check, never an error."""
    stamp = path.with_name(path.name + STAMP_SUFFIX)
    try:
        with atomic_writer(stamp) as out:
            out.write(json.dumps(asdict(version)).encode())
        started = time.monotonic_ns()
        while (dated := os.stat(stamp, follow_symlinks=False).st_mtime_ns) <= version.ctime_ns:
            if not date_again(dated, version.ctime_ns, time.monotonic_ns() - started):
                os.unlink(stamp)  # a stamp no later than the change is not believed anyway
                return
            time.sleep(_STAMP_WAIT)
            os.utime(stamp, follow_symlinks=False)
    except (OSError, FileRefused):
        return


def date_again(dated_ns: int, changed_ns: int, waited_ns: int) -> bool:
    """Whether a stamp dated ``dated_ns``, no later than the file's change time ``changed_ns``,
    may be dated later than it by waiting ``waited_ns`` and more: only while the file system's
    clock is within a tick of the change (the same tick; or a tick behind, when the change was
    dated by a finer clock than the stamp), ticks finer than a second, and the wait is under two
    ticks. A stamp dated further behind means the clock is behind the file (stepped back after
    it was saved): no wait would be short. Dated in whole seconds, the clock ticks in seconds
    (or two): waiting the tick out would cost every save a second or two, more than the next
    open's whole check, which stamps the file."""
    return changed_ns - _TICK_NS <= dated_ns <= changed_ns and dated_ns % 1_000_000_000 != 0 and waited_ns < 2 * _TICK_NS


def _stamped(path: Path, version: Version) -> bool:
    """Whether the stamp beside ``path`` vouches for ``version``: it names it and is private,
    and it was written in a later tick than the version's change time."""
    try:
        with open_private(path.with_name(path.name + STAMP_SUFFIX)) as f:
            dated, raw = os.fstat(f.fileno()).st_mtime_ns, f.read(4096)
        return json.loads(raw) == asdict(version) and dated > version.ctime_ns
    except (Unusable, OSError, ValueError, RecursionError):  # RecursionError: JSON nested past the parser's depth
        return False


def read_header(path: Path) -> dict[str, object]:
    """The caller's metadata of a file, without reading or checking its arrays (cheap)."""
    with open_private(path) as f:
        return _header(f.read(len(MAGIC) + 8), f)[0]


@dataclass
class MappedArrays:
    """A file's arrays mapped and within its bounds, their checksums not read yet."""

    file: ArrayFile
    checksums: dict[str, tuple[int, int, object]]  # by array: (offset, bytes, the CRC its entry gives)
    path: Path
    version: Version  # the version mapped (its stamp, once checked)
    # the same file mapped read-only (a file renamed over it since is not read), and open to fsync it; None: stamped
    to_check: tuple[mmap.mmap, BinaryIO] | None

    @property
    def checked_before(self) -> bool:
        """Whether this version of the file was checked before (its stamp): :meth:`check` reads nothing."""
        return self.to_check is None

    def check(self) -> None:
        """Raise :class:`Unusable` when an array fails its checksum, unless this version of the
        file was checked before; then stamp it. Reads the file through a read-only mapping of
        its own, let go of as it goes: the pages the arrays map stay as the caller left them, and
        none of the file stays resident for the check's sake (at a million items the index and
        areas files are most of a gigabyte). Once only.

        The pages checked may be the page cache's alone (a file copied in by ``cp``, which does not
        fsync): the file is fsynced before the stamp, so that a stamp on the disk never vouches
        for bytes that a power cut could leave otherwise under the same times (a file system
        that journals metadata ahead of data). A file already on the disk costs nothing more."""
        if self.to_check is None:
            return
        pages, synced = self.to_check
        with synced, pages:
            view = memoryview(pages)
            try:
                for name, (offset, length, crc) in self.checksums.items():
                    if (zlib.crc32(view[offset:offset + length]) if length else 0) != crc:
                        raise Unusable(f"array {name!r} fails its checksum")
                    _let_go(pages, offset, length)
            finally:
                view.release()
            try:
                os.fsync(synced.fileno())
            except OSError:  # not known to be on the disk: checked, not stamped (the next open checks it again)
                return
        _stamp_current(self.path, self.version.header_crc,
                       lambda info: Version.of(info, self.version.header_crc) == self.version)


def read_arrays(path: Path) -> ArrayFile:
    """Every array of the file, checked (or stamped as checked), as copy-on-write views of its
    mapped pages."""
    mapped = map_arrays(path)
    mapped.check()
    return mapped.file


def map_arrays(path: Path) -> MappedArrays:
    """Every array of the file, as copy-on-write views of its mapped pages, within the file's
    bounds and numeric; their checksums are read by :meth:`MappedArrays.check` (unless this
    version of the file is stamped as checked)."""
    with open_private(path) as f:
        info = os.fstat(f.fileno())
        meta, entries, header_crc = _header(f.read(len(MAGIC) + 8), f)
        size = info.st_size
        start = -(-(f.tell()) // ALIGN) * ALIGN
        if size == 0:
            raise Unusable("empty")
        version = Version.of(info, header_crc)
        pages = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        arrays, checksums = {}, {}
        for entry in entries:
            try:
                name, dtype, shape = str(entry["name"]), np.dtype(entry["dtype"]), tuple(int(n) for n in entry["shape"])
                offset = start + int(entry["offset"])
            except (KeyError, TypeError, ValueError) as exc:
                raise Unusable(f"an array's entry is malformed: {exc}") from None
            count = int(np.prod(shape)) if shape else 1
            if dtype.kind not in _KINDS or min(shape, default=0) < 0 or offset < start or offset + count * dtype.itemsize > size:
                raise Unusable(f"array {name!r} is out of bounds or not numeric")
            arrays[name] = np.frombuffer(pages, dtype=dtype, count=count, offset=offset).reshape(shape)
            checksums[name] = (offset, count * dtype.itemsize, entry.get("crc"))
        to_check = None if _stamped(path, version) else (mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ),
                                                          os.fdopen(os.dup(f.fileno()), "rb"))
    return MappedArrays(ArrayFile(meta, arrays), checksums, path, version, to_check)


def _let_go(pages: mmap.mmap, offset: int, length: int) -> None:
    """Let the pages the checksum read leave this process's memory: they come back from the file
    (the system's cache) as the arrays are used, and a part no recall reads holds no memory."""
    if hasattr(mmap, "MADV_DONTNEED") and length:
        first = offset - offset % mmap.PAGESIZE
        pages.madvise(mmap.MADV_DONTNEED, first, offset + length - first)


def open_private(path: Path) -> BinaryIO:
    """The file, opened only if it is a regular file of this user that nobody else may read or
    write (a file another user placed is not trusted). Opened without blocking, as engine/files.py
    reads: a named pipe in its place (which another user can put where a store in /tmp keeps a
    file it has not written yet) would wait for a writer forever; it is refused instead."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Unusable(exc.strerror or str(exc)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        os.close(fd)
        raise Unusable("not a private regular file of this user")
    return os.fdopen(fd, "rb")


def _header(lead: bytes, f: BinaryIO) -> tuple[dict[str, object], list[dict[str, object]], int]:
    """The checked header (the caller's metadata, the arrays' entries, its CRC), read from ``f``
    just after its first bytes ``lead``."""
    if len(lead) < len(MAGIC) + 8 or not lead.startswith(MAGIC):
        raise Unusable("not an array file")
    length = int.from_bytes(lead[len(MAGIC):], "little")
    if length > 1 << 26:
        raise Unusable("header too large")
    raw, crc = f.read(length), f.read(4)
    if len(raw) != length or len(crc) != 4 or zlib.crc32(raw) != int.from_bytes(crc, "little"):
        raise Unusable("damaged header")
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
        raise Unusable("damaged header") from None
    if not isinstance(header, dict) or header.get("format") not in FORMATS:
        raise Unusable("another format")
    meta, entries = header.get("meta"), header.get("arrays")
    if not isinstance(meta, dict) or not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise Unusable("another format")
    return meta, entries, zlib.crc32(raw)
