"""``mnemoscope mcp``: the store as an MCP server, so that an agent host (Claude Code, Claude
Desktop, Cursor, …) remembers and recalls through it while a person watches in the app.

Built on the official SDK (``mcp`` 2.x, :class:`MCPServer`). Over stdio by default (the host
spawns the command and speaks on stdin/stdout, so nothing else may write to stdout), or
streamable HTTP on 127.0.0.1. Every tool reaches the engine through :class:`Memory`'s public
calls, one at a time in a worker thread (the event loop keeps answering), and reads or writes
nothing but the store: ``remember`` takes text, never a path.

A refusal (a bad argument, an unknown id, an expired token) comes back as a tool error of one
line that says what to change; the server never sends a traceback.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import threading
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, AsyncIterator, Callable, Literal, TypeVar

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel, BeforeValidator, Field, StrictBool, ValidationError

from mnemoscope.engine.errors import over_limit, quoted, size_text, some_of

from .mcp_results import (EpisodeOut, FactOut, FeedbackOut, Forgotten, HitOut, RecallOut, Remembered, Result,
                          as_tool_result)
from .mcp_stdio import wire_transport

if TYPE_CHECKING:
    from mnemoscope.engine import Memory
    from mnemoscope.engine.config import Settings
    from mnemoscope.engine.knowledge.records import Episode, Fact
    from mnemoscope.engine.records import Source

    from .mcp_http import Token

log = logging.getLogger(__name__)
T = TypeVar("T")

Role = Literal["user", "assistant", "system", "developer", "tool"]
Mode = Literal["lite", "pro", "max"]
Intent = Literal["deepen", "broaden", "compare", "apply", "clarify", "neutral"]


def _whole(value: object) -> object:
    """5.0 as the integer 5, as JSON Schema's "integer" has it (an agent's tool call may carry one)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer argument is a JSON integer: strict, so that "5" and true are refused, not read as 5 and 1
# (pydantic's lax mode; the schema the tools declare says "integer" and refuses them too).
Integer = Annotated[int, BeforeValidator(_whole), Field(strict=True)]
INSTRUCTIONS = """Mnemoscope is a long-term memory: a store of conversations and documents with the
facts, entities and episodes extracted from them. Call `remember` with what is worth keeping (the
conversation so far, or a document's text), `recall` before answering a question that earlier
sessions may answer, and `feedback` with the ids of the hits you actually used, so that the
ranking learns. `facts`, `entities` and `episodes` list what the store knows; `forget` deletes
what agents remembered (try it with dry_run first): what the person stored is theirs to delete.
A person may be watching and curating the same store in the Mnemoscope app."""


# -- arguments ---------------------------------------------------------------------------------


class ContentPart(BaseModel, extra="allow"):
    """One part of a message's content: text parts are stored, and a message's first image part
    as its turn's photo (engine/conversations.py); the result counts what was left out."""

    type: str = Field(description="'text' (stored); 'image_url' with {'url': URL or data: URL} (the first of a message"
                      " is stored as its photo); audio, file and further image parts are left out, and counted")
    text: str | None = Field(default=None, description="the text of a 'text' part")


class ChatMessage(BaseModel):
    """One chat message in the OpenAI shape."""

    role: Role = Field(description="user and assistant messages are stored; system, developer and tool messages are skipped")
    content: str | list[ContentPart] | None = Field(description="the text, or a list of content parts")
    name: str | None = Field(default=None, description="who spoke; stored as the speaker instead of the role")
    timestamp: str | float | None = Field(default=None, description="when: ISO 8601, or seconds since 1970 (default: now)")


# -- the server --------------------------------------------------------------------------------


