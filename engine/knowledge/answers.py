"""Slot facts an answer states by naming only the value the question before it asked for.

"Where are you living now?" — "Still in Jesmond, on Osborne Road." states a home, but the answer
has no clause of its own: the slot is in the question, the value in the answer. Read so only when
the question leaves no doubt whose slot it is and when it holds:

* the question is the other speaker's, that day, and its last sentence asks, in the present, about
  the one answering as its subject: "Where are you living (now)?", "Where do you work these days?",
  "Who are you working for?", "Who are you dating?", "Who are you seeing now?" (not "Who are you
  seeing?", which a patient is asked too). The question ends there: "Where did you live before
  Portland?" (past), "Where will you live?" (a plan), "Do you know where Hanne lives?" or "Where do
  you think Rosa works?" (someone else's slot) ask something else, and state nothing;
* the answer's first sentence names a value of the slot's kind with nothing before it but an
  opening word, a preposition, an article, plain nouns ("A rented flat in Kralingen") or the
  answerer's own "I'm" / "I've got" ("I've got a one-bed flat in Lancaster"): a place (a name not
  known as a person) for a home or an employer, a person's name for a partner. A negation, a
  hedge or a past tense before it ("Not sure yet, maybe Leeds", "I used to be in Leeds"), another
  subject ("My sister's in Leeds") or "with Tom" state nothing.
"""

from __future__ import annotations

import re
from typing import Callable

from .entities import entity_key
from .records import FactDraft

# The question's slot, by its words: the verb right after "you", then nothing but a time word.
_NOW = r"(?: (?:now|these days|nowadays|at the moment|currently|right now|then|again))?"
_END = r"(?:, [A-Z][\w'’-]*)?\s*\?$"  # "…, Dan?": a vocative, the one answering
_OPEN = r"(?:^|[,:;] )(?:(?i:and|so|but|then|well|oh|anyway|okay|ok|right|hey),? )*"
_ASKS = (
    ("home", "lives in", re.compile(_OPEN + r"(?i:where) (?:are you|have you been|you) (?:still |now |currently )?living"
                                    + _NOW + _END)),
    ("home", "lives in", re.compile(_OPEN + r"(?i:where) do you (?:still |now |currently )?live" + _NOW + _END)),
    ("employer", "works at", re.compile(_OPEN + r"(?i:where) (?:are you|have you been|you) (?:still |now |currently )?"
                                        r"working" + _NOW + _END)),
    ("employer", "works at", re.compile(_OPEN + r"(?i:where) do you (?:still |now |currently )?work" + _NOW + _END)),
    ("employer", "works at", re.compile(_OPEN + r"(?i:who) (?:are you|have you been|you) (?:still |now |currently )?"
                                        r"working for" + _NOW + _END)),
    ("employer", "works at", re.compile(_OPEN + r"(?i:who) do you (?:still |now |currently )?work for" + _NOW + _END)),
    # "You two still in the Jesmond place?", "Are you still in the flat on Osborne Road?": a home asked after by
    # its kind of place, not "Are you still in the band?"
    ("home", "lives in", re.compile(_OPEN + r"(?:(?i:are) )?(?i:you)(?: two| both| guys| all)? (?:still|now) (?:living )?in "
                                    r"(?:the|your) (?:[\w'’-]+ ){0,3}(?:place|flat|house|apartment|bach|room|cottage|studio)"
                                    r"(?: (?:in|on) [A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*)?" + _NOW + _END)),
    ("partner", "is dating", re.compile(_OPEN + r"(?i:who) (?:are you|you) (?:dating|going out with)" + _NOW + _END)),
    ("partner", "is dating", re.compile(_OPEN + r"(?i:who) (?:are you|you) seeing (?:now|these days|nowadays|"
                                        r"at the moment)" + _END)),
)
# What may come before the value in the answer's first sentence.
_OPENING = frozenset("still yes yeah yep no nope just now only oh well um so currently".split())
_OWN = frozenset("i we am are have has got".split())  # "I'm in …", "we're in …", "I've got a flat in …"
_LINKS = frozenset("at in on near by the a an".split())
_NEVER = frozenset("""he she they it you my our his her their your with from to for of not never maybe probably
perhaps hoping hope might may will would going was were used don't didn't haven't can't won't wasn't think guess
thinking planning sure until""".split())
_TITLES = frozenset("dr doctor mr mrs ms miss prof professor nurse".split())


def asked_slot(question: str) -> tuple[str, str] | None:
    """The slot a question asks of the one it is put to, and the predicate an answer states, when
    it asks so in the present and about nobody else (see the module's rules)."""
    return next(((slot, predicate) for slot, predicate, pattern in _ASKS if pattern.search(question.strip())), None)


def answered(question: str, answer: str, spans: list[str], speaker: str, asker: str,
             is_person: Callable[[str], bool]) -> list[FactDraft]:
    """The slot fact the ``answer``'s first sentence states by naming the value ``question`` asked
    for: ``spans`` are its capitalised names, ``speaker`` answers, ``asker`` asked, ``is_person``
    tells a name known as a person ("Where are you living?" — "A rented flat in Kralingen." →
    the speaker *lives in* Kralingen)."""
    slot = asked_slot(question)
    names = [v for v in (_unopened(span) for span in spans) if v]
    if slot is None or not names or not speaker or speaker == asker:
        return []
    value = names[0]
    words = re.findall(r"[\w'’-]+", answer[:answer.find(value)].lower().replace("’", "'"))
    if value in (speaker, asker) or value.endswith(("'s", "’s")) or not _plain_before(words, slot[0] == "partner"):
        return []
    person = is_person(value) or len(value.split()) <= 2 and slot[0] == "partner"
    if (slot[0] == "partner") != person or value.split()[0].lower().rstrip(".") in _TITLES \
            or value.startswith("The ") and slot[0] == "partner":
        return []
    return [FactDraft(speaker, slot[1], value, entity_key(speaker), entity_key(value))]


def _unopened(span: str) -> str:
    """A name without the opening words a sentence's capital swept into it ("Still", "Yes")."""
    words = span.split()
    while words and words[0].lower() in _OPENING:
        words = words[1:]
    return " ".join(words)


def _plain_before(words: list[str], bare: bool) -> bool:
    """Whether the words before the value only open the answer, link to it or are the answerer's
    own "I'm" / "I've got" (for a partner, ``bare``: only opening words, "Tamsin." or "Still Tamsin.")."""
    if bare:
        return all(w in _OPENING for w in words)
    if any(w in _NEVER for w in words):
        return False
    rest = [w for w in words if w not in _OPENING]
    if rest[:1] in (["i"], ["we"]):
        rest = rest[1:]
        if not rest or rest[0] not in _OWN:
            return False
        rest = [w for w in rest if w not in _OWN]
    return not rest or rest[-1] in _LINKS
