"""Text helpers: query terms highlighted in a snippet (app/snippets.py finds them); an episode's
summary without its head."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

from ..controls import RANGES
from ..snippets import term_pattern

if TYPE_CHECKING:
    from mnemoscope.engine.records import Item

# a conversation's episode summary opens with who spoke and on which days ("Daniel and Maya
# (2023-04-03): …", engine.knowledge.episodes.summarize)
_SUMMARY_HEAD = re.compile(r"^(?P<who>[^():]*?) ?\(\d{4}-\d{2}-\d{2}(?: to \d{4}-\d{2}-\d{2})?\): ")


def split_summary(summary: str) -> tuple[str, str]:
    """An episode's summary as (who spoke, what happened): shown beside its date, the head's own
    date would say it twice. ("", the summary) for one without that head (a document's)."""
    head = _SUMMARY_HEAD.match(summary)
    return (head["who"], summary[head.end():]) if head else ("", summary)


def highlight(text: str | Text, terms: list[str], style: str = "bold reverse") -> Text:
    """``text`` with every occurrence of a query term styled (over the styles a Text has)."""
    out = text.copy() if isinstance(text, Text) else Text(text)
    pattern = term_pattern(terms)
    if pattern is not None:
        for m in pattern.finditer(out.plain):
            out.stylize(style, m.start(), m.end())
    return out


# Markdown's marks, for a document's text shown as a person reads it: a heading, a list's bullet,
# a table's rows and rule, and within a line strong, emphasis, code and a link
_HEADING = re.compile(r"^#{1,6}\s+")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_FLAT_RULE = re.compile(r"\|(?:[ \t]*:?-{3,}:?[ \t]*\|)+")  # a table's rule, within a line or on its own
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_INLINE = re.compile(r"\*\*(?P<strong>\S(?:(?:(?!\*\*).)*?\S)?)\*\*|__(?P<strong_>\S(?:(?:(?!__).)*?\S)?)__"
                     r"|(?<![\w*])\*(?P<em>[^\s*](?:[^*]*?[^\s*])?)\*(?![\w*])"
                     r"|(?<![\w_])_(?P<em_>[^\s_](?:[^_]*?[^\s_])?)_(?![\w_])"
                     r"|`(?P<code>[^`]+)`|\[(?P<link>[^\][]+)\]\([^)\s]+\)")
_INLINE_STYLES = {"strong": "bold", "strong_": "bold", "em": "italic", "em_": "italic", "code": "reverse", "link": "underline"}


def markdown_text(text: str) -> Text:
    """A document's Markdown as styled text without its marks ("**yellow**" reads "yellow",
    bold): headings bold, a list's items after a bullet, a table's cells apart by " │ " (its rule
    left out). Not Textual's Markdown widget: the panels highlight a query's words over it, and
    a Text keeps one paragraph per item, laid out at once."""
    out = Text()
    for n, line in enumerate(_unflattened(text).split("\n")):
        if _TABLE_RULE.match(line) and "-" in line and "|" in line:
            continue
        out.append("\n" if n else "")
        heading = _HEADING.match(line)
        style = "bold" if heading else ""
        line = line[heading.end():] if heading else _BULLET.sub(r"\1• ", line)
        if line.startswith("|") and line.rstrip().endswith("|"):
            line = " │ ".join(cell.strip() for cell in line.strip()[1:-1].split("|"))
        out.append_text(_inline(line, style))
    return out


def _unflattened(text: str) -> str:
    """``text`` with each table its reader joined into one line ("… T6: | Grade | Name | |---|---|
    | T1 | Hiking | … Trail markings …": a document's chunk is its sentences joined by spaces) on
    lines of its own again: the row before the rule, the rule, and each row of as many cells after
    it. Table after table in a loop: a chunk of 20,000 characters may hold over a thousand."""
    done: list[str] = []
    while text.strip() and (table := _table_lines(text)) is not None:
        lines, at = table
        done += [line for line in lines if line]
        text = text[at:].lstrip()
    return "\n".join(done + ([text] if text.strip() or not done else []))


def _table_lines(text: str) -> tuple[list[str], int] | None:
    """The lines of the first table joined into ``text`` (what precedes it, its header row, its
    rule, its rows) and where it ends; None when there is none."""
    rule = _FLAT_RULE.search(text)
    if rule is None:
        return None
    cells = rule[0].count("|") - 1
    before = text[:rule.start()].rstrip()
    pipes = [at for at, char in enumerate(before) if char == "|"]
    if len(pipes) < cells + 1 or not before.endswith("|"):
        return None  # no header row of as many cells: no table
    head = pipes[-(cells + 1)]
    row = re.compile(r"\s*(\|(?:[^|\n]*\|){%d})" % cells)
    lines, at = [before[:head].rstrip(), before[head:], rule[0]], rule.end()
    while (found := row.match(text, at)) is not None:
        lines.append(found[1])
        at = found.end()
    return lines, at


def item_text(item: Item) -> Text:
    """An item's text as a person reads it: a Markdown document's section (its chunks keep their
    heading path) without its marks; a turn, a note or a plain text's chunk as typed."""
    return markdown_text(item.text) if "heading_path" in (item.meta or {}) else Text(item.text)


def one_line(item: Item, width: int, where: str = "") -> str:
    """An item's text on one line of a table's ``width`` (after ``where`` it is from, if given),
    read as :func:`item_text` reads it."""
    return clip(where + " ".join(item_text(item).plain.split()), width)


def _inline(line: str, style: str) -> Text:
    out, at = Text(style=style), 0
    for m in _INLINE.finditer(line):
        out.append(line[at:m.start()])
        kind = m.lastgroup
        out.append(m[kind], style=_INLINE_STYLES[kind])
        at = m.end()
    out.append(line[at:])
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
