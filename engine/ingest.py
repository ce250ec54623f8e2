"""Readers: files in, sources and items out. Nothing here touches the store.

Formats: plain text, Markdown (heading-aware chunks that keep the heading path), LoCoMo-style
conversation JSON (one source per conversation, one item per turn), JSON-lines chat and
``Speaker: text`` transcripts, and the chat formats of :mod:`.conversations` (picked by shape).
A bad record raises :class:`IngestError` naming the file and line. (An export is read back by
:mod:`engine.transfer`.)
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
import stat
from array import array
from dataclasses import replace
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from . import conversations
from .conversations import ChatFormatError, line_of
from .errors import FileRefused, FileTooLarge, IngestError, cut_repr, over_limit, size_text
from .files import kind_of, lines_of_regular, read_regular
from .records import CONTROL, MAX_LABEL_CHARS, Item, ParsedSource, Source, label_problem, shown_label
from .text import sentences, token_count

SUPPORTED_SUFFIXES = {".md", ".markdown", ".txt", ".text", ".json", ".jsonl", ".ndjson"}
_LINE_SUFFIXES = {".jsonl", ".ndjson"}  # JSON Lines
_TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text", ""}  # documents and transcripts: the setting max_text_bytes
MAX_FILE_BYTES = 200 * 1024 * 1024
# The longest text one item holds: a hit carries its item whole, to a person, an agent or the app.
# A document's "sentence" longer than this (a blob of one line) is cut at spaces; any other text
# (a turn, a note, a chat message) is split into items of its own (:func:`hold_to_limits`).
MAX_CHUNK_CHARS = 20_000
# A Markdown heading longer than this is read as text: every chunk below it would repeat it.
MAX_HEADING_CHARS = 300
# A split item's photo stays with its first piece (the others would each embed it again).
_FIRST_PIECE_META = ("image_url", "image_caption")


# -- entry points -----------------------------------------------------------------------------


class Found(NamedTuple):
    """A file to read, and the folder the person named for it (where its references may point)."""

    path: Path  # resolved: one file has one name however it was typed
    root: Path


class Discovered(NamedTuple):
    """What the paths a person named hold: the files to read, and what a folder's walk left out."""

    files: list[Found]
    skipped: list[Path]  # files of a type Mnemoscope does not read
    links: list[Path]  # symbolic links in a folder, not followed (said, so that nothing is left out unsaid)


class FilesRead(NamedTuple):
    """Files read without writing anything: the sources they hold, and what was left out."""

    parsed: list[ParsedSource]
    skipped: list[Path]  # see Discovered
    errors: list[IngestError]
    links: list[Path]  # see Discovered


