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
