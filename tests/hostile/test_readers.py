"""Issue 11 item 10 and the input classes of item 9: a reader follows its format's spec (a JSON
string may hold U+2028), loosely typed fields are refused with file:line rather than coerced,
deep JSON is one line, a FIFO or a device is refused without being read, and an edit that
changes nothing writes nothing."""

from __future__ import annotations

import json
import os

import pytest

from mnemoscope.engine import IngestFailed, Memory

from .conftest import cli, store_checksum

ODD = "one\u2028two\u2029three\x0cfour\x85five"  # breaks str.splitlines knows, and JSON strings may hold


def locomo(**conversation) -> list[dict]:
    turns = [{"speaker": "Maya", "dia_id": "D1:1", "text": "hello"}, {"speaker": "Dan", "dia_id": "D1:2", "text": "hi"}]
    return [{"sample_id": "s1", "conversation": {"speaker_a": "Maya", "session_1": turns,
                                                 "session_1_date_time": "1:56 pm on 8 May, 2023", **conversation}}]


def test_json_strings_may_hold_every_line_break_unicode_knows(tmp_path):
    lines = [json.dumps({"speaker": "Ann", "text": ODD}, ensure_ascii=False), json.dumps({"speaker": "Ben", "text": "ok"})]
    (tmp_path / "chat.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sample = locomo()
    sample[0]["conversation"]["session_1"][0]["text"] = ODD
    (tmp_path / "conv.json").write_text(json.dumps(sample, ensure_ascii=False), encoding="utf-8")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        report = mem.ingest([tmp_path / "chat.jsonl", tmp_path / "conv.json"])
        assert [len(mem.source_items(s.source_id)) for s in report.sources] == [2, 2]
        texts = {i.text for s in report.sources for i in mem.source_items(s.source_id)}
        assert ODD in texts
        mem.export(tmp_path / "e.jsonl")
    with Memory(tmp_path / "copy.db", extensions=False) as copy:
        assert copy.import_(tmp_path / "e.jsonl").items == 4
        assert ODD in {i.text for s in copy.sources() for i in copy.source_items(s.id)}


@pytest.mark.parametrize("name, content, message", [
    ("id.jsonl", '{"speaker": "A", "text": "x", "id": {"n": 1}}\n', ":1: 'id' must be a string or an integer, not {'n': 1}"),
    ("bool-id.jsonl", '{"speaker": "A", "text": "x"}\n{"speaker": "A", "text": "y", "id": true}\n', ":2: 'id' must be"),
    ("when.jsonl", '{"speaker": "A", "text": "x", "timestamp": false}\n', ":1: 'timestamp' must be a string"),
    ("num.jsonl", '{"speaker": "A", "text": "x", "timestamp": 1683550560}\n', ":1: 'timestamp' must be a string"),
    ("feb.jsonl", '{"speaker": "A", "text": "x", "timestamp": "2023-02-30"}\n', ":1: unreadable timestamp '2023-02-30'"),
    ("date.json", json.dumps(locomo(session_1_date_time=20230508), indent=1), "'session_1_date_time' must be a string"),
    ("feb.json", json.dumps(locomo(session_1_date_time="1:56 pm on 31 February, 2023"), indent=1),
     "session_1_date_time '1:56 pm on 31 February, 2023' is not a date"),
    ("sample.json", json.dumps([{**locomo()[0], "sample_id": {"x": 1}}], indent=1), "'sample_id' must be a string or an integer"),
    ("speaker.json", json.dumps(locomo(speaker_a=["Maya"]), indent=1), "'speaker_a' must be a string"),
    ("deep.json", "[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ("deep.jsonl", '{"speaker": "A", "text": "x"}\n' + "[" * 100_000 + "]" * 100_000 + "\n", ":2: JSON nested too deeply"),
])
def test_loosely_typed_or_impossible_fields_are_refused_at_their_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    store = tmp_path / "m.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", path)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}:" in err and message in err, err
    if name.endswith(".json") and "deep" not in name:
        assert f"{path}:{content.splitlines().index(next(l for l in content.splitlines() if message.split(chr(39))[1] in l)) + 1}:" in err
    assert store_checksum(store) == before


