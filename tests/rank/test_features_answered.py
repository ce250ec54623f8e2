"""An answer is found by the words of the question it answers (features.answered_question)."""

import json
from pathlib import Path

import pytest

from mnemoscope.engine import Memory

QUESTION = "So the new knee works?"
ANSWER = "They did it on February 9th, like they said, and I was back on the boat in March."
OWN_QUESTION = "Is the knee still sore in the cold?"  # Marcel asks it himself: nothing to lend to his next turn
AFTER_OWN = "Anyway the engine starts every morning now."
TRANSCRIPT = f"""Renée: Papa! How was the weekend on the wharf?
Marcel: Windy. We got every trap in before the rain came.
Renée: {QUESTION}
Marcel: {ANSWER}
Renée: Good. Maman says hi.
Marcel: {OWN_QUESTION}
Marcel: {AFTER_OWN}
Renée: And the crew this year?
Marcel: Justin and Amara, and the price at the wharf dropped again.
Marcel: I sold the old truck to Wade for the parts.
"""
ASKED = "Did the knee operation happen?"  # shares no word with the answer


def features(mem: Memory, query: str) -> dict[str, dict[str, float]]:
    hits = mem.recall(query, strategy="fused", top_k=20).hits
    assert hits
    return {h.item.text: h.features for h in hits}


@pytest.mark.parametrize("save_index_above", [20_000, 1])  # reopened from the store's rows, or from the saved file
def test_an_answer_takes_the_words_of_the_question_it_answers_and_keeps_them_when_reopened(tmp_path: Path,
                                                                                          save_index_above: int):
    path = tmp_path / "talk.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    settings = {"save_index_above": save_index_above}
    with Memory(tmp_path / "store.db", **settings) as mem:
        mem.ingest(path)
        before = features(mem, ASKED)
        ranked = [h.item.text for h in mem.recall(ASKED, strategy="fused", top_k=20).hits]
    assert before[QUESTION]["bm25"] > 0 and before[ANSWER]["bm25"] == pytest.approx(before[QUESTION]["bm25"])
    assert before[ANSWER]["words"] >= before[QUESTION]["words"]  # the question's meaning lent as well
    assert before.get(AFTER_OWN, {"bm25": 0.0})["bm25"] == 0.0  # a speaker does not answer their own question
    assert ranked.index(ANSWER) < ranked.index(AFTER_OWN) if AFTER_OWN in ranked else ANSWER in ranked
    with Memory(tmp_path / "store.db", **settings) as reopened:  # the punctuation is read again, not lost
        assert features(reopened, ASKED) == before


def test_a_passage_has_no_words_feature(tmp_path: Path):
    path = tmp_path / "knee.md"
    path.write_text("# The knee\n\nThe operation on the knee happened in February.\n", encoding="utf-8")
    with Memory(tmp_path / "store.db") as mem:
        mem.ingest(path)
        found = features(mem, ASKED)
    assert all(f["words"] == 0.0 for f in found.values())


def test_without_the_word_space_the_words_feature_is_zero(tmp_path: Path):
    path = tmp_path / "talk.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    with Memory(tmp_path / "store.db", word_vectors_weight=0.0) as mem:
        mem.ingest(path)
        found = features(mem, ASKED)
    assert found[ANSWER]["bm25"] > 0 and all(f["words"] == 0.0 for f in found.values())


def chat_lines(stamps: list[int]) -> str:
    """The transcript's turns as OpenAI chat messages, each stamped with its own time."""
    turns = [line.split(": ", 1) for line in TRANSCRIPT.strip().splitlines()]
    assert len(turns) == len(stamps)
    return "".join(json.dumps({"role": "user", "name": speaker, "content": text, "timestamp": at}) + "\n"
                   for (speaker, text), at in zip(turns, stamps))


def test_turns_stamped_one_by_one_minutes_apart_are_one_session(tmp_path: Path):
    """A chat export stamps every message: turns a minute apart are neighbours, and an answer
    takes its question's words as in a transcript whose session has one time."""
    path = tmp_path / "chat.jsonl"
    path.write_text(chat_lines([1_700_000_000 + 60 * n for n in range(10)]), encoding="utf-8")
    with Memory(tmp_path / "store.db") as mem:
        mem.ingest(path)
        found = features(mem, ASKED)
    assert found[QUESTION]["bm25"] > 0 and found[ANSWER]["bm25"] == pytest.approx(found[QUESTION]["bm25"])
    assert found[ANSWER]["neighbour_bm25"] > 0


def test_a_question_the_day_before_is_not_answered_by_the_next_days_first_turn(tmp_path: Path):
    """Turns stamped a day apart are two sessions: the answer's question is in another one."""
    path = tmp_path / "chat.jsonl"
    stamps = [1_700_000_000 + 60 * n for n in range(10)]
    stamps[3:] = [at + 86_400 for at in stamps[3:]]  # the answer opens the next day's session
    path.write_text(chat_lines(stamps), encoding="utf-8")
    with Memory(tmp_path / "store.db") as mem:
        mem.ingest(path)
        found = features(mem, ASKED)
    assert found[QUESTION]["bm25"] > 0 and found.get(ANSWER, {"bm25": 0.0})["bm25"] == 0.0


