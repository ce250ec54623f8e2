"""The Ranker screen while the ranker relearns in the background (after a feature change, started
by the app's warm-up): it shows the relearning's end by itself, not at the next key press, and
does not reload meanwhile."""

import asyncio
import threading

from mnemoscope.app.services import Services
from mnemoscope.engine import Settings
from mnemoscope.engine.rank.service import RankerArea
from tests.app.mnemo_testing import SIZE, PilotApp, build_app, settle, text_of, until
from tests.rank.test_feedback import taught_under_core_signals

RELEARNED = "relearned from its 4 feedback event(s)"


def held_relearning(mem, monkeypatch) -> tuple[Services, threading.Event, threading.Event]:
    """``mem`` taught under the core signals, to be opened with one signal more: its relearning
    sets ``started``, then waits for ``release`` (so that a test sees it running)."""
    taught_under_core_signals(mem)
    mem.close()
    started, release = threading.Event(), threading.Event()
    relearned = RankerArea._relearned

    def held(self, *args):
        started.set()
        assert release.wait(60)
        return relearned(self, *args)

    monkeypatch.setattr(RankerArea, "_relearned", held)
    settings = Settings.load(store=str(mem.path), fused_signals="answer")
    return Services(mem.path, label="store.db", settings=settings), started, release


async def ranker_shown_while_relearning(pilot, started: threading.Event):
    """The Ranker screen's status, shown while the relearning runs."""
    await settle(pilot)
    assert started.wait(30)
    await pilot.app.switch_mode("ranker")
    await settle(pilot)
    body = pilot.app.screen.query_one("#ranker-body")
    assert "relearning from the feedback log in the background" in text_of(body)
    return body


async def test_the_ranker_screen_shows_when_a_background_relearning_ends(mem, monkeypatch):
    """Before, the screen kept "relearning … in the background" (λ 0, no model steps) until the
    person switched screens or sent feedback (fails before: the text unchanged after the end)."""
    services, started, release = held_relearning(mem, monkeypatch)
    app = build_app(services)
    try:
        async with app.run_test(size=SIZE) as pilot:
            body = await ranker_shown_while_relearning(pilot, started)
            release.set()
            await until(pilot, lambda: RELEARNED in text_of(body), "the relearning's end on the Ranker screen",
                        timeout=30)
            assert "in the background" not in text_of(body)
    finally:
        release.set()


class LoadCountingApp(PilotApp):
    """The app, counting the Ranker screen's loads (its tasks named "ranker")."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ranker_loads = 0

    def run_task(self, owner, task, title, fn, **options):
        self.ranker_loads += task == "ranker"
        return super().run_task(owner, task, title, fn, **options)


async def test_the_ranker_screen_loads_once_per_change_burst_and_not_while_a_relearning_runs(mem, monkeypatch):
    """While a relearning ran, every load started one more "look again in 1 s" chain, and every
    store change another: the screen reloaded its 200 events at a rate that grew with each
    commit followed. Now it waits for the relearning's end, and changes that come while a load
    runs load once more after it (fails before: 11 loads for a burst of 10 changes)."""
    services, started, release = held_relearning(mem, monkeypatch)
    app = build_app(services, app_class=LoadCountingApp)
    try:
        async with app.run_test(size=SIZE) as pilot:
            body = await ranker_shown_while_relearning(pilot, started)
            before = app.ranker_loads
            for _ in range(10):  # a burst: another process's commits, each followed
                app.store_changed(app.store_stats)
            await settle(pilot)
            assert app.ranker_loads - before == 2  # the one the first change started, one after it for the rest
            quiet = app.ranker_loads
            await asyncio.sleep(1.5)  # the relearning still runs: nothing to load meanwhile
            assert app.ranker_loads == quiet
            release.set()
            await until(pilot, lambda: RELEARNED in text_of(body), "the relearning's end on the Ranker screen",
                        timeout=30)
            assert app.ranker_loads == quiet + 1
    finally:
        release.set()
