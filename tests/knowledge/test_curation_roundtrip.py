"""Curation survives export → import: the knowledge a person curated comes back as it was.

The curated entities, facts and episodes are chosen from the listings at test time, so the
tests hold whatever the rule extractor finds in the demo content.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import IngestFailed, Memory
from mnemoscope.engine.knowledge.entities import entity_key
from mnemoscope.engine.transfer import write_records
from tests.support.stores import DEMO_DIR as DEMO, store_checksum

SOURCES = [DEMO / "conversation.json", DEMO / "sourdough-baking.md"]
NEW_NAME_SUFFIX = "Quillfeather"


def curate(mem: Memory) -> str:
    """Rename, merge and split entities; edit, delete and add facts; merge and split episodes.
    Returns the renamed entity's new name."""
    k = mem.knowledge
    renamed = k.entities(kind="speaker")[0]
    new_name = f"{renamed.name} {NEW_NAME_SUFFIX}"
    k.rename_entity(renamed.id, new_name)

    keep, other = [e for e in k.entities(kind="name") if e.items >= 2][:2]
    k.merge_entities(keep.id, other.id)

    def forms(eid: int) -> list[str]:
        return sorted({surface for _item, surface, _role in mem.store.mentions_of_entity(eid)})

    several = [e for e in k.entities() if len(forms(e.id)) > 1]
    split = next((e for e in several if e.id not in (keep.id, renamed.id)), several[0])
    k.split_entity(split.id, forms(split.id)[-1:], name="Split Off Form")

    keys = {e.key for e in k.entities()}  # an edit keeps the subject, which must still name an entity
    rule = [f for f in k.facts() if f.origin == "rule" and f.object_id is None and entity_key(f.subject) in keys]
    edited, deleted = rule[0], rule[-1]
    k.edit_fact(edited.id, predicate=f"{edited.predicate} surely", time="2023-05-20")
    k.delete_fact(deleted.id)
    turns = [i.id for i in mem.source_items(mem.sources()[0].id)][:2]
    k.add_fact(new_name, "keeps", "a notebook of bread recipes", turns)

    episodes = k.episodes(source_id=mem.sources()[0].id)
    k.merge_episodes(episodes[0].id, episodes[1].id)
    k.merge_episodes(episodes[2].id, episodes[3].id)
    k.split_episode(episodes[2].id)
    return new_name


def listing(mem: Memory) -> dict[str, list]:
    """The facts, entities and episodes listings with every id replaced by what it names."""
    k = mem.knowledge
    sources = {s.id: s.name for s in mem.sources()}
    ref = {i.id: (sources[s], i.key) for s in sources for i in mem.source_items(s)}
    names = {e.id: e.name for e in k.entities()}
    entities = sorted((e.name, e.key, e.kind, e.items, e.facts, sorted(names[x] for x in e.synonyms)) for e in k.entities())
    facts = sorted((f.subject, f.predicate, f.object, f.time, f.origin, names.get(f.subject_id), names.get(f.object_id),
                    sorted(ref[i] for i in f.provenance)) for f in k.facts())
    episodes = sorted((sources[e.source_id], e.session, e.summary, e.origin, [ref[i] for i in e.items], len(e.merged_from),
                       e.participants, [(ref[v.item_id], v.origin, v.body()) for v in e.events]) for e in k.episodes())
    return {"entities": entities, "facts": facts, "episodes": episodes}


@pytest.fixture(scope="module")
def curated(tmp_path_factory) -> tuple[Path, Path, str]:
    """A curated demo store and its export."""
    folder = tmp_path_factory.mktemp("curated")
    with Memory(folder / "original.db") as mem:
        mem.ingest(SOURCES)
        new_name = curate(mem)
        mem.export(folder / "export.jsonl")
    return folder / "original.db", folder / "export.jsonl", new_name


