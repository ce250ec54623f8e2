"""Export and import: a store's records as JSON lines, and back again, all or nothing.

:func:`export` writes every source, then its items, then each area's records
(``export_records``: the knowledge snapshot, the ranker's trust); :func:`import_` reads such a
file (:func:`read_export` checks every core record first, naming ``file:line``) and stores all of
it or none of it.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, NoReturn, Protocol, Sequence

from .errors import IngestFailed
from .ingest import IngestError, _short
from .records import IngestReport, Item, ParsedSource, Source

if TYPE_CHECKING:
    from .area import Area
    from .config import Settings
    from .dense import OpenAIEmbedder
    from .store import Store


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
    """Write every record as JSON lines (sources, then their items); returns the line count."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for source in mem.store.sources():
            fh.write(json.dumps({"type": "source", **asdict(source)}, ensure_ascii=False) + "\n")
            n += 1
            for item in mem.store.items_of_source(source.id):
                fh.write(json.dumps({"type": "item", **asdict(item)}, ensure_ascii=False) + "\n")
                n += 1
        for area in mem.areas:
            for record in area.export_records():
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                n += 1
    return n


# -- import -----------------------------------------------------------------------------------


def import_(mem: Transferring, path: str | Path) -> IngestReport:
    """Read an export and store all of it or none of it; sources already present with the
    same content are left alone. The caller holds the memory's write lock (``Memory.import_``).

    Every core record is checked first (:func:`read_export`), then each area with an
    ``importing(path, records, by_name)`` context manager checks its own records and may
    restore its state as each source is ingested (the knowledge snapshot does), and
    ``import_records`` runs after the sources. All of that is one transaction: a crash, an
    interrupt or a failure halfway leaves the store as it was, and the in-memory index and
    areas, which followed the sources as they went in, are reloaded from it."""
    try:
        exported = read_export(path)
    except IngestError as exc:
        raise IngestFailed([exc]) from None
    mem.refresh()
    areas = mem.areas  # every area loaded before the transaction opens
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
                for area in areas:
                    area.import_records([r for _, r in exported.records], id_map)
                mem.activity.record("store.imported", Path(path).name, count=report.items)
        except BaseException:
            mem.reload()  # forget what the rolled-back transaction had put in memory
            raise
    return report


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


def read_export(path: str | Path) -> ExportFile:
    """Read an export line by line and check every core record (a source, then its items), so
    that a bad one is refused as ``file:line`` before the import writes anything. The areas'
    lines (``knowledge.*``, ``ranker_*``) are kept for the areas to check."""
    path = Path(path)
    if path.is_dir():
        raise IngestError(path, "is a folder; import reads one export file (mnemoscope export writes one)")
    if not path.is_file():
        raise IngestError(path, "no such file")
    reader = _ExportReader(path)
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    reader.read(lineno, line)
    except UnicodeDecodeError as exc:
        raise IngestError(path, f"not UTF-8 text (byte {exc.start} of a line)") from None
    if not reader.lineno:
        raise IngestError(path, "is empty: not a Mnemoscope export")
    return reader.out


class _ExportReader:
    """The checks of :func:`read_export`, with what the lines read so far defined."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.out = ExportFile()
        self.names: set[str] = set()
        self.keys: dict[int, set[str]] = {}  # exported source id → its items' keys
        self.items: set[int] = set()
        self.lineno = 0

    def fail(self, message: str) -> NoReturn:
        raise IngestError(self.path, f"not a Mnemoscope export record ({message})", self.lineno)

    def read(self, lineno: int, line: str) -> None:
        self.lineno = lineno
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            self.fail(f"malformed JSON: {exc.msg}")
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            self.fail('expected an object with a string field "type"')
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
                self.fail(f"{kind} field {name!r} must be {wanted}, not {_short(value)}")

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