def test_a_deep_export_is_one_line(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"type": "source", "id": 1, "name": "a", "kind": "note"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem, pytest.raises(IngestFailed, match="no export trailer"):
        mem.import_(path)


@pytest.mark.parametrize("make", [lambda p: os.mkfifo(p), None], ids=["fifo", "device"])
def test_fifos_and_devices_are_refused_never_read(tmp_path, make):
    if make is None:
        special = "/dev/zero"
    else:
        special = tmp_path / "pipe.jsonl"
        make(special)  # opening it for reading would wait for a writer forever
    store = tmp_path / "m.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    for argv in (["ingest", special], ["import", special]):
        code, out, err = cli("--store", store, *argv)
        assert code == 2 and err.count("\n") == 1 and ("a named pipe (FIFO)" in err or "a device" in err), err
    if make is not None:
        code, _, err = cli("--store", store, "export", special)
        assert code == 2 and "a named pipe (FIFO); write to a file" in err
    assert store_checksum(store) == before


def test_a_fact_edit_that_changes_nothing_writes_nothing(tmp_path):
    (tmp_path / "chat.txt").write_text("Maya: I adopted a beagle called Biscuit.\nDan: Biscuit is a lovely name.")
    with Memory(tmp_path / "m.db") as mem:
        mem.ingest(tmp_path / "chat.txt")
        fact = mem.knowledge.facts()[0]
        before = store_checksum(mem.path)
        report = mem.knowledge.edit_fact(fact.id, subject=fact.subject, predicate=fact.predicate, object=fact.object)
        assert report.facts_changed == 0
        assert mem.knowledge.fact(fact.id).origin == fact.origin == "rule"
        assert store_checksum(mem.path) == before


@pytest.mark.parametrize("name, value", [("MAX_RETRIES", "١٢"), ("MAX_RETRIES", "1_0"), ("MAX_RETRIES", "9" * 23),
                                         ("REQUEST_TIMEOUT", "٣"), ("REQUEST_TIMEOUT", "1_0.5"), ("REQUEST_TIMEOUT", "1e400")])
def test_a_numeric_setting_is_a_plain_ascii_number_in_range(tmp_path, monkeypatch, name, value):
    monkeypatch.setenv(f"MNEMOSCOPE_{name}", value)
    code, out, err = cli("--store", tmp_path / "m.db", "stats")
    assert code == 2 and out == "" and err.count("\n") == 1 and f"MNEMOSCOPE_{name}: {value!r} is not" in err
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_a_file_saved_as_utf16_or_utf32_with_its_bom_is_read_as_the_text_it_is(tmp_path, codec):
    """Windows editors and PowerShell's `>` write UTF-16 with a byte-order mark: that is text whose
    encoding the file declares, not a binary file."""
    bom = {"utf-16-be": "\ufeff"}.get(codec, "")  # utf-16 and utf-32 write their BOM themselves
    (tmp_path / "chat.txt").write_bytes((bom + "Ann: the harbour lanterns\r\nBen: the ferry at dawn\r\n").encode(codec))
    (tmp_path / "notes.md").write_bytes((bom + "# Quay\nThe quay is swept at noon.\n").encode(codec))
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        report = mem.ingest([tmp_path / "chat.txt", tmp_path / "notes.md"])
        texts = [[i.text for i in mem.source_items(s.source_id)] for s in report.sources]
    assert texts == [["the harbour lanterns", "the ferry at dawn"], ["The quay is swept at noon."]]


def test_a_utf16_file_that_is_not_is_one_line_naming_its_encoding(tmp_path):
    path = tmp_path / "broken.md"
    path.write_bytes(b"\xff\xfe" + "# T\nhello".encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate half
    store = tmp_path / "m.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", path)
    assert code == 2 and err.count("\n") == 1 and "not UTF-16 text" in err, err
    assert store_checksum(store) == before


def test_a_transcript_whose_speakers_are_named_beyond_ascii_is_a_transcript(tmp_path):
    """A speaker's name starts with any capital or uncased letter (Émile, Özlem, Иван, 小明, with a
    full-width colon as Chinese and Japanese write it); a lower-case word before a colon ("note:")
    is no speaker."""
    lines = ["Émile: How was the trip?", "Özlem: Long, but the hotel was fine.", "Иван: Я тоже был там.",
             "小明：我们明天去海边。", "민지: 좋아요!"]
    (tmp_path / "chat.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("note: buy bread\ntodo: call the vet\n", encoding="utf-8")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        chat, notes = mem.ingest([tmp_path / "chat.txt", tmp_path / "notes.txt"]).sources
        turns = [(i.speaker, i.text) for i in mem.source_items(chat.source_id)]
        assert turns == [("Émile", "How was the trip?"), ("Özlem", "Long, but the hotel was fine."),
                         ("Иван", "Я тоже был там."), ("小明", "我们明天去海边。"), ("민지", "좋아요!")]
        assert [i.kind for i in mem.source_items(notes.source_id)] == ["chunk"]


def test_a_chat_files_image_parts_are_its_photos_or_counted_never_dropped_unsaid(tmp_path):
    """An OpenAI chat file's first image part per message is the turn's photo (as LoCoMo's
    img_url); the other parts are counted in the source's meta. Before, every image, audio and
    file part was dropped and nothing said so."""
    lines = [{"role": "user", "content": [{"type": "text", "text": "My kayak."},
                                          {"type": "image_url", "image_url": {"url": "https://photos.example/k.png"}},
                                          {"type": "file", "file": {"file_id": "f1"}}]},
             {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "https://photos.example/r.png"}}]},
             {"role": "assistant", "content": "Lovely."}]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(m) for m in lines) + "\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        [report] = mem.ingest(tmp_path / "chat.jsonl").sources
        first, _ = mem.source_items(report.source_id)
        assert first.meta["image_url"] == "https://photos.example/k.png"
        assert mem.store.source(report.source_id).meta["parts_left_out"] == {"file": 1, "image_url": 1}


