"""Questions about the present state of a slot: a newer turn that changes it goes above the older ones.

"Where does Lena live?" asks for what holds now, and the answer may have changed. The turns that
change it say so in many ways ("I moved to Berlin", "I've left St Clare's, I'm the school nurse
at Hillview now"), and the rule extractor states few of them as facts of one slot, so
supersession cannot order them. This step can, without facts:

* the question is in the present tense (no "did", "before", "used to" …, and no date: "has Nate
  won by July 10, 2022?" asks about that day), or asks what someone decided ("what did Greg
  decide to buy?": the latest decision, not "why" or "when" they decided) and names someone the store knows (its
  *subjects*); it may ask about a slot of ``supersession.toml`` (a word of its
  ``asks``: "live", "job", "partner"; "what does Jun do (for a living)?" asks the job). "Who
  works at Annelies's shop?" asks about others (no slot of hers, and their news counts), "how
  many people work on deck?" asks a count, never a slot (a number answers it, not an employer), and
  "the old barn" is a thing, not a time;
* among the top candidates, those that name a subject and are *on topic*: they share a word with
  the question (its name aside), with the slot (its ``asks``, its objects, its predicates'
  verbs: "moved", "quit"; a job title said as "I'm a trainer now" for a question about titles) or with a value the slot held for the subject as these candidates'
  facts state it ("studying chemistry" makes "switching from chemistry to …" on topic); for a
  question about no slot, with a name that the subject's facts on the question's words hold
  ("Kenji is learning Portuguese" makes "I dropped Portuguese" on topic for "what language is
  Kenji learning?"); for a slot question, also with a name in a fact of the subject's whose verb
  is one of the slot's words ("Hanne is moving to Bergen" makes "Hanne didn't go to Bergen in the
  end" on topic for "where does Hanne live?"); a sentence that says "instead" right after one on the topic is
  on it too;
* an on-topic candidate that announces a *change* ("moved", "started", "left", "instead",
  "switched", "hired me", "no longer", "is over", "again", "now" set against before but not "right now", "new"
  before a word of a slot's topic: "the new place" …) in a
  sentence on the topic goes above every older
  on-topic candidate ranked above it (a newer turn that merely uses the slot's words, "what are
  you working on?", does not); a turn that names no subject but is said by one announces a
  change of theirs only in a clause that is not someone else's ("Leah moved to Boulder", said
  by Maya, is no news of where Maya lives, nor "You moved in with her!": the listener's);
* then the candidates whose facts state a value of the asked slot for the subject — or, for an
  open question about no slot, whose sentences on the topic state a value of the kind it asks
  for (a number for "how many/much", a weekday for "which days", a name for "who", a time for "when is":
  :func:`.latest.answer_kind`; a weekday is on a day question's topic) — take the
  places they hold newest first: the latest value said is the answer even when the rules could
  not tell that it replaced the others (an object that names nothing, the same day, a change
  said without a change word) — a ranking that needs no supersession; for an open question the
  latest value of its kind also passes the older changes on the topic, as a change would ("we
  sold the damaged hives, we'll be down to twenty" changes the count and states none of it yet;
  "thirty-two hives on the hill", said later, is the answer);
* and the latest of them goes above the older candidates that name the subject but state no value
  ("Julien and I broke up" says nothing of where he lives now), never above one said on its day
  or later, which may tell a newer value in words no rule reads (but one said on its day with no
  word of the topic); and above those that state a value of the slot for someone else only ("Leah
  lives in Denver" for "where does Maya live?").

A question about no slot ("when is Noor's wedding?") is about a plan or a wish as often as about
something that changes, so there only a change said outright counts ("change of plan", "instead",
"cancelled", "from now on", "dropped", "sold"): the wedding "is in September instead" goes above
"we're planning it for May". Lifting every announced change for every present-tense question cost LoCoMo's questions
more than it gained. Everything else keeps its place, and so do candidates said on the same day.

A subject that speaks in no turn, a business or a band, is told of by its owner: a speaker who
named it in the first person ("I run a food truck, it's called La Picá") speaks for it in their
turns that say "we" ("We're down to two staff"), which are then its own (:func:`.latest.owners`).
A question that names no one the store knows ("How many singers are in the choir?") is about a
thing told of by those who have it: its subjects are the speakers of the candidates, it asks no
slot of theirs, and the news of others counts as theirs does.

A turn states no value as of its day where it tells what is still to come: a plan, a wish or an
appointment ("We're thinking of moving to Sopot", "The doctor wants to replace it. Maybe June.",
"I'm supposed to start in August"), read from the verb group and the times a clause names
(:func:`.extract.realis`), not from what it is about. Such a turn on the topic is neither a change
nor a value: it keeps its place, and a newer change passes it. An appointment whose time has come
by the question's reference day ("I start at Beaumont in December", asked in January) counts as
done. A question about what is to come ("Where will Lena work?", "When is the wedding?", "What did
Greg decide to buy?") takes plans as answers.

A question whether something holds now ("Is Callum vegetarian?", "Is Dieter's ankle still
broken?") needs no change word: the latest candidate on its own words counts as one. A turn
answering the question just before it is on that question's topic and about whom it named; a
subject's name in a turn's words counts as naming them (:mod:`.latest`).

"Newest" is as of the recall's reference time (``as_of``, default now): candidates said after it
take no part (the recall drops them next). A question about a slot with "was" or "were" that names a
past period ("Where was Morven living in January 2026?", "What was Katya's job in June 2025?") asks
what held then: the same reading as of the period's last day (or the reference time, if earlier;
for "in early 2026" the reference time alone), and so does "did" with a slot's verb ("Where did Morven
live in 2024?"). A value the rules found held through most of the period, and replaced later, is its
answer: "where did Daniel live in September 2023?" is the studio in Capitol Hill, not the flat in
Fremont he planned in July to move into on the 30th. "Did" with another verb and a question about no slot with a date keep their order:
"What major achievement did Joanna accomplish in January 2022?", "Who was the new addition to Nate's
family in May 2022?" and "Where was John between August 11 and August 15 2023?" ask about an event.
"""

from __future__ import annotations

import calendar
import dataclasses
import functools
import re
from datetime import date
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from ..as_of import earliest, later, said_on
from ..query import FRAMING_WORDS
from ..text import FIRST_PERSON, STOPWORDS, asks_about_listener, lexical_tokens, sentences
from .claims import bring_newer_claims
from .entities import entity_key, one_shortens_the_other
from .extract import PEOPLE, realis
from .latest import (STATE_WORDS, WEEKDAY, answer_kind, asked_before, asks_state, naming_in_text,
                     owners, spoken_for, states, states_kind)
from .supersession import Rules, Slot, object_names
from .temporal import MONTHS, find_times
from .records import Fact
from .restate import is_title
from .timeline import fact_of_row
from .verbs import is_verb

if TYPE_CHECKING:
    from ..index import Index
    from ..pipeline import Ranking
    from ..store import Store

_KIN = re.sub(r"\s+", "", PEOPLE)  # "sister", "boss", "flatmate": a person named after it is someone's
_KIN_BEFORE_WORDS = "little|big|older|younger|best|new|old|late|twin"  # "my best friend", "Zuzana's little sister"
WINDOW = 20  # the candidates looked at: a turn further down does not jump the whole list
_ADJECTIVES = 2  # the words between "my" and a name it owns: "my old Land Rover", "my trusty old Raleigh"
# Words that make a question about the past ("where did she live before?"), which wants the old value.
_PAST = frozenset("""did was were used before previously first originally ago last earlier formerly former old
until then""".split())
# "Is Benedita turning the old barn into rooms?": "old" after an article names a thing by its age, not
# a time; after a possessive ("her old job", "Noor's old flat") it names a value held before.
# A past period a question names by a season or a part of a year: "in early 2026", "spring 2025",
# "the spring of 2025", "mid-2025", "the end of 2025".
_PERIOD = re.compile(r"\b(?:early|mid|late|end of|start of|beginning of|spring|summer|autumn|fall|winter)(?:\s+of)?[\s-]+"
                     r"(?:19|20)\d\d\b", re.I)
