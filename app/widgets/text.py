"""Text helpers: query terms highlighted in a snippet; an episode's summary without its head."""

from __future__ import annotations

import re

from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

from ..controls import RANGES

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be but by did do does for from had has have how i in is it its me my of on or our so "
    "that the their them then there these they this to was we were what when where which who why will with you".split()
)


# a conversation's episode summary opens with who spoke and on which days ("Daniel and Maya
# (2023-04-03): …", engine.knowledge.episodes.summarize)
_SUMMARY_HEAD = re.compile(r"^(?P<who>[^():]*?) ?\(\d{4}-\d{2}-\d{2}(?: to \d{4}-\d{2}-\d{2})?\): ")


def split_summary(summary: str) -> tuple[str, str]:
    """An episode's summary as (who spoke, what happened): shown beside its date, the head's own
    date would say it twice. ("", the summary) for one without that head (a document's)."""
    head = _SUMMARY_HEAD.match(summary)
    return (head["who"], summary[head.end():]) if head else ("", summary)


def query_terms(query: str) -> list[str]:
    """The words of a query worth highlighting (lower case, no stop words, longest first)."""
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 1 and w.lower() not in _STOP}
    return sorted(words, key=lambda w: (-len(w), w))


def _pattern(terms: list[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    # A long word also matches its inflections (feeding ~ feed, starters ~ starter).
    stems = sorted({t[:-2] if len(t) > 6 else t for t in terms}, key=len, reverse=True)
    return re.compile("|".join(re.escape(s) + r"\w*" for s in stems), re.IGNORECASE)


def highlight(text: str, terms: list[str], style: str = "bold reverse") -> Text:
    """``text`` with every occurrence of a query term styled."""
    out = Text(text)
    pattern = _pattern(terms)
    if pattern is not None:
        for m in pattern.finditer(text):
            out.stylize(style, m.start(), m.end())
    return out


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis saying it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def snippet(text: str, terms: list[str], width: int = 160) -> str:
    """One line of ``text`` of at most ``width`` characters, centred on the first query term."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    pattern = _pattern(terms)
    m = pattern.search(flat) if pattern else None
    start = 0 if m is None else max(0, m.start() - width // 4)
    piece = flat[start:start + width - (1 if start else 0) - 1]
    return ("…" if start else "") + piece + "…"


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
