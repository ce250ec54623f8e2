"""Ingest: pick files and folders, preview what the readers make of them, then commit."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, DirectoryTree, Input, RichLog, Static
from textual.widgets.tree import TreeNode

from mnemoscope.app.messages import SourceDone
from mnemoscope.app.widgets import ChoiceDialog, NoteDialog, TextBox
from mnemoscope.app.widgets.tables import PlainTable, set_columns
from mnemoscope.app.services import Cancelled, LLMStatus, Progress
from mnemoscope.screens.base import BaseScreen, typing_keys

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.ingest import FilesRead
    from mnemoscope.engine.records import ParsedSource, Stats

COUNTED = ("items", "episodes", "facts", "entities", "topics")


@dataclass(frozen=True)
class Ingested:
    """An ingest or a note stored: what it says, the counts before and after, and whether Esc stopped it."""

    summary: str
    before: Stats
    after: Stats
    cancelled: bool = False


class FileTree(DirectoryTree):
    """The folder being browsed, without hidden files and caches."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [p for p in paths if not p.name.startswith(".") and p.name != "__pycache__"]

    def render_label(self, node: TreeNode, base_style: Style, style: Style) -> Text:
        """The root (labelled with its folder's name, also by a reload) in bold, ending in ``/``."""
        label = super().render_label(node, base_style, style)
        if node is self.root:
            label.append("/")
            label.stylize("bold")
        return label


def source_row(parsed: ParsedSource) -> tuple[str, ...]:
    source, items = parsed.source, parsed.items
    meta = source.meta or {}
    speakers = ", ".join(meta.get("speakers", []) or sorted({i.speaker for i in items if i.speaker}))
    sessions = meta.get("sessions")
    if sessions is None and source.kind == "conversation":
        sessions = len({i.meta.get("session") for i in items if i.meta.get("session") is not None}) or None
    return (Path(source.name).name, source.kind, meta.get("format", ""), str(len(items)), speakers or "–",
            str(sessions) if sessions else "–")


