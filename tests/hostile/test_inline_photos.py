"""A LoCoMo or JSON-lines turn's photo (``img_url``) is held to the chat readers' rule: a ``data:``
URL over 1 MiB is left out, not kept in the turn's meta that every recall returning it carries, and
every reference not kept is counted in the source's ``meta.parts_left_out`` (before: kept whole,
and a list's further references dropped without a count)."""

from __future__ import annotations

import base64
import json

from mnemoscope.engine import Memory
from mnemoscope.engine.conversations import MAX_INLINE_IMAGE_CHARS
from mnemoscope.engine.ingest import MAX_LABEL_CHARS

from .conftest import cli, store_checksum

BIG = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + b"\x00" * MAX_INLINE_IMAGE_CHARS).decode()
SMALL = "data:image/png;base64," + base64.b64encode(b"\x89PNG small").decode()


def _stored(tmp_path, name: str, content: str):
    path = tmp_path / name
    path.write_text(content)
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        report = mem.ingest(path).sources[0]
        source = next(s for s in mem.sources() if s.id == report.source_id)
        return source.meta, mem.source_items(report.source_id)


def test_a_jsonl_turns_inline_photo_over_the_limit_is_left_out_and_counted(tmp_path):
    lines = [{"speaker": "Ann", "text": "my kayak", "img_url": BIG},
             {"speaker": "Bob", "text": "two photos", "img_url": [BIG, SMALL, "https://example.org/b.jpg"]},
             {"speaker": "Ann", "text": "a link", "img_url": "https://example.org/a.jpg", "blip_caption": "a red kayak"}]
    meta, items = _stored(tmp_path, "chat.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    assert [i.meta.get("image_url") for i in items] == [None, SMALL, "https://example.org/a.jpg"]
    assert meta["parts_left_out"] == {"img_url": 3}  # the two large ones and the list's third
    assert items[2].meta["image_caption"] == "a red kayak"


def test_a_locomo_turns_inline_photo_over_the_limit_is_left_out_and_counted(tmp_path):
    sample = {"sample_id": "s", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "look", "img_url": [BIG], "blip_caption": "a harbour"},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "nice"}]}}
    meta, items = _stored(tmp_path, "locomo.json", json.dumps([sample]))
    assert "image_url" not in items[0].meta and items[0].meta["image_caption"] == "a harbour"
    assert meta["parts_left_out"] == {"img_url": 1}


def test_a_file_whose_photos_are_all_kept_says_nothing_left_out(tmp_path):
    meta, items = _stored(tmp_path, "chat.jsonl", json.dumps({"speaker": "Ann", "text": "hi", "img_url": SMALL}) + "\n")
    assert items[0].meta["image_url"] == SMALL and "parts_left_out" not in meta


def test_a_photo_caption_over_the_limit_is_one_line_and_stores_nothing(tmp_path):
    """The indexes read a caption with the turn's text (before: a caption of any length)."""
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"speaker": "Ann", "text": "hi", "blip_caption": "c " * MAX_LABEL_CHARS}) + "\n")
    store = tmp_path / "m.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", path)
    assert code == 2 and err.count("\n") == 1, err
    assert "chat.jsonl:1: turn '0': its photo's caption is 4,000 characters long; at most 2,000" in err, err
    assert store_checksum(store) == before
