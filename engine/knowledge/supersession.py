"""Which fact replaces which: the supersession rules, read from data, and their verdicts.

The rules are a TOML file of *slots*, predicates that admit one value at a time ("lives in",
"works at", "is married to"), shipped as ``supersession.toml`` beside this module and extended
by the user's own file (see that file for the format). :func:`verdict` compares two facts of
one subject and says whether the later one supersedes the earlier, whether they state the same
value, or whether the rules cannot tell (a conflict for the inbox). It is conservative: a pair
is ordered only when their validity spans do not overlap, and told apart only by the names
their objects hold, unless the slot says otherwise.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import date
from pathlib import Path

import platformdirs

from ..errors import RulesError
from ..text import STOPWORDS, normalize
from .extract import capitalised_spans

DEFAULT_RULES = Path(__file__).with_name("supersession.toml")
USER_RULES_NAME = "supersession.toml"
# Dropped from a predicate before it is matched: "has just moved to" is "has moved to".
_ADVERBS = frozenset("""just now finally recently actually officially also still already really currently newly
eventually since then ever""".split())
_SLOT_KEYS = {"predicates", "ends", "subjects", "objects", "free_objects", "asks", "cues"}


@dataclass(frozen=True)
class Slot:
    """Predicates of one single-valued relation, and how its objects are told apart."""

    name: str
    predicates: frozenset[str]
    ends: frozenset[str] = frozenset()
    subjects: tuple[str, ...] = ()  # the subject must hold one of these words ("favourite")
    objects: frozenset[str] = frozenset()  # a closed set of values, matched by word ("vegan")
    free_objects: bool = False  # objects that name nothing may still be told apart
    asks: frozenset[str] = frozenset()  # words of a question about this slot ("live", "job")
    cues: frozenset[str] = frozenset()  # more words of a turn about it, never of a question ("flat", "house")


@dataclass
class Rules:
    slots: dict[str, Slot]
    files: list[Path] = field(default_factory=list)  # where they were read from, the default first

    def slot_of(self, subject: str, predicate: str, obj: str) -> tuple[Slot, bool] | None:
        """The slot a fact's predicate belongs to and whether it ends a value (rather than
        stating one); None for a multi-valued predicate."""
        words = set(_words(subject))
        forms = fact_forms(predicate, obj)
        for slot in self.slots.values():
            if slot.subjects and not words & set(slot.subjects):
                continue
            if slot.objects and value_word(obj, slot) is None:
                continue
            if not slot.predicates.isdisjoint(forms):
                return slot, False
            if not slot.ends.isdisjoint(forms):
                return slot, True
        return None


@lru_cache(maxsize=65_536)
def predicate_form(predicate: str) -> str:
    """A predicate as the rules hold it: lower case, adverbs dropped."""
    return " ".join(w for w in _words(predicate) if w not in _ADVERBS)


# The particles and prepositions a fact's object may open with that belong to its verb: the extractor
# takes one particle into the predicate, so "I broke up with Tom" is "broke up" "with Tom" and "I moved
# back to Leeds" is "moved" "back to Leeds"; the rules write "broke up with", "moved back to".
_OBJECT_LEADS = frozenset("with of from to into in on at back away out up off".split())


@lru_cache(maxsize=65_536)
def fact_forms(predicate: str, obj: str) -> frozenset[str]:
    """The forms of a fact's predicate the rules look up (:func:`predicate_forms`), also with the one or
    two words of particles and prepositions its object opens with ("broke up" "with Tom" → "broke up
    with", "moved" "out of Leith" → "moved out of")."""
    forms = predicate_forms(predicate)
    lead: list[str] = []
    for word in _words(obj)[:2]:
        if word not in _OBJECT_LEADS:
            break
        lead.append(word)
    return forms | {f"{form} {' '.join(lead[:n])}" for form in forms for n in range(1, len(lead) + 1)}


# A perfect's auxiliary, read past when a verb follows (see predicate_forms); "has" alone ("has a
# dog") stays.
_PERFECT = frozenset("has have had".split())


@lru_cache(maxsize=65_536)
def predicate_forms(predicate: str) -> frozenset[str]:
    """The forms of a fact's predicate the rules look up: :func:`predicate_form`, with "have" read
    as "has" ("have lived in" is "has lived in"), and without a leading "has"/"have"/"had" ("has
    left" ends what "left" ends, "had moved to" states what "moved to" states). The rules' own
    keep theirs: "has lived in" (a home still held) is no "lived in" or "had lived in" (one left)."""
    form = predicate_form(predicate)
    words = form.split()
    if len(words) < 2 or words[0] not in _PERFECT:
        return frozenset({form})
    return frozenset({form, " ".join(["has", *words[1:]]) if words[0] == "have" else form, " ".join(words[1:])})


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", normalize(text))


def value_word(obj: str, slot: Slot) -> str | None:
    """For a slot with a closed set of values, the one this object states."""
    return next((w for w in _words(obj) if w in slot.objects), None)


def user_rules_path() -> Path:
    return platformdirs.user_config_path("mnemoscope") / USER_RULES_NAME


def load_rules(user_file: str | Path | None = None) -> Rules:
    """The default rules, extended by ``user_file`` (default: the user config directory's
    ``supersession.toml``, when it exists). Raises :class:`RulesError` for a bad file."""
    rules = Rules({})
    _merge(rules, DEFAULT_RULES)
    if user_file:
        path = Path(user_file).expanduser()
        if not path.is_file():
            raise RulesError(f"{path}: no such rules file")
        _merge(rules, path)
    elif _visible(path := user_rules_path()):
        _merge(rules, path)
    return rules


def _visible(path: Path) -> bool:
    """Whether the default rules file is there; a config folder this user may not look into
    (another user's home, a store read under a lesser account) holds none."""
    try:
        return path.is_file()
    except PermissionError:
        return False


def _merge(rules: Rules, path: Path) -> None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RulesError(f"{path}: not a readable rules file ({exc})") from None
    slots = data.get("slots")
    if not isinstance(slots, dict) or set(data) - {"slots"}:
        raise RulesError(f"{path}: expected only [slots.NAME] tables")
    for name, table in slots.items():
        if not isinstance(table, dict) or set(table) - _SLOT_KEYS:
            raise RulesError(f"{path}: slot {name!r} may hold only {', '.join(sorted(_SLOT_KEYS))}")
        lists = {key: table.get(key, []) for key in ("predicates", "ends", "subjects", "objects", "asks", "cues")}
        for key, value in lists.items():
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise RulesError(f"{path}: slot {name!r}: {key} must be a list of words")
        if not isinstance(table.get("free_objects", False), bool):
            raise RulesError(f"{path}: slot {name!r}: free_objects must be true or false")
        old = rules.slots.get(name) or Slot(name, frozenset())
        if not (old.predicates or lists["predicates"]):
            raise RulesError(f"{path}: slot {name!r} has no predicates")
        rules.slots[name] = Slot(
            name,
            old.predicates | {predicate_form(p) for p in lists["predicates"]},
            old.ends | {predicate_form(p) for p in lists["ends"]},
            tuple(dict.fromkeys(old.subjects + tuple(w.lower() for w in lists["subjects"]))),
            old.objects | {w.lower() for w in lists["objects"]},
            table.get("free_objects", old.free_objects),
            old.asks | {w.lower() for w in lists["asks"]},
            old.cues | {w.lower() for w in lists["cues"]})
    rules.files.append(path)


# -- verdicts ---------------------------------------------------------------------------------


def span(value: str | None) -> tuple[date, date] | None:
    """The days an ISO date, month or year covers ("2023-04" is April 2023); None if unknown."""
    if not value:
        return None
    m = re.match(r"(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", value)
    if not m:
        return None
    year, month, day = int(m[1]), int(m[2] or 0), int(m[3] or 0)
    try:
        if day:
            d = date(year, month, day)
            return d, d
        if month:
            end = date(year + month // 12, month % 12 + 1, 1)
            return date(year, month, 1), date.fromordinal(end.toordinal() - 1)
        return date(year, 1, 1), date(year, 12, 31)
    except ValueError:
        return None


def before(a: str | None, b: str | None) -> bool | None:
    """Whether time ``a`` is wholly before ``b`` (True), wholly after (False), or the order
    cannot be told (None: a date missing, or one inside the other, or the same day)."""
    sa, sb = span(a), span(b)
    if sa is None or sb is None:
        return None
    if sa[1] < sb[0]:
        return True
    if sb[1] < sa[0]:
        return False
    return None


def object_names(obj: str) -> set[str]:
    """The names an object holds, by key ("a flat in Kreuzberg" → {"kreuzberg"})."""
    return {" ".join(_words(s)) for s in capitalised_spans(obj, lambda key: True)}


def _content(obj: str) -> set[str]:
    return {w for w in _words(obj) if w not in STOPWORDS}


def same_value(a: str, b: str, slot: Slot) -> bool | None:
    """Whether two objects of ``slot`` state one value (True), two (False), or the rules
    cannot tell (None)."""
    if slot.objects:
        return value_word(a, slot) == value_word(b, slot)
    ca, cb = _content(a), _content(b)
    if ca == cb or (ca and cb and (ca <= cb or cb <= ca)):
        return True
    na, nb = object_names(a), object_names(b)
    if na and nb:
        return bool(na & nb)
    return False if slot.free_objects else None


@dataclass(frozen=True)
class Verdict:
    kind: str  # supersedes | superseded (the newer fact is the older in the world) | same | unordered | undecided | unrelated
    reason: str = ""


def verdict(slot: Slot, older: tuple[str, str | None], newer: tuple[str, str | None], ends: bool = False) -> Verdict:
    """What a fact (``newer``: object and valid_from) of ``slot`` does to a known one of the
    same subject (``older``). ``ends``: the newer fact ends a value ("left Acme") rather than
    stating one."""
    same = same_value(older[0], newer[0], slot)
    if ends:
        if not same:
            return Verdict("unrelated")
        order = before(older[1], newer[1])
        return Verdict("supersedes") if order else Verdict("undecided", "when it ended cannot be told from the dates")
    if same:
        return Verdict("same")
    if same is None:
        vague = older[0] if not object_names(older[0]) else newer[0]
        return Verdict("undecided", f"{vague!r} names no place or thing the rules know, so they cannot tell"
                                    " whether it is the other value in other words or a new one")
    order = before(older[1], newer[1])
    if order is None:
        return Verdict("unordered", _unordered_reason(older[1], newer[1]))
    return Verdict("supersedes") if order else Verdict("superseded")


def _unordered_reason(a: str | None, b: str | None) -> str:
    if not a or not b:
        return "one of them has no date"
    if a[:10] == b[:10]:
        return f"both hold from {a[:10]}"
    return f"{a} and {b} overlap"
