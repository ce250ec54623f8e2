"""Issue 11 items 1, 3 and 4: content does not decide what is read or contacted, keys stay
with their origin, stores and exports are private."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import sqlite3
import stat
from pathlib import Path

import pytest

from mnemoscope.app.services import Services
from mnemoscope.engine import Memory, Settings
from mnemoscope.engine.dense import EmbeddingUnavailable, OpenAIEmbedder
from mnemoscope.engine import image_refs
from mnemoscope.engine.images import ImagesArea
from tests.support.openai_server import OpenAIServer, png

from .conftest import cli, run_python


def hostile_chat(folder: Path, server: OpenAIServer, outside: Path) -> Path:
    """A JSON-lines chat whose photos point everywhere a document must not lead."""
    folder.mkdir()
    (folder / "ok.png").write_bytes(png("kayak"))
    (folder / "notes.txt").write_text("not an image", encoding="utf-8")
    (folder / "link.png").symlink_to(outside)
    server.files["/admin"] = png("admin panel")
    refs = [
        "ok.png",  # the one photo that may be read
        "file:///etc/passwd", "/proc/self/environ", "~/secret.png", "../outside.png", str(outside), outside.as_uri(),
        "link.png", "notes.txt", f"{server.origin}/admin", f"http://localhost:{server.origin.rsplit(':', 1)[1]}/admin",
        "http://169.254.169.254/latest/meta-data/", "http://[::1]/x.png", "http://0x7f000001/x.png", "gopher://x/y",
        "data:image/png;base64," + base64.b64encode(b"plain text, no image").decode(),
    ]
    lines = [json.dumps({"speaker": "Ann", "text": f"photo {n}", "img_url": ref}) for n, ref in enumerate(refs)]
    path = folder / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def image_memory(path: Path, server: OpenAIServer, **settings) -> Memory:
    mem = Memory(path, extensions=False, embed_base_url=server.base_url, image_embed_model="clip", max_retries=0,
                 request_timeout=5.0, **settings)
    mem.add_extension(ImagesArea(mem))
    return mem


def sent_images(server: OpenAIServer) -> list[bytes]:
    return [base64.b64decode(x["image"].partition(",")[2]) for path, body in server.requests
            if path.endswith("/embeddings") for x in body["input"] if isinstance(x, dict)]


def test_a_document_reads_only_its_folder_and_contacts_no_host_unless_listed(tmp_path, openai_server, monkeypatch):
    """Nothing listed in image_allow_hosts (the default): no URL a document names is contacted,
    whatever its host; each stays in its turn and is counted in one line naming the setting."""
    outside = tmp_path / "outside.png"
    outside.write_bytes(png("private photo"))
    chat = hostile_chat(tmp_path / "docs", openai_server, outside)
    refs = [json.loads(line)["img_url"] for line in chat.read_text().splitlines()]
    urls = [r for r in refs if r.startswith("http")]
    with image_memory(tmp_path / "m.db", openai_server) as mem:
        report = mem.ingest(chat)
        assert mem.counts().items == 16  # every turn kept
        assert sorted(i.meta["image_url"] for i in mem.source_items(report.sources[0].source_id)) == sorted(refs)
        [warning] = report.warnings
        assert warning.startswith(f"{chat}:2: image 'file:///etc/passwd' of 1 not embedded: ")
        assert "(and 9 more image(s)" in warning  # the refusals; the URLs are not failures
        assert len(report.not_fetched) == len(urls) == 5
        assert f"; 5 image URL(s) not fetched, their hosts (127.0.0.1, localhost, 169.254.169.254 and 2 more host(s)) not" \
               " being in image_allow_hosts" in report.summary()
        resumed = mem.images.resume()  # the same refusals, one per photo, each at its line
    failures = resumed.failures
    assert len(resumed.not_fetched) == 5 and "5 image URL(s) not fetched" in resumed.summary()
    assert sent_images(openai_server) == [png("kayak")]
    assert [(m, p) for m, p, _ in openai_server.headers if m == "GET"] == []  # /admin never asked for
    reasons = {f.ref: f.reason for f in failures}
    assert len(failures) == 10 and all(f.where == f"{chat}:{refs.index(f.ref) + 1}" for f in failures)
    assert not any(r.startswith("http") for r in reasons)
    assert "outside the ingested folder" in reasons["../outside.png"] and "outside" in reasons["link.png"]
    assert "outside the ingested folder" in reasons["/proc/self/environ"]
    assert "is not an image" in reasons["notes.txt"] and "is not an image" in reasons[next(r for r in reasons if r.startswith("data:"))]
    assert "not read" in reasons["gopher://x/y"]
    monkeypatch.setenv("MNEMOSCOPE_EMBED_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("MNEMOSCOPE_IMAGE_EMBED_MODEL", "clip")
    code, out, _ = cli("--store", tmp_path / "cli.db", "ingest", chat)
    assert code == 0 and out.count("5 image URL(s) not fetched") == 1 and "image_allow_hosts" in out
    assert json.loads(cli("--store", tmp_path / "cli2.db", "ingest", chat, "--json")[1])["images_not_fetched"] == 5
    assert [(m, p) for m, p, _ in openai_server.headers if m == "GET"] == []


def test_only_listed_hosts_are_fetched_and_a_wildcard_reaches_public_addresses_only(tmp_path, openai_server, monkeypatch):
    port = openai_server.origin.rsplit(":", 1)[1]
    openai_server.files["/a.png"] = png("listed by address")
    openai_server.files["/b.png"] = png("listed by name")
    (tmp_path / "docs").mkdir()
    chat = tmp_path / "docs" / "chat.jsonl"
    refs = [f"http://127.0.0.1:{port}/a.png", f"http://localhost:{port}/b.png", f"http://photos.example.org:{port}/c.png",
            f"http://example.org:{port}/d.png", f"http://evilexample.org:{port}/e.png"]
    chat.write_text("".join(json.dumps({"speaker": "Ann", "text": f"photo {n}", "img_url": r}) + "\n" for n, r in enumerate(refs)))
    real = socket.getaddrinfo  # the one thing a test cannot run for real: a domain's DNS, here pointing home
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: real("127.0.0.1" if "example.org" in host else host, *a, **k))
    with image_memory(tmp_path / "m.db", openai_server, image_allow_hosts="127.0.0.1, LOCALHOST., *.example.org") as mem:
        report = mem.ingest(chat)
    assert sent_images(openai_server) == [png("listed by address"), png("listed by name")]
    assert sorted(p for m, p, _ in openai_server.headers if m == "GET") == ["/a.png", "/b.png"]
    assert report.not_fetched == ["example.org", "evilexample.org"]  # a wildcard lists subdomains, not the domain
    [warning] = report.warnings  # photos.example.org: listed through the wildcard, but its address is loopback
    assert "'http://photos.example.org" in warning and "fetched only at public addresses" in warning


@pytest.mark.parametrize("listed", ["*", "*.org", "nas.*", "http://nas.local", "nas.local:99999", "nas.local:x", "a b"])
def test_an_allow_list_that_would_let_the_content_pick_the_host_is_refused(tmp_path, listed, monkeypatch):
    monkeypatch.setenv("MNEMOSCOPE_IMAGE_ALLOW_HOSTS", listed)
    code, _, err = cli("--store", tmp_path / "m.db", "stats")
    assert code == 2 and err.count("\n") == 1 and "MNEMOSCOPE_IMAGE_ALLOW_HOSTS" in err, err
    assert not (tmp_path / "m.db").exists()


def test_an_imported_store_reads_no_local_file_and_a_host_needs_listing(tmp_path, openai_server):
    outside = tmp_path / "outside.png"
    outside.write_bytes(png("private photo"))
    chat = hostile_chat(tmp_path / "docs", openai_server, outside)
    with Memory(tmp_path / "plain.db", extensions=False) as plain:
        plain.ingest(chat)
        plain.export(tmp_path / "export.jsonl")
    openai_server.files["/ok.png"] = png("kayak")
    with image_memory(tmp_path / "copy.db", openai_server, image_allow_hosts="127.0.0.1") as copy:
        copy.import_(tmp_path / "export.jsonl")
        reasons = {f.ref: f.reason for f in copy.images.resume().failures}
    assert sent_images(openai_server) == [png("admin panel")]  # only the host the person allowed, by name
    assert "read only while the folder holding them is ingested" in reasons["ok.png"]
    assert f"http://localhost:{openai_server.origin.rsplit(':', 1)[1]}/admin" not in reasons  # not listed: not a failure


def test_a_redirect_to_a_host_not_listed_is_refused_at_the_redirect(tmp_path, openai_server):
    port = openai_server.origin.rsplit(":", 1)[1]
    openai_server.redirects["/photo.png"] = f"http://localhost:{port}/admin"
    openai_server.files["/admin"] = png("admin panel")
    (tmp_path / "docs").mkdir()
    chat = tmp_path / "docs" / "chat.jsonl"
    chat.write_text(json.dumps({"speaker": "Ann", "text": "look", "img_url": f"{openai_server.origin}/photo.png"}) + "\n")
    with image_memory(tmp_path / "m.db", openai_server, image_allow_hosts="127.0.0.1, *.example.org") as mem:
        report = mem.ingest(chat)
    [warning] = report.warnings  # the redirect's host is not listed: refused, not counted as "not fetched"
    assert report.not_fetched == [] and "redirected to localhost:" in warning and "not followed" in warning
    assert [p for m, p, _ in openai_server.headers if m == "GET"] == ["/photo.png"]


@pytest.fixture
def other_server():
    with OpenAIServer() as server:
        yield server


def test_the_llm_status_check_keeps_the_key_at_its_origin(openai_server, other_server, monkeypatch):
    monkeypatch.setenv("MNEMOSCOPE_LLM_API_KEY", "sk-secret")
    openai_server.redirects["/v1/models"] = other_server.base_url.replace("127.0.0.1", "localhost") + "/models"
    status = Services(settings=Settings.load(llm_base_url=openai_server.base_url, llm_model="m")).llm_status()
    assert status.reachable is False and "another origin" in status.detail
    assert [h.get("authorization") for m, p, h in openai_server.headers] == ["Bearer sk-secret"]
    assert other_server.headers == []  # neither the key nor the request went there
    openai_server.redirects.clear()
    assert Services(settings=Settings.load(llm_base_url=openai_server.base_url, llm_model="m")).llm_status().reachable


def test_an_embedding_endpoint_that_redirects_elsewhere_gets_no_texts(openai_server, other_server):
    openai_server.redirects["/v1/embeddings"] = other_server.base_url + "/embeddings"
    other = other_server.base_url.replace("127.0.0.1", "localhost")
    openai_server.redirects["/v1/embeddings"] = other + "/embeddings"
    embedder = OpenAIEmbedder(openai_server.base_url, "e", "sk-secret", timeout=5, max_retries=2)
    with pytest.raises(EmbeddingUnavailable, match="another origin"):
        embedder.embed(["a private note"])
    assert other_server.headers == [] and len(openai_server.headers) == 1  # refused, not retried


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_stores_their_folders_and_exports_are_private(tmp_path):
    os.umask(0o022)
    store = tmp_path / "new" / "deeper" / "memory.db"
    export = tmp_path / "backup.jsonl"
    export.write_text("an older backup, world-readable\n")
    os.chmod(export, 0o644)
    with Memory(store, extensions=False) as mem:
        mem.add_note("a private thought")
        assert {mode(store.with_name(store.name + s)) for s in ("", "-wal", "-shm")} == {0o600}
        mem.export(export)
    assert mode(tmp_path / "new") == mode(tmp_path / "new" / "deeper") == 0o700
    assert mode(export) == 0o600
    (tmp_path / "note.md").write_text("# Note\nA private thought.\n")
    assert cli("--store", tmp_path / "cli" / "m.db", "ingest", tmp_path / "note.md")[0] == 0  # export makes no store
    assert cli("--store", tmp_path / "cli" / "m.db", "export", tmp_path / "cli.jsonl")[0] == 0
    assert mode(tmp_path / "cli" / "m.db") == mode(tmp_path / "cli.jsonl") == 0o600 and mode(tmp_path / "cli") == 0o700


def test_a_store_others_could_read_is_made_private_before_it_is_written(tmp_path):
    """A store of mode 0644 (an older Mnemoscope's, or one copied with cp under umask 022): SQLite
    makes its -wal and -shm with the store's own mode, so what was written next was readable by
    others (fails before: 0644 each; only `check` flagged the store). A writable open makes the
    store, and a -wal or -shm another reader opened first, 0600; `check` then finds nothing wide."""
    os.umask(0o022)
    store = tmp_path / "m.db"
    with Memory(store, extensions=False) as mem:
        mem.add_note("a first thought")
    os.chmod(store, 0o644)
    beside = [store.with_name(store.name + s) for s in ("-wal", "-shm")]
    with contextlib.closing(sqlite3.connect(store)) as reader:  # its -wal and -shm: 0644, as the store was
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()
        assert [mode(p) for p in beside] == [0o644, 0o644]
        with Memory(store, extensions=False) as mem:
            mem.add_note("a private thought")
            assert [mode(p) for p in (store, *beside)] == [0o600] * 3
    code, out, _ = cli("--store", store, "check")
    assert code == 0 and "readable by others" not in out, out


def test_an_image_over_the_size_cap_is_not_read_whole_nor_sent(tmp_path, openai_server, monkeypatch):
    monkeypatch.setattr(image_refs, "MAX_IMAGE_BYTES", 4096)  # the cap, small enough for a test
    big = png("huge") + b"\0" * 5000
    openai_server.files["/big.png"] = big
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "big.png").write_bytes(big)
    (tmp_path / "docs" / "small.png").write_bytes(png("small"))
    refs = ["big.png", f"{openai_server.origin}/big.png", "data:image/png;base64," + base64.b64encode(big).decode(), "small.png"]
    chat = tmp_path / "docs" / "chat.jsonl"
    chat.write_text("".join(json.dumps({"speaker": "Ann", "text": f"photo {n}", "img_url": r}) + "\n" for n, r in enumerate(refs)))
    with image_memory(tmp_path / "m.db", openai_server, image_allow_hosts="127.0.0.1") as mem:
        mem.ingest(chat)
        reasons = [f.reason for f in mem.images.resume().failures]
    assert sent_images(openai_server) == [png("small")]
    assert len(reasons) == 3 and all("too large" in r or "larger than" in r for r in reasons), reasons


def test_a_folder_is_read_without_its_links_or_hidden_files(tmp_path):
    (tmp_path / "outside.md").write_text("# Secret\nThe outside passphrase zebra-17.")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "key.md").write_text("# Key\nThe other passphrase zebra-18.")
    docs = tmp_path / "docs"
    (docs / ".git").mkdir(parents=True)
    (docs / "notes.md").write_text("# Notes\nThe harbour opens at dawn.")
    (docs / "secret.md").symlink_to(tmp_path / "outside.md")
    (docs / "linked").symlink_to(tmp_path / "elsewhere")
    (docs / ".hidden.md").write_text("# Hidden\nA hidden zebra-19.")
    (docs / ".git" / "notes.md").write_text("# Git\nA git zebra-20.")
    (docs / "loop").symlink_to(docs / "loop")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        report = mem.ingest(docs)
        assert [s.name for s in mem.sources()] == [str(docs / "notes.md")]
    assert b"zebra" not in b"".join(p.read_bytes() for p in tmp_path.glob("m.db*"))
    # the links are said, not left out unsaid (fails before: nothing said of them); hidden entries stay unsaid
    assert report.links == [str(docs / name) for name in ("linked", "loop", "secret.md")]
    assert report.summary().endswith("; 3 link(s) in a folder not followed"), report.summary()


HTTP_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "urllib.request", "http.client", "requests", "socket", "aiohttp", "urllib3", "ssl")


def test_every_http_request_goes_through_one_module():
    """engine/net.py alone makes connections (its checks: the origin of a configured endpoint, the
    public address of a document's URL); elsewhere the openai package lends its errors only."""
    import ast

    from .conftest import ROOT

    files = [p for folder in ("engine", "app", "screens", "mnemoscope") for p in (ROOT / folder).rglob("*.py")]
    assert len(files) > 50
    reaching = []
    for path in files:
        if path == ROOT / "engine" / "net.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                reaching += [f"{path.relative_to(ROOT)}: import {a.name}" for a in node.names
                             if a.name.startswith((*HTTP_MODULES, "openai"))]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.startswith(HTTP_MODULES) or node.module.startswith("openai") and any(
                        not a.name.endswith("Error") for a in node.names):
                    reaching.append(f"{path.relative_to(ROOT)}: from {node.module} import {', '.join(a.name for a in node.names)}")
    assert reaching == []


ESCAPES = "\x1b]0;retitled\x07 \x1b[2J\x1b]52;c;c2VjcmV0\x07 \x9b31m"


def test_a_documents_control_characters_are_shown_never_sent_to_the_terminal(tmp_path):
    (tmp_path / "chat.txt").write_text(f"Ann: the harbour lanterns {ESCAPES}\nBen: the harbour ferry", encoding="utf-8")
    bad = tmp_path / "bad\x1b[2J\rhidden.jsonl"
    bad.write_text("{nope}\n", encoding="utf-8")
    store = tmp_path / "m.db"
    assert cli("--store", store, "ingest", tmp_path / "chat.txt")[0] == 0
    outputs = [cli("--store", store, "recall", "harbour lanterns"), cli("--store", store, "episodes"),
               cli("--store", store, "ingest", bad)]
    assert outputs[0][0] == 0 and outputs[2][0] == 2
    shown = "".join(out + err for _, out, err in outputs)
    assert "retitled" in shown and "\\u001b]0;retitled\\u0007" in shown and "\\u009b31m" in shown
    assert not any(c in shown for c in "\x1b\x07\x9b\r")
    code, out, _ = cli("--store", store, "recall", "harbour lanterns", "--json")
    assert code == 0 and any(ESCAPES in hit["item"]["text"] for hit in json.loads(out)["hits"])  # the data, unchanged


def test_a_bidi_override_in_an_item_cannot_turn_the_inbox_around(tmp_path):
    """A right-to-left override in a turn showed the rest of its line backwards in a terminal that
    orders text both ways: the conflict inbox's evidence, and the choices after it, could be made
    to read as other words (fails before: printed as it was). Each bidi embedding, override or
    isolate is shown as its escape, as a control character is; the data is unchanged."""
    said = "Big news: I moved into a tiny\u202e flat near the\u2066 river."
    turns = [{"speaker": "Maya", "text": "I live in Sellwood.", "timestamp": "2023-04-03T10:00:00"},
             {"speaker": "Maya", "text": said, "timestamp": "2023-09-02T10:00:00"}]
    (tmp_path / "chat.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    store = tmp_path / "m.db"
    assert cli("--store", store, "ingest", tmp_path / "chat.jsonl")[0] == 0
    outputs = [cli("--store", store, "conflicts"), cli("--store", store, "recall", "tiny flat")]
    assert [code for code, _, _ in outputs] == [0, 0]
    shown = "".join(out for _, out, _ in outputs)
    assert shown.count("Maya: Big news: I moved into a tiny\\u202e flat near the\\u2066 river.") == 2, shown
    assert "1 open conflict(s)" in shown and not any(c in shown for c in "\u202e\u2066")
    code, out, _ = cli("--store", store, "recall", "tiny flat", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["item"]["text"] == said


def test_a_file_swapped_for_a_link_after_the_folder_walk_is_not_read(tmp_path):
    """The walk leaves links out, and the read does not follow one put in place of a walked file,
    or of a folder on its way, between the walk and the read (another user's doing, in a shared
    folder): what is read is in the folder the person named."""
    from mnemoscope.engine.errors import IngestError
    from mnemoscope.engine.ingest import discover, read_path

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "notes.md").write_text("# Secret\nThe outside passphrase zebra-17.")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.md").write_text("# Notes\nThe harbour opens at dawn.")
    (docs / "sub" / "notes.md").write_text("# Sub\nThe ferry leaves at noon.")
    found = discover([docs]).files
    assert [f.path for f in found] == [docs / "notes.md", docs / "sub" / "notes.md"]
    (docs / "notes.md").unlink()
    (docs / "notes.md").symlink_to(tmp_path / "outside" / "notes.md")  # the file, swapped for a link
    (docs / "sub").rename(docs / "old-sub")
    (docs / "sub").symlink_to(tmp_path / "outside")  # a folder on the way, swapped for a link
    refusals = []
    for f in found:
        with pytest.raises(IngestError) as refused:
            read_path(f.path, root=f.root)
        refusals.append(str(refused.value))
    assert all("it was not read" in r for r in refusals) and "zebra" not in "".join(refusals), refusals
    assert [p.source.name for p in read_path(docs / "old-sub" / "notes.md", root=docs)] == [str(docs / "old-sub" / "notes.md")]



def test_a_read_inside_a_folder_follows_no_link_out_of_it(tmp_path):
    """What a photo's path and a walked file are read with (engine/files.py): the check is made on
    the file opened, not on the path before it, so no swap between the two can lead outside."""
    from mnemoscope.engine.errors import FileRefused
    from mnemoscope.engine.files import read_regular

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "p.png").write_bytes(png("private photo"))
    docs = tmp_path / "docs"
    (docs / "inner").mkdir(parents=True)
    (docs / "inner" / "ok.png").write_bytes(png("kayak"))
    (docs / "link.png").symlink_to(tmp_path / "outside" / "p.png")
    (docs / "way").symlink_to(tmp_path / "outside")
    assert read_regular(docs / "inner" / "ok.png", 2**20, inside=docs) == png("kayak")
    for path in (docs / "link.png", docs / "way" / "p.png"):
        with pytest.raises(FileRefused, match="it was not read"):
            read_regular(path, 2**20, inside=docs)


def test_every_file_beside_a_store_is_private_even_with_umask_000(tmp_path):
    """Audit: whatever the process's umask, each file a command writes beside a store (the store,
    its -wal and -shm, the saved index and areas and their stamps, exports, salvage, the ranker's
    export) is 0600 and each folder made for it 0700, after ingest, recall, feedback, export and
    check; walked while the store is open, so that its -wal and -shm are there."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(6):
        (docs / f"t{n}.txt").write_text("\n".join(f"Ann: the lantern {i} of file {n} lit the quay at dusk." for i in range(20)))
    home = tmp_path / "private" / "deeper"
    script = """
import io, json, os, sys
os.umask(0)
from pathlib import Path
from mnemoscope.app.cli import main
from mnemoscope.engine import Memory
home, docs = Path(sys.argv[1]), sys.argv[2]
store = str(home / "m.db")
def run(*argv):
    out = io.StringIO()
    code = main(["--store", store, *argv], out=out)
    assert code == 0, (argv, code, out.getvalue())
    return out.getvalue()
run("ingest", docs)
token = json.loads(run("recall", "lantern quay", "--json"))
run("feedback", token["token"], "--used", str(token["hits"][0]["id"]))
run("export", str(home / "all.jsonl"))
run("ranker", "export", str(home / "ranker.json"))
run("check")
run("check", "--salvage", str(home / "rescue.jsonl"))
with Memory(store) as mem:
    mem.recall("lantern")
    modes = {str(p.relative_to(home.parent)): oct(p.stat().st_mode & 0o777) for p in [home, *sorted(home.parent.rglob("*"))]}
print(json.dumps(modes))
"""
    done = run_python(script, home, docs, env={**os.environ, "MNEMOSCOPE_SAVE_INDEX_ABOVE": "1"})
    assert done.returncode == 0, done.stderr
    modes = json.loads(done.stdout.splitlines()[-1])
    assert {"deeper/m.db", "deeper/m.db-wal", "deeper/m.db-shm", "deeper/m.db-index", "deeper/all.jsonl",
            "deeper/ranker.json", "deeper/rescue.jsonl"} <= set(modes), modes
    assert any(name.endswith(".checked") for name in modes) and any("-areas" in name for name in modes), modes
    wide = {name: mode for name, mode in modes.items() if mode != ("0o700" if name == "deeper" else "0o600")}
    assert wide == {}
    assert mode(tmp_path / "private") == 0o700


async def test_the_apps_ingest_notification_says_how_many_image_urls_were_not_fetched(tmp_path, openai_server):
    from tests.app.mnemo_testing import build_app, empty_store, settle

    (tmp_path / "docs").mkdir()
    chat = tmp_path / "docs" / "chat.jsonl"
    chat.write_text("".join(json.dumps({"speaker": "Ann", "text": f"photo {n}", "img_url": f"{openai_server.origin}/{n}.png"})
                            + "\n" for n in range(3)))
    settings = Settings.load(store=str(tmp_path / "m.db"), embed_base_url=openai_server.base_url,
                             image_embed_model="clip", max_retries=0)
    app = build_app(Services(empty_store(tmp_path / "m.db"), label="m.db", settings=settings), browse_root=tmp_path / "docs")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await app.switch_mode("ingest")
        await settle(pilot)
        app.screen.toggle(chat)
        await pilot.press("i")
        await settle(pilot)
        await pilot.press("enter")  # "Ingest" has focus
        await settle(pilot)
        [done] = app.titled("Ingest")
    assert "3 image URL(s) not fetched, their hosts (127.0.0.1) not being in image_allow_hosts" in done.message
    assert [p for m, p, _ in openai_server.headers if m == "GET"] == []
