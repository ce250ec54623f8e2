"""`mnemoscope check` names why a store opens read-only when another user could change it (the
store's open says so only when a change is refused)."""

from __future__ import annotations

import os

import pytest

from mnemoscope.engine import Memory

from .conftest import cli


def test_check_names_a_folder_others_can_change(tmp_path):
    """A store in a folder others can write opens read-only: check says so, and why (fails
    before: "ok", exit 0)."""
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o700)
    path = folder / "m.db"
    with Memory(path, extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    code, out, _err = cli("--store", path, "check")
    assert code == 0 and f"{path}: ok" in out, out
    os.chmod(folder, 0o777)
    code, out, _err = cli("--store", path, "check")
    assert code == 1 and f"{path}: 1 problem(s)" in out, out
    assert "problem: another user could change it: others can change its folder" in out and "opens read-only" in out, out


def test_check_names_a_file_planted_beside_a_store(tmp_path):
    """A -wal or -shm file of another user's, or a link, beside a store makes its open read-only;
    check said "ok" (fails before: exit 0), as the two asked different questions."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o700)
    path = folder / "m.db"
    with Memory(path, extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    planted = folder / "m.db-wal"
    planted.write_bytes(b"")
    os.chown(planted, 65534, 65534)
    code, out, _err = cli("--store", path, "check")
    assert code == 1 and "problem: another user could change it: m.db-wal beside it: it belongs to another user" in out, out
    planted.unlink()
    (folder / "m.db-shm").unlink(missing_ok=True)  # (the check's own read may have made one)
    (folder / "m.db-shm").symlink_to(tmp_path / "elsewhere")
    code, out, _err = cli("--store", path, "check")
    assert code == 1 and "problem: another user could change it: m.db-shm beside it is a link" in out, out


def test_check_names_a_trigger_mnemoscope_did_not_make(tmp_path):
    """A store handed over may hold a trigger someone added, which refuses or rewrites every write
    (here each new item's text): check said "ok" (fails before). It names the trigger; the
    store's own triggers, made by its schema changes, are not named."""
    import sqlite3
    from contextlib import closing

    path = tmp_path / "m.db"
    with Memory(path, extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TRIGGER rewrite AFTER INSERT ON items BEGIN UPDATE items SET text = 'pwned' WHERE id = new.id; END")
    code, out, _err = cli("--store", path, "check")
    assert code == 1 and f"{path}: 1 problem(s)" in out, out
    assert "problem: holds trigger(s) Mnemoscope did not make (rewrite): a trigger runs with every write" in out, out
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DROP TRIGGER rewrite")
    assert cli("--store", path, "check")[0] == 0