class IngestScreen(BaseScreen):
    NAME = "ingest"
    TITLE = "Ingest"
    HELP = """\
### Ingest

Pick files or folders in the tree (or type a path: a letter that is no key below starts the
path box), **preview** what the readers make of them
(sources, kinds, formats, items; for conversations the speakers, sessions and turn count), then
**ingest**. Each source is stored in one transaction; files the readers cannot parse are listed
with their file and line and left out.

| key | does |
|---|---|
| `a` | add the highlighted file or folder to the selection (again: remove it) |
| `Enter` | on a file: the same; on a folder: open or close it |
| `p` | preview the selection (nothing is written) |
| `i` | ingest the selection (after a preview and a confirmation) |
| `n` | paste or type a note |
| `Backspace` | clear the selection |
| `l` | check the LLM endpoint again |
"""

    BINDINGS = [
        Binding("a", "toggle_path", "Add", id="ingest-select"),
        Binding("p", "preview", "Preview", id="ingest-preview"),
        Binding("i", "ingest", "Ingest", id="ingest-run"),
        Binding("n", "note", "Note", id="ingest-note"),
        Binding("backspace", "clear_selection", "Clear", id="ingest-clear"),
        Binding("l", "check_llm", "LLM check", id="ingest-llm", show=False),
    ]
    BINDINGS += typing_keys("ingest", BINDINGS)
    TYPE_INTO = "#ingest-path"

    def __init__(self) -> None:
        super().__init__()
        self.selection: list[Path] = []
        self.parsed: list[ParsedSource] | None = None
        self.errors: list[str] = []
        self.skipped: list[str] = []
        self.ingest_after_preview = False
        self.shown_before = False

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="ingest-main", classes="split"):
            with Vertical(id="ingest-pick"):
                yield TextBox(placeholder="File or folder path (Enter adds it)", id="ingest-path", compact=True)
                yield FileTree(self.app.browse_root, id="ingest-tree")
            with Vertical(id="ingest-side"):
                yield Static("", id="ingest-selection")
                yield PlainTable(id="ingest-preview", cursor_type="row")
                # min_width: RichLog renders at least 78 cells wide, cutting lines in a narrower pane
                yield RichLog(id="ingest-log", wrap=True, markup=False, auto_scroll=True, min_width=20)
                yield Static("LLM: checking…", id="llm-status")

    def on_mount(self) -> None:
        tree = self.query_one(FileTree)
        tree.root.set_label(self.app.browse_root.name)
        self.show_selection()
        self.action_check_llm()
        tree.focus()

    def fit_columns(self) -> None:
        set_columns(self.query_one("#ingest-preview", DataTable),
                    (("source", "source", None), ("kind", "kind", 12), ("format", "format", 8), ("items", "items", 5),
                     ("speakers", "speakers", 14), ("sessions", "sessions", 8)), self.pane_width(2 / 3, border=1))

    def redraw(self) -> None:
        self.fill_preview()

    @on(events.ScreenResume)
    def _reread_folders(self) -> None:
        """Files made or removed since the tree was read show when the screen is shown again."""
        if self.shown_before:
            self.query_one(FileTree).reload()  # keeps the open folders and the highlighted file
        self.shown_before = True

    # -- the selection ------------------------------------------------------------------------

    def show_selection(self) -> None:
        box = self.query_one("#ingest-selection", Static)
        if not self.selection:
            box.update(Text("Nothing selected: a adds the highlighted file or folder; p previews, i ingests.",
                            style="dim"))
            return
        names = ", ".join(p.name + ("/" if p.is_dir() else "") for p in self.selection)
        box.update(Text.assemble(("Selected ", "bold"), f"({len(self.selection)}): {names}"))

    def toggle(self, path: Path) -> None:
        path = path.resolve()
        if path in self.selection:
            self.selection.remove(path)
        else:
            self.selection.append(path)
        self.parsed = None
        self.show_selection()

    def action_toggle_path(self) -> None:
        node = self.query_one(FileTree).cursor_node
        if node is not None and node.data is not None:
            self.toggle(Path(node.data.path))

    @on(DirectoryTree.FileSelected)
    def file_chosen(self, event: DirectoryTree.FileSelected) -> None:
        self.toggle(Path(event.path))

    @on(Input.Submitted, "#ingest-path")
    def path_typed(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip()).expanduser()
        if not event.value.strip():
            return
        if not path.exists():
            self.notify(f"{path}: no such file or folder", severity="error", markup=False)
            return
        self.toggle(path)
        event.input.value = ""

    def action_clear_selection(self) -> None:
        self.selection, self.parsed = [], None
        self.query_one("#ingest-preview", DataTable).clear()
        self.show_selection()

    # -- preview ------------------------------------------------------------------------------

    def action_preview(self) -> None:
        if not self.selection:
            self.ingest_after_preview = False  # an ingest asked for with nothing selected is not pending
            self.notify("Select a file or folder first (a adds the highlighted one).", severity="warning")
            return
        paths = list(self.selection)
        self.run_task("parse", "Reading files", lambda: self.services.parse(paths), progress=False,
                      done=partial(self.preview_ready, paths), failed=self.unreadable)

    def fill_preview(self) -> None:
        table = self.query_one("#ingest-preview", DataTable)
        table.clear()
        for n, p in enumerate(self.parsed or []):
            table.add_row(*source_row(p), key=str(n))

    def unreadable(self, error: str) -> None:
        self.ingest_after_preview = False
        self.log_line(f"✗ {error}", "red")
        self.notify(error, title="Cannot read", severity="error", markup=False)

    def preview_ready(self, paths: list[str], read: FilesRead) -> None:
        parsed, skipped, errors, links = read
        if paths != self.selection:  # changed while the files were read: this preview is not of it
            self.ingest_after_preview = False
            self.notify("The selection changed while its files were read: p previews it, i ingests it.",
                        severity="warning")
            return
        self.parsed, self.skipped, self.errors = parsed, [str(p) for p in skipped], [str(e) for e in errors]
        self.fill_preview()
        items = sum(len(p.items) for p in parsed)
        self.log_line(f"Preview: {len(parsed)} source(s), {items:,} item(s); "
                      f"{len(self.skipped)} skipped, {len(self.errors)} error(s)"
                      f"{f', {len(links)} link(s) not followed' if links else ''}. Nothing written yet.")
        for e in self.errors:
            self.log_line(f"  ✗ {e}", "red")
        for s in self.skipped:
            self.log_line(f"  – skipped (unsupported type): {s}", "yellow")
        for link in links:
            self.log_line(f"  – not followed (a link in a folder): {link}", "yellow")
        if self.ingest_after_preview:
            self.ingest_after_preview = False
            self.confirm_ingest()

    # -- ingest -------------------------------------------------------------------------------

    def action_ingest(self) -> None:
        if self.parsed is None:
            self.ingest_after_preview = True
            self.action_preview()
            return
        self.confirm_ingest()

    def confirm_ingest(self) -> None:
        parsed = self.parsed or []
        if not parsed:
            self.notify("Nothing readable in the selection.", severity="warning")
            return
        items = sum(len(p.items) for p in parsed)
        body = f"Ingest {len(parsed)} source(s) with {items:,} item(s) into {self.services.label}?"
        if self.errors:
            body += f"\n\n{len(self.errors)} file(s) could not be read and will be left out:\n" + "\n".join(
                f"• {e}" for e in self.errors[:8])
        self.app.push_screen(ChoiceDialog("Ingest", body, [("ingest", "Ingest"), ("cancel", "Cancel")]),
                             lambda choice: self.start_ingest(parsed) if choice == "ingest" else None)

    def start_ingest(self, parsed: list[ParsedSource]) -> None:
        services = self.services

        def job(progress: Progress, cancelled: Cancelled) -> Ingested:
            mem = services.memory
            before = mem.stats()

            def each(done: int, total: int, what: str) -> None:
                progress(done, total, Path(what).name)
                self.post_message(SourceDone(what, done, total))

            report = mem.ingest_parsed(parsed, progress=each, cancelled=cancelled)
            return Ingested(report.summary(), before, mem.stats(), cancelled())

        self.log_line(f"Ingesting {len(parsed)} source(s)…")
        self.run_task("ingest", "Ingesting", job, done=partial(self.ingested, "Ingest"), failed=self.ingest_failed,
                      keep_cancelled=True)

    def on_source_done(self, message: SourceDone) -> None:
        self.log_line(f"  ✓ {Path(message.name).name}  ({message.done:,}/{message.total:,} items)")

    def ingest_failed(self, error: str) -> None:
        self.log_line(f"✗ {error}", "red")
        self.notify(error, title="Ingest failed", severity="error", markup=False)

    def ingested(self, title: str, result: Ingested) -> None:
        """An ingest or a note is stored (an ingest stopped with Esc: what it stored until then)."""
        before, after = result.before.totals(), result.after.totals()
        touched = ", ".join(f"{after[k] - before.get(k, 0):+,} {k}" for k in COUNTED
                            if k in after and after[k] != before.get(k, 0))
        summary = ("Cancelled after " if result.cancelled else "") + result.summary
        self.log_line(summary, "green" if not self.errors else "yellow")
        if touched:
            self.log_line(f"  store: {touched}")
        for e in self.errors:
            self.log_line(f"  ✗ {e}", "red")
        self.notify(summary, title=title, severity="warning" if self.errors or result.cancelled else "information",
                    markup=False)
        if title == "Ingest":
            self.parsed = None
        self.app.store_changed(result.after)

    def log_line(self, text: str, style: str = "") -> None:
        self.query_one("#ingest-log", RichLog).write(Text(text, style=style))

    # -- notes --------------------------------------------------------------------------------

    def action_note(self) -> None:
        def save(result: tuple[str, str] | None) -> None:
            if result is None:
                return
            title, text = result
            services = self.services

            def job() -> Ingested:
                mem = services.memory
                before = mem.stats()
                item = mem.add_note(text, title=title)
                return Ingested(f"Note stored as item {item.id}.", before, mem.stats())

            self.run_task("note", "Saving note", job, progress=False, done=partial(self.ingested, "Note saved"),
                          failed=self.ingest_failed)

        self.app.push_screen(NoteDialog(), save)

    # -- LLM endpoint -------------------------------------------------------------------------

    def action_check_llm(self) -> None:
        self.run_task("llm", "Checking the LLM endpoint", self.services.llm_status, progress=False, show=False,
                      replace=True, done=self.llm_checked,
                      failed=lambda error: self.query_one("#llm-status", Static).update(
                          Text(f"LLM: check failed ({error})", style="red")))

    def llm_checked(self, status: LLMStatus) -> None:
        line = self.query_one("#llm-status", Static)
        if not status.configured:
            line.update(Text(f"LLM: {status.detail}", style="dim"))
        else:
            line.update(Text(f"LLM: {status.detail}", style="green" if status.reachable else "bold red"))


SCREEN = IngestScreen
