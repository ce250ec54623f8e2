"""Episodes: which items form one episodic memory, and the summary that describes it.

The default integration is a rule, not a judge: consecutive turns of the same session whose
speakers overlap join one episode until it holds ``window`` items; document chunks join while
they stay under the same heading. The LLM judge (STRONG / MODERATE / WEAK), when configured,
can merge further (:mod:`engine.knowledge.llm`). A merge only regroups items: every item keeps
its vectors, terms, edges and provenance, and :meth:`KnowledgeArea.split_episode` undoes it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..records import Item
from ..text import sentences
from .records import Event

SUMMARY_CHARS = 300


@dataclass
class EpisodeDraft:
    session: str
    items: list[Item] = field(default_factory=list)

    @property
    def participants(self) -> set[str]:
        return {i.speaker for i in self.items if i.speaker}


def session_of(item: Item) -> str:
    """The grouping key: a conversation's session, a document's heading path, else the source."""
    if item.kind == "turn":
        session = item.meta.get("session")
        return f"session {session}" if session is not None else (item.timestamp or "")[:10]
    return item.title or ""


def group_items(items: list[Item], window: int) -> list[EpisodeDraft]:
    """Split a source's items (in position order) into episode drafts."""
    drafts: list[EpisodeDraft] = []
    for item in sorted(items, key=lambda i: i.position):
        session = session_of(item)
        current = drafts[-1] if drafts else None
        joins = (
            current is not None and current.session == session and len(current.items) < window
            and (item.kind != "turn" or not current.participants or item.speaker in current.participants
                 or len(current.participants) < 2)
        )
        if joins:
            current.items.append(item)
        else:
            drafts.append(EpisodeDraft(session, [item]))
    return drafts


def summarize(items: list[Item], events: list[Event]) -> str:
    """A rule-based summary: for a conversation who, when and the leading actions; for a
    document section its heading and opening sentences."""
    if not any(i.kind == "turn" for i in items):
        opening = " ".join(sentences(" ".join(i.text for i in items))[:2])
        heading = items[0].title.split(" › ")[-1] if items[0].title else ""
        return _cut(f"{heading}: {opening}" if heading else opening)
    speakers = list(dict.fromkeys(i.speaker for i in items if i.speaker))
    days = sorted({i.timestamp[:10] for i in items if i.timestamp})
    head = " and ".join(speakers) if speakers else (items[0].title or "")
    when = f" ({days[0]}{' to ' + days[-1] if len(days) > 1 else ''})" if days else ""
    actions = _leading_actions(events)
    body = "; ".join(actions) if actions else " ".join(items[0].text.split()[:30])
    return _cut(f"{head}{when}: {body}" if head or when else body)


def _cut(text: str) -> str:
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _leading_actions(events: list[Event], limit: int = 4) -> list[str]:
    """The most informative distinct actions: longer ones first, kept in the order they happened."""
    seen = Counter()
    distinct = []
    for e in events:
        if e.action and not seen[e.action]:
            distinct.append(e)
        seen[e.action] += 1
    best = sorted(distinct, key=lambda e: -len(e.action.split()))[:limit]
    return [e.action for e in distinct if e in best]