def test_a_document_of_one_endless_line_is_cut_into_chunks_a_hit_can_carry(tmp_path):
    """A file without sentence ends (one 1.6 MB line, and a 50 KB word) was one item of all of it,
    which every hit on it then carried whole (fails before: one item of 1.6 MB). It is
    cut at spaces into chunks of at most MAX_CHUNK_CHARS, every word kept."""
    most = 20_000  # engine/ingest.py's MAX_CHUNK_CHARS
    line = "harbour lantern ferry " * 75_000
    (tmp_path / "line.txt").write_text(line + "\n\n" + "x" * 50_000)
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        [report] = mem.ingest(tmp_path / "line.txt").sources
        texts = [i.text for i in mem.source_items(report.source_id)]
        hit = mem.recall("lantern", top_k=1, strategy="bm25").hits[0]
    assert texts and max(map(len, texts)) <= most and len(hit.item.text) <= most
    assert " ".join(texts[:-3]).split() == line.split() and "".join(texts[-3:]) == "x" * 50_000


def test_an_inline_image_past_the_cap_is_counted_not_kept_in_the_turn(tmp_path):
    """A turn's photo is kept in its meta, which every recall returning it reads: a 2 MB data:
    URL made the store and each such recall carry it (review, 13:49; fails before: kept whole).
    It is left out and counted; a small one is still the photo."""
    small, big = "data:image/png;base64," + "A" * 1000, "data:image/png;base64," + "A" * (2 * 2**20)
    lines = [{"role": "user", "content": [{"type": "text", "text": "Screenshot one."},
                                          {"type": "image_url", "image_url": {"url": big}}]},
             {"role": "user", "content": [{"type": "text", "text": "Screenshot two."},
                                          {"type": "image_url", "image_url": {"url": small}}]}]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(m) for m in lines) + "\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        [report] = mem.ingest(tmp_path / "chat.jsonl").sources
        first, second = mem.source_items(report.source_id)
        assert "image_url" not in first.meta and second.meta["image_url"] == small
        assert mem.store.source(report.source_id).meta["parts_left_out"] == {"image_url": 1}
    assert (tmp_path / "m.db").stat().st_size < 2**20
