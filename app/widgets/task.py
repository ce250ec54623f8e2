"""The progress of the app's slow tasks, shown on every screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.markup import escape
from textual.widgets import Label, ProgressBar


class TaskPanel(Horizontal):
    """A bar for the newest running task; hidden when nothing runs. Esc cancels."""

    def compose(self) -> ComposeResult:
        yield Label("", id="task-what")
        yield ProgressBar(show_eta=False, id="task-bar")
        yield Label("[dim]Esc cancels[/dim]", id="task-hint")

    def on_mount(self) -> None:
        self.display = False
        self.watch(self.app, "task_tick", self.show_tasks)

    def show_tasks(self, _tick: int = 0) -> None:
        tasks = self.app.tasks
        self.display = bool(tasks)
        if not tasks:
            return
        name, state = next(reversed(tasks.items()))
        more = f" (+{len(tasks) - 1} more)" if len(tasks) > 1 else ""
        what = f" · {escape(state.what)}" if state.what else ""
        # the panel's rest, one line, whatever it says (app.tcss): no new layout at each progress tick
        self.query_one("#task-what", Label).update(f"{escape(state.title)}{what}{more}", layout=False)
        bar = self.query_one("#task-bar", ProgressBar)
        bar.update(total=state.total or None, progress=state.done)
