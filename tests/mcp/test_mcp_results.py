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
