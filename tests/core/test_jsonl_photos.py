"""A JSON-lines chat shares photos the way a LoCoMo conversation does (``img_url`` and
``blip_caption`` on a line): the caption is searched, the photo embedded when an image model is
configured, and a field of the wrong type is refused with the file and line."""

import io
import json
import sqlite3
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import IngestFailed, Memory
from mnemoscope.engine.images import ImagesArea
from mnemoscope.engine.ingest import read_path
from tests.support.openai_server import png

TURNS = [
    {"speaker": "Maya", "text": "We spent the whole Saturday outdoors.", "timestamp": "2023-05-08T13:56:00"},
    {"speaker": "Maya", "text": "Look at this!", "img_url": "photos/boat.png",
     "blip_caption": "a photo of a red canoe tied to a wooden jetty"},
    {"speaker": "Dan", "text": "Nice, and here is mine.", "img_url": ["photos/cake.png", "photos/other.png"],
     "blip_caption": "a photo of a table"},
    {"speaker": "Maya", "text": "Where was that taken?"},
]


def chat(folder: Path, turns: list[dict] = TURNS) -> Path:
    """A JSON-lines chat next to the photos it names (each image's bytes spell what it shows)."""
    photos = folder / "photos"
    photos.mkdir(exist_ok=True)
    (photos / "boat.png").write_bytes(png("kayak"))
    (photos / "cake.png").write_bytes(png("birthday cake"))
    path = folder / "chat.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    return path


def test_a_photo_caption_is_found_by_words_only_the_caption_holds(tmp_path):
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        mem.ingest(chat(tmp_path))
        [hit] = mem.recall("canoe jetty", strategy="bm25").hits
        assert hit.item.text == "Look at this!"
        assert hit.item.meta == {"line": 2, "image_url": "photos/boat.png",
                                 "image_caption": "a photo of a red canoe tied to a wooden jetty"}
        assert mem.items([hit.item.id + 1])[hit.item.id + 1].meta["image_url"] == "photos/cake.png"  # a list: its first


def test_a_line_reads_its_photo_as_the_same_turn_of_a_locomo_file_does(tmp_path):
    sample = {"sample_id": "s", "conversation": {"session_1": [{**t, "dia_id": f"D1:{n}"} for n, t in enumerate(TURNS, 1)]}}
    locomo = tmp_path / "conv.json"
    locomo.write_text(json.dumps(sample), encoding="utf-8")
    [from_locomo] = read_path(locomo)
    [from_lines] = read_path(chat(tmp_path))

    def photos(parsed):
        return [{k: v for k, v in i.meta.items() if k.startswith("image_")} for i in parsed.items]

    assert photos(from_lines) == photos(from_locomo) and sum(map(bool, photos(from_lines))) == 2


def test_with_an_image_model_the_photo_is_embedded_and_found_by_what_it_shows(tmp_path, openai_server):
    mem = Memory(tmp_path / "m.db", extensions=False, embed_base_url=openai_server.base_url, image_embed_model="clip",
                 request_timeout=5.0, max_retries=0)
    mem.add_extension(ImagesArea(mem))
    assert mem.ingest(chat(tmp_path)).warnings == []
    with sqlite3.connect(mem.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM item_vectors WHERE signature = 'image:clip'").fetchone()[0] == 2
    assert "kayak" not in mem.index.vocab  # no text or caption says it (bm25 reaches the "boat" caption through a related word) …
    [hit] = mem.recall("kayak", strategy="image", top_k=1).hits  # … the photo shows it
    assert hit.item.text == "Look at this!"
    mem.close()


def test_a_missing_photo_is_reported_at_its_line(tmp_path, openai_server):
    path = chat(tmp_path)
    (tmp_path / "photos" / "cake.png").unlink()
    mem = Memory(tmp_path / "m.db", extensions=False, embed_base_url=openai_server.base_url, image_embed_model="clip",
                 request_timeout=5.0, max_retries=0)
    mem.add_extension(ImagesArea(mem))
    [warning] = mem.ingest(path).warnings
    assert warning.startswith(f"{path}:3: image 'photos/cake.png' of 2 not embedded: {path.parent}/photos/cake.png: no such file")
    mem.close()


@pytest.mark.parametrize("field, message", [
    ({"img_url": 5}, "'img_url' must be a string or a list of strings, not 5"),
    ({"img_url": ["photos/boat.png", None]}, "'img_url' must be a string or a list of strings, not ['photos/boat.png', None]"),
    ({"blip_caption": {"text": "a canoe"}}, "'blip_caption' must be a string, not {'text': 'a canoe'}"),
    ({"id": "0"}, "the id '0' is used by an earlier line"),
])
def test_a_bad_photo_field_is_one_line_exit_2_and_nothing_stored(tmp_path, checksum, field, message):
    store = tmp_path / "m.db"
    with Memory(store, extensions=False) as mem:
        mem.add_note("kept from before")
    before = checksum(store)
    turns = [{**TURNS[0], "id": "0"}, TURNS[1], {**TURNS[2], **field}]
    path = chat(tmp_path, turns)
    with Memory(store, extensions=False) as mem, pytest.raises(IngestFailed) as failed:
        mem.ingest(path)
    assert str(failed.value) == f"{path}:3: {message}"
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["--store", str(store), "ingest", str(path)], out=io.StringIO()) == 2
    assert err.getvalue() == f"mnemoscope: error: {path}:3: {message}\n"
    assert checksum(store) == before


def test_a_bad_photo_field_in_a_locomo_file_names_the_turn(tmp_path):
    sample = {"sample_id": "s", "conversation": {"session_1": [
        {"speaker": "Maya", "dia_id": "D1:1", "text": "Hi"}, {"speaker": "Dan", "dia_id": "D1:2", "text": "Look", "img_url": 7}]}}
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(sample, indent=1), encoding="utf-8")
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if '"D1:2"' in text)
    with Memory(tmp_path / "m.db", extensions=False) as mem, pytest.raises(
            IngestFailed, match=rf"conv.json:{line}: conversation s, session_1 turn 2: 'img_url' must be"):
        mem.ingest(path)
