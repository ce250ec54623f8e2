"""The offline, rule-based extractor: names, facts and 5W1H events from one item, no model.

What it reads, in order: the speaker (a person entity; "I", "my", "we" resolve to them), the
title (a passage's own entity; "he", "she", "it" at a clause start resolve to it), capitalised
spans and known names (entities), time expressions (resolved against the turn's date), and per
clause a subject–verb–object pattern (a fact, and an event for the episode). An image caption
is read as the speaker sharing a photo of what it shows.

A fact must read like one: the subject a noun phrase (a name, "the speaker's X", a gerund
phrase, a plain noun phrase; never an imperative, a table cell or a heading's pronoun), the
predicate a verb group (auxiliaries, adverbs, a verb from :mod:`.verbs`, its infinitive or
particle; it agrees with a rewritten first person: "I have" → "Maya has"), the object a noun
phrase or clause that ends at a phrase boundary. An object that only points elsewhere ("it",
"mine", "that") resolves to the object just before in the same sentence or the fact is dropped:
a missing fact costs less than a wrong one.

It is deliberately shallow (no tagger, no parser): fast (well under a millisecond per turn) and
predictable, with its quality measured by ``mnemoscope eval extraction`` against LoCoMo's
annotations (recall) and hand judgements of a seeded sample (precision).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, timedelta
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Callable

from ..records import Item
from ..text import STOPWORDS, sentences
from .entities import EntityRegistry, entity_key
from .records import Event, FactDraft
from .restate import appointed, restated, title_after_as
from .temporal import MONTHS, WEEKDAYS, find_times, past_month
from .verbs import BASES, FORMS, PARTICIPLES, agree, is_past, is_third_person, is_verb

# -- word classes (closed lists; open classes are guessed from position and verbs.py) ----------

_BE = frozenset("am is are was were be been being isn't aren't wasn't weren't".split())
_HAVE_DO = frozenset("have has had do does did haven't hasn't hadn't don't doesn't didn't".split())
_MODALS = frozenset("""will would can could should might must may shall do does did to gonna won't wouldn't can't
couldn't shouldn't don't doesn't didn't""".split())
_AUX = _BE | _HAVE_DO | _MODALS - {"to"}
_POSSESSIVES = frozenset("my our your his her their its".split())
_PERSONAL = frozenset("i me you he she it we they him us them".split())
_ADVERBS = frozenset("""just really also finally recently actually still always even already totally definitely so
currently usually often sometimes probably almost ever truly honestly kinda super sure not n't never""".split())
_NEGATIONS = frozenset("not n't never".split())
_LY_NOUNS = frozenset("""family belly jelly holly bully lily rally ally july italy assembly butterfly anomaly
monopoly""".split())
_ARTICLES = frozenset("a an the".split())
_DETERMINERS = frozenset("a an the some any this that these those".split())
_PARTICLES = frozenset("to at in on for with about into from up out by of over off around through across like".split())
_QUANTITIES = frozenset("one two three four five six seven eight nine ten twelve few many several both".split())
_CHAIN = frozenset("""going want wants wanted plan plans planning planned hope hoping trying try tried decided
started start starts begin began love loves loved like likes liked enjoy enjoys enjoyed need needs needed""".split())
_CLAUSE_BREAK = frozenset("""and but so because while when where whereas which who although though since until after
before if as or""".split())
_SHARING = frozenset("and or but".split())  # a verb right after these shares the previous subject
# After these an "-ing" word is the verb of a reduced clause ("before baking"), not a gerund subject
_SUBORDINATORS = frozenset("before after since until while when where if as though although whereas".split())
_RELATIVE = frozenset("which who".split())  # the clause after these is about the previous object
_LEAD_SKIP = frozenset("""yeah yes oh well also actually so and but hey wow omg ok okay haha lol hi hello thanks thank
honestly anyway plus then now btw cool great awesome nice right sure absolutely totally meanwhile anyways besides
luckily lately recently today tonight yesterday basically""".split())
# "-ing" words that introduce a clause rather than name an activity: "meaning the gluten was …"
_CLAUSE_TAKING = frozenset("""meaning knowing thinking hoping saying feeling realizing realising showing
suggesting assuming considering""".split())
_OPINION = frozenset("think guess mean bet know see wonder agree hope".split())
_PRONOUN_SUBJECTS = frozenset("he she it they".split())
_NOT_THIRD_PERSON = frozenset("i we you they these those".split())  # subjects a verb in "-s" cannot agree with
_TIME_NOUNS = frozenset("other day night morning evening afternoon week weekend month year time summer winter".split())
# Objects that only point elsewhere: a fact "X —[likes]→ it" says nothing until resolved.
_PRONOUN_OBJECTS = frozenset("it them him those these this that one ones mine yours hers theirs ours".split())
_VAGUE_OBJECTS = frozenset("""something anything nothing everything stuff yet afterwards later again differently
anymore together well too also there here""".split())  # alone, these are no object
_RESOLVABLE = frozenset("it them".split())  # resolved to the object just before, in the same sentence
_TRAILING = _DETERMINERS | _PARTICLES | _ADVERBS | frozenset("and or very more most too whole such than be been being"
                                                               .split())
