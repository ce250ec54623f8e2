"""The latest word on a topic: what the present-tense lift (:mod:`.present`) reads beyond change words.

A person reading a conversation assumes that the latest thing someone said about something is
what holds now. People rarely say that something changed in words a rule knows ("the Camino's
off", "Completely fine. I ran 15 km on Sunday"), so a lift that waits for change words misses
most changes of a new conversation. This module gives the lift what needs no such words:

* which questions ask whether a state holds now — a yes/no question in the present ("Is Callum
  vegetarian?", "Does Dieter play in a band?") or the perfect ("Has Marcel had his knee replaced?":
  the latest word tells, and a plan or a date set before it is no answer) or one that says "still", "now" or "currently"
  (:func:`asks_state`): there the latest candidate on the question's own words, of or by the
  subject, goes above the older ones on them, change word or not (:func:`states`). Open questions
  ("what books has Tim read?", "what is Gina's favourite dance?") keep their order: most of
  LoCoMo's ask about something said once, and lifting the latest turn on their words pushed their
  evidence down;
* the question just before a candidate, from the other speaker (:func:`asked_before`): "How's the
  ankle?" — "Completely fine." is about the ankle, and "And Amira?" — "She decided against
  midwifery" is about Amira, though neither answer says so;
* a subject named in a candidate's own words (:func:`naming_in_text`): "Kerttu's lending me her
  car", said before Kerttu was known, made no mention of her when it was read;
* who speaks for a subject no one speaks as (:func:`spoken_for`): a business is told of by its
  owner's "we" ("I run a food truck, it's called La Picá" — "We're down to two staff");
* what kind of value an open question asks for (:func:`answer_kind`) — a number for "how many"
  or "how much", a weekday for "which days", a name for "who" — and whether a sentence states one
  (:func:`states_kind`): among the turns on such a question's topic that state a value of its
  kind, the latest said is the answer ("I keep 42 goats" — "Thirty-five are left"), as the
  latest value of a slot is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Collection

import numpy as np

from ..text import FIRST_PERSON, lexical_tokens, sentences
from .extract import counted_by_number, realis
from .temporal import find_times

if TYPE_CHECKING:
    from ..index import Index
    from ..store import Store

# "Is Callum vegetarian?", "Does Bartosz have a pet?", "Are you still …", "Where does Julien live
# now?", "Has Marcel had his knee replaced?" (a perfect asks whether it holds by now): whether
# something holds, or what holds, now. Not "Has Tim been to …?" (an experience, any of them). The
# words that say "now" are no topic: a turn saying "still" is not on the question's.
# Nor a question in the conditional ("Would Caroline still want to … if …?"), which asks about no state.
# "What happened with Elena's knee?" asks the latest word on its topic, as "Is it still …?" does.
_STATE = re.compile(r"(?!.*\bif\b)\s*(?:(?:is|are|does|do)\b|what\s+happened\s+(?:with|to)\b|(?:has|have)\b(?!.*\bbeen\b)|(?!would|could|should|might|will)\w+\b.*\b(?:still|now|currently)\b)",
                    re.I)
STATE_WORDS = frozenset(lexical_tokens("still now currently"))


def asks_state(query: str) -> bool:
    """Whether a present-tense question asks whether (or what) a state holds now."""
    return _STATE.match(query) is not None


def states(text: str, words: frozenset[str], lent: frozenset[str] = frozenset(), *,
           names: Collection[str] = (), own_voice: bool = True, said: str | None = None,
           by: str | None = None) -> bool:
    """Whether a candidate says something on ``words`` (the question's own) of the subject's: a
    sentence holding one, not in someone else's noun phrase (:func:`of_subject`), that is no
    question ("Are you still swimming?" says nothing), or its first sentence when the question
    just before it (``lent``, :func:`asked_before`) holds one. ``names``: the subjects' names;
    ``own_voice``: a subject says the candidate; ``said``: the day it was said, when only what a
    sentence states as holding or done by then counts (:func:`.extract.realis`: "Fraser and I set
    a date! 14 June next year" says nothing yet of a wedding); ``by``: the day asked about, by
    which a clause naming its time may have come ("I start at Beaumont in December")."""
    split = sentences(text)
    stated = [realis(sentence, said, by) if said else sentence for sentence in split]
    return any(not sentence.rstrip().endswith("?") and stated[n]
               and (of_subject(stated[n], words, names, own_voice) or n == 0 and bool(words & lent))
               for n, sentence in enumerate(split))


# Whose noun phrase a word stands in, by the possessive that opens it: someone else's when the
# subject speaks ("the neighbour's dog", "your dog", "her dog"), or when someone else speaks of the
# subject ("my dog", said by Bea of Jon's: hers); "his", "her" and "their" from someone else may be
# the subject's, and say nothing. A determiner opens a phrase of no one's.
_OTHERS_WHEN_OWN = frozenset("your yours his her their".split())
_OTHERS_WHEN_NOT = frozenset("my our".split())
_OPENS = frozenset("a an the this that these those some any my our your his her their its".split())
_POSSESSIVE = re.compile(r"([\w-]+)(?:'s|s')$")
# "it's", "there's", "he's": a verb contracted, not a possessive.
_CONTRACTED = frozenset("it that there here what who where how he she let this".split())
_WORDS = re.compile(r"[\w'\u2019-]+|[^\w\s'\u2019-]")
PHRASE = 3  # the words before a noun its phrase may hold: "the neighbour's big old dog"


def of_subject(sentence: str, words: frozenset[str], names: Collection[str], own_voice: bool) -> bool:
    """Whether a sentence holds one of ``words`` in a noun phrase that is no one else's than the
    subject's: "The neighbour's dog barked all night", said by Jon, says nothing of whether Jon has
    a dog; "I adopted a dog" and "my dog" do (see _OTHERS_WHEN_OWN for whose a phrase is)."""
    surface = [w.lower().replace("\u2019", "'") for w in _WORDS.findall(sentence)]
    theirs = _OTHERS_WHEN_OWN if own_voice else _OTHERS_WHEN_NOT
    own_names = {token for name in names for token in lexical_tokens(name)}
    for n, word in enumerate(surface):
        if words & set(lexical_tokens(word)) and not _someone_elses(surface[max(0, n - PHRASE):n], theirs, own_names):
            return True
    return False


def _someone_elses(before: list[str], theirs: frozenset[str], own_names: set[str]) -> bool:
    """Whether the word that opens a noun's phrase (``before``: the words before the noun, nearest
    last) is someone else's: a pronoun of ``theirs``, or a name's that is not a subject's ("Mia's",
    "the neighbour's"). The phrase ends, going back, at a determiner, a stop ("from her: I'm
    smoking" opens no phrase with "her") or a word of no content ("I'm")."""
    for word in reversed(before):
        possessive = _POSSESSIVE.match(word)
        if possessive and possessive[1] not in _CONTRACTED:
            return not own_names & set(lexical_tokens(possessive[1]))
        if word in theirs:
            return True
        if word in _OPENS or not lexical_tokens(word):
            return False
    return False


def asked_before(store: "Store", index: "Index", slots: np.ndarray, subjects: Collection[int],
                 read: dict[int, str]) -> tuple[dict[int, frozenset[str]], dict[int, frozenset[int]]]:
    """For the candidates (``slots``) that answer a question — the turn just before, in the same
    session, asks one: the question's words, by item id; and the candidates whose question names
    a subject that did not ask it ("And Amira?"), with the subjects it names. ``read``: the texts
    the caller has read already (most turns before a candidate are candidates too), by item id."""
    before = slots - 1
    safe = np.maximum(before, 0)
    same = (before >= 0) & (index.source_ids[safe] == index.source_ids[slots]) \
        & (index.positions[safe] == index.positions[slots] - 1)
    times, own = index.times[safe], index.times[slots]
    same &= (times == own) | (np.isnan(times) & np.isnan(own))
    answer_of = {int(index.item_ids[b]): int(index.item_ids[s])
                 for b, s, ok in zip(safe.tolist(), slots.tolist(), same.tolist()) if ok}
    lent: dict[int, frozenset[str]] = {}
    questions: dict[int, str] = {}  # the questions a reply answers, by the asking item
    texts = {i: read[i] for i in answer_of if i in read}
    texts.update(store.item_texts([i for i in answer_of if i not in read]))
    for asking, text in texts.items():
        asked = [s for s in sentences(text) if s.rstrip().endswith("?")]
        if asked:
            questions[asking] = " ".join(asked[_last_topic(asked):])
            lent[answer_of[asking]] = frozenset(lexical_tokens(questions[asking]))
    mentions = store.mentions_of_items([b for b, a in answer_of.items() if a in lent])
    asker = {item: entity for item, entity, _surface, role in mentions if role == "speaker"}
    about: dict[int, set[int]] = {}
    for item, entity, surface, role in mentions:
        # named in the question itself: "Tomás said she herded Bruno. Did you move yet?" asks the listener
        if role != "speaker" and entity in subjects and asker.get(item) != entity and _names(questions[item], surface, role):
            about.setdefault(answer_of[item], set()).add(entity)
    return lent, {item: frozenset(who) for item, who in about.items()}


_THIRD_PERSON = re.compile(r"\b(?:he|she|him|her|his|they|them|their)\b", re.I)


def _names(text: str, surface: str, role: str) -> bool:
    """Whether ``text`` holds a mention's words whole ("Yasmin" in "And Yasmin?", "Yasmin's" too),
    or, for someone a pronoun of the turn meant, a pronoun ("Is she still in Leeds?")."""
    if role == "pronoun":
        return _THIRD_PERSON.search(text) is not None
    return bool(surface) and re.search(rf"\b{re.escape(surface)}\b", text, re.I) is not None


# A question that turns to something new: "How's the wrist? And are you coming to the quiz?"
_TURNS_TO = re.compile(r"\s*(?:(?:oh|so|well),?\s+)?(?:and|also|what about|how about|by the way|anyway)\b", re.I)


def _last_topic(asked: list[str]) -> int:
    """Where the questions a reply answers begin among a turn's (``asked``): at the last that turns
    to something new, else at the first. A reply answers the question nearest it, and those it
    follows up ("And Bilbao? Did you get your pintxos?" asks both of Bilbao), not one asked before
    the asker turned to something else ("How's the wrist? And are you coming to the quiz?" —
    "Count me in" says nothing of the wrist)."""
    return max((n for n, question in enumerate(asked) if _TURNS_TO.match(question)), default=0)


def naming_in_text(texts: dict[int, str], names: Collection[str]) -> set[int]:
    """The candidates (``texts``, by item id) whose words hold a subject's name whole."""
    spelled = sorted({n for n in names if n}, key=len, reverse=True)
    if not spelled:
        return set()
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, spelled)) + r")\b")
    return {item for item, text in texts.items() if pattern.search(text)}