# A range whose first month takes the year said after the second: "between May and July 2023", "from
# March to June 2024" (the time reader finds only "July 2023" there).
_RANGE_OPENING = re.compile(rf"\b(?:between|from)\s+({'|'.join(MONTHS)})\s+(?:and|to|until|till|through)\s+"
                            rf"(?=(?:{'|'.join(MONTHS)})\s+(?:19|20)\d\d\b)", re.I)
# The past of a state ("where was Morven living …", "who were …"): with a period named, the present
# reading as of then. "Did" asks about an event ("What major achievement did Joanna accomplish in
# January 2022?") unless its verb is a slot's: "Where did Morven live in 2024?" asks what held then,
# as "where was Morven living" does (:func:`_did_asks_slot`).
_WAS = frozenset({"was", "were"})
_DID = re.compile(r"\bdid\b(.*)", re.I)
_OLD_THING = re.compile(r"\b(?:the|a|an|this|that)\s+old\b", re.I)
# "What does Jun do?", "What does Youssef do for a living (now)?": the job, not a home ("living") nor
# nothing (every word a framing word); between "does" and "do" only the subjects' names, after it
# only a word placing the question in time. Not "what does Mel do to relax?", "… on Sundays?" nor
# "what does Jon tell Gina he won't do?".
_DOES_FOR_WORK = re.compile(r"\s*what\s+(?:does|do)\s+(.+?)\s+do(?:\s+for\s+(?:a\s+living|work|a\s+job|money))?"
                            r"(?:,?\s+(?:now|nowadays|currently|these\s+days|at\s+the\s+moment|right\s+now))?\s*[?.!]*\s*$", re.I)
_JOB_WORDS = frozenset({"work", "job"})
# "Who works at Annelies's shop?", "Who helps Benedita on the farm?": "who" is the verb's subject,
# so the question asks about others, not about a slot of the person named ("who is Jess's partner?",
# "who does Lena work for?" do: an auxiliary follows "who").
_WHO_ELSE = re.compile(r"\s*who\s+(?:else\s+)?(?!(?:is|was|does|has)\b)[a-z]+s\b", re.I)
# "Who performed at the concert?": a past tense after "who" asks about the past, as "did" does.
_WHO_DID = re.compile(r"\s*who\s+(?:else\s+)?[a-z]+ed\b", re.I)
# "What did Greg decide to buy?" asks for the latest decision, which a later change of mind replaces
# ("I've gone off the camper van idea … a sailing boat instead"): a past tense, but not about the
# past. "Why" and "when" did someone decide ask about the decision itself, and keep their order.
# "When has Gina lost her job?" (or "when Gina has lost …") asks when something happened, as "when
# did" does: the perfect is about the past there, and the latest change is no answer. Not "when
# does Femi have practice?": "have" after "do"/"does" is the verb itself, in the present; nor "when
# has Lena got swimming?", which asks what she has, as "when does Lena have swimming?" does.
_WHEN_PERFECT = re.compile(r"\s*when\b(?!.*\b(?:do|does)\b).*\b(?:has|have|had)\b(?!(?:\s+[\w']+){0,3}?\s+got\b)", re.I)
_WHEN = re.compile(r"\s*when\b", re.I)
_DECIDED = re.compile(r"\s*(?:what|which|where|who)\b.*\bdid\b.*\b(?:decide|choose|pick|settle on|end up|go with)\b",
                      re.I)
# Auxiliaries and light verbs that open a predicate ("is living in", "got married to", "is called Graham"): no cue.
_LIGHT = frozenset("""is are was were be been has have had got get went go going gone became become now fully just
no longer out called named""".split())
# "I'm in a shared house in Plymouth now": "now" set against before, for a question about a slot
# only (LoCoMo's turns say "now" of what they are doing, and for other questions lifting them
# pushed its evidence down). Not "right now", "for now", "by now", "until now", "just now" (a
# moment, not a change), "now that" (a reason) or "now and then"; and only in a sentence on the
# question's topic.
_NOW = r"(?<!right )(?<!for )(?<!by )(?<!until )(?<!till )(?<!just )now(?! that| and then| on\b)"
# A turn that says outright that its news replaces an earlier plan, wish or state: "instead" (not
# "instead of", which mostly suggests a swap: "coconut oil instead of butter"), "change of plan",
# "cancelled", "from now on", "no longer", "moved" (a meeting), "switched", "dropped" (not "dropped
# by/off/in": a visit), "sold", "stopped", and a plan that did not go as planned: "fell through",
# "after all", "in the end", "decided against". This is all a question about no slot listens to
# ("quit" and "gave up" only for a slot: for other questions they cost LoCoMo's a little).
_OUTRIGHT = (r"instead(?! of)|change of plans?|change to|cancel+ed|called off|postponed|rescheduled|from now on|"
             r"go(?:ing)? back to|no longer|any ?more|gone off|moved|switched|dropped(?! by| off| in)|sold|"
             r"stopped|fell through|after all|in the end|decided against|shelved|scrapped|put on hold")
# What has held since a time said by its date began then, a change said without a change word: "I've
# been working out of Bandon since the third of November", "Since the first of August I'm on the RRV",
# "we've been on 99.9 FM since the first of September". Only a clause whose subject is a pronoun with a
# verb group of the present or the present perfect, and not negated: not "I was at the bakery since
# 2019" (past), "I haven't had a day off since May", "My parents have lived in Bath since March"
# (someone else), nor "since I was a kid" (no date).
_SINCE = re.compile(r"\bsince (?:the )?(?:[\w-]+ (?:of )?)?(?:" + "|".join(MONTHS) + r")\b|\bsince (?:last|this) (?:week|"
                    r"month|year|spring|summer|autumn|fall|winter)\b|\bsince (?:19|20)\d\d\b", re.I)
_HOLDS_NOW = re.compile(r"\b(?:I|we|he|she)(?:['’](?:ve|m|re|s)\b|\s+(?:have|has|am|are|is)\b)", re.I)
_NEGATED = re.compile(r"\b(?:not|never|no)\b|n['’]t\b", re.I)
# A "not" or "never" up to two words before a change word denies it; "no longer" and "any more" end
# what held, and are the change.
_DENIED = re.compile(r"(?:\b(?:not|never)|n['’]t)\s+(?:[\w'’-]+\s+){0,2}$", re.I)
_ENDED = re.compile(r"no longer|any ?more", re.I)
_REPLACES = re.compile(rf"\b(?:{_OUTRIGHT})\b", re.I)
_INSTEAD = re.compile(r"\binstead\b(?! of)", re.I)
# A question about a slot also listens to the verbs of a new home, job or partner ("moved",
# "started at", "left", "broke up", "handed in my notice", "opened" a business, "seeing someone", a job
# given: "they hired me", "took me on"),
# and of one announced ("I'm leaving St Mary's", "I start at
# a GP surgery in June", "she's moving to Bergen"), a return to what held before ("again", "back
# on", not "my back on Friday": a back that hurts), and "now" as _NOW reads it. Not "new": in LoCoMo's turns it
# mostly marks no change ("my new phone"), and lifting it cost its questions.
_CHANGE = re.compile(rf"\b(?:{_OUTRIGHT}|{_NOW}|switch(?:ed|ing)?|change[sd]?|these days|(?:is|are) over|gave up|given up|again|"
                     r"(?<!my )(?<!his )(?<!her )(?<!their )(?<!our )(?<!your )(?<!the )back on|"
                     r"quit|moved|relocated|started|joined|left|promoted|retired|resigned|broke up|split up|"
                     r"leaving|start(?:ing)? (?:at|as)|moving to|hired me|t(?:ook|aken) me on|handed in (?:my|his|her|their|our) notice|"
                     r"(?:been )?seeing someone(?! about| for (?:my|his|her|their|our|the)\b)|met someone|"
                     r"divorced|got married|engaged)\b", re.I)
