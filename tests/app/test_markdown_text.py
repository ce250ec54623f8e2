"""A document's Markdown, read without its marks (app.widgets.text.markdown_text)."""

from __future__ import annotations

import pytest

from mnemoscope.app.widgets import markdown_text

CASES = [  # (Markdown, as read, the stretches styled: (text, style))
    ("In Switzerland, **yellow** signposts", "In Switzerland, yellow signposts", [("yellow", "bold")]),
    ("wet clothing (see *The Layering System*)", "wet clothing (see The Layering System)",
     [("The Layering System", "italic")]),
    ("the prefixes `query:` and [E5](https://example.org/e5)", "the prefixes query: and E5",
     [("query:", "reverse"), ("E5", "underline")]),
    ("## Planning a Route", "Planning a Route", [("Planning a Route", "bold")]),
    ("- **HNSW** links each vector", "• HNSW links each vector", [("HNSW", "bold")]),
    ("| Grade | Name |\n|---|---|\n| T1 | Hiking |", "Grade │ Name\nT1 │ Hiking", []),
    # a document's chunk: its sentences joined by spaces, a table's lines too
    ("routes from T1 to T6: | Grade | Name | |---|---| | T1 | Hiking | | T2 | Mountain hiking | Trail markings follow.",
     "routes from T1 to T6:\nGrade │ Name\nT1 │ Hiking\nT2 │ Mountain hiking\nTrail markings follow.", []),
    # a mark opened and not closed before the next one opens stays as typed (as CommonMark reads them)
    ("**a **b**", "**a b", [("b", "bold")]),
    ("[a [b](https://example.org)", "[a b", [("b", "underline")]),
    # what only looks like a mark stays as typed
    ("snake_case, file_name_here, 2*3*4 and 5 * 3", "snake_case, file_name_here, 2*3*4 and 5 * 3", []),
]


@pytest.mark.parametrize("markdown, plain, styled", CASES)
def test_markdown_reads_as_text(markdown: str, plain: str, styled: list[tuple[str, str]]) -> None:
    text = markdown_text(markdown)
    assert text.plain == plain
    spans = [(text.plain[s.start:s.end], str(s.style)) for s in text.spans]
    for want in styled:
        assert want in spans, spans
    if not styled:
        assert not spans, spans


def test_a_chunk_of_many_joined_tables_or_unclosed_marks_is_read_whole_at_once() -> None:
    """Hostile sweep: a chunk of 20,000 characters (a document's longest) that joins 1,500 small
    tables raised RecursionError, one call per table (fails before); a run of '[' or of '**a '
    that never closes took 2-3 s of the app's thread each time the item was shown (every opening
    searched to the chunk's end). Tables are read in a loop, a mark's search stops at the next opening."""
    tables = markdown_text("| a | |---| x " * 1500).plain.split("\n")
    assert len(tables) == 3000 and set(tables[:-1]) == {"a", "x"}
    for text in ("[" * 20_000, "**a " * 5_000, "__a " * 5_000):
        read = markdown_text(text)
        assert read.plain == text and not read.spans
