"""What ``remember`` stores of a message's parts, through the SDK's own client over stdio: a
message's first image part is its turn's photo (read and embedded as an ingested one is), and
every part not stored is counted in the result, never dropped in silence."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.ingest import MAX_CHUNK_CHARS
from tests.support.openai_server import png

from .test_mcp_server import agent_session, text_of

pytestmark = pytest.mark.xdist_group("mcp")


def data_url(word: str) -> str:
    return "data:image/png;base64," + base64.b64encode(png(word)).decode()


async def test_remember_keeps_a_messages_photo_and_counts_the_parts_it_leaves_out(tmp_path, openai_server):
    store = tmp_path / "agent.db"
    env = {**os.environ, "MNEMOSCOPE_EMBED_BASE_URL": openai_server.base_url, "MNEMOSCOPE_IMAGE_EMBED_MODEL": "clip",
           "MNEMOSCOPE_MAX_RETRIES": "0"}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Here is what I paddled on Saturday."},
                                     {"type": "image_url", "image_url": {"url": data_url("red kayak")}},
                                     {"type": "image_url", "image_url": {"url": data_url("second photo")}},
                                     {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]},
        {"role": "assistant", "content": "What a boat!"},
        {"role": "user", "content": [{"type": "input_image", "image_url": data_url("a photo alone")}]},
    ]
    async with agent_session(store, env) as session:
        remembered = await session.call_tool("remember", {"messages": messages})
        assert not remembered.is_error, text_of(remembered)
        stored = remembered.structured_content
        assert len(stored["item_ids"]) == 2 and stored["skipped"] == {"user": 1}
        assert stored["parts_left_out"] == {"image_url": 1, "input_audio": 1, "input_image": 1}
        found = (await session.call_tool("recall", {"query": "red kayak", "strategy": "image", "top_k": 1})).structured_content
        assert [h["id"] for h in found["hits"]] == stored["item_ids"][:1]  # the photo was embedded: found by what it shows
        plain = await session.call_tool("remember", {"messages": [{"role": "user", "content": "Only words."}]})
        assert plain.structured_content["parts_left_out"] == {}
    with Memory(store, extensions=False) as mem:
        first, second = mem.source_items(stored["source_id"])
        assert first.meta["image_url"] == data_url("red kayak") and "image_url" not in second.meta
    sent = [x["image"] for _, body in openai_server.requests for x in body["input"] if isinstance(x, dict)]
    assert sent == [data_url("red kayak")]  # only the photo stored was read and sent


async def test_remember_splits_a_long_message_and_refuses_a_name_no_item_may_hold(tmp_path):
    """A chat message is held to the limit of a document's chunk: longer, it is split into items
    that follow each other (before: one item of the whole message); a speaker's name over the
    limit is one line and stores nothing."""
    store = tmp_path / "agent.db"
    long = " ".join(f"harbour{n} lantern" for n in range(4_000))
    async with agent_session(store, dict(os.environ)) as session:
        remembered = await session.call_tool("remember", {"messages": [{"role": "user", "content": long},
                                                                       {"role": "assistant", "content": "Noted."}]})
        assert not remembered.is_error, text_of(remembered)
        ids = remembered.structured_content["item_ids"]
        named = await session.call_tool("remember", {"messages": [{"role": "user", "content": "hi", "name": "N" * 2_001}]})
        assert named.is_error and text_of(named).count("\n") == 0
        assert text_of(named) == "remember: messages.0.name is 2,001 characters long; at most 2,000; nothing was stored"
    with Memory(store, extensions=False) as mem:
        found = mem.items(ids)
        items = [found[i] for i in ids]
        assert len(mem.sources()) == 1
    assert len(items) > 2 and all(len(i.text) <= MAX_CHUNK_CHARS for i in items)
    assert " ".join(i.text for i in items[:-1]) == long and items[-1].text == "Noted."


async def test_a_message_that_shows_nothing_is_skipped_as_an_empty_one_is(tmp_path):
    """A message of NULs, escapes and zero-width characters was stored as a turn that shows
    nothing (review 12:03; fails before): it is skipped and counted, as an empty one is."""
    store = tmp_path / "agent.db"
    async with agent_session(store) as session:
        nothing = await session.call_tool("remember", {"messages": [{"role": "user", "content": "\x00\u200b\x07"}]})
        assert nothing.is_error and text_of(nothing) == "remember: no user or assistant message with text"
        mixed = await session.call_tool("remember", {"messages": [{"role": "user", "content": "\x1b\u2066 \x00"},
                                                                  {"role": "assistant", "content": "The ferry leaves at dawn."}]})
        assert mixed.structured_content["skipped"] == {"user": 1}, text_of(mixed)
    with Memory(store, extensions=False) as mem:
        assert [i.text for s in mem.sources() for i in mem.source_items(s.id)] == ["The ferry leaves at dawn."]


async def test_an_agent_does_not_replace_a_source_the_person_stored(tmp_path):
    """`remember` under the name of a document the person ingested replaced it (fails before: the
    person's document was gone, the agent's text in its place). It is one line and stores nothing;
    what an agent stored through MCP it may still replace by name."""
    store = tmp_path / "agent.db"
    doc = tmp_path / "harbour.md"
    doc.write_text("# Harbour\nThe lanterns are lit at dusk by the keeper.\n")
    with Memory(store, extensions=False) as mem:
        [person] = mem.ingest(doc).sources
    async with agent_session(store, dict(os.environ)) as session:
        taken = await session.call_tool("remember", {"text": "The lanterns are never lit.", "source": person.name})
        assert taken.is_error and text_of(taken).count("\n") == 0, text_of(taken)
        assert text_of(taken) == (f"remember: source: {person.name!r} is a source stored by the person, not through MCP,"
                                  " and an agent does not replace it; remember under another name; nothing was stored")
        first = await session.call_tool("remember", {"text": "The ferry leaves at dawn.", "source": "agent notes"})
        again = await session.call_tool("remember", {"text": "The ferry leaves at noon.", "source": "agent notes"})
        assert [r.structured_content["status"] for r in (first, again)] == ["added", "replaced"]
    with Memory(store, extensions=False) as mem:
        kept = {s.name: [i.text for i in mem.source_items(s.id)] for s in mem.sources()}
    assert kept == {person.name: ["The lanterns are lit at dusk by the keeper."], "agent notes": ["The ferry leaves at noon."]}


async def test_a_name_made_from_the_content_holds_no_control_character(tmp_path):
    """Without a `source`, the name is made of the content's first words, and the content may hold
    control characters: an escape sequence became part of the source's name, which every hit and
    listing shows (fails before). They are spaces in the name; the text keeps them."""
    store = tmp_path / "agent.db"
    text = "\x1b]0;pwned\x07\x1b[2J The lanterns are lit at dusk."
    async with agent_session(store, dict(os.environ)) as session:
        stored = (await session.call_tool("remember", {"text": text})).structured_content
    assert stored["source"].startswith("mcp:test-agent/]0;pwned [2J The lanterns are lit (")
    with Memory(store, extensions=False) as mem:
        [source] = mem.sources()
        [item] = mem.source_items(source.id)
    assert source.name == stored["source"] and item.text == text.strip()


@pytest.mark.parametrize("name, shown", [("claude\x1b]0;pwned\x07\u202e", "claude ]0;pwned"), ("\u200b \u2066", "unknown")],
                         ids=["escape-and-override", "invisible"])
async def test_the_name_an_agent_gives_itself_is_held_to_the_label_rule(tmp_path, name, shown):
    """The client's name (its initialize request's clientInfo) is the writer every source it
    stores names (written_by) and the head of a name made from the content, and the content's
    words may hold invisible characters: an escape sequence, a bidi override or nothing visible
    at all went into both (fails before). Control characters are spaces there, invisible ones
    dropped, and a name that shows nothing is "unknown"."""
    store = tmp_path / "agent.db"
    async with agent_session(store, dict(os.environ), name=name) as session:
        stored = (await session.call_tool("remember", {"text": "Harbour \u202enotes\u2069 at dusk."})).structured_content
    assert stored["source"].startswith(f"mcp:{shown}/Harbour notes at dusk. (")
    with Memory(store, extensions=False) as mem:
        [source] = mem.sources()
    assert source.meta["written_by"] == f"mcp:{shown}" and source.name == stored["source"]


async def test_a_remember_past_its_limits_is_refused_in_one_line_before_any_work(tmp_path):
    """One remember is one transaction holding the store's write lock: a 20 MB text or 50,000
    messages held it for minutes under load. Past the limits (the defaults, and a setting the
    person lowered) it is refused naming the limit and the size, and nothing is stored."""
    store = tmp_path / "agent.db"
    short = [{"role": "user", "content": "hi"}]
    async with agent_session(store) as session:
        for arguments, expected in [
            ({"text": "The harbour lanterns are lit at dusk. " * 30_000},  # 1.1 MB (fails before: stored, 1,300 items)
             "remember: the text is 1.1 MiB: more than max_remember_bytes (1 MiB), what one remember may add; nothing"
             " was stored (MNEMOSCOPE_MAX_REMEMBER_BYTES raises it)"),
            ({"messages": short * 5_001},
             "remember: 5,001 messages: more than max_remember_messages (5,000), what one remember may add; nothing"
             " was stored (MNEMOSCOPE_MAX_REMEMBER_MESSAGES raises it)"),
            ({"messages": [{"role": "user", "content": [{"type": "text", "text": "lantern " * 70_000}]}] * 2},
             "remember: the messages are 1.1 MiB: more than max_remember_bytes (1 MiB)"),
        ]:
            refused = await session.call_tool("remember", arguments)
            assert refused.is_error and text_of(refused).startswith(expected), text_of(refused)
    lowered = {**os.environ, "MNEMOSCOPE_MAX_REMEMBER_BYTES": "2000", "MNEMOSCOPE_MAX_REMEMBER_MESSAGES": "3"}
    async with agent_session(store, lowered) as session:
        refused = [await session.call_tool("remember", arguments) for arguments in (
            {"text": "lantern " * 300}, {"messages": short * 4}, {"messages": [{"role": "user", "content": "x" * 2000}]})]
        assert [text_of(r).split(":")[1] for r in refused] == [" the text is 2.3 KiB", " 4 messages", " the messages are 2 KiB"]
        assert not (await session.call_tool("remember", {"text": "lantern " * 200})).is_error  # within them: stored
        kept = await session.call_tool("remember", {"messages": [{"role": "user", "content": f"hi {n}"} for n in range(3)]})
        assert not kept.is_error and len(kept.structured_content["item_ids"]) == 3, text_of(kept)
    with Memory(store, extensions=False) as mem:
        assert [len(mem.source_items(s.id)) for s in mem.sources()] == [1, 3]
