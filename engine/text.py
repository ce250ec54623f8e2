"""Normalisation, tokenisation and sentence splitting for English and Korean, with no data files.

Two token streams come out of one text:

* the **lexical** stream for BM25: English words (stop words dropped, Porter-stemmed), and for
  Hangul words a guarded particle-stripped stem, its syllable bigrams and the bigrams across
  the space between adjacent Hangul words, so that spacing and particle changes still match;
* the **feature** stream for the local embedders: the lexical stream plus optional character
  n-grams of Latin words.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

# Hangul syllable runs and other word runs are separate words, so "KM인가" is "km" + "인가".
_WORD = re.compile(r"[\uac00-\ud7a3]+|[^\W_\uac00-\ud7a3]+(?:'[^\W_\uac00-\ud7a3]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?。？！])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9\uac00-\ud7a3])")
_INITIALS = re.compile(r"(?:[^\W\d_]\.)+")  # "J.", "u.s.", "p.m.", "e.g."
_ABBREVIATIONS = {"mr.", "mrs.", "ms.", "dr.", "st.", "vs.", "e.g.", "i.e.", "etc.", "prof.", "jr.", "sr.", "no."}

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves
    out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this those through
    to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's
    where where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're
    you've your yours yourself yourselves also just really yeah oh hey hi wow s t d ll re ve m""".split()
)

# Korean particles (조사), longest first. Single-syllable ones are stripped only when the stem
# ends as the particle requires (받침 or not), and never from a stem of under two syllables.
_PARTICLES_LONG = sorted(
    """에서는 에게서 으로는 으로써 으로서 이라는 이라고 에서도 까지는 부터는 에게는 한테서 에서 에게 한테 으로 부터
    까지 처럼 보다 이나 라는 라고 하고 이랑 에는 에도 로는 로서 로써 마다 조차 만큼 께서 은요 는요 이요 인가 인지
    이다 였다 이며 이고""".split(),
    key=len,
    reverse=True,
)
_PARTICLES_AFTER_BATCHIM = {"은", "이", "을", "과", "으로"}
_PARTICLES_AFTER_VOWEL = {"는", "가", "를", "와", "로"}
_PARTICLES_ANY = {"에", "도", "만", "의", "나", "랑"}


def normalize(text: str) -> str:
    """NFKC, case-folded, with curly quotes made straight."""
    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2019", "'").replace("\u2018", "'").casefold()


def words(text: str) -> list[str]:
    """Words of the normalised text, possessive ``'s`` removed."""
    out = []
    for w in _WORD.findall(normalize(text)):
        if w.endswith("'s"):
            w = w[:-2]
        if w:
            out.append(w)
    return out


def _has_batchim(syllable: str) -> bool:
    code = ord(syllable) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


@lru_cache(maxsize=200_000)
def strip_particle(word: str) -> str:
    """The stem of a Hangul word without its trailing particle, or the word itself."""
    for p in _PARTICLES_LONG:
        if word.endswith(p) and len(word) - len(p) >= 2:
            return word[: -len(p)]
    if len(word) >= 3:
        last, stem = word[-1], word[:-1]
        if last in _PARTICLES_ANY and last != "의":
            return stem
        if last in _PARTICLES_AFTER_BATCHIM and _has_batchim(stem[-1]):
            return stem
        if last in _PARTICLES_AFTER_VOWEL and not _has_batchim(stem[-1]):
            return stem
    return word


@lru_cache(maxsize=200_000)
def _hangul_tokens(word: str) -> tuple[str, ...]:
    """The particle-stripped stem and its syllable bigrams (marked ``~``), two-syllable stems too.

    Bigrams are what make spacing and particle changes match: "수도는" and "몽골의수도는" share
    ``~수도``. Keeping the unstripped word as well, or taking bigrams of the unstripped word,
    lowers MIRACL-ko dev quality (docs/benchmarks.md, "Measurements behind the code").
    """
    stem_ = strip_particle(word)
    return (stem_, *("~" + stem_[i : i + 2] for i in range(len(stem_) - 1)))


@lru_cache(maxsize=500_000)
def latin_token(word: str) -> str | None:
    """The BM25 token of a normalised non-Hangul word: possessive gone, stemmed; None if dropped."""
    if word.endswith("'s"):
        word = word[:-2]
    if not word or word in STOPWORDS or (word.isdigit() and len(word) > 6):
        return None
    if len(word) > 64:
        word = word[:64]
    return stem(word) if word.isascii() and word.isalpha() else word


