"""What a person types on a screen goes where they expect: a name or a question typed on a list
starts the screen's box (the entity filter, the query box, the path box), however fast it comes;
the screen's own one-letter keys stay theirs."""

from __future__ import annotations

from textual import events
from textual.screen import ModalScreen
from textual.widgets import Input

from tests.app.mnemo_testing import SIZE, ask, settle


async def typed(pilot, text: str, on: str, into: str) -> Input:
    """``text`` typed on the widget ``on`` (which has the focus) as a terminal sends it when
    pasted or typed fast, every key queued at once; the box ``into`` it should have gone to."""
    screen = pilot.app.screen
    assert screen.focused is screen.query_one(on)
    for char in text:
        pilot.app.post_message(events.Key(char, char))
    await settle(pilot)
    assert not isinstance(pilot.app.screen, ModalScreen), pilot.app.screen
    box = screen.query_one(into, Input)
    assert box.value == text and screen.focused is box, (box.value, screen.focused)
    return box


async def test_a_name_typed_on_the_entity_list_filters_it(demo_app):
    """"Daniel" typed on the Facts screen (no Ctrl+F first): `a` opened Add a fact, "niel" went
    into its subject (session 22); "Zoe" did nothing at all."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await typed(pilot, "Daniel", on="#entities-table", into="#entity-filter")
        assert [e.name for e in screen.entities][:1] == ["Daniel"], [e.name for e in screen.entities]
        await pilot.press("enter")  # the list again, its keys its own
        await settle(pilot)
        box = await typed(pilot, "Pe", on="#entities-table", into="#entity-filter")  # a new name, not "DanielPe"
        await pilot.press("escape", "i")  # a documented key of the screen still acts
        await settle(pilot)
        assert screen.inbox and screen.query_one("#conflicts-table").row_count
        await pilot.press("D")  # in the inbox there is no filter to start
        await settle(pilot)
        assert screen.inbox and box.value == "Pe"


async def test_a_question_typed_on_the_hits_starts_a_new_query(demo_app):
    """After a query the hits have the focus: "How did you feel" typed there reached `u` (mark
    used) and `f` (send feedback: a write to the store) on the way; of "where is Pepper", `w`
    showed the Why panel and the rest started the box: the query went as "here is Pepper"."""
    app = demo_app(start_mode="query")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "where does Maya live")
        await typed(pilot, "How did you feel", on="#hits", into="#query-input")
        assert not app.screen.used and not app.titled("Feedback sent")
        await pilot.press("enter")
        await settle(pilot)
        await typed(pilot, "where is Pepper", on="#hits", into="#query-input")


async def test_a_path_typed_on_the_file_tree_starts_the_path_box(demo_app):
    app = demo_app(start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await typed(pilot, "Docs", on="#ingest-tree", into="#ingest-path")
        assert not app.screen.selection
