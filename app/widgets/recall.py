"""A recall on screen: the choices a query is asked with, and the table of its hits (the Query
screen's, and each side of Compare)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from rich.text import Text

from .tables import PlainTable, set_columns
from ..snippets import query_terms, snippet, term_weights
from .text import highlight, item_text

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.pipeline import Hit, Recall

INTENTS = ["auto", "deepen", "broaden", "compare", "apply", "clarify", "neutral"]
MODES = ["lite", "pro", "max"]

SOURCE_WIDTH = 16  # the source column, where the table has room for it
SIGNAL_CODES = {"bm25": "B", "dense": "D", "walk": "W", "ppr": "P", "answer": "A", "neighbour": "N",
                "episode": "E", "change": "C", "value": "V", "successor": "S", "claim": "L",
                "feedback": "F"}  # each explained in the Query screen's help


def signal_codes(sources: list[str]) -> str:
    """The signals that found a hit, one letter each (the Why panel names them in full)."""
    return "".join(SIGNAL_CODES.get(s, s[:1].upper()) for s in sources)


def hit_source_label(hit: "Hit", source_names: dict[int, str], width: int = 22) -> str:
    """Where a hit comes from, short: ``D3:12 Maya`` for a turn with a dialogue id, the
    conversation and the speaker for a turn numbered by its place in a chat (``trip Maya``: an
    agent's conversations are told apart by name, not by "0 User"), the file's stem for a chunk."""
    item = hit.item
    if item.kind == "note":
        label = "note " + (item.title or str(item.id))
    elif item.kind == "turn" and item.key and not item.key.isdigit():
        label = f"{item.key} {item.speaker or ''}".strip()
    else:
        name = source_names.get(item.source_id, "?")
        label = Path(name.split("#")[0]).stem
        if item.kind == "turn" and item.speaker:
            room = max(width - len(item.speaker) - 1, 4)
            label = f"{label if len(label) <= room else label[: room - 1] + '…'} {item.speaker}"
    return label if len(label) <= width else label[: width - 1] + "…"


class HitsTable(PlainTable):
    """A recall's hits, best first, one row each: the rank, a mark the screen chooses (✓ used,
    ◆ found by both sides), with ``details`` the score and the signals that found the hit, then
    where it comes from and a snippet with the query's words highlighted."""

    def __init__(self, *, mark: str, mark_width: int, rank_width: int, details: bool, id: str) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.mark_label, self.mark_width, self.rank_width, self.details = mark, mark_width, rank_width, details
        self.source_width = SOURCE_WIDTH
        self.snippet_width = 0

    def fit(self, width: int, source_width: int = SOURCE_WIDTH) -> None:
        """Columns for a table ``width`` cells wide (the snippet takes what the others leave)."""
        self.source_width = source_width
        columns: list[tuple[str, str, int | None]] = [("#", "rank", self.rank_width),
                                                      (self.mark_label, "mark", self.mark_width)]
        if self.details:
            columns += [("score", "score", 7), ("found", "signals", 5)]
        columns += [("source", "source", source_width), ("snippet", "snippet", None)]
        self.snippet_width = set_columns(self, columns, width)

    def show(self, recall: "Recall", source_names: dict[int, str], mark: Callable[["Hit"], str]) -> None:
        """The recall's hits as rows, each keyed by its item's id."""
        terms = query_terms(recall.query)
        texts = {hit.item.id: item_text(hit.item).plain for hit in recall.hits}  # a document's without its marks
        weights = term_weights(list(texts.values()), terms)
        self.clear()
        for hit in recall.hits:
            cells: list[str | Text] = [str(hit.rank), mark(hit)]
            if self.details:
                cells += [f"{hit.score:.4f}", signal_codes(hit.sources)]
            cells += [hit_source_label(hit, source_names, self.source_width),
                      highlight(snippet(texts[hit.item.id], terms, self.snippet_width, weights), terms)]
            self.add_row(*cells, key=str(hit.item.id))

    def set_mark(self, hit: "Hit", mark: str) -> None:
        self.update_cell(str(hit.item.id), "mark", mark)
