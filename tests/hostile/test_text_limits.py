"""One limit per stored text, whatever made it: a turn, a transcript line, a chat message, a note
or a document holds at most MAX_CHUNK_CHARS characters per item. A longer text is split into
neighbouring items, nothing left out; a speaker or title that every piece would repeat is
refused with one line, the store unchanged."""

from __future__ import annotations

import json
import re
import sqlite3
import time

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.errors import IngestError
from mnemoscope.engine.ingest import MAX_CHUNK_CHARS, MAX_LABEL_CHARS, read_transcript

from .conftest import cli, edited_export, store_checksum

# A long turn: words, as a pasted document would be (60,000+ characters: three or four items).
LONG = " ".join(f"harbour{n} lantern" for n in range(4_000))


def _files(tmp_path):
    """The same long turn, between two short ones, in each conversation format that reads files."""
    turns = [("Ann", "We met at the quay."), ("Bob", LONG), ("Ann", "Then the ferry left.")]
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text("".join(json.dumps({"speaker": s, "text": t}) + "\n" for s, t in turns))
    transcript = tmp_path / "talk.txt"
    transcript.write_text("".join(f"{s}: {t}\n" for s, t in turns))
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([{"sample_id": "x", "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": s, "dia_id": f"D1:{n}", "text": t} for n, (s, t) in enumerate(turns, 1)]}}]))
    openai = tmp_path / "openai.jsonl"
    openai.write_text("".join(json.dumps({"role": "user" if s == "Ann" else "assistant", "content": t}) + "\n"
                              for s, t in turns))
    return {"jsonl": jsonl, "transcript": transcript, "locomo": locomo, "openai": openai}


@pytest.mark.parametrize("kind", ["jsonl", "transcript", "locomo", "openai"])
def test_a_long_turn_is_split_into_neighbouring_items_with_nothing_left_out(tmp_path, kind):
    path = _files(tmp_path)[kind]
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        report = mem.ingest(path)
        items = mem.source_items(report.sources[0].source_id)
    assert items and len(items) > 3  # (before: 3 items, one of 79,000 characters)
    assert all(len(i.text) <= MAX_CHUNK_CHARS for i in items)
    assert [i.position for i in items] == list(range(len(items)))
    long = items[1:-1]
    assert long and {i.speaker for i in long} == {items[1].speaker} and items[1].speaker != items[0].speaker
    assert " ".join(i.text for i in long) == LONG
    assert [i.meta["part"] for i in long] == [f"{n}/{len(long)}" for n in range(1, len(long) + 1)]
    assert [i.key for i in long[1:]] == [f"{long[0].key}+{n}" for n in range(2, len(long) + 1)]
    assert items[-1].text == "Then the ferry left."


def test_a_long_note_is_split_too(tmp_path):
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        first = mem.add_note(LONG, title="pasted")
        items = mem.source_items(first.source_id)
    assert first.id == items[0].id and len(items) > 1
    assert all(len(i.text) <= MAX_CHUNK_CHARS and i.title == "pasted" for i in items)
    assert " ".join(i.text for i in items) == LONG


def test_a_split_turns_photo_stays_with_its_first_piece(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"speaker": "Bob", "text": LONG, "img_url": "https://example.org/quay.jpg",
                                "blip_caption": "a quay at dusk"}) + "\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        items = mem.source_items(mem.ingest(path).sources[0].source_id)
    assert len(items) > 1
    assert items[0].meta["image_url"] == "https://example.org/quay.jpg" and items[0].meta["image_caption"] == "a quay at dusk"
    assert all("image_url" not in i.meta and "image_caption" not in i.meta and i.meta["line"] == 1 for i in items[1:])


def test_a_piece_key_a_reader_already_uses_is_not_taken(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"speaker": "Bob", "text": LONG, "id": "a"}) + "\n"
                    + json.dumps({"speaker": "Ann", "text": "ok", "id": "a+2"}) + "\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        items = mem.source_items(mem.ingest(path).sources[0].source_id)
    keys = [i.key for i in items]
    assert len(keys) == len(set(keys)) and keys[:2] == ["a", "a+2+"] and keys[-1] == "a+2"
    assert items[-1].text == "ok"