def named_mode(path: Path) -> int:
    """The file mode of a path a person named, or the one line why it cannot be read."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        raise IngestError(path, "no such file or directory") from None
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None


def check_named(paths: Iterable[str | Path]) -> None:
    """Refuse, before a store is opened, a named path that cannot be read: an ingest of a mistyped
    file onto a new ``--store`` made the empty store first, then refused the file."""
    for raw in paths:
        named_mode(Path(raw))


def discover(paths: Iterable[str | Path]) -> Discovered:
    """Expand files and folders into the files to read and those left out, in a stable order.

    A folder is walked the way ripgrep walks one: hidden files and folders and symbolic links
    inside it are left out (the links are named in what it returns: a linked note or folder
    would be missing without a word), as is anything that is not a regular file. A file named directly is
    read (through a link, if it is one) when it is a regular file; a FIFO, a socket or a device
    is refused. A file named twice (by absolute and by relative path) is read once."""
    found: dict[Path, Found] = {}
    skipped: list[Path] = []
    links: list[Path] = []
    for raw in paths:
        path = Path(raw)
        mode = named_mode(path)
        resolved = path.resolve()
        if stat.S_ISDIR(mode):
            files, linked = _walk(resolved)
            links += linked
            for child in files:
                if child.suffix.lower() in SUPPORTED_SUFFIXES:
                    found.setdefault(child, Found(child, resolved))
                else:
                    skipped.append(child)
        elif stat.S_ISREG(mode):
            found.setdefault(resolved, Found(resolved, resolved.parent))
        else:
            raise IngestError(path, f"is {kind_of(mode)}; Mnemoscope reads files and folders")
    return Discovered(list(found.values()), skipped, links)


def _walk(folder: Path) -> tuple[list[Path], list[Path]]:
    """The regular files under ``folder`` and the links there, not followed, each sorted; hidden
    entries are left out."""
    out: list[Path] = []
    links: list[Path] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        links += [Path(top) / d for d in dirs if os.path.islink(Path(top) / d)]  # os.walk does not go in
        for name in files:
            child = Path(top) / name
            mode = os.lstat(child).st_mode
            if not name.startswith(".") and (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                (out if stat.S_ISREG(mode) else links).append(child)
    return sorted(out), sorted(links)


def read_path(path: str | Path, chunk_tokens: int = 200, root: Path | None = None,
              max_text_bytes: int = MAX_FILE_BYTES) -> list[ParsedSource]:
    """Parse one file into one or more sources (a LoCoMo file holds several conversations).
    Sources are named by the file's resolved path; ``root`` (default: the file's folder) is the
    folder the person named, kept in each source's meta as ``root``: the only place a
    document's local references (a shared photo's path) may point into. A text or Markdown file
    of more than ``max_text_bytes`` is refused before it is read (the setting of that name)."""
    path = Path(path).resolve()
    by_line = read_chat_lines(path, root) if path.suffix.lower() in _LINE_SUFFIXES else None
    text_limit = max_text_bytes if path.suffix.lower() in _TEXT_SUFFIXES else None
    parsed = [by_line] if by_line else _read_whole(path, root, chunk_tokens, text_limit)
    for p in parsed:
        p.source.meta["root"] = str(root or path.parent)
    return parsed


def _read_whole(path: Path, root: Path | None, chunk_tokens: int, text_limit: int | None) -> list[ParsedSource]:
    """A file read whole, then parsed, its labels checked (here, per file: a preview counts it,
    a lenient ingest sets this file aside)."""
    text, digest = _text_and_digest(path, root, text_limit)
    parsed = _parse(path, text, digest, chunk_tokens)
    for p in parsed:
        check_labels(p)
    return parsed


def _parse(path: Path, text: str, digest: str, chunk_tokens: int) -> list[ParsedSource]:
    suffix = path.suffix.lower()
    try:
        if suffix in {".json"}:
            data = load_json(path, text)
            if conversations.chat_shape(data):
                return conversations.read_chat_json(str(path), data, text, digest)
            return read_conversation_json(path, text, digest, data)
        if suffix in _LINE_SUFFIXES and conversations.is_openai_line(text):
            return [conversations.read_openai_jsonl(str(path), text, digest)]
    except ChatFormatError as exc:
        raise IngestError(path, exc.message, exc.line) from None
    if suffix in _LINE_SUFFIXES:
        return [read_jsonl_chat(path, text, digest)]
    if suffix in {".md", ".markdown"}:
        return [read_markdown(str(path), text, digest, chunk_tokens)]
    if suffix in {".txt", ".text", ""} and looks_like_transcript(text):
        return [read_transcript(str(path), text, digest)]
    if suffix in {".txt", ".text", ""}:
        return [read_plain(str(path), text, digest, chunk_tokens)]
    raise IngestError(path, f"unsupported file type {suffix!r} (supported: {', '.join(sorted(SUPPORTED_SUFFIXES))})")


def note(text: str, name: str, title: str = "", tags: list[str] | None = None,
         max_bytes: int = MAX_FILE_BYTES) -> ParsedSource:
    """A note typed or pasted by a person: one source with one item (split when long:
    :func:`hold_to_limits`), of at most ``max_bytes`` (the setting ``max_text_bytes``)."""
    if not text.strip():
        raise IngestError(name, "the note is empty")
    if (size := len(text.encode("utf-8", "surrogatepass"))) > max_bytes:
        raise IngestError(name, text_too_large(f"the note is {size_text(size)}", max_bytes))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    item = Item(text=text.strip(), kind="note", key="0", title=title, tags=list(tags or []))
    return ParsedSource(Source(name=name, kind="note", content_hash=digest), [item])


# -- bytes and text ---------------------------------------------------------------------------


def _text_and_digest(path: Path, root: Path | None, text_limit: int | None = None) -> tuple[str, str]:
    """A file's text and the digest of its bytes (the bytes are not held through the parse)."""
    data = _read_bytes(path, root, text_limit)
    return _decode(path, data), hashlib.sha256(data).hexdigest()


def _read_bytes(path: Path, root: Path | None, text_limit: int | None = None) -> bytes:
    """The bytes of a file of at most :data:`MAX_FILE_BYTES`, or ``text_limit`` for a text or
    Markdown file (the setting ``max_text_bytes``: refused by its size before it is read)."""
    limit = min(MAX_FILE_BYTES, text_limit or MAX_FILE_BYTES)
    try:
        return read_regular(path, limit, inside=root.resolve() if root else None)
    except FileTooLarge as exc:
        if limit == MAX_FILE_BYTES:
            raise IngestError(path, str(exc)) from None
        what = f"a text file of {size_text(exc.size)}" if exc.size is not None else "a text file that grew while it was read"
        raise IngestError(path, text_too_large(what, limit)) from None
    except FileRefused as exc:
        raise IngestError(path, str(exc)) from None


def text_too_large(what: str, limit: int) -> str:
    """The refusal of a text or Markdown file, or a note, past the setting ``max_text_bytes``."""
    return over_limit(what, "max_text_bytes", size_text(limit), "what one text or Markdown file or note may add",
                      "nothing was stored")


