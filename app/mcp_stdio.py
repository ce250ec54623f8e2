"""The MCP server's stdin and stdout read and written by the event loop itself.

The SDK's stdio transport wraps stdin and stdout in anyio's file objects, which run every
``readline``, ``write`` and ``flush`` in a worker thread: three thread hops for each message,
which cost the server more CPU than the rest of answering a ping. An agent host spawns the server
with pipes, and the event loop can wait on a pipe directly, so :func:`wire_streams` hands the
SDK's ``stdio_server`` line streams that do so. Like the SDK's own claim on the standard streams,
it moves fd 0 and fd 1 off the wire while serving (fd 0 to the null device, fd 1 to stderr), so a
stray print or a child process cannot write into the protocol.

Anything but a pipe or a socket (a terminal, a file) is left to the SDK's transport: the loop
cannot wait on a file, and a terminal's flags are shared with the shell that owns it.

A request whose JSON escapes an unpaired surrogate (``"\\ud800"``: valid JSON, which Python's
encoder writes for such a string, but no text) is one the SDK's parser refuses and then drops
without an answer, so the client would wait for ever: the wire answers it with a JSON-RPC error
naming its id instead, and the request is not run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

STDIN, STDOUT, STDERR = 0, 1, 2
# One message is one line; a `remember` of a long document is a long line.
LINE_LIMIT = 1 << 30
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # half of a pair, or alone
INVALID_PARAMS = -32602


class WireLines:
    """The messages arriving on the wire, one decoded line at a time (as the SDK reads them); a
    request the SDK would drop for an unpaired surrogate is answered on ``writer`` instead."""

    def __init__(self, reader: asyncio.StreamReader, writer: WireWriter) -> None:
        self.reader = reader
        self.writer = writer

    def __aiter__(self) -> WireLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self.reader.readline()
            if not line:
                raise StopAsyncIteration
            text = line.decode("utf-8", errors="replace")
            answer = _not_text(text) if _SURROGATE_ESCAPE.search(text) else None
            if answer is None:
                return text
            await self.writer.write(answer)
            await self.writer.flush()


def _not_text(line: str) -> str | None:
    """The JSON-RPC error answering a request that escapes an unpaired surrogate, or None for a
    line the SDK reads (a surrogate pair is one character), or cannot read for another reason (not
    JSON, or nested too deep for Python's parser: the SDK drops such a line and serves the next)."""
    from mcp import types

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValueError:
        pass
    try:
        request: Any = json.loads(line)
    except (ValueError, RecursionError):  # nested deeper than Python's parser recurses: the SDK's to refuse
        return None
    lone = next((s for s in _strings(request) if not _encodes(s)), None)
    if lone is None or not isinstance(request, dict) or not isinstance(request.get("id"), (int, str)):
        return None
    bad = next(c for c in lone if 0xD800 <= ord(c) <= 0xDFFF)
    message = f"a string in this request is not text: an unpaired surrogate (U+{ord(bad):04X}); the request was not run"
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": {"code": INVALID_PARAMS, "message": message}}) + "\n"


def _strings(value: Any) -> list[str]:
    """Every string in a parsed JSON value, keys too (not recursive: JSON nests as deep as it likes)."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class WireWriter:
    """The SDK writes each answer and then flushes it; the flush waits until the pipe took it."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


def _on_a_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def wire_streams() -> AsyncIterator[tuple[WireLines, WireWriter] | None]:
    """The wire's line streams for ``stdio_server(stdin=…, stdout=…)``, or None where the SDK's
    own transport must serve (not POSIX, or stdin or stdout is not a pipe or a socket)."""
    if sys.platform == "win32" or not (_on_a_pipe(STDIN) and _on_a_pipe(STDOUT)):
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(STDIN), os.dup(STDOUT)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, STDIN)
    os.close(null)
    os.dup2(STDERR, STDOUT)
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    # The transports get copies of the wire's descriptors: they close theirs when the host hangs
    # up, and the originals are still there to put back.
    reading, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                              os.fdopen(os.dup(wire_in), "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                        os.fdopen(os.dup(wire_out), "wb", buffering=0))
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        wire_writer = WireWriter(writer)
        yield WireLines(reader, wire_writer), wire_writer
    finally:
        os.dup2(wire_in, STDIN)  # the standard streams back on the wire, as the SDK's claim leaves them
        os.dup2(wire_out, STDOUT)
        os.close(wire_in)
        os.close(wire_out)
        writer.close()
        reading.close()
