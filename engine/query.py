"""Query understanding, offline: what a question is about, what kind of answer it wants, and the
store's own words for the words it uses.

A person asks in their own words, which are seldom the words the store happens to hold. Three
things help, each measured on the reworded LoCoMo questions (docs/benchmarks.md):

* **framing** — the words that only shape a question ("tell me", "do you know", "what kind of",
  "remember") weigh little; the **focus** (content words, names, dates) keeps its full weight;
* **bridging** — each content word brings in its related words from a lexicon (synonyms,
  broader and narrower words, derived forms) that the store actually holds, at a fraction of its
  weight, so "crash" also finds "accident" and "jogging" finds "running";
* **answer type** — "when" asks for a time, "where" for a place, "who" for a person; the
  ``answer`` signal lets ``fused`` favour items that hold a time when a time is asked for.
"""

from __future__ import annotations

import gzip
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Callable, Mapping

import numpy as np

from .text import latin_token, lexical_tokens, normalize, words

# Words that shape a question rather than say what it is about (before stemming).
FRAMING_WORDS = frozenset(
    """know knew known tell told remember remembers remembered recall recalls recalled think thought wonder wondering
    idea ideas mention mentioned mentions say said says kind kinds sort sorts type types thing things stuff something
    anything happen happened happens would could likely probably ever now nowadays currently lately recently exactly actually
    please curious info information detail details specific particular any some way ways
    go goes going went gone get gets got getting make makes made take takes took taken put come came have has had
    do does did give gave keep kept let seem seems want wanted""".split()
)  # the second line: light verbs, which carry a question's shape more than its content
# Phrases whose words only place a question in time or shape it ("where does Bea live these days?":
# "days" is no topic of it, and matched "three days a week" first).
FRAMING_PHRASES = re.compile(r"\b(?:these days|at the moment|right now|at present|for now|any more)\b")
FRAMING_WEIGHT = 0.2  # a framing word keeps this share of its weight (0 would lose "what kind of art": art stays)
EXPANSION_WEIGHT = 0.5  # a related word from the lexicon weighs this × its relation's strength
EXPANSION_LIMIT = 8  # related words kept per query word, the strongest first
KNOWN_WORD_EXPANSION = 0.5  # a word the store itself holds brings its related words in at half that

ANSWER_TYPES = {"when": "time", "where": "place", "who": "person", "whom": "person", "whose": "person"}
# Words an item holding an answer of a kind tends to use (before stemming); years are added from
# the store's own vocabulary. Only "time" has them: lists of place and person words were measured
# too, and gained nothing on LoCoMo while costing MuSiQue (docs/benchmarks.md).
ANSWER_WORDS = {
    "time": """yesterday today tonight tomorrow ago last next week weeks weekend month months year years morning
        afternoon evening night monday tuesday wednesday thursday friday saturday sunday january february march
        april may june july august september october november december summer winter spring autumn
        recently earlier later since date birthday anniversary""",
}
# A question that says none of these asks what holds now ("where does Bea live?", "who is Ilse
# crewed with these days?"): a past tense, an earlier time, a date. "When did…", "what was…" and
# "where was Raúl living in June 2025?" ask about a time of their own.
_NOT_NOW = re.compile(r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|used to|before|ago|last|first|originally"
                      r"|(?:19|20)\d\d|january|february|march|april|may|june|july|august|september|october|november"
                      r"|december|spring|summer|autumn|winter)\b")
_WHEN_SHAPES = re.compile(r"\b(what|which)\s+(date|day|month|year|time|week|weekend)\b|\bhow\s+(?:long|much\s+time)\b")
# Nouns that ask for a kind of answer after "what" / "which", as a question word does: "Which city
# did John recommend?" asks a place as "Where…" does, "Which people did Nate invite?" a person.
_KIND_NOUNS = {noun: kind for kind, nouns in {
    "place": "place city country state nation town village location destination spot venue",
    "person": "person people"}.items() for noun in nouns.split()}
