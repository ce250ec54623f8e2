"""The app as a whole: start-up, header, keys, help, palette, stores that cannot be opened, the demo."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from textual import events
from textual.command import CommandList, CommandPalette

from mnemoscope.app.services import Services
from mnemoscope.app.widgets import ChoiceDialog, HelpScreen, PromptDialog
from mnemoscope.app.widgets.dialogs import GLOBAL_KEYS
from mnemoscope.engine import Memory
from mnemoscope.screens.compare import CompareScreen
from mnemoscope.screens.query import QueryScreen
from tests.app.mnemo_testing import SIZE, ask, build_app, empty_store, screen_lines, settle, text_of, until


async def test_start_header_digits_palette_keys_help_and_a_store_that_cannot_be_opened(demo_app, tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # opens on Query with the store's counts in the header
        assert isinstance(app.screen, QueryScreen)
        assert app.store_stats.items > 300
        header = text_of(app.screen.query_one("#store-header"))
        assert "demo.db" in header and "5 sources" in header  # the conversation and four guides
        assert app.ready_seconds is not None

        # digits typed into the box the app opens in are text, even a burst of keys that reaches
        # the app before the box has taken its first; the key bar says how to leave the box
        box = app.screen.query_one("#query-input")
        assert app.focused is box and box.value == ""

        def burst(*keys: str) -> None:
            """The keys queued at once, as a fast typist's (a character, or a key's name)."""
            for key in keys:
                app.post_message(events.Key(key, " " if key == "space" else key if len(key) == 1 else None))

        burst("d", "o", "g", "space", "2")
        await settle(pilot)
        assert app.current_mode == "query" and box.value == "dog 2"
        # the box's own keys act in turn too, not once the characters after them are in
        burst("ctrl+u", "c", "a", "x", "backspace", "t")
        await settle(pilot)
        assert box.value == "cat"
        burst("enter", "s")  # the query is the text at Enter
        await settle(pilot)
        assert app.screen.recall.query == "cat"
        box.value = ""
        box.focus()
        await pilot.press("3")
        assert app.current_mode == "query" and box.value == "3"  # an empty box too: a question may begin with one
        box.value = ""
        assert "esc Leave the box" in screen_lines(app)[-1]
        burst("a", "b", "c", "escape", "2")  # Esc leaves the box in turn: the 2 after it switches screens
        await settle(pilot)
        assert app.current_mode == "sources" and box.value == "abc"
        assert "Leave the box" not in screen_lines(app)[-1]  # no box has focus: Esc cancels a task
        # the tabs: the bar under their names marks the screen shown; a click on a name shows its screen
        names, bar = screen_lines(app)[1:3]
        shown = names.index("2 Sources")
        assert bar[shown - 1] == "╸" and bar[shown + len("2 Sources")] == "╺"
        assert bar.count("╸") == bar.count("╺") == 1
        await pilot.click("#nav-tabs", offset=(names.index("6 Query") + 2, 0))
        await settle(pilot)
        assert app.current_mode == "query"
        await pilot.press("f1", "3")  # over a dialog, the digit is the dialog's
        assert isinstance(app.screen, HelpScreen) and app.current_mode == "query"
        await pilot.press("escape")
        box.value = ""
        # a click on a key in the bar at the bottom presses it
        await pilot.click("KeyBar", offset=(screen_lines(app)[-1].index("Help"), 0))
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")

        # the palette offers every action, and one screenshot command
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Ingest files or folders", "Paste a note", "Open store", "Export store", "Rebuild the index",
                       "Load demo content", "Go to Query", "Theme"):
            assert any(t.startswith(wanted) for t in titles), wanted
        assert sum("creenshot" in t for t in titles) == 1, titles

        # the help lists every global key
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert app.BINDINGS
        for binding in app.BINDINGS:
            for key in binding.key.split(","):
                shown = {"slash": "/", "question_mark": "?", "escape": "Esc"}.get(key, key)
                if key.startswith("ctrl+"):
                    shown = "Ctrl+" + key[5:].upper()
                elif key.startswith("f") and key[1:].isdigit():
                    shown = key.upper()
                assert shown in GLOBAL_KEYS or key in "12345678", f"{key} is not in the help"
        shots = tmp_path / "shots"
        shots.mkdir()
        monkeypatch.chdir(shots)
        await pilot.press("f12")  # the help says F12 saves a screenshot: over a dialog too
        assert isinstance(app.screen, HelpScreen) and app.titled("Screenshot")
        assert [p.suffix for p in shots.iterdir()] == [".svg"]
        assert [stat.S_IMODE(p.stat().st_mode) for p in shots.iterdir()] == [0o600]  # it shows the memory's texts
        gone = tmp_path / "gone"
        gone.mkdir()
        monkeypatch.chdir(gone)
        os.rmdir(gone)
        await pilot.press("f12")  # a current folder deleted under the app: said, not a traceback
        assert app.is_running and [n.severity for n in app.titled("Screenshot")] == ["information", "error"]
        monkeypatch.chdir(shots)
        await pilot.press("escape")

        # the palette jumps to a source by name
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"Source: sourdough")
        palette = app.screen
        await until(pilot, lambda: palette.query_one(CommandList).option_count > 0, "the palette's search")
        await pilot.press("enter")
        await settle(pilot)
        assert app.current_mode == "sources"
        assert "sourdough" in app.screen.current_source().name

        # number keys switch screens; ? opens the help over any screen
        await pilot.press("6")
        await settle(pilot)
        app.screen.query_one("#hits").focus()
        await pilot.press("2")
        await settle(pilot)
        assert app.current_mode == "sources"
        await pilot.press("1")
        await settle(pilot)
        assert app.current_mode == "ingest"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.current_mode == "ingest" and not isinstance(app.screen, HelpScreen)

        # a new theme restyles the screen shown, a screen hidden meanwhile and one not shown before
        dark, dark_header = app.screen.styles.background, app.screen.query_one("#store-header").styles.background
        app.theme = "textual-light"
        await settle(pilot)
        light, light_header = app.screen.styles.background, app.screen.query_one("#store-header").styles.background
        assert light != dark and light_header != dark_header
        for mode in ("sources", "facts"):
            await app.switch_mode(mode)
            await settle(pilot)
            assert app.screen.styles.background == light, mode
            assert app.screen.query_one("#store-header").styles.background == light_header, mode  # its widgets too
        await app.switch_mode("ingest")

        # a store that cannot be opened: the open one is offered to keep
        before = app.services.mem
        app.action_open_store()
        await settle(pilot)
        assert isinstance(app.screen, PromptDialog)
        app.screen.query_one("#prompt-input").value = str(tmp_path)  # a folder, not a store
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "demo.db is still open" in text_of(app.screen.query_one("#dialog-text"))
        assert app.screen.query_one("#choice-keep").has_focus
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ChoiceDialog)
        assert app.services.mem is before and app.store_label == "demo.db"


def offered(palette) -> list[str]:
    """The first line of each option the command palette lists."""
    options = palette.query_one(CommandList)
    return [str(options.get_option_at_index(n).prompt).split("\n")[0] for n in range(options.option_count)]


async def test_the_palette_offers_the_screens_own_actions(demo_app):
    """Ctrl+P offers every action, the README says; it offered the app's alone, none of a
    screen's keys (Used, Compare, Withdraw, Merge …). Fails before: no 'Query: Compare'."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "sourdough starter", strategy="fused")
        await pilot.press("ctrl+p", *"Query: Compar")
        palette = app.screen
        await until(pilot, lambda: palette.query_one(CommandList).option_count > 0, "the palette's search")
        options = palette.query_one(CommandList)
        assert offered(palette)[0] == "Query: Compare"
        assert "Compare two strategies or intents on this query (key c)" in str(options.get_option_at_index(0).prompt)
        assert not any("Focus" in title for title in offered(palette))  # Textual's keys of a screen are not its own
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)


