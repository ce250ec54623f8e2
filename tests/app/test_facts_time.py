"""The Facts screen in time: validity, the facts as of a date, a fact's history, and the inbox."""

from __future__ import annotations

from textual.widgets import DataTable

from mnemoscope.app.widgets import ChoiceDialog
from tests.app.mnemo_testing import SIZE, screen_lines, settle, text_of


async def facts_of(pilot, entity: str) -> DataTable:
    """The Facts screen's table once the entity filter holds ``entity`` and the facts are in."""
    await settle(pilot)
    pilot.app.screen.query_one("#entity-filter").value = entity
    await settle(pilot)
    return pilot.app.screen.query_one("#facts-table", DataTable)


async def inbox_of(pilot) -> DataTable:
    """The Facts screen's inbox once its conflicts are in."""
    await settle(pilot)
    await pilot.press("i")
    await settle(pilot)
    return pilot.app.screen.query_one("#conflicts-table", DataTable)


async def test_facts_in_time_and_the_conflict_inbox(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        facts = await facts_of(pilot, "daniel")
        screen = app.screen
        rows = {facts.get_row_at(n)[2].plain: facts.get_row_at(n)[3].plain for n in range(facts.row_count)}
        assert rows["Cartwheel"] == "until 2023-07-10" and rows["Lumen Labs"] == "since 2023-07-10"  # the new job
        facts.focus()
        facts.move_cursor(row=[facts.get_row_at(n)[2].plain for n in range(facts.row_count)].index("Cartwheel"))
        await pilot.press("h")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        history = text_of(app.screen.query_one("#dialog-text"))
        assert "Daniel —started at→ Lumen Labs" in history and "superseded, replaced by" in history
        await pilot.press("escape")
        await pilot.press("t")
        await pilot.press(*"2023-05-01", "enter")
        await settle(pilot)
        then = [facts.get_row_at(n)[2].plain for n in range(facts.row_count)]
        assert "Cartwheel" in then and "Lumen Labs" not in then and "as of 2023-05-01" in facts.border_title

        await pilot.press("i")  # the inbox: a clash and near-duplicate entities, each with its evidence
        await settle(pilot)
        conflicts = screen.query_one("#conflicts-table", DataTable)
        kinds = [conflicts.get_row_at(n)[0] for n in range(conflicts.row_count)]
        assert kinds.count("clash") >= 1 and kinds.count("duplicate") >= 2
        await pilot.resize_terminal(120, 40)  # the wide layout: the list is a narrow pane beside the detail
        await settle(pilot)
        lines = screen_lines(app)
        assert any("backyard" in line[:48] for line in lines), "\n".join(lines)  # a long clash wraps, never cut
        assert "i Back to facts" in lines[-1] and "Inbox" not in lines[-1], lines[-1]  # the key bar: what i does here
        # the key bar names each choice in the words of the selected conflict's kind, and offers only those that apply
        bars = {}
        for kind in ("clash", "duplicate"):
            conflicts.move_cursor(row=kinds.index(kind))
            await settle(pilot)
            bars[kind] = screen_lines(app)[-1]
        assert "a Accept" in bars["clash"] and "b Keep both" in bars["clash"] and "r Retire" in bars["clash"], bars
        assert "a Merge" in bars["duplicate"] and "b Keep apart" in bars["duplicate"], bars
        assert not any(word in bars["duplicate"] for word in ("Accept", "Keep both", "Retire")), bars
        assert "a merge · b keep apart" in text_of(screen.query_one("#conflict-body")).replace("  ·  ", " · ")
        await pilot.press("r")  # not offered for a duplicate: nothing decided
        await settle(pilot)
        assert conflicts.row_count == len(kinds) and not app.titled("Inbox")
        conflicts.move_cursor(row=0)
        await pilot.resize_terminal(*SIZE)
        await settle(pilot)
        screen.show_entities(screen.entities)  # loads that end after the inbox opened change nothing
        screen.show_facts(screen.entity, screen.facts)
        assert conflicts.display and facts.row_count == 0
        assert "D1:6" in text_of(screen.query_one("#conflict-body"))  # the turn behind the old address
        await pilot.press("a")
        await settle(pilot)
        assert conflicts.row_count == len(kinds) - 1
        await pilot.press("u")
        await settle(pilot)
        assert conflicts.row_count == len(kinds)
        await pilot.press("i")
        await settle(pilot)
        assert screen.query_one("#entities-table").display and not conflicts.display
        assert facts.row_count and facts.get_row_at(0)[3].plain  # the facts and their columns are back


async def test_stepping_from_a_month_goes_past_it_not_into_it(demo_app):
    """As of "2023-05" is all of May, as recall reads it: `]` went to 2023-05-06 and showed fewer
    facts than the month had (18 of Maya's against 43), stepping back in time."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.entity is not None and screen.entity.name == "Maya"
        screen.query_one("#facts-table").focus()
        await pilot.press("t", *"2023-05", "enter")
        await settle(pilot)
        in_may = screen.facts_total
        assert screen.as_of == "2023-05" and in_may
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.as_of > "2023-05-31" and screen.facts_total >= in_may, (screen.as_of, screen.facts_total)
        await pilot.press("t", *"2023-05", "enter")
        await settle(pilot)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert screen.as_of < "2023-05" and screen.facts_total <= in_may, (screen.as_of, screen.facts_total)


async def test_the_drawing_never_folds_a_line_under_its_tree(demo_app):
    """Maya as of 2023-05, 120 columns: "├─ Pepper's favourite toy: is ─▶ squeaky hedgehog she
    carries everywhere" was longer than the pane and went on at its left edge."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#facts-table").focus()
        await pilot.press("t", *"2023-05", "enter")
        await settle(pilot)
        graph = screen.query_one("#graph-body")
        drawn = text_of(graph).split("\n")  # (its last line empty: the drawing ends with a newline)
        assert any("squeaky hedgehog" in line for line in drawn), drawn
        assert graph.size.height == len(drawn), (graph.size, drawn)
        lines = screen_lines(app)
        assert any(line.rstrip().endswith("…") and "squeaky hedgehog" in line for line in lines), "\n".join(lines)


async def test_a_decision_is_told_in_the_words_of_its_key(demo_app):
    """Two entities that may be one: `a` is "Merge" in the key bar, and the notice said
    "accept conflict 2"; `b` "Keep apart", and it said "both"."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        conflicts = await inbox_of(pilot)
        screen = app.screen
        kinds = [conflicts.get_row_at(n)[0] for n in range(conflicts.row_count)]
        for key, words in (("a", "Merged: "), ("b", "Kept apart: ")):
            conflicts.move_cursor(row=kinds.index("duplicate"))
            await settle(pilot)
            summary = screen.selected_conflict().summary()
            await pilot.press(key)
            await settle(pilot)
            told = app.titled("Inbox")[-1].message
            assert told.startswith(words + summary) and "u undoes it" in told, told
            assert "accept" not in told and "both" not in told, told
            decision = int(told.rsplit("#", 1)[1].split(",")[0])
            await pilot.press("u")
            await settle(pilot)
            undone = app.titled("Inbox")[-1].message
            assert undone.startswith(f"Undone: decision #{decision} (logged as #") and "u undoes" not in undone, undone
            assert undone.endswith(f": {summary} is open again"), undone  # which conflict, not only its number
            assert conflicts.row_count == len(kinds)


async def test_an_evidence_turns_second_line_sits_under_its_first(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        lines = [line[49:] for line in screen_lines(app)]  # the panel, right of the list
        first = next(n for n, line in enumerate(lines) if line.lstrip().startswith("D1:6 [2023-04-03]"))
        assert lines[first + 1].startswith(" " * 7) and lines[first + 1].strip(), "\n".join(lines[first - 2:first + 3])


async def test_the_history_of_a_fact_in_an_open_clash_says_the_clash_waits(demo_app):
    """Review (requests 07:46 #1): `h` on "Maya lives in Sellwood" said "holds since 2023-04-03;
    current" while the inbox's conflict #1 (Sellwood against the little house) was open: a person
    read it as settled. The history names the open conflict and how to decide it."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        facts = await facts_of(pilot, "maya")
        objects = [facts.get_row_at(n)[2].plain for n in range(facts.row_count)]
        facts.focus()
        facts.move_cursor(row=objects.index("Sellwood"))
        await pilot.press("h")
        await settle(pilot)
        history = text_of(app.screen.query_one("#dialog-text"))
        assert "Maya —lives in→ Sellwood" in history and "in open conflict #1 of the inbox" in history, history


async def test_a_fact_an_open_conflict_holds_is_marked_in_the_table(demo_app):
    """The table showed "Maya lives in Sellwood  since 2023-04-03" like any settled fact while the
    inbox's clash with the little house was open (review, requests 07:46 #1): its *holds* is yellow."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        facts = await facts_of(pilot, "maya")
        rows = {facts.get_row_at(n)[2].plain: facts.get_row_at(n)[3] for n in range(facts.row_count)}
        assert "yellow" in str(rows["Sellwood"].style) and "yellow" in str(rows["little house with a big backyard"].style)
        assert sum("yellow" in str(cell.style) for cell in rows.values()) == 2
        assert rows["Sellwood"].plain == "since 2023-04-03 ?"  # a mark too, for a reader without colour (review 09:24)


async def test_a_decision_keeps_the_inbox_on_screen_and_the_cursor_on_the_next_conflict(demo_app):
    """The inbox emptied its table and filled it again after each decision: the rows (wrapped, so
    measured once the app next went idle) were blank meanwhile (session 22, 412 conflicts), and
    the cursor kept its row, not its conflict (one coming back above it took its place)."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        conflicts = await inbox_of(pilot)
        screen = app.screen
        before = [c.summary() for c in screen.conflicts]
        assert len(before) >= 3, before
        seen_at_once: list[list[str]] = []  # the screen the moment each reload is shown, before the app idles
        shown = screen.show_conflicts

        def show_and_look(found) -> None:
            shown(found)
            seen_at_once.append(screen_lines(app))

        screen.show_conflicts = show_and_look
        conflicts.move_cursor(row=1)
        await settle(pilot)
        await pilot.press("b")  # keep both, or keep apart: offered for a clash and for a duplicate
        await settle(pilot)
        assert [c.summary() for c in screen.conflicts] == before[:1] + before[2:]
        assert screen.selected_conflict().summary() == before[2]  # the one after it
        assert conflicts.border_title == f"Inbox: 2 of {len(before) - 1} open conflicts"  # where, of how many
        await pilot.press("u")  # the conflict comes back between the others; the cursor stays
        await settle(pilot)
        assert [c.summary() for c in screen.conflicts] == before
        assert screen.selected_conflict().summary() == before[2]
        assert len(seen_at_once) >= 2, "the inbox was not reloaded after each"
        for lines in seen_at_once:
            assert any(before[0][:30] in line for line in lines), "\n".join(lines)
            assert any(before[2][:30] in line for line in lines), "\n".join(lines)
        assert any(before[1][:30] in line for line in seen_at_once[-1]), "\n".join(seen_at_once[-1])


async def test_the_entity_counts_follow_the_as_of_date(demo_app):
    """As of 1999 the facts table said "Maya: 0 fact(s) as of 1999" beside "Maya … 95" in the
    entity list (review, session 20, F6): the list's counts are of now whatever the date."""
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        facts = await facts_of(pilot, "maya")
        screen = app.screen
        entities = screen.query_one("#entities-table", DataTable)
        now = {e.name: (e.items, e.facts) for e in screen.entities}
        assert now["Maya"][1] == screen.facts_total > 0
        facts.focus()
        then = {}
        for when in ("2023-05", "1999"):
            await pilot.press("t", *when, "enter")
            await settle(pilot)
            maya = next(e for e in screen.entities if e.name == "Maya")
            row = entities.get_row(str(maya.id))
            assert (row[2], row[3]) == (f"{maya.items:,}", f"{maya.facts:,}"), row
            assert maya.facts == screen.facts_total, (when, maya, screen.facts_total)  # the list and the table agree
            assert f"as of {when}" in str(entities.columns["name"].label)
            then[when] = (maya.items, maya.facts)
        assert then["1999"] == (0, 0)
        assert 0 < then["2023-05"][0] < now["Maya"][0] and 0 < then["2023-05"][1] < now["Maya"][1], then
        await pilot.press("t", "backspace", "enter")  # empty: now again
        await settle(pilot)
        assert {e.name: (e.items, e.facts) for e in screen.entities} == now
        assert str(entities.columns["name"].label) == "entity"