def test_a_speaker_over_the_limit_is_one_line_and_stores_nothing(tmp_path):
    good = tmp_path / "a.jsonl"
    good.write_text(json.dumps({"speaker": "Ann", "text": "fine"}) + "\n")
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps({"speaker": "Ann", "text": "hi"}) + "\n"
                   + json.dumps({"speaker": "B" * (MAX_LABEL_CHARS + 1), "text": "hello"}) + "\n")
    store = tmp_path / "m.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", good, bad)
    assert code == 2 and err.count("\n") == 1, err
    assert f"b.jsonl:2: turn '1': its speaker is {MAX_LABEL_CHARS + 1:,} characters long" in err, err
    assert store_checksum(store) == before


def test_a_remembered_title_over_the_limit_is_refused_before_a_write(tmp_path):
    store = tmp_path / "m.db"
    with Memory(store, extensions=False) as mem:
        mem.add_note("first", title="kept")
    before = store_checksum(store)
    with Memory(store, extensions=False) as mem, pytest.raises(IngestError, match="its title is 2,001 characters"):
        mem.add_note("second", title="t" * (MAX_LABEL_CHARS + 1))
    assert store_checksum(store) == before


def test_a_markdown_heading_longer_than_a_heading_is_read_as_text(tmp_path):
    """Every chunk of a section repeats its heading path as its title: a 'heading' of a
    megabyte would be stored once per chunk (before: 40 chunks × 1 MB)."""
    path = tmp_path / "doc.md"
    heading = "# " + "heading " * 125_000
    path.write_text(heading + "\n\n" + "A sentence about the harbour. " * 4_000 + "\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        items = mem.source_items(mem.ingest(path).sources[0].source_id)
    assert items and all(i.title == "" and len(i.text) <= MAX_CHUNK_CHARS for i in items)
    assert sum(len(i.text) for i in items) >= len(heading) - 2


def test_a_transcript_turn_of_many_lines_is_read_in_linear_time():
    """A line without a speaker continues the turn before it; joined one line at a time, a turn
    of 40,000 lines took seconds of CPU (quadratic: 8 MB took 17 s)."""
    text = "Ann: hello\n" + "and then some more words of the same long turn here\n" * 40_000
    started = time.process_time()
    parsed = read_transcript("t.txt", text, "x")
    took = time.process_time() - started
    assert len(parsed.items) == 1 and parsed.items[0].text.count("and then") == 40_000
    assert took < 0.5, took


def test_an_export_of_a_store_made_before_the_limit_imports_split_with_its_knowledge(tmp_path):
    """A store made before every text was held to the limit holds longer turns and exports them;
    import takes what the store held, split as an ingest splits it, the knowledge on the first
    piece (fails before: the whole import refused for the one long item; review's 16:22)."""
    old = tmp_path / "old.db"
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"speaker": "Maya", "text": "Maya adopted a dog named Pepper in April."}) + "\n"
                    + json.dumps({"speaker": "Dan", "text": "Dan moved to Cork."}) + "\n")
    with Memory(old) as mem:
        source = mem.ingest(chat).sources[0].source_id
        first = mem.source_items(source)[0]
        facts_before = sorted((f.subject, f.predicate, f.object) for f in mem.knowledge.facts(None, 100))
    with sqlite3.connect(old) as conn:  # the turn as an older version stored it: whole
        conn.execute("UPDATE items SET text = ? WHERE id = ?", (first.text + " " + LONG, first.id))
    export = tmp_path / "old.jsonl"
    assert cli("--store", old, "export", export)[0] == 0
    new = tmp_path / "new.db"
    code, out, err = cli("--store", new, "import", export)
    assert code == 0, err
    with Memory(new) as mem:
        items = mem.source_items(mem.sources()[0].id)
        facts = mem.knowledge.facts(None, 100)
    assert len(items) > 3 and all(len(i.text) <= MAX_CHUNK_CHARS for i in items)
    assert " ".join(i.text for i in items[:-1]) == first.text + " " + LONG and items[-1].text == "Dan moved to Cork."
    assert facts_before and sorted((f.subject, f.predicate, f.object) for f in facts) == facts_before
    pepper = [f for f in facts if "Pepper" in f.object]
    assert pepper and all(f.provenance == [items[0].id] for f in pepper)


