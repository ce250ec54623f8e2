"""The rule-based extractor: speakers, names, first person, facts with time, events, captions."""

from mnemoscope.engine.knowledge.entities import EntityRegistry, entity_key
from mnemoscope.engine.knowledge.extract import RuleExtractor, capitalised_spans
from mnemoscope.engine.records import Item


def turn(text, speaker="Caroline", **meta):
    return Item(text=text, kind="turn", key="D1:1", speaker=speaker, timestamp="2023-05-25T13:56:00", id=1, meta=meta)


def extract(item):
    return RuleExtractor(EntityRegistry()).extract(item)


def test_first_person_resolves_to_the_speaker_and_time_is_resolved():
    ex = extract(turn("I ran a charity race last Saturday."))
    assert [(f.subject, f.predicate, f.object, f.time) for f in ex.facts] == [("Caroline", "ran", "charity race", "2023-05-20")]
    assert ex.facts[0].subject_key == "caroline"
    assert ex.events[0].participants[0] == "Caroline" and ex.events[0].time == "2023-05-20"


def test_my_becomes_the_speakers_possession():
    ex = extract(turn("My kids are excited about summer break.", speaker="Melanie"))
    assert ex.facts and ex.facts[0].subject == "Melanie's kids" and ex.facts[0].subject_key == "melanie"


def test_questions_give_no_facts():
    assert extract(turn("Did you go to the museum?")).facts == []


def test_names_locations_and_speaker_are_mentions():
    ex = extract(turn("I went to an LGBTQ support group in Boston with Melanie Smith."))
    keys = {m[1] for m in ex.mentions}
    assert {"caroline", "boston", "melanie smith"} <= keys
    assert ex.events[0].location == "Boston"


def test_sentence_initial_common_words_are_not_names():
    assert capitalised_spans("Often the bread rises slowly.") == []
    assert capitalised_spans("The Journal of Psychotherapy Integration is published by the American Psychological Association.") == [
        "Journal of Psychotherapy Integration", "American Psychological Association"]
    assert capitalised_spans("Now I know. Yesterday I ran. Meanwhile I baked.") == []
    assert capitalised_spans("Although Pepper barked, Mr. Greg came on June 11th, next to Mr. Abbott.") == [
        "Pepper", "Greg", "Abbott"]
    assert capitalised_spans("Next Thursday works.") == []
    assert capitalised_spans("We swim on Wednesdays and Sundays, Jonas runs on Mondays.") == ["Jonas"]  # days, not names
    assert capitalised_spans("| Water | 75 % | Swiss Alpine Club |") == ["Swiss Alpine Club"]  # a cell opens like a sentence


def test_a_shared_photo_is_an_event_with_its_caption():
    ex = extract(turn("Look at this!", image_caption="a photo of a dog on a beach"))
    assert any(e.method == "photo" and "dog on a beach" in e.action for e in ex.events)


def test_document_pronouns_resolve_to_the_title():
    item = Item(text="He was born in Ohio in 1901.", kind="chunk", title="John Doe", id=2)
    ex = extract(item)
    assert ex.facts[0].subject == "John Doe" and ex.facts[0].time == "1901"
    assert ("John Doe", "john doe", "title", "title") in ex.mentions


def test_entity_keys_drop_case_articles_possessives_and_qualifiers():
    assert entity_key("The Rank Organisation") == "rank organisation"
    assert entity_key("Hello Love (song)") == "hello love"
    assert entity_key("Stanley Hall's") == "stanley hall"


def test_known_multiword_names_are_found_in_lower_case():
    reg = EntityRegistry()
    reg.load([(1, "american psychological association", "American Psychological Association", "title")])
    assert reg.find_in("a journal of the american psychological association.") == ["american psychological association"]


def test_names_with_accents_stay_whole():
    ex = extract(turn("My coworker Tomás adopted a cat."))
    assert [(f.subject, f.predicate, f.object) for f in ex.facts] == [("Tomás", "adopted", "cat")]
    assert "tomás" in {m[1] for m in extract(turn("I walked Pepper with Tomás in Zürich.")).mentions}


def test_a_relative_or_friend_introduced_by_name_is_the_subject_under_their_own_name():
    """"My sister Bronwen is moving to Cardiff" is Bronwen's move, filed under Bronwen (not under
    the speaker, nor under "Rhys's sister Bronwen", an entity of its own)."""
    ex = extract(turn("My sister Bronwen is moving to Cardiff next month.", speaker="Rhys"))
    assert [(f.subject, f.subject_key, f.predicate, f.object) for f in ex.facts][:1] == [
        ("Bronwen", "bronwen", "is moving to", "Cardiff")]
    ex = extract(turn("Maya's coworker Tomás lives two blocks away.", speaker="Leah"))
    assert [(f.subject, f.subject_key) for f in ex.facts][:1] == [("Tomás", "tomás")]
    ex = extract(turn("My sister is moving to Cardiff.", speaker="Rhys"))  # no name: the speaker's sister
    assert [(f.subject, f.subject_key) for f in ex.facts][:1] == [("Rhys's sister", "rhys")]
