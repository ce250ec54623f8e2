"""Facts of one slot that a clause states in other words: a home, an employer, a job title.

People rarely announce a change in the words of ``supersession.toml``: "Berlin is home now",
"I'm now head baker at Café Morgen", "I still love living in Lyon", "I work at Le Fournil as a
pastry chef". The extractor reads such clauses literally ("Berlin —is→ home now"), which no
slot admits, so supersession cannot end the older value. Here each such fact gains a restated
twin in a slot's own words, beside it, never instead of it:

* "<Place> is (now) home", said by someone → that someone *lives in* the place;
* "<subject> loves/likes/enjoys living in <Place>", "<subject> lives with <someone> in <Place>"
  → *lives in* the place;
* "<subject> is (now) (a|the) <title> at|for (the) <Name>" → *works at* the name and *works as* the
  title ("head baker"); the title is at most four lower-case words, none an adverb or pronoun,
  two at least before "for", and the name is written with capitals and is nobody's: "I'm
  always here for you", "I'm so happy for Caroline" and "Lisbon is a dream for a pescatarian"
  stay as they are;
* "… works at <Name> as a <title>", "… has taken/got/started a (new) job as a <title>" (the
  clause after "as", see :func:`title_after_as`) → *works as* the title;
* "<subject> rents/shares (a) … room/flat/house … in <Place>" → *lives in* the place (one does
  not rent or share a flat one does not live in; "bought" or "has" a house may be a second one,
  and "rented a cottage" or one "for the summer" is a holiday);
* "<subject> is (now) in a … flat/house/cottage … in <Place>" ("we're in a house in Portobello now")
  → *lives in* the place (not a room, which may be a hotel's, nor one "for the week");
* "<subject> runs/manages/heads/leads the <part of a workplace> at|for <Name>" ("I run the kitchen at
  Ostra now") → *works at* the name; only a part a business has (kitchen, bar, desk, ward …), not
  "the book club at St Mary's";
* "they (have) made me (a|an|the) <title> at|of|for <Name>", "<Name> promoted me to …" (see
  :func:`appointed`) → the speaker *works as* the title and *works at* the name.

What no pattern here reads stays a plain fact: a missing slot fact costs an unordered change,
a wrong one a wrong supersession.
"""

from __future__ import annotations

import dataclasses
import re

from .entities import entity_key
from .records import FactDraft

_HOME_ADVERBS = frozenset("now really finally truly".split())  # "home now", "really home": still a home
_LIKING = re.compile(r"^(?:\w+ )*(?:loves|likes|enjoys|is loving|is enjoying)$")
_LIVING_IN = re.compile(r"^living in (?P<place>[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)$")
_LIVING_WITH = re.compile(r"^(?:is |has been |has )?(?:\w+ )?(?:lives|living|lived) with$")
_WITH_IN = re.compile(r"^[\w'’ ]+? in (?P<place>[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)")
_COPULA = frozenset({"is", "is now", "is still", "has been", "has now been", "is currently"})
_TITLE_AT = re.compile(r"^(?:now |still |currently )?(?:(?:a|an|the) )?"
                       r"(?P<title>[a-z][a-z\-]*(?: [a-z][a-z\-]*){0,3}) (?P<link>at|for) (?:the )?"
                       r"(?P<name>(?:St\. |The )?[A-Z][\w'’\-&]*(?: [A-Z][\w'’\-&]*)*)")
# No job title holds these: "I'm always here for you", "I'm so happy for Caroline", "a fan of …", "a
# volunteer at the Oxfam shop" (no employer).
_NOT_TITLES = frozenset("""a an the my our your his her their its this that it some any one lot bit part fan member
guest visitor customer regular student volunteer so very too also always still just even quite pretty really here there now
around away back home out""".split())
# A name that owns what follows ("the Harrisons' wedding", "Tom's bakery") is no employer of the subject's.
_POSSESSIVE = ("'s", "’s", "s'", "s’")
_WORK = re.compile(r"\bwork(?:s|ed|ing)? (?:at|for)$")
_RENTS = re.compile(r"^(?:is |has been )?(?:\w+ )?(?:rents|renting|shares|sharing)$")  # not "rented": a holiday
_STAY = re.compile(r"\bfor (?:a|the|two|three|our|my|his|her|their) (?:\w+ )?(?:night|week|weekend|holiday|summer|month|"
                   r"trip|break)s?\b|\bholiday")
_HOME_IN = re.compile(r"^(?:[a-z\-]+ ){0,3}(?:room|flat|house|apartment|studio|cottage|bedsit|place) in "
                      r"(?P<place>[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)")
_NAME = r"(?:St\. |The )?[A-Z][\w'’\-&]*(?: [A-Z][\w'’\-&]*)*"
_LIVES_IN_A = re.compile(r"^(?:now |still )?in (?:a|an|the|our|my|his|her|their) (?:[a-z\-]+ ){0,3}"
                         r"(?:flat|house|apartment|cottage|bedsit|terrace|bungalow|maisonette|houseboat) in "
                         r"(?P<place>[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)")
_APPOINTED = re.compile(r"^(?:they|[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*) (?:have |has )?(?:just |finally |now )?"
                        r"(?:made|appointed|promoted) me (?:to |as )?(?:(?:a|an|the) )?"
                        rf"(?P<title>[a-z][a-z\-]*(?: [a-z][a-z\-]*){{0,3}}) (?:at|of|for) (?P<name>{_NAME})")