def test_a_round_trip_keeps_every_curation(curated, tmp_path):
    original_path, export, new_name = curated
    with Memory(original_path) as original, Memory(tmp_path / "copy.db") as copy:
        report = copy.import_(export)
        assert [s.status for s in report.sources] == ["added", "added"]
        before, after = listing(original), listing(copy)
        assert after == before
        assert any(e[0] == new_name for e in after["entities"]) and any(f[4] == "user" for f in after["facts"])
        assert any(e[5] for e in after["episodes"])  # the merged episode is still merged

        query = f"What does {new_name} keep?"
        found = [{f.triple() for f in m.recall(query, top_k=10, mode="lite").facts} for m in (original, copy)]
        assert found[0] == found[1] and any(new_name in t for t in found[1])

        merged = [[e.id for e in m.knowledge.episodes() if e.merged_from][0] for m in (original, copy)]
        for m, episode_id in zip((original, copy), merged):  # home episodes came back too: split agrees
            m.knowledge.split_episode(episode_id, dry_run=False)
        assert listing(copy) == listing(original)


def test_importing_the_same_export_twice_changes_nothing(curated, tmp_path):
    _original, export, _name = curated
    with Memory(tmp_path / "copy.db") as copy:
        copy.import_(export)
        before = store_checksum(copy.path, skip=("activity", "sqlite_sequence"))  # the log says an import ran
        again = copy.import_(export)
        assert [s.status for s in again.sources] == ["unchanged", "unchanged"]
    assert store_checksum(tmp_path / "copy.db", skip=("activity", "sqlite_sequence")) == before


def test_import_keeps_the_curation_of_sources_already_in_the_target(curated, tmp_path):
    original_path, export, new_name = curated
    with Memory(tmp_path / "target.db") as target:
        target.ingest(SOURCES[0])
        speaker = target.knowledge.entities(kind="speaker")[0]
        target.knowledge.rename_entity(speaker.id, "Their Own Name")
        report = target.import_(export)
        assert [s.status for s in report.sources] == ["unchanged", "added"]
        names = {e.name for e in target.knowledge.entities()}
        assert "Their Own Name" in names and new_name not in names
        with Memory(original_path) as original:
            doc = original.sources()[1].id
            theirs = sorted(f.triple() for f in original.knowledge.facts() if set(f.provenance) <= {
                i.id for i in original.source_items(doc)})
        ours = sorted(f.triple() for f in target.knowledge.facts() if set(f.provenance) <= {
            i.id for i in target.source_items(target.sources()[1].id)})
        assert ours == theirs


def corrupt(export: Path, tmp_path: Path, record_type: str, change, pick=lambda record: True) -> tuple[Path, int]:
    """A copy of ``export`` with the first ``record_type`` line (that ``pick`` accepts) changed;
    returns it and the line."""
    lines = export.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == record_type and pick(json.loads(line)))
    record = json.loads(lines[n])
    change(record)
    lines[n] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    write_records(bad, [json.loads(line) for line in lines[:-1]])  # sealed again, without the old trailer
    return bad, n + 1


