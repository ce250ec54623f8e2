"""Shared photos embedded by a multimodal endpoint (engine/images.py), against the real loopback
server: stored at ingest, cached by bytes, searchable by what they show, and never lost to a
failure. The server embeds an image like the text its bytes spell, so ``png("kayak")`` "shows" a kayak."""

import base64
import json
import sqlite3
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import Memory
from mnemoscope.engine.image_refs import Fetching, ImageUnreadable, Place, read_image
from mnemoscope.engine.images import ImagesArea
from mnemoscope.engine.recall import RecallError
from tests.support.openai_server import Fail, Slow, png

KAYAK_URL = "data:image/png;base64," + base64.b64encode(png("mountain lake")).decode()


def conversation(folder: Path, text: str = "Look what I did on Saturday!") -> Path:
    """A LoCoMo-style file: photos as a relative path, a file:// URL and a data: URL."""
    photos = folder / "photos"
    photos.mkdir(exist_ok=True)
    (photos / "kayak.png").write_bytes(png("kayak"))
    (photos / "cake.png").write_bytes(png("birthday cake"))
    turns = [
        {"speaker": "Maya", "dia_id": "D1:1", "text": text, "img_url": ["photos/kayak.png"],
         "blip_caption": "a photo of a boat on the water"},
        {"speaker": "Dan", "dia_id": "D1:2", "text": "Nice. Mine was sweeter.", "img_url": [(photos / "cake.png").as_uri()],
         "blip_caption": "a photo of a table"},
        {"speaker": "Maya", "dia_id": "D1:3", "text": "And this is where we camped.", "img_url": [KAYAK_URL],
         "blip_caption": "a view"},
        {"speaker": "Dan", "dia_id": "D1:4", "text": "At my sister's place, it was her party."},
    ]
    sample = {"sample_id": "s1", "conversation": {"speaker_a": "Maya", "speaker_b": "Dan",
                                                  "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns}}
    path = folder / "conv.json"
    path.write_text(json.dumps([sample], indent=1), encoding="utf-8")
    return path


def image_memory(path: Path, server, **settings) -> Memory:
    options = dict(embed_base_url=server.base_url, image_embed_model="clip", request_timeout=5.0, max_retries=0)
    mem = Memory(path, extensions=False, **{**options, **settings})
    mem.add_extension(ImagesArea(mem))
    return mem


def image_inputs(server) -> list[dict]:
    return [x for path, body in server.requests if path.endswith("/embeddings") for x in body["input"]
            if isinstance(x, dict) and "image" in x]


def vector_rows(mem: Memory) -> int:
    with sqlite3.connect(mem.path) as conn:
        return conn.execute("SELECT COUNT(*) FROM item_vectors WHERE signature = 'image:clip'").fetchone()[0]


def test_images_are_embedded_at_ingest_and_found_by_what_they_show(tmp_path, openai_server):
    mem = image_memory(tmp_path / "m.db", openai_server)
    report = mem.ingest(conversation(tmp_path))
    assert report.warnings == []
    sent = image_inputs(openai_server)
    assert len(sent) == 3 and all(x["image"].startswith("data:image/png;base64,") for x in sent)
    assert vector_rows(mem) == 3
    assert mem.images.status().pending == 0
    assert "kayak" not in mem.index.vocab  # no text or caption says it (bm25 reaches the "boat" caption through a related word) …
    hits = mem.recall("kayak", strategy="image", top_k=1).hits  # … the photo shows it
    assert hits[0].item.key == "D1:1" and hits[0].sources == ["image"]
    assert mem.recall("mountain lake", strategy="image", top_k=1).hits[0].item.key == "D1:3"  # the data: URL
    mem.close()


def test_fused_takes_the_image_signal_as_a_candidate_source_and_a_feature(tmp_path, openai_server):
    mem = Memory(tmp_path / "f.db", embed_base_url=openai_server.base_url, image_embed_model="clip", max_retries=0)
    mem.ingest(conversation(tmp_path))
    hits = {h.item.key: h for h in mem.recall("kayak", strategy="fused", top_k=10).hits}
    assert "image" in hits["D1:1"].sources and hits["D1:1"].features["signal_image"] == 1.0
    assert "image" not in hits["D1:4"].sources and hits["D1:4"].features["signal_image"] == 0.0  # no photo
    mem.close()


def test_a_reopened_store_searches_its_image_vectors(tmp_path, openai_server):
    image_memory(tmp_path / "m.db", openai_server).ingest(conversation(tmp_path))
    mem = image_memory(tmp_path / "m.db", openai_server)
    assert mem.recall("birthday cake", strategy="image", top_k=1).hits[0].item.key == "D1:2"
    mem.close()


def test_a_reingest_pays_nothing_for_images_already_embedded(tmp_path, openai_server):
    mem = image_memory(tmp_path / "m.db", openai_server)
    mem.ingest(conversation(tmp_path))
    paid = openai_server.count("embeddings")
    report = mem.ingest(conversation(tmp_path, text="Look what I did on Sunday!"))  # changed source: items replaced
    assert report.sources[0].status == "replaced"
    assert openai_server.count("embeddings") == paid  # the same bytes, from the cache
    assert vector_rows(mem) == 3
    mem.reindex()  # image vectors need no text: reindex keeps them
    assert vector_rows(mem) == 3 and openai_server.count("embeddings") == paid
    mem.close()


def test_recall_with_images_writes_nothing(tmp_path, openai_server, checksum):
    mem = image_memory(tmp_path / "m.db", openai_server)
    mem.ingest(conversation(tmp_path))
    before = checksum(mem.path)
    first = [h.item.id for h in mem.recall("kayak", strategy="image").hits]
    assert [h.item.id for h in mem.recall("kayak", strategy="image").hits] == first
    assert checksum(mem.path) == before
    mem.close()


def test_a_failing_endpoint_at_query_time_leaves_recall_without_the_image_signal(tmp_path, openai_server):
    mem = image_memory(tmp_path / "m.db", openai_server, request_timeout=0.5, max_retries=3)
    mem.ingest(conversation(tmp_path))
    paid = openai_server.count("embeddings")
    openai_server.push("embeddings", Fail(500))
    assert mem.recall("kayak", strategy="image").hits == []  # no error, and no retry at query time
    assert openai_server.count("embeddings") == paid + 1
    assert mem.recall("kayak", strategy="image", top_k=1).hits[0].item.key == "D1:1"  # the next query is served
    mem.close()


@pytest.mark.parametrize("step,reason", [(Fail(500), "embedding endpoint failed: InternalServerError"),
                                         (Slow(2.0), "embedding endpoint failed: APITimeoutError")])
def test_a_failing_endpoint_keeps_the_turns_and_resume_completes_them(tmp_path, openai_server, step, reason):
    mem = image_memory(tmp_path / "m.db", openai_server, request_timeout=0.5)
    openai_server.push("embeddings", step)
    report = mem.ingest(conversation(tmp_path))
    assert report.sources[0].status == "added" and report.items == 4
    [warning] = report.warnings  # one line for the source
    assert "\n" not in warning and reason in warning
    assert warning.startswith(f"{tmp_path / 'conv.json'}:") and "(and 2 more image(s)" in warning
    assert "images --resume" in warning
    assert openai_server.count("embeddings") == 1  # the rest were not tried against a failing endpoint
    assert vector_rows(mem) == 0 and mem.images.status().pending == 3
    assert mem.recall("boat water", strategy="bm25", top_k=1).hits[0].item.key == "D1:1"  # the caption is kept
    done = mem.images.resume()
    assert done.embedded == 3 and done.failures == [] and mem.images.status().pending == 0
    assert mem.recall("kayak", strategy="image", top_k=1).hits[0].item.key == "D1:1"
    mem.close()


def test_without_an_image_model_there_is_no_image_work(tmp_path, openai_server):
    folder = tmp_path / "c"
    folder.mkdir()
    path = conversation(folder)
    (folder / "photos" / "kayak.png").unlink()  # a missing file is not even looked for
    mem = Memory(tmp_path / "m.db", extensions=False, embed_base_url=openai_server.base_url)
    mem.add_extension(ImagesArea(mem))
    report = mem.ingest(path)
    assert report.warnings == [] and openai_server.requests == []
    with pytest.raises(RecallError, match="needs an image embedding model"):
        mem.recall("kayak", strategy="image")
    assert "image" not in mem.strategies() and openai_server.requests == []
    assert mem.images.counts() is None and mem.images.status().with_image == 3
    mem.close()


def test_a_missing_image_file_is_one_line_with_file_and_line(tmp_path, openai_server):
    path = conversation(tmp_path)
    (tmp_path / "photos" / "kayak.png").unlink()
    mem = image_memory(tmp_path / "m.db", openai_server)
    [warning] = mem.ingest(path).warnings
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "photos/kayak.png" in text)
    assert warning.startswith(f"{path}:{line}: image 'photos/kayak.png' of D1:1 not embedded: {tmp_path}/photos/kayak.png:"
                              " no such file")
    assert str(tmp_path / "photos" / "kayak.png") in warning and "(and" not in warning
    assert vector_rows(mem) == 2  # the others are embedded
    mem.close()


def test_the_cli_reports_and_resumes(tmp_path, openai_server, monkeypatch, capsys):
    path = conversation(tmp_path)
    store = str(tmp_path / "cli.db")
    monkeypatch.setenv("MNEMOSCOPE_EMBED_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("MNEMOSCOPE_IMAGE_EMBED_MODEL", "clip")
    monkeypatch.setenv("MNEMOSCOPE_MAX_RETRIES", "0")
    openai_server.push("embeddings", Fail(503))
    assert main(["--store", store, "ingest", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("1 warning(s)") and "not embedded" in out[1] and len(out) == 2
    assert main(["--store", store, "images", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) | {"model": "clip"} == {
        "enabled": True, "model": "clip", "with_image": 3, "embedded": 0, "pending": 3}
    assert main(["--store", store, "images", "--resume"]) == 0
    assert capsys.readouterr().out.startswith("3 image(s) embedded")
    monkeypatch.delenv("MNEMOSCOPE_EMBED_BASE_URL")
    assert main(["--store", store, "images", "--resume"]) == 2
    assert "image_embed_model is set but neither" in capsys.readouterr().err


def test_image_references_of_every_kind_are_read(tmp_path):
    (tmp_path / "a b.png").write_bytes(b"\x89PNG\r\n\x1a\nrest")
    inside = Place(tmp_path, tmp_path)
    assert read_image("a b.png", inside).mime == "image/png"
    assert read_image((tmp_path / "a b.png").as_uri(), inside).data.endswith(b"rest")
    assert read_image(KAYAK_URL, Place()).data == png("mountain lake")
    with pytest.raises(ImageUnreadable, match="must be base64-encoded"):
        read_image("data:image/png,raw", Place())
    with pytest.raises(ImageUnreadable, match="not valid base64"):
        read_image("data:image/png;base64,@@@", Place())
    handler = partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        loopback = Fetching.from_list(5, 0, "127.0.0.1")
        assert read_image(f"{base}/a%20b.png", Place(), loopback).data.endswith(b"rest")
        with pytest.raises(ImageUnreadable, match="cannot download .*HTTP 404"):
            read_image(f"{base}/missing.png", Place(), loopback)
        httpd.shutdown()
