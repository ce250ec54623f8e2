"""The Ranker screen while the ranker relearns in the background (after a feature change, started
by the app's warm-up): it shows the relearning's end by itself, not at the next key press."""

import threading

from mnemoscope.app.services import Services
from mnemoscope.engine import Settings
from mnemoscope.engine.rank.service import RankerArea
from tests.app.mnemo_testing import SIZE, build_app, settle, text_of, until
from tests.rank.test_feedback import taught_under_core_signals


async def test_the_ranker_screen_shows_when_a_background_relearning_ends(mem, monkeypatch):
    """Before, the screen kept "relearning … in the background" (λ 0, no model steps) until the
    person switched screens or sent feedback (fails before: the text unchanged after the end)."""
    taught_under_core_signals(mem)
    mem.close()
    started, release = threading.Event(), threading.Event()
    relearned = RankerArea._relearned

    def held(self, *args):  # the relearning waits until the screen has shown it running
        started.set()
        assert release.wait(60)
        return relearned(self, *args)

    monkeypatch.setattr(RankerArea, "_relearned", held)
    settings = Settings.load(store=str(mem.path), fused_signals="answer")
    app = build_app(Services(mem.path, label="store.db", settings=settings))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert started.wait(30)
            await app.switch_mode("ranker")
            await settle(pilot)
            body = app.screen.query_one("#ranker-body")
            assert "relearning from the feedback log in the background" in text_of(body)
            release.set()
            await until(pilot, lambda: "relearned from its 4 feedback event(s)" in text_of(body),
                        "the relearning's end on the Ranker screen", timeout=30)
            assert "in the background" not in text_of(body)
    finally:
        release.set()
