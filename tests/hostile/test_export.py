"""Issue 11 item 5: an export is atomic (an interrupted or failed export leaves the previous file
as it was) and self-checking (import refuses a file without a valid trailer)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemoscope.engine import IngestFailed, Memory
from mnemoscope.engine.transfer import write_records

from .conftest import ROOT, cli, damage, run_python, store_checksum

BACKUP = "an older backup the person relies on\n"


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    (folder / "docs").mkdir()
    for n in range(12):
        (folder / "docs" / f"t{n}.txt").write_text("\n".join(
            f"Ann: turn {i} of file {n} about the harbour lanterns, number {i * n}." for i in range(30)))
    with Memory(folder / "m.db") as mem:
        mem.ingest(folder / "docs")
        mem.export(folder / "good.jsonl")
    return folder


def test_a_killed_export_leaves_the_previous_file_and_nothing_importable(filled, tmp_path):
    target = tmp_path / "backup.jsonl"
    target.write_text(BACKUP)
    killed = run_python("""
import os, signal, sys
from mnemoscope.engine import Memory
from mnemoscope.engine.transfer import write_records, _records
mem = Memory(sys.argv[1])
def dying(records):
    for n, record in enumerate(records):
        if n == 200:
            os.kill(os.getpid(), signal.SIGKILL)
        yield record
write_records(sys.argv[2], dying(_records(mem)))
""", filled / "m.db", target)
    assert killed.returncode == -9
    assert target.read_text() == BACKUP
    [partial] = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert partial.stat().st_size > 0 and oct(partial.stat().st_mode & 0o777) == "0o600"
    with Memory(tmp_path / "copy.db", extensions=False) as copy, pytest.raises(IngestFailed, match="no export trailer"):
        copy.import_(partial)


@pytest.mark.parametrize("change, message", [
    (lambda lines: lines[: len(lines) // 2], "no export trailer at its end"),
    (lambda lines: lines[:-1], "no export trailer at its end"),
    (lambda lines: [line.replace("harbour", "harb0ur", 1) for line in lines], "does not match the records (checksum)"),
    (lambda lines: lines[:5] + lines[6:], "does not match the records"),
    (lambda lines: lines[:3] + [lines[-1]] + lines[3:], "does not match the records"),  # two exports joined
])
def test_import_refuses_a_file_cut_short_or_changed(filled, tmp_path, change, message):
    lines = (filled / "good.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(change(lines)), encoding="utf-8")
    store = tmp_path / "target.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    code, out, err = cli("--store", store, "import", bad)
    assert code == 2 and err.count("\n") == 1 and message in err and store_checksum(store) == before


def test_an_export_of_a_damaged_store_keeps_the_old_backup(filled, tmp_path):
    store = tmp_path / "m.db"
    shutil.copy(filled / "m.db", store)
    damage(store, b"of file 7 about the harbour")
    target = tmp_path / "backup.jsonl"
    target.write_text(BACKUP)
    code, _, err = cli("--store", store, "export", target)
    assert code == 2 and "is damaged" in err and "mnemoscope --store" in err and "check" in err
    assert target.read_text() == BACKUP and [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_a_full_disk_or_an_unwritable_target_keeps_the_old_backup(filled, tmp_path):
    target = tmp_path / "backup.jsonl"
    target.write_text(BACKUP)
    limit = (filled / "good.jsonl").stat().st_size // 2  # the export outgrows what the disk allows
    full = run_python("""
