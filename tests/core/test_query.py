"""Query understanding: framing words, related words from the lexicon, the kind of answer asked for."""

from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.query import Lexicon, answer_type, english_lexicon, plan
from mnemoscope.engine.records import Item, ParsedSource, Source

VOCAB = {t: n for n, t in enumerate("know dough readi melani accid wreck son crash famili carolin".split())}
LEXICON = Lexicon.parse("crash\taccid:1 wreck:0.8 plane:0.4\nboi\tson:0.8\nmelani\tfamili:1\nknow\tfamili:1\n")


def test_framing_words_weigh_little_and_the_focus_keeps_its_weight():
    terms = plan("how do I know the dough is ready", VOCAB).terms
    assert terms["dough"] == terms["readi"] == 1.0
    assert terms["know"] < 0.5 * terms["dough"]


def test_a_phrase_that_places_the_question_in_time_weighs_as_framing(tmp_path):
    """"These days" says when, not what: its "days" matched "three days a week" above the move."""
    assert plan("Where does Maya live these days?", {"dai": 0, "live": 1}).terms == {"dai": 0.2, "live": 1.0}
    assert plan("How many days a week does Maya work these days?", {"dai": 0}).terms["dai"] > 1.0  # asked about too
    texts = ["Three days a week now, the other days are mine.", "I live by the harbour in Robin Hood's Bay.",
             "The bakery opens at eight on Sundays.", "I planted tomatoes in the garden."]
    with _store(tmp_path, texts) as mem:
        hits = mem.recall("Where does Maya live these days?", strategy="bm25", top_k=2).hits
    assert hits and "harbour" in hits[0].item.text


def test_now_places_the_question_in_time_and_weighs_as_framing(tmp_path):
    """"Now" says when, as "currently" and "these days" do: "where does Maya live now" ranked the
    demo's turns that say "now" (jet lag, packing, new boots) above her home in Sellwood."""
    assert plan("Where does Maya live now?", {"now": 0, "live": 1}).terms == {"now": 0.2, "live": 1.0}
    texts = ["Packing now, honestly, the flight is now at six.", "I live by the harbour in Robin Hood's Bay.",
             "The bakery opens at eight on Sundays.", "I planted tomatoes in the garden."]
    with _store(tmp_path, texts) as mem:
        hits = mem.recall("Where does Maya live now?", strategy="bm25", top_k=2).hits
    assert hits and "harbour" in hits[0].item.text


def test_related_words_join_at_a_fraction_only_when_the_store_holds_them():
    p = plan("How did Melanie's boy cope after the crash?", VOCAB, LEXICON)
    assert set(p.expansions) == {"accid", "wreck", "son"}  # "plane" is not in the store; a name brings nothing
    assert all(0 < w < 1 for w in p.expansions.values())
    assert p.expansions["accid"] > p.expansions["wreck"]
    assert "famili" not in p.terms  # neither the name "Melanie" nor a framing word is expanded
    unknown = plan("the crash", {t: n for t, n in VOCAB.items() if t != "crash"}, LEXICON)
    assert p.expansions["accid"] < unknown.expansions["accid"]  # a word the store lacks leans on its relatives more


@pytest.mark.parametrize("question, kind", [
    ("When did Caroline go to the LGBTQ support group?", "time"),
    ("What date was Caroline at the queer support circle?", "time"),
    ("Tell me when Caroline presented a talk to students", "time"),  # after a short lead-in
    ("How long has Nate had his first two turtles?", "time"),  # a span of time
    ("Where did Maya hike?", "place"),
    ("Who supports Caroline?", "person"),
    ("What did Maya bake?", None),
    ("How much time did Jon need to open his studio?", "time"),
    ("Which country was Tim visiting in November?", "place"),  # the noun a "what" / "which" asks with
    ("What European countries has Maria been to?", "place"),  # after one word
    ("What's the odd spot where Oliver stashed his bone?", "place"),  # after "is the"
    ("Which people did Nate invite to his party?", "person"),
    ("What state of mind was Maya in?", None),  # a noun that names something else
    ("What country music band does Daniel like?", None),
    ("What people skills did Maya learn?", None),
    ("What kind of art does Caroline make?", None),
])
def test_the_question_word_says_what_kind_of_answer_is_wanted(question, kind):
    assert answer_type(question) == kind


