"""Topics, Facts and Memories: browse, jump, curate with a dry run first (the Ranker screen is
in test_query, where the feedback it shows is sent)."""

from __future__ import annotations

import asyncio
import re
import threading

import pytest
from textual.widgets import DataTable, OptionList, Tree

from mnemoscope.app.widgets import ChoiceDialog, FormDialog, PromptDialog
from mnemoscope.engine.knowledge.reading import KnowledgeReading
from tests.app.mnemo_testing import SIZE, screen_lines, settle, text_of, until


async def test_browse_the_topic_tree_jump_rebuild_it_then_the_memories_timeline(demo_app):
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
        nearest = jumps.get_option_at_index(0).id.removeprefix("j-")
        await pilot.press("j", "enter")  # as the help and the list's title say: j, then Enter jumps
        await settle(pilot)
        assert tree.cursor_node is not None and tree.cursor_node.data == nearest
        await pilot.press("j")
        jumps.highlighted = jumps.option_count - 1
        target = jumps.get_option_at_index(jumps.option_count - 1).id.removeprefix("j-")
        await pilot.press("enter")
        await settle(pilot)
        assert tree.cursor_node is not None and tree.cursor_node.data == target
        assert target in text_of(screen.query_one("#topic-body"))

        # the tree is rebuilt in a worker, once asked: `b` alone (a word typed on the tree) rebuilds nothing
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog) and "topic tree again" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.press("enter")  # the first choice, Cancel
        await settle(pilot)
        assert not app.titled("Topics rebuilt") and "topics-rebuild" not in app.tasks
        await pilot.press("b", "tab", "enter")
        await settle(pilot)
        assert app.titled("Topics rebuilt")
        assert tree.root.children

        # the Memories timeline, in the same app
        await app.switch_mode("memories")
        await settle(pilot)
        screen = app.screen
        episodes = screen.query_one("#episodes-table", DataTable)
        assert episodes.row_count > 10
        dated = [e.time_start for e in screen.episodes if e.time_start]
        assert dated == sorted(dated) and screen.episodes[0].time_start is not None
        # a session's episodes are told apart by their first words: the date column says when,
        # and the summary's head ("Daniel and Maya (2023-04-03): ") is left to the panel
        session = [str(episodes.get_row_at(n)[3]) for n in range(4)]
        assert len({summary.split()[0] for summary in session}) > 1, session
        assert not any("(2023-" in summary for summary in session), session
        body = text_of(screen.query_one("#episode-body"))
        assert "Episode" in body and "who" in body
        await pilot.resize_terminal(120, 40)  # the panel beside the timeline: an event's date is not folded
        await settle(pilot)
        times = {e.time for e in screen.episodes[0].events if e.time}
        assert times and all(any(t in line for line in screen_lines(app)) for t in times), screen_lines(app)
        await pilot.resize_terminal(*SIZE)
        await settle(pilot)
        turns = screen.query_one("#turns-table", DataTable)
        assert turns.row_count == len(screen.episodes[0].items)
        item_id = screen.turns[0].id
        turns.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.current_mode == "sources"
        assert app.screen.current_item().id == item_id

        # two episodes merged, then split again, each after its dry run
        await pilot.press("5")
        await settle(pilot)
        before = app.store_stats.totals()["episodes"]
        await pilot.press("m")
        assert isinstance(app.screen, PromptDialog)
        await pilot.press("enter")  # the next episode of the same source is suggested
        await settle(pilot)
        assert "1 episode merged" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats.totals()["episodes"] == before - 1
        assert screen.current_episode().merged_from
        await pilot.press("s")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats.totals()["episodes"] == before


