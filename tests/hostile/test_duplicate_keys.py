"""A JSON object that names a key twice (``{"speaker": "Ann", "speaker": "Bob"}``) is refused with
the file and the line the object starts on: Python's parser kept the last without a word, so the
file said one thing and another was stored (before: stored as Bob). Nothing is stored."""

from __future__ import annotations

import json

import pytest

from mnemoscope.engine import Memory

from .conftest import cli, edited_export, store_checksum

TWICE = "an object names the key 'speaker' twice"


def _locomo() -> str:
    turn = '{"speaker": "Ann", "dia_id": "D1:2", "speaker": "Bob", "text": "I moved to Cork."}'
    return ('[{"sample_id": "s", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",\n'
            ' "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi."},\n  ' + turn + "]}}]\n")


@pytest.mark.parametrize("name, content, line", [
    ("chat.jsonl", '{"speaker": "Ann", "text": "hi"}\n{"speaker": "Ann", "speaker": "Bob", "text": "I moved to Cork."}\n', 2),
    ("openai.jsonl", '{"role": "user", "content": "hi"}\n\n{"role": "user", "content": "a", "content": "b"}\n', 3),
    ("locomo.json", _locomo(), 3),
    ("messages.json", '{"messages": [\n {"role": "user",\n  "content": "a"},\n {"role": "user", "name": "Ann",'
     ' "name": "Bob", "content": "b"}]}', 4),
], ids=["jsonl", "openai-jsonl", "locomo", "openai-json"])
def test_a_key_named_twice_is_refused_with_its_file_and_line(tmp_path, name, content, line):
    path = tmp_path / name
    path.write_text(content)
    store = tmp_path / "m.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", path)
    key = "content" if name == "openai.jsonl" else "name" if name == "messages.json" else "speaker"
    assert code == 2 and err.count("\n") == 1, err
    assert f"{name}:{line}: {TWICE.replace('speaker', key)} (which one is meant?)" in err, err
    assert store_checksum(store) == before


def test_the_same_key_in_two_objects_is_no_duplicate(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps({"speaker": s, "text": "hi", "meta": {"speaker": s}}) + "\n" for s in ("Ann", "Bob")))
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        items = mem.source_items(mem.ingest(path).sources[0].source_id)
    assert [i.speaker for i in items] == ["Ann", "Bob"]


def test_an_export_record_naming_a_key_twice_is_refused_with_its_line(tmp_path):
    export, line, target = edited_export(tmp_path, lambda item: item.replace('"text": ', '"text": "other", "text": ', 1))
    before = store_checksum(target)
    code, out, err = cli("--store", target, "import", export)
    assert code == 2 and err.count("\n") == 1, err
    assert f"all.jsonl:{line}: not a Mnemoscope export record (an object names the key 'text' twice" in err, err
    assert store_checksum(target) == before
