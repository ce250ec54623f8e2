"""Readers for the conversations agents and chat apps write: OpenAI chat messages and ChatGPT's
data export. Like :mod:`.ingest`, nothing here touches the store.

Shapes (``docs/formats.md`` describes each):

* **OpenAI chat messages**: ``{"role", "content", "name"?, "timestamp"?}`` objects, one per line
  (``.jsonl``), as a JSON list, or under ``{"messages": [...]}``. ``content`` is a string or a list
  of parts, whose text parts are joined; its first image part (``image_url``, ``input_image``:
  a URL or a ``data:`` URL of at most :data:`MAX_INLINE_IMAGE_CHARS`) is the turn's photo, kept as
  LoCoMo's ``img_url`` is (``meta.image_url``, read and embedded by :mod:`.images` when an image
  model is set). The parts not kept (audio, files, further or larger images, the parts of a
  message that is not a turn) are counted by type in the source's ``meta.parts_left_out``, so
  that a caller can say what was not stored.
* **ChatGPT's export** (``conversations.json``): a list of conversations, each a ``mapping`` tree
  of message nodes; the branch that ends at ``current_node`` is the conversation as last seen.

The rule for whose words are kept, shared by both: a ``user`` or ``assistant`` message with text
is a turn; ``system`` and ``developer`` messages (instructions to the model) and ``tool`` or
``function`` messages (machine output) are skipped, and so is a message with no text (an
assistant message that only calls a tool). The speaker is the message's ``name`` when it has
one, else its role as a name: ``User``, ``Assistant``.

A message that breaks its shape raises :class:`ChatFormatError` with the line it starts on; the
caller adds the file (:func:`engine.ingest.read_path`) or the tool's argument (the MCP server).
"""

from __future__ import annotations

import hashlib
import json
import json.decoder
import json.scanner
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Sequence

from .errors import MnemoscopeError, cut_repr
from .records import Item, ParsedSource, Source, label_problem, shown_label

KEPT_ROLES = ("user", "assistant")
SKIPPED_ROLES = ("system", "developer", "tool", "function")
ROLES = KEPT_ROLES + SKIPPED_ROLES
TEXT_PARTS = ("text", "input_text", "output_text")  # the content part types whose "text" is kept
IMAGE_PARTS = ("image_url", "input_image")  # the content part types whose "image_url" is a photo's reference
# A photo's reference is kept in its turn's meta, which every recall that returns the turn reads:
# an image sent inline (a data: URL) larger than this is left out (and counted), not stored.
MAX_INLINE_IMAGE_CHARS = 2**20


class ChatFormatError(MnemoscopeError, ValueError):
    """A conversation that breaks its format; ``line`` is where the bad message starts, if known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message, self.line = message, line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass
class Message:
    """One chat message, read and checked."""

    role: str
    text: str  # the text parts joined; empty when it has none
    name: str | None = None
    timestamp: str | None = None  # ISO 8601
    key: str = ""
    image: str | None = None  # the first image part's reference: the turn's photo
    left_out: dict[str, int] = field(default_factory=dict)  # the content parts not kept, by type

    @property
    def kept(self) -> bool:
        """A user's or assistant's message that shows some text: one of control and invisible
        characters alone (NULs, escapes, zero-width spaces) is skipped as an empty one is."""
        return self.role in KEPT_ROLES and bool(shown_label(self.text).strip())

    @property
    def speaker(self) -> str:
        return self.name or self.role.capitalize()


# -- reading JSON ------------------------------------------------------------------------------


class DuplicateKey(ValueError):
    """A JSON object that names a key twice; ``line``: where that object starts, in the text read."""

    def __init__(self, key: str, line: int | None = None) -> None:
        self.key, self.line = key, line
        super().__init__(f"an object names the key {cut_repr(key)} twice (which one is meant?)")


class _Twice(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def read_json(text: str | bytes) -> Any:
    """``json.loads``, refusing an object that names a key twice with :class:`DuplicateKey`:
    Python keeps the last of ``{"speaker": "Ann", "speaker": "Bob"}`` without a word, so a file
    would say one thing and have another stored. The line the object starts on is found by a
    second, slower read, made only for a refusal."""
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except _Twice as exc:
        raise DuplicateKey(exc.key, _line_of_twice(text if isinstance(text, str) else text.decode("utf-8"))) from None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        raise _Twice(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return out


def _line_of_twice(text: str) -> int | None:
    """The line where the first object :func:`read_json` refused starts, read by the standard
    library's pure-Python scanner, which tells each object's place."""
    starts: list[int] = []

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[dict[str, Any], int]:
        strict, scan_once, object_hook, _pairs_hook, *memo = args
        try:
            return json.decoder.JSONObject(s_and_end, strict, scan_once, object_hook, _unique, *memo)
        except _Twice:
            starts.append(s_and_end[1] - 1)
            raise

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[method-assign]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except (_Twice, ValueError, RecursionError):
        pass
    return text.count("\n", 0, starts[0]) + 1 if starts else None


# -- checking one message ---------------------------------------------------------------------


@dataclass
class Content:
    """A message's ``content`` read: its text, its photo, and the parts not kept, by type."""

    text: str = ""
    image: str | None = None
    image_part: str = ""  # the type of the part the image came from
    left_out: dict[str, int] = field(default_factory=dict)

    def leave_out(self, kind: str) -> None:
        self.left_out[kind[:40]] = self.left_out.get(kind[:40], 0) + 1


