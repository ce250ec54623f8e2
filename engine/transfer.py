"""Export and import: a store's records as JSON lines, and back again, all or nothing.

:func:`export` writes every source, then its items, then each area's records
(``export_records``: the knowledge snapshot, the ranker's trust), read in one snapshot of the
store, and ends the file with a trailer::

    {"type": "trailer", "format": "mnemoscope-export", "version": 1,
     "records": N, "sources": S, "items": I, "sha256": "<hex digest of every byte before this line>"}

The file is written beside the target and renamed over it only when complete (fsynced, 0600): an
export that fails or is killed leaves the previous file as it was. :func:`import_` reads the
trailer first and refuses a file without a valid one (an export cut short, or changed since),
then checks every core record (:func:`read_export`, naming ``file:line``) and stores all of it
or none of it.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable, Iterator, NoReturn, Protocol, Sequence

from .conversations import DuplicateKey, read_json
from .errors import ExportFailed, FileRefused, IngestFailed, cut_repr, over_limit, size_text
from .files import atomic_writer, open_regular
from .ingest import MAX_CHUNK_CHARS, IngestError, fit_labels, split_long
from .records import WRITTEN_BY, IngestReport, Item, ParsedSource, Source
from .store.check import Salvaged, readable_records

if TYPE_CHECKING:
    from .area import Area
    from .config import Settings
    from .dense import OpenAIEmbedder
    from .store import Store

TRAILER = "trailer"
FORMAT = "mnemoscope-export"
FORMAT_VERSION = 1
LOCAL_META = ("root",)  # source meta that names this machine's folders: never exported, never imported
_TAIL = 64 * 1024  # what check_export reads of a file's end: a trailer is one short line


class Transferring(Protocol):
    """What export and import use of a memory (:class:`engine.memory.Memory` is one)."""

    settings: Settings
    store: Store

    @property
    def areas(self) -> list[Area]: ...

    @property
    def external_embedder(self) -> OpenAIEmbedder | None: ...

    def refresh(self) -> bool: ...

    def reload(self) -> None: ...

    def ingest_parsed(self, parsed: Sequence[ParsedSource]) -> IngestReport: ...


# -- export -----------------------------------------------------------------------------------


def export(mem: Transferring, path: str | Path) -> int:
    """Write every record as JSON lines, and the trailer; returns the record count."""
    with mem.store.reading():
        return write_records(path, _records(mem))


def _records(mem: Transferring) -> Iterator[dict[str, Any]]:
    for source in mem.store.sources():
        record = asdict(source)
        record["meta"] = {k: v for k, v in source.meta.items() if k not in LOCAL_META}
        yield {"type": "source", **record}
        for item in mem.store.items_of_source(source.id):
            yield {"type": "item", **asdict(item)}
    for area in mem.areas:
        yield from area.export_records()


def write_records(path: str | Path, records: Iterable[Any]) -> int:
    """Write ``records`` as an export file (atomically, with the trailer); returns their count."""
    counts = {"records": 0, "source": 0, "item": 0}
    digest = hashlib.sha256()
    try:
        with atomic_writer(path) as fh:
            for record in records:
                line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
                digest.update(line)
                fh.write(line)
                counts["records"] += 1
                kind = record.get("type") if isinstance(record, dict) else None
                counts[kind] = counts.get(kind, 0) + 1
            fh.write((json.dumps(_trailer(counts["records"], counts["source"], counts["item"], digest.hexdigest()))
                      + "\n").encode("utf-8"))
    except FileRefused as exc:
        raise ExportFailed(str(exc)) from None
    return counts["records"]


def _trailer(records: int, sources: int, items: int, sha256: str) -> dict[str, Any]:
    return {"type": TRAILER, "format": FORMAT, "version": FORMAT_VERSION, "records": records, "sources": sources,
            "items": items, "sha256": sha256}


# -- import -----------------------------------------------------------------------------------


def import_(mem: Transferring, path: str | Path) -> IngestReport:
    """Read an export and store all of it or none of it; sources already present with the
    same content are left alone. The caller holds the memory's write lock (``Memory.import_``).

    Every core record is checked first (:func:`read_export`), then each area with an
    ``importing(path, records, by_name)`` context manager checks its own records and may
    restore its state as each source is ingested (the knowledge snapshot does), and
    ``import_records`` runs after the sources. All of that is one transaction: a crash, an
    interrupt or a failure halfway leaves the store as it was, and the in-memory index and
    areas, which followed the sources as they went in, are reloaded from it. A label an older
    store held that breaks today's rule is made to fit (:func:`engine.ingest.fit_labels`), and
    the report's warnings say which."""
    try:
        exported = read_export(path, mem.settings.max_import_bytes)
    except IngestError as exc:
        raise IngestFailed([exc]) from None
    _split_long_items(exported)
    fitted = [fit_labels(parsed) for parsed in exported.sources.values()]
    marked = [_the_persons(parsed) for parsed in exported.sources.values()]
    mem.refresh()
    areas = mem.areas  # every area loaded before the transaction opens
    unread = [(line, r["type"]) for line, r in exported.records if not any(area.reads(r["type"]) for area in areas)]
    with ExitStack() as importing:
        try:
            for area in areas:
                importing.enter_context(area.importing(Path(path), exported.records, exported.by_name()))
        except IngestError as exc:
            raise IngestFailed([exc]) from None
        _embed_ahead(mem, exported.sources.values())
        try:
            with mem.store.transaction():
                report = mem.ingest_parsed(list(exported.sources.values()))
                id_map = _imported_ids(mem, exported, report)
                for stored, said in zip(report.sources, fitted):
                    stored.warnings += said if stored.status != "unchanged" else []
                _say_made_the_persons(report, marked)
                _say_left_out(report, Path(path), unread)
                for area in areas:
                    area.import_records([r for _, r in exported.records], id_map)
                if report.sources:
                    report.sources[0].warnings += [note for area in areas for note in area.import_notes()]
                mem.activity.record("store.imported", Path(path).name, count=report.items)
        except BaseException:
            mem.reload()  # forget what the rolled-back transaction had put in memory
            raise
    return report