async def test_the_palette_offers_the_best_matching_sources_read_once(demo_app, monkeypatch: pytest.MonkeyPatch):
    """Every source's title begins "Source: ": typing "Sou" matches them all, and the palette styles
    and lays out every hit it gets (thousands in a big store: seconds per key)."""
    from mnemoscope.app import commands

    monkeypatch.setattr(commands, "SOURCE_HITS", 2, raising=False)  # (a name of its own: not before)
    reads, sources = [], Memory.sources

    def counted(self, *args, **kwargs):
        reads.append(1)
        return sources(self, *args, **kwargs)

    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Memory, "sources", counted)
        await pilot.press("ctrl+p", *"Source: s")
        palette = app.screen
        await until(pilot, lambda: palette.query_one(CommandList).option_count > 0, "the palette's search")
        await settle(pilot)
        titles = offered(palette)
        assert titles and len([t for t in titles if t.startswith("Source: ")]) == 2, titles
        assert len(reads) == 1  # once for the palette opened, not at each key


async def test_the_header_gives_way_so_the_counts_show(tmp_path: Path, demo_copy: Path):
    store = tmp_path / "a folder with a long name" / "my [old] store.db"  # brackets: not markup
    store.parent.mkdir()
    demo_copy.rename(store)
    app = build_app(Services(store))
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(pilot)
        for width, head in ((120, " my [old] store.db  │"), (240, " ◆ Mnemoscope  store ")):
            await pilot.resize_terminal(width, 32)
            await pilot.pause()
            header = screen_lines(app)[0]
            assert header.startswith(head) and "0 feedback" in header, header
        app.busy = "Ingesting"
        await pilot.pause()
        assert screen_lines(app)[0].startswith(" ⟳ Ingesting")


