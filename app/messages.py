"""Messages the app's workers post while a slow task moves on (its end calls the task's ``done``)."""

from __future__ import annotations

from textual.message import Message


class StoreOpened(Message):
    """A store is open (at start-up or after Open store); ``empty`` offers the demo content."""

    def __init__(self, label: str, empty: bool) -> None:
        super().__init__()
        self.label, self.empty = label, empty


class TaskProgress(Message):
    """Progress of a slow task; floods of these merge into the newest one."""

    def __init__(self, task: str, done: int, total: int, what: str = "") -> None:
        super().__init__()
        self.task, self.done, self.total, self.what = task, done, total, what

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TaskProgress) and message.task == self.task


class SourceDone(Message):
    """One source of an ingest is stored (``done`` of ``total`` items so far)."""

    def __init__(self, name: str, done: int, total: int) -> None:
        super().__init__()
        self.name, self.done, self.total = name, done, total
