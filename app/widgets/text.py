"""Text helpers: query terms highlighted in a snippet (app/snippets.py finds them); an episode's
summary without its head."""

from __future__ import annotations

import re

from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

from ..controls import RANGES
from ..snippets import term_pattern

# a conversation's episode summary opens with who spoke and on which days ("Daniel and Maya
# (2023-04-03): …", engine.knowledge.episodes.summarize)
_SUMMARY_HEAD = re.compile(r"^(?P<who>[^():]*?) ?\(\d{4}-\d{2}-\d{2}(?: to \d{4}-\d{2}-\d{2})?\): ")


def split_summary(summary: str) -> tuple[str, str]:
    """An episode's summary as (who spoke, what happened): shown beside its date, the head's own
    date would say it twice. ("", the summary) for one without that head (a document's)."""
    head = _SUMMARY_HEAD.match(summary)
    return (head["who"], summary[head.end():]) if head else ("", summary)


def highlight(text: str, terms: list[str], style: str = "bold reverse") -> Text:
    """``text`` with every occurrence of a query term styled."""
    out = Text(text)
    pattern = term_pattern(terms)
    if pattern is not None:
        for m in pattern.finditer(text):
            out.stylize(style, m.start(), m.end())
    return out


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis saying it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


_CONTROLS = dict.fromkeys(code for first, last in RANGES for code in range(first, last + 1))
_HAS_CONTROL = re.compile("[" + "".join(f"\\u{first:04x}-\\u{last:04x}" for first, last in RANGES) + "]")


class DropControls(LineFilter):
    """Drops the characters that drive the terminal (:mod:`app.controls`) from every line the app
    draws. Text from a document, a file's name or a fact may hold ESC sequences (retitle the
    window, clear the screen, set the clipboard) that Rich and Textual pass on to the terminal
    (they drop only BEL, BS, VT, FF and CR), or a bidi override that turns the rest of a line
    around; none takes a cell, so dropping it leaves the layout as it was."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        """Every line of every repaint passes here: a line without a control character (nearly
        all) is returned as it is, without a new segment per piece."""
        if not any(_HAS_CONTROL.search(segment.text) for segment in segments if not segment.control):
            return segments
        return [segment if segment.control else Segment(segment.text.translate(_CONTROLS), segment.style)
                for segment in segments]
