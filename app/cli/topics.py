"""``topics``: the topic tree of the store (list, indented tree, rebuild, JSON)."""

from __future__ import annotations

import argparse
from typing import TextIO

from .common import emit, open_memory


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("topics", help="the topic tree: list it, draw it, rebuild it")
    p.add_argument("--tree", action="store_true", help="draw the hierarchy, indented")
    p.add_argument("--rebuild", action="store_true", help="rebuild the tree from every item first")
    p.add_argument("--json", action="store_true", help="a list of topics: id, parent, depth, label, terms, size")
    p.set_defaults(handler=topics)


def topics(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        area = mem.topics
        report = area.rebuild() if args.rebuild else None
        infos = area.tree()
        payload = [{k: v for k, v in t.to_dict().items() if k in ("id", "parent", "depth", "label", "terms", "size")} for t in infos]

        def text() -> str:
            lines = [f"rebuilt: {report.summary()}"] if report else []
            if area.message and not report:
                lines.append(area.message)
            for t in (depth_first(infos) if args.tree else infos):
                indent = "  " * (t.depth - 1) if args.tree else ""
                lines.append(f"{indent}{t.id:<12} {t.size:>6}  {t.label}")
            if not infos:
                lines.append("no topics")
            return "\n".join(lines)

        emit(out, payload, args.json, text)
    return 0


def depth_first(infos: list) -> list:
    """Topics in drawing order: each topic followed by its subtree."""
    by_id = {t.id: t for t in infos}
    out: list = []
    stack = [t for t in infos if t.parent is None][::-1]
    while stack:
        t = stack.pop()
        out.append(t)
        stack.extend(by_id[c] for c in reversed(t.children) if c in by_id)
    return out
