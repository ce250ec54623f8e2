"""A hit's one-line snippet (app/snippets.py), shared by the CLI's recall and the app's tables:
around the stretch of a long text that holds the most of the query's words, weighed by how few
of the recall's hits hold each."""

from mnemoscope.app.snippets import query_terms, snippet, term_pattern, term_weights

PASS = ("There's a pass called the Sefinenfurgge, about 2,600 meters, with a steep descent that sometimes still has"
        " old snow on it. Leah says we'll ask the hut warden the night before and take the lower route if it looks"
        " bad. She isn't worried at all: Leah moved to Boulder in July and hikes the Flatirons every weekend.")


def test_the_line_holds_the_stretch_with_the_most_query_words_not_the_first_one():
    """"Leah" first comes with the hut warden; "Leah moved to Boulder" follows 124 characters
    later: a line wide enough for both shows both, not the first alone."""
    line = snippet(PASS, query_terms("where does Leah live now"), 160)
    assert len(line) <= 160
    assert "Leah says" in line and "Leah moved to Bo" in line


def test_a_stretch_with_two_of_the_querys_words_beats_an_earlier_one_with_one():
    text = ("Leah called on Thursday about the trip, and we talked about the gear for an hour. " * 3
            + "Then she said Leah lives in Boulder now, since July.")
    line = snippet(text, query_terms("where does Leah live now"), 80)
    assert "Leah lives in Boulder now" in line
    assert line.startswith("…") and not line.endswith("…")  # the stretch reaches the end: nothing left out there
    assert len(line) <= 80


def test_a_word_few_hits_hold_outweighs_one_every_hit_holds():
    """The name every hit holds tells less of where a hit's answer sits than the word only one
    holds: the line goes to "Boulder" though "Leah" comes first."""
    terms = query_terms("did Leah move to Boulder")
    hits = [PASS.replace("Boulder", "Denver"), "Leah is fine.", "Leah booked the huts.",
            "Leah hikes every weekend. " * 3 + "The trail is steep and the view is wide. " * 3
            + "The flat is in Boulder, by the creek."]
    weights = term_weights(hits, terms)
    assert "leah" in weights and min(weights.values()) > 0
    line = snippet(hits[-1], terms, 60, weights)
    assert "Boulder" in line and len(line) <= 60
    assert "Boulder" not in snippet(hits[-1], terms, 60)  # alike, the first stretch with a word wins


def test_a_text_without_the_querys_words_shows_its_beginning():
    text = "word " * 100
    assert snippet(text, query_terms("where does Leah live"), 50) == ("word " * 10)[:49] + "…"
    assert snippet("short", [], 50) == "short"


def test_a_query_word_inside_another_word_is_no_match():
    """'work' is not in 'coworker': the line shows where the text says 'work', and the app
    highlights words, not pieces of them."""
    text = "My coworker Priya started a reading group, and the coworker chat is busy. " * 3 + "Anyway, I still work at Cartwheel."
    line = snippet(text, query_terms("where does Daniel work"), 60)
    assert "I still work at Cartwheel" in line
    pattern = term_pattern(["work"])
    assert pattern is not None
    assert [m.group(0) for m in pattern.finditer("my coworker works at work")] == ["works", "work"]
