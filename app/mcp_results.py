"""What the MCP tools return: the records an agent reads and the output schemas its client
checks every result against.

The SDK's client validates each structured result against the tool's output schema with
``jsonschema``, and that costs in proportion to the schema nodes it walks for each value. So the
schemas are shaped to be cheap to check and still say what every field is: nested records are
written inline (a ``$ref`` is looked up for every value it describes), and an optional field is
left out of a result when it has no value instead of being ``null`` (an ``anyOf`` of the type and
null is two checks for every value). A hit's every field is typed; the episodes and facts listed
beside the hits are records whose schema is an outline: their keys are required, and their
fields and types are named in the description rather than checked one value at a time (they
outnumber the hits' values; docs/benchmarks.md has the measure).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue, WithJsonSchema
from pydantic_core import CoreSchema


# A hit's signals: a plain object in the schema, so that a client does not check each number.
Signals = Annotated[dict[str, float], WithJsonSchema({"type": "object"})]


class Result(BaseModel):
    """A tool result, sent through :func:`as_tool_result` (fields without a value left out); its
    schema has no ``$ref`` and no ``anyOf`` with null, and an ``outlined`` record's schema names
    its fields instead of typing each (see the module's docstring)."""

    outlined: ClassVar[bool] = False

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = dict(handler.resolve_ref_schema(handler(core_schema)))
        schema["properties"] = {name: _present(prop) for name, prop in schema.get("properties", {}).items()}
        return _outline(schema) if cls.outlined else _inlined(schema, handler)


def as_tool_result(result: Result) -> CallToolResult:
    """``result`` as the tool's answer: the structured content without the fields that have no
    value (the schema allows no null), and the same JSON, compact, as the text. Built here because
    the SDK would dump every field, nulls included, and indent the text."""
    return CallToolResult(content=[TextContent(type="text", text=result.model_dump_json(exclude_none=True))],
                          structured_content=result.model_dump(mode="json", exclude_none=True))


def _present(prop: JsonSchemaValue) -> JsonSchemaValue:
    """An optional field's schema without its null: the field is absent when it has no value."""
    options = prop.get("anyOf", [])
    if len(options) != 2 or {"type": "null"} not in options:
        return prop
    kept = {key: value for key, value in prop.items() if key not in ("anyOf", "default")}
    return {**kept, **next(option for option in options if option != {"type": "null"})}


def _outline(schema: JsonSchemaValue) -> JsonSchemaValue:
    """A record's schema as its required keys, with each field's name, type and meaning in words."""
    fields = "; ".join(_field_words(name, prop) for name, prop in schema["properties"].items())
    return {"type": "object", "title": schema["title"], "required": schema.get("required", []),
            "description": f"{schema.get('description', schema['title'])} Fields: {fields}."}


def _field_words(name: str, prop: JsonSchemaValue) -> str:
    kind = prop.get("type", "any")
    if kind == "array":
        kind = f"array of {prop.get('items', {}).get('type', 'any')}"
    return f"{name} ({kind})" + (f": {prop['description']}" if prop.get("description") else "")


def _inlined(node: Any, handler: GetJsonSchemaHandler) -> Any:
    """``node`` with every ``$ref`` replaced by the schema it names."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inlined(handler.resolve_ref_schema(node), handler)
        return {key: _inlined(value, handler) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(value, handler) for value in node]
    return node


class Remembered(Result):
    source_id: int
    source: str = Field(description="the source's name; remember again under it to replace the conversation")
    status: str = Field(description="added | replaced | unchanged (the same content was already stored)")
    item_ids: list[int] = Field(description="the stored items (turns or chunks), in order")
    skipped: dict[str, int] = Field(default_factory=dict, description="messages not stored, by role")
    parts_left_out: dict[str, int] = Field(
        default_factory=dict, description="content parts not stored, by type: a turn keeps its text and its first image"
        " (its photo; a data: URL of at most 1 MiB); audio, files, further or larger images and the parts of a message"
        " not stored are left out")


class HitOut(Result):
    id: int = Field(description="the item id: pass it to feedback (used) or forget")
    score: float
    text: str
    speaker: str | None = None
    timestamp: str | None = None
    source_id: int
    source: str = Field(description="the name of the conversation or document it comes from")
    features: Signals = Field(default_factory=dict, description="the signals that ranked it, by name: numbers, those not zero")
    conflict: str | None = Field(default=None, description="present when the hit states one side of a clash in the "
                                 "conflict inbox that no person has decided: which side, and the fact against it")


class EpisodeOut(Result):
    """An episodic memory that hits belong to."""

    outlined = True
    id: int
    summary: str
    participants: list[str]
    time_start: str | None = None
    time_end: str | None = None
    items: list[int] = Field(description="the items it was made of")


class FactOut(Result):
    """A subject-predicate-object fact that hits state."""

    outlined = True
    id: int
    subject: str
    predicate: str
    object: str
    time: str | None = None
    valid_from: str | None = Field(default=None, description="when it began to hold (ISO date)")
    valid_to: str | None = Field(default=None, description="when it stopped holding (absent while it holds)")
    state: str = Field(default="current", description="current, or superseded (then superseded_by names its successor)")
    superseded_by: int | None = None
    provenance: list[int] = Field(description="the items that state it")


class RecallOut(Result):
    query: str
    strategy: str
    mode: str
    intent: str | None = None
    as_of: str | None = Field(default=None, description="the date the answer is as of, as `as_of` was read (2023-06-15,"
                              " 2023-06 or 2023; a time of day is dropped): only what had been said by then, the facts"
                              " as they held then; absent when not asked: as of now, with everything the store holds")
    hits: list[HitOut] = Field(description="best first")
    episodes: list[EpisodeOut] = Field(default_factory=list, description="episodic memories the hits belong to")
    facts: list[FactOut] = Field(default_factory=list, description="subject-predicate-object facts the hits state")
    token: str | None = Field(default=None, description="pass to feedback with the ids you used")


class FeedbackOut(Result):
    event_id: int
    used: list[int]
    ignored: list[int]
    lam: float = Field(description="how much the learned ranker now counts (0: the heuristic alone)")


class Forgotten(Result):
    dry_run: bool
    changes: dict[str, Any] = Field(description="what was (or would be) deleted, by kind")