# A day of the week is when, not whom: "on Wednesdays" names no one, in a turn or a question.
WEEKDAY_NAMES = frozenset(WEEKDAYS) | {f"{day}s" for day in WEEKDAYS}
_MONTHS_WEEKDAYS = WEEKDAY_NAMES | frozenset(MONTHS)
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll hey hi hello wow oh yeah yes no thanks thank ok okay omg lol haha good great awesome nice
    cool sure so and but or also well that this these those what when where why how who which it its my our your
    his her their we they he she you me just really absolutely congrats congratulations sounds love glad sorry""".split()
) | _MONTHS_WEEKDAYS
_NAME_JOINERS = ("of", "the", "de", "&")
# Capitalised only because they open a sentence: never the first word of a name.
_OPENERS = frozenset("""although though meanwhile yesterday today tomorrow tonight now next last anyway besides however
plus maybe perhaps actually honestly luckily sadly finally speaking""".split())
_NO_NAME_START = _NOT_NAMES | STOPWORDS | _OPENERS  # a word that opens no name (lower case)
_TITLES = frozenset("mr mrs ms dr prof st".split())  # alone, a title names nobody
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)?")  # "11th" of "June 11th" is no name

# Who "he" and "she" ("her", "him", "his") may mean: a name the conversation has introduced as a person ("my brother
# Ollie", "Julien and I", "Aoife says"), never a place, a company or a pet, which these patterns do
# not introduce. Someone or some animal the turn speaks of without a name ("my son", "a puppy")
# is what its "he" or "she" means, so then the pronoun stays unresolved.
PEOPLE = r"""(?:brother|sister|son|daughter|mum|mom|mother|dad|father|wife|husband|partner|boyfriend|girlfriend|
fianc[ée]e?|friend|cousin|nephew|niece|uncle|aunt|grandma|grandpa|grandmother|grandfather|boss|manager|colleague|
flatmate|roommate|neighbou?r|supervisor|teacher|coworker)"""
_ANIMATE = rf"""(?:{PEOPLE}|kids?|child|baby|boy|girl|guy|man|woman|lady|dog|cat|pup|puppy|kitten|pet|horse|bird|
rabbit|bunny|hamster|parrot|turtle)"""
_PERSON_NAME = r"(?P<name>[A-ZÀ-Þ][^\W\dA-ZÀ-Þ_]+(?:-[A-ZÀ-Þ][^\W\dA-ZÀ-Þ_]+)?)\b(?!['’])"  # "Nicolás", "Zoë"
_INTRODUCED = [re.compile(p, re.X) for p in (
    rf"\b(?:[Mm]y|[Oo]ur|[Yy]our|[Hh]is|[Hh]er|[Tt]heir|[A-Z][a-z]+'s)\s+(?:(?:little|big|older|younger|best|new|old|late)\s+)?{PEOPLE}\s+{_PERSON_NAME}",
    rf"\b{_PERSON_NAME}\s+and\s+(?:I|me)\b",
    rf"\b(?:[Mm]e|I)\s+and\s+{_PERSON_NAME}",
    rf"\b{_PERSON_NAME}\s+(?:says|said|told|tells|asked|called|texted|phoned|thinks|wants|sends)\b",
)]
# "sister Bronwen" of "my sister Bronwen", "coworker Tomás" of "Maya's coworker Tomás": someone
# introduced by name, the subject under that name.
_NAMED_PERSON = re.compile(rf"(?:(?:little|big|older|younger|best|new|old|late)\s+)?{PEOPLE}\s+"
                           r"(?P<name>[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)?)", re.X)
_UNNAMED = re.compile(rf"\b(?:[Mm]y|[Oo]ur|[Aa]n?|[Tt]his|[Tt]hat|[Tt]he|[Hh]is|[Hh]er|[Tt]heir)\s+(?:[a-z]+\s+)?{_ANIMATE}s?\b(?!\s+[A-Z])", re.X)
# The words that open a noun phrase of someone or something the turn does not name ("The landlord
# phoned today, he moved to York", "Her landlord sent a letter, he …"): whom a later "he" or "she"
# of the sentence may mean as well as the person talked of (:func:`_another_subject`).
_OPENS_NOUN_PHRASE = _DETERMINERS | _POSSESSIVES
# A person spoken of without a name: "she moved", "her doctor", "give him my love".
_OF_PERSON = re.compile(r"\b(?:[Hh]e|[Ss]he|[Hh]im|[Hh]er|[Hh]is)\b")

# "St. Mary's", "Mr. Greg": the period ends no clause; a saint's or a mountain's is part of a place's name
_PLACE_ABBREVIATION = r"(?:St|Mt)\.(?=\s+[A-Z])"
_TOKEN = re.compile(r"(?:Dr|Mr|Mrs|Ms|Prof)\.(?=\s+[A-Z])|" + _PLACE_ABBREVIATION
                    + r"|\d+(?:[.:,–]\d+)*(?: ?%)?|[^\W_][\w'’\-&]*|[.,;:!?()\"]")
_CONTRACTION = re.compile(r"\b(I|i|we|We|you|You|they|They|he|He|she|She|it|It|that|That)['’](m|re|ve|ll|d|s)\b")
_CAPITAL_SPAN = re.compile(
    r"\b(?:" + _PLACE_ABBREVIATION + r"|[A-Z][\w'’\-&.]*[\w])(?:\s+(?:(?:of|the|de|da|von|van|for|la|le|du|del|&)\s+)*[A-Z0-9][\w'’\-&.]*[\w]?)*"
)
_LOCATION = re.compile(r"\b(?:in|at|to|from|near)\s+(?:the\s+)?([A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+)*)")
_REASON = re.compile(r"\b(?:because|since|so that|in order to|to help|as a way to)\s+([^.,;!?]+)", re.I)
_METHOD = re.compile(r"\b(?:by|using|through|via)\s+([^.,;!?]+)", re.I)
_NEXT_WORD = re.compile(r"\s+(\w+)")
_DASH = re.compile(r"\s[-–—]\s|—|(?<!\d)–|–(?!\d)")  # a dash between clauses, not a range ("12–14%")
_ASIDE = re.compile(r"\s*\([^()]*\)")  # "(HAPE)", "(2023)": an aside inside a clause, not a break in it
# "My favourite band at the moment is Khruangbin", "These days I mostly listen to …": how long a
# state holds, said between the subject and its verb or before both, is no part of the clause
_FOR_NOW = re.compile(r"^\s*(?:at the moment|for the moment|at present|these days|nowadays)\b,?|"
                      r"\s*\b(?:at the moment|for the moment|at present|these days|nowadays)\b", re.I)
_MARKS = frozenset(",;:.!?()\"")
_LEADING_MARKS = " \"'(-*•#>0123456789.)"
_EXPAND = {"m": "am", "re": "are", "ve": "have", "ll": "will", "d": "would", "s": "is"}
MAX_OBJECT_WORDS = 12
MAX_SUBJECT_WORDS = 4
MAX_GERUND_WORDS = 10


@dataclass
class Extraction:
    """What one item yields: (surface, key, kind, role) mentions, fact drafts and events."""

    mentions: list[tuple[str, str, str, str]] = field(default_factory=list)
    facts: list[FactDraft] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


@dataclass
class _Subject:
    text: str
    key: str
    used: int  # words of the clause it takes
    first_person: bool = False  # rewritten from "I"/"we": the verb must agree with it
    elided: str = ""  # the auxiliary the text left out: "Researching agencies" is "is researching"
    thing: bool = False  # a plain noun phrase ("the dough"), not a name or a person: "it" can mean it
    named: bool = True  # a person, a title or a name; False for any other noun phrase or gerund


@dataclass
class _Sentence:
    """What the clauses of one sentence share, and what the last clause left for the next."""

    item: Item
    text: str
    speaker: str
    you: str
    referent: str  # what "he/she/it/they" opening a clause means (a passage's own title), or ""
    times: list
    when: str | None
    person: str = ""  # whom "he"/"she" opening a clause means when there is no referent, or ""
    subject: _Subject | None = None  # a verb after "and" shares it
    be: str = ""  # the last clause was progressive ("is working"): a bare "-ing" after it continues it
    object: list[str] | None = None  # "…, which is …" and a later "it" refer to it
    fact: "FactDraft | None" = None  # the last fact read: "works at Acme as a chemist" adds a title to it


def _expand(text: str) -> str:
    """"I'm" → "I am"; "'d" is "had" before a participle ("she'd discovered"), else "would"."""
    def full(m: re.Match) -> str:
        short = m.group(2).lower()
        nxt = _NEXT_WORD.match(text, m.end())
        return f"{m.group(1)} {'had' if short == 'd' and nxt and is_past(nxt.group(1).lower()) else _EXPAND[short]}"

    text = text.replace("’", "'")
    return _CONTRACTION.sub(full, text)


def capitalised_spans(sentence: str, known: Callable[[str], bool] = lambda key: False) -> list[str]:
    """Names written with capitals; a sentence's first word alone counts only if ``known``.

    Words that merely open a sentence ("Although Pepper", "Yesterday I") or a date ("June 11th")
    are not part of a name, nor is the pronoun "I" that follows them."""
    out = []
    for m in _CAPITAL_SPAN.finditer(sentence):
        span = m.group(0).rstrip(".")
        parts = span.split()
        while parts and (parts[0].lower() in _NO_NAME_START or _NUMBER.fullmatch(parts[0])):
            parts = parts[1:]
        while parts and (parts[-1].lower() in ("of", "the", "for", "&") or parts[-1] == "I" or _NUMBER.fullmatch(parts[-1])):
            parts = parts[:-1]
        if not parts:
            continue
        cell = sentence[: m.start()].rsplit("|", 1)[-1]  # a table cell opens like a sentence
        first_word = not cell.strip(_LEADING_MARKS) and span.startswith(parts[0])
        if len(parts) == 1 and (first_word and not known(entity_key(parts[0])) or parts[0].lower() in STOPWORDS
                                or parts[0].lower() in _TITLES):
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
        self.people: set[str] = set()  # keys of the names the batch introduced as persons
        # names the source's earlier pieces registered (a catch-up reads a long source in pieces):
        # not known to the rest of it, as one read of the whole source does not know them
        self.fresh: set[str] = set()
        self._talked_of = ""  # whom the talk is about: the person the last turn named, or spoke of as "she" …
        self._talk_day: str | None = None  # the day of that talk: a new day (a new session) starts afresh

    def reset(self) -> None:
        """Forget the batch (its names and speakers) before reading the next source."""
        self.local.clear()
        self.speakers.clear()
        self.people.clear()
        self.fresh.clear()
        self._talked_of = ""
        self._talk_day = None

    def addressee(self, speaker: str) -> str:
        """Who a turn speaks to: the latest earlier speaker who is someone else."""
        return next((s for s in reversed(self.speakers) if s != speaker), "")

    def known(self, key: str) -> bool:
        return key in self.local or key not in self.fresh and self.registry.lookup(key) is not None

    def _opens_with_another(self, sentence: str, speaker: str) -> bool:
        """Whether the sentence opens with a name not introduced as a person, as its subject
        ("Clover has learned to jump onto the sofa. She …": a pet, so "she" is not the person
        named before)."""
        words = _TOKEN.findall(sentence)
        if len(words) < 2 or not words[0][:1].isupper():
            return False
        first, verb = words[0].lower(), words[1].lower()
        if first in _NO_NAME_START or first in _PRONOUN_SUBJECTS:
            return False
        return (verb in _AUX or is_verb(verb) and not _is_ing(verb)) and entity_key(words[0]) not in self.people \
            and words[0] not in (speaker, self._you)

    def _introduce_people(self, text: str, speaker: str) -> None:
        """Remember the names ``text`` introduces as persons ("my sister Leonor", "Aoife says"),
        whom a later "he" or "she" may mean; the speakers are "I" and "you", never "he"."""
        for pattern in _INTRODUCED:
            for m in pattern.finditer(text):
                name = m["name"]
                low = name.lower()
                if low not in _NO_NAME_START and name not in (speaker, self._you):
                    self.people.add(entity_key(name))

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
        text = _expand(unicodedata.normalize("NFC", item.text))  # "Jose\u0301" (a macOS copy) is "José", one word
        caption = item.meta.get("image_caption")
        seen = {m[1] for m in out.mentions}
        self.local |= seen
        # A passage's title names what its pronouns mean; a Markdown heading names a topic.
        referent = title if title[:1].isupper() and "heading_path" not in item.meta else ""
        self._introduce_people(text, speaker)
        if _day(item.timestamp) != self._talk_day:  # "she" in a new session means no one from the last
            self._talked_of, self._talk_day = "", _day(item.timestamp)
        named, other = "", False  # other: someone or something else the pronoun may mean
        kept = ""  # the person talked of, when this turn speaks of them only by a pronoun
        for sentence in sentences(text):
            for span in capitalised_spans(sentence, self.known):
                key = entity_key(span)
                if key in self.people and span not in (speaker, self._you) and not span.endswith(("'s", "’s")):
                    named = span
                if key and key not in seen:
                    seen.add(key)
                    self.local.add(key)
                    out.mentions.append((span, key, "name", "mention"))
            if self.people and not (other or referent):  # no one to mean: nothing to look for
                other = _UNNAMED.search(sentence) is not None or _another_subject(sentence) \
                    or self._opens_with_another(sentence, speaker)
            person = "" if other or referent else named or self._talked_of
            if person and _OF_PERSON.search(sentence):
                kept = person
                if entity_key(person) not in seen:
                    seen.add(entity_key(person))
                    out.mentions.append((person, entity_key(person), "name", "pronoun"))
            if "|" not in sentence:  # a Markdown table's cells are no sentence
                self._clauses(sentence, item, speaker, referent, out, person)
        self._talked_of = "" if other else named or kept  # "Is she still in Leeds?" is still about Kasia
        for key in self.registry.find_in(text + (" " + caption if caption else ""), self.fresh):
            if key not in seen:
                seen.add(key)
                out.mentions.append((key, key, "name", "mention"))
        if caption and speaker:
            out.events.append(Event(item_id=item.id or 0, participants=[speaker], action=f"{speaker} shared {caption}",
                                    time=_day(item.timestamp), method="photo"))
        return out

    # -- clauses ------------------------------------------------------------------------------

    def _clauses(self, sentence: str, item: Item, speaker: str, referent: str, out: Extraction,
                 person: str = "") -> None:
        """Split a sentence at punctuation and conjunctions and read each clause; "and" inside
        a list ("my husband and kids") does not split."""
        if sentence.rstrip().endswith("?"):
            return
        times = find_times(sentence, item.timestamp)
        ctx = _Sentence(item, sentence, speaker, self._you if speaker else "", referent, times,
                        times[0].value if times else None, person)
        plain = _ASIDE.sub("", sentence)
        if "oment" in plain or "days" in plain or "resent" in plain:  # the rare sentence _FOR_NOW may change
            plain = _FOR_NOW.sub("", plain)
        tokens = _join_adjective_lists(_TOKEN.findall(_DASH.sub(", ", plain))) + ["."]
        clause: list[str] = []
        opener = ""  # the word or mark before the clause; "" at the sentence start
        for n, tok in enumerate(tokens):
            low = tok.lower()
            if low in ("and", "or") and clause and not _starts_clause(tokens, n + 1, clause[0]):
                clause.append(tok)
            elif tok in _MARKS or low in _CLAUSE_BREAK and not (low == "so" and tokens[n - 1].lower() in _AUX):
                if clause:
                    self._clause(clause, opener, ctx, out)
                clause, opener = [], low
            else:
                clause.append(tok)

    def _clause(self, words_: list[str], opener: str, ctx: _Sentence, out: Extraction) -> None:
        """Read one clause into a fact (and an event, unless it only describes): subject noun
        phrase, verb group, object; anything that does not read so yields nothing."""
        at_start = opener == ""
        title = title_after_as(_before_time(words_, ctx), ctx.fact) if opener == "as" else None
        if title is not None:
            out.facts.append(title)
        out.facts += appointed(words_, ctx.speaker, ctx.when)
        words_ = words_[_leading_skips(words_):]
        subject = None
        if len(words_) >= 2:
            subject = self._subject(words_, ctx, at_start) \
                or (_gerund_subject(words_, ctx) if opener not in _SUBORDINATORS else None) \
                or _shared_subject(words_, opener, ctx, at_start)
        group = _verb_group(words_[subject.used:], subject.elided in _BE) if subject else None
        ctx.subject, ctx.be = (subject if group else None), ""
        if group is None or opener == "if" or _hedges(group[0]):  # a condition or an opinion states no fact
            ctx.object = None
            return
        verb, used, copula = group
        if not ctx.times and any(is_past(v) for v in verb):
            _read_past_month(words_, ctx)
        if subject.elided:
            verb = [subject.elided] + verb
        if any(_is_ing(v) for v in verb) and any(v in _BE for v in verb):
            ctx.be = next(v for v in verb if v in _BE)  # "I'm working on X - rehearsing hard": is rehearsing
        verb, obj, copula = _complement(verb, copula, words_[subject.used + used:], ctx)
        ctx.object = obj
        if not obj:
            return
        if subject.first_person:
            verb = _agreeing(verb)
        predicate, obj_text = " ".join(verb), " ".join(obj)
        obj_key = entity_key(obj_text) if len(obj) <= 4 else None
        ctx.fact = FactDraft(subject.text, predicate, obj_text, subject.key, obj_key, ctx.when, subject.named)
        out.facts += [ctx.fact, *restated(ctx.fact, ctx.speaker)]
        if not copula:
            out.events.append(_event(ctx.item, subject.text, predicate, obj_text, ctx.text, ctx.when))

    def _subject(self, words_: list[str], ctx: _Sentence, at_start: bool) -> _Subject | None:
        """The noun phrase opening the clause: the speaker for "I"/"we", the speaker's thing for
        "my …", a passage's title for "he/she/it/they", a name, or a plain noun phrase."""
        low = words_[0].lower()
        speaker = ctx.speaker
        if low in ("i", "we") and speaker:
            return _Subject(speaker, entity_key(speaker), 1, first_person=True)
        if low == "gonna" and speaker:  # "Gonna continue my studies": the speaker, subject dropped
            return _Subject(speaker, entity_key(speaker), 0, first_person=True)
        if low in ("my", "our"):
            end = _noun_phrase_end(words_, 1)
            if not speaker or end == 1:
                return None
            return _named_person(words_[1:end], end) \
                or _Subject(f"{speaker}'s {' '.join(words_[1:end])}", entity_key(speaker), end)
        if low in _PRONOUN_SUBJECTS:
            if ctx.referent:
                return _Subject(ctx.referent, entity_key(ctx.referent), 1)
            if ctx.person and low in ("he", "she"):
                return _Subject(ctx.person, entity_key(ctx.person), 1)
            return _previous_thing(low, ctx)
        return self._name(words_, at_start) or _plain_subject(words_, at_start)

    def _name(self, words_: list[str], at_start: bool) -> _Subject | None:
        """A capitalised name ("Swiss Alpine Club", "The Rank Organisation"); one word only when
        it is a known name or follows "The"; never a sentence-initial imperative or gerund."""
        start = 1 if words_[0] == "The" and words_[1][:1].isupper() else 0
        first = words_[start]
        low = first.lower()
        if not first[:1].isupper() or low in _NOT_NAMES or low in STOPWORDS:
            return None
        end = start + 1
        while end < len(words_) and (words_[end][:1].isupper() or words_[end].lower() in _NAME_JOINERS
                                     and end + 1 < len(words_) and words_[end + 1][:1].isupper()):
            end += 1
        known = self.known(entity_key(" ".join(words_[start:end])))
        capitalised = end
        if end < len(words_) and words_[end].islower():  # "Coil folds are …": the name is a modifier
            end = _noun_phrase_end(words_, end)
        name = " ".join(words_[start:end])
        if at_start and start == 0 and (low in BASES or _is_ing(low)) and not known:
            return None
        if end - start == 1 and start == 0 and not known:
            return None
        if words_[start].endswith(("'s", "’s")) and (person := _named_person(words_[start + 1:end], end)):
            return person
        return _Subject(name, entity_key(name), end, named=end == capitalised)


