"""Image commands: ``images`` (how many shared photos are embedded) and ``images --resume``."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import TextIO

from .common import emit, json_option, open_memory


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("images", help="shared photos: how many are embedded; --resume embeds the rest")
    p.add_argument("--resume", action="store_true", help="embed every image that has no vector yet")
    json_option(p)
    p.set_defaults(handler=images)


def images(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        if args.resume:
            report = mem.images.resume()
            lines = [report.summary(), *(f.line() for f in report.failures)]
            payload = {"embedded": report.embedded, "failures": [f.line() for f in report.failures],
                       "not_fetched": len(report.not_fetched),
                       "seconds": round(report.seconds, 3), **asdict(mem.images.status())}
            emit(out, payload, args.json, "\n".join(lines))
            return 0
        status = mem.images.status()
        text = (f"{status.with_image} shared image(s); {status.embedded} embedded by {status.model}, {status.pending} pending"
                if status.enabled else f"{status.with_image} shared image(s); none embedded: no image model "
                "(set MNEMOSCOPE_IMAGE_EMBED_MODEL and an endpoint)")
        emit(out, {**asdict(status), "pending": status.pending}, args.json, text)
    return 0
