"""The Mnemoscope terminal app: one App, a screen per area, every slow task in a worker."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.filter import LineFilter
from textual.message_pump import MessagePump
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.widgets import Input
from textual.worker import Worker, WorkerState, get_current_worker

from .collector import QuietCollector
from .commands import Command, MnemoscopeCommands
from .messages import StoreOpened, TaskProgress
from .restyle import RestyleOnChangeApp
from .services import (AFTER_CHANGE, AFTER_OPEN, Cancelled, MnemoscopeError, Progress, Services, describe_error,
                       short_path, write_private)
from .setting_warnings import SettingWarnings
from .widgets import ChoiceDialog, HelpScreen, PromptDialog
from .widgets.text import DropControls
from .widgets.chrome import SCREENS

if TYPE_CHECKING:
    from mnemoscope.engine.records import Counts, IngestReport

log = logging.getLogger(__name__)

T = TypeVar("T")  # what a task's function returns, and its ``done`` callback takes

UNTIED_TASKS = ("llm",)  # tasks that do not use the open store: another may be opened meanwhile


@dataclass(frozen=True)
class StoreLoaded:
    """A store opened, or the demo content loaded: the header's counts, and the demo's report."""

    stats: Counts | None
    report: IngestReport | None = None


@dataclass
class TaskState:
    title: str
    worker: Worker | None = None
    done: int = 0
    total: int = 0
    what: str = ""
    show: bool = True
    owner: MessagePump | None = None
    started: bool = False  # its job began on a thread: it will end with _finish_task
    abandoned: bool = False  # cancelled before its job began: the job, if a thread still takes it, does nothing


DROP_CONTROLS = DropControls()


def _screen(mode: str) -> Callable[[], Screen]:
    """Import a screen module only when its mode is first shown (keeps cold start short)."""

    def build() -> Screen:
        import importlib

        module = importlib.import_module(f"mnemoscope.screens.{mode}")
        return module.SCREEN()

    return build


class MnemoscopeApp(RestyleOnChangeApp[None]):
    """Explore, curate and teach a memory store."""

    CSS_PATH = Path(__file__).resolve().parents[1] / "assets" / "app.tcss"  # absolute: a subclass may live anywhere
    TITLE = "Mnemoscope"
    COMMANDS = App.COMMANDS | {MnemoscopeCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # screens.base.WIDE
    MODES = {mode: _screen(mode) for mode, _key, _title in SCREENS}
    BINDINGS = [
        # priority: a digit reaches the app before the focused widget, except a text box: Textual
        # leaves it the keys it consumes, so a digit typed into a box is text, whatever the box holds
        # (a box deciding by its text would race a burst of keys: "dog 2" typed fast reached the
        # app while the box was still empty, and "2" switched screens)
        *[Binding(key, f"goto('{mode}')", title, id=f"goto-{mode}", show=False, priority=True)
          for mode, key, title in SCREENS],
        # priority too: the keys typed right after it are the box's, not the focused list's (in a box, "/" is text)
        Binding("slash", "focus_query", "Query box", id="focus-query", show=False, priority=True),
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("ctrl+o", "open_store", "Open store", id="open-store", show=False),
        Binding("escape", "cancel_task", "Cancel task", id="cancel-task", show=False),
        # priority: over a dialog too (a modal screen's keys end at the dialog, the app's included)
        Binding("f12", "screenshot", "Screenshot", id="screenshot", show=False, priority=True),
    ]

    store_label: reactive[str] = reactive("opening…")
    store_stats: reactive[Counts | None] = reactive(None, always_update=True)
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
        self.collector = QuietCollector()
        self.setting_warnings = SettingWarnings(lambda message: self.notify(
            message, title="Settings", severity="warning", timeout=30, markup=False))
        self.last_input = time.monotonic()  # a key or a click: the collector's sweep waits for a pause
        # the last key and the one before it (its character, or ""), each with the time the terminal
        # sent it (the event's, not when it was handled: a busy app must not make a word two): in the
        # order typed, which the keys' ways through the widgets do not keep (see start_typing)
        self.key_before: tuple[str, float] = ("", 0.0)
        self.last_key: tuple[str, float] = ("", 0.0)
        self.warm_ups_held: list[tuple[Callable[[], None], set[Worker]]] = []  # see _warm_up_once_shown
        self.task_claims = threading.Lock()  # a task's job begins, or it is abandoned: never both (see _abandon)
        self.ranker_problem_told = ""  # see _tell_ranker_problem

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then one that drops control characters: what a document holds is
        shown, never sent to the terminal as a command."""
        return [*super().get_line_filters(), DROP_CONTROLS]

    # -- start-up -----------------------------------------------------------------------------

    FOLLOW_INTERVAL = 0.25  # seconds between two looks at whether another process committed
    WARM_AFTER_FOLLOW = 0.5  # seconds after following a change before its matrices are built again
    SWEEP_AFTER_PAUSE = 2.0  # seconds without a key or a click (and no task running) before the collector sweeps

    def on_mount(self) -> None:
        # open the store once the first screen is painted: importing the engine competes for the GIL
        self.call_after_refresh(self.open_store, None)
        self.set_interval(self.FOLLOW_INTERVAL, self._look_for_changes, name="follow")
        self.collector.install()
        self.setting_warnings.install()
        self.set_interval(1.0, self._sweep_when_idle, name="sweep")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown)) and not event.is_forwarded:
            self.last_input = time.monotonic()
            if isinstance(event, events.Key):
                self.key_before, self.last_key = self.last_key, (event.character or "", event.time)
        await super().on_event(event)

    def _sweep_when_idle(self) -> None:
        """The collector's sweep (see app.collector) once a person pauses: it holds the screen still
        for as long as a full collection of everything takes."""
        if not self.tasks and time.monotonic() - self.last_input >= self.SWEEP_AFTER_PAUSE and self.collector.sweep_due:
            log.debug("swept the frozen objects in %.2f s", self.collector.sweep())

    def open_store(self, path: str | Path | None, *, make: bool = False) -> None:
        """Open ``path`` (None: the store the app was started on); where no store is, ask first
        (:meth:`ask_to_make`) unless ``make``."""
        running = [state.title for task, state in self.tasks.items() if task not in UNTIED_TASKS]
        if running:  # opening closes the store they work on
            self.notify(f"{running[-1]} is still running: wait for it (or press Esc to cancel it), then open "
                        "the store.", title="Open store", severity="warning", markup=False)
            return
        missing = None if make else self.services.missing_store(path)
        if missing is not None:
            self.ask_to_make(path, missing)
            return

        def open_and_fill(progress: Progress, cancelled: Cancelled) -> StoreLoaded:
            started = time.perf_counter()
            mem = self.services.open(path)
            self.open_seconds = time.perf_counter() - started
            loaded = None
            if path is None and self.services.demo and not mem.counts().items:
                loaded = self.services.load_demo(progress=progress, cancelled=cancelled)
            return StoreLoaded(self.services.counts(), loaded)

        self.run_task(self, "store", "Opening store", open_and_fill, done=self.store_opened,
                      failed=self.store_failed, keep_cancelled=True)

    def store_opened(self, loaded: StoreLoaded) -> None:
        # the warm-up is announced now, though it starts once the screen has shown what it reads:
        # a query sent while the store was opening runs as soon as the strategies are read
        ended = self.services.warm_up_coming(AFTER_OPEN)
        self.store_label = self.services.label
        self.counts_changed(loaded.stats)
        self.ready_seconds = time.perf_counter() - self.started
        self._warm_up_once_shown(ended)
        empty = loaded.stats is None or not loaded.stats.items
        why = self.services.read_only_reason()
        if why:  # once, at open: browsing and recall work, no change is written
            self.notify(f"{self.store_label} is opened read-only: {why}. Browsing and recall work; "
                        "changes are not written.", title="Read-only store", severity="warning", markup=False)
        self.post_message(StoreOpened(self.store_label, empty))
        if empty and self.offer_demo and not why:  # (its content could not be written)
            self.offer_demo_content()

    def store_failed(self, error: str) -> None:
        self.store_label = self.services.label

        def chosen(choice: str | None) -> None:
            if choice == "open":
                self.action_open_store()
            elif choice == "temp":
                self.run_task(self, "store", "Opening a temporary store", self.open_temporary, done=self.store_opened,
                              failed=self.store_failed, progress=False)
            elif choice == "quit":
                self.exit()

        choices = [("open", "Open another…"), ("temp", "Use a temporary store"), ("quit", "Quit")]
        if self.services.mem is not None:  # opening another store failed: the one open stays open
            error += f"\n\n{self.services.label} is still open."
            choices = [("keep", f"Keep {self.services.label}"), ("open", "Open another…")]
        self.push_screen(ChoiceDialog("The store cannot be opened", error, choices), chosen)

    def ask_to_make(self, path: str | Path | None, missing: Path) -> None:
        """No store is at ``missing``: a mistyped path, or a new store wanted there. Nothing is made
        until the person says so; the first choice, focused, makes nothing."""
        self.store_label = self.services.label  # "no store" at start-up, not "opening…"
        body = (f"There is no store at {short_path(missing)}. Nothing was made: a mistyped path?\n\n"
                "Make a new empty store there (and its folders), or choose another.")

        def chosen(choice: str | None) -> None:
            if choice == "new":
                self.open_store(path, make=True)
            elif choice == "open":
                self.action_open_store()
            elif choice == "quit":
                self.exit()

        choices = [("open", "Open another…"), ("new", "Make a new store")]
        if self.services.mem is None:
            choices.append(("quit", "Quit"))
        else:  # the Open store dialog's path: the store open stays open
            body += f"\n\n{self.services.label} is still open."
            choices.append(("keep", f"Keep {self.services.label}"))
        self.push_screen(ChoiceDialog("No store here", body, choices), chosen)

    def offer_demo_content(self) -> None:
        """The demo, or the Ingest screen: a choice, not 'key 1', which the query box the app
        opens in would take as text."""
        body = ("This store is empty. Load the demo content: four short guides (sourdough, transformers, "
                "retrieval-augmented generation, alpine hiking) and a conversation between two friends "
                "over eight sessions?\n\nOr ingest your own files and folders on the Ingest screen.")

        def chosen(choice: str | None) -> None:
            if choice == "load":
                self.load_demo()
            elif choice == "ingest":
                self.action_goto("ingest")

        self.push_screen(ChoiceDialog("An empty store", body, [("load", "Load demo content"),
                                                               ("ingest", "Ingest my own files"), ("no", "Not now")]),
                         chosen)

    def open_temporary(self) -> StoreLoaded:
        self.services.open_temporary()
        return StoreLoaded(self.services.stats())

    def load_demo(self) -> None:
        def job(progress: Progress, cancelled: Cancelled) -> StoreLoaded:
            report = self.services.load_demo(progress=progress, cancelled=cancelled)
            return StoreLoaded(self.services.stats(), report)

        self.run_task(self, "demo", "Loading demo content", job, done=self.demo_loaded,
                      failed=self.refused("Demo content"),
                      keep_cancelled=True)

    def demo_loaded(self, loaded: StoreLoaded) -> None:
        self.store_label = self.services.label
        self.counts_changed(loaded.stats)
        if loaded.report is not None:
            self.notify(loaded.report.summary(), title="Demo content loaded", markup=False)

    # -- the store changed --------------------------------------------------------------------

    def store_changed(self, counts: Counts | None = None) -> None:
        """After any write: new counts in the header (read anew when not given), and screens
        refresh what they show."""
        if counts is None:
            self._follow()  # what another process committed while this app wrote, too
            self._refresh_stats()
            return
        self.counts_changed(counts)

    def counts_changed(self, counts: Counts | None) -> None:
        """The store's counts (None: no store is open) in the header; screens refresh."""
        self.store_stats = counts
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
            self.call_from_thread(self.counts_changed, stats)
            # the matrices the change dropped, built behind the screen rather than by the next
            # query; a moment later, so that the screens' own refresh comes first
            self.call_from_thread(self.set_timer, self.WARM_AFTER_FOLLOW, self._start_warm_up, name="warm after follow")

    def _warm_up_once_shown(self, ended: Callable[[], None]) -> None:
        """Start the warm-up once the tasks the new counts started (the Query screen's sources and
        strategies) have shown their results, or after the next paint if they started none. The
        warm-up first asks the disk for the saved files whole (Memory.warm_up): started beside
        those tasks, their reads of the store waited behind it, and the screen was usable later.
        A task started after them (a query, which waits for the warm-up) does not hold it."""
        held = {state.worker for task, state in self.tasks.items()
                if task not in ("store", *UNTIED_TASKS) and state.worker is not None}
        if held:
            self.warm_ups_held.append((ended, held))
        else:
            self.call_after_refresh(self._warm_up, ended)

    def _release_warm_ups(self, finished: Worker) -> None:
        """A task's result is shown: the warm-ups held for it alone start after the next paint."""
        for ended, held in list(self.warm_ups_held):
            held.discard(finished)
            if not held:
                self.warm_ups_held.remove((ended, held))
                self.call_after_refresh(self._warm_up, ended)

    def _start_warm_up(self) -> None:
        """Announce the warm-up before its worker starts, so that a query sent at once waits for it."""
        self._warm_up(self.services.warm_up_coming(AFTER_CHANGE))

    @work(thread=True, group="warm-up", exit_on_error=False)
    def _warm_up(self, ended: Callable[[], None]) -> None:
        """Load the engine's areas behind the usable screen (a query sent meanwhile waits for them),
        and build again what following another process dropped. Not exclusive: every warm-up
        announced must end (a cancelled thread worker would run on regardless)."""
        try:
            self.services.warm_up()
            problem = self.services.ranker_problem()
            if problem:
                self.call_from_thread(self._tell_ranker_problem, problem)
        finally:
            ended()

    def _tell_ranker_problem(self, problem: str) -> None:
        """Once per problem: the store's feedback cannot be read, so recall ranks without it (the
        warm-up after a store opens, or after another process's change, loads the ranker)."""
        if problem != self.ranker_problem_told:
            self.ranker_problem_told = problem
            self.notify(f"{self.store_label}: {problem}. The Ranker screen (7) lists the events; R there resets learning.",
                        title="Feedback not used", severity="warning", markup=False)

    @work(thread=True, exclusive=True, group="stats", exit_on_error=False)
    def _refresh_stats(self) -> None:
        self.call_from_thread(self.counts_changed, self.services.stats())

    # -- tasks --------------------------------------------------------------------------------

    def run_task(self, owner: MessagePump, task: str, title: str, fn: Callable[..., T], *,
                 done: Callable[[T], object] | None = None, failed: Callable[[str], object] | None = None,
                 progress: bool = True, replace: bool = False, show: bool = True,
                 keep_cancelled: bool = False) -> Worker | None:
        """Run ``fn(progress=, cancelled=)`` (or ``fn()``) in a thread, then on the UI thread call
        ``done(result)``, typed by ``fn``'s result, or ``failed(one line)`` (by default a notification
        titled by ``owner``). Nothing is called if ``owner`` has left the screen meanwhile, nor for a
        cancelled task unless ``keep_cancelled`` (an ingest stopped partway reports what it stored).

        A task of the same name already running is cancelled when ``replace`` (a new query
        supersedes the old one); otherwise the new one is refused with a notice. The task leaves
        ``tasks`` once its result is shown, so that "no task runs" means "every result is on screen".
        """
        running = self.tasks.get(task)
        if running is not None and not replace:
            self.notify(f"{running.title} is still running; wait or press Esc to cancel it.", severity="warning")
            return None
        if running is not None:
            self._abandon(task, running)
        state = TaskState(title, show=show, owner=owner)
        self.tasks[task] = state
        heading = getattr(owner, "TITLE", "") or title

        def job() -> None:
            worker = get_current_worker()
            with self.task_claims:
                if state.abandoned:
                    return
                state.started = True

            def report(done: int, total: int, what: str = "") -> None:
                self.post_message(TaskProgress(task, done, total, what))

            try:
                result = fn(progress=report, cancelled=lambda: worker.is_cancelled) if progress else fn()
            except MnemoscopeError as exc:  # meant for the person: one line
                error = describe_error(exc)
                if worker.is_cancelled:  # replaced by a newer request, or cancelled with Esc
                    deliver = partial(self.notify, error, title=heading, severity="warning", markup=False)
                else:
                    deliver = partial(failed, error) if failed is not None else partial(
                        self.notify, error, title=heading, severity="error", markup=False)
            except Exception as exc:  # a bug: logged with its traceback, one line on screen all the same
                log.exception("task %s failed", task)
                deliver = partial(self.notify, describe_error(exc), title="Something went wrong", severity="error",
                                  markup=False)
            else:
                dropped = done is None or (worker.is_cancelled and not keep_cancelled)
                deliver = None if dropped else partial(done, result)
            self.call_later(self._finish_task, task, worker, owner, deliver)

        state.worker = self.run_worker(job, name=task, group=task, description=title, thread=True,
                                       exclusive=replace, exit_on_error=False)
        self._show_tasks()
        return state.worker

    def _finish_task(self, task: str, worker: Worker, owner: MessagePump,
                     deliver: Callable[[], object] | None) -> None:
        """On the UI thread: show a task's outcome to its owner, then let the task go."""
        try:
            if deliver is not None and owner.is_attached:
                deliver()
        finally:
            state = self.tasks.get(task)
            if state is not None and state.worker is worker:
                del self.tasks[task]
                self._show_tasks()
            self._release_warm_ups(worker)

    def on_task_progress(self, message: TaskProgress) -> None:
        state = self.tasks.get(message.task)
        if state is not None:
            state.done, state.total, state.what = message.done, message.total, message.what
            self._show_tasks()

    def _show_tasks(self) -> None:
        shown = [s for s in self.tasks.values() if s.show]
        self.busy = shown[-1].title if shown else ""
        self.task_tick += 1

    def action_cancel_task(self) -> None:
        shown = [(task, s) for task, s in self.tasks.items() if s.worker is not None]
        if not shown:
            return
        task, state = shown[-1]
        self._abandon(task, state)
        self.notify(f"Cancelling: {state.title}…", markup=False)

    def cancel_task(self, task: str, owner: MessagePump) -> None:
        """Cancel ``owner``'s task without a word: its owner left, and nobody waits for it."""
        state = self.tasks.get(task)
        if state is not None and state.owner is owner:
            self._abandon(task, state)

    def _abandon(self, task: str, state: TaskState) -> None:
        """Cancel a task (replaced, Esc, or its owner left): its result will not be shown, so the
        warm-ups held for it start now. A thread worker cancelled before its job began never runs
        it, so nothing would call _finish_task: such a task is let go here, and its job returns at
        once should a thread still take it. One that began ends as usual, in _finish_task."""
        if state.worker is None:
            return
        state.worker.cancel()
        self._release_warm_ups(state.worker)
        with self.task_claims:
            state.abandoned = not state.started
        if state.abandoned and self.tasks.get(task) is state:
            del self.tasks[task]
            self._show_tasks()

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """The safety net: a worker that raised shows a message, never a traceback."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.notify(describe_error(event.worker.error), title="Something went wrong", severity="error",
                        markup=False)

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Over a dialog, a screen key is the dialog's: the screens stay where they are."""
        if action == "goto":
            return not isinstance(self.screen, ModalScreen)
        if action == "focus_query":  # in a text box "/" is text (a path, "and/or"): Textual does not leave it the box
            return not isinstance(self.screen, ModalScreen) and not isinstance(self.focused, Input)
        return True

    def action_goto(self, mode: str) -> None:
        if mode != self.current_mode:
            self.switch_mode(mode)

    async def action_focus_query(self) -> None:
        if self.current_mode != "query":
            await self.switch_mode("query")
        while not self.screen.query("#query-input") and len(self.screen_stack) > 1:
            await self.pop_screen()  # a view over the query screen (Compare) closes: "/" means the query box
        self.screen.set_focus(self.screen.query_one("#query-input"))  # at once: the keys queued after "/" are its

    def action_help(self) -> None:
        screen = self.screen
        self.push_screen(HelpScreen(getattr(screen, "TITLE", "") or "Mnemoscope", getattr(screen, "HELP", "")))

    def action_open_store(self) -> None:
        current = str(self.services.mem.path) if self.services.mem is not None else ""
        self.push_screen(PromptDialog("Open store", "Path of a store file (a new one is made only if you say so):", current),
                         lambda path: self.open_store(Path(path).expanduser()) if path else None)

    def action_export(self) -> None:
        def exported(records: int) -> None:
            self.notify(f"{records:,} records written.", title="Export")
            self.store_changed()

        def export(path: str | None) -> None:
            if path:
                self.run_task(self, "export", "Exporting", lambda: self.services.memory.export(path), progress=False,
                              done=exported, failed=self.refused("Export"))

        self.push_screen(PromptDialog("Export", "Write every record as JSON lines to:", "mnemoscope-export.jsonl"),
                         export)

    def action_import(self) -> None:
        def imported(report: "IngestReport") -> None:
            self.notify(report.summary(), title="Import", markup=False)
            self.store_changed()

        def do_import(path: str | None) -> None:
            if path:
                self.run_task(self, "import", "Importing", lambda: self.services.memory.import_(path), progress=False,
                              done=imported, failed=self.refused("Import"))

        self.push_screen(PromptDialog("Import", "Read a Mnemoscope export (JSON lines) from:", ""), do_import)

    def action_reindex(self) -> None:
        def reindexed(counts: dict[str, float]) -> None:
            self.notify(f"{counts['items']:,} items, {counts['terms']:,} terms.", title="Reindex")
            self.store_changed()

        self.run_task(self, "reindex", "Rebuilding the index",
                      lambda progress, cancelled: self.services.memory.reindex(progress=progress),
                      done=reindexed, failed=self.refused("Reindex"), keep_cancelled=True)

    def refused(self, title: str) -> Callable[[str], None]:
        """A task's ``failed``: its one line as an error notification titled ``title``."""
        return lambda error: self.notify(error, title=title, severity="error", markup=False)

    def action_screenshot(self) -> None:
        """F12: an SVG of the screen in the current folder, private to its owner like the store it shows."""
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{int(time.time() * 1000) % 1000:03d}"
        try:
            path = Path.cwd() / f"mnemoscope-{stamp}.svg"
            write_private(path, self.export_screenshot(title=self.title))
        except MnemoscopeError as exc:
            self.notify(describe_error(exc), title="Screenshot", severity="error", markup=False)
            return
        except OSError as exc:  # the current folder itself is gone
            self.notify(f"no screenshot saved: {exc.strerror or exc}", title="Screenshot", severity="error", markup=False)
            return
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
        self.collector.uninstall()
        self.setting_warnings.uninstall()


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
