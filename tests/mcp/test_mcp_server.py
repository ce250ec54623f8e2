"""The MCP server through the SDK's own clients: ``mnemoscope mcp`` spawned over stdio on a
temporary store, and once over streamable HTTP on 127.0.0.1.

The SDK is imported inside the tests, not at collection: importing it is costly, and under xdist
every worker collects this module while one worker runs its tests (their group)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, TextIO

import pytest

from mnemoscope.engine import Memory

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.xdist_group("mcp")

CONVERSATION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I adopted a beagle called Biscuit last weekend.", "timestamp": "2024-05-06T09:00:00Z"},
    {"role": "assistant", "content": [{"type": "text", "text": "Congratulations! How is Biscuit settling in?"}]},
    {"role": "user", "name": "Maya", "content": "He loves the long walks along the Tagus river."},
]


def server_command(store: Path | None, *extra: str) -> list[str]:
    """``mnemoscope mcp`` on ``store``, or on the demo store (``--demo``) when it is None."""
    where = ["--demo", "mcp"] if store is None else ["mcp", "--store", str(store)]
    return [sys.executable, "-m", "mnemoscope", *where, *extra]


def text_of(result) -> str:
    return result.content[0].text


def agent(name: str = "test-agent"):
    """The client's name and version, as the server logs them (``mcp:test-agent``)."""
    from mcp_types import Implementation

    return Implementation(name=name, version="1.0")


@asynccontextmanager
async def agent_session(store: Path | None, env: dict[str, str] | None = None, name: str = "test-agent",
                        errlog: TextIO | None = None) -> AsyncIterator[Any]:
    """The SDK's client session with ``mnemoscope mcp`` on ``store``, spawned over stdio, initialized,
    the client introducing itself as ``name``; what the server says on stderr goes to ``errlog``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command, *args = server_command(store)
    params = StdioServerParameters(command=command, args=args, cwd=str(ROOT), env=env)
    async with (stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
                ClientSession(read, write, client_info=agent(name)) as session):
        await session.initialize()
        yield session


async def test_an_agent_remembers_recalls_teaches_and_forgets_over_stdio(tmp_path):
    store = tmp_path / "agent.db"
    async with agent_session(store) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"remember", "recall", "feedback", "facts", "entities", "episodes", "forget"}
        assert all(t.description and len(t.description) > 80 for t in tools.values())  # docstrings an agent can act on
        assert tools["recall"].input_schema["properties"]["mode"]["enum"] == ["lite", "pro", "max"]

        remembered = await session.call_tool("remember", {"messages": CONVERSATION, "title": "Biscuit"})
        assert not remembered.is_error, text_of(remembered)
        stored = remembered.structured_content
        assert stored["status"] == "added" and len(stored["item_ids"]) == 3 and stored["skipped"] == {"system": 1}
        again = await session.call_tool("remember", {"messages": CONVERSATION})
        assert again.structured_content["status"] == "unchanged"  # the same content is stored once

        recalled = (await session.call_tool("recall", {"query": "what is the name of the beagle", "top_k": 3})).structured_content
        top = recalled["hits"][0]
        assert top["id"] == stored["item_ids"][0] and "Biscuit" in top["text"] and top["speaker"] == "User"
        assert top["source"] == stored["source"] and top["features"]
        assert recalled["token"]
        with Memory(store, client="cli") as other:  # another process writes: the next recall takes it in first
            other.add_note("The vet, Dr. Okafor, works on Alberta Street.", name="vet")
        vet = (await session.call_tool("recall", {"query": "Okafor Alberta Street", "top_k": 1})).structured_content
        assert "Okafor" in vet["hits"][0]["text"] and vet["hits"][0]["source"] == "vet"
        assert tools["recall"].input_schema["properties"]["as_of"]
        now = (await session.call_tool("recall", {"query": "beagle Biscuit", "as_of": "2999-01-01"})).structured_content
        assert now["hits"] and now["facts"] and all(f["state"] == "current" for f in now["facts"])  # facts marked by state

        taught = await session.call_tool("feedback", {"token": recalled["token"], "used": [top["id"]]})
        assert not taught.is_error, text_of(taught)
        assert taught.structured_content["used"] == [top["id"]]
        replay = await session.call_tool("feedback", {"token": recalled["token"], "used": [top["id"]]})
        assert replay.is_error and text_of(replay).startswith("feedback: ")

        facts = (await session.call_tool("facts", {"entity": "User"})).structured_content["result"]
        assert any("Biscuit" in f["object"] for f in facts)
        stats = json.loads((await session.read_resource("mnemoscope://stats")).contents[0].text)
        assert stats["sources"] == 2 and stats["items"] == 4
        items = json.loads((await session.read_resource(f"mnemoscope://sources/{stored['source_id']}")).contents[0].text)
        assert [i["speaker"] for i in items] == ["User", "Assistant", "Maya"]

        preview = (await session.call_tool("forget", {"source_id": stored["source_id"], "dry_run": True})).structured_content
        assert preview["dry_run"] and preview["changes"]["items"] == 3
        assert json.loads((await session.read_resource("mnemoscope://stats")).contents[0].text)["items"] == 4
        gone = await session.call_tool("forget", {"source_id": stored["source_id"]})
        assert not gone.is_error and gone.structured_content["changes"]["items"] == 3
        after = (await session.call_tool("recall", {"query": "beagle Biscuit"})).structured_content
        assert [h["source"] for h in after["hits"]] == ["vet"]  # the forgotten conversation is gone

        for tool, arguments, expected in [
            ("recall", {"query": "x", "top_k": 0}, "recall: top_k: input should be greater than or equal to 1 (got 0)"),
            ("recall", {"query": "x", "strategy": "nope"}, "recall: unknown strategy 'nope'"),
            ("recall", {"query": "   "}, "recall: the query is empty"),
            ("recall", {"query": "x", "as_of": "last spring"}, "recall: as of 'last spring' is not a date"),
            ("remember", {"messages": [{"role": "user", "content": 5}]}, "remember: messages.0.content"),
            ("remember", {"messages": [{"role": "system", "content": "x"}]}, "remember: no user or assistant message"),
            ("remember", {}, "remember: give either messages"),
            ("forget", {"item_ids": [987654]}, "forget: no item with id 987654; nothing was deleted"),
            ("feedback", {"token": "forged", "used": [1]}, "feedback: 'forged' is not a recall token"),
        ]:
            result = await session.call_tool(tool, arguments)
            assert result.is_error and text_of(result).startswith(expected), text_of(result)
            assert "\n" not in text_of(result) and "Traceback" not in text_of(result)

    with Memory(store) as mem:  # the server closed the store cleanly; what it acknowledged is there
        assert mem.counts().items == 1 and mem.store.integrity_ok()
        logged = [(e.client, e.action) for e in reversed(mem.activity.recent())]
    assert logged[:2] == [("mcp:test-agent", "source.added"), ("mcp:test-agent", "facts.extracted")]
    assert ("mcp:test-agent", "feedback") in logged and logged[-1] == ("mcp:test-agent", "source.deleted")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def initialize_over_http(port: int, *headers: dict[str, str]) -> list[tuple[int, bytes]]:
    """(status, body) of an initialize request sent with each of ``headers``."""
    import http.client
    import json

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "page", "version": "1"}}})
    out = []
    for given in headers:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/mcp", body, {"Content-Type": "application/json",
                                            "Accept": "application/json, text/event-stream", **given})
        reply = conn.getresponse()
        out.append((reply.status, reply.read()))
        conn.close()
    return out


def refused_from_a_web_page(port: int, token: str) -> list[tuple[int, bytes]]:
    """(status, body) of an initialize request sent with the token but another site's Host, then Origin."""
    bearer = {"Authorization": f"Bearer {token}"}
    return initialize_over_http(port, {"Host": f"evil.example:{port}", **bearer},
                                {"Host": f"127.0.0.1:{port}", "Origin": "http://evil.example", **bearer})


