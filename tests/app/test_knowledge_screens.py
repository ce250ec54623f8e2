"""Topics, Facts, Memories and Ranker: browse, jump, curate with a dry run, see learning."""

from __future__ import annotations

from textual.widgets import DataTable, OptionList, Tree

from mnemoscope.app.widgets import ChoiceDialog, FormDialog, PromptDialog
from mnemoscope.app.widgets.trace import TraceView
from tests.app.mnemo_testing import SIZE, settle, text_of


async def test_browse_the_topic_tree_and_jump(demo_app):
    app = demo_app(start_mode="topics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        tree = screen.query_one("#topic-tree", Tree)
        roots = list(tree.root.children)
        assert len(roots) >= 2
        first = roots[0]
        assert "t:0" in first.label.plain
        assert "terms:" in text_of(screen.query_one("#topic-body"))
        assert screen.query_one("#topic-items", DataTable).row_count > 0
        # children load only when a node opens
        parent = next(n for n in roots if n.allow_expand)
        assert not parent.children
        parent.expand()
        await settle(pilot)
        assert parent.children and all(c.data.startswith(parent.data + ".") for c in parent.children)
        # a relation is a jump
        jumps = screen.query_one("#topic-jumps", OptionList)
        assert jumps.option_count > 0
        await pilot.press("j")
        jumps.highlighted = jumps.option_count - 1
        target = jumps.get_option_at_index(jumps.option_count - 1).id.removeprefix("j-")
        await pilot.press("enter")
        await settle(pilot)
        assert tree.cursor_node is not None and tree.cursor_node.data == target
        assert target in text_of(screen.query_one("#topic-body"))


async def test_open_an_entity_and_its_facts_then_delete_one_after_the_dry_run(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        entities = screen.query_one("#entities-table", DataTable)
        assert entities.row_count > 10
        screen.query_one("#entity-filter").value = "maya"
        await settle(pilot)
        assert entities.get_row_at(0)[0] == "Maya"
        facts = screen.query_one("#facts-table", DataTable)
        assert facts.row_count > 5
        assert "[ Maya ]" in text_of(screen.query_one("#graph-body"))
        before = app.store_stats["facts"]
        facts.focus()
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "1 fact deleted" in text_of(app.screen.query_one("#dialog-text"))
        assert app.store_stats["facts"] == before, "a dry run writes nothing"
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats["facts"] == before - 1


async def test_a_refused_edit_is_a_message(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#facts-table", DataTable).focus()
        await pilot.press("e")
        assert isinstance(app.screen, FormDialog)
        app.screen.query_one("#form-subject").value = "Nobody Anybody Knows"
        await pilot.click("#form-ok")
        await settle(pilot)
        assert any("refused" in (n.title or "") for n in app._notifications)
        assert app.screen is screen


async def test_add_a_fact_by_hand_after_the_dry_run(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        before = app.store_stats["facts"]
        screen.query_one("#facts-table", DataTable).focus()
        await pilot.press("a")
        assert isinstance(app.screen, FormDialog)
        form = app.screen
        assert form.query_one("#form-subject").value == screen.entity.name
        assert form.query_one("#form-items").value  # the selected fact's items, to start from
        form.query_one("#form-predicate").value = "teaches"
        form.query_one("#form-object").value = "a sourdough class"
        await pilot.click("#form-ok")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "1 fact added" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats["facts"] == before + 1
        assert any(f.predicate == "teaches" and f.origin == "user" for f in screen.facts)


async def test_rename_an_entity(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        name = screen.entity.name
        await pilot.press("r")
        assert isinstance(app.screen, PromptDialog)
        app.screen.query_one("#prompt-input").value = name + " Renamed"
        await pilot.press("enter")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert any(e.name == name + " Renamed" for e in screen.entities)


async def test_memories_timeline_events_and_jump_to_a_turn(demo_app):
    app = demo_app(start_mode="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        episodes = screen.query_one("#episodes-table", DataTable)
        assert episodes.row_count > 10
        dated = [e.time_start for e in screen.episodes if e.time_start]
        assert dated == sorted(dated) and screen.episodes[0].time_start is not None
        body = text_of(screen.query_one("#episode-body"))
        assert "Episode" in body and "who" in body
        turns = screen.query_one("#turns-table", DataTable)
        assert turns.row_count == len(screen.episodes[0].items)
        item_id = screen.turns[0].id
        turns.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.current_mode == "sources"
        assert app.screen.current_item().id == item_id


async def test_merge_two_episodes_then_split_them(demo_app):
    app = demo_app(start_mode="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        before = app.store_stats["episodes"]
        await pilot.press("m")
        assert isinstance(app.screen, PromptDialog)
        await pilot.press("enter")  # the next episode of the same source is suggested
        await settle(pilot)
        assert "1 episode merged" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats["episodes"] == before - 1
        assert screen.current_episode().merged_from
        await pilot.press("s")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats["episodes"] == before


async def test_the_trace_advances_step_by_step(demo_app):
    app = demo_app(animate=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#query-input").value = "tell me more about sourdough starters"
        await pilot.press("enter")
        await settle(pilot)
        trace = screen.query_one(TraceView)
        assert not trace.steps, "the trace is built when its tab is first shown"
        await pilot.press("t")
        assert len(trace.steps) >= 2, "the walk has steps"
        first = trace.step
        await pilot.pause(TraceView.INTERVAL * 2.5)
        assert trace.step > first, "the animation moves on"
        await pilot.press("space")  # pause
        assert not trace.playing
        await pilot.press("r")  # replay from the start
        assert trace.step == 0 and trace.playing
        await pilot.press("full_stop")  # single step pauses and advances
        assert trace.step == 1 and not trace.playing
        assert "step 2/" in text_of(screen.query_one("#trace-status"))
        tree = screen.query_one("#trace-tree", Tree)
        assert tree.cursor_node is not None and tree.cursor_node.data == trace.steps[1].node
        assert "candidate" in text_of(screen.query_one("#trace-step"))


async def test_feedback_reaches_the_ranker_screen(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        query = app.screen
        for text in ("sourdough starter", "what did Maya adopt"):
            query.query_one("#query-input").value = text
            query.query_one("#query-input").focus()
            await pilot.press("enter")
            await settle(pilot)
            await pilot.press("u", "f")
            await settle(pilot)
        assert sum(n.title == "Feedback sent" for n in app._notifications) == 2
        await pilot.press("7")
        await settle(pilot)
        ranker = app.screen
        assert ranker.query_one("#feedback-table", DataTable).row_count == 2
        assert "feedback events  2" in " ".join(text_of(ranker.query_one("#ranker-body")).split("  ")[:3]) \
            or "2" in text_of(ranker.query_one("#ranker-body"))
        status = app.services.mem.ranker.status()
        assert status.events == 2
        assert ranker.query_one("#curve-lambda").values == [p.lam for p in status.curve]
        await pilot.press("R")
        await pilot.click("#choice-reset")
        await settle(pilot)
        assert ranker.query_one("#feedback-table", DataTable).row_count == 0


async def test_rebuild_the_topic_tree_in_a_worker(demo_app):
    app = demo_app(start_mode="topics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        assert any(n.title == "Topics rebuilt" for n in app._notifications)
        assert app.screen.query_one("#topic-tree", Tree).root.children


def test_the_drawing_names_a_phrase_about_the_entity_as_the_subject():
    """'Maya's kitchen is cold' is linked to Maya, but Maya is not cold."""
    from mnemoscope.engine.knowledge.records import Entity, Fact
    from mnemoscope.screens.facts import neighbourhood

    maya = Entity(id=1, key="maya", name="Maya", kind="speaker")
    facts = [Fact(1, "Maya", "adopted", "dog named Pepper", subject_id=1),
             Fact(2, "Maya's kitchen", "is", "cold", subject_id=1)]
    lines = neighbourhood(maya, facts).plain.splitlines()
    assert "Maya's kitchen" not in lines[0] and "adopted" in lines[0]
    assert "Maya's kitchen: is ─▶ cold" in lines[1]