def test_a_hit_ranked_by_the_question_it_answers_says_which_question_lent_what(tmp_path: Path):
    """The why-view's record: the answer's BM25 is its question's, and the hit names that
    question, the features it lent and the answer's own lower values; other hits name none."""
    path = tmp_path / "talk.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    with Memory(tmp_path / "store.db") as mem:
        mem.ingest(path)
        hits = {h.item.text: h for h in mem.recall(ASKED, strategy="fused", top_k=20).hits}
        question_id = hits[QUESTION].item.id
        hybrid = mem.recall(ASKED, strategy="hybrid", top_k=20).hits
    answer = hits[ANSWER]
    assert answer.answers is not None
    assert (answer.answers.question_id, answer.answers.question) == (question_id, QUESTION)
    assert "bm25" in answer.answers.lent and answer.answers.lent["bm25"] < answer.features["bm25"]
    assert all(own < answer.features[name] for name, own in answer.answers.lent.items())
    assert QUESTION in answer.answers.describe()
    assert answer.to_dict()["answers"] == {"question_id": question_id, "question": QUESTION,
                                           "lent": {k: round(v, 4) for k, v in answer.answers.lent.items()}}
    assert hits[QUESTION].answers is None and hits[QUESTION].to_dict()["answers"] is None
    assert hybrid and all(h.answers is None for h in hybrid)  # only fused lends a question's words


ADOPTED = "Guess what, I adopted a dog named Pepper last Saturday!"
WHAT_KIND = "No way! What kind?"
KIND = "A border collie mix, ten months old, from Rose City Animal Rescue."
FOLLOW_UP = f"""Maya: Daniel! How are the night shifts treating you?
Daniel: Brutal as ever. Anything new with you?
Maya: {ADOPTED}
Daniel: {WHAT_KIND}
Maya: {KIND}
Daniel: Who watches her while you are at the hospital?
Maya: My coworker Tomás, two blocks away, walks her with his lab.
Daniel: My brother is getting married in August and I am the best man.
Maya: And the speech?
Daniel: Half written. The kayak story has to be in it.
Maya: Is that the ChatGPT paper on your desk?
Daniel: Yes, for the reading group on Thursday.
"""


def test_an_answer_to_a_follow_up_question_takes_the_turn_the_question_asks_about(tmp_path: Path):
    """'What kind?' asks about the turn before it: the answer to it ("A border collie mix") holds
    none of the words of 'What did Maya adopt?', its question none either; the turn it follows up
    holds them, and the answer ranks by it as a neighbour would."""
    path = tmp_path / "talk.txt"
    path.write_text(FOLLOW_UP, encoding="utf-8")
    with Memory(tmp_path / "store.db") as mem:
        mem.ingest(path)
        hits = mem.recall("What did Maya adopt?", strategy="fused", top_k=12).hits
    found = {h.item.text: h for h in hits}
    assert found[ADOPTED].features["bm25"] == pytest.approx(1.0)
    assert found[KIND].features["neighbour_bm25"] == pytest.approx(1.0)  # the turn "What kind?" asks about
    assert found[KIND].answers is not None and found[KIND].answers.question == WHAT_KIND
    assert "neighbour_bm25" in found[KIND].answers.lent
    ranked = [h.item.text for h in hits]
    assert ranked.index(KIND) < 3  # fifth without the turn its question asks about


HOW_LONG = "Awww! How long have you had them?"
SPAN = "Three years this spring, and they still hide from the vacuum."
TURTLES = f"""Joanna: Are those turtles on your windowsill?
Nate: Shelly and Crush. They keep me calm before a tournament.
Joanna: {HOW_LONG}
Nate: {SPAN}
Joanna: I finished the second draft of my screenplay last night.
Nate: Congrats! Send it over, I want to read it this weekend.
"""


def test_an_answer_holding_the_time_asked_for_takes_its_questions_words_for_the_answer_signal(tmp_path: Path):
    """"Three years this spring" holds the time "How long has Nate had his turtles?" asks for, and
    none of its words: the question it answers holds them. The answer signal (BM25 of the items
    holding a time) reads the answer through that question, and the hit says so; a turn holding a
    time that answers no question keeps its own."""
    path = tmp_path / "talk.txt"
    path.write_text(TURTLES, encoding="utf-8")
    with Memory(tmp_path / "store.db") as mem:
        mem.ingest(path)
        hits = {h.item.text: h for h in mem.recall("How long has Nate had his turtles?", strategy="fused", top_k=6).hits}
    span = hits[SPAN]
    assert span.features["signal_answer"] > 0
    assert span.answers is not None and span.answers.question == HOW_LONG
    assert span.answers.lent["signal_answer"] < span.features["signal_answer"]
    weekend = hits["Congrats! Send it over, I want to read it this weekend."]
    assert weekend.answers is None or "signal_answer" not in weekend.answers.lent


def test_a_recall_reads_which_candidates_hold_the_answer_once(tmp_path: Path, monkeypatch):
    """The speaker feature (a named speaker's short question counts unless it holds the answer)
    and the answer signal (lent by the question an answer follows) both read which candidates
    hold an answer of the kind asked: once per recall (the final reader's finding: twice)."""
    from mnemoscope.engine.rank import features as feats

    path = tmp_path / "talk.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    read = []
    holders = feats.answer_holders
    monkeypatch.setattr(feats, "answer_holders", lambda index, kind: read.append(kind) or holders(index, kind))
    with Memory(tmp_path / "store.db") as mem:
        mem.ingest(path)
        hits = mem.recall("When was Marcel back on the boat?", strategy="fused", top_k=20).hits
    assert ANSWER in {h.item.text for h in hits} and any(h.features.get("signal_answer") for h in hits)
    assert read == ["time"]