def _named_person(phrase: list[str], used: int) -> _Subject | None:
    """The person a possessive's noun phrase introduces by name ("sister Bronwen" → Bronwen), or None."""
    found = _NAMED_PERSON.fullmatch(" ".join(phrase))
    return _Subject(found["name"], entity_key(found["name"]), used) if found else None


def _another_subject(sentence: str) -> bool:
    """Whether a noun phrase that is the subject of its verb comes before the sentence's "he" or
    "she": a determiner, up to two words and a noun, maybe "of" and a word, then a verb ("The
    landlord phoned today, he …", "A neighbour of hers is nice, she …"). Not an object ("I brought
    a slice to Rosa and she said …") nor someone named ("my sister Kasia")."""
    words = _TOKEN.findall(sentence)
    low = [w.lower() for w in words]
    end = next((n for n, w in enumerate(low) if w in ("he", "she")), 0)
    for n in range(end):
        if low[n] not in _OPENS_NOUN_PHRASE:
            continue
        for m in range(n + 1, min(n + 4, end)):
            if not words[m].islower():
                break
            after = m + 3 if m + 2 < end and low[m + 1] == "of" else m + 1
            if after < end and (low[after] in _AUX or is_verb(low[after])):
                return True
    return False


def _previous_thing(pronoun: str, ctx: _Sentence) -> _Subject | None:
    """"it"/"they" after a clause about a thing in the same sentence is that thing ("the dough
    becomes smoother, so it needs less kneading"); never a person, whom the rules cannot tell apart."""
    before = ctx.subject
    if before is None or not before.thing or pronoun not in ("it", "they"):
        return None
    if (pronoun == "they") != before.text.endswith("s"):
        return None
    return _Subject(before.text, before.key, 1, thing=True, named=False)


