"""The Mnemoscope terminal app: one App, a screen per area, every slow task in a worker."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message_pump import MessagePump
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from .commands import Command, MnemoscopeCommands
from .messages import StoreOpened, TaskEnded, TaskFinished, TaskProgress
from .services import Services, describe_error
from .widgets import ChoiceDialog, HelpScreen, PromptDialog
from .widgets.chrome import SCREENS

log = logging.getLogger(__name__)

UNTIED_TASKS = ("llm",)  # tasks that do not use the open store: another may be opened meanwhile


@dataclass
class TaskState:
    title: str
    worker: Worker | None = None
    done: int = 0
    total: int = 0
    what: str = ""
    show: bool = True


def _screen(mode: str) -> Callable[[], Screen]:
    """Import a screen module only when its mode is first shown (keeps cold start short)."""

    def build() -> Screen:
        import importlib

        module = importlib.import_module(f"mnemoscope.screens.{mode}")
        return module.SCREEN()

    return build


class MnemoscopeApp(App[None]):
    """Explore, curate and teach a memory store."""

    CSS_PATH = Path(__file__).resolve().parents[1] / "assets" / "app.tcss"  # absolute: a subclass may live anywhere
    TITLE = "Mnemoscope"
    COMMANDS = App.COMMANDS | {MnemoscopeCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # screens.base.WIDE
    MODES = {mode: _screen(mode) for mode, _key, _title in SCREENS}
    BINDINGS = [
        *[Binding(key, f"goto('{mode}')", title, id=f"goto-{mode}", show=False) for mode, key, title in SCREENS],
        Binding("slash", "focus_query", "Query box", id="focus-query", show=False),
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("ctrl+o", "open_store", "Open store", id="open-store", show=False),
        Binding("escape", "cancel_task", "Cancel task", id="cancel-task", show=False),
        Binding("f12", "screenshot", "Screenshot", id="screenshot", show=False),
    ]

    store_label: reactive[str] = reactive("opening…")
    store_stats: reactive[dict] = reactive(dict, always_update=True)
    store_generation: reactive[int] = reactive(0)
    task_tick: reactive[int] = reactive(0)
    busy: reactive[str] = reactive("")

    def __init__(self, services: Services, *, start_mode: str | None = None, offer_demo: bool = True,
                 browse_root: str | Path | None = None, animate: bool = True,
                 show_timings: bool = True) -> None:
        # the first screen is the start mode itself: switching to it from Textual's blank default
        # screen would parse the whole stylesheet twice more (~0.1 s of a cold start)
        self.DEFAULT_MODE = start_mode or "query"
        super().__init__()
        self.services = services
        self.offer_demo = offer_demo
        self.browse_root = Path(browse_root) if browse_root else Path.cwd()
        self.animate_trace = animate
        self.show_timings = show_timings
        self.tasks: dict[str, TaskState] = {}
        self.started = time.perf_counter()
        self.ready_seconds: float | None = None
        self.open_seconds: float | None = None  # engine import + Memory(path), in the worker

    # -- start-up -----------------------------------------------------------------------------

    FOLLOW_INTERVAL = 0.25  # seconds between two looks at whether another process committed

    def on_mount(self) -> None:
        # open the store once the first screen is painted: importing the engine competes for the GIL
        self.call_after_refresh(self.open_store, None)
        self.set_interval(self.FOLLOW_INTERVAL, self._look_for_changes, name="follow")

    def open_store(self, path: str | Path | None) -> None:
        running = [state.title for task, state in self.tasks.items() if task not in UNTIED_TASKS]
        if running:  # opening closes the store they work on
            self.notify(f"{running[-1]} is still running: wait for it (or press Esc to cancel it), then open "
                        "the store.", title="Open store", severity="warning", markup=False)
            return

        def open_and_fill(progress, cancelled) -> dict[str, Any]:
            started = time.perf_counter()
            mem = self.services.open(path)
            self.open_seconds = time.perf_counter() - started
            loaded = None
            if path is None and self.services.demo and not mem.counts().get("items"):
                loaded = self.services.load_demo(progress=progress, cancelled=cancelled)
            return {"stats": self.services.counts(), "demo": loaded}

        self.run_task(self, "store", "Opening store", open_and_fill)

    @on(TaskFinished)
    def _store_task_finished(self, message: TaskFinished) -> None:
        if message.task not in ("store", "demo"):
            return
        if message.error:
            self.store_label = self.services.label
            if message.task == "store":
                self.store_failed(message.error)
            else:
                self.notify(message.error, title="Demo content", severity="error", markup=False)
            return
        self.store_label = self.services.label
        self.store_changed(message.result["stats"])
        if message.task == "store":
            self.ready_seconds = time.perf_counter() - self.started
            self.call_after_refresh(self._warm_up)  # after the counts are painted
            empty = not message.result["stats"].get("items")
            self.post_message(StoreOpened(self.store_label, empty))
            if empty and self.offer_demo:
                self.offer_demo_content()
        elif message.result.get("report") is not None:
            self.notify(message.result["report"].summary(), title="Demo content loaded", markup=False)

    def store_failed(self, error: str) -> None:
        def chosen(choice: str | None) -> None:
            if choice == "open":
                self.action_open_store()
            elif choice == "temp":
                self.run_task(self, "store", "Opening a temporary store",
                              lambda progress, cancelled: (self.services.open_temporary(),
                                                           {"stats": self.services.stats(), "demo": None})[1])
            elif choice == "quit":
                self.exit()

        choices = [("open", "Open another…"), ("temp", "Use a temporary store"), ("quit", "Quit")]
        if self.services.mem is not None:  # opening another store failed: the one open stays open
            error += f"\n\n{self.services.label} is still open."
            choices = [("keep", f"Keep {self.services.label}"), ("open", "Open another…")]
        self.push_screen(ChoiceDialog("The store cannot be opened", error, choices), chosen)

    def offer_demo_content(self) -> None:
        body = ("This store is empty. Load the demo content: four short guides (sourdough, transformers, "
                "retrieval-augmented generation, alpine hiking) and a conversation between two friends "
                "over eight sessions?\n\nYou can also ingest your own files on the Ingest screen (key 1).")
        self.push_screen(ChoiceDialog("An empty store", body, [("load", "Load demo content"), ("no", "Not now")]),
                         lambda choice: self.load_demo() if choice == "load" else None)

    def load_demo(self) -> None:
        def job(progress, cancelled) -> dict[str, Any]:
            report = self.services.load_demo(progress=progress, cancelled=cancelled)
            return {"stats": self.services.stats(), "report": report}

        self.run_task(self, "demo", "Loading demo content", job)

    # -- the store changed --------------------------------------------------------------------

    def store_changed(self, stats: dict | None = None) -> None:
        """After any write: new counts in the header, and screens refresh what they show."""
        if stats is None:
            self._follow()  # what another process committed while this app wrote, too
            self._refresh_stats()
            return
        self.store_stats = stats
        self.store_generation += 1

    def _look_for_changes(self) -> None:
        """Another process (the CLI, an agent through MCP, a script) may have committed: if so, take
        it in behind the screen, and refresh what the screens show."""
        if self.services.changed_elsewhere():
            self._follow()

    @work(thread=True, exclusive=True, group="follow", exit_on_error=False)
    def _follow(self) -> None:
        stats = self.services.follow()
        if stats is not None:
            self.call_from_thread(self.store_changed, stats)
            self.services.warm_up()  # the matrices the change dropped, built here, not by the next query

    @work(thread=True, exclusive=True, group="warm-up", exit_on_error=False)
    def _warm_up(self) -> None:
        """Load the engine's areas behind the usable screen; a query sent meanwhile waits for them."""
        self.services.warm_up()

    @work(thread=True, exclusive=True, group="stats", exit_on_error=False)
    def _refresh_stats(self) -> None:
        stats = self.services.stats()
        self.call_from_thread(self.store_changed, stats)

    # -- tasks --------------------------------------------------------------------------------

    def run_task(self, owner: MessagePump, task: str, title: str, fn: Callable[..., Any], *,
                 progress: bool = True, replace: bool = False, show: bool = True) -> Worker | None:
        """Run ``fn(progress=, cancelled=)`` (or ``fn()``) in a thread; post ``TaskFinished`` to ``owner``
        (it bubbles up to the app).

        A task of the same name already running is cancelled when ``replace`` (a new query
        supersedes the old one); otherwise the new one is refused with a notice.
        """
        running = self.tasks.get(task)
        if running is not None and not replace:
            self.notify(f"{running.title} is still running; wait or press Esc to cancel it.", severity="warning")
            return None
        state = TaskState(title, show=show)
        self.tasks[task] = state

        def job() -> None:
            worker = get_current_worker()

            def report(done: int, total: int, what: str = "") -> None:
                self.post_message(TaskProgress(task, done, total, what))

            try:
                result = fn(progress=report, cancelled=lambda: worker.is_cancelled) if progress else fn()
            except Exception as exc:  # every failure becomes one line for the person, never a traceback
                log.debug("task %s failed", task, exc_info=True)
                finished = dict(error=describe_error(exc))
            else:
                finished = dict(result=result)
            owner.post_message(TaskFinished(task, cancelled=worker.is_cancelled, **finished))
            self.post_message(TaskEnded(task, worker))

        state.worker = self.run_worker(job, name=task, group=task, description=title, thread=True,
                                       exclusive=replace, exit_on_error=False)
        self._show_tasks()
        return state.worker

    def on_task_ended(self, message: TaskEnded) -> None:
        task, worker = message.task, message.worker
        state = self.tasks.get(task)
        if state is not None and state.worker is worker:
            del self.tasks[task]
            self._show_tasks()

    def on_task_progress(self, message: TaskProgress) -> None:
        state = self.tasks.get(message.task)
        if state is not None:
            state.done, state.total, state.what = message.done, message.total, message.what
            self._show_tasks()

    def _show_tasks(self) -> None:
        shown = [s for s in self.tasks.values() if s.show]
        self.busy = shown[-1].title if shown else ""
        self.task_tick += 1

    @property
    def visible_tasks(self) -> dict[str, TaskState]:
        return {k: s for k, s in self.tasks.items() if s.show}

    def action_cancel_task(self) -> None:
        shown = [s for s in self.tasks.values() if s.worker is not None]
        if not shown:
            return
        state = shown[-1]
        state.worker.cancel()
        self.notify(f"Cancelling: {state.title}…", markup=False)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """The safety net: a worker that raised shows a message, never a traceback."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.notify(describe_error(event.worker.error), title="Something went wrong", severity="error",
                        markup=False)

    # -- actions ------------------------------------------------------------------------------

    def action_goto(self, mode: str) -> None:
        if mode != self.current_mode:
            self.switch_mode(mode)

    async def action_focus_query(self) -> None:
        if self.current_mode != "query":
            await self.switch_mode("query")
        self.screen.query_one("#query-input").focus()

    def action_help(self) -> None:
        screen = self.screen
        self.push_screen(HelpScreen(getattr(screen, "TITLE", "") or "Mnemoscope", getattr(screen, "HELP", "")))

    def action_open_store(self) -> None:
        current = str(self.services.mem.path) if self.services.mem is not None else ""
        self.push_screen(PromptDialog("Open store", "Path of a store file (created if it does not exist):", current),
                         lambda path: self.open_store(Path(path).expanduser()) if path else None)

    def action_export(self) -> None:
        def export(path: str | None) -> None:
            if path:
                self.run_task(self, "export", "Exporting", lambda: self.services.memory.export(path), progress=False)

        self.push_screen(PromptDialog("Export", "Write every record as JSON lines to:", "mnemoscope-export.jsonl"),
                         export)

    def action_import(self) -> None:
        def do_import(path: str | None) -> None:
            if path:
                self.run_task(self, "import", "Importing", lambda: self.services.memory.import_(path), progress=False)

        self.push_screen(PromptDialog("Import", "Read a Mnemoscope export (JSON lines) from:", ""), do_import)

    def action_reindex(self) -> None:
        self.run_task(self, "reindex", "Rebuilding the index",
                      lambda progress, cancelled: self.services.memory.reindex(progress=progress))

    @on(TaskFinished)
    def _maintenance_finished(self, message: TaskFinished) -> None:
        if message.task not in ("export", "import", "reindex"):
            return
        if message.error:
            self.notify(message.error, title=message.task.capitalize(), severity="error", markup=False)
            return
        if message.task == "export":
            self.notify(f"{message.result:,} records written.", title="Export")
        elif message.task == "import":
            self.notify(message.result.summary(), title="Import", markup=False)
        else:
            self.notify(f"{message.result['items']:,} items, {message.result['terms']:,} terms.", title="Reindex")
        self.store_changed()

    def action_screenshot(self) -> None:
        path = self.save_screenshot(path=str(Path.cwd()))
        self.notify(f"Saved {path}", title="Screenshot", markup=False)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":  # Textual's own, saved elsewhere than our "Save screenshot" (F12)
                yield command
        for title, help_text, callback in self.app_commands(screen):
            yield SystemCommand(title, help_text, callback)

    def app_commands(self, screen: Screen) -> Iterator[Command]:
        """The app's actions for the palette; screens add their own with ``commands()``."""
        for mode, key, title in SCREENS:
            yield f"Go to {title}", f"Show the {title} screen (key {key})", partial(self.action_goto, mode)
        yield "Ingest files or folders", "Pick files and folders to add to the store", partial(self.action_goto, "ingest")
        yield "Paste a note", "Type or paste text and store it as a note", partial(self.screen_action, "ingest", "note")
        yield "Load demo content", "Ingest the demo guides and conversation into this store", self.load_demo
        yield "Open store", "Open another store file (Ctrl+O)", self.action_open_store
        yield "Export store", "Write every record to a JSON-lines file", self.action_export
        yield "Import export file", "Read records from a Mnemoscope export", self.action_import
        yield "Rebuild the index", "Recompute terms and vectors from the records (reindex)", self.action_reindex
        if self.services.has("topics"):
            yield "Rebuild topics", "Refit the topic tree", partial(self.screen_action, "topics", "rebuild")
        yield "Save screenshot", "Write an SVG of the screen to the current folder (F12)", self.action_screenshot
        yield "Help", "The keys of this screen (?)", self.action_help
        extra = getattr(screen, "commands", None)
        if extra is not None:
            yield from extra()

    def screen_action(self, mode: str, action: str) -> None:
        """Switch to ``mode`` and run one of its actions once it is shown."""

        async def go() -> None:
            await self.switch_mode(mode)
            await self.screen.run_action(action)

        self.call_later(go)

    def on_unmount(self) -> None:
        for state in list(self.tasks.values()):
            if state.worker is not None:
                state.worker.cancel()


def make_app(services: Services | None = None, **options: Any) -> MnemoscopeApp:
    """The app on ``services`` (tests pass a temporary store)."""
    return MnemoscopeApp(services or Services(), **options)


def run(store_path: str | None = None, demo: bool = False) -> None:
    """Start the app (``mnemoscope`` with no subcommand)."""
    services = Services(store_path, demo=demo)
    app = make_app(services)
    try:
        app.run()
    finally:
        services.close()
