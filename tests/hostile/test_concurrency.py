"""Issue 11 item 7 (the store side): two processes writing at once never lose an update and never
die of a constraint. Each test holds the store's write lock while two real processes make their
checks, then lets them race: the check and the write must be one transaction."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from mnemoscope.engine import Memory
from mnemoscope.engine.records import Counts
from tests.support.processes import store_held

from .conftest import ROOT, store_checksum

INGEST = """
import sys
from mnemoscope.engine import Memory
mem = Memory(sys.argv[1])
parsed = mem.parse([sys.argv[2]]).parsed
print("ready", flush=True)
print(mem.ingest_parsed(parsed).summary())
"""

DELETE = """
import sys
from mnemoscope.engine import Memory
from mnemoscope.engine.errors import MnemoscopeError
mem = Memory(sys.argv[1])
mem.knowledge.entities()
print("ready", flush=True)
what, n, *dry = sys.argv[2:]
try:
    print(getattr(mem, "delete_" + what)(int(n), dry_run=bool(dry)))
except MnemoscopeError as exc:
    print("refused:", exc)
"""

CURATE = """
import sys
from mnemoscope.app.cli import main
from mnemoscope.engine import Memory
mem = Memory(sys.argv[1])
mem.knowledge.entities()
print("ready", flush=True)
action, a, b = sys.argv[2:]
try:
    if action == "merge":
        print(mem.knowledge.merge_entities(int(a), int(b)).to_dict())
    else:
        print(mem.knowledge.rename_entity(int(a), b).to_dict())
except ValueError as exc:
    print("refused:", exc)