@pytest.mark.slow
async def test_curate_facts_and_entities_after_the_dry_run(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        entities = screen.query_one("#entities-table", DataTable)
        facts = screen.query_one("#facts-table", DataTable)
        assert entities.row_count > 10

        # after deleting a fact, the cursor stays in its row, now on the next fact
        facts.focus()
        await pilot.press("down", "down")
        following = screen.facts[3].id
        await pilot.press("d")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert facts.cursor_row == 2 and screen.selected_fact().id == following

        # a refused edit says why in its dialog, which stays open until cancelled
        facts.focus()
        await pilot.press("e")
        assert isinstance(app.screen, FormDialog)
        app.screen.query_one("#form-subject").value = "Nobody Anybody Knows"
        await pilot.click("#form-ok")
        await settle(pilot)
        assert "Refused: " in text_of(app.screen.query_one("#form-reason"))
        await pilot.press("escape")
        assert app.screen is screen

        # a fact added by hand, after the dry run
        before = app.store_stats.totals()["facts"]
        facts.focus()
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
        assert app.store_stats.totals()["facts"] == before + 1
        assert any(f.predicate == "teaches" and f.origin == "user" for f in screen.facts)

        # an entity found by the filter; one of its facts deleted after the dry run
        screen.query_one("#entity-filter").value = "maya"
        await settle(pilot)
        assert entities.get_row_at(0)[0] == "Maya"
        assert facts.row_count > 5
        assert "[ Maya ]" in text_of(screen.query_one("#graph-body"))
        before = app.store_stats.totals()["facts"]
        facts.focus()
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "1 fact deleted" in text_of(app.screen.query_one("#dialog-text"))
        assert app.store_stats.totals()["facts"] == before, "a dry run writes nothing"
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats.totals()["facts"] == before - 1

        # the entity renamed
        name = screen.entity.name
        await pilot.press("r")
        assert isinstance(app.screen, PromptDialog)
        app.screen.query_one("#prompt-input").value = name + " Renamed"
        await pilot.press("enter")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert any(e.name == name + " Renamed" for e in screen.entities)

        # with no entity matching the filter, each key says why it does nothing
        screen.query_one("#entity-filter").value = ""
        await pilot.press("ctrl+f", *"zzqxv")
        await settle(pilot)
        assert "No entity matches “zzqxv”" in text_of(screen.query_one("#graph-body"))
        await pilot.press("enter")
        for key in "adrm":
            app.notices.clear()
            await pilot.press(key)
            await settle(pilot)
            assert app.notices, f"{key} did nothing and said nothing"

        # Esc leaves the filter box, so that number keys switch screens again
        screen.query_one("#entity-filter").focus()
        await pilot.press("escape", "6")
        await settle(pilot)
        assert app.current_mode == "query"
        await app.switch_mode("facts")
        assert "6" not in screen.query_one("#entity-filter").value


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


async def test_an_entitys_facts_are_read_and_shown_a_page_at_a_time_with_their_count(demo_app, monkeypatch):
    # pages made small (3), so the demo's most mentioned entity names more facts than a page: a
    # 1M store's names tens of thousands, and reading them all froze the screen's first paint
    monkeypatch.setattr("mnemoscope.screens.facts.FACT_ROWS", 3)
    app = demo_app(start_mode="facts")
    reads: list[str] = []
    for name in ("facts", "facts_page"):
        read = getattr(KnowledgeReading, name)
        monkeypatch.setattr(KnowledgeReading, name, lambda area, *args, read=read, name=name, **kwargs:
                            reads.append(name) or read(area, *args, **kwargs))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert reads == ["facts_page"]  # a page, not every fact
        screen = app.screen
        every = app.services.memory.knowledge.facts(screen.entity.id)
        table = screen.query_one("#facts-table", DataTable)
        assert len(every) > 7 and table.row_count == 3
        assert [row.key.value for row in table.ordered_rows] == [str(f.id) for f in every[:3]]
        assert table.border_title == f"{screen.entity.name}: facts 1–3 of {len(every)}"
        assert f"{len(every) - 3:,} more on the others" in text_of(screen.query_one("#graph-body"))
        table.focus()

        async def press(*keys: str) -> int:
            """The keys pressed and their page shown: where the selected fact stands among them all."""
            await pilot.press(*keys)
            await settle(pilot)
            assert [f.id for f in screen.facts] == [f.id for f in every[screen.facts_start:screen.facts_start + 3]]
            return [f.id for f in every].index(screen.selected_fact().id)

        assert await press("down", "down", "down") == 3 and screen.facts_start == 3  # past the page's last row
        assert table.border_title == f"{screen.entity.name}: facts 4–6 of {len(every)}"
        assert await press("up") == 2 and screen.facts_start == 0  # the page before, on its last row
        assert await press("end") == len(every) - 1
        assert await press("home") == 0
        assert await press("up") == 0  # nothing before the first: it stays
        assert set(reads) == {"facts", "facts_page"} and reads.count("facts") == 1  # only the test read them all


async def test_the_entity_highlighted_anew_keeps_the_page_on_its_way_or_shown(demo_app, monkeypatch):
    # filling the entities' table highlights the entity's row anew (its first row added, the
    # cursor put back on it): its page is the one already on its way, not read a second time at
    # the first paint, and after a change in the store the page shown is read again, not the first
    monkeypatch.setattr("mnemoscope.screens.facts.FACT_ROWS", 3)
    app = demo_app(start_mode="facts")
    first_read_held = threading.Event()
    reads: list[int] = []
    read = KnowledgeReading.facts_page

    def page(area, entity_id, offset, limit):
        reads.append(offset)
        if len(reads) == 1:  # the first page is on its way while the table's row is highlighted
            first_read_held.wait(60)
        return read(area, entity_id, offset, limit)

    monkeypatch.setattr(KnowledgeReading, "facts_page", page)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: reads, "the first page being read")
        await pilot.pause()
        first_read_held.set()
        await settle(pilot)
        assert reads == [0]
        screen = app.screen
        table = screen.query_one("#facts-table", DataTable)
        table.focus()
        await pilot.press("down", "down", "down")
        await settle(pilot)
        shown = [f.id for f in screen.facts]
        assert screen.facts_start == 3 and len(shown) == 3
        reads.clear()
        app.store_changed()
        await settle(pilot)
        assert reads == [3] and screen.facts_start == 3 and [f.id for f in screen.facts] == shown
        assert table.border_title == f"{screen.entity.name}: facts 4–6 of {screen.facts_total}"