# Byte-order marks that declare a file's encoding (UTF-32's before UTF-16's: FF FE 00 00 starts with FF FE).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_BINARY_PROBE = 8192  # the bytes a file's start is looked at for NUL bytes (a binary file)


def _decode(path: Path, data: bytes) -> str:
    """A file's text: UTF-8, or UTF-16 / UTF-32 when a byte-order mark says so (what Windows
    editors and PowerShell's redirection write: text, although full of NUL bytes)."""
    codec = next((name for bom, name in _BOMS if data.startswith(bom)), None)
    if codec:
        try:
            return data.decode(codec)
        except UnicodeDecodeError as exc:
            raise IngestError(path, f"not {codec.upper()} text although it starts with its byte-order mark (byte {exc.start})") from None
    if b"\x00" in data[:_BINARY_PROBE]:
        raise IngestError(path, "binary file (contains NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise IngestError(path, f"not UTF-8 text (byte {exc.start})", line) from None


def text_lines(text: str) -> list[str]:
    """A text's lines, split where a file's lines end (``\\n``, ``\\r\\n``, ``\\r``) and nowhere
    else: U+2028, U+2029, form feeds and the other breaks :meth:`str.splitlines` knows are text."""
    return _LINE_END.split(text[:-1] if text.endswith("\n") else text) if text else []


_LINE_END = re.compile(r"\r\n|\r|\n")


def load_json(path: str | Path, text: str, line: int | None = None) -> Any:
    """``json.loads`` with every failure as one :class:`IngestError` naming the line; an object
    naming a key twice is one (:func:`.conversations.read_json`)."""
    try:
        return conversations.read_json(text)
    except json.JSONDecodeError as exc:
        raise IngestError(path, f"malformed JSON: {exc.msg}", (line or 1) + exc.lineno - 1) from None
    except conversations.DuplicateKey as exc:
        raise IngestError(path, str(exc), (line or 1) + (exc.line or 1) - 1) from None
    except RecursionError:
        raise IngestError(path, "JSON nested too deeply to read", line) from None


# -- chunking ---------------------------------------------------------------------------------


def chunk_text(text: str, budget: int = 200) -> list[str]:
    """Pack whole sentences into chunks of at most ``budget`` tokens; paragraphs break softly.

    A sentence is not split: one longer than the budget becomes a chunk of its own, unless it is
    longer than :data:`MAX_CHUNK_CHARS`, which is cut at spaces into pieces no longer than that.
    """
    chunks: list[str] = []
    current: list[str] = []
    used, chars = 0, -1  # chars: of the chunk as joined, its first sentence without a space before it
    for sentence in (piece for whole in sentences(text) for piece in _pieces(whole)):
        cost = token_count(sentence)
        if current and (used + cost > budget or chars + 1 + len(sentence) > MAX_CHUNK_CHARS):
            chunks.append(" ".join(current))
            current, used, chars = [], 0, -1
        current.append(sentence)
        used += cost
        chars += 1 + len(sentence)
    if current:
        chunks.append(" ".join(current))
    return chunks


def _labels(item: Item) -> list[tuple[str, str, bool]]:
    """An item's labels: (what it is, its value, whether it is shown alone)."""
    caption = item.meta.get("image_caption")
    return [("speaker", item.speaker or "", True), ("title", item.title, True),
            ("photo's caption", caption if isinstance(caption, str) else "", False)]


def _fits(item: Item) -> bool:
    """Whether every label of ``item`` keeps the rule: :func:`label_problem` itself, so that the
    rule is stated once (it is asked of every item a file or a caller makes)."""
    return not any(value and label_problem(value, shown_alone=alone) for _, value, alone in _labels(item))


def check_labels(p: ParsedSource) -> None:
    """Refuse a parsed source whose item has a label :func:`label_problem` refuses, with an
    :class:`IngestError` naming the source, the item and (where the reader kept it) the line."""
    for item in p.items:
        check_item_labels(p.source.name, item)


def check_item_labels(name: str, item: Item) -> None:
    """:func:`check_labels` for one item of the source ``name``."""
    if _fits(item):
        return
    for label, value, alone in _labels(item):
        problem = value and label_problem(value, shown_alone=alone)
        if problem:
            line = item.meta.get("line")
            raise IngestError(name, f"{item.kind} {item.key!r}: its {label} {problem}; nothing was stored",
                              line if isinstance(line, int) else None)


def fit_labels(p: ParsedSource) -> list[str]:
    """Make the labels of an export's source keep :func:`label_problem`'s rule, and say what
    changed: a label over the limit is cut to it, a control character in one shown alone becomes
    a space and an invisible one is dropped. An export holds what a store held, which an older store did not hold to the rule;
    refusing a backup whole for a label would lose the lot (as its long texts are split, not
    refused: engine/transfer.py)."""
    said: list[str] = []
    for item in (item for item in p.items if not _fits(item)):
        for label, value, alone in _labels(item):
            if not (value and label_problem(value, shown_alone=alone)):
                continue
            fitted, done = fitted_label(value, alone)
            if label == "speaker":
                item.speaker = fitted
            elif label == "title":
                item.title = fitted
            else:
                item.meta["image_caption"] = fitted
            said.append(f"{p.source.name}: {item.kind} {item.key!r}: its {label}: {done}")
    return said


def fitted_label(value: str, alone: bool = True) -> tuple[str, str]:
    """``value`` made to keep :func:`label_problem`'s rule (cut to the limit; in a label
    ``alone``, each control character a space and each invisible one dropped), and what was
    done, in words ("" when it kept the rule already)."""
    shown = shown_label(value) if alone else value
    fitted = shown[:MAX_LABEL_CHARS]
    done = [f"cut from {len(shown):,} to {len(fitted):,} characters"] if len(shown) > len(fitted) else []
    done += ["control characters made spaces"] if alone and CONTROL.search(value) else []
    done += ["invisible characters dropped"] if len(shown) < len(value) else []
    return fitted, " and ".join(done)


def hold_to_limits(parsed: Sequence[ParsedSource]) -> None:
    """Hold parsed sources, before any of them is stored, to what one item may hold, whichever
    reader or caller made them (a file, a note, an MCP client's messages).

    A label :func:`label_problem` refuses (a file's reader refused it already, as it parsed the
    file: this is the backstop for what a caller parsed itself) refuses the whole lot with an
    :class:`IngestError` naming the source and the item, so nothing is stored. A text longer
    than :data:`MAX_CHUNK_CHARS` is split, at spaces as a document's long sentence is, into
    items that follow each other: the first keeps the item's key and photo, the next ones are
    keyed ``KEY+2``, ``KEY+3`` … and every piece says ``part`` "n/total" in its meta; the source's
    positions are renumbered so that the pieces stay neighbours. Nothing is left out."""
    held = [p for p in parsed if isinstance(p.items, list)]  # (a ReadAgain's reader held its turns to them as it checked them)
    for p in held:
        check_labels(p)
    for p in held:
        if any(len(item.text) > MAX_CHUNK_CHARS for item in p.items):
            p.items = split_long(p.items)


def split_long(items: list[Item]) -> list[Item]:
    """``items`` with each text over :data:`MAX_CHUNK_CHARS` split (see :func:`hold_to_limits`)."""
    keys = {item.key for item in items}
    out: list[Item] = []
    for item in items:
        out.append(item)
        if len(item.text) <= MAX_CHUNK_CHARS:
            continue
        pieces = [piece for piece in _pieces(item.text) if piece] or [""]  # (blank: its spaces were the length)
        if len(pieces) == 1:
            item.text = pieces[0]
            continue
        rest = {k: v for k, v in item.meta.items() if k not in _FIRST_PIECE_META}
        for n, piece in enumerate(pieces[1:], 2):
            key = f"{item.key}+{n}"
            while key in keys:  # (a reader's own keys may look like this)
                key += "+"
            keys.add(key)
            out.append(replace(item, text=piece, key=key, meta={**rest, "part": f"{n}/{len(pieces)}"},
                               tags=list(item.tags), links=list(item.links)))
        item.text, item.meta["part"] = pieces[0], f"1/{len(pieces)}"
    for position, item in enumerate(out):
        item.position = position
    return out


def _pieces(sentence: str) -> Iterator[str]:
    """``sentence``, or pieces of it no longer than :data:`MAX_CHUNK_CHARS`, each cut at the last
    space in its second half (where there is none, at the limit)."""
    start = 0
    while len(sentence) - start > MAX_CHUNK_CHARS:
        end = sentence.rfind(" ", start + MAX_CHUNK_CHARS // 2, start + MAX_CHUNK_CHARS + 1)
        end = end if end > start else start + MAX_CHUNK_CHARS
        yield sentence[start:end].strip()
        start = end
    yield sentence[start:].strip()


def _refuse_empty(name: str, text: str) -> None:
    """Refuse a text document that shows nothing: empty, or of control and invisible characters
    alone (escapes, zero-width spaces), which was stored as an item that shows nothing."""
    if not text.strip():
        raise IngestError(name, "the file is empty")
    if not shown_label(text).strip():
        raise IngestError(name, "the file shows nothing (only control or invisible characters)")


def read_plain(name: str, text: str, digest: str, chunk_tokens: int = 200) -> ParsedSource:
    _refuse_empty(name, text)
    items = [Item(text=c, kind="chunk", key=str(i), position=i) for i, c in enumerate(chunk_text(text, chunk_tokens))]
    return ParsedSource(Source(name=name, kind="document", content_hash=digest, meta={"format": "text"}), items)


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def read_markdown(name: str, text: str, digest: str, chunk_tokens: int = 200) -> ParsedSource:
    """Chunk each section separately; every chunk keeps its heading path as title and tags."""
    _refuse_empty(name, text)
    sections: list[tuple[list[str], list[str], int]] = []  # (heading path, lines, first line no)
    stack: list[tuple[int, str]] = []  # open headings as (level, title)
    lines: list[str] = []
    start = 1
    in_fence = False
    for lineno, line in enumerate(text_lines(text), 1):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence or len(line) > MAX_HEADING_CHARS else _HEADING.match(line)
        if m:
            sections.append(([t for _, t in stack], lines, start))
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, " ".join(m.group(2).split())))  # (a tab in a heading is a space, as Markdown reads it)
            lines, start = [], lineno
        else:
            lines.append(line)
    sections.append(([t for _, t in stack], lines, start))
    items: list[Item] = []
    for clean_path, body, first_line in sections:
        body_text = "\n".join(body).strip()
        if not body_text:
            continue
        for chunk in chunk_text(body_text, chunk_tokens):
            items.append(
                Item(
                    text=chunk, kind="chunk", key=str(len(items)), position=len(items),
                    title=" › ".join(clean_path), meta={"heading_path": clean_path, "line": first_line},
                )
            )
    if not items:
        raise IngestError(name, "no text under any heading")
    title = next((p[0] for p, _, _ in sections if p), Path(name).stem)
    return ParsedSource(Source(name=name, kind="document", content_hash=digest, meta={"format": "markdown", "title": title}), items)


