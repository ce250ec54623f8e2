"""The offline, rule-based extractor: names, facts and 5W1H events from one item, no model.

What it reads, in order: the speaker (a person entity; "I", "my", "we" resolve to them), the
title (a passage's own entity; "he", "she", "it" at a clause start resolve to it), capitalised
spans and known names (entities), time expressions (resolved against the turn's date), and per
clause a subject–verb–object pattern (a fact, and an event for the episode). An image caption
is read as the speaker sharing a photo of what it shows.

It is deliberately shallow (no tagger, no parser): fast (well under a millisecond per turn) and
predictable, with its quality measured by ``mnemoscope eval extraction`` against LoCoMo's
annotations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ..records import Item
from ..text import STOPWORDS, sentences
from .entities import EntityRegistry, entity_key
from .records import Event
from .temporal import find_times

# -- word classes (closed lists; open classes are guessed from position) ----------------------

_AUX = frozenset("""am is are was were be been being have has had will would can could should might must may shall
do does did 'm 're 's 've 'd 'll not n't never just really also finally recently actually still always even already
totally definitely so currently usually often sometimes gonna""".split())
_BE = frozenset("am is are was were be been being 'm 're 's".split())
_DETERMINERS = frozenset("a an the some any this that these those".split())
_PARTICLES = frozenset("to at in on for with about into from up out by of over off around through".split())
_CHAIN = frozenset("""going want wants wanted plan plans planning planned hope hoping trying try tried decided
started start starts begin began love loves loved like likes liked enjoy enjoys enjoyed need needs needed""".split())
_CLAUSE_BREAK = frozenset("and but so because while when which who although though since until after before if as or".split())
_LEAD_SKIP = frozenset("""yeah yes oh well also actually so and but hey wow omg ok okay haha lol hi hello thanks thank
honestly anyway plus then now btw cool great awesome nice right sure absolutely totally""".split())
_OPINION = frozenset("think guess mean bet know see wonder agree hope".split())
_PRONOUN_SUBJECTS = frozenset("he she it they".split())
_MONTHS_WEEKDAYS = frozenset("""monday tuesday wednesday thursday friday saturday sunday january february march april
may june july august september october november december""".split())
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll hey hi hello wow oh yeah yes no thanks thank ok okay omg lol haha good great awesome nice
    cool sure so and but or also well that this these those what when where why how who which it its my our your
    his her their we they he she you me just really absolutely congrats congratulations sounds love glad sorry""".split()
) | _MONTHS_WEEKDAYS

