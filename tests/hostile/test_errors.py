"""Issue 11 item 9, the classes that need a real process or a real damaged file: a lock held
too long, a read-only store, a full disk, a corrupt page (and `mnemoscope check`), and numbers
beyond what SQLite holds. Each is one line, exit 2, and the store as it was."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.errors import OutOfRange

from .conftest import ROOT, cli, damage, run_python, store_checksum

CHAT = "\n".join(f"{'Ann' if i % 2 else 'Ben'}: turn {i} about the harbour lanterns and the ferry {i}." for i in range(60))


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("errors")
    (folder / "chat.txt").write_text(CHAT)
    with Memory(folder / "m.db") as mem:
        mem.ingest(folder / "chat.txt")
    return folder / "m.db"


def copy_of(store: Path, folder: Path) -> Path:
    shutil.copy(store, folder / "m.db")
    return folder / "m.db"


HOLD = """
import sys, time
from mnemoscope.engine import Memory
mem = Memory(sys.argv[1], extensions=False)
with mem.store.activity("importing"), mem.store.transaction():
    print("holding", flush=True)
    time.sleep(60)
"""


def test_a_lock_held_too_long_names_the_holder_and_what_to_do(store, tmp_path, monkeypatch):
    path = copy_of(store, tmp_path)
    (tmp_path / "new.txt").write_text("Cy: a new line about the harbour.\nDi: and another.")
    before = store_checksum(path)
    monkeypatch.setenv("MNEMOSCOPE_LOCK_TIMEOUT", "0.3")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        code, out, err = cli("--store", path, "ingest", tmp_path / "new.txt")
    finally:
        holder.kill()
        holder.wait()
    assert code == 2 and err.count("\n") == 1, err
    assert f"is busy: Mnemoscope process {holder.pid} has been importing for" in err
    assert "waited 0.3 s. Let it finish (or stop it) and run this again; nothing was changed" in err
    with sqlite3.connect(path, isolation_level=None) as other:
        other.execute("BEGIN IMMEDIATE")  # another program (the sqlite3 shell, say) holds it
        code, _, err = cli("--store", path, "ingest", tmp_path / "new.txt")
        other.execute("ROLLBACK")
    assert code == 2 and "another program holds its write lock" in err
    shell = subprocess.Popen([sys.executable, "-c", SQLITE_SHELL, str(path)], stdout=subprocess.PIPE, text=True)
    try:  # another program, in another process: the kernel names it (its lock on the -shm file)
        assert shell.stdout.readline().strip() == "holding"
        code, _, err = cli("--store", path, "ingest", tmp_path / "new.txt")
    finally:
        shell.kill()
        shell.wait()
    assert code == 2 and f"another program (pid {shell.pid}: {Path(sys.executable).name} -c import sqlite3" in err and err.count("\n") == 1
    assert store_checksum(path) == before


SQLITE_SHELL = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("holding", flush=True)
time.sleep(60)
"""


READ_ONLY = """
import contextlib, io, json, os, sys
from mnemoscope.app.cli import main
scratch, folder, store = sys.argv[1:]
main(["--store", scratch, "ingest", folder])  # every lazy import, before the privileges go
main(["--store", scratch, "recall", "harbour lanterns"])
if os.geteuid() == 0:  # root writes anything: become a user who may only read
    os.setgid(65534)
    os.setuid(65534)
runs = []
for argv in (["stats"], ["recall", "harbour lanterns", "--json"], ["ingest", folder]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--store", store, *argv], out=out)
    runs.append([code, out.getvalue(), err.getvalue()])
    os.environ["XDG_CONFIG_HOME"] = os.path.dirname(store)  # the first run: a config folder it may not enter
print(json.dumps(runs))
"""


def test_a_read_only_store_answers_recall_and_refuses_changes_in_one_line(store, tmp_path):
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # outside pytest's private folders, so another user can read
    try:
        os.chmod(folder, 0o755)
        path = copy_of(store, folder)
        os.chmod(path, 0o444)
        (folder / "new.txt").write_text("Cy: a new line about the harbour.\nDi: and another.")
        os.chmod(folder / "new.txt", 0o644)
        before = store_checksum(path)
        run = run_python(READ_ONLY, tmp_path / "scratch.db", folder / "new.txt", path)
        assert run.returncode == 0, run.stderr
        (unconfigured, _, config), (code, out, err), (refused, _, why) = json.loads(run.stdout.splitlines()[-1])
        assert unconfigured == 2 and config.count("\n") == 1 and "config.toml: not a readable TOML config file" in config
        assert code == 0 and '"hits": [{' in out.splitlines()[-1], err
        assert refused == 2 and why.count("\n") == 1
        assert ("is read-only (you may not write to the file): recall and browsing work, changes do not; nothing was "
                "changed") in why
        assert store_checksum(path) == before
    finally:
        shutil.rmtree(folder)


def test_a_full_disk_during_a_write_changes_nothing(store, tmp_path):
    path = copy_of(store, tmp_path)
    before = store_checksum(path)
    (tmp_path / "big.md").write_text("# Big\n" + "\n\n".join(f"Paragraph {n}: " + "harbour lantern ferry " * 200
                                                            for n in range(80)))
    full = run_python("""
import resource, signal, sys
from mnemoscope.app.cli import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(main(["--store", sys.argv[1], "ingest", sys.argv[2]]))
""", path, tmp_path / "big.md", path.stat().st_size + 64 * 1024)
    assert full.returncode == 2 and full.stderr.count("\n") == 1, full.stderr
    assert f"cannot write {path}" in full.stderr and "(is the disk full?); this step changed nothing" in full.stderr
    assert store_checksum(path) == before


