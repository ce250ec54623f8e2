"""Every relative link in the README and docs/ resolves, its #anchor included: the README's short
cells send a reader to the history in docs/, and a heading renamed there would break them silently.
Anchors follow GitHub's rule (lower case, punctuation but hyphens dropped, spaces made hyphens, a
repeated heading numbered -1, -2, …)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of one Markdown text."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in FENCE.sub("", text).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def relative_links(path: Path) -> list[str]:
    """The links of one document that point inside the repository (no scheme, no mail)."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [link for link in LINK.findall(text) if not re.match(r"[a-z]+:", link)]


def test_heading_anchors_follow_githubs_rule() -> None:
    text = "# The `engine/wordvec.py` file\n## Session 19: the question's kin\n## Twice\n## Twice\n"
    assert heading_anchors(text) == {
        "the-enginewordvecpy-file",
        "session-19-the-questions-kin",
        "twice",
        "twice-1",
    }


def test_every_relative_link_resolves() -> None:
    links = [(document, link) for document in DOCUMENTS for link in relative_links(document)]
    assert links, "no relative link found: the pattern no longer matches the documents' links"
    broken = []
    for document, link in links:
        target, _, anchor = link.partition("#")
        path = (document.parent / target).resolve() if target else document
        if not path.exists():
            broken.append(f"{document.name}: {link}: no such file")
        elif anchor and path.suffix == ".md":
            if anchor not in heading_anchors(path.read_text(encoding="utf-8")):
                broken.append(f"{document.name}: {link}: no such heading in {path.name}")
    assert not broken, "\n".join(broken)
