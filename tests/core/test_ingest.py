"""Readers: every format, and errors that name the file and the line."""

import json

import pytest

from mnemoscope.engine.ingest import IngestError, discover, parse_session_date, read_path


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def locomo_sample(**overrides):
    conv = {
        "speaker_a": "Maya", "speaker_b": "Dan",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Maya", "dia_id": "D1:1", "text": "I adopted a puppy!"},
            {"speaker": "Dan", "dia_id": "D1:2", "text": "Show me", "img_url": ["http://x/p.jpg"],
             "blip_caption": "a photo of a small brown dog"},
        ],
        "session_2_date_time": "9:00 am on 1 June, 2023",
        "session_2": [{"speaker": "Maya", "dia_id": "D2:1", "text": "He chewed my shoes."}],
    }
    conv.update(overrides)
    return {"sample_id": "conv-x", "conversation": conv, "qa": []}


def test_plain_text_is_chunked(tmp_path):
    f = write(tmp_path / "a.txt", "First sentence here. Second sentence there.\n\nA new paragraph.")
    [parsed] = read_path(f, chunk_tokens=6)
    assert parsed.source.kind == "document"
    assert [i.text for i in parsed.items] == ["First sentence here.", "Second sentence there.", "A new paragraph."]
    assert [i.position for i in parsed.items] == [0, 1, 2]


def test_markdown_chunks_keep_their_heading_path(tmp_path):
    f = write(tmp_path / "g.md", "# Bread\nIntro text.\n## Starter\nFeed it daily.\n```\n# not a heading\n```\n## Baking\nHot oven.\n")
    [parsed] = read_path(f)
    paths = [i.meta["heading_path"] for i in parsed.items]
    assert paths == [["Bread"], ["Bread", "Starter"], ["Bread", "Baking"]]
    assert parsed.items[1].title == "Bread › Starter"
    assert "# not a heading" in parsed.items[1].text
    assert parsed.items[2].meta["line"] == 8
    assert parsed.source.meta["title"] == "Bread"


def test_locomo_json_turns_keys_dates_and_captions(tmp_path):
    f = write(tmp_path / "c.json", json.dumps([locomo_sample()]))
    [parsed] = read_path(f)
    assert parsed.source.kind == "conversation"
    assert parsed.source.name.endswith("#conv-x")
    assert [i.key for i in parsed.items] == ["D1:1", "D1:2", "D2:1"]
    assert [i.timestamp for i in parsed.items] == ["2023-05-08T13:56:00"] * 2 + ["2023-06-01T09:00:00"]
    assert parsed.items[1].meta["image_caption"] == "a photo of a small brown dog"
    assert "[image: a photo of a small brown dog]" in parsed.items[1].search_text()
    assert parsed.items[2].meta["session"] == 2 and parsed.items[0].speaker == "Maya"


def test_session_dates_parse():
    assert parse_session_date("10:04 am on 23 January, 2023") == "2023-01-23T10:04:00"
    assert parse_session_date("12:30 am on 2 Feb, 2024") == "2024-02-02T00:30:00"
    assert parse_session_date("2024-03-01T10:00:00Z") == "2024-03-01T10:00:00+00:00"
    assert parse_session_date("someday") is None


def test_jsonl_chat(tmp_path):
    f = write(tmp_path / "chat.jsonl", '{"speaker": "A", "text": "hi", "timestamp": "2024-01-01T10:00:00"}\n\n'
                                       '{"speaker": "B", "text": "hello"}\n')
    [parsed] = read_path(f)
    turns = list(parsed.items)
    assert [(i.speaker, i.text, i.meta["line"]) for i in turns] == [("A", "hi", 1), ("B", "hello", 3)]
    assert turns[0].timestamp == "2024-01-01T10:00:00"


def test_transcript_with_continuation_lines(tmp_path):
    f = write(tmp_path / "t.txt", "Alice: Hello there.\nBob: Hi Alice.\nhow are you?\nAlice: Fine.\n")
    [parsed] = read_path(f)
    assert [(i.speaker, i.text) for i in parsed.items] == [("Alice", "Hello there."), ("Bob", "Hi Alice. how are you?"), ("Alice", "Fine.")]
    assert parsed.source.meta["speakers"] == ["Alice", "Bob"]


def test_discover_expands_folders_and_skips_unsupported(tmp_path):
    write(tmp_path / "a.md", "# A\ntext")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "b.txt", "text")
    (tmp_path / "img.png").write_bytes(b"\x89PNG")
    write(tmp_path / ".hidden.md", "x")
    files, skipped, _ = discover([tmp_path])
    assert [f.path.name for f in files] == ["a.md", "b.txt"]
    assert [f.name for f in skipped] == ["img.png"]


def error_of(path) -> str:
    with pytest.raises(IngestError) as info:
        read_path(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


@pytest.mark.parametrize("name,content,expected", [
    ("bad.json", '[{"conversation": {"session_1": [\n{"speaker": "A", "text": "x"},\n{oops}]}}]', ":3: malformed JSON"),
    ("bad.jsonl", '{"speaker": "A", "text": "x"}\n{"speaker": "A"}\n', ":2: expected an object"),
    ("bad2.jsonl", '{"speaker": "A", "text": "x"}\nnot json\n', ":2: malformed JSON"),
    ("when.jsonl", '{"speaker": "A", "text": "x", "timestamp": "yesterday"}\n', ":1: unreadable timestamp"),
    ("t.txt", "no speaker here\nAlice: hi\nBob: yo\nAlice: ok\n", ":1: transcript starts without"),
    ("empty.md", "   \n", ": the file is empty"),
    ("x.csv", "a,b\n", "unsupported file type"),
])
def test_bad_files_get_one_line_errors(tmp_path, name, content, expected):
    assert expected in error_of(write(tmp_path / name, content))


def test_locomo_turn_missing_a_field_names_the_line(tmp_path):
    sample = locomo_sample(session_1=[{"speaker": "Maya", "dia_id": "D1:1", "text": "ok"}, {"dia_id": "D1:2", "text": "no speaker"}])
    path = write(tmp_path / "c.json", json.dumps([sample], indent=1))
    message = error_of(path)
    line = next(n for n, l in enumerate(path.read_text().splitlines(), 1) if '"D1:2"' in l)
    assert f":{line}:" in message and "missing field(s) speaker" in message


def test_locomo_without_sessions_and_duplicate_ids(tmp_path):
    assert "no session_N" in error_of(write(tmp_path / "a.json", json.dumps({"conversation": {"speaker_a": "A"}})))
    dup = locomo_sample(session_2=[{"speaker": "Maya", "dia_id": "D1:1", "text": "again"}])
    assert "duplicate dia_id 'D1:1'" in error_of(write(tmp_path / "b.json", json.dumps(dup)))


def test_binary_and_non_utf8_files(tmp_path):
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"abc\x00\x01\x02")
    assert "binary file" in error_of(binary)
    latin = tmp_path / "l.txt"
    latin.write_bytes(b"line one\ncaf\xe9\n")
    assert ":2: not UTF-8" in error_of(latin)


def test_missing_file(tmp_path):
    with pytest.raises(IngestError, match="no such file"):
        discover([tmp_path / "nope.md"])
