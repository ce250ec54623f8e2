"""The MCP server's stdin and stdout read and written by the event loop itself.

The SDK's stdio transport wraps stdin and stdout in anyio's file objects, which run every
``readline``, ``write`` and ``flush`` in a worker thread: three thread hops for each message,
which cost the server more CPU than the rest of answering a ping. An agent host spawns the server
with pipes, and the event loop can wait on a pipe directly, so :func:`wire_transport` is the
transport there: it reads each line, parses it once into the message the SDK's server takes (and
answers it itself when it is none), and writes the server's answers. Like the SDK's own claim on the standard streams,
it moves fd 0 and fd 1 off the wire while serving (fd 0 to the null device, fd 1 to stderr), so a
stray print or a child process cannot write into the protocol.

Anything but a pipe or a socket (a terminal, a file) is left to the SDK's transport: the loop
cannot wait on a file, and a terminal's flags are shared with the shell that owns it.

Every line is answered or read. The SDK drops a line its parser refuses without an answer (the
client of a request waits for ever), so the wire answers such a line itself with a JSON-RPC error,
as the specification asks, and passes the next one on: -32700 (parse error, id null) for a line
that is not JSON or is longer than :data:`LINE_LIMIT`; -32602 naming its id for a request whose
JSON escapes an unpaired surrogate (``"\\ud800"``: valid JSON, which Python's encoder writes for such
a string, but no text); -32600 (invalid request) for any other JSON that is no JSON-RPC message,
naming its id where one can be read, and saying so for a line nested deeper than the SDK reads
(about 200 levels; one too deep for Python's parser too has no id to name). A blank line carries
nothing and is skipped.
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

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

STDIN, STDOUT, STDERR = 0, 1, 2
# One message is one line; a `remember` of a long document is a long line.
LINE_LIMIT = 1 << 30
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # half of a pair, or alone
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
TOO_DEEP = "a message nested too deeply to read; it was not run"


class WireLines:
    """The messages arriving on the wire, each line parsed once into the message the SDK's server
    takes; a line that holds none is answered on ``writer`` instead (see the module's docstring)."""

    def __init__(self, reader: asyncio.StreamReader, writer: WireWriter, limit: int = LINE_LIMIT) -> None:
        self.reader = reader  # made with ``limit`` as its own
        self.writer = writer
        self.limit = limit

    def __aiter__(self) -> WireLines:
        return self

    async def __anext__(self) -> SessionMessage:
        while True:
            line = await self._line()
            if line is None:
                await self._answer(_error(None, PARSE_ERROR, f"a message longer than {self.limit:,} bytes; it was not read"))
                continue
            if not line:
                raise StopAsyncIteration
            text = line.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            try:
                return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False))
            except ValueError as exc:  # (pydantic's ValidationError is one)
                await self._answer(_refusal(text, too_deep=_nested_too_deep(exc)))

    async def _line(self) -> bytes | None:
        """The next line (empty at the wire's end), or None for one longer than the reader's limit,
        read to its end and let go a limit's worth at a time."""
        too_long = False
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:  # the wire ended without a line end
                line = exc.partial
            except asyncio.LimitOverrunError as exc:
                await self.reader.readexactly(exc.consumed)
                too_long = True
                continue
            return None if too_long else line

    async def _answer(self, answer: str) -> None:
        await self.writer.write(answer)
        await self.writer.flush()


def _nested_too_deep(refused: ValueError) -> bool:
    """Whether the SDK's parser refused a line for its nesting alone: it reads about 200 levels,
    Python's own parser about 1,000, so a line in between was answered as no JSON-RPC message."""
    errors = refused.errors() if isinstance(refused, ValidationError) else []
    return any("recursion limit" in str(e.get("msg", "")) for e in errors)


def _refusal(line: str, too_deep: bool = False) -> str:
    """The JSON-RPC error answering a line the SDK's parser refused (see the module's docstring):
    ``too_deep`` when it refused the line for its nesting."""
    try:
        message: Any = json.loads(line)
    except RecursionError:
        return _error(None, INVALID_REQUEST, TOO_DEEP)
    except ValueError:
        return _error(None, PARSE_ERROR, "not JSON; the line was not read")
    given = message.get("id") if isinstance(message, dict) else None
    known = given if isinstance(given, (int, str)) and not isinstance(given, bool) else None
    lone = next((s for s in _strings(message) if not _encodes(s)), None)
    if lone is not None:
        bad = next(c for c in lone if 0xD800 <= ord(c) <= 0xDFFF)
        return _error(known, INVALID_PARAMS, f"a string in this request is not text: an unpaired surrogate"
                      f" (U+{ord(bad):04X}); the request was not run")
    if too_deep:
        return _error(known, INVALID_REQUEST, TOO_DEEP)
    return _error(known, INVALID_REQUEST, "not a JSON-RPC request, notification or response this server reads"
                  " (jsonrpc \"2.0\", a method or a result); it was not run")


def _error(request_id: int | str | None, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}) + "\n"


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
async def wire_transport() -> AsyncIterator[tuple[MemoryObjectReceiveStream, MemoryObjectSendStream] | None]:
    """The server's (read, write) streams over the wire, as ``stdio_server`` yields them, or None
    where the SDK's own transport must serve (not POSIX, or stdin or stdout is not a pipe or a
    socket)."""
    async with _wire() as wire:
        if wire is None:
            yield None
            return
        lines, writer = wire
        read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

        async def read() -> None:
            async with read_send:
                async for message in lines:
                    await read_send.send(message)

        async def write() -> None:
            async with write_receive:
                async for message in write_receive:
                    await writer.write(message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n")
                    await writer.flush()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            yield read_stream, write_stream


@asynccontextmanager
async def _wire() -> AsyncIterator[tuple[WireLines, WireWriter] | None]:
    """The wire's lines and writer, or None (see :func:`wire_transport`)."""
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
        yield WireLines(reader, wire_writer, LINE_LIMIT), wire_writer
    finally:
        os.dup2(wire_in, STDIN)  # the standard streams back on the wire, as the SDK's claim leaves them
        os.dup2(wire_out, STDOUT)
        os.close(wire_in)
        os.close(wire_out)
        writer.close()
        reading.close()