import resource, signal, sys
from mnemoscope.app.cli import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
sys.exit(main(["--store", sys.argv[1], "export", sys.argv[2]]))
""", filled / "m.db", target, limit)
    assert full.returncode == 2 and full.stderr.count("\n") == 1, full.stderr
    assert f"cannot write {target}: File too large; {target} is as it was" in full.stderr
    assert target.read_text() == BACKUP and not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    for where, message in ((tmp_path / "no" / "such" / "x.jsonl", "does not exist"), (tmp_path, "is a folder")):
        code, _, err = cli("--store", filled / "m.db", "export", where)
        assert code == 2 and message in err and err.count("\n") == 1


def test_an_export_is_one_consistent_snapshot_with_a_valid_trailer(filled, tmp_path):
    lines = (filled / "good.jsonl").read_text(encoding="utf-8").splitlines()
    trailer = json.loads(lines[-1])
    assert trailer["type"] == "trailer" and trailer["records"] == len(lines) - 1
    assert trailer["sources"] == 12 and trailer["items"] == 360
    write_records(tmp_path / "resealed.jsonl", [json.loads(line) for line in lines[:-1]])
    assert (tmp_path / "resealed.jsonl").read_text(encoding="utf-8").splitlines() == lines
    with Memory(tmp_path / "copy.db") as copy:
        assert copy.import_(filled / "good.jsonl").items == 360
    assert os.stat(tmp_path / "resealed.jsonl").st_mode & 0o077 == 0


WRITERS = {"export": ["export"], "salvage": ["check", "--salvage"], "ranker export": ["ranker", "export"]}


@pytest.mark.parametrize("command", list(WRITERS))
def test_every_file_a_command_writes_is_private_whole_and_a_file(filled, tmp_path, command):
    os.umask(0o022)
    target = tmp_path / "out.jsonl"
    target.write_text(BACKUP)
    os.chmod(target, 0o644)
    code, _, err = cli("--store", filled / "m.db", *WRITERS[command], target)
    assert code == 0, err
    assert oct(target.stat().st_mode & 0o777) == "0o600" and target.read_text() != BACKUP
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # written beside it, then renamed over it
    os.mkfifo(tmp_path / "pipe")
    for where, message in ((tmp_path / "pipe", "a named pipe (FIFO); write to a file"), (tmp_path, "is a folder"),
                           (tmp_path / "no" / "x.jsonl", "does not exist")):
        code, out, err = cli("--store", filled / "m.db", *WRITERS[command], where)
        assert code == 2 and err.count("\n") == 1 and message in err and "Traceback" not in err, (where, err)


def test_import_refuses_a_file_past_max_import_bytes_before_reading_it(filled, tmp_path, monkeypatch):
    """Import holds an export in memory until it commits: a file past the cap is one line, exit
    2, the store unchanged, and its bytes are not read (a sparse 64 MiB file of zeros, one
    endless line: before, it was read whole and refused only for its missing trailer)."""
    store = tmp_path / "target.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as fh:
        fh.truncate(64 * 2**20)
    monkeypatch.setenv("MNEMOSCOPE_MAX_IMPORT_BYTES", str(2**20))
    code, _, err = cli("--store", store, "import", huge)
    assert code == 2 and err.count("\n") == 1 and "is 64 MiB: more than max_import_bytes (1 MiB)" in err, err
    assert "MNEMOSCOPE_MAX_IMPORT_BYTES" in err and store_checksum(store) == before
    for cap, says in ((1000, "is 64 MiB: more than max_import_bytes (1,000 bytes)"),
                      (500 * 2**10, "is 64 MiB: more than max_import_bytes (500 KiB)")):  # not "(0 MiB)" (fails before)
        monkeypatch.setenv("MNEMOSCOPE_MAX_IMPORT_BYTES", str(cap))
        code, _, err = cli("--store", store, "import", huge)
        assert code == 2 and says in err, err
    good = filled / "good.jsonl"
    monkeypatch.setenv("MNEMOSCOPE_MAX_IMPORT_BYTES", str(good.stat().st_size))
    assert cli("--store", store, "import", good)[0] == 0  # an export within the cap, to its last byte


def _cut_short(good: Path, bad: Path) -> None:
    lines = good.read_text(encoding="utf-8").splitlines(keepends=True)
    bad.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")


@pytest.mark.parametrize("make, says", [
    (lambda good, bad: None, "no such file"),
    (lambda good, bad: bad.mkdir(), "import reads one export file"),
    (lambda good, bad: bad.write_bytes(b""), "is empty"),
    (lambda good, bad: bad.write_text('[{"role": "user", "content": "hi"}]\n'), "no export trailer at its end"),
    (_cut_short, "no export trailer at its end"),
    (lambda good, bad: bad.write_text(good.read_text().replace('"version": 1', '"version": 9')), "version 9"),
    (lambda good, bad: bad.write_bytes(b"x" * 70_000 + good.read_bytes().splitlines()[-1].lstrip(b"{")),
     "no export trailer at its end"),  # a last line longer than what the check reads of the end
    (lambda good, bad: shutil.copy(good, bad), "more than max_import_bytes"),
])
def test_a_refused_import_into_a_new_store_path_creates_no_store(filled, tmp_path, monkeypatch, make, says):
    """A file that is no export (missing, a folder, empty, another format, cut short, another
    version, past the cap) is refused before the store is opened: "nothing was imported" holds
    for the folder too. Before, the store was created first and an empty store file stayed."""
    bad = tmp_path / "bad.jsonl"
    make(filled / "good.jsonl", bad)
    if "max_import_bytes" in says:
        monkeypatch.setenv("MNEMOSCOPE_MAX_IMPORT_BYTES", "1000")
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = cli("--store", tmp_path / "new.db", "import", bad)
    assert code == 2 and err.count("\n") == 1 and says in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_refused_import_never_removes_a_store_another_process_opened_meanwhile(tmp_path):
    """The race a32d945 had: an import refused late (its last record is bad, found after the whole
    file was read) removed the files it had created under the store's name, so a second process
    that had opened the new store meanwhile and written to it lost its writes. The refused
    import now leaves whatever it created, and the other process's item stays."""
    source = {"type": "source", "id": 1, "name": "long.txt", "kind": "document", "content_hash": "h", "meta": {}}
    items = [{"type": "item", "id": n, "source_id": 1, "text": f"line {n} " + "harbour lantern " * 60, "key": f"k{n}",
              "position": n} for n in range(1, 20_001)]
    items[-1]["position"] = "last"  # refused only once every record before it was checked
    late = tmp_path / "late.jsonl"
    write_records(late, [source, *items])
    store = tmp_path / "new.db"
    refused = subprocess.Popen([sys.executable, "-m", "mnemoscope", "--store", str(store), "import", str(late)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not store.exists() and refused.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store.exists(), refused.communicate()  # the refused import created the store, as any open does
    log = tmp_path / "notes" / "log.txt"
    log.parent.mkdir()
    log.write_text("The lighthouse keeper's log, written meanwhile.")
    with Memory(store, extensions=False) as mem:  # another process's write while that import reads its file
        mem.ingest(log)
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 2 and "late.jsonl:20001" in err and err.count("\n") == 1, err
    with Memory(store, extensions=False) as mem:
        assert [Path(s.name).name for s in mem.store.sources()] == ["log.txt"]


def test_an_export_into_a_shared_folder_is_not_written_into_a_file_planted_there(filled, tmp_path):
    """The temporary file beside the target was named by the process id and opened without
    O_EXCL: another user who put a file of theirs at that name in a shared folder (/tmp) got the
    export written into it and renamed over the target, theirs to read (fails before: the
    backup's owner is uid 65534, mode 666)."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    os.chmod(shared, 0o1777)
    target = shared / "backup.jsonl"
    planted = shared / f".backup.jsonl.{os.getpid()}.partial"
    planted.write_bytes(b"")
    os.chown(planted, 65534, 65534)
    os.chmod(planted, 0o666)
    code, _out, err = cli("--store", filled / "m.db", "export", target)
    assert code == 0, err
    info = target.stat()
    assert (info.st_uid, info.st_mode & 0o777) == (0, 0o600)
    assert planted.stat().st_size == 0 and target.read_text() == (filled / "good.jsonl").read_text()


def test_records_of_a_type_no_part_of_this_mnemoscope_reads_are_said_not_dropped_unsaid(tmp_path):
    """An export (of a newer Mnemoscope, or edited) may hold records of a type nothing here
    reads: they were left out without a word (fails before: exit 0, nothing said). The import
    keeps what it reads and its report names what it left out, with the first one's line."""
    import hashlib

    from mnemoscope.engine.transfer import _trailer

    store = tmp_path / "source.db"
    with Memory(store) as mem:
        mem.add_note("The lanterns are lit at dusk.")
    export = tmp_path / "all.jsonl"
    assert cli("--store", store, "export", export)[0] == 0
    lines = export.read_text().splitlines(keepends=True)[:-1]
    lines[1:1] = [json.dumps({"type": "reminder", "text": "call the keeper"}) + "\n",
                  json.dumps({"type": "reminder", "text": "oil the lamp"}) + "\n"]
    body = "".join(lines)
    export.write_text(body + json.dumps(_trailer(len(lines), 1, 1, hashlib.sha256(body.encode()).hexdigest())) + "\n")
    code, out, err = cli("--store", tmp_path / "target.db", "import", export)
    assert code == 0 and err == "", err
    assert f"2 record(s) of a type this Mnemoscope does not read were left out ('reminder', first at {export}:2)" in out, out
    with Memory(tmp_path / "target.db") as mem:
        assert [i.text for s in mem.sources() for i in mem.source_items(s.id)] == ["The lanterns are lit at dusk."]
