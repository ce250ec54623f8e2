"""What the CLI prints is shown, never obeyed: text from a document, a file's name or a fact may
hold control characters (ESC sequences that clear the screen, retitle the window or set the
clipboard, a carriage return that hides what came before). Each one is printed as its ``\\uXXXX``
escape instead; newline and tab stay. Inside ``--json`` output the same escape is JSON's own, so
the data read back is unchanged."""

from __future__ import annotations

import io
from typing import TextIO

CONTROLS = {c: f"\\u{c:04x}" for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)] if chr(c) not in "\n\t"}


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab shown as ``\\uXXXX``."""
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