class Engine:
    """The open store, used by one tool call at a time, and the name of the client calling."""

    def __init__(self, mem: "Memory") -> None:
        self.mem = mem
        self.lock = threading.Lock()
        self.source_names: dict[int, str] = {}  # read again after any write (a deleted source's id comes back)

    def source_name(self, source_id: int) -> str:
        if source_id not in self.source_names:
            self.source_names = {s.id: s.name for s in self.mem.sources()}
        return self.source_names.get(source_id, "?")

    async def call(self, ctx: Context | None, fn: Callable[["Memory"], T], *, writes: bool = False,
                   quick: bool = False) -> T:
        """Run ``fn(mem)`` as the calling client; an engine refusal becomes a one-line tool error.
        After a write here or elsewhere, source names are read again.

        A ``quick`` read (a recall: tens of milliseconds) runs on the event loop itself when the
        store is free and caught up, because the hop to a worker thread and back costs two
        wake-ups, which a busy machine makes dear; a ping meanwhile waits for it. Anything that
        may take long (a write, catching up with another process's commits, loading the areas,
        waiting for another call) runs in a worker thread, so the loop keeps serving."""
        client = client_label(ctx) if ctx is not None else None

        def locked() -> T:
            with self.lock:
                return self._run(client, fn, writes)

        try:
            if quick and self.lock.acquire(blocking=False):
                try:
                    if self.mem.caught_up():
                        return self._run(client, fn, writes)
                finally:
                    self.lock.release()
            return await anyio.to_thread.run_sync(locked)
        except ToolError:
            raise
        except Exception as exc:
            message = user_message(exc)
            if message is None:
                raise
            raise ToolError(message) from None


    async def answer(self, ctx: Context, fn: Callable[["Memory"], Result], *, writes: bool = False,
                     quick: bool = False) -> CallToolResult:
        """:meth:`call` for a tool that answers with one of the typed results: the result sent as
        :func:`as_tool_result` makes it (no nulls, compact JSON text)."""
        return as_tool_result(await self.call(ctx, fn, writes=writes, quick=quick))

    def _run(self, client: str | None, fn: Callable[["Memory"], T], writes: bool) -> T:
        """``fn(mem)`` with the engine's lock held, after taking in other processes' commits."""
        if client is not None:
            self.mem.activity.client = client
        if self.mem.refresh() or writes:
            self.source_names = {}
        return fn(self.mem)


def client_label(ctx: Context) -> str:
    """``mcp:<client name>`` as the client introduced itself (``mcp:unknown`` if it did not, or
    its name shows nothing), made a label (:func:`engine.records.shown_label`): it names the
    writer of every source the client stores, in every listing of them."""
    from mnemoscope.engine.records import shown_label

    try:
        info = ctx.session.client_params.client_info
    except (AttributeError, ValueError):
        info = None
    name = " ".join(shown_label(str(getattr(info, "name", "") or "")).split())[:60]
    return f"mcp:{name or 'unknown'}"


def user_message(exc: BaseException) -> str | None:
    """The one line a refusal says, or None for a crash (the SDK logs it and tells the client
    only that the tool failed)."""
    from mnemoscope.engine.errors import MnemoscopeError

    if isinstance(exc, MnemoscopeError) and str(exc).strip():
        return str(exc).strip().splitlines()[0]
    return None