def _shared_subject(words_: list[str], opener: str, ctx: _Sentence, at_start: bool) -> _Subject | None:
    """A clause without a subject of its own: after "which"/"who" it is the previous object,
    after "and" (or a comma) the previous subject; a sentence opening with "-ing" is the speaker's."""
    first = words_[0]
    low = first.lower()
    if opener in _RELATIVE:
        obj = ctx.object
        if obj and len(obj) <= MAX_SUBJECT_WORDS and low in _AUX:
            text = " ".join(obj)
            return _Subject(text, entity_key(text), 0, named=False)
        return None
    shared = ctx.subject
    if shared and opener in _SHARING and first.islower() and (
            low in _AUX or low in _ADVERBS or is_verb(low) and not _is_ing(low)):
        if low in BASES and not (shared.first_person or shared.text.endswith("s")):
            return None  # "the sun has softened the surface, or take …": an imperative, not the sun
        return _Subject(shared.text, shared.key, 0, shared.first_person, thing=shared.thing, named=shared.named)
    if shared and ctx.be and opener in _SHARING | {","} and _is_ing(low) and first.islower():
        return _Subject(shared.text, shared.key, 0, shared.first_person, elided=ctx.be, named=shared.named)
    if at_start and ctx.speaker and (_is_ing(low) and is_verb(low) or low == "been") \
            and not any(w.lower() in _AUX for w in words_[1:]):  # the subject left out (not a gerund subject)
        return _Subject(ctx.speaker, entity_key(ctx.speaker), 0, first_person=True,
                        elided="has" if low == "been" else "is")
    return None