def wait_for_port(server: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 60
    while True:  # the SDK's import takes seconds on a busy machine
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read().decode()
            time.sleep(0.2)


async def test_an_agent_can_try_the_demo_store_and_it_is_gone_when_the_server_stops(tmp_path):
    """`mnemoscope --demo mcp` served the default store (fails before: an empty one made for it,
    whose recall found nothing). Now the demo content, in a temporary store the server removes."""
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "TMPDIR": str(tmp_path / "tmp")}
    env.pop("MNEMOSCOPE_STORE", None)
    async with agent_session(None, env) as session:
        recalled = (await session.call_tool("recall", {"query": "where does Maya live now", "top_k": 3})).structured_content
        facts = (await session.call_tool("facts", {"entity": "Maya", "limit": 5})).structured_content
        assert [p.name for p in (tmp_path / "tmp").iterdir()][0].startswith("mnemoscope-demo-")
    assert len(recalled["hits"]) == 3 and facts["result"], (recalled, facts)
    assert not (tmp_path / "data").exists() and list((tmp_path / "tmp").iterdir()) == []


async def test_streamable_http_on_loopback_serves_only_the_holder_of_the_token(tmp_path):
    """Any user of the machine can connect to a loopback port: without the person's token (0600,
    beside their config) a request is 401 and reaches nothing (fails before: another user's
    client initialized a session and could recall and forget)."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    port, store = free_port(), tmp_path / "http.db"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}  # no token yet: this start makes it
    path = tmp_path / "config" / "mnemoscope" / "mcp-token"
    server = subprocess.Popen(server_command(store, "--http", str(port)), cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_port(server, port)
        token = path.read_text().strip()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(token) >= 32
        assert [status for status, _ in initialize_over_http(port, {}, {"Authorization": "Bearer " + "x" * 43},
                                                             {"Authorization": f"Basic {token}"},
                                                             {"Authorization": f"bearer {token}"})] == [401, 401, 401, 200]
        url = f"http://127.0.0.1:{port}/mcp"
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with client, streamable_http_client(url, http_client=client) as (read, write), \
                ClientSession(read, write, client_info=agent()) as session:
            await session.initialize()
            stored = (await session.call_tool("remember", {"text": "# Alps\nWe hiked the Eiger trail in June.",
                                                           "title": "Trip"})).structured_content
            hits = (await session.call_tool("recall", {"query": "Eiger hike", "strategy": "bm25"})).structured_content["hits"]
            assert hits and hits[0]["id"] in stored["item_ids"] and hits[0]["source"] == stored["source"]
        # a web page that rebinds its name to 127.0.0.1 reaches the port but not the memory, token or not
        assert refused_from_a_web_page(port, token) == [(421, b"Invalid Host header"), (403, b"Invalid Origin header")]
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert out == b""  # nothing but the protocol, and over HTTP not even that, goes to stdout
    again = restarted_stderr(store, env)
    assert token.encode() not in again  # the token shown once (fails before: at every start)
    assert f"no store was at {store}: a new empty one was made".encode() in err.splitlines()[0]  # (a new store)
    assert f"'Authorization: Bearer {token}' (a new token, kept in {path}".encode() in err.splitlines()[1]
    assert f"'Authorization: Bearer TOKEN', TOKEN being what {path} holds (cat {path})".encode() in again, again


def restarted_stderr(store: Path, env: dict[str, str]) -> bytes:
    """What a later start of the HTTP server says on stderr before it serves."""
    port = free_port()
    server = subprocess.Popen(server_command(store, "--http", str(port)), cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(server, port)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    return err


def test_the_token_and_the_folders_it_makes_are_private_whatever_the_umask(tmp_path):
    """Under umask 000 the folders made above the token were 0777 (fails before): every user could
    replace the token file, and the server refused its own token."""
    from mnemoscope.app.mcp_http import http_token

    path = tmp_path / "config" / "deep" / "mcp-token"
    before = os.umask(0)
    try:
        token = http_token(path)
    finally:
        os.umask(before)
    assert token.new and len(token.value) >= 32 and not http_token(path).new  # made once, then read
    assert http_token(path).value == token.value
    assert [stat.S_IMODE(p.stat().st_mode) for p in (path, path.parent, path.parent.parent)] == [0o600, 0o700, 0o700]


def test_a_token_file_others_could_read_or_change_serves_nothing(tmp_path):
    """The token is refused in one line, exit 2, before a store is opened (none is made)."""
    from mnemoscope.app.mcp_http import token_path

    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = path.read_bytes() if path.exists() else None
    try:
        for mode, says in [(0o644, "other users can read the MCP token (mode 644)"), (0o602, "others can write it (mode 602)")]:
            path.write_text("t" * 43 + "\n")
            path.chmod(mode)
            done = subprocess.run(server_command(tmp_path / "never.db", "--http", str(free_port())), cwd=ROOT,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
            assert str(path) in done.stderr and not (tmp_path / "never.db").exists()
    finally:
        path.unlink()
        if saved is not None:
            path.write_bytes(saved)
            path.chmod(0o600)


# The server with one more tool that writes to stdout, as a stray print or a child process would.
NOISY_SERVER = """
import os, sys
from mnemoscope.engine import Memory
from mnemoscope.app.mcp_server import build_server
server = build_server(Memory(sys.argv[1]))

