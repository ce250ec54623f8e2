"""The connection, transactions and migrations every part of the store shares.

A store is recognised before anything is written to it: its ``application_id`` (or, for a
store made before the id existed, its own migration table) says it is Mnemoscope's, and its
applied migrations say it is not from a newer Mnemoscope. Anything else is refused with one
line and left exactly as it was (no WAL switch, no table).

A new store is created private (the file 0600, folders made for it 0700), and only in a folder
no other user can change or put files in (not /tmp itself: SQLite opens the ``-wal`` and ``-shm``
files by name at each open, and anyone may put a link there first); SQLite gives its ``-wal`` and ``-shm`` files the permissions of the
store. A store that cannot be written (the file or its folder is read-only) opens read-only:
recall and browsing work, a write is refused with one line. So does a store another user could
change or read what is written into (:func:`engine.files.others_control`: the file is theirs,
others can write it, or they can change its folder or a folder above it, or put files in it; or a ``-wal``, ``-shm`` or
``-activity`` file beside it is theirs or a link): the line says why. SQLite's own failures reach the caller as :class:`StoreError` subclasses whose
text says what happened and what to do (a lock held by another process names that process's
activity; a damaged file points to ``mnemoscope check``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Sequence

APPLICATION_ID = 0x4D4E454D  # "MNEM", in the SQLite header: this file is a Mnemoscope store
HEADER_MAGIC = b"SQLite format 3\x00"
SQLITE_MAX_INT = 2**63 - 1

from ..errors import (NewerStore, NotAStore, NotText, OutOfRange, StoreBusy, StoreClosed, StoreDamaged, StoreDiskError,
                      StoreError, StoreReadOnly)
from ..files import Control, folder_control, make_private_folders, others_control
from .locks import write_lock_holder


Migration = tuple[str, str]  # (unique name, SQL script)


class _Connection(sqlite3.Connection):
    """A connection whose statements fail with :class:`StoreError` subclasses that explain
    themselves, instead of SQLite's bare codes ("database is locked")."""

    store: "StoreBase"

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return self._run(sql, parameters)
        except (sqlite3.DatabaseError, OverflowError, UnicodeEncodeError) as exc:
            raise self.store.explain(exc) from None

    def _run(self, sql: str, parameters: Any) -> sqlite3.Cursor:
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except (sqlite3.DatabaseError, OverflowError, UnicodeEncodeError) as exc:
            raise self.store.explain(exc) from None


class _SharedConnection(_Connection):
    """A connection that threads other than the writer's read through: each statement's cursor
    is counted while it lives, so that :meth:`StoreBase.close` lets the reads under way finish
    and refuses new ones, instead of closing the connection under them (a worker's recall then
    failed half-way with SQLite's "Cannot operate on a closed database")."""

    def _run(self, sql: str, parameters: Any) -> sqlite3.Cursor:
        try:
            cursor = self.cursor(_CountedCursor)
        except sqlite3.ProgrammingError:  # closed after this thread took it as its connection
            if self.store.closing:
                raise self.store._closed() from None
            raise
        return cursor.execute(sql, parameters)


class _CountedCursor(sqlite3.Cursor):
    """A statement on a shared connection, counted from its creation until a fetch reaches its
    end or it is collected: the connection stays open for it after close(), which closes it as
    the last one ends."""

    def __init__(self, conn: _Connection) -> None:
        super().__init__(conn)
        conn.store._begin_read()
        self._counted = True

    def fetchone(self) -> Any:
        row = super().fetchone()
        if row is None:
            self._finish()
        return row

    def fetchmany(self, size: int | None = None) -> list[Any]:
        wanted = self.arraysize if size is None else size
        rows = super().fetchmany(wanted)
        if len(rows) < wanted:
            self._finish()
        return rows

    def fetchall(self) -> list[Any]:
        rows = super().fetchall()
        self._finish()
        return rows

    def _finish(self) -> None:
        counted, self._counted = getattr(self, "_counted", False), False  # (unset when refused: never counted)
        if counted:
            self.connection.store._end_read()

    def __del__(self) -> None:
        self._finish()