def test_the_bundled_lexicon_bridges_everyday_rewordings():
    lexicon = english_lexicon()
    assert len(lexicon) > 10_000
    for word, related in [("crash", "accid"), ("children", "kid"), ("novel", "book"), ("bloom", "flower")]:
        assert related in dict(lexicon.related(word)), word


def _store(tmp_path: Path, texts: list[str]) -> Memory:
    items = [Item(text=t, kind="turn", key=f"D1:{n}", position=n, speaker="Maya") for n, t in enumerate(texts)]
    mem = Memory(tmp_path / "q.db", extensions=False)
    mem.ingest_parsed([ParsedSource(Source(name="chat", kind="conversation", content_hash="h"), items)])
    return mem


def test_a_reworded_question_finds_the_turn_that_uses_other_words(tmp_path):
    texts = ["We had a car accident on the way home last night.", "The bakery opens at eight on Sundays.",
             "My sister is visiting next week.", "I planted tomatoes in the garden."] * 3
    with _store(tmp_path, texts) as mem:
        hits = mem.recall("Was anyone hurt in the crash?", strategy="hybrid", top_k=3).hits
    assert hits and "accident" in hits[0].item.text


def test_the_demo_dough_question_is_about_dough_not_about_knowing(demo_store: Path):
    with Memory(demo_store) as mem:  # recall writes nothing: the shared demo store, read in place
        for strategy in ("fused", "hybrid"):
            hits = mem.recall("how do I know the dough is ready", strategy=strategy, top_k=5).hits
            assert len(hits) == 5
            assert "poke test" in hits[0].item.text
            assert not [h for h in hits if "know" in h.item.text.lower() and "dough" not in h.item.text.lower()]


def test_word_vectors_find_a_turn_that_shares_no_word_and_no_lexicon_relation(tmp_path):
    texts = ["I practise the violin every evening after dinner.", "The bakery opens at eight on Sundays.",
             "My sister is visiting next week.", "I planted tomatoes in the garden."] * 3
    with _store(tmp_path, texts) as mem:
        question = "Is she in an orchestra?"  # neither "orchestra" nor a lexicon relative of it is in the store
        assert not mem.recall(question, strategy="bm25", top_k=3).hits
        hits = mem.recall(question, strategy="hybrid", top_k=3).hits
        assert hits and "violin" in hits[0].item.text and hits[0].features["words"] > 0
        mem.settings.word_vectors_weight = 0.0
        assert not mem.recall(question, strategy="hybrid", top_k=3).hits


def test_a_korean_query_gets_no_word_vector(tmp_path):
    with _store(tmp_path, ["서울의 2023년 인구는 얼마인가", "The bakery opens at eight on Sundays."] * 4) as mem:
        vector, _ = mem.index.word_query("서울의 2023년 인구")  # a year alone does not make it English
        assert vector is None


def test_the_answer_signal_follows_the_items_added_after_a_question_asked_it(core):
    from mnemoscope.engine.recall import Signals, prepare_query, signals

    def answer(text: str) -> dict[int, float]:
        q = prepare_query(core, core.areas, text, 10, "bm25", "pro")
        scores = Signals(q, signals(core, core.areas))["answer"]
        return {int(i): float(scores[s]) for s, i in enumerate(core.index.item_ids.tolist())}

    undated = core.add_note("Maya adopted a puppy called Biscuit from the shelter.")
    question = "When did Maya adopt Biscuit?"
    assert answer(question) == {undated.id: 0.0}  # no item says when
    dated = core.add_note("Maya adopted Biscuit last weekend.")
    after = answer(question)
    assert after[undated.id] == 0.0 and after[dated.id] > 0.0