_TOKEN = re.compile(r"[^\W_][\w'’\-&]*|[.,;:!?()\"]")
_CONTRACTION = re.compile(r"\b(I|i|we|We|you|You|they|They|he|He|she|She|it|It|that|That)['’](m|re|ve|ll|d|s)\b")
_CAPITAL_SPAN = re.compile(
    r"\b(?:[A-Z][\w'’\-&.]*[\w])(?:\s+(?:(?:of|the|de|da|von|van|for|la|le|du|del|&)\s+)*[A-Z0-9][\w'’\-&.]*[\w]?)*"
)
_LOCATION = re.compile(r"\b(?:in|at|to|from|near)\s+(?:the\s+)?([A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+)*)")
_REASON = re.compile(r"\b(?:because|since|so that|in order to|to help|as a way to)\s+([^.,;!?]+)", re.I)
_METHOD = re.compile(r"\b(?:by|using|through|via)\s+([^.,;!?]+)", re.I)
_DASH = re.compile(r"\s[-–—]\s|[–—]")
_LEADING_MARKS = " \"'(-*•#>0123456789.)"
_EXPAND = {"m": "am", "re": "are", "ve": "have", "ll": "will", "d": "would", "s": "is"}
_THIRD_PERSON = {"am": "is", "'m": "is", "'s": "is", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would"}
MAX_OBJECT_WORDS = 12


@dataclass
class FactDraft:
    subject: str
    predicate: str
    object: str
    subject_key: str
    object_key: str | None
    time: str | None = None


@dataclass
class Extraction:
    """What one item yields: (surface, key, kind, role) mentions, fact drafts and events."""

    mentions: list[tuple[str, str, str, str]] = field(default_factory=list)
    facts: list[FactDraft] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def _expand(text: str) -> str:
    return _CONTRACTION.sub(lambda m: f"{m.group(1)} {_EXPAND[m.group(2).lower()]}", text.replace("’", "'"))


def capitalised_spans(sentence: str, known: Callable[[str], bool] = lambda key: False) -> list[str]:
    """Names written with capitals; a sentence's first word alone counts only if ``known``."""
    out = []
    for m in _CAPITAL_SPAN.finditer(sentence):
        span = m.group(0).rstrip(".")
        parts = span.split()
        while parts and (parts[0].lower() in _NOT_NAMES or parts[0].lower() in STOPWORDS or parts[0].isdigit()):
            parts = parts[1:]
        while parts and (parts[-1].lower() in ("of", "the", "for", "&") or parts[-1].isdigit()):
            parts = parts[:-1]
        if not parts:
            continue
        at_start = not sentence[: m.start()].strip(_LEADING_MARKS)
        if len(parts) == 1 and (at_start and len(span.split()) == 1 and not known(entity_key(parts[0]))
                                or parts[0].lower() in STOPWORDS):
            continue
        if len(parts) == 1 and parts[0].lower() in _MONTHS_WEEKDAYS:
            continue
        out.append(" ".join(parts))
    return out


class RuleExtractor:
    """Names, facts and events by pattern; ``registry`` supplies the names already known."""

    name = "rule"

    def __init__(self, registry: EntityRegistry) -> None:
        self.registry = registry
        self.local: set[str] = set()  # names met earlier in the batch being ingested
        self.speakers: list[str] = []  # speakers of the batch so far, latest last: "you" is the one before
        self._you = ""

    def reset(self) -> None:
        """Forget the batch (its names and speakers) before reading the next source."""
        self.local.clear()
        self.speakers.clear()

    def addressee(self, speaker: str) -> str:
        """Who a turn speaks to: the latest earlier speaker who is someone else."""
        return next((s for s in reversed(self.speakers) if s != speaker), "")

    def known(self, key: str) -> bool:
        return key in self.local or self.registry.lookup(key) is not None

    def extract(self, item: Item) -> Extraction:
        out = Extraction()
        speaker = (item.speaker or "").strip()
        if speaker:
            out.mentions.append((speaker, entity_key(speaker), "speaker", "speaker"))
            self._you = self.addressee(speaker)
            if not self.speakers or self.speakers[-1] != speaker:
                self.speakers.append(speaker)
        title = item.title.split(" › ")[-1].strip() if item.title and item.kind != "turn" else ""
        if title:
            out.mentions.append((title, entity_key(title), "title", "title"))
        for tag in item.tags:
            if not tag.startswith("session:"):
                out.mentions.append((tag, entity_key(tag), "tag", "tag"))
        for link in item.links:
            out.mentions.append((link, entity_key(link), "name", "link"))
        text = _expand(item.text)
        caption = item.meta.get("image_caption")
        seen = {m[1] for m in out.mentions}
        self.local |= seen
        for sentence in sentences(text):
            for span in capitalised_spans(sentence, self.known):
                key = entity_key(span)
                if key and key not in seen:
                    seen.add(key)
                    self.local.add(key)
                    out.mentions.append((span, key, "name", "mention"))
            self._clauses(sentence, item, speaker, title, out)
        for key in self.registry.find_in(text + (" " + caption if caption else "")):
            if key not in seen:
                seen.add(key)
                out.mentions.append((key, key, "name", "mention"))
        if caption and speaker:
            out.events.append(Event(item_id=item.id or 0, participants=[speaker], action=f"{speaker} shared {caption}",
                                    time=_day(item.timestamp), method="photo"))
        return out

    # -- clauses ------------------------------------------------------------------------------

    def _clauses(self, sentence: str, item: Item, speaker: str, title: str, out: Extraction) -> None:
        if sentence.rstrip().endswith("?"):
            return
        times = find_times(sentence, item.timestamp)
        when = times[0].value if times else None
        tokens = _TOKEN.findall(_DASH.sub(", ", sentence)) + ["."]
        clause: list[str] = []
        carry: tuple[str, str] | None = None  # the subject a verb after "and" shares
        for n, tok in enumerate(tokens):
            low = tok.lower()
            if low in ("and", "or") and clause and not _starts_clause(tokens[n + 1]):
                clause.append(tok)  # a list inside the object: "my husband and kids"
            elif tok in ",;:.!?()\"" or low in _CLAUSE_BREAK:
                if clause:
                    carry = self._clause(clause, sentence, item, speaker, title, when, times, carry, out)
                clause = []
            else:
                clause.append(tok)

    def _subject(self, words_: list[str], speaker: str, title: str) -> tuple[str, str, int] | None:
        """(subject text, subject entity key, words used) at the clause start, or None."""
        first = words_[0]
        low = first.lower()
        if low in ("i", "we") and speaker:
            return speaker, entity_key(speaker), 1
        if low == "gonna" and speaker:  # "Gonna continue my studies": the speaker, subject dropped
            return speaker, entity_key(speaker), 0
        if low in ("my", "our") and speaker and len(words_) > 2:
            n = 1
            while n < len(words_) - 1 and n <= 3 and words_[n].lower() not in _AUX and not words_[n].lower().endswith("ed"):
                n += 1
            if n == 1:
                return None
            return f"{speaker}'s {' '.join(words_[1:n])}", entity_key(speaker), n
        if low in _PRONOUN_SUBJECTS and title[:1].isupper():
            return title, entity_key(title), 1
        if first[:1].isupper() and low not in _NOT_NAMES and low not in STOPWORDS:
            n = 1
            while n < len(words_) and (words_[n][:1].isupper() or words_[n].lower() in ("of", "the", "de", "&")):
                n += 1
            name = " ".join(words_[:n])
            return (name, entity_key(name), n) if n > 1 or self.known(entity_key(name)) else None
        if low == "the" and len(words_) > 1 and words_[1][:1].isupper():
            n = 2
            while n < len(words_) and (words_[n][:1].isupper() or words_[n].lower() in ("of", "the", "de", "&")):
                n += 1
            name = " ".join(words_[1:n])
            return name, entity_key(name), n
        return None

    def _clause(self, words_: list[str], sentence: str, item: Item, speaker: str, title: str, when: str | None,
                times: list, carry: tuple[str, str] | None, out: Extraction) -> tuple[str, str] | None:
        """Read one clause into a fact (and an event); returns its subject for the next clause."""
        while words_ and words_[0].lower() in _LEAD_SKIP:
            words_ = words_[1:]
        if len(words_) < 2:
            return None
        subject = self._subject(words_, speaker, title)
        if subject is None and _verb_like(words_[0]):
            shared = carry or ((speaker, entity_key(speaker)) if speaker and words_[0].endswith("ing") else None)
            subject = (*shared, 0) if shared else None  # "… and encouraged students", "Researching agencies"
        if subject is None:
            return None
        subj_text, subj_key, used = subject
        rest = words_[used:]
        verb: list[str] = []
        while rest and rest[0].lower() in _AUX:
            verb.append(rest.pop(0).lower())
        copula = any(v in _BE for v in verb) and bool(rest) and not rest[0].lower().endswith(("ed", "ing"))
        if not copula:
            if not rest or not rest[0].isalpha() or not rest[0].islower() or rest[0] in _DETERMINERS:
                return None
            main = rest.pop(0).lower()
            if main in _OPINION:
                return None
            verb.append(main)
            if main in _CHAIN and len(rest) >= 2 and rest[0].lower() == "to":
                verb += [rest.pop(0).lower(), rest.pop(0).lower()]
            if rest and rest[0].lower() in _PARTICLES:
                verb.append(rest.pop(0).lower())
        obj_words = _object(rest, speaker, self._you if speaker else "", times)
        if not obj_words or not verb:
            return None
        predicate = " ".join(_THIRD_PERSON.get(v, v) for v in verb)
        obj = " ".join(obj_words)
        obj_key = entity_key(obj) if len(obj_words) <= 4 else None
        out.facts.append(FactDraft(subj_text, predicate, obj, subj_key, obj_key, when))
        if not copula:
            out.events.append(_event(item, subj_text, predicate, obj, sentence, when))
        return subj_text, subj_key


def _verb_like(word: str) -> bool:
    """A lower-case word that can open a verb phrase (guessed from its ending or a closed list)."""
    low = word.lower()
    return word.islower() and word.isalpha() and (low.endswith(("ed", "ing")) or low in _CHAIN or low in _AUX)


def _starts_clause(word: str) -> bool:
    """Whether the word after "and"/"or" opens a new clause rather than continuing a list."""
    low = word.lower()
    return low in _PRONOUN_SUBJECTS or low in ("i", "we", "you", "my", "our", "then") or _verb_like(word) \
        or word in ",;:.!?()\""


def _object(rest: list[str], speaker: str, you: str, times: list) -> list[str]:
    time_words = {w.lower() for t in times for w in t.text.split()}
    out: list[str] = []
    for w in rest:
        low = w.lower()
        if low in time_words or len(out) >= MAX_OBJECT_WORDS:
            break
        if not out and low in _DETERMINERS:
            continue
        if speaker and low in ("my", "our"):
            w = f"{speaker}'s"
        elif speaker and low in ("me", "myself", "us"):
            w = speaker
        elif you and low in ("you", "yourself"):
            w = you
        elif you and low == "your":
            w = f"{you}'s"
        out.append(w)
    return out


def _day(timestamp: str | None) -> str | None:
    return timestamp[:10] if timestamp else None


def _event(item: Item, subject: str, predicate: str, obj: str, sentence: str, when: str | None) -> Event:
    names = [subject] + [s for s in capitalised_spans(sentence) if s != subject]
    if item.speaker and item.speaker not in names:
        names.append(item.speaker)
    loc = _LOCATION.search(sentence)
    reason = _REASON.search(sentence)
    method = _METHOD.search(sentence)
    return Event(item_id=item.id or 0, participants=names, action=f"{subject} {predicate} {obj}",
                 time=when or _day(item.timestamp), location=loc.group(1) if loc else None,
                 reason=reason.group(1).strip() if reason else None, method=method.group(1).strip() if method else None)