# -- conversations ----------------------------------------------------------------------------

_LOCOMO_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I)


def parse_session_date(raw: str) -> str | None:
    """``"1:56 pm on 8 May, 2023"`` (LoCoMo) or any ISO date → ISO 8601, else None."""
    raw = (raw or "").strip()
    m = _LOCOMO_DATE.search(raw)
    if m:
        hour, minute, ampm, day, month, year = m.groups()
        hour = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
        for fmt in ("%B", "%b"):
            try:
                mon = datetime.strptime(month[:3] if fmt == "%b" else month, fmt).month
                return datetime(int(year), mon, int(day), hour, int(minute)).isoformat()
            except ValueError:
                continue
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).isoformat()
    except ValueError:
        return None


def read_conversation_json(path: Path, text: str, digest: str, data: Any = None) -> list[ParsedSource]:
    """A LoCoMo file: a list of samples (or one sample) with ``conversation.session_N`` turns
    (``data``: the file already parsed).

    Each conversation is a source of its own, named ``file#sample_id``, whose content hash covers
    that conversation alone: editing one conversation of a file re-ingests that one and leaves
    the others (their ids, curation, feedback and trust) as they are. ``digest`` (the file's)
    is not used: the hash is of what each conversation holds."""
    if data is None:
        data = load_json(path, text)
    samples = data if isinstance(data, list) else [data]
    if not samples:
        raise IngestError(path, "the JSON holds no conversation")
    out: list[ParsedSource] = []
    names: dict[str, int] = {}
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise IngestError(path, f"sample {index}: expected an object with a 'conversation' object")
        parsed = locomo_sample(path, text, sample, index)
        sample_id = parsed.source.meta["sample_id"]
        if sample_id in names:
            raise IngestError(path, f"sample {index}: the sample_id {sample_id!r} is also sample {names[sample_id]}'s;"
                              " each conversation needs its own", line_of(text, json.dumps(sample_id)))
        names[sample_id] = index
        out.append(parsed)
    return out


