"""Shared helpers of the hostile suite (issue 11): hostile files, stores and arguments, each
refused with one line, exit 2 and an unchanged store, and nothing read or contacted that the
person did not name."""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from mnemoscope.app.cli import main
from tests.support.stores import store_checksum

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "cli", "damage", "edited_export", "run_python", "store_checksum", "file_digest"]


def cli(*argv: str | Path) -> tuple[int, str, str]:
    """The CLI in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv], out=out)
    return code, out.getvalue(), err.getvalue()


def run_python(code: str, *args: str | Path, env: dict[str, str] | None = None, timeout: float = 60,
               user: int | None = None) -> subprocess.CompletedProcess:
    """``python -c code args…`` in a real process from the repository's root (as ``user``, a
    uid, when given: root passes every permission check, another user does not)."""
    def drop() -> None:
        os.setgid(user)
        os.setuid(user)

    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, preexec_fn=drop if user is not None else None)


def file_digest(path: Path) -> bytes:
    """The bytes of a file (and whether a WAL or SHM file appeared beside it)."""
    extra = [path.with_name(path.name + s).exists() for s in ("-wal", "-shm")]
    return path.read_bytes() + repr(extra).encode()


def damage(store: Path, needle: bytes) -> None:
    """Overwrite the header of the page holding ``needle`` (a corrupt page, as a failing disk
    leaves one); the store is checkpointed first so that the page is in the main file."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(store)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(store.read_bytes())
    start = data.index(needle) // page_size * page_size
    data[start:start + 100] = b"\xff" * 100
    store.write_bytes(bytes(data))


@contextmanager
def listening(answer: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """A listener on 127.0.0.1 that records what each connection sends first (an HTTP request's
    head, or a TLS hello) and answers ``answer``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    heads: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed at the test's end
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head and not head.startswith(b"\x16") and (chunk := conn.recv(4096)):
                    head += chunk
                heads.append(head)
                conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1], heads
    listener.close()


def edited_export(tmp_path: Path, edit: Callable[[str], str]) -> tuple[Path, int, Path]:
    """An export of a store holding one note whose item's line ``edit`` rewrote, with a trailer
    that matches (as if the export had been written so): (the export, the item's line number, an
    empty store to import it into)."""
    from mnemoscope.engine import Memory
    from mnemoscope.engine.transfer import _trailer

    store = tmp_path / "edited-source.db"
    with Memory(store, extensions=False) as mem:
        mem.add_note("a short note")
    export = tmp_path / "all.jsonl"
    assert cli("--store", store, "export", export)[0] == 0
    lines = [line + "\n" for line in export.read_text().splitlines()[:-1]]
    items = [n for n, line in enumerate(lines) if json.loads(line)["type"] == "item"]
    assert len(items) == 1
    lines[items[0]] = edit(lines[items[0]])
    trailer = _trailer(len(lines), 1, 1, hashlib.sha256("".join(lines).encode()).hexdigest())
    export.write_text("".join(lines) + json.dumps(trailer) + "\n")
    target = tmp_path / "target.db"
    Memory(target, extensions=False).close()
    return export, items[0] + 1, target
