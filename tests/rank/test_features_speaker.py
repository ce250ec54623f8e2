"""The speaker feature: a turn said by someone the question names is likelier about them — but
not their questions that ask about someone else's news (features.asks_after_others)."""

from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory

STAYING = ("We're staying in Melbourne after all. The university froze Siân's post, so the house in Brunswick"
           " stays ours.")
GREETING = "Bore da from Melbourne! The boys start their new school on Monday, the one by the park. How's Nain doing?"
CALL = f"""Gethin: {GREETING}
Carys: Bruised pride mostly. She slipped on the back step bringing the washing in.
Gethin: And the cat?
Carys: Smwt sleeps on her feet every night, he's fine.
Gethin: That little Fiat is still going?
Carys: Just about. I drive it up to Llanberis every evening after work.
Gethin: Is Rhodri still building that shed?
Carys: The shed has a name now. Don't ask.
Gethin: {STAYING}
Carys: Oh no. I can hear it in your voice.
Gethin: Where's the spare key kept these days?
Carys: Under the slate by the door, as always.
"""


def transcript_store(tmp_path: Path, text: str) -> Memory:
    """A store in ``tmp_path`` holding ``text`` as one transcript (``with`` it, to close it)."""
    path = tmp_path / "transcript.txt"
    path.write_text(text, encoding="utf-8")
    mem = Memory(tmp_path / "store.db")
    mem.ingest(path)
    return mem


def test_the_named_speakers_short_questions_do_not_rank_as_their_news(tmp_path: Path):
    with transcript_store(tmp_path, CALL) as mem:
        hits = mem.recall("Where does Gethin live?", strategy="fused", top_k=12).hits
    found = {h.item.text: h.features for h in hits}
    assert found[STAYING]["speaker"] == 1.0
    assert found["And the cat?"]["speaker"] == 0.0 and found["That little Fiat is still going?"]["speaker"] == 0.0
    assert found[GREETING]["speaker"] == 1.0  # it asks too, but says more
    ranked = [h.item.text for h in hits]
    asked = ["And the cat?", "That little Fiat is still going?", "Is Rhodri still building that shed?"]
    assert ranked.index(STAYING) < min(ranked.index(text) for text in asked)  # under two of them when they count


def test_a_short_form_of_a_speakers_first_name_names_them(tmp_path: Path):
    """"Geth" in a question is Gethin, as Carys calls him: his turns count as the named speaker's.
    A short form of no one's name, or one written in lower case (a word, not a name), names no one."""
    with transcript_store(tmp_path, CALL) as mem:

        def recall(question: str) -> tuple[list[str], dict[str, dict[str, float]]]:
            hits = mem.recall(question, strategy="fused", top_k=12).hits
            assert hits
            return [h.item.text for h in hits], {h.item.text: h.features for h in hits}

        ranked, found = recall("Where does Geth live?")
        assert found[STAYING]["speaker"] == 1.0
        assert {text for text, f in found.items() if f["speaker"]} == {STAYING, GREETING} & found.keys()
        assert ranked.index(STAYING) < 3
        for other in ("Where does Gert live?", "Where does geth live?"):
            assert {f["speaker"] for f in recall(other)[1].values()} == {0.0}


DYED = "Hey Jo, guess what I did? Dyed my hair last week, come see!"
CATCH_UP = f"""Nate: {DYED}
Joanna: Purple! It suits you. The screenplay is stuck on page forty.
Nate: And the turtles?
Joanna: You tell me, they're yours.
Nate: Fair. They're sleeping under the lamp as we speak.
"""


def test_a_short_question_that_holds_a_time_answers_a_question_asking_when(tmp_path: Path):
    """"Guess what I did? Dyed my hair last week" asks, in few words, but tells when: for "When
    did Nate dye his hair?" it is Nate's news. For a question asking no time it stays a short
    question, and so does one that holds no time."""
    with transcript_store(tmp_path, CATCH_UP) as mem:

        def features(question: str) -> dict[str, dict[str, float]]:
            hits = mem.recall(question, strategy="fused", top_k=5).hits
            assert hits
            return {h.item.text: h.features for h in hits}

        when = features("When did Nate dye his hair?")
        assert when[DYED]["speaker"] == 1.0 and when["And the turtles?"]["speaker"] == 0.0
        assert features("What colour is Nate's hair?")[DYED]["speaker"] == 0.0