def _the_persons(parsed: ParsedSource) -> bool:
    """Make an exported source the person's: drop the mark the MCP server writes on what an agent
    stores (:data:`engine.records.WRITTEN_BY`), which lets an agent replace or delete it. Whoever
    wrote the file chose that mark, and an import is the person's act; returns whether it was there."""
    return parsed.source.meta.pop(WRITTEN_BY, None) is not None


def _say_made_the_persons(report: IngestReport, marked: list[bool]) -> None:
    """One warning, on the first such source, when sources stored as an agent's came in as the person's."""
    made = [stored for stored, was in zip(report.sources, marked) if was and stored.status != "unchanged"]
    if made:
        made[0].warnings.append(f"{len(made):,} source(s) the export says an agent stored through MCP are the person's"
                                " once imported: an agent no longer replaces or forgets them")


def _say_left_out(report: IngestReport, path: Path, unread: list[tuple[int, str]]) -> None:
    """One warning, on the first source, when the export held records no area reads (a newer
    Mnemoscope's, an edited file's): they are left out, and said to be."""
    if unread and report.sources:
        line, kind = unread[0]
        kinds = ", ".join(map(repr, dict.fromkeys(k for _, k in unread)))
        report.sources[0].warnings.append(f"{len(unread):,} record(s) of a type this Mnemoscope does not read were left"
                                          f" out ({kinds}, first at {path}:{line})")


