"""Helpers shared by the app tests: the app as tests drive it, waiting for it, reading the screen."""

from __future__ import annotations

import asyncio
import html
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from textual.screen import ModalScreen

from mnemoscope.app.services import Services
from mnemoscope.app.tui import MnemoscopeApp
from mnemoscope.screens.base import FittedScreen
from mnemoscope.screens.facts import FactsScreen
from tests.support.stores import DEMO_DIR

__all__ = ["DEMO_DIR", "SIZE", "Notice", "PilotApp", "ask", "build_app", "empty_store", "hold_each_source", "note_folder",
           "screen_lines", "screenshot", "settle", "text_of", "until"]

SIZE = (100, 32)


@dataclass(frozen=True)
class Notice:
    """A notification the app showed."""

    message: str
    title: str
    severity: str


class PilotApp(MnemoscopeApp):
    """The app as the tests drive it: it keeps every notification it showed, in ``notices``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.notices: list[Notice] = []

    def notify(self, message: str, *, title: str = "", severity: str = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        self.notices.append(Notice(str(message), title, severity))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def titled(self, title: str) -> list[Notice]:
        return [n for n in self.notices if n.title == title]


def build_app(store: Path | Services, app_class: type[PilotApp] = PilotApp, **options) -> PilotApp:
    """The app on ``store`` as the tests see it: deterministic labels, no animation, no timings.
    Pass ``Services`` to choose its label (the store's file name otherwise), ``app_class`` for a
    PilotApp that keeps more."""
    services = store if isinstance(store, Services) else Services(store, label=store.name)
    defaults = dict(offer_demo=False, browse_root=DEMO_DIR, animate=False, show_timings=False)
    defaults.update(options)
    return app_class(services, **defaults)


def empty_store(path: Path) -> Path:
    """A new empty store at ``path``: the app asks before making one where none is."""
    from mnemoscope.engine import Memory

    Memory(path).close()
    return path


async def settle(pilot, timeout: float = 120.0) -> None:
    """Wait until the app's tasks are done and their results shown.

    Not ``workers.wait_for_complete()``: the directory tree keeps a loader worker alive forever;
    but the app's own workers (the tasks, the engine's warm-up, a refresh of the counts) are waited
    for: a key pressed while one computes makes Pilot wait for the process to go idle, up to a
    second per key.
    A result may start the next task (a topic's children, then its detail), directly or after
    the next repaint: so the app must be seen without a task twice in a row, then again after
    the pending messages were handled and the screen repainted. The polling sleeps (no
    ``pilot.pause``, which repaints the screen each time: most of an app test's time).
    """
    app = pilot.app
    deadline = time.monotonic() + timeout

    def busy() -> bool:
        opening = not app.store_generation and not isinstance(app.screen, ModalScreen)  # opens after the first paint
        if time.monotonic() > deadline:
            raise TimeoutError(f"tasks still running: {list(app.tasks)}")
        # After a resize a screen fits its tables once the size has rested (a timer): until then
        # its columns are still the old width's.
        refitting = isinstance(app.screen, FittedScreen) and app.screen.refit_pending
        filtering = isinstance(app.screen, FactsScreen) and app.screen.filter_pending  # typing not paused yet
        return (bool(app.tasks) or opening or refitting or filtering
                or any(not w.is_finished for w in app.workers if w.node is app))

    while True:
        quiet = 0
        while quiet < 2:
            await asyncio.sleep(0.01)
            quiet = 0 if busy() else quiet + 1
        await pilot.wait_for_scheduled_animations()  # the pending messages handled, the screen repainted
        await pilot.pause()  # and what that repaint set off (a cursor moved once the lines exist)
        if not busy():
            return


async def until(pilot, condition, what: str, timeout: float = 120.0) -> None:
    """Wait until ``condition()`` holds (the app running meanwhile), then until what it set off is
    on screen; fail naming ``what`` after ``timeout`` seconds. For what no task reports: a timer's
    step, a worker of a library widget, a notification. The timeout is only a bound: a test never
    passes or fails by how long it waited."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:.0f} s for {what}"
        await asyncio.sleep(0.02)
    await pilot.pause()


async def ask(pilot, text: str, strategy: str | None = None) -> None:
    """Run a query from the query box (``strategy``: pick one first, else the screen's choice)."""
    from textual.widgets import Select

    screen = pilot.app.screen
    if strategy is not None:
        screen.query_one("#query-strategy", Select).value = strategy
    box = screen.query_one("#query-input")
    box.value = text
    box.focus()
    await pilot.press("enter")
    await settle(pilot)


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


_SVG_TEXT = re.compile(r'<text [^>]*?x="([\d.]+)"[^>]*?clip-path="url\(#[\w-]+?-line-(\d+)\)">([^<]*)</text>')
_CELL_WIDTH = 12.2  # the width of one cell in Rich's SVG export (0.61 × its 20 px font)


def screen_lines(app) -> list[str]:
    """The screen as a person sees it, one string per terminal row (read from the app's SVG
    screenshot: the public way to what the terminal shows, dialogs and clipping included)."""
    width, height = app.size
    rows = [[" "] * width for _ in range(height)]
    for x, line, text in _SVG_TEXT.findall(app.export_screenshot()):
        row, col = rows[int(line)], round(float(x) / _CELL_WIDTH)
        for n, char in enumerate(html.unescape(text).replace("\xa0", " ")):
            if col + n < width:
                row[col + n] = char
    return ["".join(row) for row in rows]


async def screenshot(pilot) -> str:
    """The screen as an SVG, taken after the same waits as pytest-textual-snapshot's
    ``snap_compare`` (so that a snapshot taken mid-session matches one taken at an app's end)."""
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    return pilot.app.export_screenshot(title=pilot.app.title, simplify=True)


def hold_each_source(mem, event: threading.Event) -> None:
    """Make ``mem``'s ingest wait on ``event`` after each source (at most a minute: a bound, not a pause)."""
    original = mem.ingest_parsed

    def slow_ingest(parsed, progress=None, cancelled=None):
        def each(done, total, what):
            progress(done, total, what)
            event.wait(60)

        return original(parsed, progress=each, cancelled=cancelled)

    mem.ingest_parsed = slow_ingest


def note_folder(tmp_path: Path, n: int, words: str) -> Path:
    """A folder of ``n`` small Markdown notes: a multi-source ingest that takes a while."""
    folder = tmp_path / "many"
    folder.mkdir()
    for k in range(n):
        (folder / f"note{k:02}.md").write_text(f"# Note {k}\n\n{words}, number {k}.\n")
    return folder