LUMEN = "I started at Lumen Labs on Monday and I survived it. Search ranking, as I hoped."
NORA = "Deal. Bring Pepper, Nora misses her."
MOVE = "Congratulations again! Is Nora surviving the move?"
BARELY = "Barely. She went to buy shelves and left me to unpack the kitchen, and I gave my first talk on Thursday."
FIRST_WEEK = f"""Maya: Daniel! How was the first week?
Daniel: {LUMEN}
Maya: That is huge. Tell me everything on Sunday.
Daniel: {NORA}
Maya: {MOVE}
Daniel: {BARELY}
Maya: A talk already? Was it the one about triage?
Daniel: The very same. Someone asked for the slides afterwards.
"""


def test_the_named_speakers_name_is_left_out_of_the_word_space(tmp_path: Path):
    """In the bundled word space a name is near every other name: "Where does Daniel work?" was
    alike to any turn naming Nora (0.63), and lent that to the answer of "Is Nora surviving the
    move?" (0.77, above the job's own turn on the demo). The named speaker is the speaker
    feature's to match; the words feature reads the rest of the question."""
    with transcript_store(tmp_path, FIRST_WEEK) as mem:
        hits = mem.recall("Where does Daniel work?", strategy="fused", top_k=8).hits
    found = {h.item.text: h.features for h in hits}
    assert found[LUMEN]["speaker"] == found[NORA]["speaker"] == found[BARELY]["speaker"] == 1.0
    assert found[NORA]["words"] < 0.1 and found[BARELY]["words"] < 0.1 < found[LUMEN]["words"]
    ranked = [h.item.text for h in hits]
    assert ranked.index(LUMEN) < min(ranked.index(NORA), ranked.index(BARELY))


ENGLISH = "Can you go back to answering in English?"
SETTINGS = f"""Sofia: Hola! Answer me in Spanish from now on, I want to practise.
Assistant: ¡Claro! A partir de ahora te respondo en español.
Sofia: And the weather?
Assistant: Sunny in Valencia, 24 degrees.
Sofia: {ENGLISH}
Assistant: Of course, English it is.
Sofia: Please keep the answers short, too.
Assistant: Will do.
"""


BELIEVE = "Can you believe Marta got the job?"
SETTINGS_AND_NEWS = SETTINGS + f"Sofia: {BELIEVE}\nAssistant: That is wonderful news.\n"


def test_a_question_asking_the_listener_to_share_a_surprise_is_no_request(tmp_path: Path):
    """"Can you believe Marta got the job?" opens as a request does, but asks after Marta's news:
    as a short question it does not count as Sofia's own, while "Can you go back to answering in
    English?" still does."""
    with transcript_store(tmp_path, SETTINGS_AND_NEWS) as mem:
        found = sofias_features(mem, top_k=20)  # every turn
    assert found[ENGLISH]["speaker"] == 1.0
    assert found[BELIEVE]["speaker"] == 0.0


def test_a_request_to_the_listener_is_the_speakers_own(tmp_path: Path):
    """"Can you go back to answering in English?" asks in few words, but for no one's news: it says
    what Sofia wants, and counts as hers for a question about her; "And the weather?" still does not."""
    with transcript_store(tmp_path, SETTINGS) as mem:
        hits = mem.recall("Which language should the assistant answer Sofia in?", strategy="fused", top_k=8).hits
    found = {h.item.text: h.features for h in hits}
    assert found[ENGLISH]["speaker"] == 1.0
    assert found["And the weather?"]["speaker"] == 0.0


