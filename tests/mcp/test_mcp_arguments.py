"""Tool arguments built to hurt, sent by the SDK's own client over stdio: every one is refused in
one line naming the tool and the argument, nothing is stored, and the server keeps serving."""

from __future__ import annotations

import asyncio
import json
import select
import subprocess
import time

import pytest

from mnemoscope.app.mcp_stdio import WireLines
from mnemoscope.engine import Memory

from .test_mcp_server import ROOT, agent_session, server_command, text_of

pytestmark = pytest.mark.xdist_group("mcp")


async def test_hostile_arguments_are_one_line_each_and_store_nothing(tmp_path):
    store = tmp_path / "agent.db"
    async with agent_session(store) as session:
        stored = (await session.call_tool("remember", {"text": "Biscuit the beagle came home in May 2023."})).structured_content
        for tool, arguments, expected in [
            ("remember", {"text": "Kept under a name.", "sourc": "notes"},  # fails before: stored, its name lost
             "remember: unknown argument 'sourc' (it takes messages, source, text, title); nothing was done"),
            ("recall", {"query": "beagle", "top-k": 3}, "recall: unknown argument 'top-k'"),
            ("forget", {"item_ids": list(range(10**6, 10**6 + 5000))},  # fails before: 5,000 ids in the line
             "forget: no item with id 1000000, 1000001, 1000002, 1000003, 1000004, 1000005, 1000006, 1000007, 1000008,"
             " 1000009 and 4,990 more; nothing was deleted"),
            ("forget", {"source_id": 2**70}, "forget: a number in this request is out of range"),
            ("episodes", {"source_id": 2**63}, "episodes: a number in this request is out of range"),
            ("facts", {"limit": -1}, "facts: limit: input should be greater than or equal to 1"),
            ("recall", {"query": "beagle", "top_k": 10**30}, "recall: top_k: input should be less than or equal to 100"),
            ("recall", {"query": "beagle", "strategy": "s" * 10_000},  # fails before: 10,000 characters echoed
             "recall: unknown strategy 'sssssssssssssssssssssssssssssssssssssss…; choose one of: bm25,"),
            ("recall", {"query": "q" * 2_000_000}, "recall: the query is 2,000,000 characters long; the limit is"),
            ("recall", {"query": "beagle", "as_of": "2023-02-30"}, "recall: as of '2023-02-30' is not a date"),
            ("recall", {"query": "beagle", "as_of": "0000-01-01"}, "recall: as of '0000-01-01' is not a date"),
            ("recall", {"query": "beagle", "as_of": "2023\x00"}, "recall: as of '2023\\x00' is not a date"),
            ("facts", {"as_of": "2023-02-30"}, "facts: as of '2023-02-30' is not a date"),  # fails before: no as_of
            ("remember", {"messages": [{"role": "user", "content": "hi", "timestamp": 1e20}]},
             "remember: message 0: timestamp 1e+20 is out of range"),
            # a name comes back with every hit and is a list's line: before, each of these was stored
            ("remember", {"text": "Named.", "source": "s" * 100_000},
             "remember: source is 100,000 characters long; at most 500; nothing was stored"),
            ("remember", {"text": "Named.", "source": "notes\x1b]0;pwned\x07"},
             "remember: source holds a control character (U+001B at 5); nothing was stored"),
            ("remember", {"text": "Named.", "title": "a\nb"},
             "remember: title holds a control character (U+000A at 1); nothing was stored"),
            ("remember", {"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "yo", "name": "Ann\x9b2J"}]},
             "remember: messages.1.name holds a control character (U+009B at 3); nothing was stored"),
            # a name that shows one text and holds another, or shows nothing (fails before: each stored)
            ("remember", {"text": "Named.", "source": "notes\u202etxt.exe"},
             "remember: source holds an invisible character (U+202E at 5); nothing was stored"),
            ("remember", {"text": "Named.", "title": "\u2066Harbour\u2069"},
             "remember: title holds an invisible character (U+2066 at 0); nothing was stored"),
            ("remember", {"text": "Named.", "source": "no\u200btes"},
             "remember: source holds an invisible character (U+200B at 2); nothing was stored"),
            ("remember", {"text": "Named.", "source": " \u3000 "}, "remember: source is blank; nothing was stored"),
            ("remember", {"text": "Named.", "title": "  "}, "remember: title is blank; nothing was stored"),
            ("remember", {"text": "\x00\x1b\u200b \x07"},  # fails before: stored as 'mcp:test-agent/ (…)'
             "remember: the text shows nothing (only control or invisible characters); nothing was stored"),
            ("remember", {"messages": [{"role": "user", "content": "hi", "name": "\xa0"}]},
             "remember: messages.0.name is blank; nothing was stored"),
        ]:
            result = await session.call_tool(tool, arguments)
            assert result.is_error and text_of(result).startswith(expected), text_of(result)
            assert "\n" not in text_of(result) and "Traceback" not in text_of(result) and len(text_of(result)) < 400
        alive = await session.call_tool("recall", {"query": "beagle", "top_k": 1})
        assert [h["id"] for h in alive.structured_content["hits"]] == stored["item_ids"]
    with Memory(store, extensions=False) as mem:
        assert [s.name for s in mem.sources()] == [stored["source"]]  # nothing else was stored


INITIALIZE = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
REFUSED = "a string in this request is not text: an unpaired surrogate (U+{}); the request was not run"


def raw_exchange(store, lines: list[str], ids: set[int | str]) -> dict[int | str | None, dict]:
    """The server's answers, by id, to the ``lines`` after the initialize handshake (raw JSON
    lines, since the SDK's client will not encode an unpaired surrogate), read until each of
    ``ids`` is answered; the server must then end cleanly when its stdin closes. Answers without
    an id (id null) are listed in order under None."""
    server = subprocess.Popen(server_command(store), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    answers: dict[int | str, dict] = {}
    try:
        server.stdin.write("".join(json.dumps(r) + "\n" for r in INITIALIZE) + "".join(line + "\n" for line in lines))
        server.stdin.flush()
        deadline = time.monotonic() + 60  # a request dropped is never answered: wait for the others only so long
        while not ids <= answers.keys() and select.select([server.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
            line = server.stdout.readline()
            if not line:  # the server ended
                break
            answer = json.loads(line)
            if answer.get("id") is None:
                answers.setdefault(None, []).append(answer)
            elif answer["id"] != 0:  # 0 is the handshake's
                answers[answer["id"]] = answer
    finally:
        server.stdin.close()
        try:
            ended = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    assert ended == 0
    return answers


def test_a_request_whose_strings_are_not_text_is_answered_not_dropped(tmp_path):
    """JSON may escape an unpaired surrogate ("\\ud800": Python's encoder writes one for such a
    string), which is no text. The SDK's parser refuses such a line and then drops it without an
    answer, so the client waited for ever (fails before: no answer to ids 1-3); the wire answers
    it with a JSON-RPC error naming its id, runs nothing, and serves the next request."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {"text": "a \ud800 b"}}},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/call",
         "params": {"name": "remember", "arguments": {"messages": [{"role": "user", "content": "x\udcff"}]}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "be\ud800"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",  # a surrogate pair is one character: read as sent
         "params": {"name": "remember", "arguments": {"text": "Biscuit the beagle \U0001F436."}}},
    ]
    # \ud800 written as an escape: valid JSON
    answers = raw_exchange(tmp_path / "agent.db", [json.dumps(r) for r in requests], {1, "two", 3, 4})
    assert {n: answers[n]["error"] for n in (1, "two", 3)} == {
        1: {"code": -32602, "message": REFUSED.format("D800")}, "two": {"code": -32602, "message": REFUSED.format("DCFF")},
        3: {"code": -32602, "message": REFUSED.format("D800")}}
    assert not answers[4]["result"]["isError"]
    with Memory(tmp_path / "agent.db", extensions=False) as mem:
        assert [i.text for s in mem.sources() for i in mem.source_items(s.id)] == ["Biscuit the beagle \U0001F436."]


def test_a_request_nested_too_deep_with_a_surrogate_leaves_the_server_serving(tmp_path):
    """A line that escapes an unpaired surrogate and nests 2,000 deep made Python's parser raise
    RecursionError out of the wire, and the server died: every later request went unanswered
    (fails before: no answer to ids 2 and 3, and the server's exit is not 0). The SDK refuses
    such a line as it does one without the surrogate, and the next requests are answered."""
    deep = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":'
            '{"query":"\\ud800","x":' + "[" * 2000 + "]" * 2000 + "}}}")
    after = [{"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "\ud800"}}}]
    answers = raw_exchange(tmp_path / "agent.db", [deep] + [json.dumps(r) for r in after], {2, 3})
    assert sorted(answers, key=str) == [2, 3, None]  # the deep line's id cannot be read: answered with id null
    assert [a["error"]["code"] for a in answers[None]] == [-32600]
    assert "recall" in {tool["name"] for tool in answers[2]["result"]["tools"]}
    assert answers[3]["error"] == {"code": -32602, "message": REFUSED.format("D800")}


def test_every_line_the_sdk_cannot_read_is_answered_and_the_server_serves_on(tmp_path):
    """The SDK drops a line its parser refuses, with no answer: a client of that request waited
    for ever (fails before: none of these answered). The wire answers each with a JSON-RPC error,
    as the specification asks: -32700 for a line that is not JSON, -32600 for JSON that is no
    JSON-RPC message (its id named where one can be read); a blank line carries nothing."""
    lines = ["this is not json", '{"jsonrpc": "2.0", "id": 7, "method": 5}', "[1, 2]", "",
             '{"jsonrpc": "1.0", "id": "old", "method": "tools/list"}', '{"id": true, "method": "x"}',
             "[" * 3000 + "]" * 3000, json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
             # deeper than the SDK reads (about 200), not than Python: fails before ("not a JSON-RPC request")
             '{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"x": ' + "[" * 300 + "]" * 300 + "}}"]
    answers = raw_exchange(tmp_path / "agent.db", lines, {7, "old", 8, 9})
    assert answers[9]["error"] == {"code": -32600, "message": "a message nested too deeply to read; it was not run"}
    assert answers[7]["error"]["code"] == -32600 and answers["old"]["error"]["code"] == -32600
    assert "not a JSON-RPC request, notification or response" in answers[7]["error"]["message"]
    assert [a["error"]["code"] for a in answers[None]] == [-32700, -32600, -32600, -32600]
    assert answers[None][0]["error"]["message"] == "not JSON; the line was not read"
    assert "tools" in answers[8]["result"]


async def test_a_line_longer_than_the_limit_is_answered_and_the_next_is_read():
    """A message longer than the wire's limit was an error out of the reader that ended the
    server (asyncio's readline raises ValueError); it is read to its end, answered -32700, and
    the next line is passed on, parsed: the wire hands the server each message it parsed once (it
    handed on the text, which the SDK's transport parsed a second time: fails before)."""
    reader = asyncio.StreamReader(limit=64)
    answered: list[str] = []

    class Collected:
        async def write(self, text: str) -> None:
            answered.append(text)

        async def flush(self) -> None:
            pass

    wire = WireLines(reader, Collected(), limit=64)
    tools = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
    reader.feed_data(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"y" * 500 + b'"}}\n')
    reader.feed_data(tools.encode() + b"\n" + b"z" * 300)
    reader.feed_eof()
    read = [message async for message in wire]
    assert [m.message.model_dump(by_alias=True, exclude_unset=True) for m in read] == [json.loads(tools)]
    assert [json.loads(a)["error"] for a in answered] == [
        {"code": -32700, "message": "a message longer than 64 bytes; it was not read"}] * 2


async def test_a_source_resource_naming_no_id_is_one_line_and_no_traceback(tmp_path):
    """``mnemoscope://sources/abc`` was answered "Error creating resource from template …", which
    says nothing of why, and the server logged a traceback for the host (fails before)."""
    from mcp.shared.exceptions import MCPError

    with open(tmp_path / "stderr.txt", "w") as errlog:
        async with agent_session(tmp_path / "agent.db", errlog=errlog) as session:
            for uri, says in [("mnemoscope://sources/abc", "no source with id 'abc' (mnemoscope://sources lists them)"),
                              ("mnemoscope://sources/" + "9" * 5000,
                               f"no source with id '{'9' * 39}… (mnemoscope://sources lists them)")]:
                with pytest.raises(MCPError) as refused:
                    await session.read_resource(uri)
                assert str(refused.value) == says
            assert json.loads((await session.read_resource("mnemoscope://stats")).contents[0].text)["sources"] == 0
    logged = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in logged and "ERROR" not in logged, logged


async def test_a_new_store_the_server_makes_is_said_in_the_hosts_log(tmp_path):
    """A host configured with a mistyped --store served a new empty store in silence: the agent
    wrote into it and recalled nothing of the person's (fails before: nothing said). The server
    says so once on stderr, the host's log; the next start, on that store, says nothing."""
    store = tmp_path / "typo" / "agent.db"
    for says in ([f"mnemoscope mcp: no store was at {store}: a new empty one was made (a mistyped --store?)"], []):
        with open(tmp_path / "stderr.txt", "w") as errlog:
            async with agent_session(store, errlog=errlog) as session:
                assert (await session.call_tool("recall", {"query": "anything"})).structured_content["hits"] == []
        assert (tmp_path / "stderr.txt").read_text().splitlines() == says


async def test_a_number_or_a_switch_sent_as_text_is_refused_naming_the_tool_and_argument(tmp_path):
    """pydantic's lax mode read top_k "5" as 5 and true as 1, dry_run "false" as false and used
    ["7"] as [7] (fails before: each run): the tools' schemas say integer and boolean, and so do
    their checks now. A whole number written 5.0 is the integer JSON Schema says it is."""
    store = tmp_path / "agent.db"
    async with agent_session(store) as session:
        stored = (await session.call_tool("remember", {"text": "Biscuit the beagle came home in May 2023."})).structured_content
        hit = await session.call_tool("recall", {"query": "beagle", "top_k": 5.0})
        assert not hit.is_error and hit.structured_content["hits"], text_of(hit)
        token, item = hit.structured_content["token"], stored["item_ids"][0]
        for tool, arguments, expected in [
            ("recall", {"query": "beagle", "top_k": "5"}, 'recall: top_k: input should be a valid integer (got "5")'),
            ("recall", {"query": "beagle", "top_k": True}, "recall: top_k: input should be a valid integer (got true)"),
            ("recall", {"query": "beagle", "top_k": 2.5}, "recall: top_k: input should be a valid integer"),
            ("feedback", {"token": token, "used": [str(item)]}, "feedback: used.0: input should be a valid integer"),
            ("facts", {"limit": "3"}, 'facts: limit: input should be a valid integer (got "3")'),
            ("episodes", {"source_id": str(stored["source_id"])}, "episodes: source_id: input should be a valid integer"),
            ("forget", {"source_id": stored["source_id"], "dry_run": "false"},
             'forget: dry_run: input should be a valid boolean (got "false")'),
            ("forget", {"item_ids": [True]}, "forget: item_ids.0: input should be a valid integer (got true)"),
        ]:
            result = await session.call_tool(tool, arguments)
            assert result.is_error and text_of(result).startswith(expected), text_of(result)
        taught = await session.call_tool("feedback", {"token": token, "used": [item]})
        assert not taught.is_error, text_of(taught)  # the token was not spent by the refused call
    with Memory(store, extensions=False) as mem:
        assert [s.id for s in mem.sources()] == [stored["source_id"]]  # nothing was deleted


def test_arguments_sent_as_json_text_are_refused_naming_the_tool(tmp_path):
    """A client that encodes a tool's arguments twice sends a string: the SDK answered "Invalid
    request parameters" (fails before), naming neither the tool nor what was wrong. It stays an
    error of the request (-32602), and names both; the next call is served."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": '{"query": "beagle"}'}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", "arguments": [{"text": "x"}]}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "beagle"}}},
    ]
    answers = raw_exchange(tmp_path / "agent.db", [json.dumps(r) for r in requests], {1, 2, 3})
    assert answers[1]["error"] == {"code": -32602, "message": 'recall: arguments must be a JSON object ({"name": value, …}),'
                                   " not a string (arguments encoded as JSON text once too often?); nothing was done"}
    assert answers[2]["error"]["message"].startswith("remember: arguments must be a JSON object")
    assert answers[2]["error"]["message"].endswith("not an array; nothing was done")
    assert answers[3]["result"]["structuredContent"]["hits"] == []
    with Memory(tmp_path / "agent.db", extensions=False) as mem:
        assert mem.sources() == []


async def test_a_facts_or_episodes_filter_that_names_nothing_is_an_error_saying_so(demo_copy):
    """The CLI refuses ``facts --entity Mya`` and ``episodes --source 99`` since session 22; the
    MCP tools answered [] (fails before), which an agent reads as "Maya has no facts". An error
    result names what is not there (a tool's error is the model's to read and act on: MCP's
    tool execution errors), the nearest names too; an entity with no facts still lists []."""
    async with agent_session(demo_copy) as session:
        for tool, arguments, expected in [
            ("facts", {"entity": "Mya"}, "facts: no entity is named 'Mya' or has it in its name; did you mean 'Maya'"),
            ("facts", {"entity": "Zanzibar Quokka"},
             "facts: no entity is named 'Zanzibar Quokka' or has it in its name (the entities tool lists them)"),
            ("facts", {"entity": "99999"}, "facts: no entity with id 99999"),
            ("episodes", {"source_id": 99}, "episodes: no source with id 99 (mnemoscope://sources lists them)"),
        ]:
            result = await session.call_tool(tool, arguments)
            assert result.is_error and text_of(result).startswith(expected), text_of(result)
        maya = await session.call_tool("facts", {"entity": "Maya", "limit": 2})
        assert not maya.is_error and len(maya.structured_content["result"]) == 2
        assert (await session.call_tool("facts", {"entity": "Maya", "as_of": "1990"})).structured_content["result"] == []