def _leading_skips(words_: list[str]) -> int:
    """How many words open the clause without saying anything ("yeah so well, ..."): counted, then
    cut once, since a clause can be a whole unpunctuated turn and cutting word by word copies it
    each time."""
    n = 0
    while n < len(words_) and words_[n].lower() in _LEAD_SKIP:
        n += 1
    return n


def _gerund_subject(words_: list[str], ctx: _Sentence) -> _Subject | None:
    """A gerund phrase as the subject: "Playing video games and watching movies are …",
    "staying resilient and focused is key"; it ends where a finite verb begins."""
    first = words_[0].lower()
    if not (_is_ing(first) and is_verb(first)) or first in _CLAUSE_TAKING:
        return None
    for end in range(1, min(len(words_), MAX_GERUND_WORDS + 1)):
        low = words_[end].lower()
        nxt = words_[end + 1].lower() if end + 1 < len(words_) else ""
        if low == "am" and words_[end - 1][:1].isdigit():  # "Starting at 6:30 am was …"
            continue
        if _is_adverb(low) and (nxt in _AUX or nxt.endswith("s") and nxt in FORMS):
            pass  # "… often beats …": the adverb opens the verb group
        elif not (low in _AUX or words_[end].islower() and low.endswith("s") and low in FORMS and low not in BASES
                  and nxt not in _AUX):  # "Sharing our experiences isn't": a plural, not a verb
            continue
        text = " ".join(_person(w, ctx) for w in words_[:end])
        return _Subject(text, entity_key(text), end, thing=True, named=False)
    return None


def _plain_subject(words_: list[str], at_start: bool) -> _Subject | None:
    """A common noun phrase of up to three words: "the dough", or a capitalised sentence
    start ("Mountain air", "Trekking poles") that is not an imperative ("Book ahead")."""
    start = 1 if words_[0].lower() == "the" else 0
    if start == 0 and not (at_start and words_[0][:1].isupper()):
        return None
    first = words_[start].lower() if start < len(words_) else ""
    if not first.replace("-", "").isalpha() or first in STOPWORDS or first in _NOT_NAMES or _is_adverb(first):
        return None
    if first in FORMS and first not in BASES:
        return None  # "Reminds me it's …", "Went to …": a verb, the subject left out; "-ing" is a gerund's
    if start == 0 and first in BASES and not (start + 1 < len(words_) and _opens_copula(words_[start + 1])):
        return None  # "Book ahead", "Add electrolytes": an imperative (but "Snow can fall", "The work builds" are subjects)
    end = _noun_phrase_end(words_, start)
    if end == start or end - start > 3:
        return None
    text = " ".join(words_[start:end])  # one capitalised word may be an unknown name: no thing for "it"
    return _Subject(text, entity_key(text), end, thing=start == 1 or end - start > 1, named=False)


def _noun_phrase_end(words_: list[str], start: int) -> int:
    """Where the verb group begins after a noun phrase starting at ``start`` (a word that can be
    a verb but is followed by an auxiliary, as in "Coil folds are", is still the noun)."""
    end = conjunct = start  # "pulmonary oedema and cerebral oedema": each conjunct as long as a noun phrase
    while end < len(words_) and end - conjunct < MAX_SUBJECT_WORDS:
        low = words_[end].lower()
        if not words_[end][:1].isalnum() or low in _DETERMINERS or low in _PARTICLES or low in _POSSESSIVES \
                or low in _PERSONAL:
            break
        if _is_adverb(low) or low in _AUX:
            break
        nxt = words_[end + 1].lower() if end + 1 < len(words_) else ""
        if low.endswith("s") and nxt in BASES and words_[end + 1].islower():
            end += 1  # "Different heads learn": a plural before the verb
            continue
        if words_[end].islower() and is_verb(low) and nxt not in _AUX \
                and not (end > 0 and (low in BASES and not words_[end - 1].endswith("s")  # "air rescue service"
                                          or words_[end - 1].lower() in _QUANTITIES)):  # "Five turns share"
            break
        if low in ("and", "or"):
            conjunct = end + 1
        end += 1
    return end


def counted_by_number(after: str) -> list[str] | None:
    """What a number counts, read from the words right after it (``after``): the words of the
    noun phrase it opens, up to a conjunction ("apple trees in the orchard": apple, trees; "years
    old today": years, old); [] for a number alone ("we're farming fifteen.", "thirty-five now"),
    which counts what the talk is about; None for a part of a group ("one of my choirs", "twenty of
    the hives"), which counts no whole. A time said of the number ("now", "today") is no noun."""
    words = _TOKEN.findall(_expand(after))
    if words and words[0].lower() == "of":
        return None
    phrase = []
    for word in words[:_noun_phrase_end(words, 0)]:
        if word.lower() in _SHARING:
            break
        if word.lower() not in _OPENERS:
            phrase.append(word)
    return phrase


def _opens_copula(word: str) -> bool:
    """An auxiliary or adverb: what makes "Snow can fall" a statement and "Bake covered" an instruction."""
    low = word.lower()
    return low in _AUX or _is_adverb(low)