def read_content(content: Any) -> Content:
    """A message's ``content``: a string, or a list of parts whose text parts are joined by blank
    lines and whose first image part is the photo; audio, file and other parts, and any further
    image, are counted as left out. Raises ValueError."""
    if content is None or isinstance(content, str):
        return Content(content or "")
    if not isinstance(content, list):
        raise ValueError(f"'content' must be a string or a list of parts, not {cut_repr(content)}")
    out, texts = Content(), []
    for n, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise ValueError(f"content part {n} must be a string or an object with a string 'type', not {cut_repr(part)}")
        kind = part["type"]
        if kind in TEXT_PARTS:
            if not isinstance(part.get("text"), str):
                raise ValueError(f"content part {n} of type {kind!r} needs a string 'text'")
            texts.append(part["text"])
        elif kind in IMAGE_PARTS and out.image is None and (ref := _image_ref(part)) and kept_inline(ref):
            out.image, out.image_part = ref, kind
        else:
            out.leave_out(kind)
    out.text = "\n\n".join(t for t in texts if t.strip())
    return out


def kept_inline(ref: str) -> bool:
    """Whether a photo's reference is kept: any URL, and a ``data:`` URL of at most
    :data:`MAX_INLINE_IMAGE_CHARS`."""
    return not (len(ref) > MAX_INLINE_IMAGE_CHARS and ref[:5].lower() == "data:")


def _image_ref(part: dict[str, Any]) -> str | None:
    """An image part's reference: ``{"image_url": {"url": …}}`` (chat completions) or
    ``{"image_url": "…"}`` (responses); None for one that names none (an uploaded file's id)."""
    ref = part.get("image_url")
    ref = ref.get("url") if isinstance(ref, dict) else ref
    return ref.strip() if isinstance(ref, str) and ref.strip() else None


def iso_time(value: Any) -> str | None:
    """A timestamp as ISO 8601: an ISO string, or seconds since the epoch (UTC). Raises ValueError."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"timestamp {cut_repr(value)} is out of range") from None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).isoformat()
        except ValueError:
            pass
    raise ValueError(f"unreadable timestamp {cut_repr(value)} (ISO 8601, or seconds since 1970)")


def read_message(obj: Any, key: str) -> Message:
    """Check one OpenAI-style message object. Raises ValueError naming the field."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a message object with 'role' and 'content', not {cut_repr(obj)}")
    role = obj.get("role")
    if role not in ROLES:
        raise ValueError(f"'role' must be one of {', '.join(ROLES)}, not {cut_repr(role)}")
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"'name' must be a string, not {cut_repr(name)}")
    name = _label("'name'", (name or "").strip() or None)
    content = read_content(obj.get("content"))
    message = Message(role=role, text=content.text, name=name,
                      timestamp=iso_time(obj.get("timestamp")), key=key, image=content.image, left_out=content.left_out)
    if message.image and not message.kept:  # not a turn: nothing holds its photo
        content.leave_out(content.image_part)
        message.image = None
    return message


