"""A deferred ingest: the core stores and indexes every item first, and the areas (facts,
episodes, topics) read them later from a durable queue; recall works meanwhile, an interrupted
catch-up resumes, and the store ends as an ingest that did everything at once."""

import io
from pathlib import Path

from mnemoscope.app.cli.progress import ProgressLine
from mnemoscope.engine import Memory
from mnemoscope.engine.activity import ActivityEvent, changes_since
from tests.support.stores import DEMO_DIR

QUERIES = ["who adopted a dog", "how hot is the oven for the loaf", "what does attention compute",
           "which hut did they sleep in", "retrieval before generation"]
STRATEGIES = ("bm25", "hybrid", "ppr", "walk", "fused")


def state(mem: Memory) -> tuple[dict, dict]:
    """What a person sees: every strategy's answers and the areas' counts (not the timestamps)."""
    answers = {s: [[h.item.id for h in mem.recall(q, strategy=s).hits] for q in QUERIES] for s in STRATEGIES}
    counts = {k: v for k, v in mem.stats().to_dict().items() if k not in ("store", "topic_built_at")}
    return answers, counts


def test_a_deferred_ingest_is_usable_at_once_resumes_and_ends_as_an_immediate_one(demo_store: Path, tmp_path: Path):
    with Memory(demo_store) as immediate:
        expected = state(immediate)
    path = tmp_path / "deferred.db"
    follower = Memory(path)  # another memory on the same store follows through the activity log
    follower.warm_up()
    with Memory(path) as mem:
        mem.ingest([DEMO_DIR], defer=True, catch_up=False)
        queued = mem.store.deferred_count()
        assert queued == mem.index.n_items > 0 and mem.index.pending.all()
        assert mem.recall("sourdough starter", strategy="hybrid").hits  # the core answers at once
        assert not mem.knowledge.facts()  # the areas have not read anything yet
        follower.refresh()
        assert follower.index.n_items == queued and follower.index.pending.all()

        calls = []
        read = mem.catch_up(cancelled=lambda: calls.append(1) or len(calls) > 2)  # interrupted after two sources
        assert 0 < read < queued and mem.store.deferred_count() == queued - read
        assert mem.knowledge.facts()
    follower.refresh()
    assert int(follower.index.pending.sum()) == queued - read

    with Memory(path) as reopened:  # the queue outlived the process: the same call resumes it
        assert int(reopened.index.pending.sum()) == queued - read
        assert reopened.catch_up() == queued - read
        assert reopened.store.deferred_count() == 0 and not reopened.index.pending.any()
        assert state(reopened) == expected
    follower.refresh()
    assert not follower.index.pending.any()
    assert state(follower) == expected
    follower.close()


def test_the_feed_tells_deferred_items_and_when_the_areas_read_them():
    def line(n, action, added=(), **detail):
        return ActivityEvent(action, detail={"added": [[a, a] for a in added], **detail}, id=n)

    events = [line(5, "source.added", added=[10, 11], deferred=True), line(6, "source.added", added=[12]),
              line(7, "areas.caught_up", added=[10])]
    change = changes_since(4, events, own=set())
    assert sorted(change.added) == [10, 11, 12] and change.deferred == {11} and change.caught_up == []
    later = changes_since(6, events[2:], own=set())  # the addition was taken in before: only the read is news
    assert later.caught_up == [10] and not later.added and not later.reload and later


def test_the_progress_line_shows_the_rate_and_the_time_left_of_each_phase():
    assert ProgressLine(io.StringIO(), width=10).line(250, 1000, 5.0, 250, "storing") == \
        "storing [##........] 250/1,000 items  25.0%  50 items/s  15s left"
    out = io.StringIO()
    bar = ProgressLine(out)
    bar.phase("storing")(10, 10, "a.txt")
    bar.phase("facts, topics")(10, 10, "a.txt")
    bar.close()
    lines = out.getvalue().split("\n")
    assert lines[0].startswith("\rstoring [") and lines[1].startswith("\rfacts, topics [") and lines[2] == ""
