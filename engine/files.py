"""Files the person names: read only when regular, written atomically and privately.

Reading opens first and checks what was opened (no window between a check and the open), without
blocking: a FIFO, a socket or a device is refused, never read (a FIFO would wait forever, a
device never ends). Writing goes to a temporary file beside the target, created 0600, which is
fsynced and renamed over the target only when complete: a crash, a full disk or an interrupt
leaves the old file as it was.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from .errors import FileRefused, FileTooLarge


_WRITE_ERRORS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EACCES, errno.EPERM}


def kind_of(mode: int) -> str:
    """What a file is, as a person says it."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: str | Path, inside: Path | None = None) -> BinaryIO:
    """A regular file opened for reading (binary); raises :class:`FileRefused` for anything else.

    With ``inside`` (a resolved folder) the file opened must lie in that folder: a link as the
    path's last part is not followed, and where the opened file really is is checked after the
    open. A caller's check of a path before reading it (a folder walked, a photo's path resolved)
    leaves a window in which a link put in place of the file, or of a folder on its way, would
    lead the read outside."""
    nofollow = getattr(os, "O_NOFOLLOW", 0) if inside is not None else 0
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | nofollow)
    except FileNotFoundError:
        raise FileRefused("no such file") from None
    except OSError as exc:
        if nofollow and exc.errno == errno.ELOOP:
            raise FileRefused("is a symbolic link, not followed here; it was not read") from None
        raise FileRefused(f"cannot read: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileRefused(f"is {kind_of(mode)}, not a file Mnemoscope reads")
    if inside is not None and not _opened_inside(fd, inside):
        os.close(fd)
        raise FileRefused(f"lies outside {inside} (a link on its way); it was not read")
    return os.fdopen(fd, "rb")


def _opened_inside(fd: int, folder: Path) -> bool:
    """Whether the file open as ``fd`` is in ``folder``, by the path the kernel has for it (Linux's
    /proc; elsewhere the caller's check before the open stands alone)."""
    try:
        real = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return True
    return folder in real.parents


def read_regular(path: str | Path, max_bytes: int, inside: Path | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (in ``inside``: see
    :func:`open_regular`); raises :class:`FileRefused`."""
    with open_regular(path, inside) as fh:
        return _read_at_most(fh, max_bytes)


def lines_of_regular(path: str | Path, max_bytes: int, inside: Path | None = None) -> Iterator[bytes]:
    """The lines of a regular file of at most ``max_bytes`` (in ``inside``: see
    :func:`open_regular`), each with its ``\\n``, one at a time: a long file is never held whole.
    Raises :class:`FileRefused`, at the open or at the line where the file grew past the limit."""
    with open_regular(path, inside) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise FileTooLarge(size, max_bytes)
        read = 0
        try:
            for line in fh:
                read += len(line)
                if read > max_bytes:
                    raise FileTooLarge(None, max_bytes)
                yield line
        except OSError as exc:
            raise FileRefused(f"cannot read: {exc.strerror or exc}") from None


def read_own(path: str | Path, max_bytes: int, decides: str = "says where texts and keys are sent") -> bytes:
    """The bytes of a settings file (the config file, an env file, the MCP port's token): a
    regular file that no other user can change (:func:`others_control`). Such a file ``decides``
    what others may not (where texts and keys are sent, who may use the MCP port), so one that
    another user could write, or replace through its folder, is refused, as ssh refuses such a
    config. Raises :class:`FileRefused`."""
    with open_regular(path) as fh:
        control = others_control(path, os.fstat(fh.fileno()))
        if control and control.by == "owner":
            raise FileRefused(f"{control.reason} and {decides}; nothing was read from it")
        if control and control.by == "writers":
            raise FileRefused(f"{control.reason} and it {decides}; nothing was read from it:"
                              f" chmod {'o' if control.reason.startswith('others') else 'g'}-w {path}")
        if control:
            raise FileRefused(f"{control.reason} and put another file in its place; nothing was read from it")
        return _read_at_most(fh, max_bytes)


@dataclass(frozen=True)
class Control:
    """Why another user could change a file: ``by`` its "owner", its other "writers", or through
    its "folder"; ``reason`` as a refusal says it."""

    by: str
    reason: str


def others_control(path: str | Path, info: os.stat_result, *, names: bool = False) -> Control | None:
    """Why another user could change the file at ``path`` (``info``: what was opened there), or
    None when none can: it belongs to another user, others (or a group shared with other users)
    can write it, or another user can change a folder it is in (the one its name is in, and the
    real one when that name is a link) or a folder above that one (:func:`folder_control`), and
    so put another file in its place. Root's own files
    and folders count as this user's; a folder with the sticky bit (``/tmp``) lets no one
    replace another's file. A group-writable file or folder is the owner's own when its group is
    the owner's private group, as the default umask 002 of user-private groups makes them (664,
    775). With ``names`` (:func:`folder_control`), a sticky folder others can write counts too."""
    trusted = (os.getuid(), 0)
    if info.st_uid not in trusted:
        return Control("owner", f"it belongs to another user (uid {info.st_uid})")
    writers = _other_writers(info)
    if writers:
        return Control("writers", f"{writers} can write it (mode {info.st_mode & 0o777:o})")
    named = Path(os.path.abspath(path))
    for folder in dict.fromkeys([Path(os.path.realpath(named)).parent, *([named.parent] if named.is_symlink() else [])]):
        control = folder_control(folder, names=names)
        if control:
            return control
    return None


def folder_control(folder: str | Path, *, names: bool = False) -> Control | None:
    """Why another user could change what ``folder`` holds (see :func:`others_control`), or None.
    With ``names``, a sticky folder others can write (``/tmp``) counts too: no one replaces
    another's file there, but anyone may put a file or a link at a name not yet taken, as the
    ``-wal`` and ``-shm`` names SQLite opens beside a store at each open are, between two opens.

    Every folder above it counts as well, up to the root, by the path as named and as it really
    is: another user who can change one of them renames the folder on the way and puts a folder
    of theirs in its place, with files of their choosing at the same names. A sticky folder
    (``/tmp``) lets no one rename another's folder, so it does not count there."""
    return _folder_control(Path(folder), names, "its folder") or next(
        filter(None, (_folder_control(above, False, "a folder on its way,") for above in _folders_above(folder))), None)


def _folders_above(folder: str | Path) -> list[Path]:
    """The folders that hold ``folder`` or a folder on its way to the root, by its path as named
    (a link on the way lives in one of these) and as it really is."""
    named, real = Path(os.path.abspath(folder)), Path(os.path.realpath(folder))
    return list(dict.fromkeys([*real.parents, *named.parents]))


def _folder_control(folder: Path, names: bool, what: str) -> Control | None:
    """Why another user could change what ``folder`` holds, itself alone (:func:`folder_control`)."""
    held = os.stat(folder)
    writers = _other_writers(held)
    mode = f"(mode {held.st_mode & 0o7777:o}, uid {held.st_uid})"
    if held.st_uid not in (os.getuid(), 0):  # its owner may rename or delete anything in it, sticky or not
        return Control("folder", f"another user (uid {held.st_uid}) can change {what} {folder} {mode}")
    if not writers:
        return None
    if held.st_mode & stat.S_ISVTX:
        return Control("folder", f"{writers} can put files in its folder {folder} {mode} at the names SQLite opens beside"
                       " a store") if names else None
    return Control("folder", f"{writers} can change {what} {folder} {mode}")


def _other_writers(info: os.stat_result) -> str:
    """Who besides the owner can write a file or folder, as the refusal says it ("others", "the
    group NAME"), or "" for no one."""
    return _others_with(info, others=0o002, group=0o020)


def other_readers(info: os.stat_result) -> str:
    """Who besides the owner can read a file, as :func:`_other_writers` says it."""
    return _others_with(info, others=0o004, group=0o040)


def _others_with(info: os.stat_result, others: int, group: int) -> str:
    """Who besides the owner has the permission whose bit for others is ``others`` and for the
    group ``group``: a group that is the owner's private one is the owner."""
    if info.st_mode & others:
        return "others"
    if info.st_mode & group and not _private_group(info.st_gid, info.st_uid):
        return f"the group {_group_name(info.st_gid)}"
    return ""


def _private_group(gid: int, uid: int) -> bool:
    """Whether ``gid`` is ``uid``'s private group: no member but that user, and no other user's
    primary group (OpenSSH's rule for a group-writable file). Unknown ids are not private."""
    import grp  # POSIX only, and only a group-writable file asks
    import pwd

    try:
        owner = pwd.getpwuid(uid).pw_name
        members = grp.getgrgid(gid).gr_mem
    except KeyError:
        return False
    return set(members) <= {owner} and not any(user.pw_gid == gid and user.pw_uid != uid for user in pwd.getpwall())


def _group_name(gid: int) -> str:
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _read_at_most(fh: BinaryIO, max_bytes: int) -> bytes:
    size = os.fstat(fh.fileno()).st_size
    if size > max_bytes:
        raise FileTooLarge(size, max_bytes)
    try:
        data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise FileRefused(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise FileTooLarge(None, max_bytes)
    return data


def make_private_folders(folder: str | Path, made: Callable[[Path], None] | None = None) -> None:
    """Make ``folder`` and every missing folder above it, each 0700 whatever the umask: ``mkdir -p``
    (``Path.mkdir(parents=True)``) makes the ones above with the umask's mode, under umask 000
    folders every user could change, and so replace what they hold. ``made`` is called with each
    folder as it is made (or found made by another process meanwhile), before the next one."""
    missing: list[Path] = []
    folder = Path(folder)
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        new.mkdir(mode=0o700, exist_ok=True)
        if made is not None:
            made(new)


def check_target(path: str | Path) -> Path:
    """A path a file may be written to: missing, or a regular file, in an existing folder."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise FileRefused(f"{path}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise FileRefused(f"{path} is {kind_of(mode)}; write to a file")
    if not path.parent.is_dir():
        raise FileRefused(f"{path}: the folder {path.parent} does not exist")
    return path


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[BinaryIO]:
    """Write ``path`` all at once: the block writes to a private temporary file beside it (made
    new, at a name no one can guess), which replaces ``path`` (fsynced, then renamed) only if the
    block ends without an error."""
    target = check_target(path)
    try:  # a new file at a name no one can guess (O_EXCL, 0600): in a folder shared with others
        # (/tmp), a file or a link of theirs at a name made of the process id was written into
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        temp = Path(name)
    except OSError as exc:
        raise FileRefused(f"cannot write in {target.parent}: {exc.strerror or exc}; nothing was written") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno in _WRITE_ERRORS:
            kept = f"{target} is as it was" if target.exists() else "nothing was written"
            raise FileRefused(f"cannot write {target}: {exc.strerror or exc}; {kept}") from None
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename durable (the folder's entry), where the system allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