# A business of one's own opened ("I've opened a little bakery in Leyton"): the verb with a
# determiner, up to two words and one of the slot's cues as its object's head, which a preposition,
# a stop or the end follows. Not "we opened presents at the restaurant", nor "I set up a practice
# timetable" (the cue is no head there).
_FOUNDED = (r"\b(?:opened|set up|launched|founded)\s+(?:up\s+)?(?:a|an|my|our|his|her|their)\s+(?:[\w'-]+\s+){{0,2}}?"
            r"(?:{cues})(?=\s+(?:in|on|at|with|by|near|of|for|called|named|and)\b|\s*[.,;:!?)]|\s*$)")


# "How many cats does Priyanka have?" asks for a count, which an animal or thing lost, given away
# or added changes without any change word of _OUTRIGHT ("we lost Biscuit in April").
# What is counted is the phrase after "how many", up to the verb: "how many video game tournaments
# has Nate won?" (not "won", nor "big" of "how many … made it to the big screen?").
_HOW_MANY = re.compile(r"\s*how many\s+(.*?)(?=\s+(?:does|do|did|has|have|had|is|are|was|were|will|can|could|would)\b|"
                       r"\s*[?]|$)", re.I)
# Only of what is counted: the verb's object ("we lost Biscuit", "gave two of the hens to my
# sister", "we adopted another dog", "had to sell twenty goats", "kept the young does") or, for those that take none, its subject ("Max died") is
# the question's noun or a name of the counted ones; "the kids lost the match" or "got a new
# football" change no count of kids. Words in one stretch, no comma between. A part of a group
# counts whatever the group is called: "we gave three of the bunnies to the neighbours"; and so
# does the question's own verb with any object: "how many dogs has Maria adopted?" counts "I just
# adopted this cute pup".
_COUNT_TAKES = re.compile(r"\b(lost|put down|gave(?: away)?|rehomed|adopted|got (?:another|a new)|sell|sold|bought|kept|"
                          r"t(?:ook|aken) on)((?:\s+[\w'-]+){1,4})",
                          re.I)
_PART_OF = re.compile(r"\s+(?:one|two|three|four|five|six|seven|eight|nine|ten|\d+|some|both|all|a couple|a few|"
                      r"several|half|most) of (?:the|our|my|his|her|their|them)\b", re.I)
_COUNT_ENDS = re.compile(r"((?:[\w'-]+\s+){1,3})(?:died|passed away|was put down|had (?:babies|kittens|puppies|a litter))\b",
                         re.I)
# Not someone else's: "my brother's new house", "her new job" are no change of the speaker's.
_NEW = re.compile(r"(?<!['’]s )(?<!\bhis )(?<!\bher )(?<!\btheir )(?<!\byour )\bnew\s+(\w+(?:\s+\w+)?)", re.I)
# A sentence that says what holds is new ("I swim on Wednesdays now") without saying what changed,
# which the sentence beside it may say ("I stopped five-a-side, my knee can't take it").
_NEW_STATE = re.compile(rf"\b(?:{_NOW}|these days|instead(?! of))\b", re.I)
# "I'm a trainer now at a healthcare BPO", "I'm now a nurse": a job title said with the copula, which
# states a value of the slot whose predicates say "works as" (what restate.py makes of such titles).
_TITLED = "works as"
_TITLE = re.compile(r"\bI(?:'m|’m| am)\s+(?:now\s+)?(?:a|an)\s+([a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?)"
                    r"(?=\s+(?:now|at|for|with|in)\b|\s*[.,;:!?]|\s*$)", re.I)
# A clause that opens with someone else: "she's moved", "they sold the house", and the listener: "You
# moved in with her!" is their news.
_SOMEONE_ELSE = re.compile(r"(?:he|she|they|his|her|their|you|your)\b", re.I)
# A clause about the speaker's relative, friend or neighbour: "My brother just moved to Glasgow", "my
# best friend Jess got married" are their news, unless the speaker is in it too ("My husband and I
# moved to Leeds").
_RELATIVE = re.compile(rf"(?:my|our)\s+(?:(?:{_KIN_BEFORE_WORDS})\s+)?{_KIN}s?\b", re.I)
# Someone spoken of by a pronoun: "she runs the shop", "the two of them".
_PRONOUN = re.compile(r"\b(?:he|she|they|him|her|them)\b", re.I)
# Where a sentence's clauses part: "She isn't worried at all: Leah moved to Boulder in July and
# hikes every weekend" holds three.
_CLAUSE = re.compile(r"\s*[,;:]\s+|\s+(?:and|but|so|while|because)\s+", re.I)


@dataclasses.dataclass(frozen=True)
class Period:
    """A past period a question asks about ("in September 2023"): its first and last days (ISO), both
    "" for a period whose bounds the recall's reference time gives ("in early 2026")."""

    first: str
    last: str


@dataclasses.dataclass(frozen=True)
class PresentQuestion:
    """What a present-tense question is about: its own words and the words of the slots it asks."""

    terms: frozenset[str]
    slot_cues: frozenset[str]
    slots: frozenset[str] = frozenset()  # the names of the slots it asks about
    change: re.Pattern[str] = _CHANGE
    phrases: re.Pattern[str] | None = None  # the slots' asks and cues of more words: "seeing someone"
    counted: frozenset[str] | None = None  # for "how many …": the tokens of what is counted
    state: bool = False  # asks whether a state holds now (:func:`.latest.asks_state`)
    own: frozenset[str] = frozenset()  # its words beside the slots' asks ("wrist", not "live" or "seeing anyone")
    others: bool = False  # asks who else does something ("who works at Annelies's shop?"): others' news counts
    titles: bool = False  # asks a slot of job titles: "I'm a trainer now" is on its topic
    kind: str | None = None  # the kind of value an open question asks for (:func:`.latest.answer_kind`)
    plans: bool = False  # asks about what is to come ("Where will Lena work?"): a plan is its answer
    by: str | None = None  # the reference day (ISO): a plan whose time has come by then is told as done
    period: Period | None = None  # the past period it asks about ("in January 2026", :func:`asked_period`)

    @functools.cached_property
    def topic(self) -> frozenset[str]:
        """The tokens that make a sentence on topic: the slots' and the question's own, but the words
        that place it in time ("still", "now", "currently": "I still work at Barclays", or an answer
        to "Still at the bank?", is nothing of "Is Bilal still vegetarian?")."""
        return self.slot_cues | (self.terms - STATE_WORDS)

    def on_topic(self, sentence: str, tokens: frozenset[str]) -> bool:
        """Whether a sentence (with its tokens) holds a word or a phrase of the topic."""
        return bool(self.topic & tokens) or self.phrases is not None and _says(self.phrases, sentence) \
            or self.titles and _says_title(sentence) or self.kind == "weekday" and WEEKDAY.search(sentence) is not None

    def announces(self, sentence: str) -> bool:
        """Whether a sentence says a change of the answer; for a count, one of what is counted."""
        return _announces(self.change, sentence) or _holds_since(sentence) \
            or self.counted is not None and _count_changed(sentence, self.counted, self.terms)


@functools.cache
def asked_by(slot: Slot) -> frozenset[str]:
    """The tokens of a question about ``slot``: its ``asks`` of one word (a phrase is asked whole,
    :func:`phrases_of`: "seeing anyone", not any "seeing")."""
    return frozenset(lexical_tokens(" ".join(w for w in slot.asks if " " not in w)))


@functools.cache
def phrases_of(words: frozenset[str]) -> re.Pattern[str] | None:
    """The entries of more than one word among ``words`` as one pattern of whole phrases (None
    without any): "What film is Maya seeing tonight?" asks no partner, "is Jess seeing anyone?"
    does; "Tom and I worked together again" is no news of a partner, "we aren't together" is."""
    phrases = sorted(w for w in words if " " in w)
    return re.compile(r"\b(?:" + "|".join(map(re.escape, phrases)) + r")\b", re.I) if phrases else None


@functools.lru_cache(maxsize=16_384)
def _says_title(sentence: str) -> bool:
    """Whether a sentence says the speaker's job title (_TITLE, a title as restate.py reads one)."""
    return any(is_title(m[1].lower(), True) for m in _TITLE.finditer(sentence))


