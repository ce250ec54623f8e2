"""English verbs for the rule-based extractor: which words can head a predicate, and how a verb
agrees with a third-person subject.

Without a tagger the extractor guessed verbs from position, so nouns ("poles", "air"),
adjectives ("pulmonary") and conjunctions ("and") became predicates. A closed list of common
verbs, with their inflections generated here, is the cheap fix: a word is a verb when it is a
listed form or looks like a regular past participle. Lists, not a model: predictable and fast.
"""

from __future__ import annotations

_BASES = """accept achieve add admire adopt agree aim allow announce answer apply appreciate arrange arrive ask
attend avoid bake bear beat become begin believe belong blow boil book borrow break breathe bring build burn buy
call calm care carry catch celebrate change chat check chew choose clean climb close coach collect combine come
compare compete complete compute connect consider contain continue cook cost count cover crave create cross cry
curve cut dance deal decide deliver depend describe design develop die dig discover discuss do donate draw dream dress
drink drive drop earn eat embed encourage end enjoy enter escape expect experience explain explore express fail
fall feed feel fight figure fill find finish fit fix fly focus fold follow forget forgive form freeze gain get
give go grab graduate grow guess hand handle hang happen hate have head hear help herd hike hire hit hold hope
host hug hurt imagine improve include increase inspire introduce invite join jump keep kick kill knead know land
last laugh launch lead learn leave lend let lie lift like limit listen live look lose love make manage mark marry
matter mean measure meet mentor miss mix move name need notice offer open order organize own paint pass pay perform
pick plan plant play plug post practice practise prefer prepare present prevent print produce promise protect prove
provide publish pull push put quit raise rank reach read realize realise receive recommend record recover reduce
reflect rehearse relax release rely remember remind remove rent repair repeat replace reply report represent require
rescue
research resist rest retire return review ride rise risk rotate run save say schedule score search see seem sell
send serve set settle shape share shift shoot shop show sign sing sit skip sleep slow smile solve sort speak spend
split stand start stay step stick stop store stretch struggle study submit succeed suggest support surprise swim
switch take talk taste teach tell tend test thank think throw tire touch train transfer travel treat try turn
understand use visit volunteer vote wait wake walk want warm wash watch wear weigh welcome win wish wonder work
worry write accompany act adapt adjust admit advise afford affect alter amaze annoy apologize appeal approach approve
argue assist assume attach attempt attract beg behave bend bet bite bless blend block bounce brew brush bump calculate
cancel capture cause cheer chop cite claim clarify clear cling collapse comfort commit communicate complain concentrate
conclude confess confirm confuse consist consult contact contribute control convert convince cope copy correct crash
crawl cure damage dare decorate decrease defend delay delight demand deny deserve destroy detect determine differ
disagree disappear disappoint dislike dive divide double doubt drag drain drift dry educate emerge employ enable
encounter engage enhance ensure entertain establish estimate evaluate examine exceed exchange excite exercise exist
expand extend extract fade fear fetch film fire fish float flow force frighten fry gather glance glow greet grin grip
guarantee guide harm heal heat hesitate hide hunt hurry identify ignore impress inform injure insist install intend
interrupt invent invest involve jog joke judge kiss knit knock lack lean leap lick lighten link load lock melt mention
mind nod obey observe obtain occur operate overcome pack paddle pause permit persuade phone place please point polish
pour pray predict pretend proceed process propose protest pump punish purchase qualify recognize reject relate remain
renew resolve respond restore retain retrieve reveal reward roast roll rub rush sail satisfy scare scream seal select
separate shine shout shrug sigh sink ski slide slip smell sound spell spill spin spoil spot spray spread squeeze stare
steer stir strengthen strike suffer suppose surround survive suspect swing tap tear tease tempt thrive tie tip tour
trace trade transform translate transport trap tremble trust tumble type unite unlock unpack upgrade upset urge vanish
view wander warn waste wave whisper wipe wrap yell"""

