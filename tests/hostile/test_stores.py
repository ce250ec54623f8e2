"""Issue 11 item 8 and the store classes of item 9: only our own stores are opened, and a store
that cannot be used is refused with one line and left exactly as it was."""

from __future__ import annotations

import os
import sqlite3

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.store import NewerStore, NotAStore, StoreError
from mnemoscope.engine.store.base import APPLICATION_ID

from .conftest import cli, file_digest


def one_line_refusal(store, *argv) -> str:
    code, out, err = cli("--store", store, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err


def foreign(path):
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('theirs')")
    return path


def test_another_applications_database_is_refused_and_untouched(tmp_path):
    path = foreign(tmp_path / "other.sqlite")
    before = file_digest(path)
    with pytest.raises(NotAStore, match="another application: tables notes"):
        Memory(path)
    assert "not a Mnemoscope store" in one_line_refusal(path, "stats")
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA application_id = 1234")
    before = file_digest(path)
    assert "application_id 0x4d2" in one_line_refusal(path, "ingest", tmp_path)
    assert file_digest(path) == before  # no table, no WAL, no header change


def test_a_store_of_a_newer_mnemoscope_is_refused_and_untouched(tmp_path):
    path = tmp_path / "m.db"
    Memory(path, extensions=False).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('records-99', 0)")
    before = file_digest(path)
    with pytest.raises(NewerStore, match="'records-99' is unknown"):
        Memory(path)
    assert "upgrade Mnemoscope" in one_line_refusal(path, "recall", "anything")
    assert file_digest(path) == before


def test_a_store_is_marked_and_one_from_before_the_mark_is_recognised(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path, extensions=False) as mem:
        mem.add_note("kept across the upgrade")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        conn.execute("PRAGMA application_id = 0")  # as stores were written before the mark
    with Memory(path, extensions=False) as mem:
        assert mem.counts().items == 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(b"not sqlite at all" * 64), "not an SQLite database"),
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: os.mkfifo(p), "not a regular file"),
])
def test_a_path_that_is_no_store_file_is_refused(tmp_path, make, message):
    path = tmp_path / "store.db"
    make(path)
    with pytest.raises(StoreError, match=message):
        Memory(path)
    assert message in one_line_refusal(path, "stats")


def test_a_store_path_under_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("a file")
    (tmp_path / "nothing").mkdir()
    err = one_line_refusal(tmp_path / "file" / "sub" / "m.db", "ingest", tmp_path / "nothing")
    assert f"{tmp_path / 'file'} is a file, not a folder" in err
    assert (tmp_path / "file").read_text() == "a file"


@pytest.mark.parametrize("key", ["dense.lsa_model", "dense.word_model"])
def test_a_damaged_stored_model_is_fitted_again_not_fatal(demo_copy, key):
    """The latent and word models are derived from the items: a damaged blob (a hand edit, a torn
    copy) must not make the store unopenable; recall still answers, and opening writes nothing."""
    conn = sqlite3.connect(demo_copy)
    with conn:
        assert conn.execute("UPDATE kv SET value = ? WHERE key = ?", (b"PK\x03\x04 not a model", key)).rowcount == 1
    conn.close()
    before = file_digest(demo_copy)
    with Memory(demo_copy) as mem:
        hits = mem.recall("how hot is the oven for the loaf", strategy="hybrid").hits
    assert hits and "oven" in " ".join(h.item.text.lower() for h in hits[:5])
    assert file_digest(demo_copy) == before


@pytest.mark.parametrize("named", ["missing.md", "missing-folder"])
def test_an_ingest_of_a_path_that_is_not_there_makes_no_store(tmp_path, named):
    """A mistyped file onto a new --store: the store (and its folder) was made first, then the
    file refused; now the path is refused before any store is opened, and nothing is left."""
    code, _, err = cli("--store", tmp_path / "new" / "s.db", "ingest", tmp_path / named)
    assert code == 2 and err.count("\n") == 1 and "no such file or directory" in err and "Traceback" not in err, err
    assert not (tmp_path / "new").exists()
