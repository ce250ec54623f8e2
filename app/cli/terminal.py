"""What the CLI prints is shown, never obeyed: text from a document, a file's name or a fact may
hold characters that drive the terminal (:mod:`app.controls`: ESC sequences, a carriage return,
a bidi override). Each one is printed as its ``\\uXXXX`` escape instead; newline and tab stay.
Inside ``--json`` output the same escape is JSON's own, so the data read back is unchanged."""

from __future__ import annotations

import io
from typing import TextIO

from ..controls import RANGES

CONTROLS = {c: f"\\u{c:04x}" for first, last in RANGES for c in range(first, last + 1) if chr(c) not in "\n\t"}


def visible(text: str) -> str:
    """``text`` with every character that drives the terminal but newline and tab shown as ``\\uXXXX``."""
    return text.translate(CONTROLS)


class VisibleText(io.TextIOBase):
    """A text stream that writes :func:`visible` text to ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def writable(self) -> bool:
        return True
