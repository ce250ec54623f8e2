"""``eval supersession`` (engine/eval/supersession.py): the supersessions of every corpus, a seeded
sample drawn from all of them pooled, counted against the hand judgements."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from mnemoscope.app.cli import main
from mnemoscope.engine.eval import supersession

from .conftest import locomo

MOVES = locomo("moves", ("Lena", "Omar"),
    ("9:00 am on 10 January, 2023", [
        ("Lena", "I live in Lyon, right by the river."),
        ("Omar", "I work at Acme in Manchester."),
    ]),
    ("6:30 pm on 5 June, 2023", [
        ("Lena", "I moved to Berlin in May."),
        ("Omar", "I started at Globex last week."),
    ]),
)


def test_the_pooled_sample_is_seeded_and_counted_against_the_judgements(tmp_path: Path):
    corpus, locomo_file = tmp_path / "moves.json", tmp_path / "locomo.json"
    corpus.write_text(json.dumps([MOVES]), encoding="utf-8")
    locomo_file.write_text(json.dumps([{**MOVES, "sample_id": "other"}]), encoding="utf-8")
    judgements = tmp_path / "judged.json"
    judgements.write_text(json.dumps({
        "moves": {"Lena lives in Lyon  =>  Lena moved to Berlin": {"judgement": "right"},
                  "Omar works at Acme in Manchester  =>  Omar started at Globex": {"judgement": "wrong"}},
    }), encoding="utf-8")

    every = supersession.evaluate(locomo_file, judgements, sample=50, seed=3, corpora={"moves": corpus})
    pooled = every["pooled"]
    assert pooled["supersessions"] == pooled["sampled"] == 4  # two corpora, two each
    assert (pooled["right"], pooled["wrong"], pooled["precision"]) == (1, 1, 0.5)  # the other corpus is unjudged
    assert sorted(s["judgement"] or "" for s in pooled["sample"]) == ["", "", "right", "wrong"]
    assert len(every["corpora"]["locomo"]["unjudged"]) == 2 and every["corpora"]["moves"]["unjudged"] == []

    one = supersession.evaluate(locomo_file, judgements, sample=1, seed=3, corpora={"moves": corpus})
    again = supersession.evaluate(locomo_file, judgements, sample=1, seed=3, corpora={"moves": corpus})
    assert one["pooled"]["sampled"] == 1 and one["pooled"]["sample"] == again["pooled"]["sample"]


def test_a_sample_of_nothing_is_refused_in_one_line(tmp_path: Path):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["eval", "supersession", str(tmp_path / "none.json"), "--sample", "0"], io.StringIO()) == 2
    assert err.getvalue().count("\n") == 1 and "--sample" in err.getvalue()