def _typed(path: Path, text: str, where: str, name: str, value: Any, kinds: tuple[type, ...], needle: str = "") -> Any:
    """``value`` if it is one of ``kinds`` (a bool is no int), else a refusal naming the line."""
    if isinstance(value, kinds) and not isinstance(value, bool):
        return value
    wanted = " or ".join({"str": "a string", "int": "an integer"}.get(k.__name__, k.__name__) for k in kinds)
    raise IngestError(path, f"{where}: {name!r} must be {wanted}, not {cut_repr(value)}",
                      line_of(text, needle or f'"{name}"'))


def locomo_sample(path: Path, text: str, sample: dict[str, Any], index: int) -> ParsedSource:
    conv = sample.get("conversation") if isinstance(sample, dict) else None
    where = f"sample {index}"
    if not isinstance(conv, dict):
        raise IngestError(path, f'{where}: no "conversation" object')
    sample_id = str(_typed(path, text, where, "sample_id", sample.get("sample_id", index), (str, int)))
    session_keys = sorted((k for k in conv if re.fullmatch(r"session_[0-9]+", k)), key=lambda k: int(k.split("_")[1]))
    if not session_keys:
        raise IngestError(path, f"conversation {sample_id}: no session_N lists of turns")
    speakers = [_typed(path, text, f"conversation {sample_id}", k, conv[k], (str,)) for k in ("speaker_a", "speaker_b")
                if conv.get(k) is not None]
    items: list[Item] = []
    left_out: dict[str, int] = {}  # photos not kept, by field (photo_meta)
    seen: set[str] = set()
    for key in session_keys:
        session_no = int(key.split("_")[1])
        turns = conv[key]
        if not isinstance(turns, list):
            raise IngestError(path, f"conversation {sample_id}: {key} is not a list", line_of(text, f'"{key}"'))
        date_raw = _typed(path, text, f"conversation {sample_id}", f"{key}_date_time", conv.get(f"{key}_date_time") or "", (str,))
        timestamp = parse_session_date(date_raw) if date_raw.strip() else None
        if date_raw.strip() and timestamp is None:
            raise IngestError(path, f"conversation {sample_id}: {key}_date_time {date_raw!r} is not a date",
                              line_of(text, f'"{key}_date_time"'))
        for n, turn in enumerate(turns):
            where = f"conversation {sample_id}, {key} turn {n + 1}"
            if not isinstance(turn, dict):
                raise IngestError(path, f"{where}: expected an object")
            raw_id = turn.get("dia_id")
            needle = json.dumps(raw_id) if isinstance(raw_id, (str, int)) else '"dia_id"'
            missing = [f for f in ("speaker", "text") if not isinstance(turn.get(f), str)]
            if missing:
                line = line_of(text, needle) if raw_id is not None else None
                raise IngestError(path, f"{where}: missing field(s) {', '.join(missing)}", line)
            if problem := label_problem(turn["speaker"]):  # (here, where the turn's line can be found)
                raise IngestError(path, f"{where}: 'speaker' {problem}", line_of(text, needle) if raw_id is not None else None)
            dia_id = str(_typed(path, text, where, "dia_id", raw_id, (str, int), needle) if raw_id not in (None, "") else
                         f"D{session_no}:{n + 1}")
            if dia_id in seen:
                raise IngestError(path, f"{where}: duplicate dia_id {dia_id!r}", line_of(text, f'"{dia_id}"'))
            seen.add(dia_id)
            try:
                photo = photo_meta(turn, left_out)
            except BadPhoto as exc:
                raise IngestError(path, f"{where}: {exc}", line_of(text, f'"{dia_id}"')) from None
            meta: dict[str, Any] = {"session": session_no, "session_date": date_raw, **photo}
            items.append(
                Item(
                    text=turn["text"], kind="turn", key=dia_id, position=len(items), speaker=turn["speaker"],
                    timestamp=timestamp, tags=[f"session:{session_no}"], meta=meta,
                )
            )
    meta = {"format": "locomo", "sample_id": sample_id, "speakers": [s for s in speakers if s], "sessions": len(session_keys),
            **({"parts_left_out": left_out} if left_out else {})}
    content = json.dumps(sample, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"locomo:{sample_id}:{content}".encode("utf-8")).hexdigest()
    return ParsedSource(Source(name=f"{path}#{sample_id}", kind="conversation", content_hash=digest, meta=meta), items)