def test_a_corrupt_page_is_named_checked_and_salvaged(store, tmp_path):
    path = copy_of(store, tmp_path)
    damage(path, b"turn 31 about the harbour")
    for argv in (["recall", "harbour"], ["stats"], ["ingest", tmp_path], ["export", tmp_path / "e.jsonl"]):
        code, out, err = cli("--store", path, *argv)
        assert code == 2 and err.count("\n") == 1 and f"{path} is damaged" in err, (argv, err)
        assert f"`mnemoscope --store {path} check` checks it, and `check --salvage FILE` exports" in err
    code, out, _ = cli("--store", path, "check")
    assert code == 1 and "problem:" in out and "check --salvage FILE" in out
    code, out, _ = cli("--store", path, "check", "--salvage", tmp_path / "rescue.jsonl")
    assert code == 0 and out.startswith("salvaged 1 source(s) and ") and "lost: items" in out
    saved = int(out.split(" and ")[1].split()[0])
    assert 0 < saved < 60
    code, out, _ = cli("--store", tmp_path / "new.db", "import", tmp_path / "rescue.jsonl")
    assert code == 0 and f"{saved} item(s) indexed" in out
    code, out, _ = cli("--store", tmp_path / "new.db", "check")
    assert code == 0 and out.splitlines()[0] == f"{tmp_path / 'new.db'}: ok"


def test_a_write_the_store_refuses_by_one_of_its_rules_is_not_called_a_failed_store(store, tmp_path):
    """A constraint that refuses a write (here a trigger someone added to the store) was told as
    "the store failed (…); `mnemoscope check` checks it", which check then finds ok (fails before):
    the write was undone, nothing is damaged, and the line says so."""
    path = copy_of(store, tmp_path)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TRIGGER closed BEFORE INSERT ON items BEGIN SELECT RAISE(ABORT, 'items are closed'); END")
    before = store_checksum(path)
    (tmp_path / "more.md").write_text("# Kettle\n\nThe blue kettle whistles at dawn.\n")
    code, out, err = cli("--store", path, "ingest", tmp_path / "more.md")
    assert (code, out) == (2, "") and err == (
        "mnemoscope: error: the store refused a write that breaks one of its rules (items are closed); that write was"
        " undone. If `mnemoscope check` finds the store sound, this is a bug in Mnemoscope\n"), err
    assert store_checksum(path) == before


def test_numbers_beyond_what_the_store_holds_are_one_clear_refusal(store, tmp_path):
    path = copy_of(store, tmp_path)
    before = store_checksum(path)
    with Memory(path) as mem:
        for call in (lambda: mem.item(2**63), lambda: mem.delete_item(2**70), lambda: mem.knowledge.entity(-2**64),
                     lambda: mem.knowledge.rename_entity(2**63, "Zed")):
            with pytest.raises(OutOfRange, match="out of range"):
                call()
    for argv in (["delete", str(2**63)], ["fact", "delete", str(2**64)], ["entity", "merge", "1", str(2**63)], ["recall", "x", "--top-k", "1" * 30]):
        code, _, err = cli("--store", path, *argv)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
    assert store_checksum(path) == before


def test_a_text_that_is_not_text_is_one_clear_refusal(store, tmp_path):
    """Bytes of a command line that are not UTF-8 become a lone surrogate, which SQLite cannot
    store: a fact, a rename or a note holding one was a UnicodeEncodeError traceback (the
    transaction rolled back). Every statement's text is checked where the store runs it."""
    path = copy_of(store, tmp_path)
    before = store_checksum(path)
    for argv in (["fact", "add", "Maya\udcff", "adopted", "cat", "--item", "1"], ["entity", "rename", "1", "Zed\udcff"]):
        code, _, err = cli("--store", path, *argv)
        assert code == 2 and err.count("\n") == 1 and "unpaired surrogate (U+DCFF)" in err, (argv, err)
    assert store_checksum(path) == before


def test_recall_stores_no_query_text(store, tmp_path):
    path = copy_of(store, tmp_path)
    before = store_checksum(path)
    secret = "zebra-passphrase harbour"
    for strategy in ("fused", "hybrid", "bm25", "ppr", "walk"):
        code, out, _ = cli("--store", path, "recall", secret, "--strategy", strategy, "--json")
        assert code == 0 and "feedback token" not in out
    assert store_checksum(path) == before
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert b"zebra-passphrase" not in path.read_bytes()


@pytest.mark.parametrize("argv", [["--store", "", "ingest", "{doc}"], ["mcp", "--store", " ", "--http", "70000"]],
                         ids=["--store", "mcp --store"])
def test_an_empty_store_path_is_refused_not_taken_for_the_default_store(tmp_path, monkeypatch, argv):
    """`--store "$STORE"` with the variable unset: the person named a store and it is empty; the
    default store (their own memory) must not receive what was meant for another."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("MNEMOSCOPE_STORE", raising=False)
    doc = tmp_path / "secret.md"
    doc.write_text("# Secret\nMeant for another store.")
    code, out, err = cli(*(a.format(doc=doc) for a in argv))
    assert code == 2 and err.count("\n") == 1 and "--store is empty" in err, err
    assert not (tmp_path / "data").exists()