CATCHING_UP = """Daniel: Maya! It's been way too long since the reunion in Seattle. How's life in Portland with the new dog? Still working those brutal night shifts at the hospital?
Maya: Ha, yes, three nights a week in the ER.
Daniel: Work is fine here, I still write routing software for delivery trucks at Cartwheel.
Maya: Sounds busy.
"""
DANIELS_WORK = "Where does Daniel work?"


def test_a_named_speakers_question_about_the_listeners_life_is_not_their_news(tmp_path: Path):
    """Daniel's long question to Maya says nothing of Daniel (no "I", "my", "we"): it asks about
    Maya's work, and does not count as his for a question about his; his own turn still does."""
    with transcript_store(tmp_path, CATCHING_UP) as mem:
        found = features_of(mem, DANIELS_WORK, top_k=4)
    assert {text.split("!")[0]: f["speaker"] for text, f in found.items()} == {
        "Maya": 0.0, "Ha, yes, three nights a week in the ER.": 0.0, "Sounds busy.": 0.0,
        "Work is fine here, I still write routing software for delivery trucks at Cartwheel.": 1.0}


def features_of(mem: Memory, question: str, top_k: int) -> dict[str, dict[str, float]]:
    hits = mem.recall(question, strategy="fused", top_k=top_k).hits
    assert hits
    return {h.item.text: h.features for h in hits}


def sofias_features(mem: Memory, top_k: int = 8) -> dict[str, dict[str, float]]:
    return features_of(mem, "Which language should the assistant answer Sofia in?", top_k)


READ_AT_INGEST = [(SETTINGS, "Which language should the assistant answer Sofia in?"),  # a request
                  (CATCHING_UP, DANIELS_WORK)]  # a question about the listener


@pytest.mark.parametrize(("text", "question"), READ_AT_INGEST, ids=["request", "about the listener"])
@pytest.mark.parametrize("save_index_above", [20_000, 1])  # reopened from the store's rows, or from the saved file
def test_what_a_turn_asks_of_the_listener_is_read_again_when_the_store_is_reopened(tmp_path: Path, save_index_above: int,
                                                                                   text: str, question: str):
    """Which turns ask the listener for something, or about their life, is read once, at ingest; a
    reopened store reads it from its rows (the store's asks_listener and about_listener) or takes
    it from the saved file: the same features."""
    path = tmp_path / "transcript.txt"
    path.write_text(text, encoding="utf-8")
    with Memory(tmp_path / "store.db", save_index_above=save_index_above) as mem:
        mem.ingest(path)
        before = features_of(mem, question, top_k=8)
    assert {f["speaker"] for f in before.values()} == {0.0, 1.0}
    with Memory(tmp_path / "store.db", save_index_above=save_index_above) as reopened:
        assert features_of(reopened, question, top_k=8) == before


@pytest.mark.parametrize(("layout", "array", "text", "question"), [(1, "request", *READ_AT_INGEST[0]),
                                                                    (2, "about_listener", *READ_AT_INGEST[1])],
                         ids=["request", "about the listener"])
def test_a_ranker_state_saved_before_a_turns_reading_was_kept_is_read_from_the_store(tmp_path: Path, monkeypatch, layout: int,
                                                                                   array: str, text: str, question: str):
    """A file of an earlier layout of the ranker's holds no ``request`` per slot (layout 1) or no
    ``about_listener`` (layout 2): it is not adopted (its layout number), and the store's rows say
    which turns ask the listener."""
    from mnemoscope.engine.rank.service import RankerArea

    path = tmp_path / "transcript.txt"
    path.write_text(text, encoding="utf-8")
    saved = RankerArea.saved

    def as_before(self):
        file = saved(self)
        return type(file)(file.meta, {**file.arrays, array: np.zeros_like(file.arrays[array])})

    monkeypatch.setattr(RankerArea, "saved", as_before)
    monkeypatch.setattr(RankerArea, "saved_format", layout)
    with Memory(tmp_path / "store.db", save_index_above=1) as mem:
        mem.ingest(path)
        before = features_of(mem, question, top_k=8)
    monkeypatch.undo()
    with Memory(tmp_path / "store.db", save_index_above=1) as reopened:
        assert features_of(reopened, question, top_k=8) == before
