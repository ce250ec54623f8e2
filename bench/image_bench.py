"""What embedding shared photos costs at ingest and recall, against the loopback endpoint.

A LoCoMo-style conversation of ``--images`` turns, each sharing its own photo (``--kb`` KB of
random bytes behind a PNG signature, a relative path), is ingested into the core with the
image area twice: without an image model (the baseline: no image work) and with one (every
photo read, base64-encoded, sent and stored); each store then re-ingests the
conversation after a text change (with the model, every photo is read and hashed and its vector
comes from the store's cache: no request). The loopback server
(tests/support/openai_server.py) answers at once but runs in this process (its JSON and base64
decoding share the interpreter), so the figures are an upper bound on this engine's own cost
plus one local HTTP round trip per batch, and say nothing of a real model's latency.

Usage::

    python bench/image_bench.py                   # 200 photos of 50 KB, 3 runs, medians
    python bench/image_bench.py --images 500 --kb 200 --runs 5 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemoscope.engine import Memory  # noqa: E402
from mnemoscope.engine.images import ImagesArea  # noqa: E402
from tests.support.openai_server import OpenAIServer  # noqa: E402


def write_conversation(folder: Path, n: int, kb: int, text: str) -> Path:
    (folder / "photos").mkdir(exist_ok=True)
    turns = []
    for k in range(n):
        photo = folder / "photos" / f"p{k}.png"
        if not photo.exists():
            photo.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(kb * 1024))
        turns.append({"speaker": "Maya" if k % 2 else "Dan", "dia_id": f"D1:{k + 1}", "text": f"{text} number {k}",
                      "img_url": [f"photos/{photo.name}"], "blip_caption": f"a photo of thing {k}"})
    sample = {"sample_id": "bench", "conversation": {"speaker_a": "Maya", "speaker_b": "Dan",
                                                     "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns}}
    path = folder / "conv.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def open_memory(path: Path, server: OpenAIServer, model: str) -> Memory:
    mem = Memory(path, extensions=False, embed_base_url=server.base_url, image_embed_model=model, max_retries=0)
    mem.add_extension(ImagesArea(mem))
    return mem


def one_run(folder: Path, server: OpenAIServer, n: int, kb: int, run: int) -> dict[str, float]:
    """Ingest, then re-ingest after a text change, without and with an image model (ms per turn)."""
    out: dict[str, float] = {}
    for mode, model in (("baseline", ""), ("images", "clip")):
        mem = open_memory(folder / f"{mode}-{run}.db", server, model)
        requests = server.count("embeddings")
        for phase, text in (("ingest", "Look at this"), ("reingest", "And look at this")):
            started = time.perf_counter()
            mem.ingest(write_conversation(folder, n, kb, text))
            out[f"{mode}_{phase}_ms"] = (time.perf_counter() - started) * 1000 / n
            if phase == "ingest":
                requests = server.count("embeddings")
        assert server.count("embeddings") == requests, "a cached photo was sent again"
        if model:
            assert mem.images.status().pending == 0
            latencies = []
            for k in range(20):
                started = time.perf_counter()
                mem.recall(f"thing {k}", strategy="image")
                latencies.append((time.perf_counter() - started) * 1000)
            out["image_recall_p50_ms"] = statistics.median(latencies)
        mem.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument("--kb", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, OpenAIServer() as server:
        runs = [one_run(Path(tmp), server, args.images, args.kb, r) for r in range(args.runs)]
    medians = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
    if args.json:
        print(json.dumps({"images": args.images, "kb": args.kb, "runs": args.runs, **medians}))
        return
    print(f"{args.images} photos of {args.kb} KB, median of {args.runs} runs (loopback endpoint), ms per turn:")
    print(f"  {'':28}{'no image model':>16}{'image model':>14}{'per image':>11}")
    for phase, label in (("ingest", "ingest"), ("reingest", "re-ingest (cached vectors)")):
        base, img = medians[f"baseline_{phase}_ms"], medians[f"images_{phase}_ms"]
        print(f"  {label:28}{base:16.3f}{img:14.3f}{img - base:11.3f}")
    print(f"  recall, strategy image (p50): {medians['image_recall_p50_ms']:.3f} ms")

if __name__ == "__main__":
    main()
