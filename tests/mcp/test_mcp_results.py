"""The recall tool's output schema, in process: what the SDK's client checks every result against.

The client validates each structured result with ``jsonschema``, whose cost grows with every
``$ref`` it looks up, every ``anyOf`` it tries and every value it types; the schema has no
``$ref`` or ``anyOf``, a result leaves out a field that has no value instead of sending null, and
the episodes and facts beside the hits are outlined rather than typed field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoscope.engine import Memory

pytestmark = pytest.mark.xdist_group("mcp")


def nulls_in(value: object) -> list[object]:
    if isinstance(value, dict):
        return [key for key, inner in value.items() if inner is None] + [n for inner in value.values() for n in nulls_in(inner)]
    if isinstance(value, list):
        return [n for inner in value for n in nulls_in(inner)]
    return []


async def test_recall_results_conform_to_a_schema_without_refs_or_nulls(demo_copy: Path):
    from jsonschema import Draft202012Validator

    from mnemoscope.app.mcp_server import build_server

    with Memory(demo_copy) as mem:
        server = build_server(mem)
        schema = next(t for t in await server.list_tools() if t.name == "recall").output_schema
        result = await server.call_tool("recall", {"query": "what did Maya bake", "mode": "max"})

    written = json.dumps(schema)
    assert "$ref" not in written and "anyOf" not in written and '"null"' not in written
    hit = schema["properties"]["hits"]["items"]
    assert {"id", "text", "source", "score", "features"} <= set(hit["properties"]) and hit["properties"]["id"]["description"]
    fact = schema["properties"]["facts"]["items"]  # records beside the hits: keys required, fields named in words
    assert "properties" not in fact and {"subject", "provenance"} <= set(fact["required"])
    assert "provenance (array of integer): the items that state it" in fact["description"]

    answer = result.structured_content
    assert answer["hits"] and answer["episodes"] and answer["facts"] and answer["token"]
    Draft202012Validator(schema).validate(answer)
    assert nulls_in(answer) == []  # a field without a value is left out
    assert any("speaker" in h for h in answer["hits"]) and any("valid_to" not in f for f in answer["facts"])


async def test_recall_as_of_a_date_says_the_date_it_answered_as_of(tmp_path):
    """Issue 16's recall as of a date, the whole path through the SDK's client over stdio: only
    what had been said by then, the facts in the state they held then (no end after the date),
    and the answer says which date it answered as of, as the engine read it (fails before: no
    ``as_of`` in the result, a time of day given and dropped unsaid). Asked of now, it has none."""
    from .test_mcp_server import agent_session, text_of

    conversation = [
        {"role": "user", "name": "Maya", "content": "I live in Lisbon, in a flat near the river.", "timestamp": "2023-03-02T10:00:00Z"},
        {"role": "assistant", "content": "Lisbon is lovely in spring.", "timestamp": "2023-03-02T10:01:00Z"},
        {"role": "user", "name": "Maya", "content": "I moved to Porto last week, a new flat by the sea.", "timestamp": "2023-09-10T10:00:00Z"},
        {"role": "assistant", "content": "Porto by the sea sounds wonderful.", "timestamp": "2023-09-10T10:01:00Z"}]
    async with agent_session(tmp_path / "agent.db") as session:
        remembered = await session.call_tool("remember", {"messages": conversation})
        assert not remembered.is_error, text_of(remembered)
        then = (await session.call_tool("recall", {"query": "where does Maya live", "as_of": "2023-06-15T08:00:00",
                                                   "mode": "max"})).structured_content
        now = (await session.call_tool("recall", {"query": "where does Maya live", "mode": "max"})).structured_content
    assert then["as_of"] == "2023-06-15" and "as_of" not in now
    assert then["hits"] and all(h["timestamp"] < "2023-06-15" for h in then["hits"])
    assert all(e["time_end"] < "2023-06-15" for e in then["episodes"])
    lisbon = [f for f in then["facts"] if f["object"] == "Lisbon"]
    assert lisbon and all(f["state"] == "current" and "valid_to" not in f for f in lisbon)
    assert any(h["text"].startswith("I moved to Porto") for h in now["hits"])
    assert [f["state"] for f in now["facts"] if f["object"] == "Lisbon"] == ["superseded"]


async def test_a_hit_on_one_side_of_an_undecided_clash_says_so_to_the_agent(demo_copy: Path):
    """Issue 16's open clash, through the SDK's client over stdio: "where does Maya live now" puts
    her move into a little house first, a claim the conflict inbox has not settled against
    Sellwood. The CLI and the app said so; an agent got the hit alone, as if it were decided
    (fails before: no ``conflict`` in the hit). Sellwood's hit says it is the older claim; a hit
    that states no side carries none."""
    from .test_mcp_server import agent_session

    async with agent_session(demo_copy) as session:
        answer = (await session.call_tool("recall", {"query": "where does Maya live now"})).structured_content
    first, *others = answer["hits"]
    assert "little house" in first["text"]
    assert first["conflict"].startswith("the newer claim of open conflict #1 (home), not decided yet")
    assert "Sellwood" in first["conflict"]
    sellwood = [hit for hit in others if hit["text"].startswith("I live in Sellwood")]
    assert sellwood and sellwood[0]["conflict"].startswith("the older claim of open conflict #1 (home)")
    rest = [hit for hit in others if hit not in sellwood]
    assert rest and all("conflict" not in hit for hit in rest)


async def test_facts_as_of_a_date_lists_what_held_then_in_its_state_then(demo_copy: Path):
    """The MCP ``facts`` tool reads a date as ``recall`` does (issue 16: recall in time for every
    front end): Leah's home in June 2023 is Denver, holding then; now Boulder, Denver superseded."""
    from mnemoscope.app.mcp_server import build_server

    with Memory(demo_copy) as mem:
        server = build_server(mem)
        then = (await server.call_tool("facts", {"entity": "Leah", "as_of": "2023-06-30"})).structured_content["result"]
        now = (await server.call_tool("facts", {"entity": "Leah"})).structured_content["result"]

    def homes(facts: list[dict]) -> dict[str, str]:
        return {f["object"].split()[0]: f["state"] for f in facts if f["predicate"] in ("lives in", "moved to")}

    assert homes(then) == {"Denver": "current"}
    assert homes(now) == {"Denver": "superseded", "Boulder": "current"}
