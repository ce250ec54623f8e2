"""Messages the app's workers post when a slow task moves on or ends."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class StoreOpened(Message):
    """A store is open (at start-up or after Open store); ``empty`` offers the demo content."""

    def __init__(self, label: str, empty: bool) -> None:
        super().__init__()
        self.label, self.empty = label, empty


class StoreFailed(Message):
    """The store could not be opened (locked, corrupt, not a store)."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class StoreChanged(Message):
    """Something was written: screens that show store data refresh."""


class TaskProgress(Message):
    """Progress of a slow task; floods of these merge into the newest one."""

    def __init__(self, task: str, done: int, total: int, what: str = "") -> None:
        super().__init__()
        self.task, self.done, self.total, self.what = task, done, total, what

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TaskProgress) and message.task == self.task


class TaskFinished(Message):
    """A slow task ended: ``result`` on success, ``error`` (one line) otherwise."""

    def __init__(self, task: str, result: Any = None, error: str | None = None, cancelled: bool = False) -> None:
        super().__init__()
        self.task, self.result, self.error, self.cancelled = task, result, error, cancelled


class SourceDone(Message):
    """One source of an ingest is stored (``done`` of ``total`` items so far)."""

    def __init__(self, name: str, done: int, total: int) -> None:
        super().__init__()
        self.name, self.done, self.total = name, done, total


class TaskEnded(Message):
    """To the app: a task's worker is done (its entry leaves the running tasks)."""

    def __init__(self, task: str, worker: object) -> None:
        super().__init__()
        self.task, self.worker = task, worker