@server.tool()
def noisy() -> str:
    '''Writes to stdout.'''
    print("stray print", flush=True)
    os.write(1, b"stray write\\n")
    return "done"

server.run("stdio")
"""


async def test_a_stray_write_to_stdout_goes_to_stderr_not_into_the_protocol(tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    errors = tmp_path / "stderr.txt"
    params = StdioServerParameters(command=sys.executable, args=["-c", NOISY_SERVER, str(tmp_path / "noisy.db")],
                                   cwd=str(ROOT))
    with errors.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert text_of(await session.call_tool("noisy", {})) == "done"
            assert not (await session.call_tool("recall", {"query": "anything"})).is_error  # the wire still works
    assert "stray print" in errors.read_text() and "stray write" in errors.read_text()


def test_the_host_closing_the_wire_ends_the_server_quietly(tmp_path):
    """An agent host ends a session by closing the server's stdin: the server exits 0 and writes
    nothing to stderr, which the host keeps in its log."""
    server = subprocess.Popen(server_command(tmp_path / "quiet.db"), cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}}
    server.stdin.write((json.dumps(hello) + "\n").encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    server.stdin.close()
    code = server.wait(timeout=60)
    errors = server.stderr.read().decode()
    assert code == 0 and "Traceback" not in errors, errors[-2000:]