"""


@contextmanager
def write_lock(store: Path):
    """Hold the store's write lock (as another process mid-transaction would)."""
    conn = sqlite3.connect(store, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def race(store: Path, script: str, *runs: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """Start one process per ``runs`` entry, let each reach its write while the lock is held,
    release it, and return (exit code, stdout, stderr) of each."""
    with write_lock(store):
        procs = [subprocess.Popen([sys.executable, "-c", script, str(store), *args], cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for args in runs]
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(0.5)  # each has checked and now waits for the lock
    return [(proc.wait(timeout=60), proc.stdout.read(), proc.stderr.read()) for proc in procs]


def transcript(path: Path, names: tuple[str, str], n: int = 120) -> Path:
    path.write_text("\n".join(f"{names[i % 2]}: turn {i} about the harbour and the {i % 7} lanterns of {names[0]}."
                              for i in range(n)), encoding="utf-8")
    return path


def healthy(store: Path) -> None:
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_two_processes_ingesting_one_file_store_it_once(tmp_path):
    store, chat = tmp_path / "m.db", transcript(tmp_path / "chat.txt", ("Maya", "Dan"))
    Memory(store).close()
    results = race(store, INGEST, (str(chat),), (str(chat),))
    assert [code for code, _, _ in results] == [0, 0], results
    assert sorted(out.split(": ")[1].split(";")[0] for _, out, _ in results) == [
        "0 added, 0 replaced, 1 unchanged", "1 added, 0 replaced, 0 unchanged"]
    with Memory(store, extensions=False) as mem:
        assert mem.counts() == Counts(sources=1, items=120)
    healthy(store)


def test_two_processes_ingesting_files_that_share_names_both_land(tmp_path):
    store = tmp_path / "m.db"
    first, second = transcript(tmp_path / "a.txt", ("Maya", "Dan")), transcript(tmp_path / "b.txt", ("Dan", "Maya"))
    Memory(store).close()
    results = race(store, INGEST, (str(first),), (str(second),))
    assert [code for code, _, _ in results] == [0, 0], results
    with Memory(store) as mem:
        assert mem.counts().items == 240
        assert sorted(e.name for e in mem.knowledge.entities(kind="speaker")) == ["Dan", "Maya"]
    healthy(store)


def entities(store: Path, chat: Path) -> tuple[int, int]:
    with Memory(store) as mem:
        mem.ingest(chat)
        ids = {e.name: e.id for e in mem.knowledge.entities(kind="speaker")}
    return ids["Maya"], ids["Dan"]


def test_crossed_merges_make_one_merge_and_one_clear_refusal(tmp_path):
    store = tmp_path / "m.db"
    maya, dan = entities(store, transcript(tmp_path / "chat.txt", ("Maya", "Dan")))
    results = race(store, CURATE, ("merge", str(maya), str(dan)), ("merge", str(dan), str(maya)))
    assert [code for code, _, _ in results] == [0, 0] and all(err == "" for _, _, err in results), results
    outs = sorted(out.strip() for _, out, _ in results)  # "refused…" sorts before "{…"
    assert outs[0].startswith("refused: no entity with id") and "'entities_merged': 1" in outs[1]
    healthy(store)


def test_crossed_renames_to_one_name_make_one_rename_and_one_clear_refusal(tmp_path):
    store = tmp_path / "m.db"
    maya, dan = entities(store, transcript(tmp_path / "chat.txt", ("Maya", "Dan")))
    results = race(store, CURATE, ("rename", str(maya), "Zed"), ("rename", str(dan), "Zed"))
    outs = sorted(out.strip() for _, out, _ in results)  # "refused…" sorts before "{…"
    assert [code for code, _, _ in results] == [0, 0] and "'entities_renamed': 1" in outs[1], results
    assert outs[0].startswith("refused: entity") and "'Zed' is already entity" in outs[0]
    healthy(store)


def test_crossed_deletes_of_one_source_or_item_make_one_deletion_and_one_clear_refusal(tmp_path):
    store = tmp_path / "m.db"
    with Memory(store) as mem:
        mem.ingest([transcript(tmp_path / "a.txt", ("Maya", "Dan"), 40), transcript(tmp_path / "b.txt", ("Ann", "Bo"), 40)])
        first, second = mem.sources()
        item = mem.source_items(second.id)[3].id
    runs = [("source", str(first.id))] * 2 + [("item", str(item))] * 2
    results = race(store, DELETE, *runs)
    assert [code for code, _, _ in results] == [0] * 4 and all(err == "" for _, _, err in results), results
    sources, items = (sorted(out.strip() for _, out, _ in results[n:n + 2]) for n in (0, 2))
    assert sources[0] == f"refused: no source with id {first.id}" and sources[1].startswith("{'sources': 1, 'items': 40")
    assert items[0] == f"refused: no item with id {item}" and items[1].startswith("{'items': 1")
    with Memory(store, extensions=False) as mem:
        assert mem.counts() == Counts(sources=1, items=39)
        deletions = [e.action for e in mem.activity.recent() if "deleted" in e.action]
    assert sorted(deletions) == ["item.deleted", "source.deleted"]
    healthy(store)


def test_a_dry_run_delete_waits_for_a_writer_that_commits_meanwhile_and_reports(tmp_path):
    """A dry run takes the write lock as a real delete does: its snapshot is read after the other
    process's commit, so it waits and reports, instead of failing at once as "busy"."""
    store = tmp_path / "m.db"
    with Memory(store) as mem:
        mem.add_note("Ann adopted a beagle called Biscuit. The harbour opens at dawn.", name="seed")
        item = mem.source_items(mem.sources()[0].id)[0].id
        assert mem.delete_item(item, dry_run=True)["facts_deleted"] == 2  # the dry run has facts to (pretend to) delete
    before = store_checksum(store)
    conn = sqlite3.connect(store, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")  # another process, mid-write
    proc = subprocess.Popen([sys.executable, "-c", DELETE, str(store), "item", str(item), "dry"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    time.sleep(0.5)  # the dry run has read and now waits for the lock
    conn.execute("UPDATE sources SET name = name")  # the other process's write, committed while the dry run waits
    conn.execute("COMMIT")
    conn.close()
    code, out, err = proc.wait(timeout=60), proc.stdout.read(), proc.stderr.read()
    assert (code, err) == (0, ""), err
    assert out.startswith("{'items': 1") and "'facts_deleted': 2" in out, out
    assert store_checksum(store) == before
    healthy(store)


def test_an_llm_reply_for_items_deleted_meanwhile_is_dropped_not_a_crash(tmp_path, openai_server):
    from tests.knowledge.conftest import CONVERSATION
    from tests.knowledge.test_llm import good_reply

    store, chat = tmp_path / "m.db", tmp_path / "chat.json"
    chat.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    mem = Memory(store, llm_base_url=openai_server.base_url, llm_model="m", request_timeout=5.0, max_retries=0)
    mem.ingest(chat)
    deleted = []

    def reply(body):  # while the LLM answers, another connection (as another process would) deletes the source
        if not deleted:
            with Memory(store) as other:
                deleted.append(other.delete_source(other.sources()[0].id))
        return good_reply(body)

    openai_server.on_chat = reply
    try:
        assert mem.knowledge.process_queue() == {"items": 7, "done": 0, "failed": 0, "requests": 1}
        assert mem.counts().items == 0 and mem.knowledge.facts() == [] and mem.knowledge.queue_status() == {}
    finally:
        mem.close()
    healthy(store)



OPEN = """
import sys
from mnemoscope.engine import Memory
print("ready", flush=True)
Memory(sys.argv[1], extensions=False).close()
print("opened")
"""


def test_processes_creating_one_new_store_at_once_all_open_it(tmp_path):
    store = tmp_path / "new.db"
    with sqlite3.connect(store) as conn:  # an empty database, as the first process leaves it before its first commit
        conn.execute("PRAGMA journal_mode=WAL")
    store.chmod(0o600)
    results = race(store, OPEN, (), (), ())  # each sees an empty store, then waits for the lock to create it
    assert [(code, out.strip(), err) for code, out, err in results] == [(0, "opened", "")] * 3, results
    healthy(store)
    with Memory(store, extensions=False) as mem:
        assert mem.counts().items == 0


def test_the_change_watch_made_while_another_process_holds_the_store_still_sees_later_commits(tmp_path):
    """The app's change watch, made while another process held the store locked, fell back to
    reading the file as immutable (meant for a folder the user may not write) after a 5 s wait,
    and never saw another commit (fails before: no change seen after the lock). It looks again."""
    from mnemoscope.engine.store.activity import ChangeWatch

    store = tmp_path / "s.db"
    with Memory(store, extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    with store_held(store, "exclusive"):
        started = time.monotonic()
        watch = ChangeWatch(store)
        waited = time.monotonic() - started
        assert not watch.changed()  # locked: no change seen yet
    with Memory(store, extensions=False) as mem:
        mem.add_note("The ferry leaves at dawn.")
    assert watch.changed() and not watch.changed()
    with Memory(store, extensions=False) as mem:
        mem.add_note("The ferry leaves at noon.")
    assert watch.changed()
    watch.close()
    assert waited < 1.0  # (before: 5 s, the connection's busy timeout, at the app's start)