_PLURALS = {"places": "place", "cities": "city", "countries": "country", "states": "state", "nations": "nation",
            "towns": "town", "villages": "village", "locations": "location", "destinations": "destination",
            "spots": "spot", "venues": "venue", "persons": "person"}


@dataclass
class QueryPlan:
    """The query's lexical terms with their weights, and the kind of answer it asks for."""

    terms: dict[str, float] = field(default_factory=dict)  # lexical token → weight
    expansions: dict[str, float] = field(default_factory=dict)  # the terms the lexicon added (also in ``terms``)
    answer_type: str | None = None  # "time" | "place" | "person" | None
    # The words whose presence in the vocabulary the plan read: as the vocabulary only grows, the
    # plan stays what it is while none of them joins it (the feedback memory keeps its plans so).
    consulted: set[str] = field(default_factory=set)


def answer_type(text: str) -> str | None:
    """The kind of answer a question asks for, from its question word ("what date" is "when", and
    so is "how long": "How long has Nate had his turtles?" is answered by "for 3 years"), or from
    the noun a "what" / "which" asks with ("which country" is "where")."""
    lowered = normalize(text)
    if _WHEN_SHAPES.search(lowered):
        return "time"
    opening = words(lowered)[:8]
    for word in opening[:4]:  # the question word opens the question, or follows a short lead-in
        if word in ANSWER_TYPES:
            return ANSWER_TYPES[word]
    return _asked_by_noun(opening)


_AFTER_HEAD = frozenset("""is was are were do does did has have had will would can could should might may must
    where that which who whom whose when in""".split())  # a word that may follow the noun a question asks with


def _asked_by_noun(opening: list[str]) -> str | None:
    """The kind a "what" / "which" question asks by its noun (:data:`_KIND_NOUNS`): the noun right
    after it, after one word ("What European countries…"), or after "is the" ("What's the odd spot
    where…"), as the head of its phrase, which a verb or a clause word follows; not a noun that
    names something else ("What country music band…", "What people skills…", "What state of mind…")."""
    for n, word in enumerate(opening[:4]):
        if word not in ("what", "which"):
            continue
        rest = opening[n + 1:]
        if rest[:1] and rest[0] in ("is", "was", "are", "were"):
            rest = rest[1:]
        if rest[:1] == ["the"]:
            rest = rest[1:]
        for k, noun in enumerate(rest[:2]):
            kind = _KIND_NOUNS.get(_PLURALS.get(noun, noun))
            if kind and (k + 1 == len(rest) or rest[k + 1] in _AFTER_HEAD):
                return kind
        return None
    return None


_SO_FAR = re.compile(r"\b(?:has|have|hasn't|haven't)\b(?:\s+[\w']+){0,3}?\s+[\w']+(?:ed|en|wn|ne|un|ught|ot|ut)\b")
_ONGOING = re.compile(r"\bbeen\s+\w+ing\b")


def asks_now(text: str) -> bool:
    """Whether a question asks what holds now: it names no past tense, earlier time or date, and
    does not ask what has happened so far ("which cities has Lena visited?": every one counts)
    unless it goes on ("which yoga has Maria been practicing?")."""
    lowered = normalize(text)
    return _NOT_NOW.search(lowered) is None and (_SO_FAR.search(lowered) is None or _ONGOING.search(lowered) is not None)


def answer_tokens(kind: str, vocabulary: Mapping[str, int]) -> list[str]:
    """The lexical tokens of :data:`ANSWER_WORDS` ``kind`` that the store holds (years too, for time)."""
    tokens = {t for w in ANSWER_WORDS[kind].split() if (t := latin_token(w))}
    if kind == "time":
        tokens |= {str(y) for y in range(1900, 2100)}
    return sorted(t for t in tokens if t in vocabulary)