def lexical_tokens(text: str, char_ngrams: bool = False) -> list[str]:
    """The BM25 token stream of ``text``; with ``char_ngrams``, also the character trigrams
    (marked ``#``) of non-Hangul words of five letters or more, which lets typos match.

    Adjacent Hangul words also give the bigram across their space (the first word's last
    syllable, usually its particle, + the next word's first), the same token a query written
    without that space produces inside its one long word.
    """
    out: list[str] = []
    previous = ""
    for w in _WORD.findall(normalize(text)):
        if "\uac00" <= w[0] <= "\ud7a3":  # the word pattern keeps Hangul runs whole and apart
            if previous:
                out.append("~" + previous[-1] + w[0])
            out.extend(_hangul_tokens(w))
            previous = w
        else:
            previous = ""
            tok = latin_token(w)
            if tok:
                out.append(tok)
                if char_ngrams and len(w) >= 5:
                    out.extend(_trigrams(w.removesuffix("'s")))
    return out


@lru_cache(maxsize=200_000)
def _trigrams(word: str) -> tuple[str, ...]:
    padded = f"<{word}>"
    return tuple("#" + padded[i : i + 3] for i in range(len(padded) - 2))


def feature_tokens(text: str, ngrams: bool = True) -> list[str]:
    """The embedder's feature stream: the lexical stream, with character trigrams by default."""
    return lexical_tokens(text, char_ngrams=ngrams)


def sentences(text: str) -> list[str]:
    """Split text into sentences; keeps abbreviations and decimals intact."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        start = 0
        for m in _SENTENCE_END.finditer(para):
            candidate = para[start : m.start()].strip()
            last_word = candidate.rsplit(" ", 1)[-1].lower().lstrip("([\"'") if candidate else ""
            if last_word in _ABBREVIATIONS or _INITIALS.fullmatch(last_word):
                continue
            if candidate:
                out.append(candidate)
            start = m.end()
        tail = para[start:].strip()
        if tail:
            out.append(tail)
    return out


def token_count(text: str) -> int:
    """A cheap model-agnostic token estimate: words plus punctuation runs."""
    return len(re.findall(r"\w+|[^\w\s]", text))


# -- what a turn asks of the listener (fused's speaker feature, the present stage) ----------------

# A request opening a turn: "Can you …", "Could you please …", "Please …"; not "Can you believe
# …?", "Would you imagine …?", "Can you guess …?": those ask the listener to share the speaker's
# surprise at some news, not to do anything.
_REQUEST = re.compile(r"\s*(?:(?:can|could|would|will)\s+you\b(?!\s+(?:even\s+)?(?:believe|imagine|guess|picture)\b)"
                      r"|please\b)", re.I)
# A speaker speaking of themself ("I'm", "my", "we", "our"); "us" too, though it may be the country.
FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|myself|we|us|our|ours|ourselves)\b", re.I)
# A question that has the listener guess some news: "Guess what?", "Guess who's moving to London?",
# "You'll never guess who called": the speaker's news is what follows, or the answer.
_GUESS = re.compile(r"\s*(?:(?:you(?:'ll|’ll| will) never|can you|could you)\s+)?guess\b", re.I)


def asks_listener(text: str) -> bool:
    """Whether ``text`` asks (a question mark) the listener for something: it opens with "Can
    you …", "Could you …" or "Please …" (but not "Can you believe …?"). Such a turn asks for no
    one's news; it says what the speaker wants. Read once per item, at ingest and at a load (the
    store's ``asks_listener``)."""
    return "?" in text and _REQUEST.match(text) is not None


def asks_about_listener(sentence: str) -> bool:
    """Whether a sentence asks the listener about their life: a question with no word of the
    speaker's ("What are you driving now?", "How's the new house?", "Settled in yet?", "Still
    working those brutal night shifts?") that is no request (:func:`asks_listener`: "Can you go
    back to English?" says what the speaker wants) and does not have them guess some news ("Guess
    who's moving to London?" is the speaker's). The answer is the listener's."""
    return (sentence.rstrip().endswith("?") and not FIRST_PERSON.search(sentence) and not asks_listener(sentence)
            and not _GUESS.match(sentence))


def about_listener(text: str) -> bool:
    """Whether a turn asks after the listener's news and tells none of its speaker's: it has no
    first-person word, and at least half its words are in sentences that ask about the listener
    (:func:`asks_about_listener`). "Maya! It's been way too long. How's life in Portland? Still
    working those brutal night shifts?" asks about Maya's work, not the speaker's; "The boys start
    their new school on Monday. How's Nain doing?" tells the speaker's news first. Read once per
    item, at ingest and at a load (the store's ``about_listener``)."""
    if "?" not in text or FIRST_PERSON.search(text):
        return False
    asking = sum(len(sentence.split()) for sentence in sentences(text) if asks_about_listener(sentence))
    return 2 * asking >= len(text.split())