def _split_long_items(exported: ExportFile) -> None:
    """Split each item longer than :data:`engine.ingest.MAX_CHUNK_CHARS` as an ingest splits it: a
    store made before every text was held to that (c4e6095: turns, notes and MCP texts were not)
    exports such items, and an import takes what the store held. The first piece keeps the item's
    exported id, so the knowledge the export holds for the item stays with it; the further pieces
    get ids no record names. Done before the areas check their records against the items."""
    spare = min((old for ids in exported.item_ids.values() for old in ids), default=0)
    for source_id, parsed in exported.sources.items():
        if all(len(item.text) <= MAX_CHUNK_CHARS for item in parsed.items):
            continue
        old_ids = {id(item): old for old, item in zip(exported.item_ids[source_id], parsed.items)}
        parsed.items = split_long(parsed.items)
        exported.item_ids[source_id] = []
        for item in parsed.items:
            if id(item) not in old_ids:
                spare = min(spare, 0) - 1
            exported.item_ids[source_id].append(old_ids.get(id(item), spare))


def _embed_ahead(mem: Transferring, parsed: Iterable[ParsedSource]) -> None:
    """Fill the embedding cache before a long transaction, so that the network calls of an
    external embedder happen with no write lock held (inside, every text is a cache hit)."""
    if mem.settings.embedder == "openai" and mem.external_embedder is not None:
        mem.external_embedder.embed([i.search_text() for p in parsed for i in p.items])


def _imported_ids(mem: Transferring, exported: "ExportFile", report: IngestReport) -> dict[int, int]:
    """Exported → stored item ids, matched by key within each source (unchanged sources too)."""
    id_map: dict[int, int] = {}
    for (old_id, parsed), stored in zip(exported.sources.items(), report.sources):
        by_key = {i.key: i.id for i in mem.store.items_of_source(stored.source_id)}
        id_map.update((old, by_key[item.key]) for old, item in zip(exported.item_ids[old_id], parsed.items))
    return id_map


# -- reading an export ------------------------------------------------------------------------

# The fields of an export's core records, with the types each may hold (``None``: may be null).
_EXPORT_FIELDS: dict[str, dict[str, tuple[type | None, ...]]] = {
    "source": {"id": (int,), "name": (str,), "kind": (str,), "content_hash": (str,), "meta": (dict,)},
    "item": {"id": (int,), "source_id": (int,), "text": (str,), "kind": (str,), "key": (str,), "position": (int,),
             "speaker": (str, None), "timestamp": (str, None), "title": (str,), "tags": (list,), "links": (list,),
             "meta": (dict,)},
}
_EXPORT_REQUIRED = {"source": ("id", "name", "kind"), "item": ("id", "source_id", "text")}


@dataclass
class ExportFile:
    """An export read and checked, nothing written yet."""

    sources: dict[int, ParsedSource] = field(default_factory=dict)  # by exported source id, in file order
    item_ids: dict[int, list[int]] = field(default_factory=dict)  # exported source id → its items' exported ids
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line, record) of the areas' lines

    def by_name(self) -> dict[str, tuple[int, list[int]]]:
        """Source name → (exported source id, its items' exported ids)."""
        return {p.source.name: (old_id, self.item_ids[old_id]) for old_id, p in self.sources.items()}


def read_export(path: str | Path, max_bytes: int) -> ExportFile:
    """Read an export and check it: the trailer first (a file cut short or changed since its
    export is refused as a whole), then every core record (a source, then its items), so that a
    bad one is refused as ``file:line`` before the import writes anything. The areas' lines
    (``knowledge.*``, ``ranker_*``) are kept for the areas to check.

    Import holds what it reads until its one transaction commits, so a file of more than
    ``max_bytes`` (the setting ``max_import_bytes``) is refused before a line is read, and no
    more than that is read from a file that grows meanwhile."""
    path = Path(path)
    try:
        with open_regular(path) as fh:
            _check_file(fh, path, max_bytes)
            end = _check_trailer(path, _lines(fh, path, max_bytes))
            fh.seek(0)
            reader = _ExportReader(path, end)
            for lineno, raw in _lines(fh, path, max_bytes):
                if raw.strip():
                    reader.read(lineno, raw)
    except FileRefused as exc:
        raise _refused(path, exc) from None
    return reader.out


