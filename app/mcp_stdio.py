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
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from contextlib import asynccontextmanager
from typing import AsyncIterator

STDIN, STDOUT, STDERR = 0, 1, 2
# One message is one line; a `remember` of a long document is a long line.
LINE_LIMIT = 1 << 30


class WireLines:
    """The messages arriving on the wire, one decoded line at a time (as the SDK reads them)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> WireLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


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
        yield WireLines(reader), WireWriter(writer)
    finally:
        os.dup2(wire_in, STDIN)  # the standard streams back on the wire, as the SDK's claim leaves them
        os.dup2(wire_out, STDOUT)
        os.close(wire_in)
        os.close(wire_out)
        writer.close()
        reading.close()
