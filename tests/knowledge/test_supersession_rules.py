"""The supersession rules as data, and their verdicts on pairs of facts of one subject."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoscope.engine.errors import RulesError
from mnemoscope.engine.knowledge.supersession import before, load_rules, same_value, verdict
from mnemoscope.engine.knowledge.timeline import statement_valid_from


@pytest.fixture(scope="module")
def rules():
    return load_rules(Path(__file__).parent / "data" / "no_extra_rules.toml")


def judge(rules, old: tuple[str, str, str | None], new: tuple[str, str, str | None], subject: str = "Lena") -> str:
    found_old = rules.slot_of(subject, old[0], old[1])
    found_new = rules.slot_of(subject, new[0], new[1])
    if found_old is None or found_new is None or found_old[0].name != found_new[0].name:
        return "no slot"
    return verdict(found_new[0], (old[1], old[2]), (new[1], new[2]), ends=found_new[1]).kind


@pytest.mark.parametrize("old, new, expected", [
    (("lives in", "Lyon", "2023-01-14"), ("has just moved to", "Berlin", "2023-04-01"), "supersedes"),
    (("moved to", "Berlin", "2023-04-01"), ("lives in", "Lyon", "2023-01-14"), "superseded"),  # learnt later, held earlier
    (("lives in", "Lyon", "2023-04-08"), ("moved to", "Berlin", "2023-04-08"), "unordered"),  # the same day
    (("lives in", "Lyon", "2023"), ("moved to", "Berlin", "2023-04-08"), "unordered"),  # a year holds that day
    (("lives in", "Lyon", None), ("moved to", "Berlin", "2023-04-08"), "unordered"),
    (("moved to", "Berlin", "2023-04-01"), ("lives in", "flat in Berlin", "2023-07-02"), "same"),
    (("lives in", "Lyon", "2023-01-14"), ("is living in", "tiny flat near the river", "2023-05-01"), "undecided"),
    (("works at", "Le Fournil", "2023-01-14"), ("started at", "Café Morgen on Monday", "2023-04-08"), "supersedes"),
    (("works at", "Le Fournil", "2023-01-14"), ("left", "Le Fournil", "2023-03-01"), "supersedes"),  # an end
    (("works at", "Le Fournil", "2023-01-14"), ("left", "Lyon", "2023-03-01"), "unrelated"),
    (("works at", "Lale", "2024-03-03"), ("has left", "Lale", "2024-06-16"), "supersedes"),  # "I've left Lale"
    (("lives in", "Lyon", "2023-01-14"), ("had moved to", "Berlin", "2023-04-01"), "supersedes"),
    (("is married to", "Gareth", "2023-01-14"), ("has married", "Ade", "2024-04-01"), "supersedes"),
    (("lives in", "Lyon", "2023-01-14"), ("has lived in", "Berlin", "2023-04-01"), "supersedes"),
    (("lives in", "Lyon", "2023-01-14"), ("have been living in", "Berlin", "2023-04-01"), "supersedes"),
    (("lives in", "Lyon", "2023-01-14"), ("lived in", "Leeds for two years", "2023-04-08"), "no slot"),  # a home left
    (("lives in", "Lyon", "2023-01-14"), ("had lived in", "York", "2023-04-08"), "no slot"),
    (("works at", "Lale", "2024-03-03"), ("had been working at", "Acme", "2024-06-16"), "no slot"),
    (("is", "vegetarian now", "2022-10-22"), ("is", "fully vegan now", "2023-01-28"), "supersedes"),
    (("is dating", "Gareth", "2024-03-03"), ("is seeing", "progress", "2024-12-08"), "no slot"),  # seeing is not dating
    (("likes", "climbing", "2023-01-14"), ("likes", "baking", "2023-05-01"), "no slot"),  # multi-valued
    (("visited", "Prague", "2023-01-14"), ("visited", "Vienna", "2023-02-25"), "no slot"),
    (("works at", "Acme", "2023-01-14"), ("lives in", "Paris", "2023-05-01"), "no slot"),  # two slots
])
def test_verdicts(rules, old, new, expected):
    assert judge(rules, old, new) == expected


def test_a_favourite_is_single_valued_only_for_a_subject_that_says_so(rules):
    assert judge(rules, ("is", "a flat white", "2023-05-20"), ("is", "oat cortado", "2023-08-19"),
                 subject="Lena's favourite coffee") == "supersedes"
    assert judge(rules, ("is", "a flat white", "2023-05-20"), ("is", "oat cortado", "2023-08-19"),
                 subject="Lena's coffee") == "no slot"


def test_objects_are_one_value_when_one_names_the_other(rules):
    home = rules.slots["home"]
    assert same_value("Lyon", "Lyon with Lena's partner Julien", home)
    assert same_value("Berlin", "Munich", home) is False
    assert same_value("a tiny flat", "Berlin", home) is None


def test_dates_are_ordered_only_when_their_spans_do_not_overlap():
    assert before("2023-04", "2023-05-01") is True
    assert before("2023-05-01", "2023-04") is False
    assert before("2023", "2023-05-01") is None
    assert before(None, "2023-05-01") is None


def test_a_statement_holds_from_its_own_date_unless_that_is_a_plan():
    assert statement_valid_from("2023-04-01", "2023-04-08T11:20:00") == "2023-04-01"
    assert statement_valid_from("2023-07", "2023-01-14T14:10:00") == "2023-01-14"  # "a trip in July"
    assert statement_valid_from(None, "2023-01-14T14:10:00") == "2023-01-14"
    assert statement_valid_from("2019", None) == "2019"


def test_a_user_file_extends_a_slot_and_adds_one(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[slots.home]\npredicates = ["resides in"]\n\n[slots.phone]\npredicates = ["uses"]\n'
                    'free_objects = true\n', encoding="utf-8")
    mine = load_rules(path)
    assert mine.slot_of("Lena", "resides in", "Berlin")[0].name == "home"
    assert mine.slot_of("Lena", "lives in", "Berlin")[0].name == "home"  # the default stays
    assert mine.slot_of("Lena", "uses", "an iPhone")[0].name == "phone"
    assert path in mine.files


@pytest.mark.parametrize("text, message", [
    ("[slots.home\n", "not a readable rules file"),
    ('[slots.home]\npredicates = "lives in"\n', "predicates must be a list"),
    ('[slots.pets]\nends = ["gave away"]\n', "has no predicates"),
    ('[slots.home]\nverbs = ["lives"]\n', "may hold only"),
    ('[home]\npredicates = ["x"]\n', "expected only"),
])
def test_a_bad_rules_file_is_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulesError, match=message) as err:
        load_rules(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("predicate, obj, slot, ends", [
    ("moved out", "of Leith", "home", True),  # "We moved out of Leith": the extractor keeps one particle
    ("moved", "away from Leith", "home", True),
    ("moved", "back to Leeds", "home", False),
    ("broke up", "with Tunde", "partner", True),
    ("split up", "with Tunde", "partner", True),
    ("is going out", "with a lovely guy called Tunde", "partner", False),
])
def test_a_particle_the_object_opens_with_reads_with_the_predicate(rules, predicate, obj, slot, ends):
    """supersession.toml lists "moved out of", "broke up with", "moved back to", which the extractor
    writes as "moved out" "of Leith" or "moved" "back to Leeds": read together, or they end nothing."""
    found = rules.slot_of("Kofi", predicate, obj)
    assert found is not None and (found[0].name, found[1]) == (slot, ends)


def test_a_preposition_opening_an_object_makes_no_slot_of_a_multi_valued_verb(rules):
    assert rules.slot_of("Kofi", "went", "out with friends") is None
    assert rules.slot_of("Kofi", "is", "with a friend called Tom at the pub") is None
