"""What feedback adds to the next fused recall at 10k items, on as quiet a machine as there is.

``eval learning`` measures the same (``feedback_ms.synthetic``) but builds its 10k store inside the
run; here the build is a step of its own (long: run it under ``nice`` without the heavy-run lock)
and the timing is another, short enough to hold the lock (under 5 minutes). The timing works on
fresh copies of both stores each time: it gives feedback while it measures, and a newer version's
schema change stays in its copies, so an older version can still measure the same folder.

    nice -n 19 python3 bench/feedback_cost.py build /tmp/feedback-cost
    flock /tmp/heavy.lock python3 bench/feedback_cost.py measure /tmp/feedback-cost --rounds 5

``measure`` prints :func:`engine.eval.learning.recall_after_feedback`'s JSON: paired medians (each
question on the taught store right after a feedback event, and on its untaught copy, back to back,
order swapped every round), wall and CPU, and the machine's load average at the start and end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from mnemoscope.engine import Memory
from mnemoscope.engine.eval.learning import recall_after_feedback, taught_copies

DATA = Path("/work/shared/data/locomo/locomo10_dev.json")
WARM_UP = 10  # questions recalled on both stores before timing: matrices built, caches filled


def build(folder: Path, items: int, events: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    _, _, questions = taught_copies(folder, DATA, items, events)
    (folder / "questions.json").write_text(json.dumps(questions))


def measure(folder: Path, rounds: int) -> dict[str, object]:
    questions = json.loads((folder / "questions.json").read_text())
    for name in ("plain", "taught"):
        shutil.copy(folder / f"{name}.db", folder / f"run-{name}.db")
    load_before = os.getloadavg()
    try:
        with Memory(folder / "run-plain.db") as plain, Memory(folder / "run-taught.db") as taught:
            for text in questions[:WARM_UP]:
                plain.recall(text, top_k=10, strategy="fused")
                taught.recall(text, top_k=10, strategy="fused")
            result = recall_after_feedback(plain, taught, questions, rounds)
    finally:
        for path in folder.glob("run-*.db*"):
            path.unlink()
    return {**result, "load_average_start": load_before[0], "load_average_end": os.getloadavg()[0]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=("build", "measure"))
    ap.add_argument("folder", type=Path)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--events", type=int, default=50, help="feedback events the taught copy starts with")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.step == "build":
        build(args.folder, args.items, args.events)
    else:
        print(json.dumps(measure(args.folder, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