class StoreBase:
    """One SQLite file in WAL mode, foreign keys on, every write inside ``transaction()``.

    Two connections serve the process. The writer is held, behind a re-entrant lock, by the one
    thread inside ``transaction()`` (or a dry run), and that thread reads through it too, its own
    uncommitted rows included. Every other thread reads through a second connection that cannot
    write: WAL readers never wait for the writer, so a recall in the app's worker is not held up
    by an ingest's or a catch-up's long transaction in another, and it sees only what was
    committed, never half a source. ``conn`` is the connection of the calling thread. Other
    processes may read while this one writes (WAL). A store in memory, or one opened read-only,
    has the one connection.
    """

    # Python functions the store's SQL calls, (name, number of arguments, function): every
    # connection has them. Each is deterministic, and called on what the store holds.
    SQL_FUNCTIONS: ClassVar[Sequence[tuple[str, int, Callable[..., object]]]] = ()

    def __init__(self, path: str | Path, migrations: Sequence[Migration], *, lock_timeout: float = 30.0,
                 read_only: bool = False, readable_without: frozenset[str] = frozenset()) -> None:
        """``readable_without``: migrations a read-only open may find missing (each adds only
        what a reader can do without); :attr:`missing` names those it did."""
        self.path = Path(path)
        self.readable_without = readable_without
        self.missing: frozenset[str] = frozenset()  # pending migrations a read-only open went on without
        self._lock = threading.RLock()  # the writer's: held by the thread inside a transaction or a dry run
        self._holder: int | None = None  # that thread's id (see conn)
        self._held = 0  # how deep it holds the lock
        self._snapshots = threading.local()  # a thread's own connection while it is inside reading()
        self._depth = 0
        self._activity: tuple[str, float] | None = None  # what this process is doing, and since when
        self.on_write: Callable[[], None] | None = None  # called as each write transaction begins (Memory syncs)
        self._reads = threading.Lock()  # guards the two below
        self.closing = False  # set by close(): new statements are refused
        self._open_reads = 0  # live cursors on the shared connections
        self.lock_timeout = lock_timeout
        self.upgraded: list[str] = []  # the migrations this open applied (``check --recount`` says what they added)
        in_memory = str(path) == ":memory:"
        self.untrusted = "" if in_memory else _prepare_file(self.path)  # why another user could change it, if they could
        # why no change is written, as a person reads it ("" when changes are written)
        self.why_read_only = ("it was opened read-only" if read_only else
                              self.untrusted or ("" if in_memory else _why_not_writable(self.path)))
        self.read_only = bool(self.why_read_only)
        if not (in_memory or self.read_only):
            recognised = self._recognise_read_only(migrations)  # a refused file is left unwritten, not even checkpointed
            _make_private(self.path)
        self.writer = self._connect(in_memory)
        self.reader = self.writer
        try:
            pending, marked = recognised if not (in_memory or self.read_only) else self._recognise(self.writer, migrations)
            if not self.read_only:
                self.writer.execute("PRAGMA journal_mode=WAL")
                self.writer.execute("PRAGMA synchronous=NORMAL")
            self.writer.execute("PRAGMA foreign_keys=ON")
            if not self.read_only and (pending or not marked):
                self._migrate(migrations)
            if not (in_memory or self.read_only):
                self.reader = self._query_only_connection()
        except BaseException:
            self.close()
            raise

    @property
    def conn(self) -> _Connection:
        """The calling thread's connection: the writer for the thread holding it, its snapshot's
        inside ``reading()``, else the reader."""
        if self._holder == threading.get_ident():
            return self.writer
        return getattr(self._snapshots, "conn", None) or self.reader

    @contextmanager
    def _holding_writer(self) -> Iterator[_Connection]:
        """The writer, for this thread alone until the block ends (re-entrant)."""
        with self._lock:
            if self.closing and not self._held:
                raise self._closed()
            self._holder = threading.get_ident()
            self._held += 1
            try:
                yield self.writer
            finally:
                self._held -= 1
                if not self._held:
                    self._holder = None

    def _connect(self, in_memory: bool) -> _Connection:
        """The writer; the store's one connection, shared by every thread, when it is in memory or
        read-only."""
        if in_memory:
            return self._connection(":memory:", uri=False, shared=True)
        uri = self._uri("ro" if self.read_only else "rw")
        conn = self._connection(uri, shared=self.read_only)
        if self.read_only:
            try:
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
            except StoreError:  # a WAL store in a read-only folder without its -shm file: read the file as it is
                conn.close()
                conn = self._connection(uri + "&immutable=1", shared=True)
        return conn

    def _why_read_only(self) -> str:
        """Why this store is read-only, as a refusal adds it ("" if it is not)."""
        if self.untrusted:
            return f" ({self.untrusted}: it is not written to)"
        return f" ({self.why_read_only})" if self.why_read_only else ""

    def _uri(self, mode: str) -> str:
        return f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode={mode}"

    def _connection(self, target: str, uri: bool = True, shared: bool = False) -> _Connection:
        """A connection to ``target``; ``shared``: one that threads read through (see
        :class:`_SharedConnection`)."""
        try:
            conn = sqlite3.connect(target, uri=uri, check_same_thread=False, isolation_level=None,
                                   timeout=self.lock_timeout, factory=_SharedConnection if shared else _Connection)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot open ({exc})") from None
        conn.store = self
        for name, n_args, function in self.SQL_FUNCTIONS:
            conn.create_function(name, n_args, function, deterministic=True)
        return conn

    # -- recognising a store ------------------------------------------------------------------

    def _recognise_read_only(self, migrations: Sequence[Migration]) -> tuple[list[Migration], bool]:
        """:meth:`_recognise` through a connection that cannot write: closing a read-write one
        would checkpoint another application's write-ahead log into its file, and opening one
        leaves -wal and -shm files beside it."""
        in_use = self.path.with_name(self.path.name + "-wal").exists()  # else the file holds it all: read it as it is,
        reader = self._connection(self._uri("ro") + ("" if in_use else "&immutable=1"))  # making no -wal or -shm
        try:
            return self._recognise(reader, migrations)
        finally:
            reader.close()

    def _recognise(self, conn: sqlite3.Connection, migrations: Sequence[Migration]) -> tuple[list[Migration], bool]:
        """(the migrations this store still needs, whether it carries our application id);
        refuses a file that is not ours or is newer, before anything is written to it."""
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            applied = ({r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
                       if "schema_migrations" in tables else set())
        except StoreDamaged as exc:
            if "not a database" in str(exc):
                raise NotAStore(f"{self.path}: not a Mnemoscope store (not an SQLite database); nothing was changed") from None
            raise
        known = [name for name, _ in migrations]
        ours = app_id == APPLICATION_ID or (app_id == 0 and known and known[0] in applied)
        if not ours and (app_id != 0 or tables):
            what = f"application_id {app_id:#x}" if app_id else f"tables {', '.join(sorted(tables)[:4])}{'…' if len(tables) > 4 else ''}"
            raise NotAStore(f"{self.path}: not a Mnemoscope store (an SQLite database of another application: {what});"
                            " nothing was changed")
        unknown = sorted(applied - set(known))
        if unknown:
            raise NewerStore(f"{self.path}: written by a newer Mnemoscope (schema change {unknown[0]!r} is unknown to"
                             " this one); upgrade Mnemoscope to open it; nothing was changed")
        pending = [(name, sql) for name, sql in migrations if name not in applied]
        if pending and self.read_only and applied and {name for name, _ in pending} <= self.readable_without:
            self.missing = frozenset(name for name, _ in pending)
        elif pending and self.read_only:
            raise StoreReadOnly(f"{self.path}: {'is not a store yet' if not applied else 'needs a schema upgrade'} and"
                                f" is read-only{self._why_read_only()}; open it once with write access")
        return pending, app_id == APPLICATION_ID

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write. A nested call joins the outer transaction as a savepoint: if it
        fails, its own writes are undone, so a caller that catches the failure (an area's
        optional rebuild inside an import, say) commits the rest without a half-done part."""
        with self._holding_writer():
            if self._depth:
                savepoint = f"nested_{self._depth}"
                self.conn.execute(f"SAVEPOINT {savepoint}")
                self._depth += 1
                try:
                    yield self.conn
                except BaseException:
                    if self.conn.in_transaction:  # (an I/O error may already have rolled it all back)
                        self.conn.execute(f"ROLLBACK TO {savepoint}")
                    raise
                finally:
                    self._depth -= 1
                    if self.conn.in_transaction:
                        self.conn.execute(f"RELEASE {savepoint}")
                return
            if self.read_only:
                raise StoreReadOnly(f"{self.path} is read-only{self._why_read_only()}: recall and browsing work, changes do not;"
                                    " nothing was changed")
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            self._announce()
            try:
                if self.on_write is not None:
                    self.on_write()
                yield self.conn
            except BaseException:
                self._depth = 0
                self._withdraw()
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self._depth = 0
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            finally:
                self._withdraw()

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for a read of many statements (an export, the index's load, the
        areas' save): what other threads and processes commit meanwhile is not seen half-way.
        Inside a transaction, that one. Elsewhere the snapshot is a connection of the thread's
        own, opened for it: a transaction on the shared reader would hold every other thread's
        reads in the same old snapshot, missing rows this process has since committed."""
        if self.reader is self.writer or self._holder == threading.get_ident():
            with self._holding_writer() as conn:
                if self._depth or conn.in_transaction:
                    yield conn
                    return
                with _snapshot_of(conn):
                    yield conn
            return
        if (held := getattr(self._snapshots, "conn", None)) is not None:  # nested: the same snapshot
            yield held
            return
        conn = self._query_only_connection()
        try:
            with _snapshot_of(conn):
                self._snapshots.conn = conn
                yield conn
        finally:
            self._snapshots.conn = None
            conn.close()

    def _query_only_connection(self) -> _Connection:
        """A connection to the file that cannot write (read-write mode: SQLite's ro needs a
        writable -shm anyway)."""
        conn = self._connection(self._uri("rw"), shared=True)
        try:
            conn.execute("PRAGMA query_only=ON")
        except StoreError:
            conn.close()
            raise
        return conn

    def _in(self, sql: str, ids: Sequence[int], extra: Sequence = ()) -> list[tuple]:
        """Run ``sql`` (with one ``{marks}`` placeholder for the id list) over ``ids`` in chunks
        SQLite accepts; ``extra`` parameters go before the ids."""
        ids, out = list(ids), []
        for start in range(0, len(ids), 900):
            chunk = ids[start:start + 900]
            out.extend(self.conn.execute(sql.format(marks=",".join("?" * len(chunk))), [*extra, *chunk]).fetchall())
        return out

    def query(self, sql: str, params: Sequence = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        """New statements are refused (:class:`StoreClosed`); the writer closes once a
        transaction under way has ended, and the reader once the reads under way on it have
        ended: at once when there are none (then the writer closes last and folds the write-ahead
        log into the file), else as the last of their cursors is read to its end or collected.
        So a read under way ends with its rows, and close() does not wait for a cursor that a
        live thread keeps half-read (in a frame its event loop or a stored traceback holds)."""
        with self._reads:
            self.closing = True
        with self._lock:  # a transaction under way ends first; none begins after this
            with self._reads:
                reading = self._open_reads > 0
            if not reading and self.reader is not self.writer:
                self.reader.close()
            if self.writer is not self.reader or not reading:
                self.writer.close()

    def _begin_read(self) -> None:
        """Count a statement on a shared connection (refused once closing)."""
        with self._reads:
            if self.closing:
                raise self._closed()
            self._open_reads += 1

    def _end_read(self) -> None:
        """The end of a counted statement; the last one after close() closes the reader."""
        with self._reads:
            self._open_reads -= 1
            last = self.closing and not self._open_reads
        if last:  # no transaction begins once closing: nothing else uses the connection now
            self.reader.close()

    def _closed(self) -> StoreClosed:
        return StoreClosed(f"{self.path}: the store was closed while this was asked of it; nothing was changed")

    # -- who holds the lock -------------------------------------------------------------------

    @property
    def activity_path(self) -> Path:
        """Beside the store while a write transaction is open: which process, doing what."""
        return self.path.with_name(self.path.name + "-activity")

    @contextmanager
    def activity(self, label: str) -> Iterator[None]:
        """Name what this process is doing (``ingesting``, ``importing``) for as long as the
        block runs: a process that waits too long for the lock says who holds it."""
        outer = self._activity
        self._activity = outer or (label, time.time())
        try:
            yield
        finally:
            self._activity = outer

    def _announce(self) -> None:
        if str(self.path) == ":memory:":
            return
        label, since = self._activity or ("writing", time.time())
        try:
            fd = os.open(self.activity_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w") as fh:
                json.dump({"pid": os.getpid(), "activity": label, "since": since}, fh)
        except OSError:
            pass  # only a courtesy to a process that may wait; never a reason to fail a write

    def _withdraw(self) -> None:
        try:
            os.unlink(self.activity_path)
        except OSError:
            pass

    def holder(self) -> str:
        """Who holds the write lock, as far as the activity file tells."""
        try:
            info = json.loads(self.activity_path.read_text(encoding="utf-8"))
            pid, label, since = int(info["pid"]), str(info["activity"]), float(info["since"])
            os.kill(pid, 0)  # still running?
        except (OSError, ValueError, KeyError, TypeError):
            other = write_lock_holder(self.path)  # the kernel knows who holds SQLite's lock on the -shm file
            named = f" ({other})" if other else ""
            return f"another program{named} holds its write lock (no Mnemoscope process says it is writing)"
        return f"Mnemoscope process {pid} has been {label} for {max(0, time.time() - since):.0f} s"

    # -- errors -------------------------------------------------------------------------------

    def explain(self, exc: BaseException) -> BaseException:
        """SQLite's failure as a :class:`StoreError` a person can act on (or ``exc`` itself
        when it is none of the kinds a person can act on, such as a constraint)."""
        if isinstance(exc, OverflowError):
            return OutOfRange(f"a number in this request is out of range (at most {SQLITE_MAX_INT})")
        if isinstance(exc, UnicodeEncodeError):
            where = f"U+{ord(exc.object[exc.start]):04X}"
            return NotText(f"a text in this request is not text: it holds an unpaired surrogate ({where}); a command"
                           " line's bytes that are not UTF-8 become one. Nothing was changed")
        if isinstance(exc, sqlite3.IntegrityError):
            return exc
        name = getattr(exc, "sqlite_errorname", "") or ""
        text = str(exc)
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
            return StoreBusy(f"{self.path} is busy: {self.holder()}; waited {self.lock_timeout:g} s. Let it finish"
                             " (or stop it) and run this again; nothing was changed")
        if name.startswith("SQLITE_READONLY") or "readonly" in text:
            return StoreReadOnly(f"{self.path} is read-only{self._why_read_only()}: recall and browsing work, changes do not;"
                                 " nothing was changed")
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text or "not a database" in text:
            return StoreDamaged(f"{self.path} is damaged ({text}): `mnemoscope --store {self.path} check` checks it,"
                                " and `check --salvage FILE` exports what can still be read")
        if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
            return StoreError(f"cannot open {self.path}: {text}")
        if name.startswith(("SQLITE_FULL", "SQLITE_IOERR")) or "disk" in text:
            return StoreDiskError(f"cannot write {self.path}: {text} (is the disk full?); this step changed nothing")
        return exc

    # -- migrations ---------------------------------------------------------------------------

    def _migrate(self, migrations: Sequence[Migration]) -> None:
        """Apply what is pending, as read again under the write lock: another process may have
        created or upgraded the store since this one looked (two processes opening a new store)."""
        with self.transaction() as conn:
            pending, _ = self._recognise(conn, migrations)
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
            for name, sql in pending:
                for statement in statements(sql):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations VALUES (?, julianday('now'))", (name,))
            self.upgraded = [name for name, _ in pending]
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {len(migrations)}")

    def data_version(self) -> int:
        """Changes whenever another process commits (the writer's PRAGMA data_version; the reader
        commits nothing). Where SQLite serialises each connection's calls itself (threadsafety
        3, as Python's own SQLite is built) it is read without the writer's lock: the counter
        means the same inside another thread's transaction, and a recall does not wait for a
        catch-up's. An SQLite built otherwise may not be used by two threads at once: then the
        lock is taken."""
        if sqlite3.threadsafety == 3:
            if self.closing:
                raise self._closed()
            return self.writer.execute("PRAGMA data_version").fetchone()[0]
        with self._holding_writer() as writer:
            return writer.execute("PRAGMA data_version").fetchone()[0]

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def applied_migrations(self) -> list[str]:
        """The names of the migrations applied to this store, in the order they were applied (a
        file saved beside the store is stamped with how many there were: engine/index_file.py)."""
        return [row[0] for row in self.conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]

    def integrity_ok(self) -> bool:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file, so that a copy of the file alone is the whole store."""
        with self._holding_writer() as writer:
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextmanager
def _snapshot_of(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction on ``conn`` for the block."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


# -- the file ---------------------------------------------------------------------------------


def _prepare_file(path: Path) -> str:
    """Check the store's path, and create the file (0600, its new folders 0700) if missing.
    Refuses a path under a file, anything but a regular file, and a new store in a folder another
    user can change. Returns why another user could change the store (see the module's
    docstring), or "" when no one can."""
    folder = next(f for f in (path.parent, *path.parent.parents) if f.exists())
    if not folder.is_dir():
        raise StoreError(f"cannot create the store {path}: {folder} is a file, not a folder")
    if not os.path.lexists(path):
        # a folder this call makes (0700) is the store's own: then only who can change the folder it goes in counts
        _refuse_new(path, folder_control(folder, names=folder == path.parent))
    try:
        # another user may have made one of them first
        make_private_folders(path.parent, made=lambda new: _refuse_new(path, folder_control(new, names=True)))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        try:
            info = os.stat(path)
        except OSError as exc:
            raise StoreError(f"cannot open the store {path}: {exc.strerror or exc} (a broken link?)") from None
        if stat.S_ISDIR(info.st_mode):
            raise NotAStore(f"{path} is a folder, not a store file") from None
        if not stat.S_ISREG(info.st_mode):
            raise NotAStore(f"{path} is not a regular file (a FIFO, a socket or a device), not a store") from None
        return untrusted(path, info)
    except OSError as exc:
        raise StoreError(f"cannot create the store {path}: {exc.strerror or exc}") from None
    os.close(fd)
    return ""


def _make_private(path: Path) -> None:
    """Make a store others may read 0600 before it is written to, with the ``-wal`` and ``-shm``
    beside it: an older Mnemoscope's, or one copied with cp under umask 022, is 0644, and SQLite
    makes those two with the store's own mode, so what was written next was readable by others.
    Only files of this user's are changed (another's makes the store read-only); where a file
    system refuses, ``mnemoscope check`` still flags the store."""
    real = Path(os.path.realpath(path))  # SQLite puts -wal and -shm beside the file a link names
    for name in (real, *(real.with_name(real.name + suffix) for suffix in ("-wal", "-shm"))):
        try:
            info = os.lstat(name)
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
                os.chmod(name, stat.S_IMODE(info.st_mode) & 0o700)
        except OSError:
            continue


def untrusted(path: Path, info: os.stat_result) -> str:
    """Why another user could change the store at ``path`` (``info``: its ``os.stat``) or read what
    is written into it, or "" when no one can (see the module's docstring). The one rule: the
    store's open (read-only when it is not "") and ``mnemoscope check`` (a problem) both ask it."""
    control = others_control(path, info, names=True)
    if control:
        return control.reason
    return next(filter(None, map(_planted_beside, dict.fromkeys([path, Path(os.path.realpath(path))]))), "")


def _refuse_new(path: Path, control: Control | None) -> None:
    """Refuse to create the store at ``path`` when another user could change its folder
    (``control``), or has put a file at a name beside it."""
    why = control.reason if control else _planted_beside(path) if path.parent.exists() else ""
    if why:
        raise StoreError(f"cannot create the store {path}: {why}; nothing was created. Choose a folder of your own"
                         " (mkdir -m 700 FOLDER; a file system without Unix permissions, such as FAT, SMB or WSL's"
                         " /mnt/c, shows every folder as everyone's)")


def _planted_beside(path: Path) -> str:
    """Why a file SQLite or this store opens by name beside ``path`` (``-wal``, ``-shm``,
    ``-activity``) is another user's to change: a link, or a file of theirs (left from a time the
    folder was open to them). "" when none is."""
    for suffix in ("-wal", "-shm", "-activity"):
        beside = path.with_name(path.name + suffix)
        try:
            info = os.lstat(beside)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            return f"{beside.name} beside it is a link"
        control = others_control(beside, info)
        if control and control.by != "folder":
            return f"{beside.name} beside it: {control.reason}"
    return ""


def _why_not_writable(path: Path) -> str:
    """Why a write would fail, or "" if it may succeed: the file must be writable, and its
    folder too (SQLite makes the ``-wal`` and ``-shm`` files there) unless both exist writable."""
    if not os.access(path, os.W_OK):
        return "you may not write to the file"
    if os.access(path.parent, os.W_OK | os.X_OK):
        return ""
    if all(os.access(path.with_name(path.name + suffix), os.W_OK) for suffix in ("-wal", "-shm")):
        return ""
    return "you may not write to its folder, where SQLite keeps the -wal and -shm files"


def statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit on its own)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
