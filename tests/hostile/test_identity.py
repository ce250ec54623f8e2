"""Issue 11 item 6: a source is the file it is (resolved path), a conversation is itself (its own
hash, its own sample_id), and a re-ingest of what did not change keeps ids, curation and trust."""

from __future__ import annotations

import json
import os

import pytest

from mnemoscope.engine import IngestFailed, Memory

from .conftest import store_checksum


def sample(sample_id: str, who: str, words: list[str]) -> dict:
    turns = [{"speaker": who if n % 2 == 0 else "Dan", "dia_id": f"D1:{n + 1}", "text": text} for n, text in enumerate(words)]
    return {"sample_id": sample_id, "conversation": {"speaker_a": who, "speaker_b": "Dan", "session_1": turns,
                                                     "session_1_date_time": "1:56 pm on 8 May, 2023"}}


A = ["Maya adopted a beagle called Biscuit.", "Biscuit is a lovely name.", "Maya walks Biscuit along the river."]
B = ["Rosa bakes sourdough every Sunday.", "Rosa feeds her starter twice a day.", "The loaf needs a hot oven."]


def test_two_conversations_sharing_a_sample_id_are_refused_not_dropped(tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([sample("s1", "Maya", A), sample("s1", "Rosa", B)], indent=1), encoding="utf-8")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        before = store_checksum(mem.path)
        with pytest.raises(IngestFailed, match=r"conv.json:\d+: sample 1: the sample_id 's1' is also sample 0's"):
            mem.ingest(path)
        assert store_checksum(mem.path) == before


def test_editing_one_conversation_leaves_the_others_ids_curation_and_trust(tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([sample("a", "Maya", A), sample("b", "Rosa", B)], indent=1), encoding="utf-8")
    with Memory(tmp_path / "m.db") as mem:
        mem.ingest(path)
        b_source = next(s for s in mem.sources() if s.name.endswith("#b"))
        b_ids = [i.id for i in mem.source_items(b_source.id)]
        facts_of_b = [f for f in mem.knowledge.facts() if set(f.provenance) <= set(b_ids)]
        assert len(facts_of_b) >= 2
        mem.knowledge.delete_fact(facts_of_b[0].id)
        mem.knowledge.edit_fact(facts_of_b[1].id, object="rye sourdough")
        rec = mem.recall("Rosa sourdough", strategy="fused")
        mem.feedback(rec.token, [h.item.id for h in rec.hits if h.item.id in b_ids][:1])
        trust = [row for row in mem.store.trust_rows() if row[0] in b_ids]
        curated = sorted(f.triple() for f in mem.knowledge.facts() if set(f.provenance) <= set(b_ids))

        path.write_text(json.dumps([sample("a", "Maya", A[:2] + ["Maya walks Biscuit in the park."]),
                                    sample("b", "Rosa", B)], indent=1), encoding="utf-8")
        report = mem.ingest(path)
        assert sorted((s.name.rpartition("#")[2], s.status) for s in report.sources) == [("a", "replaced"), ("b", "unchanged")]
        assert [i.id for i in mem.source_items(b_source.id)] == b_ids
        assert sorted(f.triple() for f in mem.knowledge.facts() if set(f.provenance) <= set(b_ids)) == curated
        assert [row for row in mem.store.trust_rows() if row[0] in b_ids] == trust and trust


def test_a_file_is_one_source_however_it_is_named_and_two_files_are_two(tmp_path, monkeypatch):
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.md").write_text(f"# Notes\nThe {folder} folder's notes.", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "one")
    with Memory(tmp_path / "m.db", extensions=False) as mem:
        first = mem.ingest(["notes.md", tmp_path / "one" / "notes.md", "../one/./notes.md"])
        assert [s.status for s in first.sources] == ["added"]
        monkeypatch.chdir(tmp_path / "two")
        second = mem.ingest("notes.md")
        assert [s.status for s in second.sources] == ["added"]
        assert sorted(s.name for s in mem.sources()) == [str(tmp_path / "one" / "notes.md"), str(tmp_path / "two" / "notes.md")]
        (tmp_path / "link.md").symlink_to(tmp_path / "two" / "notes.md")
        assert [s.status for s in mem.ingest(tmp_path / "link.md").sources] == ["unchanged"]


def test_a_reingest_of_unchanged_content_keeps_everything(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\nRosa bakes sourdough on Sundays.\n\n## Oven\nA hot oven at 250 degrees.")
    with Memory(tmp_path / "m.db") as mem:
        mem.ingest(folder)
        rec = mem.recall("sourdough", strategy="fused")
        mem.feedback(rec.token, [rec.hits[0].item.id])
        before = store_checksum(mem.path, skip=("recall_tokens",))
        os.utime(folder / "guide.md", (0, 0))  # touched, not changed
        assert [s.status for s in mem.ingest([folder, folder / "guide.md"]).sources] == ["unchanged"]
        assert store_checksum(mem.path, skip=("recall_tokens",)) == before
