"""The key bar tells the truth: the keys that act now, in the order the screen's panels name them,
the most useful ones first where not all fit, and a dialog's own keys while a dialog is open."""

from __future__ import annotations

import re

from mnemoscope.app.widgets import ChoiceDialog, HelpScreen, NoteDialog
from mnemoscope.screens.facts import DECISION_KEYS
from tests.app.mnemo_testing import ask, screen_lines, settle, text_of, until

NARROW = (80, 24)


def bar(app) -> str:
    return screen_lines(app)[-1]


async def show_facts(pilot) -> None:
    await settle(pilot)
    await pilot.app.switch_mode("facts")
    await settle(pilot)


async def test_the_facts_bar_at_80_columns_shows_the_inbox_key(demo_app):
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await show_facts(pilot)
        line = bar(app)
        assert "i Inbox" in line and "t As of" in line and "h History" in line, line
        assert line.rstrip().endswith("? more ▏^p"), line  # what does not fit is in the help


async def test_the_inbox_bar_lists_the_choices_in_the_panels_order(demo_app):
    app = demo_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await show_facts(pilot)
        await pilot.press("i")
        await settle(pilot)
        screen = app.screen
        kinds = set()
        for row in range(len(screen.conflicts)):
            screen.query_one("#conflicts-table").move_cursor(row=row)
            await settle(pilot)
            conflict = screen.selected_conflict()
            kinds.add(conflict.kind)
            panel = text_of(screen.query_one("#conflict-body")).splitlines()[-1]
            in_panel = re.findall(r"(?:^|  ·  )(\w) ", panel)
            line = bar(app)
            in_bar = [key for key in re.findall(r"(?:^| )(\w) [A-Z]", line) if key in in_panel]
            assert in_panel and in_bar == in_panel, (conflict.kind, line, panel)
            labels = [k.label for k in DECISION_KEYS[conflict.kind] if k.show]
            assert " ".join(labels[:2]) in re.sub(r"\b\w (?=[A-Z])", "", line), line  # "a Accept b Keep both …"
        assert {"clash", "duplicate"} <= kinds


async def test_a_dialog_shows_its_own_keys_in_the_bar_not_the_screens(demo_app, tmp_path, monkeypatch):
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await show_facts(pilot)
        assert "^f Filter" in bar(app)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        line = bar(app)
        assert "esc Close" in line and "Filter" not in line and "Inbox" not in line, line
        await pilot.press("escape")
        await settle(pilot)
        assert "^f Filter" in bar(app)
        app.push_screen(ChoiceDialog("Delete fact", "Delete it?", [("cancel", "Cancel"), ("apply", "Delete")]))
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog), "the confirmation")
        line = bar(app)
        assert "esc Close" in line and "Filter" not in line, line
        await pilot.press("escape")
        await settle(pilot)
        app.push_screen(NoteDialog())
        await until(pilot, lambda: isinstance(app.screen, NoteDialog), "the note box")
        await pilot.pause()
        line = bar(app)
        assert "esc Cancel" in line and "^s Save note" in line and "Filter" not in line, line


async def test_the_help_says_it_scrolls_when_it_does(demo_app):
    app = demo_app()
    async with app.run_test(size=NARROW) as pilot:
        await show_facts(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.pause()
        lines = screen_lines(app)
        assert any("PgUp PgDn scroll" in line for line in lines), "\n".join(lines)
        assert "↑↓ Scroll" in lines[-1], lines[-1]
        body = app.screen.query_one("#dialog-body")
        await pilot.press("tab")  # the Close button: the arrows scroll all the same
        await pilot.press("pagedown")
        await until(pilot, lambda: body.scroll_y > 0, "the help to scroll")
        await pilot.press("escape")
        await pilot.resize_terminal(160, 100)  # room for it all: nothing to say
        await settle(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.pause()
        lines = screen_lines(app)
        assert not any("PgDn scroll" in line for line in lines) and "Scroll" not in lines[-1], lines[-1]


async def test_the_traces_keys_are_in_the_bar_while_its_tab_is_shown(demo_app):
    app = demo_app(start_mode="query")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await ask(pilot, "when did Maya adopt Pepper")
        assert "Play/pause" not in bar(app)
        await pilot.press("t")
        await settle(pilot)
        line = bar(app)
        assert "space Play/pause" in line and ". Step" in line and "r Replay" in line, line
        await pilot.press("w")
        await settle(pilot)
        assert "Play/pause" not in bar(app) and "u Used" in bar(app)
        await pilot.press("r")  # from another tab the key still shows the trace and replays it
        await settle(pilot)
        assert app.screen.query_one("#query-detail").active == "trace"
