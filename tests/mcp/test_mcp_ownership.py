"""What an agent may change through MCP, by the SDK's own client over stdio: only what an agent
stored through MCP. The person's sources (ingested, imported, noted) and the items in them are
theirs: an agent's `forget` or `remember` of them is one line saying so, and the store is
unchanged. Whatever an export file says, an import makes its sources the person's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.transfer import write_records

from .test_mcp_server import ROOT, agent_session, text_of

pytestmark = pytest.mark.xdist_group("mcp")


def kept(store) -> dict[str, list[str]]:
    with Memory(store, extensions=False) as mem:
        return {s.name: [i.text for i in mem.source_items(s.id)] for s in mem.sources()}


def refusal(store, what: str, target: str) -> str:
    """The one line, naming the store: the person's default store may hold another source of that id."""
    return (f"forget: {what} a source the person stored (ingested, imported or noted), not one an agent stored through"
            f" MCP: an agent does not delete it; the person can, with `mnemoscope --store {store.resolve()} delete {target}`"
            " or in the app's Sources screen (d); nothing was deleted")


async def test_an_agent_forgets_only_what_an_agent_stored(tmp_path):
    """Fails before: `forget` deleted the person's document, a note the person named ``mcp:…``
    (a name is no mark), and an item of the person's beside an agent's."""
    store = tmp_path / "agent.db"
    doc = tmp_path / "harbour.md"
    doc.write_text("# Harbour\nThe lanterns are lit at dusk by the keeper.\n")
    with Memory(store, extensions=False) as mem:
        [person] = mem.ingest(doc).sources
        noted = mem.add_note("The ferry timetable changes in October.", name="mcp:planted")
        [item] = mem.source_items(person.source_id)
    async with agent_session(store, dict(os.environ)) as session:
        stored = (await session.call_tool("remember", {"text": "The keeper's cat is called Soot.", "source": "agent notes"})
                  ).structured_content
        before = kept(store)
        assert len(before) == 3
        for arguments, expected in [
            ({"source_id": person.source_id}, refusal(store, f"source {person.source_id} ({person.name!r}) is", f"source:{person.source_id}")),
            ({"source_id": person.source_id, "dry_run": True},
             refusal(store, f"source {person.source_id} ({person.name!r}) is", f"source:{person.source_id}")),
            ({"source_id": noted.source_id}, refusal(store, f"source {noted.source_id} ('mcp:planted') is", f"source:{noted.source_id}")),
            ({"item_ids": [item.id]}, refusal(store, f"item {item.id} is in {person.name!r},", str(item.id))),
            ({"item_ids": [*stored["item_ids"], item.id]}, refusal(store, f"item {item.id} is in {person.name!r},", str(item.id))),
        ]:
            result = await session.call_tool("forget", arguments)
            assert result.is_error and text_of(result) == expected, text_of(result)
            assert kept(store) == before
        gone = await session.call_tool("forget", {"item_ids": stored["item_ids"]})
        assert not gone.is_error and gone.structured_content["changes"]["items"] == 1
    assert kept(store) == {**before, "agent notes": []}


