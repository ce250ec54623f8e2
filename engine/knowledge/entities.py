"""Entity names: one normalised key for facts, episodes and items, and the in-memory registry.

The reference kept two vocabularies (participants in original case, fact entities lower-cased)
and so never connected facts to the chunks that state them. Here every extractor links through
:func:`entity_key`, and the :class:`EntityRegistry` finds known names inside any text (a
gazetteer over word n-grams), so a passage that writes "american psychological association" in
lower case still reaches the passage titled "American Psychological Association".
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import AbstractSet

import numpy as np

# The short forms of a name live with the text helpers, since fused's speaker feature reads them too;
# the knowledge area takes them from here.
from ..text import STOPWORDS, nickname_of, one_shortens_the_other, short_forms, words  # noqa: F401

_LEADING = {"the", "a", "an", "my", "our", "your", "his", "her", "their", "its"}
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
MAX_GAZETTEER_WORDS = 5


def entity_key(name: str) -> str:
    """The normalised name: case-folded words, possessive and leading article dropped."""
    w = words(_PAREN.sub("", name)) or words(name)
    while len(w) > 1 and w[0] in _LEADING:
        w = w[1:]
    return " ".join(w)


def gazetteer_worthy(key: str, kind: str) -> bool:
    """Whether to look for this name, in any case, inside other texts: names of two words or
    more (a one-word name is found where it is capitalised; in lower case it is a common word)."""
    return " " in key and kind in ("speaker", "title", "name")


def name_vector(key: str, dim: int = 256) -> np.ndarray:
    """Character-trigram hash vector of a name, L2-normalised: cheap similarity for linking."""
    vec = np.zeros(dim, dtype=np.float32)
    padded = f"  {key} "
    for i in range(len(padded) - 2):
        h = zlib.crc32(padded[i:i + 3].encode("utf-8"))
        vec[h % dim] += 1.0
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec


@dataclass
class EntityRegistry:
    """key → id of every entity, with a pending layer for the ingest transaction in flight.

    Writes go to ``pending`` until :meth:`commit` (after the store committed); a failed ingest
    calls :meth:`rollback` and the registry is exactly as before.
    """

    ids: dict[str, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    keys: dict[int, str] = field(default_factory=dict)  # id → key (the inverse of ``ids``)
    kinds: dict[int, str] = field(default_factory=dict)
    gazetteer: set[str] = field(default_factory=set)
    by_word: dict[str, set[int]] = field(default_factory=dict)  # candidate generation for linking
    pending: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # key → (id, name, kind)
    pending_gazetteer: set[str] = field(default_factory=set)
    first_words: set[str] = field(default_factory=set)  # a cheap filter before joining n-grams
    speakers: set[int] = field(default_factory=set)  # whose short forms a question may call them by

    def load(self, rows: list[tuple[int, str, str, str]]) -> None:
        """The registry of these rows alone."""
        for table in (self.ids, self.names, self.keys, self.kinds, self.gazetteer, self.by_word, self.first_words,
                      self.speakers):
            table.clear()
        self.take_in(rows)

    def take_in(self, rows: list[tuple[int, str, str, str]]) -> None:
        """Rows another process added or changed (a kind grows stronger, never weaker), on top of
        what is loaded: the same registry as :meth:`load` of every row."""
        self.rollback()
        for eid, key, name, kind in rows:
            self._add(eid, key, name, kind)

    def _add(self, eid: int, key: str, name: str, kind: str) -> None:
        self.ids[key], self.names[eid], self.keys[eid], self.kinds[eid] = eid, name, key, kind
        if kind == "speaker":
            self.speakers.add(eid)
        else:
            self.speakers.discard(eid)
        if gazetteer_worthy(key, kind):
            self.gazetteer.add(key)
            self.first_words.add(key.split(" ", 1)[0])
        for w in set(key.split()):
            if w not in STOPWORDS:
                self.by_word.setdefault(w, set()).add(eid)

    def lookup(self, key: str) -> int | None:
        hit = self.ids.get(key)
        if hit is None and key in self.pending:
            return self.pending[key][0]
        return hit

    def set_kind(self, eid: int, kind: str) -> None:
        """A known entity's kind, grown stronger by a write (a name mentioned first that speaks
        later): held as a load of its row would hold it (a tag named later joins the gazetteer)."""
        self._add(eid, self.keys[eid], self.names[eid], kind)

    def speaker_called(self, short: str) -> int | None:
        """The one speaker whose first name ``short`` (a key no entity has) is a short form of
        (:func:`nickname_of`): "Gen" in a question is Genevieve when she speaks and is only ever
        called "Gen" in a vocative the extractor takes no name from ("Gen, are you alive?")."""
        found = nickname_of(short, [self.keys[e] for e in self.speakers])
        return None if found is None else self.ids[found]

    def stage(self, eid: int, key: str, name: str, kind: str) -> None:
        if key not in self.ids:
            self.pending[key] = (eid, name, kind)
            if gazetteer_worthy(key, kind):
                self.pending_gazetteer.add(key)
                self.first_words.add(key.split(" ", 1)[0])

    def commit(self) -> None:
        for key, (eid, name, kind) in self.pending.items():
            self._add(eid, key, name, kind)
        self.rollback()

    def rollback(self) -> None:
        self.pending.clear()
        self.pending_gazetteer.clear()

    def find_in(self, text: str, unknown: AbstractSet[str] = frozenset()) -> list[str]:
        """Known names (keys) occurring in ``text`` as whole-word runs, longest first, no overlaps
        (those in ``unknown`` taken as not known)."""
        w = words(text)
        found: list[str] = []
        i = 0
        first = self.first_words
        while i < len(w):
            if w[i] not in first:
                i += 1
                continue
            for n in range(min(MAX_GAZETTEER_WORDS, len(w) - i), 1, -1):
                gram = " ".join(w[i:i + n])
                if (gram in self.gazetteer or gram in self.pending_gazetteer) and gram not in unknown:
                    found.append(gram)
                    i += n
                    break
            else:
                i += 1
        return found

    def candidates(self, key: str, limit: int = 200) -> set[int]:
        """Entities sharing a content word with ``key`` (words shared by too many are skipped)."""
        out: set[int] = set()
        for w in set(key.split()):
            ids = self.by_word.get(w)
            if ids and len(ids) <= limit:
                out |= ids
        return out