def holds_answer(kind: str, vocabulary: Mapping[str, int], postings: "Callable[[np.ndarray], np.ndarray]") -> np.ndarray:
    """Per slot, whether the item uses any of the answer words of ``kind``; ``postings`` scores
    slots for term ids (BM25), so this reads only those words' postings."""
    ids = np.array([vocabulary[t] for t in answer_tokens(kind, vocabulary)], dtype=np.int64)
    return postings(ids) > 0


@lru_cache(maxsize=1)
def framing_tokens() -> frozenset[str]:
    return frozenset(t for w in FRAMING_WORDS if (t := latin_token(w)))


def plan(text: str, vocabulary: Mapping[str, int], lexicon: "Lexicon | None" = None, char_ngrams: bool = False) -> QueryPlan:
    """Weights of the query's tokens that ``vocabulary`` knows: 1 + ln(tf) for focus words, a
    small share for framing words, and related words from ``lexicon`` the store holds."""
    counts: dict[str, int] = {}
    for token in lexical_tokens(text, char_ngrams):
        counts[token] = counts.get(token, 0) + 1
    framing = framing_tokens()
    phrased: dict[str, int] = {}
    for phrase in FRAMING_PHRASES.findall(normalize(text)):
        for token in lexical_tokens(phrase, char_ngrams):
            phrased[token] = phrased.get(token, 0) + 1
    framing = framing | {t for t, n in phrased.items() if n >= counts.get(t, 0)}
    out = QueryPlan(answer_type=answer_type(text), consulted=set(counts))
    for token, n in counts.items():
        weight = 1.0 + math.log(n)
        if token in framing:
            weight *= FRAMING_WEIGHT
        if token in vocabulary:
            out.terms[token] = weight
    if lexicon is not None:
        names = name_tokens(text)
        for token in counts:
            if token in framing or token in names:
                continue
            candidates = lexicon.related(token)
            out.consulted.update(t for t, _ in candidates)
            related = [(t, s) for t, s in candidates if t in vocabulary and t not in counts]
            share = KNOWN_WORD_EXPANSION if token in vocabulary else 1.0
            for t, strength in sorted(related, key=lambda ts: -ts[1])[:EXPANSION_LIMIT]:
                w = EXPANSION_WEIGHT * strength * share
                if w > out.expansions.get(t, 0.0):
                    out.expansions[t] = w
        out.terms.update(out.expansions)
    return out


def name_words(text: str) -> set[str]:
    """Capitalised words past the first (case-folded, possessive dropped): the names a question
    uses ("Where does Gen work?": "gen")."""
    found = re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w']+", text.strip())
    return {normalize(w).removesuffix("'s") for w in found}


def name_tokens(text: str) -> set[str]:
    """Lexical tokens of :func:`name_words`: names, which need no related words."""
    return {t for w in name_words(text) if (t := latin_token(w))}


class Lexicon:
    """Related words by lexical token (Porter stems), each with a strength in (0, 1].

    Lines are split into pairs only when their token is first looked up: a query needs a few of
    the tens of thousands, and parsing them all would cost a second on the first query."""

    def __init__(self, lines: dict[str, str]) -> None:
        self._lines = lines
        self._parsed: dict[str, tuple[tuple[str, float], ...]] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def related(self, token: str) -> tuple[tuple[str, float], ...]:
        found = self._parsed.get(token)
        if found is None:
            pairs = (pair.rpartition(":") for pair in self._lines.get(token, "").split())
            found = self._parsed[token] = tuple((word, float(strength)) for word, _, strength in pairs)
        return found

    @classmethod
    def parse(cls, text: str) -> "Lexicon":
        """One line per token: ``token<TAB>related:strength related:strength …``."""
        lines = (line.partition("\t") for line in text.splitlines())
        return cls({token: rest for token, _, rest in lines if rest})


@lru_cache(maxsize=1)
def english_lexicon() -> Lexicon:
    """The bundled English lexicon (derived from WordNet 3.0; see engine/data/README.md)."""
    blob = resources.files(__package__).joinpath("data", "lexicon_en.tsv.gz").read_bytes()
    return Lexicon.parse(gzip.decompress(blob).decode("utf-8"))