async def test_an_import_makes_an_agents_sources_the_persons(tmp_path):
    """An export whose source says ``written_by: mcp:…`` was, once imported, replaceable and
    deletable by any agent (fails before: the agent's text replaced the person's). The mark is
    dropped on import, and the import's report says so in one line."""
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    async with agent_session(first, dict(os.environ)) as session:
        await session.call_tool("remember", {"text": "The lanterns are lit at dusk by the keeper.", "source": "harbour"})
    export, edited = tmp_path / "e.jsonl", tmp_path / "e2.jsonl"
    subprocess.run([sys.executable, "-m", "mnemoscope", "--store", str(first), "export", str(export)], cwd=ROOT, check=True)
    records = [json.loads(line) for line in export.read_text().splitlines()]
    sources = [r for r in records if r["type"] == "source"]
    assert sources and all(r["meta"]["written_by"] == "mcp:test-agent" for r in sources)
    sources.append({**sources[0], "id": 999, "name": "mcp:planted", "content_hash": "x", "meta": {}})  # named as an agent's
    items = [r for r in records if r["type"] == "item"]
    write_records(edited, [*sources[:1], *items, sources[1], {**items[0], "id": 9999, "source_id": 999}])
    done = subprocess.run([sys.executable, "-m", "mnemoscope", "--store", str(second), "import", str(edited)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    before = kept(second)
    assert before == {"harbour": ["The lanterns are lit at dusk by the keeper."],
                      "mcp:planted": ["The lanterns are lit at dusk by the keeper."]}
    with Memory(second, extensions=False) as mem:
        ids = {s.name: s.id for s in mem.sources()}
    async with agent_session(second, dict(os.environ)) as session:
        for name in ("harbour", "mcp:planted"):
            taken = await session.call_tool("remember", {"text": "The lanterns are never lit.", "source": name})
            assert taken.is_error and text_of(taken).startswith(f"remember: source: {name!r} is a source stored by the person")
            forgotten = await session.call_tool("forget", {"source_id": ids[name]})
            assert forgotten.is_error and text_of(forgotten).startswith(f"forget: source {ids[name]} ({name!r}) is a source the person")
    assert kept(second) == before
    assert done.stdout.splitlines()[1:] == ["1 source(s) the export says an agent stored through MCP are the person's once"
                                            " imported: an agent no longer replaces or forgets them"]


async def test_the_persons_ingest_of_what_an_agent_stored_first_makes_it_the_persons(tmp_path):
    """An agent that stored a file's very bytes under the file's path before the person ingested
    it kept the source as its own: the ingest said "unchanged", and the agent could then forget
    (or replace) the person's document (fails before). The person's ingest stores it again as theirs."""
    store = tmp_path / "agent.db"
    doc = tmp_path / "harbour.md"
    doc.write_text("Harbour\nThe lanterns are lit at dusk.\n")
    async with agent_session(store, dict(os.environ)) as session:
        first = await session.call_tool("remember", {"title": "Harbour", "text": "The lanterns are lit at dusk.\n",
                                                     "source": str(doc.resolve())})
        assert first.structured_content["status"] == "added"
    with Memory(store, extensions=False) as mem:
        [report] = mem.ingest(doc).sources
    assert report.status == "replaced"
    before = kept(store)
    async with agent_session(store, dict(os.environ)) as session:
        forgotten = await session.call_tool("forget", {"source_id": report.source_id})
        assert forgotten.is_error and text_of(forgotten).startswith(f"forget: source {report.source_id} ")
        again = await session.call_tool("remember", {"title": "Harbour", "text": "The lanterns are lit at dusk.\n",
                                                     "source": str(doc.resolve())})
        assert again.is_error and text_of(again).startswith("remember: source: ")
    assert kept(store) == before == {str(doc.resolve()): ["Harbour The lanterns are lit at dusk."]}


async def test_the_person_lists_the_sources_and_sees_which_an_agent_stored(tmp_path):
    """`mnemoscope sources` lists every source with its id, kind, items and who stored it: the
    id `forget`'s refusal tells the person to delete by, and the agent beside what it stored
    (fails before: no such command, exit 2)."""
    from tests.support.cli import cli

    store = tmp_path / "agent.db"
    with Memory(store, extensions=False) as mem:
        noted = mem.add_note("The ferry timetable changes in October.", name="mcp:planted")
    async with agent_session(store, dict(os.environ), name="claude-code") as session:
        stored = (await session.call_tool("remember", {"text": "The keeper's cat is called Soot.", "source": "diary.md"})
                  ).structured_content
    code, out = cli("--store", store, "sources")
    assert code == 0 and out.splitlines() == [
        "  id  kind           items  by           name",
        f"{noted.source_id:>4}  note               1  you          mcp:planted",
        f"{stored['source_id']:>4}  document           1  claude-code  diary.md"], out
    code, out = cli("--store", store, "sources", "--json")
    assert code == 0 and [(s["id"], s["agent"], s["items"]) for s in json.loads(out)] == [
        (noted.source_id, None, 1), (stored["source_id"], "claude-code", 1)]