def _label(field: str, value: str | None) -> str | None:
    """``value`` when it may be a label (:func:`label_problem`), checked here, where the reader
    knows the line (engine/ingest.py's check_labels is the backstop); raises ValueError naming ``field``."""
    problem = value and label_problem(value)
    if problem:
        raise ValueError(f"{field} {problem}")
    return value


def _title_meta(title: Any) -> dict[str, Any]:
    """A conversation's title as its source's meta (none unless a string), a label (:func:`_label`)."""
    return {"title": _label("'title'", title)} if isinstance(title, str) else {}


# -- messages to a source ---------------------------------------------------------------------


def conversation(name: str, messages: Sequence[Message], *, fmt: str, meta: dict[str, Any] | None = None,
                 content_hash: str | None = None) -> ParsedSource:
    """The kept messages as one conversation source, one turn per message. ``content_hash``
    defaults to a hash of the kept turns, so that a conversation stored again unchanged is
    recognised whatever else its file holds."""
    kept = [m for m in messages if m.kept]
    if not kept:
        raise ValueError("no user or assistant message with text")
    items = [Item(text=m.text.strip(), kind="turn", key=m.key, position=n, speaker=m.speaker, timestamp=m.timestamp,
                  meta={"role": m.role, **({"image_url": m.image} if m.image else {})}) for n, m in enumerate(kept)]
    skipped: dict[str, int] = {}
    left_out: dict[str, int] = {}
    for m in messages:
        for kind, count in m.left_out.items():
            left_out[kind] = left_out.get(kind, 0) + count
        if not m.kept:
            skipped[m.role] = skipped.get(m.role, 0) + 1
    digest = content_hash or hashlib.sha256(json.dumps(
        [(i.key, i.speaker, i.timestamp, i.text, *([i.meta["image_url"]] if "image_url" in i.meta else []))
         for i in items], ensure_ascii=False).encode()).hexdigest()
    source_meta = {"format": fmt, "speakers": sorted({i.speaker for i in items if i.speaker}), **(meta or {})}
    if skipped:
        source_meta["skipped"] = skipped
    if left_out:
        source_meta["parts_left_out"] = left_out
    return ParsedSource(Source(name=name, kind="conversation", content_hash=digest, meta=source_meta), items)


# -- OpenAI chat messages ---------------------------------------------------------------------


def is_openai_line(text: str) -> bool:
    """Whether a JSON-lines file holds OpenAI messages (its first object has a ``role``)."""
    for line in text.split("\n"):  # JSON Lines ends a line at \n only (a string may hold U+2028)
        if line.strip():
            try:
                first = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return False
            return isinstance(first, dict) and "role" in first
    return False


def read_openai_jsonl(name: str, text: str, digest: str) -> ParsedSource:
    """One message per line; blank lines are skipped; the whole file is one conversation."""
    messages = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            messages.append(read_message(read_json(line), str(len(messages))))
        except json.JSONDecodeError as exc:
            raise ChatFormatError(f"malformed JSON: {exc.msg}", lineno) from None
        except RecursionError:
            raise ChatFormatError("JSON nested too deeply", lineno) from None
        except ValueError as exc:
            raise ChatFormatError(str(exc), lineno) from None
    try:
        return conversation(name, messages, fmt="openai", content_hash=digest)
    except ValueError as exc:
        raise ChatFormatError(str(exc)) from None


def chat_shape(data: Any) -> str | None:
    """Which chat format a parsed ``.json`` file is: ``openai`` (a list of messages, or an
    object with ``messages``), ``chatgpt`` (the export's conversations), or None (another
    format, e.g. LoCoMo)."""
    if isinstance(data, dict):
        if "messages" in data and "conversation" not in data:
            return "openai"
        return "chatgpt" if "mapping" in data else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "role" in data[0]:
            return "openai"
        if "mapping" in data[0]:
            return "chatgpt"
    return None


def read_chat_json(name: str, data: Any, text: str, digest: str) -> list[ParsedSource]:
    """A ``.json`` file of a shape :func:`chat_shape` recognised."""
    if chat_shape(data) == "openai":
        return [_read_openai_json(name, data, text, digest)]
    return read_chatgpt_export(name, data, text)