class Server(MCPServer):
    """MCPServer whose tool errors are one line naming the tool: ``recall: top_k: input should be
    greater than or equal to 1 (got 0)``, ``forget: no item with id 9; nothing was deleted``; and
    whose stdio wire is read, parsed once and written by the event loop, not a thread per line.

    An argument the tool does not take is refused before it runs: the SDK would drop it, so
    ``sourc`` for ``source`` would store under another name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_arguments: dict[str, frozenset[str]] | None = None  # by tool, read once from the tools' schemas

    async def run_stdio_async(self) -> None:
        """Serve over stdin and stdout, read and written by the event loop (app/mcp_stdio.py)."""
        options = self._lowlevel_server.create_initialization_options()
        async with wire_transport() as wire:
            if wire is not None:
                await self._lowlevel_server.run(*wire, options)
                return
        async with stdio_server() as (read, write):
            await self._lowlevel_server.run(read, write, options)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        if self.tool_arguments is None:
            self.tool_arguments = {t.name: frozenset(t.input_schema.get("properties", {})) for t in await self.list_tools()}
        problem = _argument_problem(arguments, self.tool_arguments.get(name))
        if problem:
            return CallToolResult(content=[TextContent(type="text", text=f"{name}: {problem}; nothing was done")],
                                  is_error=True)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                text = "; ".join(_problem(e) for e in cause.errors()[:3])
            elif isinstance(cause, ToolError):
                text = str(cause)
            else:
                raise
            return CallToolResult(content=[TextContent(type="text", text=f"{name}: {text}")], is_error=True)


async def arguments_an_object(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """A tool call whose ``arguments`` are not a JSON object (a JSON text holding one, as a
    client that encodes them twice sends) is refused naming the tool: the SDK's answer, "Invalid
    request parameters", names neither the tool nor the argument. It stays an error of the
    request (-32602, as the SDK and JSON-RPC have it for params that do not fit the method), not a
    tool's result: the tool was never called. A middleware (``MCPServer(middleware=…)``) sees the
    params before the SDK checks them, over stdio and HTTP alike."""
    params = ctx.params
    if ctx.method == "tools/call" and params is not None:
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            name = params.get("name")
            tool = name if isinstance(name, str) and name.isprintable() and len(name) <= 64 else "tools/call"
            raise MCPError(INVALID_PARAMS, f"{tool}: arguments must be a JSON object ({{\"name\": value, …}}), not"
                                           f" {_json_kind(arguments)}; nothing was done")
    return await call_next(ctx)


def _json_kind(value: object) -> str:
    """What a JSON value is, as a message names it."""
    if isinstance(value, str):
        return "a string (arguments encoded as JSON text once too often?)"
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, (int, float)) else "an array"


def _argument_problem(arguments: Any, taken: frozenset[str] | None) -> str | None:
    """Why a tool's arguments are refused before it runs (:class:`Server`), or None. ``taken``:
    the argument names the tool takes (None: an unknown tool, which the SDK refuses itself)."""
    if taken is not None and isinstance(arguments, dict) and (unknown := sorted(set(arguments) - taken)):
        return f"unknown argument {quoted(unknown[0])} (it takes {', '.join(sorted(taken))})"
    return None


def _problem(error: Any) -> str:
    where = ".".join(str(p) for p in error.get("loc", ()) if p != "function-after") or "arguments"
    given = error.get("input")
    shown = json.dumps(given, default=str)[:40] if error.get("type") != "missing" else ""
    return f"{where}: {error.get('msg', 'invalid').lower()}" + (f" (got {shown})" if shown else "")


def build_server(mem: "Memory") -> MCPServer:
    """An MCP server on an open store; the server closes it when it stops."""
    engine = Engine(mem)

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[Engine]:
        try:
            yield engine
        finally:
            mem.close()

    server = Server("mnemoscope", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING",
                    middleware=[arguments_an_object])
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
    reads = ToolAnnotations(read_only_hint=True)

    @server.tool(annotations=writes)
    async def remember(ctx: Context, messages: list[ChatMessage] | None = None, text: str | None = None,
                       title: str = "", source: str | None = None) -> Annotated[CallToolResult, Remembered]:
        """Store a conversation or a document in long-term memory, so that later recalls find it.

        Give either `messages` (a conversation in the OpenAI chat shape: role, content, optional
        name and timestamp) or `text` (a document, Markdown welcome, with an optional `title`).
        User and assistant messages become turns; system, developer and tool messages are
        skipped. Facts, entities and episodes are extracted at once. Everything is stored in one
        transaction, or nothing.

        `source` names what you store: remembering again under the same name replaces it (send the
        whole conversation each time to keep one growing conversation up to date); a source the
        person stored (ingested, imported, noted) is never replaced: that is an error. Without it,
        the name is made of the first words and a hash of the content, so remembering the same
        content twice stores it once.
        Returns the source id and the stored item ids."""
        if (messages is None) == (text is None):
            raise ToolError("give either messages (a conversation) or text (a document), not both or neither")
        _check_name("source", source, MAX_SOURCE_CHARS)
        _check_name("title", title)
        for n, m in enumerate(messages or []):
            _check_name(f"messages.{n}.name", m.name)
        _check_count(engine.mem.settings, messages)
        raw = [m.model_dump(exclude_none=True) for m in messages] if messages is not None else None
        _check_size(engine.mem.settings, text, raw)
        return await engine.answer(ctx, lambda m: _remember(m, raw, text, title, source), writes=True)

    @server.tool(annotations=reads)
    async def recall(ctx: Context, query: str, strategy: str | None = None, mode: Mode = "pro",
                     intent: Intent | None = None, top_k: Annotated[Integer, Field(ge=1, le=100)] = 10,
                     as_of: str | None = None) -> Annotated[CallToolResult, RecallOut]:
        """Search the memory: the items (turns, document chunks) that best answer `query`, with
        the episodes and facts they belong to.

        `strategy`: bm25, dense, hybrid, ppr (knowledge-graph PageRank, good for multi-hop
        questions), walk, hybrid_walk or fused (default: the store's default, usually fused).
        `mode`: lite (episodes and facts only), pro (+ the hits), max (+ neighbouring turns of
        the same episodes). `intent` steers the topic walk (default: inferred from the wording).
        `as_of` (a date: 2023-06-01, 2023-06 or 2023) answers with what had been said and held
        true then; by default facts that hold now come first and replaced ones are marked
        superseded. Each hit names its source; a hit with `conflict` states one side of a change
        nobody has confirmed yet (say so). Afterwards, call `feedback` with the returned `token` and
        the ids of the hits you used."""
        return await engine.answer(
            ctx, lambda m: _recall(m, engine.source_name, query, strategy, mode, intent, top_k, as_of), quick=True)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    async def feedback(ctx: Context, token: str, used: list[Integer], ignored: list[Integer] | None = None) -> Annotated[CallToolResult, FeedbackOut]:
        """Tell the ranker which hits of a recall you used (by item id), so that it learns what
        answers questions like it. `token` is the one `recall` returned; each token takes one
        feedback, within a day. `ignored` lists the hits you read and passed over; without it, the
        shown hits above the lowest one used count as ignored (those below it may never have been
        read; with none used, every shown hit)."""
        return await engine.answer(ctx, lambda m: _feedback(m, token, used, ignored))

    @server.tool(annotations=reads)
    async def facts(ctx: Context, entity: str | None = None, limit: Annotated[Integer, Field(ge=1, le=1000)] = 50,
                    as_of: str | None = None) -> list[dict[str, Any]]:
        """List facts (subject, predicate, object, time, validity, state, provenance item ids): all
        of them, or those naming `entity` (an entity id, or a name: exact, else a part of it).
        `as_of` (a date: 2023-06-01, 2023-06 or 2023) lists those said by then that held then, in
        the state they were in then, as `recall` reads it."""
        return await engine.call(ctx, lambda m: [f.to_dict() for f in _facts(m, entity, limit, as_of)])

    @server.tool(annotations=reads)
    async def entities(ctx: Context, kind: Literal["speaker", "title", "name", "tag"] | None = None,
                       limit: Annotated[Integer, Field(ge=1, le=1000)] = 50) -> list[dict[str, Any]]:
        """List entities (people, places, titles, names), most mentioned first, with how many items
        and facts name each; `kind` narrows the list."""
        return await engine.call(ctx, lambda m: [e.to_dict() for e in _area(m, "knowledge").entities(kind, limit)])

    @server.tool(annotations=reads)
    async def episodes(ctx: Context, source_id: Integer | None = None,
                       limit: Annotated[Integer, Field(ge=1, le=500)] = 20) -> list[dict[str, Any]]:
        """List episodic memories (a summary, 5W1H events, participants, time span and the items
        they were made of): all of them, or those of one source."""
        return await engine.call(ctx, lambda m: [e.to_dict() for e in _episodes(m, source_id)[:limit]])

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    async def forget(ctx: Context, item_ids: list[Integer] | None = None, source_id: Integer | None = None,
                     dry_run: StrictBool = False) -> Annotated[CallToolResult, Forgotten]:
        """Delete items (by id) or a whole source (by id) that an agent stored with `remember`, with
        the facts and episodes that only they supported. A source the person stored (ingested,
        imported, noted), and any item in it, is theirs: that is an error, and nothing is deleted.
        With `dry_run` nothing changes and the answer says what would be deleted; use it first
        when unsure. Give item_ids or source_id, not both."""
        if (not item_ids) == (source_id is None):
            raise ToolError("give either item_ids or source_id, not both or neither")
        return await engine.answer(ctx, lambda m: _forget(m, item_ids or [], source_id, dry_run), writes=True)

    @server.resource("mnemoscope://stats", mime_type="application/json")
    async def stats() -> str:
        """What the store holds: counts of sources, items, facts, entities, episodes, topics."""
        return json.dumps(await engine.call(None, lambda m: {"store": str(m.path), **m.counts().to_dict()}), default=str)

    @server.resource("mnemoscope://sources", mime_type="application/json")
    async def sources() -> str:
        """Every source (conversation or document) with its id, name and kind."""
        return json.dumps(await engine.call(None, lambda m: [
            {"id": s.id, "name": s.name, "kind": s.kind, "meta": s.meta} for s in m.sources()]), default=str)

    @server.resource("mnemoscope://sources/{source_id}", mime_type="application/json")
    async def source_items(source_id: str) -> str:
        """One source's items (turns or chunks) in order."""
        if not re.fullmatch(r"[0-9]{1,19}", source_id):  # read here: for 'abc' the SDK logged a traceback
            raise ResourceError(f"no source with id {quoted(source_id)} (mnemoscope://sources lists them)")
        try:
            items = await engine.call(None, lambda m: _source_items(m, int(source_id)))
        except ToolError as exc:
            raise ResourceError(str(exc)) from None
        return json.dumps(items, default=str)

    return server


# -- what each tool does, in the worker thread ---------------------------------------------------


# A source's name comes back with every hit of it (recall's ``source``), and is shown as a list's line.
MAX_SOURCE_CHARS = 500


def _check_name(field: str, value: str | None, limit: int | None = None) -> None:
    """Refuse a name an agent gives (a source, a title, a speaker) that a label may not be, by the
    rule every edge keeps (:func:`engine.records.label_problem`: no control character, and at most
    ``limit`` characters, or a label's limit), and not blank: a name that shows nothing names
    nothing. Content may hold control characters; a name is shown alone."""
    from mnemoscope.engine.records import MAX_LABEL_CHARS, label_problem

    if not value:
        return
    problem = label_problem(value, limit or MAX_LABEL_CHARS) or ("is blank" if value.isspace() else None)
    if problem:
        raise ToolError(f"{field} {problem}; nothing was stored")


def _check_count(settings: "Settings", messages: list[ChatMessage] | None) -> None:
    """Refuse more messages than ``max_remember_messages`` before any work: one remember is one
    transaction, which holds the store's write lock (the app's and other writers' wait)."""
    if messages is not None and len(messages) > (limit := settings.max_remember_messages):
        raise ToolError(over_limit(f"{len(messages):,} messages", "max_remember_messages", f"{limit:,}",
                                   "what one remember may add", "nothing was stored"))


def _check_size(settings: "Settings", text: str | None, messages: list[dict[str, Any]] | None) -> None:
    """Refuse a text, or messages as JSON, of more than ``max_remember_bytes`` (UTF-8) before any
    work, as :func:`_check_count` does."""
    if text is not None:
        what, size = "the text is", len(text.encode("utf-8", "surrogatepass"))
    else:
        what, size = "the messages are", len(json.dumps(messages, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > (limit := settings.max_remember_bytes):
        raise ToolError(over_limit(f"{what} {size_text(size)}", "max_remember_bytes", size_text(limit),
                                   "what one remember may add", "nothing was stored"))


def _area(mem: "Memory", name: str) -> Any:
    if not mem.has_area(name):
        raise ToolError(f"this store was opened without its {name} area")
    return getattr(mem, name)


def _remember(mem: "Memory", messages: list[dict[str, Any]] | None, text: str | None, title: str,
              source: str | None) -> Remembered:
    from mnemoscope.engine.conversations import messages_source
    from mnemoscope.engine.ingest import read_markdown
    from mnemoscope.engine.records import WRITTEN_BY, shown_label

    client = mem.activity.client.removeprefix("mcp:")
    if messages is not None:
        parsed = messages_source(source or "", messages, meta={"title": title} if title else None)
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        for item in parsed.items:
            item.timestamp = item.timestamp or now
    else:
        if not (text or "").strip():
            raise ToolError("the text is empty")
        if not shown_label(text or "").strip():  # NULs, escapes, zero-width spaces: a source that shows nothing
            raise ToolError("the text shows nothing (only control or invisible characters); nothing was stored")
        import hashlib

        digest = hashlib.sha256(f"{title}\n{text}".encode()).hexdigest()
        parsed = read_markdown(source or "", text or "", digest, mem.settings.chunk_tokens)
        if title:
            parsed.source.meta["title"] = title
            for item in parsed.items:
                item.title = " › ".join(p for p in (title, item.title) if p)
    # from the content alone (the same content, the same name), which may hold characters a name may not
    label = " ".join(shown_label(parsed.items[0].text).split()[:6])
    label = (label if len(label) <= 48 else label[:47] + "…").replace("/", "-")
    parsed.source.name = source or f"mcp:{client}/{label} ({parsed.source.content_hash[:8]})"
    parsed.source.meta[WRITTEN_BY] = f"mcp:{client}"
    report = mem.ingest_parsed([parsed], before_replacing=_agents_own).sources[0]
    ids = [i.id for i in mem.source_items(report.source_id)]
    return Remembered(source_id=report.source_id, source=report.name, status=report.status, item_ids=ids,
                      skipped=parsed.source.meta.get("skipped", {}),
                      parts_left_out=parsed.source.meta.get("parts_left_out", {}))


def _agents_own(stored: "Source") -> None:
    """Refuse to replace a source an agent did not store through MCP: what the person put in the
    store (a file ingested, an import, a note) is theirs; an agent naming it must not overwrite
    it in silence. Only the mark the server writes counts (:attr:`Source.by_agent`), not a name."""
    if not stored.by_agent:
        raise ToolError(f"source: {stored.name!r} is a source stored by the person, not through MCP, and an agent"
                        " does not replace it; remember under another name; nothing was stored")


def _agent_may_delete(store: Path, item_id: int | None) -> Callable[["Source | None"], None]:
    """The check ``forget`` asks before deleting a source (``item_id`` None) or an item, with its
    source: an agent deletes only what an agent stored through MCP; the person's sources, and
    the items in them, are the person's to delete, and the refusal says how, naming ``store``
    (the person's default store may be another, with another source of that id)."""
    def check(source: "Source | None") -> None:
        if source is not None and source.by_agent:
            return
        if item_id is None and source is not None:
            what, target = f"source {source.id} ({source.name!r}) is", f"source:{source.id}"
        else:
            what, target = f"item {item_id} is in {source.name if source else '?'!r},", str(item_id)
        raise ToolError(f"{what} a source the person stored (ingested, imported or noted), not one an agent stored"
                        f" through MCP: an agent does not delete it; the person can, with"
                        f" `mnemoscope --store {shlex.quote(str(store))} delete {target}` or in the app's Sources screen"
                        " (d); nothing was deleted")
    return check


def _recall(mem: "Memory", source_name: Callable[[int], str], query: str, strategy: str | None, mode: str,
            intent: str | None, top_k: int, as_of: str | None = None) -> RecallOut:
    result = mem.recall(query, top_k=top_k, strategy=strategy, mode=mode, intent=intent, as_of=as_of)
    hits = [HitOut(id=h.item.id, score=round(float(h.score), 6), text=h.item.text, speaker=h.item.speaker,
                   timestamp=h.item.timestamp, source_id=h.item.source_id, source=source_name(h.item.source_id),
                   features={k: round(float(v), 4) for k, v in h.features.items() if v},
                   conflict=h.conflict.describe() if h.conflict else None) for h in result.hits]
    episodes = [EpisodeOut(id=e.id, summary=e.summary, participants=e.participants, time_start=e.time_start,
                           time_end=e.time_end, items=e.items) for e in result.episodes]
    facts = [FactOut(id=f.id, subject=f.subject, predicate=f.predicate, object=f.object, time=f.time,
                     valid_from=f.valid_from, valid_to=f.valid_to if f.state(f.seen_at) == "superseded" else None,
                     state=f.state(f.seen_at), superseded_by=f.superseded_by if f.state(f.seen_at) == "superseded" else None,
                     provenance=f.provenance) for f in result.facts]
    return RecallOut(query=result.query, strategy=result.strategy, mode=result.mode,
                     intent=(result.intent or {}).get("name"), as_of=result.as_of, hits=hits, episodes=episodes, facts=facts,
                     token=result.token)


def _feedback(mem: "Memory", token: str, used: list[int], ignored: list[int] | None) -> FeedbackOut:
    result = mem.feedback(token, used, ignored)
    return FeedbackOut(event_id=result.event_id, used=result.used, ignored=result.ignored,
                       lam=float(mem.ranker.status().lam))


def _forget(mem: "Memory", item_ids: list[int], source_id: int | None, dry_run: bool) -> Forgotten:
    """Delete what an agent stored through MCP (:func:`_agent_may_delete`): every item is checked
    before the first is deleted, so a refusal deletes nothing."""
    if source_id is not None:
        changes = mem.delete_source(source_id, dry_run=dry_run, before_deleting=_agent_may_delete(mem.path, None))
        return Forgotten(dry_run=dry_run, changes=changes)
    found = mem.items(item_ids)
    missing = sorted(set(item_ids) - set(found))
    if missing:
        raise ToolError(f"no item with id {some_of(missing, 10)}; nothing was deleted")
    sources = {s.id: s for s in mem.sources()}
    for item_id in dict.fromkeys(item_ids):
        _agent_may_delete(mem.path, item_id)(sources.get(found[item_id].source_id))
    total: dict[str, Any] = {}
    for item_id in dict.fromkeys(item_ids):
        changes = mem.delete_item(item_id, dry_run=dry_run, before_deleting=_agent_may_delete(mem.path, item_id))
        for key, value in changes.items():
            total[key] = total.get(key, 0) + value if isinstance(value, (int, float)) else value
    return Forgotten(dry_run=dry_run, changes=total)


def _facts(mem: "Memory", entity: str | None, limit: int, as_of: str | None) -> list["Fact"]:
    """The facts ``facts`` lists; an ``entity`` that names none is an error that says so, with the
    names nearest to it, as the CLI's ``facts --entity`` says it: an empty list reads as "that
    entity has no facts"."""
    knowledge = _area(mem, "knowledge")
    found = knowledge.facts(entity, limit, as_of)
    if not found and entity is not None:
        knowledge.check_entity_named(entity, "the entities tool lists them")
    return found


def _episodes(mem: "Memory", source_id: int | None) -> list["Episode"]:
    """The episodes ``episodes`` lists; a ``source_id`` of no source is an error, as in :func:`_facts`."""
    found = _area(mem, "knowledge").episodes(source_id)
    if not found and source_id is not None:
        _known_source(mem, source_id)
    return found


def _known_source(mem: "Memory", source_id: int) -> None:
    if not any(s.id == source_id for s in mem.sources()):
        raise ToolError(f"no source with id {source_id} (mnemoscope://sources lists them)")


def _source_items(mem: "Memory", source_id: int) -> list[dict[str, Any]]:
    _known_source(mem, source_id)
    return [{"id": i.id, "key": i.key, "kind": i.kind, "speaker": i.speaker, "timestamp": i.timestamp,
             "title": i.title, "text": i.text} for i in mem.source_items(source_id)]


def serve(mem: "Memory", http_port: int | None = None, token: "Token | None" = None) -> None:
    """Serve until the host closes stdin (stdio) or the process is interrupted (HTTP, where every
    request must carry ``token``, by default the user's: app/mcp_http.py)."""
    server = build_server(mem)
    if http_port is None:
        server.run("stdio")
    else:
        from .mcp_http import http_token, serve_http, token_path

        serve_http(server, http_port, token or http_token(token_path()))