# -- short forms of a person's name (the knowledge area's linking, fused's speaker feature) --------------

SHORT_FORM_DROPS = 2  # the letters a short form leaves out at least (:func:`nickname_of`)
# A first name longer than this is no person's ("x" * 100000 as a speaker is content): it has no short
# forms, which would otherwise be as many as its letters, each as long.
LONGEST_FIRST_NAME = 24


def _first_name(name: str) -> str:
    return name.split(maxsplit=1)[0] if name.strip() else ""


def short_forms(name: str) -> list[str]:
    """The short forms of a person's name (a key): the beginnings of its first name of three
    letters or more that leave out :data:`SHORT_FORM_DROPS` letters at least ("mel" and "mela" of
    "melanie"). A name one letter longer is another name: "Ann" and her sister "Anna", "Dan" and
    "Dana", "Jan" and "Jane"."""
    first = _first_name(name)
    return [first[:n] for n in range(3, len(first) - SHORT_FORM_DROPS + 1)] if len(first) <= LONGEST_FIRST_NAME else []


def _shortens(short: str, name: str) -> bool:
    """Whether ``short`` is one of :func:`short_forms` of ``name``, without listing them."""
    first = _first_name(name)
    return len(first) <= LONGEST_FIRST_NAME and 3 <= len(short) <= len(first) - SHORT_FORM_DROPS \
        and first.startswith(short)


def nickname_of(short: str, people: Iterable[str]) -> str | None:
    """The one person (a key of ``people``) of whose name ``short`` is a short form
    (:func:`short_forms`): "nico" is Nicolás, "sam" Samantha. None when it is one of none, or of
    more than one ("ali" with Alice and Alison stays apart: either may be meant)."""
    if " " in short:
        return None
    found = {p for p in people if _shortens(short, p)}
    return found.pop() if len(found) == 1 else None


def one_shortens_the_other(a: str, b: str) -> bool:
    """Whether one of two names (keys) is a short form of the other (:func:`short_forms`): "gus"
    and "gustavo reyes"; not "ana de la fuente" and "anna de la fuente", spelled alike."""
    return _shortens(a, b) or _shortens(b, a)


# -- Porter stemmer (M. F. Porter, 1980), the original algorithm -------------------------------

_VOWELS = frozenset("aeiou")


def _cons(w: str, i: int) -> bool:
    ch = w[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(stem_: str) -> int:
    """m in [C](VC)^m[V]."""
    m, i, n = 0, 0, len(stem_)
    while i < n and _cons(stem_, i):
        i += 1
    while i < n:
        while i < n and not _cons(stem_, i):
            i += 1
        if i >= n:
            break
        while i < n and _cons(stem_, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem_: str) -> bool:
    return any(not _cons(stem_, i) for i in range(len(stem_)))


def _double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    if len(w) < 3:
        return False
    return _cons(w, len(w) - 3) and not _cons(w, len(w) - 2) and _cons(w, len(w) - 1) and w[-1] not in "wxy"


def _replace(w: str, rules: list[tuple[str, str]], min_m: int) -> str:
    for suffix, repl in rules:
        if w.endswith(suffix):
            base = w[: -len(suffix)]
            return base + repl if _measure(base) > min_m else w
    return w


_STEP2 = sorted([
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("bli", "ble"),
    ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
], key=lambda rule: -len(rule[0]))  # longest suffix first
_STEP3 = [("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", "")]
_STEP4 = sorted([
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate",
    "iti", "ous", "ive", "ize",
], key=len, reverse=True)


@lru_cache(maxsize=200_000)
def stem(w: str) -> str:
    """Porter-stem an ASCII lower-case word."""
    if len(w) <= 2:
        return w
    # step 1a
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("ss"):
        pass
    elif w.endswith("s"):
        w = w[:-1]
    # step 1b
    extra = False
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w, extra = w[:-2], True
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w, extra = w[:-3], True
    if extra:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif _double_cons(w) and w[-1] not in "lsz":
            w = w[:-1]
        elif _measure(w) == 1 and _cvc(w):
            w += "e"
    # step 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    # steps 2-3
    w = _replace(w, _STEP2, 0)
    w = _replace(w, _STEP3, 0)
    # step 4
    for suffix in _STEP4:
        if w.endswith(suffix):
            base = w[: -len(suffix)]
            if _measure(base) > 1 and (suffix != "ion" or base.endswith(("s", "t"))):
                w = base
            break
    # step 5
    if w.endswith("e"):
        base = w[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            w = base
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w