_AS_TITLE = re.compile(r"^(?:a|an|the) (?P<title>[a-z][a-z\-]*(?: [a-z][a-z\-]*){0,2})(?: (?:at|for|in|with) .*)?$")
# "I run the kitchen at Ostra now", "she manages the bar at the Crown": a part of a workplace run for it is
# a job there. Only such parts: "I run the book club at St Mary's" or "the quiz at the Crown" is no job.
_RUNS = re.compile(r"^(?:is |has been )?(?:runs|running|manages|managing|heads|heading|leads|leading)$")
_WORKPLACE_PARTS = frozenset("""kitchen kitchens bar floor desk office lab laboratory ward department branch
warehouse workshop shop store pharmacy clinic practice restaurant café cafe bakery salon studio site""".split())
_PART_AT = re.compile(r"^(?:now |still )?(?:the |a |an )?(?P<part>[a-z][a-z\-]*(?: [a-z][a-z\-]*){0,2}) (?:at|for) "
                      r"(?:the )?(?P<name>(?:St\. )?[A-Z][\w'’\-&]*(?: [A-Z][\w'’\-&]*)*)")
# "I've taken a job as a music teacher", "I got a new job as a nurse": a job taken, its title after "as"
_TOOK_JOB = re.compile(r"\b(?:got|took|taken|started|accepted|landed|found)$")
_JOBS = frozenset({"job", "new job", "position", "new position", "role", "new role", "post"})


def restated(draft: FactDraft, speaker: str) -> list[FactDraft]:
    """The slot facts ``draft`` states in other words (none for most facts)."""
    out = []
    obj = draft.object.strip()
    if speaker and draft.subject_named and draft.predicate in ("is", "is now", "has become", "feels like") \
            and _is_home(obj, speaker):
        out.append(_twin(draft, speaker, entity_key(speaker), "lives in", draft.subject))
    living = _LIVING_IN.match(obj) if _LIKING.match(draft.predicate) else \
        _WITH_IN.match(obj) if _LIVING_WITH.match(draft.predicate) else None
    if living:
        out.append(_twin(draft, draft.subject, draft.subject_key, "lives in", living["place"]))
    home = _HOME_IN.match(obj) if draft.subject_named and _RENTS.match(draft.predicate) and not _STAY.search(obj) \
        else None
    if home:
        out.append(_twin(draft, draft.subject, draft.subject_key, "lives in", home["place"]))
    copula = draft.predicate in _COPULA and draft.subject_named
    housed = _LIVES_IN_A.match(obj) if copula and not _STAY.search(obj) else None
    if housed:
        out.append(_twin(draft, draft.subject, draft.subject_key, "lives in", housed["place"]))
    title = _TITLE_AT.match(obj) if copula else None
    if title and is_title(title["title"], title["link"] == "at") and not title["name"].endswith(_POSSESSIVE) \
            and title["name"] not in (speaker, draft.subject):
        out.append(_twin(draft, draft.subject, draft.subject_key, "works at", title["name"]))
        out.append(_twin(draft, draft.subject, draft.subject_key, "works as", title["title"]))
    run = _PART_AT.match(obj) if draft.subject_named and _RUNS.match(draft.predicate) else None
    if run and run["part"].split()[-1] in _WORKPLACE_PARTS and not run["name"].endswith(_POSSESSIVE) \
            and run["name"] not in (speaker, draft.subject):
        out.append(_twin(draft, draft.subject, draft.subject_key, "works at", run["name"]))
    return out


def title_after_as(words: list[str], previous: FactDraft | None) -> FactDraft | None:
    """The job title of "… works at Le Fournil as a pastry chef" or "… has taken a job as a music
    teacher at a primary school": the clause after "as" (``words``) when the fact just before in
    the sentence (``previous``) says where its subject works or that they took a job."""
    if previous is None or not (_WORK.search(previous.predicate)
                                or _TOOK_JOB.search(previous.predicate) and previous.object.lower() in _JOBS):
        return None
    title = _AS_TITLE.match(" ".join(words))
    if title is None or not is_title(title["title"], True):
        return None
    return _twin(previous, previous.subject, previous.subject_key, "works as", title["title"])


def appointed(words: list[str], speaker: str, when: str | None) -> list[FactDraft]:
    """The job a clause says someone gave the speaker: "they have made me deputy head of Kelvin
    High", "Inkwell Press promoted me to assistant editor at Inkwell Press" → the speaker *works
    as* the title and *works at* the name (the extractor reads no fact there: "they" names nobody)."""
    found = _APPOINTED.match(" ".join(words)) if speaker and "me" in words else None
    if found is None or not is_title(found["title"], True) or found["name"] == speaker:
        return []
    key = entity_key(speaker)
    return [FactDraft(speaker, "works as", found["title"], key, entity_key(found["title"]), when, True),
            FactDraft(speaker, "works at", found["name"], key, entity_key(found["name"]), when, True)]


def _is_home(obj: str, speaker: str) -> bool:
    """"home", "home now", "my home" (which the extractor wrote as the speaker's)."""
    words = [w for w in obj.lower().split() if w not in _HOME_ADVERBS]
    return words in (["home"], [f"{speaker.lower()}'s", "home"])


def is_title(words: str, one_word: bool) -> bool:
    """Whether ``words`` may name a job: no adverb, pronoun or "fan"/"student" among them, and
    unless ``one_word`` may do, two words at least ("a train driver for ScotRail"; "happy for"
    is a mood)."""
    split = words.split()
    return not any(w in _NOT_TITLES or w.endswith("ly") for w in split) and (one_word or len(split) >= 2)


def _twin(draft: FactDraft, subject: str, subject_key: str, predicate: str, obj: str) -> FactDraft:
    """A fact of the same statement (its time, whether its subject is a name) in other words."""
    return dataclasses.replace(draft, subject=subject, subject_key=subject_key, predicate=predicate, object=obj,
                               object_key=entity_key(obj) if len(obj.split()) <= 4 else None)
