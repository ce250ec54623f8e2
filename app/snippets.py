"""Query terms and a one-line snippet of a hit around the stretch that holds most of them: plain
text, no Textual, so that the CLI's recall shows the same part of a long turn as the app's table
does (where the query's words are, not the turn's first words)."""

from __future__ import annotations

import math
import re

from mnemoscope.engine.text import STOPWORDS  # a leaf: no numpy

_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(query: str) -> list[str]:
    """The words of a query worth highlighting (lower case, longest first): not the stop words the
    engine's lexical index leaves out ("more", "about": they steer no snippet)."""
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 1 and w.lower() not in STOPWORDS}
    return sorted(words, key=lambda w: (-len(w), w))


def term_pattern(terms: list[str]) -> re.Pattern[str] | None:
    """One pattern matching any of ``terms`` (None for no terms): what a snippet centres on and
    the app highlights. Each term's stem is a group of its own (which one matched: ``lastindex``)."""
    stems = _stems(terms)
    if not stems:
        return None
    return re.compile("|".join(f"\\b({re.escape(s)}\\w*)" for s in stems), re.IGNORECASE)


def _stems(terms: list[str]) -> list[str]:
    """The terms as matched, longest first: a long word also matches its inflections (feeding ~
    feed, starters ~ starter)."""
    return sorted({t[:-2] if len(t) > 6 else t for t in terms}, key=lambda s: (-len(s), s))


def term_weights(texts: list[str], terms: list[str]) -> dict[str, float]:
    """How telling each term's stem is among ``texts`` (a recall's hits): ln(1 + N / df), so a
    word every hit holds (the name the question is about) weighs least, and one few hold most."""
    pattern = term_pattern(terms)
    if pattern is None:
        return {}
    stems = _stems(terms)
    held = [0] * len(stems)
    for text in texts:
        for group in {m.lastindex for m in pattern.finditer(text)}:
            held[group - 1] += 1
    return {stem: math.log1p(len(texts) / df) for stem, df in zip(stems, held) if df}


def snippet(text: str, terms: list[str], width: int = 160, weights: dict[str, float] | None = None) -> str:
    """One line of ``text`` of at most ``width`` characters around the stretch that holds the
    most of the query's words (each stem weighed by ``weights``, :func:`term_weights`; else alike):
    for "where does Leah live now" a turn's "Leah says …" and "Leah moved to Boulder" both, not
    its first "Leah" alone. An ellipsis marks each end that leaves text out."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    start = _window_start(flat, terms, width - 2, weights or {})  # room for two ellipses
    if start == 0:
        return flat[:width - 1] + "…"
    if len(flat) - start <= width - 1:  # the stretch reaches the end: the line ends with the text
        return "…" + flat[len(flat) - (width - 1):]
    return "…" + flat[start:start + width - 2] + "…"


def _window_start(flat: str, terms: list[str], inner: int, weights: dict[str, float]) -> int:
    """Where a line of ``inner`` characters starts so that it holds the best stretch of matches:
    the most weight of distinct stems within ``inner`` characters, then the most matches, then the
    earliest; a quarter of the line, at most, before it (what follows a query's words is likelier
    the answer than what precedes them). 0 when nothing matches."""
    pattern, stems = term_pattern(terms), _stems(terms)
    matches = list(pattern.finditer(flat)) if pattern else []
    best, best_key = (0, 0), (-1.0, 0)
    for i, first in enumerate(matches):
        inside = [first]
        for m in matches[i + 1:]:
            if m.end() - first.start() > inner:
                break
            inside.append(m)
        groups = {m.lastindex or 1 for m in inside}
        key = (sum(weights.get(stems[g - 1], 1.0) for g in groups), len(inside))
        if key > best_key:
            best, best_key = (first.start(), inside[-1].end()), key
    slack = max(0, inner - (best[1] - best[0]))
    return max(0, best[0] - min(slack // 2, inner // 4))
