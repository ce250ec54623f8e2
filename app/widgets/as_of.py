"""The as-of box: the date a screen answers as of (the Facts screen's facts, the Query screen's
recall), read as the engine reads it. One control for both screens, so that a date means the
same on each and a date the engine cannot read is said the same way."""

from __future__ import annotations

from typing import Any

from textual import events, on
from textual.message import Message
from textual.widgets import Input

from mnemoscope.app.services import Services
from .chrome import TextBox

PLACEHOLDER = "as of: now"


class AsOfBox(TextBox):
    """A date typed and Enter: :class:`AsOfBox.Chosen` with it (2023-05-01, 2023-05 or 2023; empty:
    now). A date that is none is a notification and changes nothing; leaving the box puts back
    the date in force, so the box never shows a date the screen does not answer as of."""

    class Chosen(Message):
        """The date in force changed (``when``: an ISO date, month or year; None: now)."""

        def __init__(self, box: AsOfBox, when: str | None) -> None:
            super().__init__()
            self.box = box
            self.when = when

        @property
        def control(self) -> AsOfBox:
            return self.box

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("placeholder", PLACEHOLDER)
        super().__init__(compact=True, **kwargs)
        self.when: str | None = None

    def show(self, when: str | None) -> None:
        """Put ``when`` in force and in the box (a screen stepping through dates sets it so)."""
        self.when = when
        self.value = when or ""

    @on(Input.Submitted)
    def _read(self, event: Input.Submitted) -> None:
        event.stop()  # the screen hears Chosen, once the date is read
        try:
            when = Services.as_of_date(event.value.strip())
        except ValueError as exc:  # the engine's one line: "as of '2023-13' is not a date such as …"
            self.app.notify(str(exc), title="As of", severity="error", markup=False)
            return
        self.show(when)
        self.post_message(self.Chosen(self, when))

    @on(events.Blur)
    def _keep_the_date_in_force(self) -> None:
        if self.value != (self.when or ""):
            self.value = self.when or ""
