"""A progress line for long commands: a bar, the rate and the time left, on one terminal line."""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


class ProgressLine:
    """Call it as an engine ``progress(done, total, what)`` callback; it redraws at most ten times
    a second, restarts its clock when the phase (``what``'s kind) changes, and ends the line on
    :meth:`close`. The rate is over the phase so far, so the time left settles as it runs."""

    def __init__(self, stream: TextIO | None = None, width: int = 28) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self._phase: str | None = None
        self._started = 0.0
        self._drawn = 0.0
        self._first = 0
        self._last = ""

    def __call__(self, done: int, total: int, what: str, phase: str = "") -> None:
        now = time.monotonic()
        if phase != self._phase:
            if self._last:
                self.stream.write("\n")
            self._phase, self._started, self._first, self._last = phase, now, done, ""
        if now - self._drawn < 0.1 and done < total:
            return
        self._drawn = now
        line = self.line(done, total, now - self._started, done - self._first, phase)
        self.stream.write("\r" + line + " " * max(0, len(self._last) - len(line)))
        self.stream.flush()
        self._last = line

    def phase(self, name: str) -> Callable[[int, int, str], None]:
        """The engine callback for one phase of a command (its own clock and rate)."""
        return lambda done, total, what: self(done, total, what, name)

    def line(self, done: int, total: int, seconds: float, moved: int, phase: str) -> str:
        share = done / total if total else 1.0
        filled = int(round(share * self.width))
        rate = moved / seconds if seconds > 0 else 0.0
        left = (total - done) / rate if rate > 0 else float("nan")
        eta = _duration(left) if left == left else "–"
        label = f"{phase} " if phase else ""
        return (f"{label}[{'#' * filled}{'.' * (self.width - filled)}] {done:,}/{total:,} items "
                f"{share:6.1%}  {rate:,.0f} items/s  {eta} left")

    def close(self) -> None:
        if self._last:
            self.stream.write("\n")
            self.stream.flush()
            self._last = ""


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"