def test_a_file_with_a_label_over_the_limit_is_an_error_of_its_own(tmp_path):
    """The label check ran at store time over the whole batch: the preview (parse) said 0 errors,
    then the whole batch was refused, and a lenient ingest did not set the one bad file aside
    (fails before: no error in the preview; IngestError out of ingest(strict=False))."""
    good = tmp_path / "a.jsonl"
    good.write_text(json.dumps({"speaker": "Ann", "text": "The ferry leaves at dawn."}) + "\n")
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps({"speaker": "Ann", "text": "hi"}) + "\n"
                   + json.dumps({"speaker": "B" * (MAX_LABEL_CHARS + 1), "text": "hello"}) + "\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        parsed, _skipped, errors, _links = mem.parse([good, bad])
        assert [p.source.name for p in parsed] == [str(good)]
        assert [str(e) for e in errors] == [f"{bad}:2: turn '1': its speaker is 2,001 characters long; at most 2,000;"
                                            " nothing was stored"]
        report = mem.ingest([good, bad], strict=False)
        assert [s.name for s in report.sources] == [str(good)] and len(report.errors) == 1
        assert [s.name for s in mem.sources()] == [str(good)]


def test_a_control_character_in_a_speaker_or_title_is_refused_at_every_edge(tmp_path):
    """One rule for a label, whichever edge makes it: before, only the MCP server refused an
    escape sequence in a name, and a file's or a note's was stored (fails before: exit 0)."""
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"speaker": "Ann", "text": "hi"}) + "\n"
                    + json.dumps({"speaker": "Bob\x1b]0;pwned\x07", "text": "hello"}) + "\n")
    store = tmp_path / "m.db"
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    code, _out, err = cli("--store", store, "ingest", chat)
    assert code == 2 and err.count("\n") == 1, err
    assert "chat.jsonl:2: turn '1': its speaker holds a control character (U+001B at 3); nothing was stored" in err, err
    with Memory(store, extensions=False) as mem, pytest.raises(IngestError, match=r"its title holds a control character \(U\+000A at 1\)"):
        mem.add_note("a note", title="a\nb")
    assert store_checksum(store) == before


def test_a_tab_in_a_markdown_heading_is_read_as_a_space(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("# Harbour\tlights\n\nThe lanterns are lit at dusk.\n")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        [item] = mem.source_items(mem.ingest(doc).sources[0].source_id)
    assert item.title == "Harbour lights"


@pytest.mark.parametrize("speaker, says", [
    ("B" * (MAX_LABEL_CHARS + 1), "note '0': its speaker: cut from 2,001 to 2,000 characters"),
    ("Bob\x1b[2J", "note '0': its speaker: control characters made spaces"),
    ("\u202eBob\u2069", "note '0': its speaker: invisible characters dropped"),
], ids=["long", "control", "invisible"])
def test_an_export_holding_a_label_an_older_store_allowed_is_imported_whole(tmp_path, speaker, says):
    """A store made before the label rule exports such labels; the import refused the whole
    backup (fails before: exit 2, nothing imported). It keeps every record, fits the label to the
    rule and says so."""
    export, _line, target = edited_export(
        tmp_path, lambda line: json.dumps({**json.loads(line), "speaker": speaker}) + "\n")
    code, out, err = cli("--store", target, "import", export)
    assert code == 0 and says in out, (out, err)
    with Memory(target, extensions=False) as mem:
        [item] = [i for s in mem.sources() for i in mem.source_items(s.id)]
    assert item.text == "a short note"
    assert item.speaker == speaker.replace("\x1b", " ").replace("\u202e", "").replace("\u2069", "")[:MAX_LABEL_CHARS]


def test_a_chat_messages_name_that_is_no_label_is_refused_with_its_line(tmp_path):
    """An OpenAI-style chat file's message names became turns' speakers with no line in the
    refusal (the store-time check knew only the turn); the reader refuses it where it reads it."""
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n"
                    + json.dumps({"role": "user", "content": "yo", "name": "Ann\x1b[2J"}) + "\n")
    code, _out, err = cli("--store", tmp_path / "m.db", "ingest", chat)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{chat}:2: 'name' holds a control character (U+001B at 3)" in err, err