def _read_openai_json(name: str, data: Any, text: str, digest: str) -> ParsedSource:
    under = "messages" if isinstance(data, dict) else None
    raw = data["messages"] if under else data
    if not isinstance(raw, list):
        raise ChatFormatError(f"'messages' must be a list of message objects, not {cut_repr(raw)}", line_of(text, '"messages"'))
    try:
        meta = _title_meta(data.get("title")) if isinstance(data, dict) else {}
    except ValueError as exc:
        raise ChatFormatError(str(exc), line_of(text, '"title"')) from None
    return _openai_conversation(name, raw, lambda n: element_line(text, n, under), meta=meta, content_hash=digest)


def _openai_conversation(name: str, raw: Iterable[Any], line_of: Callable[[int], int | None],
                         meta: dict[str, Any] | None, content_hash: str | None = None) -> ParsedSource:
    """OpenAI-style message objects, each checked (:func:`read_message`), as one conversation
    (:func:`conversation`): a file's and a program's alike, so both refuse the same messages.
    Raises ChatFormatError naming the first bad message by its number, and by its line where
    ``line_of`` knows it."""
    messages = []
    for n, obj in enumerate(raw):
        try:
            messages.append(read_message(obj, str(n)))
        except ValueError as exc:
            raise ChatFormatError(f"message {n}: {exc}", line_of(n)) from None
    try:
        return conversation(name, messages, fmt="openai", meta=meta, content_hash=content_hash)
    except ValueError as exc:
        raise ChatFormatError(str(exc)) from None


# -- ChatGPT's data export --------------------------------------------------------------------


def read_chatgpt_export(name: str, data: Any, text: str) -> list[ParsedSource]:
    """Each conversation of ``conversations.json`` (or one conversation object) becomes a source
    named ``FILE#<conversation id>``, holding the branch that ends at its ``current_node``. A
    conversation with no user or assistant text is skipped."""
    conversations = data if isinstance(data, list) else [data]
    out: list[ParsedSource] = []
    seen: set[str] = set()
    for n, conv in enumerate(conversations):
        line = element_line(text, n) if isinstance(data, list) else 1
        try:
            messages, conv_id, meta = _chatgpt_branch(conv, n)
        except ValueError as exc:
            raise ChatFormatError(f"conversation {n}: {exc}", line) from None
        if conv_id in seen:
            raise ChatFormatError(f"conversation {n}: the id {conv_id!r} is used by an earlier conversation", line)
        seen.add(conv_id)
        try:
            out.append(conversation(f"{name}#{conv_id}", messages, fmt="chatgpt", meta=meta))
        except ValueError:
            continue  # nothing said in it (an empty or system-only conversation)
    if not out:
        raise ChatFormatError("no conversation with a user or assistant message")
    return out


def _chatgpt_branch(conv: Any, index: int) -> tuple[list[Message], str, dict[str, Any]]:
    """The messages from the root to ``current_node``, the conversation's id and its meta."""
    if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
        raise ValueError("expected an object with a 'mapping' of message nodes")
    mapping: dict[str, Any] = conv["mapping"]
    conv_id = conv.get("conversation_id") or conv.get("id") or str(index)
    if not isinstance(conv_id, str):
        raise ValueError(f"'id' must be a string, not {cut_repr(conv_id)}")
    meta = _title_meta(conv.get("title"))
    if conv.get("create_time") is not None:
        meta["create_time"] = iso_time(conv["create_time"])
    messages = []
    for node_id in _branch(mapping, conv.get("current_node")):
        node = mapping[node_id]
        msg = node.get("message")
        if msg is None:
            continue
        try:
            message = _chatgpt_message(msg, node_id)
        except ValueError as exc:
            raise ValueError(f"message {node_id!r}: {exc}") from None
        if message is not None:
            messages.append(message)
    return messages, conv_id, meta