async def test_corrupt_store_shows_a_dialog_and_the_app_stays_usable(tmp_path: Path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a sqlite file at all" * 100)
    app = build_app(bad)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        body = text_of(app.screen.query_one("#dialog-text"))
        assert "not a Mnemoscope store" in body
        await pilot.click("#choice-temp")
        await settle(pilot)
        assert app.services.mem is not None
        assert app.store_stats.items == 0


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
async def test_a_store_another_user_could_change_is_said_read_only_at_open(tmp_path: Path):
    """The engine opens it read-only (guard's 1b01d3a); the app says so once, before a change is refused."""
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o700)
    path = folder / "m.db"
    with Memory(path, extensions=False) as mem:
        mem.add_note("The harbour lanterns are lit at dusk.")
    os.chown(path, 65534, 65534)
    app = build_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        told = app.titled("Read-only store")
        assert [n.severity for n in told] == ["warning"], app.notices
        assert "is opened read-only: it belongs to another user" in told[0].message, told[0].message
        await ask(pilot, "harbour lanterns")  # recall works
        assert app.screen.recall.hits


READ_ONLY_APP = """
import asyncio, json, os, sys
from pathlib import Path
from tests.app.mnemo_testing import ask, build_app, settle

async def opened(path):
    app = build_app(Path(path))
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        await ask(pilot, "harbour lanterns")
        await pilot.press("u", "f")
        await settle(pilot)
        return [[n.title, n.severity, n.message] for n in app.notices]

asyncio.run(opened(sys.argv[1]))  # a writable copy first: every module is imported before the user changes
os.setgid(65534)
os.setuid(65534)
print(json.dumps([asyncio.run(opened(path)) for path in sys.argv[2:]]))
"""


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="becoming a user who may only read needs root")
def test_a_store_this_user_may_not_write_opens_says_why_once_and_a_change_says_why(tmp_path: Path):
    """A store file the user may not write, and one in a folder they may not write (SQLite's -wal
    and -shm go there): the app said nothing at open (only a store another user could change was
    said read-only), a refused change did not say why, and the second could not be opened at all
    (the change watch's own connection failed). Fails before: no app opened the store."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # outside pytest's private folders, so another user can read
    try:
        os.chmod(folder, 0o755)
        scratch = tmp_path / "scratch.db"
        with Memory(scratch, extensions=False) as mem:
            mem.add_note("The harbour lanterns are lit at dusk.")
        file_read_only, folder_read_only = folder / "file.db", folder / "folder.db"
        for path in (file_read_only, folder_read_only):
            shutil.copy(scratch, path)
        os.chmod(file_read_only, 0o444)
        os.chown(folder_read_only, 65534, 65534)  # theirs, in a folder they may not write
        before = [p.read_bytes() for p in (file_read_only, folder_read_only)]
        run = subprocess.run([sys.executable, "-c", READ_ONLY_APP, scratch, file_read_only, folder_read_only],
                             capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[2],
                             env={**os.environ, "XDG_CONFIG_HOME": str(folder)})  # a config folder it may read
        assert run.returncode == 0, run.stderr[-3000:]
        told = json.loads(run.stdout.splitlines()[-1])
        assert len(told) == 2
        for notices, why in zip(told, ("you may not write to the file", "you may not write to its folder")):
            opened = [n for n in notices if n[0] == "Read-only store"]
            assert [n[1] for n in opened] == ["warning"] and f"is opened read-only: {why}" in opened[0][2], notices
            refused = [n for n in notices if n[0] == "Feedback"]
            assert len(refused) == 1 and f"is read-only ({why}" in refused[0][2], notices
        assert [p.read_bytes() for p in (file_read_only, folder_read_only)] == before
    finally:
        shutil.rmtree(folder)


async def test_a_mistyped_store_path_makes_nothing_until_the_person_says_so(tmp_path: Path):
    """``mnemoscope --store /tmp/typo/x.db``: the app made an empty store and its folders there,
    and offered the demo. It asks now; the focused first choice makes nothing, Quit makes nothing,
    and "Make a new store" makes it (the Services the command line gives the app)."""
    typo = tmp_path / "typo" / "x.db"
    app = build_app(Services(typo), offer_demo=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog), type(app.screen)
        body = text_of(app.screen.query_one("#dialog-text"))
        assert f"There is no store at {typo}. Nothing was made" in body, body
        assert app.screen.query_one("#choice-open").has_focus
        assert app.services.mem is None and app.store_label == "no store"
        await pilot.click("#choice-quit")
        await until(pilot, lambda: not app.is_running, "the app to quit")
    assert not typo.parent.exists()

    app = build_app(Services(typo))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click("#choice-new")
        await settle(pilot)
        assert not isinstance(app.screen, ChoiceDialog)
        assert app.services.mem is not None and app.store_stats.items == 0
    assert typo.is_file()


async def test_open_store_on_a_path_where_none_is_asks_and_keeps_the_open_one(tmp_path: Path, demo_copy: Path):
    app = build_app(demo_copy)
    typo = tmp_path / "typo" / "x.db"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = app.services.mem
        app.action_open_store()
        await settle(pilot)
        app.screen.query_one("#prompt-input").value = str(typo)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        body = text_of(app.screen.query_one("#dialog-text"))
        assert "There is no store at" in body and "demo.db is still open" in body, body
        await pilot.click("#choice-keep")
        await settle(pilot)
        assert app.services.mem is before and not typo.parent.exists()


async def test_empty_store_offers_the_demo(tmp_path: Path):
    app = build_app(empty_store(tmp_path / "empty.db"), offer_demo=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.click("#choice-load")
        await settle(pilot)
        assert app.store_stats.items > 300
        assert any("Demo content loaded" in n.title for n in app.notices)


async def test_an_empty_store_offers_its_own_files_too(tmp_path: Path):
    """The offer names the Ingest screen: it takes a person there, whose focus is in the query box
    (where the digit 1 would be typed, not switch screens)."""
    app = build_app(empty_store(tmp_path / "empty.db"), offer_demo=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "(key 1)" not in text_of(app.screen.query_one("#dialog-text"))
        assert "Ingest my own files" in "\n".join(screen_lines(app))  # every choice shows whole at 80 columns
        await pilot.click("#choice-ingest")
        await settle(pilot)
        assert app.current_mode == "ingest" and not isinstance(app.screen, ChoiceDialog)
        assert app.store_stats.items == 0


@pytest.mark.slow
async def test_demo_flag_opens_a_temporary_store_with_the_demo():
    services = Services(demo=True)
    app = build_app(services, offer_demo=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.store_stats.items > 300
            assert app.store_label == "demo (temporary store)"
            assert not isinstance(app.screen, ChoiceDialog)
            temp = services.mem.path
    finally:
        services.close()
    assert not temp.exists()


async def test_markup_in_a_document_is_shown_as_it_is(tmp_path: Path):
    # Textual reads a table's str cell as markup: "[/b]" stopped the app, "[@click=…]" ran an action
    doc = tmp_path / "notes [b]x.txt"
    doc.write_text("Maya[/b] adopted a cat named [red]Tom. The [@click=app.quit]Boss[/] likes coffee.\n")
    store = tmp_path / "store.db"
    with Memory(store) as mem:
        mem.ingest([doc])
        tom = next(e for e in mem.knowledge.entities() if e.name == "Tom")
        mem.knowledge.rename_entity(tom.id, "Tom [/b]")  # as an import may name it
    app = build_app(store, start_mode="sources")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = "\n".join(screen_lines(app))
        assert "notes [b]x.txt" in shown and "Maya[/b] adopted" in shown
        await app.switch_mode("query")
        await settle(pilot)
        await ask(pilot, "Maya adopted")
        assert "notes [b]x" in "\n".join(screen_lines(app))
        for mode in ("topics", "memories", "facts"):
            await app.switch_mode(mode)
            await settle(pilot)
        app.screen.query_one("#entity-filter").value = "tom"
        await settle(pilot)
        assert "Tom [/b]: 0 fact(s)" in "\n".join(screen_lines(app))
        # the palette's hit for the source names it and its path as they are, and marks the
        # letters typed where they are in the name (not one place further on per bracket before them)
        await pilot.press("ctrl+p", *"x.txt")
        palette = app.screen
        await until(pilot, lambda: palette.query_one(CommandList).option_count > 0, "the palette's search")
        await settle(pilot)
        hits = palette.query_one(CommandList)
        prompt = hits.get_option_at_index(0).prompt
        title, path = str(prompt).split("\n")
        assert title == "Source: notes [b]x.txt" and path.startswith("document · ") and path.endswith("/notes [b]x.txt")
        marked = [span for span in prompt.spans if span.end <= len(title)]
        assert marked and "".join(title[span.start:span.end] for span in marked) == "x.txt"
        assert app.is_running


async def test_a_failed_read_of_the_palettes_sources_is_said_and_read_again(demo_app, monkeypatch: pytest.MonkeyPatch):
    """The sources are read once per palette opening: a read that failed (the store busy, a disk
    error) was kept as the list's outcome, so no source was offered for the rest of the opening,
    and nothing said why."""
    from mnemoscope.engine.errors import StoreError

    reads, sources = [], Memory.sources

    def failing_once(self, *args, **kwargs):
        reads.append(1)
        if len(reads) == 1:
            raise StoreError("database is locked")
        return sources(self, *args, **kwargs)

    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Memory, "sources", failing_once)
        await pilot.press("ctrl+p", *"Source: ")
        palette = app.screen
        await until(pilot, lambda: reads and app.titled("Sources"), "the failed read to be said")
        assert "database is locked" in app.titled("Sources")[0].message
        await pilot.press("s")  # the next key reads them again
        await until(pilot, lambda: any(t.startswith("Source: ") for t in offered(palette)), "the sources offered")
        assert len(reads) == 2
