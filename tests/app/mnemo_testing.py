"""Helpers shared by the app tests (imported as a top-level module: tests/app is on sys.path)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from mnemoscope.app.services import Services
from mnemoscope.app.tui import MnemoscopeApp, make_app

DEMO_DIR = Path(__file__).parents[2] / "assets" / "demo"
SIZE = (100, 32)


def build_app(store: Path, **options) -> MnemoscopeApp:
    """The app on ``store`` as the tests see it: deterministic labels, no animation, no timings."""
    defaults = dict(offer_demo=False, browse_root=DEMO_DIR, animate=False, show_timings=False)
    defaults.update(options)
    return make_app(Services(store, label=store.name), **defaults)


async def settle(pilot, timeout: float = 30.0) -> None:
    """Wait until the app's tasks are done and their results shown.

    Not ``workers.wait_for_complete()``: the directory tree keeps a loader worker alive forever.
    """
    app = pilot.app
    deadline = time.monotonic() + timeout
    quiet = 0
    from textual.screen import ModalScreen

    while quiet < 4:
        await pilot.pause(0.03)
        opening = not app.store_generation and not isinstance(app.screen, ModalScreen)  # the store opens after the first paint
        quiet = 0 if app.tasks or opening else quiet + 1
        if time.monotonic() > deadline:
            raise TimeoutError(f"tasks still running: {list(app.tasks)}")
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    # A DataTable sizes its columns when it next goes idle: wait for that, or snapshots race it.
    from textual.widgets import DataTable

    for _ in range(200):
        if not any(t._require_update_dimensions for s in app.screen_stack for t in s.query(DataTable)):
            break
        await pilot.pause(0.02)
    await pilot.pause(0.05)  # and for the repaint with the new column widths
    await pilot.pause()


def text_of(widget) -> str:
    """The plain text a Static shows, whatever it was given (str, Text, a Rich renderable)."""
    import io

    from rich.console import Console

    content = getattr(widget, "content", None)
    if not content:
        content = widget.render()
        if isinstance(content, str):
            from textual.content import Content

            return Content.from_markup(content).plain
    if isinstance(content, str):
        return content
    if hasattr(content, "plain"):
        return content.plain
    console = Console(width=200, file=io.StringIO(), color_system=None)
    with console.capture() as capture:
        console.print(content)
    return capture.get()


def hold_each_source(mem, event: threading.Event) -> None:
    """Make ``mem``'s ingest wait on ``event`` after each source (at most 5 s)."""
    original = mem.ingest_parsed

    def slow_ingest(parsed, progress=None, cancelled=None):
        def each(done, total, what):
            progress(done, total, what)
            event.wait(5)

        return original(parsed, progress=each, cancelled=cancelled)

    mem.ingest_parsed = slow_ingest


def note_folder(tmp_path: Path, n: int, words: str) -> Path:
    """A folder of ``n`` small Markdown notes: a multi-source ingest that takes a while."""
    folder = tmp_path / "many"
    folder.mkdir()
    for k in range(n):
        (folder / f"note{k:02}.md").write_text(f"# Note {k}\n\n{words}, number {k}.\n")
    return folder