async def test_the_entity_filter_asks_the_store_once_typing_pauses_or_at_enter(demo_app, monkeypatch):
    # each ask reads a page of entities (a text that names none reads them all): a burst of keys asks once
    from mnemoscope.screens import facts

    monkeypatch.setattr(facts, "FILTER_PAUSE", 60.0)  # longer than the keys of any test take
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        knowledge = app.services.memory.knowledge
        asked: list[str] = []
        read = type(knowledge).entities
        monkeypatch.setattr(type(knowledge), "entities", lambda area, *args, **kwargs:
                            asked.append(kwargs["containing"]) or read(area, *args, **kwargs))
        box = screen.query_one("#entity-filter")
        box.focus()
        await pilot.press("m", "a", "y")
        assert asked == [] and screen.filter_pending
        await pilot.press("enter")  # Enter asks at once, for the filter as typed
        await settle(pilot)
        assert asked == ["may"] and not screen.filter_pending
        assert screen.entities and all("may" in e.name.lower() or "may" in e.key for e in screen.entities)
        assert "Maya" in [e.name for e in screen.entities]

        monkeypatch.setattr(facts, "FILTER_PAUSE", 0.05)  # and typing that pauses asks by itself
        box.value = "ma"
        await settle(pilot)
        assert asked == ["may", "ma"] and len(screen.entities) > 1


