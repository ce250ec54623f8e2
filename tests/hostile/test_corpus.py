"""The hostile corpus (issue 11): generated hostile files, stores and arguments, each given to the
real CLI in one audited process. For each: exit code 2, one line on stderr, nothing on stdout, no
traceback, the store as it was, and no file opened or connection made beyond what the command
line names (``sys.addaudithook`` watches every ``open``, SQLite connection and socket connect).

One more case, a chat whose photos point everywhere a document must not lead, is ingested with an
image model configured: it succeeds (the turns are kept) and reads only its own folder and
contacts only the configured endpoint."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import sys
import urllib.parse
from contextlib import closing
from pathlib import Path

import platformdirs
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.transfer import write_records
from tests.support.openai_server import OpenAIServer, png
from tests.support.stores import shared_folder

from .conftest import ROOT, damage, file_digest, run_python, store_checksum

# one worker runs them all (--dist loadgroup): the corpus is built once, no other worker waits for it
pytestmark = pytest.mark.xdist_group("hostile-corpus")

RUNNER = r'''
import contextlib, io, json, os, sys, traceback
from mnemoscope.app.cli import main
from tests.support.stores import store_checksum

cases = json.load(open(sys.argv[1]))
recording, events = [False], []

def watch(event, args):
    if not recording[0]:
        return
    if event in ("open", "sqlite3.connect") and isinstance(args[0], (str, bytes, os.PathLike)):
        events.append(["open", os.fsdecode(args[0])])
    elif event == "socket.connect":
        events.append(["connect", repr(args[1])])

main(["--store", cases[0]["warm"], "recall", "warm every lazy import"])  # imports are not the case's reads
sys.addaudithook(watch)
results = []
for case in cases:
    os.environ.update(case["env"])
    out, err = io.StringIO(), io.StringIO()
    events.clear()
    recording[0] = True
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(case["argv"], out=out)
    except BaseException:
        code, err = "raised", io.StringIO(traceback.format_exc())
    recording[0] = False
    for name in case["env"]:
        del os.environ[name]
    after = store_checksum(case["checksum"]) if case["checksum"] else None
    results.append({"id": case["id"], "code": code, "out": out.getvalue(), "err": err.getvalue(), "events": events[:],
                    "checksum": after})
json.dump(results, open(sys.argv[2], "w"))
'''

# id: (store, argv); "{d}" is the corpus folder, store "base" a small healthy store.
CASES: dict[str, tuple[str, list[str]]] = {
    "JSON nested 100,000 deep": ("base", ["ingest", "{d}/deep.json"]),
    "JSON lines nested 100,000 deep": ("base", ["ingest", "{d}/deep.jsonl"]),
    "a session date that is a number": ("base", ["ingest", "{d}/date-number.json"]),
    "a date that is a boolean": ("base", ["ingest", "{d}/date-bool.jsonl"]),
    "an impossible date": ("base", ["ingest", "{d}/february.jsonl"]),
    "an id that is an object": ("base", ["ingest", "{d}/object-id.jsonl"]),
    "two conversations, one sample_id": ("base", ["ingest", "{d}/twins.json"]),
    "a ChatGPT export whose branch loops": ("base", ["ingest", "{d}/chatgpt-loop.json"]),
    "a ChatGPT node whose children are no list": ("base", ["ingest", "{d}/chatgpt-children.json"]),
    "a ChatGPT node whose parent is a list": ("base", ["ingest", "{d}/chatgpt-parent.json"]),
    "a ChatGPT current_node that is a list": ("base", ["ingest", "{d}/chatgpt-current.json"]),
    "a binary file": ("base", ["ingest", "{d}/binary.txt"]),
    "not UTF-8": ("base", ["ingest", "{d}/latin1.md"]),
    "an empty file": ("base", ["ingest", "{d}/empty.md"]),
    "an unsupported type": ("base", ["ingest", "{d}/table.csv"]),
    "a missing file": ("base", ["ingest", "{d}/missing.md"]),
    "a folder with one bad file": ("base", ["ingest", "{d}/mixed"]),
    "a FIFO to ingest": ("base", ["ingest", "{d}/pipe.jsonl"]),
    "a device to ingest": ("base", ["ingest", "/dev/zero"]),
    "an export without a trailer": ("base", ["import", "{d}/no-trailer.jsonl"]),
    "an export cut short": ("base", ["import", "{d}/cut.jsonl"]),
    "an export changed after": ("base", ["import", "{d}/changed.jsonl"]),
    "an export with an id past 2^63": ("base", ["import", "{d}/huge-id.jsonl"]),
    "an export with a bad record": ("base", ["import", "{d}/bad-record.jsonl"]),
    "an export nested 100,000 deep": ("base", ["import", "{d}/deep-export.jsonl"]),
    "a FIFO to import": ("base", ["import", "{d}/pipe.jsonl"]),
    "a device to import": ("base", ["import", "/dev/zero"]),
    "a folder to import": ("base", ["import", "{d}/mixed"]),
    "an item id past 2^63": ("base", ["delete", "9223372036854775808"]),
    "an item id in Arabic-Indic digits": ("base", ["delete", "١٢"]),
    "a fact id past 2^64": ("base", ["fact", "delete", "18446744073709551616"]),
    "an entity id at 2^63 - 1": ("base", ["entity", "merge", "1", "9223372036854775807"]),
    "--top-k in other digits": ("base", ["recall", "harbour", "--top-k", "١٢"]),
    "--top-k as a float": ("base", ["recall", "harbour", "--top-k", "1e3"]),
    "--top-k negative": ("base", ["recall", "harbour", "--top-k", "-1"]),
    "--top-k with a space": ("base", ["recall", "harbour", "--top-k", " 5"]),
    "--seed past 2^64": ("base", ["recall", "harbour", "--seed", "99999999999999999999"]),
    "an empty query": ("base", ["recall", "  "]),
    "an unknown strategy": ("base", ["recall", "harbour", "--strategy", "nope"]),
    "clear without --yes": ("base", ["clear"]),
    "export onto a folder": ("base", ["export", "{d}/mixed"]),
    "export into a missing folder": ("base", ["export", "{d}/nowhere/e.jsonl"]),
    "export onto a FIFO": ("base", ["export", "{d}/pipe.jsonl"]),
    "another application's database": ("{d}/foreign.sqlite", ["stats"]),
    "junk as a store": ("{d}/junk.db", ["recall", "harbour"]),
    "a store of a newer Mnemoscope": ("{d}/newer.db", ["ingest", "{d}/ok.md"]),
    "a damaged store": ("{d}/damaged.db", ["recall", "harbour"]),
    "a folder as the store": ("{d}/mixed", ["stats"]),
    "a FIFO as the store": ("{d}/pipe.jsonl", ["stats"]),
    "a store path under a file": ("{d}/ok.md/m.db", ["stats"]),
    "an env file that is a FIFO": ("base", ["--env-file", "{d}/pipe.jsonl", "stats"]),
    "an env file that is a device": ("base", ["--env-file", "/dev/zero", "stats"]),
    "an env file that is a folder": ("base", ["--env-file", "{d}/mixed", "stats"]),
    "a missing env file": ("base", ["--env-file", "{d}/missing.env", "stats"]),
    "an env file that is no NAME=value": ("base", ["--env-file", "{d}/binary.txt", "stats"]),
    "an env file with a bad value": ("base", ["--env-file", "{d}/bad-value.env", "ingest", "{d}/ok.md"]),
}
PHOTOS = "a chat whose photos point everywhere"


def make_corpus(d: Path) -> sqlite3.Connection:
    """Every hostile file the cases name, in ``d``."""
    chat = "\n".join(f"{'Ann' if i % 2 else 'Ben'}: turn {i} about the harbour lanterns and ferry {i}." for i in range(40))
    (d / "ok.md").write_text("# Fine\nA good file about the harbour.")
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "deep.jsonl").write_text('{"speaker": "A", "text": "x"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    turns = [{"speaker": "Maya", "dia_id": "D1:1", "text": "hello"}]
    sample = {"sample_id": "s1", "conversation": {"session_1": turns, "session_1_date_time": 20230508}}
    (d / "date-number.json").write_text(json.dumps([sample], indent=1))
    (d / "date-bool.jsonl").write_text('{"speaker": "A", "text": "x", "timestamp": true}\n')
    (d / "february.jsonl").write_text('{"speaker": "A", "text": "x", "timestamp": "2023-02-30T10:00"}\n')
    (d / "object-id.jsonl").write_text('{"speaker": "A", "text": "x", "id": {"$oid": "1"}}\n')
    twin = {"sample_id": "s1", "conversation": {"session_1": turns}}
    (d / "twins.json").write_text(json.dumps([twin, twin], indent=1))
    said = {"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["hello"]}}
    for name, mapping, current in (
            ("loop", {"a": {"parent": None, "children": ["b"], "message": said}, "b": {"parent": "a", "children": ["a"]}}, None),
            ("children", {"a": {"parent": None, "children": {"-1": "a"}, "message": said}}, None),
            ("parent", {"a": {"parent": ["b"], "children": [], "message": said}}, None),
            ("current", {"a": {"parent": None, "children": [], "message": said}}, ["a"])):
        (d / f"chatgpt-{name}.json").write_text(json.dumps([{"id": "c1", "mapping": mapping, "current_node": current}], indent=1))
    (d / "bad-value.env").write_text("MNEMOSCOPE_REQUEST_TIMEOUT=soon\nMNEMOSCOPE_STORE=/elsewhere.db\n")
    (d / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    (d / "latin1.md").write_bytes(b"# T\ncaf\xe9\n")
    (d / "empty.md").write_text("  \n")
    (d / "table.csv").write_text("a,b\n1,2\n")
    (d / "mixed").mkdir()
    (d / "mixed" / "fine.md").write_text("# Fine\nGood.")
    (d / "mixed" / "broken.jsonl").write_text('{"speaker": "A", "text": "x"}\n{nope}\n')
    os.mkfifo(d / "pipe.jsonl")
    with Memory(d / "source.db", extensions=False) as mem:
        (d / "chat.txt").write_text(chat)
        mem.ingest(d / "chat.txt")
        mem.export(d / "good.jsonl")
    lines = (d / "good.jsonl").read_text().splitlines(keepends=True)
    (d / "no-trailer.jsonl").write_text("".join(lines[:-1]))
    (d / "cut.jsonl").write_text("".join(lines)[: len("".join(lines)) // 2])
    (d / "changed.jsonl").write_text("".join(line.replace("ferry", "fairy") for line in lines))
    records = [json.loads(line) for line in lines[:-1]]
    write_records(d / "huge-id.jsonl", [{**r, "position": 2**64} if r["type"] == "item" else r for r in records])
    write_records(d / "bad-record.jsonl", records[:3] + [{**records[3], "text": ["not", "text"]}] + records[4:])
    (d / "deep-export.jsonl").write_text(lines[0] + "[" * 100_000 + "]" * 100_000 + "\n" + lines[-1])
    with closing(sqlite3.connect(d / "foreign.sqlite")) as conn, conn:
        conn.execute("PRAGMA journal_mode=WAL")  # in use by its application: its log not yet in its file
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    (d / "junk.db").write_bytes(b"SQLite format 2\x00" + b"\x07" * 4000)
    Memory(d / "newer.db", extensions=False).close()
    with Memory(d / "damaged.db", extensions=False) as mem:
        mem.ingest(d / "chat.txt")
    damage(d / "damaged.db", b"turn 21 about the harbour")
    newer = sqlite3.connect(d / "newer.db")  # left open, as a newer Mnemoscope running elsewhere would
    with newer:
        newer.execute("INSERT INTO schema_migrations VALUES ('records-99', 0)")
    return newer


def make_photos(d: Path, endpoint: OpenAIServer, victim: OpenAIServer) -> Path:
    """A folder holding a chat whose photos name files outside it, private hosts and non-images."""
    (d / "outside.png").write_bytes(png("a private photo"))
    photos = d / "photos"
    photos.mkdir()
    (photos / "ok.png").write_bytes(png("kayak"))
    (photos / "link.png").symlink_to(d / "outside.png")
    victim.files["/admin"] = png("admin panel")
    port = victim.origin.rsplit(":", 1)[1]
    refs = ["ok.png", "file:///etc/passwd", "/proc/self/environ", "~/.ssh/id_rsa", "../outside.png", "link.png",
            f"{victim.origin}/admin", f"http://localhost:{port}/admin", f"http://[::1]:{port}/admin",
            "http://169.254.169.254/latest/meta-data/", "data:image/png;base64," + base64.b64encode(b"not an image").decode()]
    lines = [json.dumps({"speaker": "Ann", "text": f"photo {n}", "img_url": ref}) for n, ref in enumerate(refs)]
    (photos / "chat.jsonl").write_text("\n".join(lines) + "\n")
    return photos


def run_corpus(d: Path) -> None:
    """Build the corpus in ``d``, run every case in one audited process, and write what the
    tests check to ``d/summary.json`` (once per test run: every xdist worker reads it)."""
    running_elsewhere = make_corpus(d)
    base = d / "base.db"
    with Memory(base, extensions=False) as mem:
        mem.ingest(d / "chat.txt")
    before = {"base": store_checksum(base)}
    cases = []
    for case_id, (store, argv) in CASES.items():
        store_path = str(base) if store == "base" else store.format(d=d)
        if store != "base" and Path(store_path).is_file():
            before[case_id] = digest(Path(store_path))
        cases.append({"id": case_id, "argv": ["--store", store_path, *(a.format(d=d) for a in argv)], "env": {},
                      "checksum": str(base) if store == "base" else "", "warm": str(d / "source.db")})
    with OpenAIServer() as endpoint, OpenAIServer() as victim:
        photos = make_photos(d, endpoint, victim)
        env = {"MNEMOSCOPE_EMBED_BASE_URL": endpoint.base_url, "MNEMOSCOPE_IMAGE_EMBED_MODEL": "clip",
               "MNEMOSCOPE_MAX_RETRIES": "0", "MNEMOSCOPE_REQUEST_TIMEOUT": "5"}
        cases.append({"id": PHOTOS, "argv": ["--store", str(d / "photos.db"), "ingest", str(photos)], "env": env,
                      "checksum": "", "warm": str(d / "source.db")})
        (d / "cases.json").write_text(json.dumps(cases))
        # The timeout only guards against a hang: every case runs in this one child, which a machine
        # loaded well past its cores slows several times over.
        run = run_python(RUNNER, d / "cases.json", d / "results.json", timeout=900, env={"HOME": str(d / "home")})
        assert run.returncode == 0, run.stderr[-3000:]
        victim_requests, endpoint_port = list(victim.headers), endpoint.origin.rsplit(":", 1)[1]
    after = {case_id: digest(Path(corpus_case["argv"][1])) for corpus_case in cases
             if (case_id := corpus_case["id"]) in before and case_id != "base"}
    running_elsewhere.close()
    results = {r["id"]: r for r in json.loads((d / "results.json").read_text())}
    (d / "summary.json").write_text(json.dumps({
        "d": str(d), "results": results, "before": before, "after": after, "cases": {c["id"]: c for c in cases},
        "victim": victim_requests, "endpoint_port": endpoint_port}))


def digest(path: Path) -> str:
    return hashlib.sha256(file_digest(path)).hexdigest()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict:
    """What the corpus run found (see :func:`run_corpus`), built by the first worker that asks."""
    return json.loads((shared_folder(tmp_path_factory, "hostile-corpus", run_corpus) / "summary.json").read_text())


IGNORED = (sys.prefix, sys.base_prefix, sys.exec_prefix, str(ROOT / "engine"), str(ROOT / "app"), str(ROOT / "mnemoscope"),
           str(ROOT / "screens"), str(ROOT / "tests"), "/usr/", "/lib", "/etc/ld.so", "/dev/urandom", "/dev/null", "/sys/")


def opened_outside(case: dict, events: list, extra: tuple[str, ...] = ()) -> list[str]:
    """The files a case opened that its command line does not name (nor its store, its config)."""
    argv = case["argv"]
    store = argv[1]
    named = [store + suffix for suffix in ("", "-wal", "-shm", "-journal", "-activity")]
    named += [a for a in argv[2:] if a.startswith("/")] + [str(platformdirs.user_config_path("mnemoscope")), *extra]
    outside = []
    for kind, path in events:
        if kind != "open":
            continue
        if path.startswith("file:"):
            path = urllib.parse.unquote(path[5:].split("?")[0])
        real = os.path.realpath(path)
        if real.startswith(IGNORED) or path.startswith(IGNORED):
            continue
        folder_of_target = any(os.path.dirname(a) == real for a in named)  # an atomic write's folder and temp file
        temp = os.path.basename(real).startswith(".") and real.endswith(".partial")
        if not any(real == n or real.startswith(n.rstrip("/") + "/") or path == n for n in named) and not (
                folder_of_target or temp):
            outside.append(path)
    return outside


@pytest.mark.parametrize("case_id", list(CASES))
def test_each_hostile_input_is_one_line_exit_2_and_changes_nothing(corpus, case_id):
    result, case = corpus["results"][case_id], corpus["cases"][case_id]
    assert result["code"] == 2, result
    assert result["out"] == "" and result["err"].count("\n") == 1 and "Traceback" not in result["err"], result
    assert result["err"].startswith("mnemoscope"), result["err"]
    if case["checksum"]:
        assert result["checksum"] == corpus["before"]["base"]
    elif case_id in corpus["before"]:
        assert corpus["after"][case_id] == corpus["before"][case_id]
    assert opened_outside(case, result["events"]) == []
    assert [e for e in result["events"] if e[0] == "connect"] == []


def test_a_documents_photos_read_its_folder_and_contact_the_endpoint_only(corpus):
    result, case = corpus["results"][PHOTOS], corpus["cases"][PHOTOS]
    assert result["code"] == 0 and "Traceback" not in result["err"], result
    lines = result["out"].splitlines()
    assert lines[0].startswith("1 source(s): 1 added") and "1 warning(s)" in lines[0]
    assert "; 4 image URL(s) not fetched" in lines[0] and "image_allow_hosts" in lines[0]  # no host listed: none contacted
    assert lines[1].startswith(f"{corpus['d']}/photos/chat.jsonl:2: image 'file:///etc/passwd' of 1 not embedded")
    assert "(and 5 more image(s)" in lines[1]
    assert opened_outside(case, result["events"]) == []
    ports = {e[1].rsplit(", ", 1)[1].rstrip(")") for e in result["events"] if e[0] == "connect"}
    assert ports == {corpus["endpoint_port"]}  # the configured endpoint, and nothing a document named
    assert corpus["victim"] == []