def check_export(path: str | Path, max_bytes: int) -> None:
    """The checks of an export that read none of its records: a regular file, no larger than
    ``max_bytes``, ending with a trailer of this format and version. Raises :class:`IngestFailed`.

    An import runs them before it opens its store, so that a file that is no export at all (a
    wrong name, a folder, a file cut short) is refused before a store that did not exist is
    created: removing one afterwards could remove the store of another process that opened the
    new path meanwhile."""
    path = Path(path)
    try:
        with open_regular(path) as fh:
            _check_file(fh, path, max_bytes)
    except FileRefused as exc:
        raise IngestFailed([_refused(path, exc)]) from None
    except IngestError as exc:
        raise IngestFailed([exc]) from None


def _refused(path: Path, exc: FileRefused) -> IngestError:
    return IngestError(path, f"{exc}{'; import reads one export file' if 'folder' in str(exc) else ''}")


def _check_file(fh: BinaryIO, path: Path, max_bytes: int) -> None:
    """The size cap and the trailer's kind, read from the file's end (see :func:`check_export`)."""
    size = os.fstat(fh.fileno()).st_size
    if size > max_bytes:
        raise IngestError(path, _too_large(f"is {size_text(size)}", max_bytes))
    fh.seek(max(0, size - _TAIL))
    _check_kind(path, fh.read(_TAIL).rstrip().rsplit(b"\n", 1)[-1], None)
    fh.seek(0)


