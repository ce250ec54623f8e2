"""The latest word on a topic: what the present-tense lift (:mod:`.present`) reads beyond change words.

A person reading a conversation assumes that the latest thing someone said about something is
what holds now. People rarely say that something changed in words a rule knows ("the Camino's
off", "Completely fine. I ran 15 km on Sunday"), so a lift that waits for change words misses
most changes of a new conversation. This module gives the lift what needs no such words:

* which questions ask whether a state holds now — a yes/no question in the present ("Is Callum
  vegetarian?", "Does Dieter play in a band?") or one that says "still", "now" or "currently"
  (:func:`asks_state`): there the latest candidate on the question's own words, of or by the
  subject, goes above the older ones on them, change word or not (:func:`states`). Open questions
  ("what books has Tim read?", "what is Gina's favourite dance?") keep their order: most of
  LoCoMo's ask about something said once, and lifting the latest turn on their words pushed their
  evidence down;
* the question just before a candidate, from the other speaker (:func:`asked_before`): "How's the
  ankle?" — "Completely fine." is about the ankle, and "And Amira?" — "She decided against
  midwifery" is about Amira, though neither answer says so;
* a subject named in a candidate's own words (:func:`naming_in_text`): "Kerttu's lending me her
  car", said before Kerttu was known, made no mention of her when it was read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Collection

import numpy as np

from ..text import lexical_tokens, sentences

if TYPE_CHECKING:
    from ..index import Index
    from ..store import Store

# "Is Callum vegetarian?", "Does Bartosz have a pet?", "Are you still …", "Where does Julien live
# now?": whether something holds, or what holds, now. Not "Has Tim been to …?" (the past). The
# words that say "now" are no topic: a turn saying "still" is not on the question's.
# Nor a question in the conditional ("Would Caroline still want to … if …?"), which asks about no state.
_STATE = re.compile(r"(?!.*\bif\b)\s*(?:(?:is|are|does|do)\b|(?!would|could|should|might|will)\w+\b.*\b(?:still|now|currently)\b)",
                    re.I)
STATE_WORDS = frozenset(lexical_tokens("still now currently"))


def asks_state(query: str) -> bool:
    """Whether a present-tense question asks whether (or what) a state holds now."""
    return _STATE.match(query) is not None


def states(text: str, words: frozenset[str], lent: frozenset[str] = frozenset()) -> bool:
    """Whether a candidate says something on ``words`` (the question's own): a sentence holding
    one that is no question ("Are you still swimming?" says nothing), or its first sentence when
    the question just before it (``lent``, :func:`asked_before`) holds one."""
    split = sentences(text)
    return any(not sentence.rstrip().endswith("?")
               and words & (set(lexical_tokens(sentence)) | (lent if n == 0 else frozenset()))
               for n, sentence in enumerate(split))


def asked_before(store: "Store", index: "Index", slots: np.ndarray, subjects: Collection[int]
                 ) -> tuple[dict[int, frozenset[str]], set[int]]:
    """For the candidates (``slots``) that answer a question — the turn just before, in the same
    session, asks one: the question's words, by item id; and the candidates whose question names
    a subject that did not ask it ("And Amira?")."""
    before = slots - 1
    safe = np.maximum(before, 0)
    same = (before >= 0) & (index.source_ids[safe] == index.source_ids[slots]) \
        & (index.positions[safe] == index.positions[slots] - 1)
    times, own = index.times[safe], index.times[slots]
    same &= (times == own) | (np.isnan(times) & np.isnan(own))
    answer_of = {int(index.item_ids[b]): int(index.item_ids[s])
                 for b, s, ok in zip(safe.tolist(), slots.tolist(), same.tolist()) if ok}
    lent: dict[int, frozenset[str]] = {}
    for asking, text in store.item_texts(list(answer_of)).items():
        asked = [lexical_tokens(s) for s in sentences(text) if s.rstrip().endswith("?")]
        if asked:
            lent[answer_of[asking]] = frozenset(t for tokens in asked for t in tokens)
    mentions = store.mentions_of_items([b for b, a in answer_of.items() if a in lent])
    asker = {item: entity for item, entity, _surface, role in mentions if role == "speaker"}
    about = {answer_of[item] for item, entity, _surface, role in mentions
             if role != "speaker" and entity in subjects and asker.get(item) != entity}
    return lent, about


def naming_in_text(texts: dict[int, str], names: Collection[str]) -> set[int]:
    """The candidates (``texts``, by item id) whose words hold a subject's name whole."""
    spelled = sorted({n for n in names if n}, key=len, reverse=True)
    if not spelled:
        return set()
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, spelled)) + r")\b")
    return {item for item, text in texts.items() if pattern.search(text)}