def test_a_locomo_speaker_that_is_no_label_is_refused_with_its_line(tmp_path):
    """A LoCoMo turn's speaker was refused by the check over parsed items, which knows no line
    (fails before: no line in the refusal)."""
    sample = {"sample_id": "s1", "conversation": {"speaker_a": "Ann", "session_1_date_time": "1:56 pm on 8 May, 2023",
              "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hi"},
                            {"speaker": "B" * (MAX_LABEL_CHARS + 1), "dia_id": "D1:2", "text": "hello"}]}}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample], indent=1))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if '"D1:2"' in text)
    code, _out, err = cli("--store", tmp_path / "m.db", "ingest", path)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{path}:{line}: conversation s1, session_1 turn 2: 'speaker' is 2,001 characters long; at most 2,000" in err, err


def chatgpt_conversation(conv_id: str, title: str) -> dict:
    """One conversation of a ChatGPT data export (conversations.json), a user's line and a reply."""
    def node(node_id, role, text, parent, children):
        return {"id": node_id, "parent": parent, "children": children,
                "message": {"id": node_id, "author": {"role": role}, "content": {"content_type": "text", "parts": [text]}}}
    return {"title": title, "conversation_id": conv_id, "create_time": 1700000000, "current_node": "b",
            "mapping": {"a": node("a", "user", "Where is the harbour?", None, ["b"]),
                        "b": node("b", "assistant", "By the old lighthouse.", "a", [])}}


def test_a_chat_exports_title_that_is_no_label_is_refused_with_its_line(tmp_path):
    """A ChatGPT export's conversation title, and an OpenAI chat file's title, became the source's
    title whatever they held (fails before: stored, exit 0): they are labels, under the one rule,
    refused where the file is read with the file and line, the store unchanged."""
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([chatgpt_conversation("c1", "Harbour"),
                                  chatgpt_conversation("c2", "Harbour\x1b]0;pwned\x07")], indent=1))
    line = [n for n, text in enumerate(export.read_text().splitlines(), 1) if text == " {"][1]
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}], "title": "T" * (MAX_LABEL_CHARS + 1)},
                               indent=1))
    title_line = next(n for n, text in enumerate(chat.read_text().splitlines(), 1) if '"title"' in text)
    store = tmp_path / "m.db"
    each_refused_in_one_line(store, [(export, f"{export}:{line}: conversation 1: 'title' holds a control character (U+001B at 7)"),
                                     (chat, f"{chat}:{title_line}: 'title' is 2,001 characters long; at most 2,000")])
    export.write_text(json.dumps([chatgpt_conversation("c1", "Harbour")]))
    code, out, err = cli("--store", store, "ingest", export)
    assert code == 0, err
    with Memory(store, extensions=False) as mem:
        assert [s.meta["title"] for s in mem.sources()] == ["Harbour"]


def test_a_chat_exports_author_name_that_is_no_label_is_refused_with_its_conversations_line(tmp_path):
    """A ChatGPT export's author name was refused by the check over parsed items, which names the
    turn but no line (fails before): the reader refuses it with its conversation's line."""
    named = chatgpt_conversation("c2", "Harbour")
    named["mapping"]["b"]["message"]["author"]["name"] = "Bot\x1b[2J"
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([chatgpt_conversation("c1", "Quay"), named], indent=1))
    line = [n for n, text in enumerate(export.read_text().splitlines(), 1) if text == " {"][1]
    code, _out, err = cli("--store", tmp_path / "m.db", "ingest", export)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{export}:{line}: conversation 1: message 'b': author 'name' holds a control character (U+001B at 3)" in err, err


def test_an_invisible_character_in_a_label_is_refused_with_its_line(tmp_path):
    """A bidi override shows a label's text reversed ("Harbour\u202efdp.exe" reads as
    "Harbourexe.pdf"), an isolate or a zero-width space hides what it holds: a label that shows
    one text and holds another was stored (fails before: exit 0). The reader refuses it where it
    reads it, as it refuses a control character."""
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([chatgpt_conversation("c1", "Harbour\u202efdp.exe")], indent=1))
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"speaker": "Ann", "text": "hi"}) + "\n"
                    + json.dumps({"speaker": "An\u200bn", "text": "hello"}) + "\n")
    store = tmp_path / "m.db"
    each_refused_in_one_line(store, [(export, f"{export}:2: conversation 0: 'title' holds an invisible character (U+202E at 7)"),
                                     (chat, f"{chat}:2: turn '1': its speaker holds an invisible character (U+200B at 2)")])
    before = store_checksum(store)
    with Memory(store, extensions=False) as mem, pytest.raises(IngestError, match=r"its title holds an invisible character \(U\+2066 at 0\)"):
        mem.add_note("a note", title="\u2066a")
    assert store_checksum(store) == before