@functools.lru_cache(maxsize=16_384)
def _says(phrases: re.Pattern[str], sentence: str) -> bool:
    """Whether a sentence holds one of the phrases (kept, as the sentences are)."""
    return phrases.search(sentence.replace("\u2019", "'")) is not None


@functools.cache
def slot_cues(slot: Slot) -> frozenset[str]:
    """The tokens of a turn that speaks about ``slot``: its ``asks`` and ``cues``, its objects and
    the verbs of its predicates (the first word after auxiliaries: "moved" of "has moved to")."""
    words = [w for w in slot.asks | slot.cues if " " not in w] + list(slot.objects)
    for predicate in slot.predicates | slot.ends:
        words += [w for w in predicate.split() if w not in _LIGHT][:1]
    return frozenset(lexical_tokens(" ".join(words)))


def present_question(query: str, rules: Rules, names: Sequence[str], unnamed: bool = False,
                     period: Period | None = None) -> PresentQuestion | None:
    """The question's topic when it asks about the present (None for a question about the past,
    or with nothing to ask but names); a question about no slot listens only to changes said
    outright. ``names``: the subjects' names, which are no topic; ``unnamed``: the question names
    no one, and its subjects are the speakers telling of the thing it asks about (:func:`_voices`),
    so it asks no slot of theirs and the news of others counts; ``period``: the past period it
    asks about (:func:`asked_period`, read once per recall by its caller), whose present it asks."""
    said = set(re.findall(r"[\w']+", query.lower()))  # "café" is one word
    dated = said & set(re.findall(r"[\w']+", _OLD_THING.sub("the", query.lower())))
    if period is None and (dated & _PAST and not (dated & _PAST == {"did"} and _DECIDED.match(query))
                           or find_times(query, None)) \
            or _WHO_DID.match(query) or _WHEN_PERFECT.match(query):  # "by July 10, 2022" asks about that day
        return None
    if period is not None:  # the period's words are no topic: "January" is in no answer of where she lived
        said = set(re.findall(r"[\w']+", _without_period(query).lower()))
    if (job := _DOES_FOR_WORK.match(query)) and not re.sub(r"\band\b|\W", "", _without(names, job[1])):
        said = set(_JOB_WORDS)
    terms = set(lexical_tokens(" ".join(w for w in said if w not in FRAMING_WORDS)))
    named = [n for n in names if not _named_as_topic(n, query)]
    terms -= set(lexical_tokens(" ".join(named)))
    terms -= set(lexical_tokens(" ".join(w for w in said for n in named if one_shortens_the_other(w, n.lower()))))  # "Gen"
    state = asks_state(query)
    # "Where will Lena work?", "when is Mel planning on going camping?", "when is Noor's wedding?", "what
    # did Greg decide to buy?": what is to come is the answer, and so are a plan and an appointment.
    plans = realis(query, None) != query or _WHEN.match(query) is not None or _DECIDED.match(query) is not None
    own = frozenset(terms) - STATE_WORDS
    others = unnamed or (who := _WHO_ELSE.match(query)) is not None and not _verb_asks_of(who[0], query[who.end():], names, rules)
    how_many = _HOW_MANY.match(query)  # a count: "how many people work on deck?" asks no employer
    asked = [] if others or how_many else [
        slot for slot in rules.slots.values()
        if terms & asked_by(slot) or (phrases := phrases_of(slot.asks)) and _says(phrases, _without(names, query))]
    if asked:
        cues = frozenset().union(*(slot.asks | slot.cues for slot in asked))
        return PresentQuestion(frozenset(terms), frozenset().union(*map(slot_cues, asked)),
                               frozenset(slot.name for slot in asked), _slot_change(cues), phrases_of(cues), state=state,
                               own=own - set(lexical_tokens(" ".join(cues))),
                               titles=any(_TITLED in slot.predicates for slot in asked), plans=plans, period=period)
    if period is not None:  # a past date asks about a slot only: "what was in the paper in May 2023?" about an event
        return None
    counted = frozenset(lexical_tokens(how_many[1])) - set(lexical_tokens(" ".join(names))) if how_many else None
    return PresentQuestion(frozenset(terms), frozenset(), change=_REPLACES, counted=counted, state=state,
                           own=own, others=others, kind=answer_kind(query), plans=plans) if terms else None


def asked_period(query: str, rules: Rules) -> Period | None:
    """The past period a question about a state names ("Where was Morven living in January 2026?",
    "Where did Leah live in June 2023?"): its last day is the question's own reference time. None
    for none: an event asked about with a date ("What did Joanna accomplish in January 2022?")
    names no such period."""
    said = set(re.findall(r"[\w']+", _OLD_THING.sub("the", query.lower())))
    past = said & _PAST
    return period_named(query) if past and (past <= _WAS or past == {"did"} and _did_asks_slot(query, rules)) else None


def _did_asks_slot(query: str, rules: Rules) -> bool:
    """Whether a word after "did" asks a slot: the verb "did" lends its tense to ("Where did Morven
    live in 2024?", "Which firm did Katya work for in 2025?"), not a word before it ("What major
    achievement did Joanna accomplish?" asks about an event, "major" of a degree or not)."""
    after = set(lexical_tokens(_without_period(_DID.search(query)[1])))
    return any(after & asked_by(slot) for slot in rules.slots.values())


def _verb_asks_of(opening: str, rest: str, names: Sequence[str], rules: Rules) -> bool:
    """Whether "who <verb>" (``opening``) asks a slot of the subject named right after the verb
    (``rest``): "Who manages Asha now?" asks her manager, as "who is Asha's manager?" does; "who
    helps Benedita?" and "who works at Annelies's shop?" ask about others."""
    verb = set(lexical_tokens(opening.split()[-1]))
    return any(rest.lstrip().startswith(name) for name in names if name) \
        and any(verb & asked_by(slot) for slot in rules.slots.values())


def _without(names: Sequence[str], query: str) -> str:
    """The question without the subjects' names, so that a slot's phrase reads across them: "Is Maya
    single?" holds "is single"."""
    for name in sorted(filter(None, names), key=len, reverse=True):
        query = re.sub(rf"\s*\b{re.escape(name)}(?:'s|’s)?\b", "", query)
    return query


def period_named(query: str) -> Period | None:
    """The past period a question names ("in January 2026" → 2026-01-01 … 2026-01-31, "in 2025" →
    2025-01-01 … 2025-12-31, "between May and July 2023" → from May's first day to July's last),
    unbounded ("") for one named by a season or a part of a year ("in early 2026", "the spring of
    2025", "mid-2025") whose bounds the recall's reference time gives, None for none."""
    if _PERIOD.search(query):
        return Period("", "")
    times = find_times(query, None)
    if not times:
        return None
    values = [t.value for t in times]
    if (opening := _RANGE_OPENING.search(query)) is not None:  # "between May and July 2023": May of 2023
        year = next((t.value[:4] for t in times if t.start >= opening.end()), None)
        values += [f"{year}-{MONTHS.index(opening[1].lower()) + 1:02d}"] if year else []
    first, last = _first_day(min(values)), _last_day(max(values))
    return Period(first, last) if first and last else None


def _first_day(value: str) -> str | None:
    """The first day (ISO) of a day, month or year (None for one no calendar holds: "0000")."""
    try:
        return date(int(value[:4]), int(value[5:7]) if len(value) >= 7 else 1, int(value[8:10]) if len(value) == 10 else 1
                    ).isoformat()
    except ValueError:
        return None


def _last_day(value: str) -> str | None:
    """The last day (ISO) of a day, month or year (None for one no calendar holds: "December 9999"
    is no period, nor a day no month has)."""
    year, month = int(value[:4]), int(value[5:7]) if len(value) >= 7 else 12
    try:
        if len(value) == 10:
            return date.fromisoformat(value).isoformat()
        return date(year, month, calendar.monthrange(year, month)[1]).isoformat()
    except ValueError:
        return None


def _without_period(query: str) -> str:
    """The question without the past period it names (:func:`period_named`)."""
    query = _RANGE_OPENING.sub(" ", _PERIOD.sub("", query))
    for mention in sorted(find_times(query, None), key=lambda t: t.start, reverse=True):
        query = query[:mention.start] + query[mention.end:]
    return query


