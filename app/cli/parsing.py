"""The command line's parser: every mistake is one line and exit 2, and a number is a number.

``type=int`` anywhere in the commands reads a plain ASCII integer in range (0 to 2^63 - 1):
Python's ``int`` would also take ``" 12"``, ``"1_000"``, ``"+5"`` and digits of other scripts
(``"١٢"``), and an id past 2^63 reached SQLite as an OverflowError.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

MAX_INTEGER = 2**63 - 1
_PLAIN = re.compile(r"[0-9]{1,19}")


def plain_int(text: str, lowest: int = 0) -> int:
    """A plain ASCII integer from ``lowest`` to 2^63 - 1 (argparse shows the message with the option)."""
    if not _PLAIN.fullmatch(text) or not lowest <= int(text) <= MAX_INTEGER:
        raise argparse.ArgumentTypeError(f"expected a whole number from {lowest} to {MAX_INTEGER}, not {text[:40]!r}")
    return int(text)


def count_int(text: str) -> int:
    """How many of something to show: a plain ASCII integer from 1, so that the parser's message
    names the range the command accepts (0 would pass the parser and fail in the engine)."""
    return plain_int(text, lowest=1)


def a_date(text: str) -> str:
    """A ``--as-of`` date (2023-06-01, 2023-06 or 2023), checked as the engine reads it. An empty
    one is refused: it is ``--as-of "$DATE"`` with the variable unset, which answered about now
    as if no date had been asked."""
    from mnemoscope.engine.as_of import parse_as_of
    from mnemoscope.engine.errors import RecallError

    try:
        when = parse_as_of(text)
    except RecallError:
        when = None
    if when is None:
        raise argparse.ArgumentTypeError(f"expected a date such as 2023-06-01, 2023-06 or 2023, not {text[:40]!r}")
    return when


class Parser(argparse.ArgumentParser):
    """``argparse`` with one-line errors, :func:`plain_int` for ``type=int``, and a help text for
    every argument: ``mnemoscope COMMAND --help`` is where a person learns what each one is for."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.register("type", int, plain_int)

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        if not kwargs.get("help"):
            raise TypeError(f"{self.prog} {args[0] if args else ''}: every argument says what it is for (help=...)")
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise SystemExit(status)