def _is_ing(low: str) -> bool:
    """A gerund or present participle ("running"), not a verb that ends so ("bring", "sing")."""
    return low.endswith("ing") and low not in BASES


def _is_adverb(low: str) -> bool:
    return low in _ADVERBS or (low.endswith("ly") and len(low) > 4 and low not in FORMS and low not in _LY_NOUNS)


def _verb_group(rest: list[str], progressive: bool = False) -> tuple[list[str], int, bool] | None:
    """(verb words, words used, copula) at the start of ``rest``: auxiliaries and adverbs, then a
    main verb with its infinitive ("want to try") or particle ("signed up", "moved to"); a bare
    auxiliary is a copula ("is dry") or possession ("have a dog"). None when no verb opens it.
    ``progressive``: the subject left out "is", so a bare "-ing" verb may head the group."""
    used = 0
    while used < len(rest) and (rest[used].lower() in _AUX or _is_adverb(rest[used].lower())):
        used += 1
    verb = [w.lower() for w in rest[:used]]
    auxes = [v for v in verb if v in _AUX]
    after = rest[used + 1].lower() if used + 1 < len(rest) else ""
    if used < len(rest) and _main_verb(rest[used], auxes, progressive, after):
        verb.append(rest[used].lower())
        used += 1
    elif not auxes or auxes[-1] not in _BE | _HAVE_DO:
        return None
    else:  # a copula ("is dry") or "have"/"had"/"did" as the main verb; trailing adverbs belong to
        used = max(i for i, v in enumerate(verb) if v in _AUX or v in _NEGATIONS) + 1  # the object: "had so much fun"
        verb = verb[:used]
        if auxes[-1] in _BE:
            return verb, used, True
    if verb[-1] in _CHAIN | _HAVE_DO and used + 1 < len(rest) and rest[used].lower() == "to" \
            and _main_verb(rest[used + 1], ["to"]):
        verb += ["to", rest[used + 1].lower()]
        used += 2
    if used + 1 < len(rest) and _is_adverb(rest[used].lower()) and rest[used + 1].lower() in _PARTICLES:
        verb.append(rest[used].lower())  # "depends heavily on"
        used += 1
    if used < len(rest) and rest[used].lower() in _PARTICLES and not (
            rest[used].lower() == "to" and used + 1 < len(rest) and rest[used + 1].lower() in BASES):
        verb.append(rest[used].lower())
        used += 1
    return verb, used, False


def _main_verb(word: str, auxes: list[str], progressive: bool = False, nxt: str = "") -> bool:
    """Whether ``word`` heads the verb group after ``auxes``: a base verb after a modal or "to",
    a participle after "be"/"have", otherwise a known verb form ("adopted", "lives")."""
    low = word.lower()
    bare_start = progressive and not auxes and word[1:].islower()  # "Researching agencies" opens a sentence
    if not word.isalpha() or not (word.islower() or bare_start) or low in _DETERMINERS or low in _PARTICLES \
            or low in STOPWORDS and low not in FORMS:
        return False
    last = auxes[-1] if auxes else ""
    if _is_ing(low):
        return last in _BE or (progressive and not auxes and is_verb(low))
    if last in _MODALS:
        return True
    if last:  # after "be"/"have" only a participle ("was made", "has grown"); "is dry" is a copula
        return is_past(low) or low in PARTICIPLES
    if low in PARTICIPLES or low.endswith("ed") and nxt == "by":  # "taken by", "introduced by": no statement
        return False
    return is_verb(low)


def _hedges(verb: list[str]) -> bool:
    """"I think …", "I guess …", "I know": an opinion or a hedge, not a statement of fact."""
    main = next((v for v in verb if v not in _AUX and not _is_adverb(v)), "")
    return main in _OPINION and "to" not in verb


def _complement(verb: list[str], copula: bool, rest: list[str], ctx: _Sentence
                ) -> tuple[list[str], list[str] | None, bool]:
    """(verb, object, copula) once the object is read; "was so excited" with nothing after it
    is a description: the copula "was" with the object "so excited"."""
    obj = _object(rest, ctx)
    if obj is None and not copula and _describes(verb):
        cut = max(i for i, v in enumerate(verb) if v in _BE) + 1
        return verb[:cut], _object(verb[cut:] + rest, ctx), True
    return verb, obj, copula


def _describes(verb: list[str]) -> bool:
    """"was so excited", "am tired": be + (adverbs) + a participle used as an adjective."""
    return any(v in _BE for v in verb) and verb[-1].endswith(("ed", "en")) and verb[-1] not in _BE


def _agreeing(verb: list[str]) -> list[str]:
    """The verb group for a third-person subject: its first verb agrees ("have" → "has")."""
    for n, v in enumerate(verb):
        if not _is_adverb(v):
            return verb[:n] + [agree(v)] + verb[n + 1:]
    return verb


def _starts_clause(tokens: list[str], n: int, opening: str) -> bool:
    """Whether the word after "and"/"or" opens a new clause rather than continuing a list: a
    pronoun, an auxiliary or a past tense (a base form such as "support" is as often a noun), a
    short noun phrase with its own verb ("and the flowers are", "and Llama 2 uses"), or a verb
    agreeing with a third-person subject before its own object ("Leah moved to Boulder and
    hikes the Flatirons"). ``opening``: the first word of the clause so far."""
    word = tokens[n]
    low = word.lower()
    if low in _PRONOUN_SUBJECTS or low in ("i", "we", "you", "my", "our", "then") or word in _MARKS \
            or word.islower() and (low in _AUX or is_past(low)):
        return True
    if word.islower() and is_third_person(low) and opening.lower() not in _NOT_THIRD_PERSON \
            and _opens_object(tokens, n + 1):
        return True
    after = tokens[n + 1].lower() if n + 1 < len(tokens) else ""
    if _is_adverb(low) and (after in _AUX or is_past(after)):
        return True  # "and just teamed up"
    if low in _DETERMINERS or low in ("every", "each") or word[:1].isupper():
        for nxt in tokens[n + 1:n + 5]:
            if nxt in _MARKS or nxt.lower() in _CLAUSE_BREAK:
                return False
            if nxt.lower() in _AUX or nxt.islower() and is_verb(nxt.lower()) and not _is_ing(nxt.lower()):
                return True
    return False


def _opens_object(tokens: list[str], n: int) -> bool:
    """Whether a noun phrase that is no time opens at ``n``: "the Flatirons", "her bike", "Pepper";
    not "the other day" or "this week" (a list of nouns may end in a time: "shoes and books the
    other day")."""
    if n >= len(tokens):
        return False
    word, low = tokens[n], tokens[n].lower()
    if low in _ARTICLES or low in _POSSESSIVES:
        return n + 1 < len(tokens) and tokens[n + 1].lower() not in _TIME_NOUNS
    return word[:1].isupper() and low != "i" and word not in _MARKS and low not in MONTHS and low not in WEEKDAYS


