"""The app's garbage collection: full collections look only at what was made since the last one,
and a sweep at a pause frees the cycles that died among the rest (app.collector)."""

from __future__ import annotations

import gc
import weakref

from mnemoscope.app.collector import QuietCollector
from tests.app.mnemo_testing import SIZE, settle, until


class Node:
    """An object in a cycle (it refers to itself): only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


def test_a_full_collection_freezes_what_it_leaves_and_a_sweep_frees_the_cycles_that_died_since():
    before, collector = gc.get_freeze_count(), QuietCollector()
    collector.install()
    try:
        node, freed = Node(), []
        weakref.finalize(node, freed.append, "node")
        gc.collect()
        assert gc.get_freeze_count() > 0 and len(gc.get_objects()) < 1000  # the next one looks at what is new
        del node
        gc.collect()
        assert freed == []  # died among the frozen: the price of not looking at them again
        collector.sweep()
        assert freed == ["node"] and collector.sweeps == 1

        # a sweep is due once the frozen objects have doubled since the last
        assert not collector.sweep_due
        kept = [[] for _ in range(2 * collector.swept_at)]  # lists: objects the collector tracks
        gc.collect()
        assert collector.sweep_due
        collector.sweep()
        assert not collector.sweep_due and collector.swept_at >= len(kept)
    finally:
        collector.uninstall()
    assert (gc.get_freeze_count() > 0) == (before > 0)  # the process's collection as it was (tests freeze their imports)


async def test_the_app_freezes_what_lives_sweeps_at_a_pause_and_leaves_the_process_as_it_was(demo_app):
    before, app = gc.get_freeze_count(), demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        gc.collect()
        frozen = gc.get_freeze_count()
        assert frozen > 4 * len(gc.get_objects())  # a full collection looks at a fraction of what lives
        app.collector.swept_at = frozen // 3  # as if the frozen had more than doubled since a sweep
        app.SWEEP_AFTER_PAUSE = 0.0
        await until(pilot, lambda: app.collector.sweeps == 1, "the sweep at a pause")
        assert not app.collector.sweep_due
    assert (gc.get_freeze_count() > 0) == (before > 0) and not app.collector.installed
