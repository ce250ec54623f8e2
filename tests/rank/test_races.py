"""Two real processes give feedback at once: a token is accepted once, and no SGD step is lost."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mnemoscope.engine import Memory

from .conftest import SETTINGS

ROOT = Path(__file__).resolve().parents[2]

# Load the ranker, say so, wait for the go file, then send feedback for each (token, used id) of
# argv[3] (a JSON list), printing one JSON line per event: the event id, or the refusal.
TEACHER = """
import json, sys, time
from pathlib import Path
from mnemoscope.engine import Memory
from mnemoscope.engine.rank import FeedbackError
mem = Memory(sys.argv[1], fused_signals="")
mem.ranker.status()
Path(sys.argv[2] + ".ready" + sys.argv[4]).touch()
while not Path(sys.argv[2]).exists():
    time.sleep(0.005)
for token, used in json.loads(sys.argv[3]):
    try:
        print(json.dumps({"event": mem.feedback(token, [used]).event_id}), flush=True)
    except FeedbackError as exc:
        print(json.dumps({"refused": str(exc)}), flush=True)
"""


def teach_at_once(store: Path, tmp_path: Path, batches: list[list[tuple[str, int]]]) -> list[list[dict]]:
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", TEACHER, str(store), str(go), json.dumps(batch), str(n)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n, batch in enumerate(batches)]
    deadline = time.monotonic() + 60
    while not all(Path(f"{go}.ready{n}").exists() for n in range(len(procs))):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    return [[json.loads(line) for line in out.splitlines()] for out, _ in outputs]


def tokens_for(store: Path, queries: list[str]) -> list[tuple[str, int]]:
    """One fused recall per query (read-only), and the hit to mark: the third."""
    with Memory(store, **SETTINGS) as mem:
        return [(rec.token, rec.hits[2].item.id) for rec in (mem.recall(q, strategy="fused") for q in queries)]


def test_one_token_sent_by_two_processes_at_once_makes_one_event(built_store, tmp_path):
    store = tmp_path / "race.db"
    shutil.copy(built_store, store)
    (token,) = tokens_for(store, ["sourdough bread class"])
    results = teach_at_once(store, tmp_path, [[token], [token]])
    outcomes = sorted(list(r[0]) for r in results)
    assert outcomes == [["event"], ["refused"]], results
    refusal = next(r[0]["refused"] for r in results if "refused" in r[0])
    assert "already used" in refusal
    with Memory(store, **SETTINGS) as mem:
        assert mem.ranker.status().events == 1


QUERIES = ["sourdough starter", "border collie", "night shift at the hospital", "hiking trip", "birthday present",
           "moving to a new apartment", "learning to cook", "weekend plans", "bread class", "dog training",
           "oven temperature", "morning run"]


def test_feedback_from_two_processes_at_once_loses_no_sgd_step(built_store, tmp_path):
    together, alone = tmp_path / "together.db", tmp_path / "alone.db"
    shutil.copy(built_store, together)
    shutil.copy(built_store, alone)
    marks = tokens_for(together, QUERIES)
    results = teach_at_once(together, tmp_path, [marks[0::2], marks[1::2]])
    assert all("event" in r for batch in results for r in batch), results
    with Memory(alone, **SETTINGS) as mem:  # the same events, one after another, in one process
        for token, used in tokens_for(alone, QUERIES):
            mem.feedback(token, [used])
        expected = mem.ranker.status()
    with Memory(together, **SETTINGS) as mem:
        got = mem.ranker.status()
    assert expected.model_steps > 0 and expected.events == len(QUERIES)
    assert (got.events, got.model_steps, got.train_pairs, got.held_out_pairs, got.trusted_items) == \
        (expected.events, expected.model_steps, expected.train_pairs, expected.held_out_pairs, expected.trusted_items)