def _named_as_topic(name: str, query: str) -> bool:
    """Whether a name the question holds follows a preposition or a determiner: "When is
    Thandiwe going to Maputo?" asks about the trip to Maputo, "Is Oisín walking the Camino this
    Easter?" about the walk, the Camino and Easter (topics), not about Maputo, the Camino or
    Easter as subjects, whose names are no topic. A person's name follows neither, nor is a
    name that owns what follows a topic: "at Annelies's shop" asks about Annelies's shop."""
    return re.search(rf"\b(?:to|in|at|from|for|with|about|of|on|near|the|this|next|last)\s+{re.escape(name)}\b(?!['’]s)",
                     query, re.I) is not None


@functools.cache
def _slot_change(cues: frozenset[str]) -> re.Pattern[str]:
    """The changes a question about slots with these words listens to: _CHANGE, and a business
    of one's own opened whose head is one of them (_FOUNDED)."""
    heads = sorted(w for w in cues if " " not in w)
    founded = _FOUNDED.format(cues="|".join(map(re.escape, heads)))
    return re.compile(rf"{_CHANGE.pattern}|{founded}", re.I) if heads else _CHANGE


@functools.lru_cache(maxsize=4096)
def sentence_tokens(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each sentence of a candidate's text with its tokens, kept for the texts seen last: the
    same turns come back in the window of question after question about the same people, and
    splitting and tokenising them again was most of this step's cost."""
    return tuple((sentence, frozenset(lexical_tokens(sentence))) for sentence in sentences(text))


@functools.lru_cache(maxsize=16_384)
def _announces(change: re.Pattern[str], sentence: str) -> bool:
    """Whether an on-topic sentence says a change (kept, as the sentences are); not one denied
    by a "not" or "never" just before it ("I'm not moving to London", "I'm not leaving the
    library"), unless the change is itself the end of something ("I don't work there anymore")."""
    return any(_ENDED.fullmatch(m[0]) or not _DENIED.search(sentence, 0, m.start()) for m in change.finditer(sentence))


@functools.lru_cache(maxsize=16_384)
def _holds_since(sentence: str) -> bool:
    """Whether a clause of a sentence says that what it states has held since a date (_SINCE)."""
    return any(_SINCE.search(clause) and _HOLDS_NOW.search(clause) and not _NEGATED.search(clause)
               for clause in _CLAUSE.split(sentence))


@functools.lru_cache(maxsize=16_384)
def _count_changed(sentence: str, counted: frozenset[str], asked: frozenset[str]) -> bool:
    """Whether a sentence loses, gives away or gains one of what is counted (_COUNT_TAKES'
    object, _COUNT_ENDS' subject), or does what the question (its tokens ``asked``) counts."""
    return any(counted & set(lexical_tokens(m[2])) or _PART_OF.match(m[2]) or _verb(m[1]) in asked
               for m in _COUNT_TAKES.finditer(sentence)) \
        or any(counted & set(lexical_tokens(m[1])) for m in _COUNT_ENDS.finditer(sentence))


def _verb(words: str) -> str:
    """The token of a count verb a question may ask with ("adopted" → its token); none for "got
    a new", which "how many kids has Sam got?" does not ask."""
    verb = words.split()[0].lower()
    return "" if verb == "got" else lexical_tokens(verb)[0]


def _changes(text: str, question: PresentQuestion, lent: frozenset[str] = frozenset(), said: str | None = None
             ) -> bool | None:
    """Whether a candidate announces a change of the answer (True), is on topic only (False),
    or is off topic (None). The change must be said in a sentence on the topic: "I'm switching
    to hiking training. Leah and I will stay in huts" changes nothing about where Leah lives.
    A sentence that says "instead" right after one on the topic is on it too: it replaces what
    was just said ("The Dolomites are off. I'm going to Lisbon instead."); so is the first
    sentence of an answer to a question on the topic (``lent``: the question's tokens, see
    :func:`.latest.asked_before`): "How's the ankle?" — "Completely fine." A change is read only
    where a sentence states what holds or was done as of the day it was ``said`` (:func:`_stated`):
    "I start at a GP surgery in June" changes nothing yet."""
    split = sentence_tokens(text)
    on_topic = _on_topic(split, question, lent)
    if not on_topic:
        return None
    stated = [_stated(sentence, question, said) for sentence, _tokens in split]
    beside = {m for n in on_topic if _NEW_STATE.search(stated[n]) for m in (n - 1, n + 1) if 0 <= m < len(split)}
    return any(question.announces(stated[n])
               or question.slots and _new_of_topic(stated[n], question.topic) for n in on_topic) \
        or any(question.announces(clause) for m in beside for clause in _CLAUSE.split(stated[m])
               if FIRST_PERSON.search(clause))


def _stated(sentence: str, question: PresentQuestion, said: str | None) -> str:
    """What a sentence states as holding, or as done, on the day it was ``said``: without its
    clauses that tell what is still to come (a plan, a wish, an appointment: :func:`.extract.realis`),
    which state no value as of that day ("The doctor wants to replace it. Maybe June."), unless the
    question asks about what is to come (``plans``), or the time they name has come by the question's
    reference day (``by``). Whole when ``said`` is not given."""
    return sentence if said is None or question.plans else realis(sentence, said, question.by)


def _to_come_only(text: str, question: PresentQuestion, lent: frozenset[str], said: str) -> bool:
    """Whether a candidate on the topic says of it only what is still to come (:func:`_stated`):
    "We're thinking of leaving Petone" is on where they live, and states no new home."""
    split = sentence_tokens(text)
    on_topic = _on_topic(split, question, lent)
    if question.plans or not on_topic:
        return False
    for n in on_topic:
        stated = _stated(split[n][0], question, said)
        if stated == split[n][0] or stated and (question.on_topic(stated, frozenset(lexical_tokens(stated)))
                                                or n == 0 and question.topic & lent or _INSTEAD.search(stated)):
            return False
    return True


def _on_topic(split: tuple[tuple[str, frozenset[str]], ...], question: PresentQuestion, lent: frozenset[str]
              ) -> list[int]:
    """The sentences of a candidate (``split``: :func:`sentence_tokens`) on the topic, by number
    (see :func:`_changes`)."""
    return [n for n, (sentence, tokens) in enumerate(split)
            if question.on_topic(sentence, tokens) or n and question.on_topic(*split[n - 1])
            and _INSTEAD.search(sentence) or n == 0 and bool(question.topic & lent)]


def _states_value(text: str, question: PresentQuestion, lent: frozenset[str], names: Sequence[str],
                  said: str | None = None) -> bool:
    """Whether a sentence of a candidate on the topic states a value of the kind the question
    asks for (:func:`.latest.states_kind`): "Still thirty-five." answering "How many goats now?".
    For a name, a sentence on the topic that speaks of someone by a pronoun names them in the
    sentence before: "Olena started making the cheese with me. So now it's the two of them
    helping"."""
    split = sentence_tokens(text)
    return question.kind is not None and any(
        states_kind(_stated(split[m][0], question, said), question.kind, names, question.counted) for n in _on_topic(split, question, lent)
        for m in ([n - 1, n] if n and question.kind == "name" and _PRONOUN.search(split[n][0]) else [n]))


def _new_of_topic(sentence: str, topic: frozenset[str]) -> bool:
    """"The new place in Walthamstow", "my new job": "new" before a word of the slot's topic, for
    a slot question. Not "new" alone: LoCoMo's turns say it mostly of things that replace nothing
    ("my new phone", "new recipes"), and lifting those cost its questions."""
    return any(topic & set(lexical_tokens(m[1])) for m in _NEW.finditer(sentence))


@dataclasses.dataclass(frozen=True)
class _Held:
    """What the candidates' facts say of the asked slot (see :func:`_held_values`)."""

    words: frozenset[str] = frozenset()  # the words of the values the subjects held
    stating: frozenset[int] = frozenset()  # the candidates that state a value for a subject
    others: frozenset[int] = frozenset()  # those that state one for someone else only
    through: frozenset[int] = frozenset()  # those stating a value replaced only after the period asked about


def _facts_of(store: "Store", item_ids: list[int]) -> dict[int, list[Fact]]:
    """The facts each candidate states, by item id."""
    items_of: dict[int, list[int]] = {}
    for fact_id, item in store.facts_of_items(item_ids):
        items_of.setdefault(fact_id, []).append(item)
    out: dict[int, list[Fact]] = {}
    for row in store.fact_rows(sorted(items_of)):
        fact = fact_of_row(row)
        for item in items_of[fact.id]:
            out.setdefault(item, []).append(fact)
    return out


def _held_values(rules: "Rules", question: PresentQuestion, subjects: dict[int, str],
                 facts_of: dict[int, list[Fact]]) -> _Held:
    """What these candidates' facts (``facts_of``, by item) say the subject held of what the
    question asks, so that a
    change that names only the old value is on topic without a word of the question. For a slot
    question: the words of the slot's values ("I'm studying chemistry": chemistry, so "I'm
    switching from chemistry to computer science" is on topic), and the candidates that state a
    value (:func:`_newest_value_first` puts them newest first), and those that state one for
    someone else only ("Leah lives in Denver" for "where does Maya live?"). For a question about
    no slot: the names in the objects of the subject's facts that share a word with the question
    ("Kenji is learning Portuguese" for "what language is Kenji learning?", so "I dropped
    Portuguese" is on topic); only names, as the rest of such an object says nothing that a
    change would repeat."""
    words: set[str] = set()
    stating: set[int] = set()
    others: set[int] = set()
    through: set[int] = set()
    for item, facts in facts_of.items():
        for fact in facts:
            if question.slots:
                found = rules.slot_of(fact.subject, fact.predicate, fact.object)
                if found is None and fact.subject_id in subjects and question.slot_cues & set(lexical_tokens(fact.predicate)):
                    words |= set(lexical_tokens(" ".join(object_names(fact.object))))  # "is moving to Bergen"
                if found is None or found[0].name not in question.slots or found[1]:
                    continue
                if _held_by(fact, found[0], subjects):
                    words |= set(lexical_tokens(fact.object))
                    stating.add(item)
                    if question.period is not None and _held_through(fact, question.period, question.by):
                        through.add(item)
                else:
                    others.add(item)
            elif fact.subject_id in subjects and question.terms & set(lexical_tokens(f"{fact.predicate} {fact.object}")):
                words |= set(lexical_tokens(" ".join(object_names(fact.object))))
    return _Held(frozenset(words - set(lexical_tokens(" ".join(subjects.values())))), frozenset(stating),
                 frozenset(others - stating), frozenset(through))


def _held_through(fact: Fact, period: Period, by: str | None) -> bool:
    """Whether the rules found ``fact`` held for the greater part of the ``period`` asked about (up
    to the reference day ``by``) and replaced it later: "Daniel works at Cartwheel" through May 2023
    (Lumen Labs from July), "Daniel lives in a studio in Capitol Hill" through September 2023 (Fremont
    from its 30th). The value a question about that period asks for, whatever a turn said in it or
    after it that names him but states no value the rules read ("We move in on September 30th"). A
    fact nothing replaced may have been replaced in words no rule reads ("We moved! A cottage in
    Kilkeel"), and a period without bounds of its own ("in early 2026") has none."""
    last = earliest(period.last, by)
    if fact.superseded_by is None or fact.retired_at or not (period.first and last and len(last) >= 10):
        return False
    first, last_day = date.fromisoformat(period.first).toordinal(), date.fromisoformat(last[:10]).toordinal()
    start = _first_day(fact.valid_from or "0001")
    end = _first_day(fact.valid_to) if fact.valid_to else None
    if start is None or last_day < first:
        return False
    held_from = max(first, date.fromisoformat(start).toordinal())
    held_to = min(last_day + 1, date.fromisoformat(end).toordinal() if end else last_day + 1)
    return 2 * (held_to - held_from) > last_day - first + 1


_KIN_BEFORE = f"(?:{_KIN_BEFORE_WORDS})"


def _held_by(fact: Fact, slot: Slot, subjects: dict[int, str]) -> bool:
    """Whether a fact of ``slot`` states a value the subject holds: a fact filed under them about
    them ("Ava moved to Leeds"), or, for a slot of what someone has ("favourite", "manager"), about
    their own ("Ava's favourite food"). "Ava's brother moved to Glasgow" is filed under Ava and is
    her brother's home; "Tom's favourite food" is Tom's."""
    name = subjects.get(fact.subject_id) if fact.subject_id is not None else None
    if name is None:
        return False
    key, own = entity_key(fact.subject), entity_key(name)
    return key == own or bool(slot.subjects) and key.startswith(own + " ")


# What stands between an owner's name and her relative's in "Zuzana's sister Hana", "Mel's little brother Jo".
_RELATION = re.compile(rf"['’]s (?:{_KIN_BEFORE} )?{_KIN}s? ")


@functools.lru_cache(maxsize=4096)
def _whole_name(name: str) -> re.Pattern[str]:
    """A name as whole words (compiled once per name: the same people are asked about again and again)."""
    return re.compile(rf"\b{re.escape(name)}\b")


def _asked_of(query: str, subjects: dict[int, str]) -> dict[int, str]:
    """The subjects a question asks about: "Where does Zuzana's sister Hana live now?" names Zuzana
    only to say whose sister Hana is, so Hana's news answers it and Zuzana's own does not. Only a
    relation a person has ("sister", "boss"): "Zuzana's talk with Hana" is Zuzana's; and not an owner
    named again in her own right ("Does Zuzana's sister Hana still live near Zuzana?")."""
    relations = [(m.start(), m.end()) for m in _RELATION.finditer(query)]
    if not relations:
        return subjects
    spans = {i: [(m.start(), m.end()) for m in _whole_name(name).finditer(query)] for i, name in subjects.items()}
    owners = {i for i, found in spans.items()
              if len(found) == 1 and any(found[0][1] == start and any(at == end for j, others in spans.items() if j != i
                                                                      for at, _ in others)
                                         for start, end in relations)}
    return {i: name for i, name in subjects.items() if i not in owners}


# What follows a name that says only whose relative the question asks about: "'s mother" of "Jun's
# mother", " and Jun's mother" of "Cora and Jun's mother" (a name after "and": capitalised).
_WHOSE_KIN = re.compile(rf"(?:\s+and\s+[A-Z][\w'-]*)*['’]s\s+(?i:(?:{_KIN_BEFORE}\s+)?({_KIN})s?)\b")


def _claimants(query: str, subjects: dict[int, str], rules: "Rules", slots: frozenset[str]) -> list[int]:
    """The subjects whose own newer claims of the asked slots answer the question: not one named
    only as whose relative it asks about ("Where does Cora and Jun's mother live?" asks no home of
    Cora's or Jun's), unless the relative is what the slot asks ("Who is Jun's partner?")."""
    asks = {word for name in slots for word in rules.slots[name].asks}
    return [i for i, name in subjects.items()
            if not all((m := _WHOSE_KIN.match(query, found.end())) and m[1].lower() not in asks
                       for found in _whole_name(name).finditer(query))]


def lift_changes(store: "Store", index: "Index", rules: "Rules", query: str, subjects: dict[int, str],
                 ranking: "Ranking", as_of: str | None, period: Period | None = None) -> "Ranking":
    """The ranking with each candidate that announces a change of the answer to a present-tense
    question above the older on-topic candidates (see the module docstring). ``subjects``: the
    entities the question names, by id, with their names; none: the speakers of the candidates
    (:func:`_voices`); ``period``: the past period the question asks about (:func:`asked_period`),
    whose last day ``as_of`` already is when earlier ("Where was Morven living in January 2026?":
    the present as of then)."""
    subjects = _asked_of(query, subjects)
    unnamed = not subjects
    if unnamed:
        subjects = _voices(store, index.item_ids[ranking.slots[:WINDOW]].tolist())
    question = present_question(query, rules, list(subjects.values()), unnamed, period) if subjects else None
    if question is None or len(ranking.slots) < 2:
        return ranking
    if question.period is not None and as_of is None:  # "in early 2026" and no reference time: no day to read it at
        return ranking
    question = dataclasses.replace(question, by=as_of or date.today().isoformat())
    ranking = bring_newer_claims(store, index, rules, question.slots, _claimants(query, subjects, rules, question.slots),
                                 ranking, as_of, WINDOW)
    top = ranking.slots[:WINDOW]
    ids = [int(i) for i in index.item_ids[top]]
    named, spoken, other_names, speaker_of = _naming(store, ids, subjects)
    said = said_on(store, index, top)
    known = [i for n, i in enumerate(ids) if not (as_of and later(said[n], as_of))]  # said by the reference time
    window = store.item_texts(known)
    spoken |= spoken_for(window, speaker_of, owners(store, subjects))  # "we" of its owner
    lent, asked_about = asked_before(store, index, top, subjects, window)
    # a subject's answer to a question about someone else ("And Yasmin?") tells of them; one asked of
    # the speaker alone ("Hey Ava, how have you been?") is the speaker's to tell, in the first person
    told_of = named | {i for i, who in asked_about.items() if who - {speaker_of.get(i)}}
    named |= set(asked_about) | naming_in_text({i: t for i, t in window.items() if i not in named | spoken}, subjects.values())
    texts = {i: t for i, t in window.items() if i in named | spoken}
    if unnamed:  # told by anyone: only news of the thing an older candidate told of
        texts = _same_thing(texts, question, lent, {i: said[n] for n, i in enumerate(ids)})
    if question.counted is not None:
        counted = _counted_names(question, texts.values(), subjects.values())
        question = dataclasses.replace(question, counted=question.counted | counted, slot_cues=question.slot_cues | counted)
    if question.slots or any(question.announces(sentence) for text in texts.values()
                             for sentence, _tokens in sentence_tokens(text)):
        held = _held_values(rules, question, subjects, _facts_of(store, known if question.slots else list(texts)))
    else:  # about no slot and no change said: what the subject held could put nothing above anything
        held = _Held()
    stating = held.stating
    hearsay = spoken - told_of - stating  # turns of a subject's that tell of no other subject and state no value
    question = dataclasses.replace(question, slot_cues=question.slot_cues | held.words)
    question = dataclasses.replace(  # what the subject has, and what answered the topic, by its name too
        question, slot_cues=question.slot_cues | _names_held_on_topic(question, texts, other_names, lent, spoken))
    topical, changes, values = _verdicts(ids, texts, question, subjects, lent=lent, said=said, hearsay=hearsay,
                                         stating=stating, spoken=spoken, other_names=other_names)
    lifted = set(changes)
    if question.kind is not None and values:  # the latest value of the kind asked is lifted as a change is
        lifted.add(max(values, key=lambda m: (said[m], -m)))
    placed = list(range(len(ids)))  # placed[k]: the candidate now at place k of the window
    for k, n in zip(topical, _newest_value_first(_lifted(topical, lifted, said), values, said)):
        placed[k] = n
    placed = _latest_value_above_older(placed, {n for n in values if ids[n] in stating},  # a slot's, by the facts
                                       [n for n, i in enumerate(ids) if i in texts], said,
                                       {n for n, i in enumerate(ids) if i in held.others}
                                       | (_said_after(said, as_of) if question.period is not None and question.period.last
                                          else set()),
                                       {n for n, i in enumerate(ids) if i in held.through},
                                       {n for n, i in enumerate(ids) if i in texts} - set(topical))
    if placed == list(range(len(ids))):
        return ranking
    positions = np.arange(len(ranking.slots))
    positions[:len(placed)] = placed
    slots = ranking.slots[positions]
    found = {int(s): list(ranking.found_by.get(int(s), [])) for s in slots.tolist()}
    for k, n in enumerate(placed):
        if n > k:  # moved up: as a change it tells, as a newer value of the slot it states, or both
            found[int(slots[k])] += [mark for mark, why in (("change", changes), ("value", values))
                                     if n in why and mark not in found[int(slots[k])]]
    return dataclasses.replace(ranking, slots=slots, scores=ranking.scores,  # the places keep their scores
                               found_by=found, features={k: v[positions] for k, v in ranking.features.items()})


def _verdicts(ids: list[int], texts: dict[int, str], question: PresentQuestion, subjects: dict[int, str], *,
              lent: dict[int, frozenset[str]], said: list[str], hearsay: set[int], stating: frozenset[int],
              spoken: set[int], other_names: dict[int, list[str]]) -> tuple[list[int], set[int], set[int]]:
    """What each candidate of the window (``ids``, best first) says of the question, by its
    position: the on-topic ones (best first), those that tell a change of the answer, and those
    that state a value of the asked slot. A candidate without a text in ``texts`` names no
    subject, or was said after the reference time: it says nothing here."""
    topical: list[int] = []
    changes: set[int] = set()
    values: set[int] = set()
    for n, item_id in enumerate(ids):
        text = texts.get(item_id)
        if text is None:
            continue
        asked = lent.get(item_id, frozenset())
        if _to_come_only(text, question, asked, said[n]):  # a plan on the topic: passed by what is said after it
            topical.append(n)
            continue
        verdict = _changes(text, question, asked, said[n])
        if verdict and item_id in hearsay and not question.others:
            verdict = _own_change(text, question, other_names.get(item_id, ()), said[n])
        if verdict is False and question.state and states(text, question.own, asked, names=subjects.values(),
                                                          own_voice=item_id in spoken,
                                                          said=None if question.plans else said[n], by=question.by):
            verdict = True  # the latest word on whether it holds, change word or not
        if item_id in stating or verdict is not None and _states_value(text, question, asked,
                                                                        other_names.get(item_id, ()), said[n]):
            values.add(n)
            verdict = bool(verdict)
        if verdict is not None:
            topical.append(n)
            if verdict:
                changes.add(n)
    return topical, changes, values


def _names_held_on_topic(question: PresentQuestion, texts: dict[int, str], other_names: dict[int, list[str]],
                         lent: dict[int, frozenset[str]], spoken: set[int]) -> frozenset[str]:
    """The tokens of the names (the store's entities, no subject) that the candidates on the
    topic hold as the subject's own ("my Corolla", "my old Land Rover" said by the subject, "your
    Corolla" to them), and those in the first sentence of an answer to a question on the topic
    ("Where do you get your parts?" — "Still Velotrade in Cologne."): what the subject has or
    uses is often said once by its name, and its change by the name alone ("And I sold the
    Corolla", "I dropped Velotrade"). Not every name of a turn on the topic, nor of the sentences
    beside its own: the people those hold ("Eilidh found the packet") put their other news above
    the answer."""
    found: set[str] = set()
    for item, names in other_names.items():
        text = texts.get(item)
        asked = lent.get(item, frozenset())
        if text is None or _changes(text, question, asked) is None:
            continue
        answer = sentences(text)[0] if question.topic & asked else ""
        found |= {token for name in names if _owns(text, name, item in spoken) or re.search(rf"\b{re.escape(name)}\b", answer)
                  for token in lexical_tokens(name)}
    return frozenset(found)


_PERSON = re.compile(PEOPLE, re.X)


def _owns(text: str, name: str, own_voice: bool) -> bool:
    """Whether a text calls the thing ``name`` names the subject's: "my Corolla", "my old Land
    Rover" in the subject's voice (``own_voice``), "your Corolla" to them; the words between are
    adjectives, so no function word ("our kitchen in Glenwood" owns no Glenwood) and no person's
    noun ("my cousin Ada" is someone else, whose news is theirs)."""
    mine = "my|our" if own_voice else "your"
    return any(not any(w in STOPWORDS or _PERSON.fullmatch(w) for w in m[1].split())
               for m in re.finditer(rf"\b(?i:{mine})\s+((?:[a-z][\w'-]*\s+){{0,{_ADJECTIVES}}}){re.escape(name)}\b", text))


def _counted_names(question: PresentQuestion, texts: Iterable[str], names: Iterable[str]) -> frozenset[str]:
    """For "how many cats does Priyanka have?": the names in the subject's sentences on the
    question's words ("my two cats, Biscuit and Pickle"), which a change of the count names
    alone ("we lost Biscuit in April")."""
    found = {token for text in texts for sentence, tokens in sentence_tokens(text) if question.terms & tokens
             for token in lexical_tokens(" ".join(object_names(sentence)))}
    return frozenset(found - set(lexical_tokens(" ".join(names))))


_HOW = frozenset(lexical_tokens("many much"))  # of "how many", which asks and names nothing


def _same_thing(texts: dict[int, str], question: PresentQuestion, lent: dict[int, frozenset[str]],
                said: dict[int, str]) -> dict[int, str]:
    """Of the candidates of a question that names no one (``texts``, by item id; ``said``: their
    days), those that hold, with the question they answer (``lent``), every word naming the thing
    asked about that an older one holds: the question's words but what it counts ("chess", "club"
    of "How many members does the chess club have?"). "The club I run for runners is up to sixty
    members now" is no news of the chess club of "The chess club has forty members"; "We've got
    thirty-four on the rota now", answering "Still growing, the station?", is news of the station's
    rota."""
    thing = question.terms - (question.counted or frozenset()) - STATE_WORDS - _HOW
    held = {i: thing & (frozenset(lexical_tokens(t)) | lent.get(i, frozenset())) for i, t in texts.items()}
    return {i: t for i, t in texts.items() if all(held[o] <= held[i] for o in texts if said[o] < said[i])}


def _voices(store: "Store", item_ids: list[int]) -> dict[int, str]:
    """The speakers of the candidates, by id, with their names: whom a question that names no one
    ("How many singers are in the choir?") is about, as a thing is told of by those who have it
    ("We're at thirty-two singers now"), in turns that name no one either."""
    return {entity: surface for _item, entity, surface, role in store.mentions_of_items(item_ids) if role == "speaker"}


def _naming(store: "Store", item_ids: list[int], subjects: dict[int, str]
            ) -> tuple[set[int], set[int], dict[int, list[str]], dict[int, int]]:
    """The candidates that name a subject (by a name they hold), those whose speaker is one, the
    names each holds of others, and each one's speaker: one read of the window's mentions."""
    named: set[int] = set()
    spoken: set[int] = set()
    other_names: dict[int, list[str]] = {}
    speaker_of: dict[int, int] = {}
    for item, entity, surface, role in store.mentions_of_items(item_ids):
        if role == "speaker":
            speaker_of[item] = entity
        if entity in subjects:
            (spoken if role == "speaker" else named).add(item)
        elif role != "speaker":
            other_names.setdefault(item, []).append(surface)
    return named, spoken, other_names, speaker_of


def _own_change(text: str, question: PresentQuestion, other_names: Sequence[str], said: str | None = None) -> bool:
    """Whether a subject's turn that names no subject announces a change of their own: in what
    is left of its sentences without the clauses that are someone else's. A speaker tells their
    own news as "I", "we" or a request ("can you go back to English?"); "Leah moved to Boulder in
    July", said by Maya, is Leah's news, not Maya's, and so is what follows of Leah in the
    sentence ("Hanne didn't go to Bergen in the end, the aquarium job fell through"), up to a
    clause in the first person; a clause that opens with its verb shares the subject before it, so "She
    went to buy shelves and left me to unpack the kitchen" is hers though it says "me", and "they hired me
    after the internship" is the speaker's. Someone who is part of what the subject held is no one else:
    "Rosa moved in with her boyfriend" changes whom Asha shares her flat with when Asha shared it
    with Rosa (a name on the topic)."""
    others = [name for name in other_names if not question.topic & set(lexical_tokens(name))]
    own: list[str] = []
    someone_else = False
    for sentence, _tokens in sentence_tokens(text):
        if asks_about_listener(sentence):  # "What are you driving now?": the answer is the listener's
            someone_else = True
            continue
        kept = []
        for clause in _CLAUSE.split(sentence):
            relative = _RELATIVE.match(clause)
            if relative and not FIRST_PERSON.search(clause[relative.end():]):  # "My brother just moved to Glasgow"
                someone_else = True
            elif FIRST_PERSON.search(clause) and not (someone_else and _opens_with_verb(clause)):
                someone_else = False
            elif _SOMEONE_ELSE.match(clause) or any(clause.startswith(name) for name in others):
                someone_else = True
            if not someone_else:
                kept.append(clause)
        if kept:
            own.append(", ".join(kept))
    return bool(own) and bool(_changes(". ".join(own), question, said=said))


def _opens_with_verb(clause: str) -> bool:
    """Whether a clause has no subject of its own, its first word a verb: it shares the subject of
    the clause before ("She went to buy shelves and left me to unpack the kitchen" is her leaving, the
    speaker only its object), where "They hired me" has its own and is the speaker's news."""
    words = clause.split(maxsplit=1)
    return bool(words) and is_verb(words[0].lower())


def _lifted(topical: list[int], changes: set[int], said: list[str]) -> list[int]:
    """The on-topic positions reordered: each change, newest first, just above the first older
    on-topic candidate ranked above it."""
    order = list(topical)
    for n in sorted(changes, key=lambda k: (said[k], -k), reverse=True):
        at = order.index(n)
        older = next((k for k, m in enumerate(order[:at]) if said[m] < said[n]), None)
        if older is not None:
            order.insert(older, order.pop(at))
    return order


def _newest_value_first(order: list[int], values: set[int], said: list[str]) -> list[int]:
    """``order`` with the candidates that state a value of the asked slot newest first, in the
    places they hold: the latest value said by the reference time is the answer, whether or not
    the rules could tell that it replaced the others (the places of every other candidate stay)."""
    places = [k for k, m in enumerate(order) if m in values]
    newest = sorted((order[k] for k in places), key=lambda m: (said[m], -m), reverse=True)
    out = list(order)
    for k, m in zip(places, newest):
        out[k] = m
    return out


def _said_after(said: list[str], as_of: str | None) -> set[int]:
    """The candidates said after the past period a question asks about ("where did Daniel work in
    May 2023?"): what they say holds after it, so the value that held then passes them."""
    return {n for n, day in enumerate(said) if as_of and later(day, as_of)}


def _latest_value_above_older(placed: list[int], values: set[int], naming: list[int], said: list[str],
                              others: set[int], through: set[int] = frozenset(), off_topic: set[int] = frozenset()) -> list[int]:
    """``placed`` with the latest value of the asked slot said by the reference time just above
    the older candidates naming the subject placed above it, on topic or not, and above those that
    state a value of the slot for someone else only: "He moved to Grenoble" answers "where does
    Julien live?" before "Julien and I broke up", which names him but states no home, and before
    "Ines lives in Lyon". It never passes a candidate naming the subject said on its day or later,
    which may tell a newer value in words no rule reads ("they made me assistant editor"), unless
    the value that candidate states is someone else's, or it was said on the value's day and holds
    no word of the topic (``off_topic``: "Yes, August 12th in Spokane, I'm the best man", said the
    day Daniel told he started at Lumen Labs, tells no newer employer); only that one candidate
    moves. ``others``: the candidates it passes whatever they name (someone else's value, or said
    after the past period the question asks about); ``through``: the values the rules found held
    through most of that period (:func:`_held_through`), which pass the candidates naming the
    subject said later too."""
    if not values:
        return placed
    latest = max(values, key=lambda m: (said[m], -m))
    at = placed.index(latest)
    naming_set = set(naming)
    quiet = {n for n in off_topic if said[n] == said[latest]}
    top = 0 if latest in through else at
    while top > 0 and not (placed[top - 1] in naming_set - others - quiet and said[placed[top - 1]] >= said[latest]):
        top -= 1
    older = next((k for k in range(top, at) if placed[k] in naming_set and (said[placed[k]] < said[latest] or latest in through
                                                                             or placed[k] in quiet)
                  or placed[k] in others), None)
    if older is None:
        return placed
    out = list(placed)
    out.insert(older, out.pop(at))
    return out