def _branch(mapping: dict[str, Any], current: Any) -> list[str]:
    """Node ids from the root to ``current`` (default: the newest leaf, following last children)."""
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            raise ValueError(f"node {node_id!r} must be an object, not {cut_repr(node)}")
        parent, children = node.get("parent"), node.get("children")
        if parent is not None and not isinstance(parent, str):
            raise ValueError(f"node {node_id!r}: 'parent' must be a node id (a string), not {cut_repr(parent)}")
        if children is not None and not (isinstance(children, list) and all(isinstance(c, str) for c in children)):
            raise ValueError(f"node {node_id!r}: 'children' must be a list of node ids, not {cut_repr(children)}")
    if current is not None and not isinstance(current, str):
        raise ValueError(f"'current_node' must be a node id (a string), not {cut_repr(current)}")
    if current is None:
        roots = [k for k, v in mapping.items() if v.get("parent") is None]
        current = roots[0] if roots else None
        below: set[str] = set()
        while current is not None and mapping[current].get("children"):
            if current in below:
                raise ValueError(f"node {current!r} is its own descendant")
            below.add(current)
            current = mapping[current]["children"][-1]
            if current not in mapping:
                raise ValueError(f"node {current!r} is named as a child but is not in the mapping")
    if current is None:
        return []
    if current not in mapping:
        raise ValueError(f"'current_node' {cut_repr(current)} is not in the mapping")
    path: list[str] = []
    seen: set[str] = set()
    while current is not None:
        if current in seen:
            raise ValueError(f"node {current!r} is its own ancestor")
        if current not in mapping:
            raise ValueError(f"node {current!r} is named as a parent but is not in the mapping")
        seen.add(current)
        path.append(current)
        current = mapping[current].get("parent")
    return path[::-1]


def _chatgpt_message(msg: Any, node_id: str) -> Message | None:
    """One node's message; None for what the export keeps but nobody said (hidden context, a
    call addressed to a tool, content that is not text)."""
    if not isinstance(msg, dict) or not isinstance(msg.get("author"), dict):
        raise ValueError("expected an object with an 'author'")
    role = msg["author"].get("role")
    if role not in ROLES:
        raise ValueError(f"author role must be one of {', '.join(ROLES)}, not {cut_repr(role)}")
    metadata = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    if metadata.get("is_visually_hidden_from_conversation") or msg.get("recipient", "all") != "all":
        return None
    content = msg.get("content")
    if not isinstance(content, dict):
        raise ValueError(f"'content' must be an object, not {cut_repr(content)}")
    if content.get("content_type") not in ("text", "multimodal_text"):
        return None
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise ValueError(f"content 'parts' must be a list, not {cut_repr(parts)}")
    text = "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())  # image parts are objects
    name = msg["author"].get("name")
    name = _label("author 'name'", name if isinstance(name, str) and name.strip() else None)
    return Message(role=role, text=text, name=name,
                   timestamp=iso_time(msg.get("create_time")), key=str(msg.get("id") or node_id))


# -- where in the file ------------------------------------------------------------------------

_DECODER = json.JSONDecoder()


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def element_line(text: str, index: int, key: str | None = None) -> int | None:
    """The line where element ``index`` of the file's top-level array starts (or of the array
    under the top-level object's ``key``). Only called for an error, so it may re-read the file."""
    pos = _skip_space(text, 0)
    try:
        if key is not None:
            pos = _member(text, pos, key)
        if text[pos] != "[":
            return None
        pos += 1
        for n in range(index + 1):
            pos = _skip_space(text, pos)
            if n == index:
                return text.count("\n", 0, pos) + 1
            _, pos = _DECODER.raw_decode(text, pos)
            pos = _skip_space(text, pos) + 1  # the comma
    except (ValueError, IndexError, RecursionError):
        return None
    return None


def _member(text: str, pos: int, key: str) -> int:
    """The position of the value of ``key`` in the object that opens at ``pos``."""
    if text[pos] != "{":
        raise ValueError("not an object")
    pos += 1
    while True:
        name, pos = _DECODER.raw_decode(text, _skip_space(text, pos))
        pos = _skip_space(text, _skip_space(text, pos) + 1)  # past the colon
        if name == key:
            return pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_space(text, pos) + 1  # the comma


def line_of(text: str, needle: str) -> int | None:
    """The line of ``text`` where ``needle`` first stands (None: nowhere): where an error in a
    file points. Only called for an error."""
    pos = text.find(needle)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else None


def messages_source(name: str, messages: Iterable[dict[str, Any]], meta: dict[str, Any] | None = None) -> ParsedSource:
    """OpenAI-style message objects handed over by a program (the MCP ``remember`` tool) as one
    conversation. Raises ChatFormatError naming the message by its number."""
    return _openai_conversation(name, messages, lambda n: None, meta)