def _lines(fh: BinaryIO, path: Path, max_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of the file, no more than ``max_bytes`` read in all (a line too)."""
    read, lineno = 0, 0
    while raw := fh.readline(max_bytes + 1 - read):
        read += len(raw)
        if read > max_bytes:
            raise IngestError(path, _too_large("grew past it while it was read", max_bytes))
        lineno += 1
        yield lineno, raw


def _too_large(what: str, max_bytes: int) -> str:
    return over_limit(what, "max_import_bytes", size_text(max_bytes), "what an import reads", "nothing was imported")


def _check_trailer(path: Path, lines: Iterable[tuple[int, bytes]]) -> int:
    """Refuse a file whose last line is not a trailer matching what precedes it; returns the
    trailer's line number."""
    digest = hashlib.sha256()
    counts = {"source": 0, "item": 0}
    records, last, last_line = 0, b"", 0
    for lineno, raw in lines:
        if not raw.strip():
            continue
        if last:
            digest.update(last)
            records += 1
            kind = _kind_of(last)
            if kind in counts:
                counts[kind] += 1
        last, last_line = raw, lineno
    trailer = _check_kind(path, last, last_line)
    expected = _trailer(records, counts["source"], counts["item"], digest.hexdigest())
    if trailer != expected:
        raise IngestError(path, f"the trailer does not match the records ({_difference(trailer, expected)}): the file was"
                          " changed or damaged after its export; nothing was imported", last_line)
    return last_line


def _check_kind(path: Path, last: bytes, line: int | None) -> dict[str, Any]:
    """The trailer that ``last``, a file's last line, must be; refuses anything else."""
    if not last.strip():
        raise IngestError(path, "is empty: not a Mnemoscope export")
    try:
        trailer = json.loads(last)
    except (ValueError, RecursionError):
        trailer = None
    if not isinstance(trailer, dict) or trailer.get("type") != TRAILER or trailer.get("format") != FORMAT:
        raise IngestError(path, "has no export trailer at its end: the export was cut short (interrupted?) or this is not"
                          " a Mnemoscope export; nothing was imported", line)
    if trailer.get("version") != FORMAT_VERSION:
        raise IngestError(path, f"export format version {trailer.get('version')!r} is not one this Mnemoscope reads", line)
    return trailer


def _kind_of(line: bytes) -> str:
    """The type of a record line, read cheaply (the full check comes later)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return ""
    return str(record.get("type", "")) if isinstance(record, dict) else ""


def _difference(found: dict[str, Any], expected: dict[str, Any]) -> str:
    name = next(k for k in expected if found.get(k) != expected[k])
    return "checksum" if name == "sha256" else f"{name}: the trailer says {found.get(name)!r}, the file holds {expected[name]!r}"


class _ExportReader:
    """The checks of :func:`read_export`, with what the lines read so far defined."""

    def __init__(self, path: Path, end: int) -> None:
        self.path = path
        self.end = end  # the trailer's line
        self.out = ExportFile()
        self.names: set[str] = set()
        self.keys: dict[int, set[str]] = {}  # exported source id → its items' keys
        self.items: set[int] = set()
        self.lineno = 0

    def fail(self, message: str) -> NoReturn:
        raise IngestError(self.path, f"not a Mnemoscope export record ({message})", self.lineno)

    def read(self, lineno: int, raw: bytes) -> None:
        self.lineno = lineno
        try:
            rec = read_json(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            self.fail(f"not UTF-8 text (byte {exc.start} of the line)")
        except json.JSONDecodeError as exc:
            self.fail(f"malformed JSON: {exc.msg}")
        except DuplicateKey as exc:
            self.fail(str(exc))
        except RecursionError:
            self.fail("JSON nested too deeply to read")
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            self.fail('expected an object with a string field "type"')
        if rec["type"] == TRAILER:
            if lineno != self.end:
                self.fail("a trailer before the end of the file (two exports joined?)")
            return  # checked before the records (_check_trailer)
        if rec["type"] not in _EXPORT_FIELDS:
            self.out.records.append((lineno, rec))
            return
        kind = rec.pop("type")
        self.check_fields(kind, rec)
        (self.source if kind == "source" else self.item)(rec.pop("id"), rec)

    def check_fields(self, kind: str, rec: dict[str, Any]) -> None:
        fields = _EXPORT_FIELDS[kind]
        for name in rec.keys() - fields.keys():
            self.fail(f"a {kind} has no field {name!r}")
        for name in _EXPORT_REQUIRED[kind]:
            if name not in rec:
                self.fail(f"a {kind} needs the field {name!r}")
        for name, value in rec.items():
            allowed = fields[name]
            if value is None and None in allowed:
                continue
            if isinstance(value, bool) or not isinstance(value, tuple(t for t in allowed if t)):
                wanted = " or ".join("null" if t is None else t.__name__ for t in allowed)
                self.fail(f"{kind} field {name!r} must be {wanted}, not {cut_repr(value)}")
            if isinstance(value, int) and not -2**63 <= value < 2**63:
                self.fail(f"{kind} field {name!r} is out of range ({cut_repr(value)})")
        if kind == "source":
            rec["meta"] = {k: v for k, v in rec.get("meta", {}).items() if k not in LOCAL_META}

    def source(self, old_id: int, rec: dict[str, Any]) -> None:
        if old_id in self.out.sources or rec["name"] in self.names:
            self.fail(f"source {old_id} ({rec['name']!r}) appears twice")
        self.names.add(rec["name"])
        self.keys[old_id] = set()
        self.out.item_ids[old_id] = []
        self.out.sources[old_id] = ParsedSource(Source(**rec), [])

    def item(self, old_id: int, rec: dict[str, Any]) -> None:
        source_id, key = rec.pop("source_id"), rec.get("key", "")
        if source_id not in self.out.sources:
            self.fail(f"item {old_id} belongs to source {source_id}, which no line before it defines")
        if old_id in self.items:
            self.fail(f"item {old_id} appears twice")
        if key in self.keys[source_id]:
            self.fail(f"two items of source {source_id} have the key {key!r}")
        self.items.add(old_id)
        self.keys[source_id].add(key)
        self.out.item_ids[source_id].append(old_id)
        self.out.sources[source_id].items.append(Item(**rec))


# -- salvage ----------------------------------------------------------------------------------


def salvage(store_path: str | Path, path: str | Path) -> Salvaged:
    """Write every source and item of a (damaged) store that can still be read as an export
    (:func:`engine.store.check.readable_records`); the store is only read. Knowledge and trust
    are not carried: import extracts the knowledge again."""
    salvaged = Salvaged()
    records = ({**r, "meta": {k: v for k, v in r["meta"].items() if k not in LOCAL_META}} if r["type"] == "source" else r
               for r in readable_records(store_path, salvaged))
    write_records(path, records)
    return salvaged