class BadPhoto(ValueError):
    """A turn's photo fields have the wrong type; the reader adds the file and line."""


def photo_meta(turn: dict[str, Any], left_out: dict[str, int]) -> dict[str, str]:
    """A turn's shared photo as item meta, read the LoCoMo way from ``img_url`` (a reference, or a
    list whose first one is used) and ``blip_caption`` (what the photo shows): ``image_url`` is
    what :mod:`engine.images` reads and embeds, ``image_caption`` what the indexes search
    (:meth:`Item.search_text`). A reference not kept is counted in ``left_out`` under ``img_url``
    (the source's ``meta.parts_left_out``, as a chat file's parts are): a list's further ones, and
    a ``data:`` URL over :data:`engine.conversations.MAX_INLINE_IMAGE_CHARS`, which every recall
    returning the turn would carry (the next one of the list is then the photo). Raises
    :class:`BadPhoto` for a field of the wrong type."""
    meta: dict[str, str] = {}
    caption, urls = turn.get("blip_caption"), turn.get("img_url")
    if caption is not None and not isinstance(caption, str):
        raise BadPhoto(f"'blip_caption' must be a string, not {cut_repr(caption)}")
    if urls is not None and not (isinstance(urls, str) or isinstance(urls, list) and all(isinstance(u, str) for u in urls)):
        raise BadPhoto(f"'img_url' must be a string or a list of strings, not {cut_repr(urls)}")
    if caption:
        meta["image_caption"] = caption
    for url in filter(None, urls if isinstance(urls, list) else [urls]):
        if "image_url" not in meta and conversations.kept_inline(url):
            meta["image_url"] = url
        else:
            left_out["img_url"] = left_out.get("img_url", 0) + 1
    return meta