# What an open question's answer is, by its first words.
_KINDS = ((re.compile(r"\s*how\s+(?:many|much)\b", re.I), "number"),
          (re.compile(r"\s*(?:on\s+)?(?:which|what)\s+days?\b", re.I), "weekday"),
          (re.compile(r"\s*who\b", re.I), "name"),
          (re.compile(r"\s*when\s+(?:is|are|does|do)\b", re.I), "time"))
# A count or an amount: "42", "12.50", "thirty-five", "a dozen"; not a year, a time of day ("at 5
# am", "5:30") nor "one" (a pronoun as often as a number).
_NUMBER = re.compile(r"(?<![\d:.,])\b(?!(?:19|20)\d\d\b)(?:\d+(?:[.,]\d+)?|two|three|four|five|six|seven|eight|nine|ten|"
                     r"eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|dozen)"
                     r"(?:-\w+)?\b(?!\s*(?:am|pm|a\.m|p\.m|o'clock)\b|[:.]\d)", re.I)
_ONE_OF = re.compile(r"\bone of\b", re.I)
# A number right after one person and the copula is their age, no count: "he's twenty-two" ("we're
# twenty-two" counts those who say it).
_AGE = re.compile(r"\b(?:I['’]m|I am|(?:he|she)['’]s|(?:he|she) is)\s+(?:only\s+|just\s+|nearly\s+|almost\s+|about\s+)?$",
                  re.I)
WEEKDAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.I)
# A time of day: "9:30", "10.30", "6 pm", "noon".
_CLOCK = re.compile(r"\b\d{1,2}[:.]\d\d\b|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midday|midnight)\b", re.I)


def answer_kind(query: str) -> str | None:
    """The kind of value an open question asks for: "number", "weekday", "name", "time" (a time of
    day, a weekday or a date, for "when is / does …?") or None; none for
    one of several ("who is one of Tim's heroes?"), which asks for no latest value."""
    if _ONE_OF.search(query):
        return None
    return next((kind for pattern, kind in _KINDS if pattern.match(query)), None)


def states_kind(sentence: str, kind: str, names: Collection[str], counted: Collection[str] | None = None) -> bool:
    """Whether a sentence states a value of ``kind`` (:func:`answer_kind`); ``names``: the names
    of the store's entities it holds, no subject's. For a count (``counted``: the tokens of what
    "how many …" counts) only a number of those: "down to twenty hives now" counts hives, "twelve
    jars of honey" and "turned 3 years old" do not (:func:`.extract.counted_by_number`)."""
    if kind == "number":
        return any(_counts(sentence[m.end():], counted) and not _AGE.search(sentence[:m.start()])
                   for m in _NUMBER.finditer(sentence)) if counted else _NUMBER.search(sentence) is not None
    if kind == "weekday":
        return WEEKDAY.search(sentence) is not None
    if kind == "time":
        return _CLOCK.search(sentence) is not None or WEEKDAY.search(sentence) is not None \
            or bool(find_times(sentence, None))
    return any(re.search(rf"\b{re.escape(name)}\b", sentence) for name in names if name)


