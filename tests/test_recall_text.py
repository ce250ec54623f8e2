"""The human output of ``mnemoscope recall``: lite shows the mode's episodes and facts."""

import io

from mnemoscope.app.cli import main


def test_lite_recall_prints_episodes_facts_walk_and_token(demo_store):
    store = str(demo_store)
    out = io.StringIO()
    code = main(["--store", store, "recall", "When did Maya run the half marathon?", "--mode", "lite",
                 "--strategy", "fused", "--trace", "--top-k", "3"], out)
    text = out.getvalue()
    assert code == 0
    assert text.startswith("0 hit(s)")  # lite returns memories, not items
    assert "episodes (" in text and "facts (" in text
    assert "—" in text and "→" in text  # facts drawn as subject —predicate→ object
    assert "walk:" in text and "start → t:" in text
    assert "feedback token: " in text


def test_a_fused_recall_shows_the_graph_its_pagerank_signal_walked(demo_store):
    from mnemoscope.engine import Memory

    with Memory(demo_store) as mem:
        fused = mem.recall("what did Maya adopt", strategy="fused")
        hybrid = mem.recall("what did Maya adopt", strategy="hybrid")
    assert fused.graph and fused.graph["seeds"] and fused.graph["reached"]
    assert hybrid.graph is None  # hybrid never ran PageRank


def test_a_query_that_is_not_text_is_one_line_and_exit_2(demo_store, capsys):
    """Bytes that are not UTF-8 on a command line reach Python as a lone surrogate ("\\udcff"): it was a
    traceback where the feedback token is made; the store is only read."""
    out = io.StringIO()
    code = main(["--store", str(demo_store), "recall", "beagle \udcff", "--strategy", "fused"], out)
    err = capsys.readouterr().err.strip()
    assert code == 2 and out.getvalue() == ""
    assert err.count("\n") == 0 and "not text" in err and "U+DCFF" in err


def test_a_recall_carries_the_date_it_was_asked_as_of(demo_store):
    """The as-of date is part of the recall (final reader fa #2: it was carried beside it, through
    the facade and the app): its record, its JSON and its line say it, in the form recall read it."""
    import datetime
    import json

    from mnemoscope.engine import Memory

    with Memory(demo_store) as mem:
        assert mem.recall("where does Daniel work").as_of is None
        assert mem.recall("where does Daniel work", as_of="2023-05").as_of == "2023-05"
        then = mem.recall("where does Daniel work", as_of=datetime.datetime(2023, 5, 1, 14, 30))
    assert then.as_of == "2023-05-01" and then.to_dict()["as_of"] == "2023-05-01"
    out = io.StringIO()
    assert main(["--store", str(demo_store), "recall", "where does Daniel work", "--as-of", "2023-05-01"], out) == 0
    assert "as of 2023-05-01" in out.getvalue().splitlines()[0]
    out = io.StringIO()
    assert main(["--store", str(demo_store), "recall", "where does Daniel work", "--as-of", "2023-05", "--json"], out) == 0
    assert json.loads(out.getvalue())["as_of"] == "2023-05"


def test_a_long_turn_is_shown_around_the_words_the_query_asked(demo_store):
    """A hit's line shows the part of its turn that holds the query's words, as the app's table
    does: the turn naming the Flatirons names them after its 110th character, and its line showed
    only the turn's first words (a mountain pass) for a question about Leah's home."""
    out = io.StringIO()
    code = main(["--store", str(demo_store), "recall", "Flatirons", "--strategy", "bm25", "--top-k", "1"], out)
    first_hit = out.getvalue().splitlines()[1]
    assert code == 0
    assert "Maya: …" in first_hit and "Flatirons" in first_hit