def read_jsonl_chat(path: Path, text: str, digest: str) -> ParsedSource:
    """One object per line: ``speaker`` and ``text`` (strings), and optionally ``timestamp``
    (ISO 8601 or a LoCoMo date), ``id`` (the turn's key, unique in the file; else its number)
    and a shared photo, ``img_url`` and ``blip_caption`` as in LoCoMo (:func:`photo_meta`).
    The line format is described in docs/formats.md. (A file on disk is read by
    :func:`read_chat_lines` instead, a line at a time.)"""
    turns = ChatTurns(path)
    items = list(turns.read(enumerate(_lines(text), 1)))
    return ParsedSource(turns.source(digest), items)


class ChatTurns:
    """A JSON-lines chat's turns made as its lines are read (:func:`read_jsonl_chat`), and what
    the file says beside them: the keys given (each once), the speakers, the photos left out."""

    def __init__(self, path: Path, check_keys: bool = True) -> None:
        self.path = path
        self.count = 0  # turns read so far
        self.longest = 0  # characters of the longest text
        self.left_out: dict[str, int] = {}  # photos not kept, by field (photo_meta)
        self.speakers: dict[str, str] = {}  # each name's one string, shared by its turns
        self._keys: set[str] | None = set() if check_keys else None

    def read(self, lines: Iterable[tuple[int, str]]) -> Iterator[Item]:
        """The turns of ``(line number, line)`` pairs; a blank line is skipped, a bad one refused
        with an :class:`IngestError` naming it."""
        for lineno, line in lines:
            if line.strip():
                yield self._turn(lineno, line)

    def _turn(self, lineno: int, line: str) -> Item:
        path = self.path
        obj = load_json(path, line, lineno)
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or not isinstance(obj.get("speaker"), str):
            raise IngestError(path, "expected an object with string fields 'speaker' and 'text'", lineno)
        timestamp = obj.get("timestamp")
        if timestamp is not None and not isinstance(timestamp, str):
            raise IngestError(path, f"'timestamp' must be a string (ISO 8601 or a LoCoMo date), not {cut_repr(timestamp)}", lineno)
        iso = parse_session_date(timestamp) if timestamp else None
        if timestamp and iso is None:
            raise IngestError(path, f"unreadable timestamp {timestamp!r}", lineno)
        raw_id = obj.get("id", self.count)
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
            raise IngestError(path, f"'id' must be a string or an integer, not {cut_repr(raw_id)}", lineno)
        key = str(raw_id)
        if self._keys is not None:
            if key in self._keys:
                raise IngestError(path, f"the id {key!r} is used by an earlier line", lineno)
            self._keys.add(key)
        try:
            photo = photo_meta(obj, self.left_out)
        except BadPhoto as exc:
            raise IngestError(path, str(exc), lineno) from None
        item = Item(text=obj["text"], kind="turn", key=key, position=self.count,
                    speaker=self.speakers.setdefault(obj["speaker"], obj["speaker"]), timestamp=iso,
                    meta={"line": lineno, **photo})
        self.count += 1
        self.longest = max(self.longest, len(item.text))
        return item

    def source(self, digest: str) -> Source:
        """The chat's source record, once every line is read."""
        if not self.count:
            raise IngestError(self.path, "no chat lines")
        meta = {"format": "jsonl", "speakers": sorted(s for s in self.speakers if s),
                **({"parts_left_out": self.left_out} if self.left_out else {})}
        return Source(name=str(self.path), kind="conversation", content_hash=digest, meta=meta)


def read_chat_lines(path: Path, root: Path | None) -> ParsedSource | None:
    """A JSON-lines chat read from its file a line at a time: every line is checked (as
    :func:`read_jsonl_chat` checks it, labels too) and its bytes fingerprinted, but no turn is
    kept; the source's items are :class:`ReadAgain`, parsed from the file again each time they
    are walked, so that a long chat is never held whole (an ingest stores it a block at a time).
    None when the file is no such chat: OpenAI messages, UTF-16 or UTF-32 text (read whole, as
    before). A chat with a text over :data:`MAX_CHUNK_CHARS` has its items read once and held,
    to be split (:func:`hold_to_limits`)."""
    digest, fingerprints = hashlib.sha256(), array("q")
    lines = _checked_lines(path, root, digest, fingerprints)
    try:
        first = next(((n, line) for n, line in lines if line.strip()), None)
    except _ReadWhole:
        return None
    if first is None or conversations.is_openai_line(first[1]):
        lines.close()
        return None
    turns = ChatTurns(path)
    for item in turns.read(chain([first], lines)):
        check_item_labels(str(path), item)
    parsed = ParsedSource(turns.source(digest.hexdigest()), ReadAgain(path, root, fingerprints, turns.count))
    if turns.longest > MAX_CHUNK_CHARS:
        parsed.items = list(parsed.items)
    return parsed


class _ReadWhole(Exception):
    """A file's start says to read it whole, as :func:`_decode` reads a file: a UTF-16 or UTF-32
    byte-order mark (its lines end in more than one byte), or a NUL byte or bytes that are no
    UTF-8 in its first :data:`_BINARY_PROBE` bytes (refused, as a binary file first)."""