def each_refused_in_one_line(store, refusals: list[tuple]) -> None:
    """Ingest each (file, what the refusal says) into a new ``store``: each is refused in one line
    saying it, exit 2, the store unchanged."""
    assert refusals
    Memory(store, extensions=False).close()
    before = store_checksum(store)
    for path, says in refusals:
        code, _out, err = cli("--store", store, "ingest", path)
        assert code == 2 and err.count("\n") == 1 and says in err, err
    assert store_checksum(store) == before


HIDDEN = [("Bob\U000E0069\U000E0067\U000E006E", "U+E0069"),  # tag characters: hidden text ("ASCII smuggling")
          ("\u3164", "U+3164"), ("\uffa0", "U+FFA0"), ("\u115f", "U+115F"), ("\u1160", "U+1160"),  # Hangul fillers: blank
          ("A\u00adB", "U+00AD"), ("A\u180eB", "U+180E"), ("\u2800", "U+2800"), ("A\u034fB", "U+034F"),
          # a flag hiding other text in its tags (review, 05:33): "ignore all p" shows as one flag
          ("\U0001F3F4" + "".join(chr(0xE0000 + ord(c)) for c in "ignore all p") + "\U000E007F", "U+E0069")]


def test_a_label_holding_text_no_one_sees_is_refused_and_a_flag_is_not(tmp_path):
    """Review's finding on 3461309: each of these shows nothing, or carries text no one sees,
    and passed (fails before: stored). A subdivision flag (the black flag, tag letters, a cancel
    tag) is the one use of the tag characters and shows as a flag: a title may hold it."""
    scotland = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
    assert HIDDEN
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        for title, code in HIDDEN:
            with pytest.raises(IngestError, match=rf"holds an invisible character \({re.escape(code)} at"):
                mem.add_note("a note", title=title)
        [item] = mem.source_items(mem.add_note("a note", title=f"Trip {scotland}").source_id)
    assert item.title == f"Trip {scotland}"


def test_a_text_file_or_note_past_max_text_bytes_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """A text or Markdown file is read, chunked and indexed whole in one transaction: a 200 MB
    one took minutes and its memory. Past ``max_text_bytes`` it is refused by its size, before a
    byte is read (a sparse file of zeros would otherwise be refused as binary), in one line naming
    the limit, exit 2, the store unchanged; a chat file is not a text (its limit is the file's)."""
    store = tmp_path / "m.db"
    with Memory(store, extensions=False) as mem:
        mem.add_note("The quay at dawn.", name="kept")
    before = store_checksum(store)
    book = tmp_path / "book.md"
    with open(book, "wb") as fh:
        fh.truncate(12 * 2**20)  # (fails before: read whole, then refused as a binary file)
    code, out, err = cli("--store", store, "ingest", book)
    assert (code, out) == (2, "") and err == (
        f"mnemoscope: error: {book}: a text file of 12 MiB: more than max_text_bytes (10 MiB), what one text or"
        " Markdown file or note may add; nothing was stored (MNEMOSCOPE_MAX_TEXT_BYTES raises it)\n"), err
    monkeypatch.setenv("MNEMOSCOPE_MAX_TEXT_BYTES", "2000")
    words = "Ann: the ferry left the harbour at dusk\n" * 60  # 2,400 bytes
    for name in ("talk.txt", "notes.md", "plain"):
        (tmp_path / name).write_text(words)
        code, _, err = cli("--store", store, "ingest", tmp_path / name)
        assert code == 2 and err.count("\n") == 1 and ": a text file of 2.3 KiB: more than max_text_bytes (2 KiB)" in err
    with Memory(store, extensions=False) as mem:
        with pytest.raises(IngestError, match=r"^note: the note is 2.3 KiB: more than max_text_bytes \(2 KiB\)"):
            mem.add_note(words, name="note")
    assert store_checksum(store) == before
    chat = tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps({"speaker": "Ann", "text": f"the ferry left at dusk, day {n}"}) + "\n" for n in range(60)))
    assert chat.stat().st_size > 2000 and cli("--store", store, "ingest", chat)[0] == 0