_IRREGULAR = """be am is are was were been being|have has had having|do does did done doing|go goes went gone
|get got gotten|make made|take took taken|see saw seen|come came|know knew known|think thought|give gave given
|find found|tell told|become became|leave left|feel felt|bring brought|begin began begun|keep kept|hold held
|write wrote written|stand stood|hear heard|mean meant|meet met|run ran|pay paid|sit sat|speak spoke spoken
|lead led|grow grew grown|lose lost|fall fell fallen|send sent|build built|understand understood|draw drew drawn
|break broke broken|spend spent|rise rose risen|drive drove driven|buy bought|wear wore worn|choose chose chosen
|throw threw thrown|catch caught|deal dealt|win won|forget forgot forgotten|sell sold|eat ate eaten|teach taught
|fly flew flown|sing sang sung|swim swam swum|sleep slept|ride rode ridden|drink drank drunk|say said|hang hung
|feed fed|fight fought|freeze froze frozen|blow blew blown|dig dug|forgive forgave forgiven|lend lent|lie lay lain
|light lit|wake woke woken|stick stuck|bear bore borne|beat beaten|shoot shot"""

# Past tense written like the base form: agreement cannot tell "I cut" (past) from the present.
_SAME_PAST = frozenset("cut put set let hit hurt cost quit read shut split spread".split())
_VOWELS = "aeiou"


def _third(base: str) -> str:
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if base.endswith("y") and base[-2:-1] not in _VOWELS:
        return base[:-1] + "ies"
    return base + "s"


def _doubles(base: str) -> bool:
    """stop → stopped, plan → planning: a short word ending consonant–vowel–consonant."""
    return (len(base) <= 4 and len(base) >= 3 and base[-1] not in _VOWELS + "wxy"
            and base[-2] in _VOWELS and base[-3] not in _VOWELS)


def _past(base: str) -> str:
    if base.endswith("e"):
        return base + "d"
    if base.endswith("y") and base[-2:-1] not in _VOWELS:
        return base[:-1] + "ied"
    return base + base[-1] + "ed" if _doubles(base) else base + "ed"


def _gerund(base: str) -> str:
    if base.endswith("ie"):
        return base[:-2] + "ying"
    if base.endswith("e") and not base.endswith(("ee", "ye", "oe")):
        return base[:-1] + "ing"
    return base + base[-1] + "ing" if _doubles(base) else base + "ing"


def _build() -> tuple[frozenset[str], frozenset[str], frozenset[str], dict[str, str]]:
    bases = set(_BASES.split())
    irregular = [group.split() for group in _IRREGULAR.split("|")]
    bases |= {g[0] for g in irregular}
    third = {b: _third(b) for b in bases}
    past = {_past(b) for b in bases if b not in {g[0] for g in irregular}}
    past |= {form for g in irregular for form in g[1:] if not form.endswith("ing") and form != third.get(g[0])}
    past -= {"am", "is", "are", "be", "been", "has", "does"}
    forms = bases | past | set(third.values()) | {_gerund(b) for b in bases}
    forms |= {form for g in irregular for form in g}
    third.update({"have": "has", "do": "does", "be": "is", "am": "is", "are": "is", "were": "was",
                  "don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't"})
    return frozenset(bases), frozenset(forms), frozenset(past), third


BASES, FORMS, PAST, _THIRD_OF = _build()
_THIRD_FORMS = frozenset(_THIRD_OF.values()) - BASES
# "taken", "given": never a finite verb on their own ("the memory taken by the cache" is no statement)
PARTICIPLES = frozenset(g.split()[2] for g in _IRREGULAR.split("|") if len(g.split()) == 3
                        and g.split()[2].endswith("n")) | {"done", "gone", "been"}
_NOT_PARTICIPLES = frozenset("hundred kindred sacred naked wicked beloved wretched rugged ragged bed red shed".split())


def _regular_past(word: str) -> bool:
    """An unlisted word that looks like a regular past ("rambled"); "-eed" words ("speed") do not."""
    return len(word) > 4 and word.endswith("ed") and not word.endswith("eed") and word not in _NOT_PARTICIPLES


def is_verb(word: str) -> bool:
    """Whether a lower-case word can be a verb: a listed form, or a regular past (-ed)."""
    return word in FORMS or _regular_past(word)


def is_past(word: str) -> bool:
    """Whether a word is a past form ("accepted", "got"): a verb for sure, never a noun."""
    return word in PAST or _regular_past(word)


def is_third_person(word: str) -> bool:
    """Whether a lower-case word is a verb's third-person singular form ("hikes", "works") and
    not also its base ("hikes" yes, "need" no); many are plural nouns as well ("books")."""
    return word in _THIRD_FORMS


def agree(verb: str) -> str:
    """The form a third-person singular subject takes ("have" → "has", "love" → "loves");
    past and non-finite forms are returned as they are."""
    if verb in _SAME_PAST:
        return verb
    return _THIRD_OF.get(verb, verb)