def _join_adjective_lists(tokens: list[str]) -> list[str]:
    """Drop the comma inside "a safe, loving home": it lists adjectives, it ends no clause."""
    out = []
    for n, tok in enumerate(tokens):
        if tok == "," and 2 <= n < len(tokens) - 2 and tokens[n - 2].lower() in _ARTICLES | {"very", "so", "such"} \
                and all(t.isalpha() and t.islower() and t not in _CLAUSE_BREAK
                        for t in (tokens[n - 1], tokens[n + 1], tokens[n + 2])) \
                and tokens[n + 1] not in _POSSESSIVES | _PERSONAL | _DETERMINERS \
                and tokens[n + 2] not in _AUX:  # "so cute, his name is", "so tired, work is busy"
            continue
        out.append(tok)
    return out


def _object(rest: list[str], ctx: _Sentence) -> list[str] | None:
    """The object: up to a time expression, first and second person rewritten, articles off,
    long ones cut at a phrase boundary; a bare pronoun resolves to the object just before in
    the same sentence ("got an offer and accepted it") or the object is dropped."""
    words_: list[str] = []
    rewritten = ""  # "i" or "you" just rewritten to a name: the verb after it agrees ("you were" → "Maria was")
    for w in _before_time(rest, ctx):
        low = w.lower()
        agrees = rewritten == "i" and low in BASES | _AUX or rewritten == "you" and low in _AUX
        words_.append(agree(low) if agrees else _person(w, ctx))
        rewritten = low if low == "i" and ctx.speaker or low == "you" and ctx.you else ""
    while words_ and words_[0].lower() in _ARTICLES:
        words_.pop(0)
    if not words_ or words_[0].lower() in ("and", "or"):  # "is domed and the edges curve": no object
        return None
    if _points_elsewhere(words_):
        if words_[0].lower() not in _RESOLVABLE or not ctx.object or len(ctx.object) > MAX_SUBJECT_WORDS:
            return None
        head = next((n for n, w in enumerate(ctx.object) if w.lower() in _PARTICLES), len(ctx.object))
        words_ = ctx.object[:head or len(ctx.object)] + words_[1:]  # "an offer on Friday … accepted it": the offer
    cut = len(words_) > MAX_OBJECT_WORDS
    if cut:
        words_ = words_[:max((n for n in range(2, MAX_OBJECT_WORDS + 1) if words_[n].lower() in _PARTICLES), default=0)]
    while words_ and (words_[-1].lower() in _TRAILING or _dangles(words_[-1], ctx, cut)):
        words_.pop()
    return words_ or None


def _read_past_month(words_: list[str], ctx: _Sentence) -> None:
    """A clause in the past naming a month without its year ("moved to Boulder in July") is
    dated by it, and so are the sentence's later clauses, as with any time the sentence names."""
    month = past_month(" ".join(words_), ctx.item.timestamp)
    if month:
        ctx.times, ctx.when = [month], month.value


def _before_time(words_: list[str], ctx: _Sentence) -> list[str]:
    """The words of a clause up to its time expression ("as a barista last week": "as a barista")."""
    time_words = {w.lower() for t in ctx.times for w in t.text.split()}
    return next((words_[:n] for n, w in enumerate(words_) if w.lower() in time_words), words_)


def _dangles(word: str, ctx: _Sentence, cut: bool) -> bool:
    """A possessive with nothing after it: "decided on my" (→ "Maya's"), or one whose noun the
    cut dropped. A name written as a possessive ("left St Clare's", "at Sainsbury's") is the
    whole object and stays."""
    if not word.endswith("'s"):
        return False
    return cut or word[:1].islower() or word[:-2] in (ctx.speaker, ctx.you)


def _points_elsewhere(words_: list[str]) -> bool:
    """Whether the object is a pronoun ("it", "them", "mine", "her" alone, "that" alone), a
    clause about a pronoun ("finds it helps", "loves that it teaches") or a vague word alone
    ("something"), rather than a noun phrase or a clause about something named. "it is …"
    ("feels it is important to …") refers to nothing and stays."""
    if len(words_) > 2 and words_[0].lower() == "that" and words_[1].lower() in _PRONOUN_SUBJECTS:
        words_ = words_[1:]
    head = words_[0].lower()
    nxt = words_[1].lower() if len(words_) > 1 else ""
    if head in _PRONOUN_SUBJECTS and (nxt in _AUX or nxt.endswith("s") and nxt in FORMS and nxt not in BASES):
        return not (head == "it" and nxt in _BE)
    if head in ("this", "that", "these", "those", "her"):
        return not nxt or nxt in _TRAILING
    return head in _PRONOUN_OBJECTS or (not nxt and (head in _VAGUE_OBJECTS or _is_adverb(head)))


def _person(word: str, ctx: _Sentence) -> str:
    """First and second person inside an object, rewritten to the speaker and the addressee."""
    low = word.lower()
    if ctx.speaker and low in ("my", "our"):
        return f"{ctx.speaker}'s"
    if ctx.speaker and low in ("i", "me", "myself", "us"):
        return ctx.speaker
    if ctx.you and low in ("you", "yourself"):
        return ctx.you
    if ctx.you and low == "your":
        return f"{ctx.you}'s"
    return word


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