async def test_typing_in_the_entity_filter_reads_a_page_of_entities_and_no_facts(demo_app, monkeypatch):
    # the store keeps each entity's counts: a key typed reads the first page of those it names
    monkeypatch.setattr("mnemoscope.screens.facts.ENTITY_ROWS", 4)
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        knowledge = app.services.memory.knowledge
        every = knowledge.entities()
        shown = screen.entity
        reads: list[tuple[str, dict]] = []
        for name in ("entities", "facts_page"):
            read = getattr(type(knowledge), name)
            monkeypatch.setattr(type(knowledge), name, lambda area, *args, read=read, name=name, **kwargs:
                                reads.append((name, kwargs)) or read(area, *args, **kwargs))
        screen.query_one("#entity-filter").focus()
        await pilot.press("m", "a")
        await settle(pilot)
        expected = [e.id for e in every if "ma" in e.name.lower() or "ma" in e.key]
        assert len(expected) > 4 and shown.id in expected[:4]
        assert [e.id for e in screen.entities] == expected[:4]
        assert reads and all(name == "entities" and kwargs["limit"] == 4 for name, kwargs in reads)
        assert reads[-1][1]["containing"] == "ma"  # nor the facts of the entity still highlighted
        assert screen.entity.id == shown.id and screen.facts
        reads.clear()
        app.store_changed()  # a change in the store reads them again, still filtered
        await settle(pilot)
        assert {"entities", "facts_page"} <= {name for name, _ in reads} and [e.id for e in screen.entities] == expected[:4]

        # the tables emptied (the inbox opened and closed, a new width) are filled again
        facts = screen.query_one("#facts-table", DataTable)
        screen.action_inbox()
        await settle(pilot)
        screen.action_inbox()
        await settle(pilot)
        assert facts.row_count == len(screen.facts) > 0
        await pilot.resize_terminal(SIZE[0] + 20, SIZE[1])
        await asyncio.sleep(3 * screen.REFIT_DELAY)
        await settle(pilot)
        assert facts.row_count == len(screen.facts) > 0


async def test_back_on_the_entity_shown_while_another_ones_facts_are_read(demo_app, monkeypatch):
    # its facts are on screen, but the other entity's must not arrive under its row
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        first, second = screen.entities[:2]
        knowledge = app.services.memory.knowledge
        release = threading.Event()
        read = type(knowledge).facts_page

        def held(area, entity_id, *args, **kwargs):
            if entity_id == second.id:
                release.wait(60)
            return read(area, entity_id, *args, **kwargs)

        monkeypatch.setattr(type(knowledge), "facts_page", held)
        screen.query_one("#entities-table", DataTable).focus()
        await pilot.press("down")
        await until(pilot, lambda: "facts" in app.tasks, "the second entity's facts being read")
        await pilot.press("up")
        release.set()
        await settle(pilot)
        assert screen.entity.id == first.id
        assert [f.id for f in screen.facts] == [f.id for f in knowledge.facts(first.id)]


async def test_an_entitys_counts_of_a_big_store_show_whole(demo_app, monkeypatch):
    # at 1M a speaker is mentioned in 146,520 items and names 5,723 facts: the columns hold them
    from dataclasses import replace

    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        knowledge = app.services.memory.knowledge
        read = type(knowledge).entities
        monkeypatch.setattr(type(knowledge), "entities", lambda area, *args, **kwargs:
                            [replace(e, items=146_520, facts=5_723) for e in read(area, *args, **kwargs)])
        app.store_changed()
        await settle(pilot)
        assert app.screen.entities and "146,520  5,723" in "\n".join(screen_lines(app))