def _checked_lines(path: Path, root: Path | None, digest: Any, fingerprints: array) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of a file read as UTF-8, as :func:`_decode` reads a
    whole file (a UTF-8 byte-order mark dropped, bytes that are no UTF-8 refused), each line's
    bytes added to ``digest`` and its fingerprint to ``fingerprints``; :class:`_ReadWhole` raised
    where its start says to read it whole."""
    at = 0
    for lineno, raw in enumerate(_raw_lines(path, root), 1):
        if lineno == 1 and raw.startswith(tuple(bom for bom, _ in _BOMS)):
            raise _ReadWhole()
        digest.update(raw)
        fingerprints.append(hash(raw))
        if at < _BINARY_PROBE and b"\x00" in raw[:_BINARY_PROBE - at]:
            raise _ReadWhole()
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            if at < _BINARY_PROBE:
                raise _ReadWhole() from None
            raise IngestError(path, f"not UTF-8 text (byte {at + exc.start})", lineno) from None
        at += len(raw)
        yield lineno, text[:-1] if text.endswith("\n") else text


def _raw_lines(path: Path, root: Path | None) -> Iterator[bytes]:
    try:
        yield from lines_of_regular(path, MAX_FILE_BYTES, inside=root.resolve() if root else None)
    except FileRefused as exc:
        raise IngestError(path, str(exc)) from None


class ReadAgain:
    """The turns of a JSON-lines chat file (:func:`read_chat_lines`), parsed from the file again
    each time they are walked: counted and walked, not indexed (the n-th turn is found only by
    reading the file up to it; indexed in a loop, the file would be read a quadratic number of
    times). Each line read again must be the one checked: its fingerprint
    (:func:`hash` of its bytes, keyed afresh in every process) the same, and as many lines; a
    file changed since is refused at the first line that differs, before any turn of it is
    given, so what is stored is what was checked."""

    def __init__(self, path: Path, root: Path | None, fingerprints: array, count: int) -> None:
        self.path, self.root = path, root
        self._fingerprints = fingerprints
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Item]:
        return ChatTurns(self.path, check_keys=False).read(self._lines())

    def _lines(self) -> Iterator[tuple[int, str]]:
        changed = IngestError(self.path, "changed since it was read; read it again")
        read = 0
        for raw in _raw_lines(self.path, self.root):
            if read >= len(self._fingerprints) or hash(raw) != self._fingerprints[read]:
                raise changed
            read += 1
            text = raw.decode("utf-8-sig" if read == 1 else "utf-8")
            yield read, text[:-1] if text.endswith("\n") else text
        if read != len(self._fingerprints):
            raise changed


def _lines(text: str) -> Iterator[str]:
    """``text.split("\\n")`` one line at a time (JSON Lines ends a line at \\n only): a long file's
    lines are not all held at once beside its text and what is made of them."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


# A speaker's name starts with a letter (any script) and ends at a colon and a space, or at a
# full-width colon (Chinese and Japanese put no space after it).
_SPEAKER_LINE = re.compile(r"^\s*([^\W\d_][\w .'\-]{0,40}?)\s*(?::\s+|：\s*)(\S.*)$")


def _speaker_line(line: str) -> re.Match[str] | None:
    """``Speaker: text``, the speaker starting with a capital or an uncased letter (小明, 민지): a
    lower-case word before a colon ("note: …", "todo: …") is no speaker."""
    m = _SPEAKER_LINE.match(line)
    return None if m is None or m.group(1)[0].islower() else m


def looks_like_transcript(text: str) -> bool:
    filled = [line for line in text_lines(text) if line.strip()]
    if len(filled) < 2:
        return False
    hits = sum(1 for line in filled if _speaker_line(line))
    return hits / len(filled) >= 0.6


def read_transcript(name: str, text: str, digest: str) -> ParsedSource:
    """``Speaker: text`` lines; a line without a speaker continues the previous turn."""
    items: list[Item] = []
    said: list[list[str]] = []  # each turn's lines, joined at the end (joined line by line, a long turn took quadratic time)
    for lineno, line in enumerate(text_lines(text), 1):
        if not line.strip():
            continue
        m = _speaker_line(line)
        if m:
            items.append(Item(text="", kind="turn", key=str(len(items)), position=len(items),
                              speaker=m.group(1).strip(), meta={"line": lineno}))
            said.append([m.group(2).strip()])
        elif items:
            said[-1].append(line.strip())
        else:
            raise IngestError(name, "transcript starts without a 'Speaker:' prefix", lineno)
    for item, lines in zip(items, said):
        item.text = " ".join(lines)
    speakers = sorted({i.speaker for i in items if i.speaker})
    return ParsedSource(Source(name=name, kind="conversation", content_hash=digest, meta={"format": "transcript", "speakers": speakers}), items)