@pytest.mark.parametrize("record_type, change, message", [
    ("knowledge.fact", lambda r: r.update(provenance=[10 ** 9]), "names item 1000000000, which the export does not hold"),
    ("knowledge.entity", lambda r: r.update(kind="planet"), "entity kind 'planet' is not one of"),
    ("knowledge.episode", lambda r: r.update(merged_into=10 ** 9), "is not an episode of the same source"),
    ("knowledge.snapshot", lambda r: r.update(version=5), "format version 5 is not one this Mnemoscope reads"),
    ("knowledge.decision", lambda r: r["changes"][0].update(table="items"), "names a table no decision changes"),
    ("knowledge.decision", lambda r: r["changes"][0].update(after={"id": 1, "key = 'x'; --": 1}),
     "names columns the table does not hold"),
    # guard (requests 08:38): met only at the undo before, each a misleading line or a bad row
    ("knowledge.decision", lambda r: r["changes"][0]["after"].update(object={"x": 1}), "which that column cannot hold"),
    ("knowledge.decision", lambda r: r["changes"][0]["after"].update(retired_at="garbage"), "retired_at = 'garbage'"),
    ("knowledge.decision", lambda r: r["changes"][0]["after"].update(valid_to="2023-13-01"), "valid_to = '2023-13-01'"),
    ("knowledge.decision", lambda r: r["changes"][0]["after"].update(superseded_by=r["changes"][0]["after"]["id"]),
     "as its own successor"),
    ("knowledge.decision", lambda r: r["changes"][0]["after"].update(subject_id=10 ** 6),
     "names entity 1000000, which neither the export holds nor a decision deleted"),
    ("knowledge.snapshot", lambda r: r.update(sources=[1, 999]), "the snapshot covers source(s) [1, 999]"),
    ("knowledge.entity", lambda r: r.update(mentions=[["D1:1", "Maya", "speaker"]]), "names item 'D1:1'"),
    ("knowledge.episode", lambda r: r["events"].append({"item_id": r["home"][0], "origin": "rule", "action": 5}),
     "its other roles text"),
    ("knowledge.fact", lambda r: r.update(valid_from="99999-01-01"),
     "knowledge.fact field 'valid_from' is no date such as 2023-06-01, 2023-06 or 2023, not '99999-01-01'"),
    ("knowledge.fact", lambda r: r.update(time="last week"), "field 'time' is no date"),
    ("knowledge.conflict", lambda r: r.update(created_at="yesterday"), "field 'created_at' is no time such as 2023-06-01T10:00:00Z"),
])
def test_a_corrupt_knowledge_record_is_one_line_exit_2_and_changes_nothing(curated, tmp_path, capsys, record_type,
                                                                           change, message):
    _original, export, _name = curated
    bad, line = corrupt(export, tmp_path, record_type, change)
    store = tmp_path / "target.db"
    with Memory(store) as target:
        target.ingest(SOURCES[1])
    before = store_checksum(store)
    capsys.readouterr()
    assert main(["--store", str(store), "import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"bad.jsonl:{line}: knowledge record: " in err and message in err
    assert store_checksum(store) == before
    with Memory(store) as target, pytest.raises(IngestFailed, match=f"bad.jsonl:{line}:"):
        target.import_(bad)


def test_names_and_words_that_break_the_label_rule_are_fitted_and_said(curated, tmp_path):
    """An edited export's entity name with a right-to-left override, a fact's object of 100,000
    characters and a conflict's reason with an escape sequence were stored as given (fails
    before): the speaker's name read backwards, the inbox printed the whole of it. They are made
    to keep the label rule, as the core's labels are, and the import's report says where."""
    _original, export, _name = curated
    bad, line = corrupt(export, tmp_path, "knowledge.entity", lambda r: r.update(name="Dan\u202eiel"))
    bad, _ = corrupt(bad, tmp_path, "knowledge.fact", lambda r: r.update(object="x" * 100_000),
                     lambda r: r["valid_to"] is None and r["retired_at"] is None)  # one recall reads
    bad, _ = corrupt(bad, tmp_path, "knowledge.conflict", lambda r: r.update(reason="home \x1b]0;retitled\x07 or not"))
    with Memory(tmp_path / "copy.db") as copy:
        report = copy.import_(bad)
        assert report.warnings == ["3 name(s) or fact word(s) of the knowledge records made to keep the label rule"
                                   f" ({bad}:{line}: entity 1's name: invisible characters dropped; and 2 more)"], report.warnings
        assert "Daniel" in {e.name for e in copy.knowledge.entities(kind="speaker")}
        assert max(len(f.object) for f in copy.knowledge.facts()) == 2_000
        assert {c.reason for c in copy.knowledge.conflicts(status=None)} >= {"home  ]0;retitled  or not"}


def test_a_version_1_export_still_imports(tmp_path, conversation_file):
    """An export written before curation travelled: core lines and a version-1 user fact."""
    with Memory(tmp_path / "old.db") as old:
        old.ingest(conversation_file)
        old.export(tmp_path / "full.jsonl")
    core = [line for line in (tmp_path / "full.jsonl").read_text(encoding="utf-8").splitlines()[:-1]
            if not json.loads(line)["type"].startswith("knowledge.")]
    item_ids = [json.loads(line)["id"] for line in core if json.loads(line)["type"] == "item"]
    legacy = {"type": "knowledge.fact", "subject": "Caroline", "predicate": "plans", "object": "a trip to Lisbon",
              "time": "2023-07-01", "origin": "user", "provenance": item_ids[:2]}
    write_records(tmp_path / "v1.jsonl", [json.loads(line) for line in core] + [legacy])
    with Memory(tmp_path / "copy.db") as copy:
        copy.import_(tmp_path / "v1.jsonl")
        facts = copy.knowledge.facts()
        user = [f for f in facts if f.origin == "user"]
        assert [(f.triple(), f.time) for f in user] == [("Caroline plans a trip to Lisbon", "2023-07-01")]
        assert [copy.item(i).key for i in user[0].provenance] == ["D1:1", "D1:2"]
        assert any(f.origin == "rule" for f in facts) and copy.knowledge.episodes()  # extracted again


def test_add_fact_is_refused_when_it_duplicates_or_names_no_item(tmp_path, conversation_file):
    from mnemoscope.engine.errors import KnowledgeError

    with Memory(tmp_path / "k.db") as mem:
        mem.ingest(conversation_file)
        first = mem.knowledge.facts()[0]
        before = store_checksum(mem.path)
        with pytest.raises(KnowledgeError, match=f"already fact {first.id}"):
            mem.knowledge.add_fact(first.subject, first.predicate, first.object, first.provenance)
        with pytest.raises(KnowledgeError, match="no item with id 999"):
            mem.knowledge.add_fact("Caroline", "owns", "a kayak", [999])
        report = mem.knowledge.add_fact("Caroline", "owns", "a kayak", first.provenance, dry_run=True)
        assert report.facts_added == 1 and store_checksum(mem.path) == before


def test_a_source_the_target_holds_in_another_version_is_replaced_by_the_snapshot(tmp_path):
    doc = tmp_path / "guide.md"
    doc.write_text((DEMO / "sourdough-baking.md").read_text(encoding="utf-8"), encoding="utf-8")
    with Memory(tmp_path / "original.db") as original:
        original.ingest(doc)
        original.knowledge.delete_fact(original.knowledge.facts()[0].id)
        original.export(tmp_path / "export.jsonl")
        expected = listing(original)
    doc.write_text("# Sourdough\n\nAn older draft of the guide, about Rosa's starter.\n", encoding="utf-8")
    with Memory(tmp_path / "target.db") as target:
        target.ingest(doc)
        report = target.import_(tmp_path / "export.jsonl")
        assert [s.status for s in report.sources] == ["replaced"]
        assert listing(target) == expected


def test_with_an_llm_configured_import_queues_only_items_the_llm_has_not_read(curated, tmp_path):
    _original, export, _name = curated
    lines = export.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "knowledge.episode" and json.loads(line)["events"])
    episode = json.loads(lines[n])
    read = episode["events"][0]["item_id"]
    for event in episode["events"]:
        event["origin"] = "llm" if event["item_id"] == read else event["origin"]
    lines[n] = json.dumps(episode)
    write_records(tmp_path / "llm.jsonl", [json.loads(line) for line in lines[:-1]])
    with Memory(tmp_path / "copy.db", llm_base_url="http://127.0.0.1:9/v1", llm_model="unused") as copy:
        copy.import_(tmp_path / "llm.jsonl")
        assert copy.knowledge.queue_status() == {"pending": copy.stats().items - 1}
