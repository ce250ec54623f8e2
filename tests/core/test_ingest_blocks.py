"""A JSON-lines chat is read from its file a line at a time: checked whole first, then parsed again
and stored a block at a time in the source's one transaction, so that a long chat (300k turns) is
never held whole. What it stores is what one read of the whole file stores; a file changed between
the two reads is refused; a kill in the middle of the blocks leaves the store as it was."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory, memory
from mnemoscope.engine.errors import IngestError
from mnemoscope.engine.ingest import read_jsonl_chat, read_path
from mnemoscope.engine.records import ParsedSource
from tests.support.processes import dies_on_third_insert

ROOT = Path(__file__).resolve().parents[2]
TOPICS = ("the garden", "bread and rye", "a violin lesson", "the harbour at dawn", "Lisbon in May", "a red kite")

# Ingest a chat in blocks of 40 items, dying (SIGKILL) as the third block is stored.
KILLED_INGEST = dies_on_third_insert('memory.INGEST_BLOCK = 40', 'mem.ingest(sys.argv[2], defer=True)')


def write_chat(path: Path, n: int) -> Path:
    """``n`` turns of two speakers, some with an id, a time or a photo's caption."""
    lines = []
    for i in range(n):
        turn = {"speaker": ("Ana", "Ben")[i % 2], "text": f"turn {i}: about {TOPICS[i % len(TOPICS)]} and {TOPICS[i * 7 % 5]}"}
        if i % 9 == 0:
            turn["id"] = f"t{i}"
        if i % 4 == 0:
            turn["timestamp"] = f"2024-03-{1 + i % 28:02d}T10:00:00"
        if i % 11 == 0:
            turn["blip_caption"] = f"a photo of {TOPICS[i % 3]}"
        lines.append(json.dumps(turn) + ("\n\n" if i % 13 == 0 else "\n"))
    path.write_text("".join(lines), encoding="utf-8")
    return path


def stored(path: Path) -> dict[str, list[tuple]]:
    """The rows an ingest writes, without its times."""
    conn = sqlite3.connect(path)
    try:
        return {"items": conn.execute("SELECT id, key, position, kind, speaker, timestamp, text, tags, meta FROM items"
                                      " ORDER BY id").fetchall(),
                "terms": conn.execute("SELECT item_id, term_ids, counts FROM item_terms ORDER BY item_id").fetchall(),
                "vocab": conn.execute("SELECT id, term FROM vocab ORDER BY id").fetchall(),
                "queue": conn.execute("SELECT item_id, status FROM extraction_queue ORDER BY item_id").fetchall(),
                "sources": conn.execute("SELECT name, content_hash, meta FROM sources").fetchall()}
    finally:
        conn.close()


def test_a_chat_stored_in_blocks_is_the_chat_read_whole(tmp_path: Path, monkeypatch):
    chat = write_chat(tmp_path / "chat.jsonl", 230)
    monkeypatch.setattr(memory, "INGEST_BLOCK", 40)
    with Memory(tmp_path / "blocks.db") as mem:
        report = mem.ingest(chat, defer=True, catch_up=False)
        blocks = [mem.recall(q, strategy="hybrid", top_k=5) for q in TOPICS]
    held = read_jsonl_chat(chat, chat.read_text(encoding="utf-8"), "")  # (the reader of a text held whole)
    with Memory(tmp_path / "held.db") as mem:
        source = mem.parse([chat]).parsed[0].source
        mem.ingest_parsed([ParsedSource(source, list(held.items))], defer=True, catch_up=False)
        whole = [mem.recall(q, strategy="hybrid", top_k=5) for q in TOPICS]
    assert report.items == 230
    in_blocks, read_whole = stored(tmp_path / "blocks.db"), stored(tmp_path / "held.db")
    assert len(in_blocks["items"]) == 230 and len(in_blocks["queue"]) == 230
    assert in_blocks == read_whole
    assert [[h.item.id for h in r.hits] for r in blocks] == [[h.item.id for h in r.hits] for r in whole]
    assert all(r.hits for r in blocks)


def test_a_chat_read_again_is_walked_not_indexed(tmp_path: Path):
    """Its n-th turn is found only by reading the file up to it: indexed in a loop, the file
    would be read a quadratic number of times, so it cannot be indexed at all."""
    chat = write_chat(tmp_path / "chat.jsonl", 30)
    [parsed] = read_path(chat)
    turns = list(parsed.items)
    assert len(turns) == len(parsed.items) == 30
    assert [(t.key, t.text) for t in parsed.items] == [(t.key, t.text) for t in turns]  # each walk reads it again
    with pytest.raises(TypeError):
        parsed.items[3]  # type: ignore[index]


@pytest.mark.parametrize("change", ["edit", "append", "cut"])
def test_a_chat_changed_after_it_was_read_is_refused_and_nothing_stored(tmp_path: Path, change: str):
    chat = write_chat(tmp_path / "chat.jsonl", 120)
    with Memory(tmp_path / "m.db") as mem:
        read = mem.parse([chat])
        lines = chat.read_text(encoding="utf-8").split("\n")
        if change == "edit":
            lines[60] = lines[60].replace("turn 55", "turn 5005")
        elif change == "append":
            lines.insert(-1, json.dumps({"speaker": "Cy", "text": "one more"}))
        else:
            del lines[100:-1]
        chat.write_text("\n".join(lines), encoding="utf-8")
        with pytest.raises(IngestError, match="changed since it was read"):
            mem.ingest_parsed(read.parsed)
        assert mem.counts().items == 0 and mem.index.n_items == 0
        now = read_jsonl_chat(chat, chat.read_text(encoding="utf-8"), "")
        assert mem.ingest(chat).items == len(now.items) != len(read.parsed[0].items) or change == "edit"
    assert [r[6] for r in stored(tmp_path / "m.db")["items"]] == [i.text for i in now.items]


def test_a_kill_among_the_blocks_leaves_the_store_as_it_was(tmp_path: Path):
    chat = write_chat(tmp_path / "chat.jsonl", 200)
    store = tmp_path / "m.db"
    with Memory(store) as mem:
        mem.add_note("Ana keeps bees on the roof.", name="note:bees")
    before = stored(store)
    env = {**os.environ, "PYTHONPATH": str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    killed = subprocess.run([sys.executable, "-c", KILLED_INGEST, str(store), str(chat)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    check = subprocess.run([sys.executable, "-m", "mnemoscope", "--store", str(store), "check"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert stored(store) == before
    with Memory(store) as mem:
        assert mem.ingest(chat, defer=True).items == 200
        assert mem.counts().items == 201 and mem.index.n_items == 201
        assert mem.recall("the harbour at dawn", strategy="hybrid").hits
    assert np.array_equal([r[2] for r in stored(store)["items"][1:]], np.arange(200))