# -- mood: what a sentence tells as still to come ----------------------------------------------
# A plan, an intention or an appointment ("The doctor wants to replace it", "I'm supposed to start
# in August", "We're thinking of leaving Petone", "June 17th in Yarmouth") states no value as of
# the day it is said: the knee is not replaced, the job not started, and what happens is told
# later, or never. Read from the verb group, not from what it is about: a modal of the future or
# of a wish before a verb, "be going/about/supposed/due to" + verb, a verb of intending + "to" +
# verb, "thinking of" + "-ing"; or a clause in no past tense that names a time after its day.
_WOULD = frozenset("will shall would might may gonna won't wouldn't shan't".split())
_BE_TO = frozenset("going about supposed due".split())
_INTEND = frozenset("""want wants wanted wanting plan plans planned planning hope hopes hoped hoping intend intends
intended intending expect expects expected expecting aim aims aimed aiming""".split())
# "thinking of leaving", "planning on moving", "I think about moving to Edinburgh one day", "I dream of opening a café"
_WEIGH = frozenset("""thinking considering planning think thinks thought dream dreams dreamt dreamed dreaming wonder wonders
wondered wondering""".split())
# A verb of saying or thinking after the modal frames the clause that follows: "I'd say I have three
# cats", "I'll admit I sold the car" hedge the saying; what is said holds now (its own verb group tells).
# Only a clause: "that" or a subject after the verb; "We'll think about moving", "I'll think it over"
# weigh what is still to come.
_FRAMES = frozenset("say guess admit think imagine reckon bet suppose estimate".split())
_SUBJECTS = frozenset("i you he she it we they".split())
_PERFECT = frozenset("have has had".split())
_BE_FORMS = frozenset("am is are was were be been being".split())
# Where a sentence's clauses part, kept with the clause after it: "I said yes, I'm supposed to start in August".
_CLAUSE_EDGE = re.compile(r"\s*[,;:]\s+|\s+(?=(?:and|but|so|because|while|although|though|or)\s)", re.I)
# A month without a year, not one since which something holds ("from May it's Thursday to Sunday");
# one weekday, not a range of them ("open Thursday to Sunday") nor a habit ("on Saturdays").
_MONTH_WORD = re.compile(rf"(?<!(?i:since) )(?<!(?i:last) )(?<!(?i:from) )\b(?:{'|'.join(m.capitalize() for m in MONTHS)})\b(?!\s+\d{{4}})")
# … but in a plan, "from June" is when it starts: "From June we'll open Thursday to Sunday".
_FROM_MONTH = re.compile(rf"\b(?i:from|starting) ({'|'.join(m.capitalize() for m in MONTHS)})\b(?!\s+\d{{4}})")
# A verb with no subject of its own after "and"/"or"/"but" shares the verb group before it: "we will
# sell the car and move to Cork" (not "and work is busy", whose "work" has its own verb).
_SHARED_VERB = re.compile(r"\s*(?:and|or|but)\s+(?:then\s+|also\s+)?([a-z]+)\b(?!\s+(?:is|are|was|were|has|have|had|will|would)\b)",
                          re.I)
_DAY = "|".join(d.capitalize() for d in WEEKDAYS)
_ONE_WEEKDAY = re.compile(rf"(?<!(?i:last) )(?<!to )(?<!till )(?<!until )(?<!through )(?<!and )(?<![-–])\b(?:{_DAY})\b"
                          rf"(?!s|\s*(?:to|till|until|through|and|[-–])\s*(?:{_DAY}))")


def realis(sentence: str, said: str | None, by: str | None = None) -> str:
    """``sentence`` without its clauses that tell what is still to come (see above), as of the
    day it was ``said`` (ISO): what it states as holding or as done. "" when nothing is left. A
    clause that names the time it comes, when that time has come by the day ``by`` (ISO), stays:
    "I start at Beaumont in December", said in October, states the new job as of January."""
    return _realis(sentence, said[:10] if said else None, by[:10] if by else None)


# Every clause still to come holds one of these (a verb group's word, a time); most sentences hold
# none, and skip the clause reading.
_MAY_COME = re.compile(r"\b(?:" + "|".join(sorted(_WOULD | _BE_TO | _INTEND | _WEIGH)) + r")\b|['’](?:ll|d)\b|\d|"
                       r"\b(?:tomorrow|tonight|next|this|soon)\b|" + _MONTH_WORD.pattern + "|" + _ONE_WEEKDAY.pattern, re.I)


@lru_cache(maxsize=16_384)
def _realis(sentence: str, said: str | None, by: str | None) -> str:
    if not _MAY_COME.search(sentence):
        return sentence
    named = [(m.start(), m[0]) for pattern in (_MONTH_WORD, _ONE_WEEKDAY) for m in pattern.finditer(sentence)]
    kept, dropped, start = [], False, 0  # named in the whole sentence: "Saturday and Sunday" spans an edge
    come: str | None = None
    for edge in [*_CLAUSE_EDGE.finditer(sentence), None]:
        end = edge.start() if edge else len(sentence)
        clause = sentence[start:end]
        shares = come is not None and (verb := _SHARED_VERB.match(clause)) is not None and verb[1].lower() in BASES
        come = come if shares else _to_come(clause, said, [word for at, word in named if start <= at < end])
        if come is not None and not (by and come and come <= by):
            dropped = True
        elif clause.strip():
            kept.append(clause.strip())
        start = edge.end() if edge else start
    return ", ".join(kept) if dropped else sentence


def _to_come(clause: str, said: str | None, names: list[str]) -> str | None:
    """When a clause tells what is still to come, the time it names ("" for none), else None:
    its verb group (see above), or a time after ``said`` in a clause of no past tense ("We view
    it Saturday", "Maybe June"; ``names``: the months without a year and the single weekdays it
    names, which mean the next one)."""
    written = _TOKEN.findall(_expand(clause))
    tokens = [t.lower() if t != "May" else "" for t in written]  # the month, not the modal
    times = sorted(t.value for t in find_times(clause, said) if said is None or t.value[:10] > said)
    times += [_next(word, said) for word in names if said]
    when = min(times, default="")
    for n, tok in enumerate(tokens):
        rest = [t for t in tokens[n + 1:n + 4] if not _is_adverb(t)]
        nxt, after = (rest + ["", ""])[:2]
        if tok in _WOULD and not _frames(tokens[n + 1:n + 8]) and (nxt in BASES or nxt in ("be", "have") or after in BASES and nxt in _PERSONAL | {""}) \
                or tok in _BE_TO and n and tokens[n - 1] in _BE_FORMS and nxt == "to" and after in BASES \
                or tok in _INTEND and nxt == "to" and after in BASES \
                or tok in _WEIGH and nxt in ("of", "about", "on") and _is_ing(after):
            return when or min((_next(m[1], said) for m in _FROM_MONTH.finditer(clause) if said), default="")
    if any(is_past(t) or t in _PERFECT and n + 1 < len(tokens) and (is_past(tokens[n + 1]) or tokens[n + 1] in PARTICIPLES)
           for n, t in enumerate(tokens)):
        return None
    return when or (None if said or not names else "")


def _frames(words: list[str]) -> bool:
    """Whether ``words`` (after a modal) open with a verb of saying or thinking and the clause it
    frames, "that" or a subject and its verb: "say I have", "admit that we", "imagine the rent is";
    not "think about moving" nor "think it over", where the verb is what is to come."""
    words = [w for w in words if not _is_adverb(w)]
    verb, first, second = (words + ["", "", ""])[:3]
    if verb not in _FRAMES or second in _PARTICLES:  # "think it over", "think that over"
        return False
    if first == "that":
        return True
    if first in _DETERMINERS | _POSSESSIVES:
        end = _noun_phrase_end(words, 2)
        return 2 < end < len(words) and (words[end] in _AUX or is_verb(words[end]))
    return first in _SUBJECTS


def _next(word: str, said: str) -> str:
    """The next month (ISO month) or weekday (ISO day) of that name after the day ``said``."""
    day = date.fromisoformat(said)
    low = word.lower()
    if low in WEEKDAYS:
        return (day + timedelta(days=(WEEKDAYS.index(low) - day.weekday() - 1) % 7 + 1)).isoformat()
    month = MONTHS.index(low) + 1
    return f"{day.year + (month <= day.month):04d}-{month:02d}"