async def test_an_entity_name_longer_than_its_column_ends_with_an_ellipsis(demo_app):
    """'Queries, Keys and Values' at 120 columns: cut, it says so, as the other tables' cells do."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#entities-table", DataTable)
        width = table.ordered_columns[0].width
        shown = "\n".join(screen_lines(app))
        long = [e.name for e in app.screen.entities[:20] if len(e.name) > width]
        assert long
        for name in long:
            assert name[: width - 1] + "…" in shown, name


async def test_a_refused_fact_keeps_its_dialog_open_with_the_text_and_the_reason(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        before = app.store_stats.totals()["facts"]
        screen.query_one("#facts-table", DataTable).focus()
        await pilot.press("a")
        form = app.screen
        assert isinstance(form, FormDialog)
        typed = {"predicate": "", "object": "a sourdough class", "items": "1, two"}
        for key, value in typed.items():
            form.query_one(f"#form-{key}").value = value

        # the items are not ids: the dialog stays, with what was typed and why
        await pilot.click("#form-ok")
        await settle(pilot)
        assert app.screen is form
        assert "item ids" in text_of(form.query_one("#form-reason"))
        assert {key: form.query_one(f"#form-{key}").value for key in typed} == typed

        # the engine refuses it (no predicate): the same, with the engine's reason, the store unchanged
        # (Enter in a field submits too: OK ignores a click while it still shows the last one's press)
        form.query_one("#form-items").value = "1"
        form.query_one("#form-items").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is form
        assert "needs a subject, a predicate and an object" in text_of(form.query_one("#form-reason"))
        assert form.query_one("#form-object").value == "a sourdough class"
        assert app.store_stats.totals()["facts"] == before

        # mended, it goes on to the dry run's report, and the dialog closes
        form.query_one("#form-predicate").value = "teaches"
        form.query_one("#form-predicate").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "1 fact added" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.click("#choice-cancel")
        await settle(pilot)
        assert app.screen is screen


@pytest.mark.parametrize("refused", [False, True])
async def test_leaving_the_fact_form_while_its_dry_run_runs_drops_the_outcome(demo_app, monkeypatch, refused):
    """Esc on the form while the dry run waits (for the write lock, behind another process): when
    it ends, nothing is asked and no other screen is closed; a refusal is a notification."""
    from mnemoscope.engine.errors import MnemoscopeError

    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        knowledge, release = app.services.mem.knowledge, threading.Event()
        add_fact = knowledge.add_fact

        def held(*args, **kwargs):
            release.wait(30)
            if refused:
                raise MnemoscopeError("the store is busy")
            return add_fact(*args, **kwargs)

        monkeypatch.setattr(knowledge, "add_fact", held)
        screen.query_one("#facts-table", DataTable).focus()
        await pilot.press("a")
        form = app.screen
        assert isinstance(form, FormDialog)
        form.query_one("#form-predicate").value = "teaches"
        form.query_one("#form-object").value = "a sourdough class"
        await pilot.click("#form-ok")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        release.set()
        await settle(pilot)
        assert app.is_running and app.screen is screen and len(app.screen_stack) == 1
        assert bool(app.titled("Add fact: refused")) == refused


async def test_an_episodes_panel_says_who_and_when_once(demo_app):
    """The line over the summary says when and who; the engine's summary of a conversation opens
    with the same ("Maya (2023-04-03): …"): the panel shows it from what happened."""
    app = demo_app(start_mode="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#episodes-table", DataTable)
        heads = {n: re.match(r"(.+?) \((\d{4}-\d\d-\d\d)\): ", e.summary) for n, e in enumerate(screen.episodes)}
        rows = [n for n, head in heads.items() if head][:3]
        assert rows
        for row in rows:
            table.move_cursor(row=row)
            await settle(pilot)
            who, day = heads[row].groups()
            lines = text_of(screen.query_one("#episode-body")).splitlines()
            assert lines[1].startswith(day) and all(name in lines[1] for name in who.split(" and ")), lines[:4]
            summary = lines[3]
            assert summary and not summary.startswith(who) and day not in summary, summary
            assert summary in screen.current_episode().summary


async def test_a_prompt_longer_than_its_dialog_wraps_at_80x24(demo_app):
    """The Memories screen's merge asks "Merge which episode into episode N? (its id; the next one
    of the same source is suggested)": the prompt was cut at the dialog's edge ("… the next one of
    th"), its Label one line wide."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await app.switch_mode("memories")
        await settle(pilot)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog), "the merge dialog")
        await pilot.pause()
        shown = " ".join(" ".join(line.split()) for line in screen_lines(app))
        assert "is suggested)" in shown, screen_lines(app)
