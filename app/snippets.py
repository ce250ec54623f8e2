"""Query terms and a one-line snippet of a hit centred on them: plain text, no Textual, so that
the CLI's recall shows the same part of a long turn as the app's table does (the sentence that
matched, not the turn's first words)."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be but by did do does for from had has have how i in is it its me my of on or our so "
    "that the their them then there these they this to was we were what when where which who why will with you".split()
)


def query_terms(query: str) -> list[str]:
    """The words of a query worth highlighting (lower case, no stop words, longest first)."""
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 1 and w.lower() not in _STOP}
    return sorted(words, key=lambda w: (-len(w), w))


def term_pattern(terms: list[str]) -> re.Pattern[str] | None:
    """One pattern matching any of ``terms`` (None for no terms): what a snippet centres on and
    the app highlights."""
    if not terms:
        return None
    # A long word also matches its inflections (feeding ~ feed, starters ~ starter).
    stems = sorted({t[:-2] if len(t) > 6 else t for t in terms}, key=len, reverse=True)
    return re.compile("|".join(re.escape(s) + r"\w*" for s in stems), re.IGNORECASE)


def snippet(text: str, terms: list[str], width: int = 160) -> str:
    """One line of ``text`` of at most ``width`` characters, centred on the first query term."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    pattern = term_pattern(terms)
    m = pattern.search(flat) if pattern else None
    start = 0 if m is None else max(0, m.start() - width // 4)
    piece = flat[start:start + width - (1 if start else 0) - 1]
    return ("…" if start else "") + piece + "…"