def _counts(after: str, counted: Collection[str]) -> bool:
    """Whether a number followed by ``after`` counts one of ``counted`` (tokens): the noun phrase
    it opens holds one, or it stands alone ("Still thirty-five.")."""
    phrase = counted_by_number(after)
    return phrase is not None and (not phrase or not set(counted).isdisjoint(lexical_tokens(" ".join(phrase))))


# A name told of this often (a city, a brand) is read no further for an owner: a business of a
# conversation is named a few times, and reading every mention of a common name costs each recall.
OWNED_MENTIONS = 50
_WE = re.compile(r"\b(?:[Ww]e|[Oo]urs?|us)\b")


def owners(store: "Store", subjects: Collection[int]) -> set[int]:
    """The speakers who speak for a subject that is no speaker (a business, a band, a team): those
    who name it in a sentence of their own in the first person ("I run a food truck in Wellington,
    it's called La Picá"), so that their "we" is its voice. None for a subject named more often
    than :data:`OWNED_MENTIONS` times."""
    found: set[int] = set()
    rows = [r for r in (store.entity_row(e) for e in subjects) if r is not None and r[3] != "speaker"]
    counts = store.entity_counts([r[0] for r in rows])
    for entity, _key, _name, _kind in (r[:4] for r in rows):
        if counts.get(entity, (OWNED_MENTIONS + 1, 0))[0] > OWNED_MENTIONS:
            continue
        surfaces = {item: surface for item, surface, role in store.mentions_of_entity(entity) if role != "speaker"}
        texts = store.item_texts(list(surfaces))
        said_by = {item: e for item, e, _s, role in store.mentions_of_items(list(texts)) if role == "speaker"}
        found |= {said_by[item] for item, text in texts.items() if item in said_by and any(
            surfaces[item] in sentence and FIRST_PERSON.search(sentence) for sentence in sentences(text))}
    return found - set(subjects)


def spoken_for(texts: dict[int, str], speaker_of: dict[int, int], speakers: Collection[int]) -> set[int]:
    """The items (of ``texts``, by item id, with their speakers ``speaker_of``, both as the window
    read them) that ``speakers`` (:func:`owners`) say in the first person plural: "We're down to two
    staff" is the business's news."""
    return {item for item, text in texts.items() if speaker_of.get(item) in speakers and _WE.search(text)} \
        if speakers else set()
