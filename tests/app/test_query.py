"""Query: run a query in each mode, see why, mark hits used, teach the ranker, compare, follow the
trace. Each test is one app run through several steps, as a person would take them."""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from dataclasses import dataclass

import pytest
from textual.widgets import DataTable, Select, Tree

from mnemoscope.app.services import AFTER_CHANGE, AFTER_OPEN, Services
from mnemoscope.app.tui import MnemoscopeApp
from mnemoscope.app.widgets import ChoiceDialog
from mnemoscope.app.widgets.recall import INTENTS, MODES, HitsTable, signal_codes
from mnemoscope.app.widgets.trace import TraceView
from mnemoscope.engine import Memory
from mnemoscope.screens.compare import CompareScreen
from tests.app.mnemo_testing import SIZE, ask, screen_lines, settle, text_of, until


async def test_query_in_each_mode_its_trace_and_two_strategies_compared(demo_app):
    """The Query screen's reading parts in one app, in order (an app start and a first query cost
    more than most of the steps); the one step that writes to the store comes last."""
    app = demo_app(animate=True)  # the trace plays by itself; no other part shows the trace
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await each_mode_and_what_the_screen_says(app, pilot)
        await the_trace_plays_steps_pauses_and_names_its_graph(app, pilot)
        await two_strategies_side_by_side(app, pilot)
        await escape_sequences_are_shown_never_sent(app, pilot)


async def each_mode_and_what_the_screen_says(app, pilot) -> None:
    screen = app.screen
    default_mode = screen.query_one("#query-mode", Select).value
    # before the first query, the Why panel says what it is for
    assert "Run a query" in text_of(screen.query_one("#why-body"))

    # digits typed into a begun question stay there; Esc leaves the box, and then they switch screens
    assert app.focused.id == "query-input"
    await pilot.press("space", "4")
    assert app.current_mode == "query" and app.focused.value == " 4"
    await pilot.press("escape", "4")
    await settle(pilot)
    assert app.current_mode == "facts"
    await app.switch_mode("query")
    await settle(pilot)

    # every choice of the query bar shows whole (at this width under the question, which has its own line)
    choices = {"#query-intent": [(f"intent {i}", i) for i in INTENTS],
               "#query-mode": [(f"mode {m}", m) for m in MODES],
               "#query-strategy": [(s, s) for s in screen.strategies]}
    for select_id, options in choices.items():
        select = screen.query_one(select_id, Select)
        assert options
        for label, value in options:
            select.value = value
            await pilot.pause()
            assert label in screen_lines(app)[4], f"{select_id}: {label!r} is cut"
    screen.query_one("#query-intent", Select).value = "auto"
    screen.query_one("#query-strategy", Select).value = app.services.default_strategy()

    for mode in ("lite", "pro", "max"):
        screen.query_one("#query-mode", Select).value = mode
        await ask(pilot, "what did Maya adopt")
        recall = screen.recall
        assert recall is not None and recall.mode == mode
        table = screen.query_one("#hits", DataTable)
        assert f"mode {mode}" in text_of(screen.query_one("#query-status"))
        knowledge = text_of(screen.query_one("#knowledge-body"))
        assert recall.episodes and recall.facts and "Maya" in knowledge
        if mode == "lite":
            assert not recall.hits  # Lite answers with episodes and facts alone
            assert screen.query_one("#query-detail").active == "knowledge"
            continue
        assert table.row_count == len(recall.hits) > 0
        assert app.focused is table
        assert "found by" in text_of(screen.query_one("#why-body"))

    # every letter of the found column is explained in the help (the answer signal's among them)
    await ask(pilot, "when did Maya adopt Pepper")
    letters = {letter for hit in screen.recall.hits for letter in signal_codes(hit.sources)}
    assert "A" in letters
    for letter in letters:
        assert f"**{letter}**" in screen.HELP, f"the found column's {letter} is not explained"

    # beside the hits (from 110 columns) every feature's name shows whole: the bars give way
    await pilot.resize_terminal(110, 40)
    await until(pilot, lambda: screen.fitted_width == 110, "the query screen fitted to 110 columns")
    await settle(pilot)
    await pilot.press("w")
    shown = "\n".join(screen_lines(app))
    assert screen.recall.hits[0].features
    for name in screen.recall.hits[0].features:  # a row's, or a word of the line naming the features that are 0
        assert re.search(rf"(?<!\w){name}(?!\w)", shown), f"{name} is cut:\n{shown}"
    await pilot.resize_terminal(*SIZE)
    await until(pilot, lambda: screen.fitted_width == SIZE[0], "the query screen fitted again")
    await settle(pilot)

    # an answer ranked on the words of the question it answers says so, in one line, with its own values
    answered = [n for n, hit in enumerate(screen.recall.hits) if hit.answers is not None]
    assert answered and len(answered) < len(screen.recall.hits)
    hits = screen.query_one("#hits", DataTable)
    for row in (answered[0], next(n for n in range(len(screen.recall.hits)) if n not in answered)):
        hits.move_cursor(row=row)
        await pilot.pause()
        why, note = text_of(screen.query_one("#why-body")), screen.recall.hits[row].answers
        if note is None:
            assert "through the question" not in why, why
            continue
        own = ", ".join(f"{name} {value:.2f}" for name, value in note.lent.items())
        assert f"words matched through the question it answers: “{note.question}” · its own {own}" in why, why

    # the hits highlight the query's terms
    await ask(pilot, "starter")
    snippet = screen.query_one("#hits", DataTable).get_row_at(0)[-1]
    assert any("starter" in snippet.plain[s.start:s.end].lower() for s in snippet.spans)

    # a query that finds nothing says so
    await ask(pilot, "zzqxv")
    assert screen.query_one("#hits", DataTable).row_count == 0
    assert "0 items" in text_of(screen.query_one("#query-status"))
    assert app.titled("No results")

    # a refused query is a message, not a traceback, and the next query runs
    screen.run_query("x" * 30_000)  # longer than the engine accepts
    await settle(pilot)
    assert "limit" in text_of(screen.query_one("#query-status"))
    assert any(n.severity == "error" for n in app.notices)
    await ask(pilot, "starter")
    assert screen.recall is not None and screen.recall.hits

    screen.query_one("#query-mode", Select).value = default_mode


async def the_trace_plays_steps_pauses_and_names_its_graph(app, pilot) -> None:
    screen = app.screen
    await ask(pilot, "tell me more about sourdough starters")
    trace = screen.query_one(TraceView)
    assert not trace.steps, "the trace is built when its tab is first shown"
    trace.INTERVAL = 0.05
    await pilot.press("t")
    assert len(trace.steps) >= 2, "the walk has steps"

    # it plays from the first step to the last by itself, then stops saying "playing"
    await until(pilot, lambda: not trace.playing, "the trace to play to its end")
    assert trace.step == len(trace.steps) - 1
    status = text_of(screen.query_one("#trace-status"))
    assert f"step {len(trace.steps)}/{len(trace.steps)}" in status
    assert "playing" not in status and "paused" in status

    # replay, pause, single step: with steps an hour apart, no step comes between two looks
    trace.INTERVAL = 3600
    await pilot.press("r")  # replay from the start
    assert trace.step == 0 and trace.playing
    await pilot.press("space")  # pause
    assert not trace.playing
    await pilot.press("space", "space")  # play, and pause again
    assert not trace.playing and trace.step == 0
    await pilot.press("full_stop")  # single step pauses and advances
    assert trace.step == 1 and not trace.playing
    assert "step 2/" in text_of(screen.query_one("#trace-status"))
    tree = screen.query_one("#trace-tree", Tree)
    assert tree.cursor_node is not None and tree.cursor_node.data == trace.steps[1].node
    assert "candidate" in text_of(screen.query_one("#trace-step"))
    trace.INTERVAL = 0.05  # a replay starts at step 0 (above) and moves on by itself to the last
    await pilot.press("r")
    await until(pilot, lambda: not trace.playing and trace.step == len(trace.steps) - 1, "the replay's end")

    # a fused recall's graph expansion names its nodes
    await ask(pilot, "tell me more about sourdough starters", strategy="fused")
    graph = text_of(screen.query_one("#trace-graph"))
    assert "seeds (" in graph and "item:" in graph, graph
    assert "{" not in graph and "'node'" not in graph, "no raw dicts"
    await until(pilot, lambda: not trace.playing, "the last trace's end")

    # beside the hits (a wide terminal) the line over the walk says where it stands; its keys are the key bar's
    await pilot.resize_terminal(120, 40)
    await until(pilot, lambda: screen.fitted_width == 120, "the query screen fitted to 120 columns")
    await settle(pilot)
    at_end = f"{len(trace.steps)}/{len(trace.steps)}"
    lines = screen_lines(app)
    line = next(line for line in lines if at_end in line)
    assert f"step {at_end} · paused" in line and "space" not in line, line
    assert all(key in lines[-1] for key in ("space Play/pause", ". Step", "r Replay")), lines[-1]
    trace.load(dataclasses.replace(screen.recall, trace=[]), animate=False)  # no walk: the line says why, whole
    await pilot.pause()
    assert any(line.rstrip().endswith("topic tree).") for line in screen_lines(app)), "\n".join(screen_lines(app))
    await pilot.resize_terminal(*SIZE)
    await until(pilot, lambda: screen.fitted_width == SIZE[0], "the query screen fitted again")
    await settle(pilot)
    await pilot.press("w")  # the Why panel again: no later query builds the trace
    screen.query_one("#query-strategy", Select).value = app.services.default_strategy()


async def two_strategies_side_by_side(app, pilot) -> None:
    """Compare, opened in a small terminal."""
    await pilot.resize_terminal(80, 24)
    await until(pilot, lambda: app.screen.fitted_width == 80, "the query screen fitted to 80 columns")
    await settle(pilot)
    await ask(pilot, "when did Maya adopt her dog Pepper")  # the question has the bar's first line: whole
    assert app.focused is app.screen.query_one("#hits") and screen_lines(app)[3].strip() == "when did Maya adopt her dog Pepper", \
        screen_lines(app)[3]
    await ask(pilot, "sourdough starter")
    await pilot.press("c")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    a, b = (screen.query_one(f"#hits-{s}", DataTable) for s in "ab")
    assert a.row_count > 0 and b.row_count > 0
    assert screen.query_one("#strategy-a", Select).value != screen.query_one("#strategy-b", Select).value
    marks = [a.get_row_at(r)[1] for r in range(a.row_count)]
    assert any(m.startswith("◆") for m in marks), "the two strategies share some hits"
    # both sides fit, say what they share and show readable snippets, in a small terminal (stacked:
    # side by side, a snippet had 11 characters at 80 columns), a larger one and a wide one
    for size, snippet_width in (((80, 24), 40), ((120, 40), 28), (SIZE, 60)):
        await pilot.resize_terminal(*size)
        await until(pilot, lambda: screen.fitted_width == size[0], f"the lists fitted to {size}")
        await settle(pilot)
        lines = screen_lines(app)
        assert sum(" shared" in line for line in lines) == 1 + (size[0] < 110), "\n".join(lines)  # a line each, or one for both
        for side in "ab":
            table = screen.query_one(f"#hits-{side}", HitsTable)
            assert table.max_scroll_x == 0 and table.snippet_width >= snippet_width, (size, table.snippet_width)
            assert table.region.height >= 5, (size, table.region)  # the header and a few hits
    await pilot.press("escape")
    assert not isinstance(app.screen, CompareScreen)
    await pilot.press("c")
    await settle(pilot)
    await pilot.press("slash")  # "/" from the compare view: back to the query box (it crashed the app)
    await settle(pilot)
    assert not isinstance(app.screen, CompareScreen) and app.focused is app.screen.query_one("#query-input")


async def escape_sequences_are_shown_never_sent(app, pilot) -> None:
    """A document's escape sequences are shown, never sent to the terminal (nor do they take
    cells), nor a bidi override that would turn the rest of the line around (it was drawn). It
    adds a note to the store: the last step."""
    app.services.mem.add_note("The zebra \u202elantern\u202c \x1b]0;retitled\x07 glows \x1b[2J red \x9b31m tonight.")
    await ask(pilot, "zebra lantern")
    shown = "\n".join(screen_lines(app))
    assert "The zebra lantern ]0;retitled" in shown and not any(c in shown for c in "\x1b\x07\x9b\u202e\u202c")


async def test_mark_hits_used_teach_the_ranker_and_see_it_learn(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        query = app.screen
        await ask(pilot, "sourdough starter")
        table = query.query_one("#hits", DataTable)
        await pilot.press("u")
        await pilot.press("down", "down", "u")
        assert table.get_row_at(0)[1] == "✓" and table.get_row_at(2)[1] == "✓"
        assert len(query.used) == 2
        await pilot.press("up", "up", "u")  # toggles off
        assert table.get_row_at(0)[1] == "" and len(query.used) == 1
        await pilot.press("f")
        await settle(pilot)
        assert [n.message for n in app.titled("Feedback sent")] == ["1 used, 2 ignored."]  # the two shown above it
        events = app.services.memory.ranker.status().events

        # feedback twice for the same results says what to do, in the person's words
        app.notices.clear()
        await pilot.press("f")
        await settle(pilot)
        messages = [n.message for n in app.notices]
        assert any("already sent" in m for m in messages), messages
        assert not any("token" in m for m in messages), "no engine jargon"
        assert app.services.memory.ranker.status().events == events

        # asked again, the marked hit comes first, and the Why panel says what the feedback did
        marked = query.recall.hits[2].item.id
        await ask(pilot, "sourdough starter")
        assert query.recall.hits[0].item.id == marked
        why = text_of(query.query_one("#why-body"))
        assert "raised: marked used for 'sourdough starter' (similarity 1.00, 1 mark)" in why, why
        assert f"feedback event {query.recall.hits[0].taught.event}" in why

        await ask(pilot, "what did Maya adopt")  # new results can be taught again
        await pilot.press("u", "f")
        await settle(pilot)
        assert len(app.titled("Feedback sent")) == 1
        assert app.services.memory.ranker.status().events == events + 1 == 2

        # the Ranker screen shows both events and the learning curve
        await pilot.press("7")
        await settle(pilot)
        ranker = app.screen
        assert ranker.query_one("#feedback-table", DataTable).row_count == 2
        assert "2" in text_of(ranker.query_one("#ranker-body"))
        status = app.services.mem.ranker.status()
        assert ranker.query_one("#curve-lambda").values == [p.lam for p in status.curve]

        # the highlighted event (the newest) says what it does; w withdraws it, after a confirmation
        detail = text_of(ranker.query_one("#event-detail"))
        assert "for 'what did Maya adopt'" in detail and "raises (marked used): 1" in detail, detail
        await pilot.press("w")  # the confirmation's key bar says how to choose; the keys choose, as a click does
        assert all(key in screen_lines(app)[-1] for key in ("Next choice", "Choose")), screen_lines(app)[-1]
        await pilot.press("right", "enter")
        await settle(pilot)
        assert app.titled("Feedback withdrawn") and app.services.memory.ranker.status().events == 1
        assert "withdrawn" in text_of(ranker.query_one("#event-detail"))
        assert ranker.query_one("#feedback-table", DataTable).row_count == 2  # still listed, as withdrawn
        assert any(re.search(r"\b2 +withdrawn +what did Maya", line) for line in screen_lines(app)), screen_lines(app)
        await pilot.press("w")
        assert any("already withdrawn" in n.message for n in app.notices)
        # … and its effect is gone at the next recall
        await pilot.press("6")
        await ask(pilot, "what did Maya adopt")
        assert query.recall.hits and not any(h.taught for h in query.recall.hits)
        await pilot.press("7")
        await settle(pilot)

        await pilot.press("R")
        await pilot.click("#choice-reset")
        await settle(pilot)
        assert ranker.query_one("#feedback-table", DataTable).row_count == 0


def test_an_undated_episode_is_listed_without_a_gap():
    from types import SimpleNamespace

    from mnemoscope.screens.query import knowledge_text

    episodes = [SimpleNamespace(time_start=None, summary="Shaping"),
                SimpleNamespace(time_start="2023-04-03T18:42", summary="Daniel and Maya")]
    lines = knowledge_text(episodes, []).plain.splitlines()
    assert lines[1:3] == ["• Shaping", "• 2023-04-03 Daniel and Maya"]


async def test_the_knowledge_panel_marks_a_fact_that_no_longer_holds_and_dates_an_episode_once(demo_app):
    """The recall returns the fact Pepper's favourite toy had until the demo's August session,
    beside the one that replaced it: the panel says which holds, as `mnemoscope recall` does."""
    app = demo_app(start_mode="query")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#query-topk").value = "3"  # (the facts a recall returns follow its top k)
        await ask(pilot, "squeaky hedgehog toy")
        lines = text_of(app.screen.query_one("#knowledge-body")).splitlines()
        old = [line for line in lines if "squeaky hedgehog" in line]
        new = [line for line in lines if "Bruno's old rope" in line]
        assert old and new, "\n".join(lines)
        assert "2023-04-03 → 2023-08-20" in old[0] and "superseded by #" in old[0], old
        assert "since 2023-08-20" in new[0] and "superseded" not in new[0], new
        episodes = [line for line in lines[1:lines.index("")] if line.startswith("• 20")]
        assert episodes and not any(re.search(r"\(\d{4}-\d\d-\d\d", line) for line in episodes), episodes


@dataclass
class HeldWarmUp:
    """The app's warm-up held until ``release`` is set, and the query of every recall made."""

    warming: threading.Event  # set once the warm-up has started
    release: threading.Event
    recalled: list[str]


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldWarmUp:
    out = HeldWarmUp(threading.Event(), threading.Event(), [])
    warm_up, recall = Services.warm_up, Memory.recall

    def held_warm_up(self: Services) -> None:
        out.warming.set()
        out.release.wait(60)  # a bound, not a pause
        warm_up(self)

    def recording_recall(self: Memory, query: str, *args, **kwargs):
        out.recalled.append(query)
        return recall(self, query, *args, **kwargs)

    monkeypatch.setattr(Services, "warm_up", held_warm_up)
    monkeypatch.setattr(Memory, "recall", recording_recall)
    return out


async def test_a_query_sent_during_the_warm_up_waits_for_it_and_says_what_it_waits_for(demo_app, held):
    """The warm-up after the store opens builds what a recall reads: a query sent meanwhile waits
    for it rather than building the same beside it, and the status line says so."""
    warming, release, recalled = held.warming, held.release, held.recalled
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, warming.is_set, "the warm-up to start")
        screen, status = app.screen, app.screen.query_one("#query-status")
        box = screen.query_one("#query-input")
        box.value = "what did Maya adopt"
        await pilot.press("enter")
        await until(pilot, lambda: "Waiting for the engine to load" in text_of(status),
                    "the query to say what it waits for")
        assert recalled == [] and screen.recall is None
        release.set()
        await settle(pilot)
        assert recalled == ["what did Maya adopt"]
        assert screen.recall is not None and screen.recall.hits and "Waiting" not in text_of(status)


async def test_a_query_cancelled_while_it_waits_for_the_warm_up_says_so_and_never_runs(demo_app, held):
    warming, release, recalled = held.warming, held.release, held.recalled
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, warming.is_set, "the warm-up to start")
        status = app.screen.query_one("#query-status")
        app.screen.query_one("#query-input").value = "what did Maya adopt"
        await pilot.press("enter")
        await until(pilot, lambda: "Waiting for" in text_of(status), "the query to say what it waits for")
        await pilot.press("escape", "escape")  # out of the box, then Esc cancels the task
        await until(pilot, lambda: "Cancelled" in text_of(status), "the status to say the query was cancelled")
        release.set()
        await settle(pilot)
        assert recalled == [] and app.screen.recall is None
        assert text_of(status) == "Cancelled: “what did Maya adopt” did not run."


async def test_a_query_cancelled_while_the_engine_runs_it_says_so_and_shows_nothing_new(demo_app, monkeypatch):
    """A thread cannot be stopped: the recall runs to its end, and its hits are dropped."""
    running, release, recall = threading.Event(), threading.Event(), Memory.recall

    def held_recall(self: Memory, query: str, *args, **kwargs):
        if query == "what did Maya adopt":
            running.set()
            release.wait(60)  # a bound, not a pause
        return recall(self, query, *args, **kwargs)

    monkeypatch.setattr(Memory, "recall", held_recall)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "starter")
        screen, status = app.screen, app.screen.query_one("#query-status")
        shown = screen.recall
        assert shown is not None and shown.hits
        box = screen.query_one("#query-input")
        box.value = "what did Maya adopt"
        box.focus()
        await pilot.press("enter")
        await until(pilot, running.is_set, "the recall to run")
        await pilot.press("escape", "escape")  # out of the box, then Esc cancels the task
        release.set()
        await settle(pilot)
        assert screen.recall is shown  # the hits of before, not the cancelled query's
        assert text_of(status) == "Cancelled: “what did Maya adopt”; its results are not shown."


async def test_a_query_sent_while_the_store_opens_waits_for_the_warm_up_too(demo_app, held, monkeypatch):
    """It runs once the strategies are read, which may come before the paint the warm-up's worker
    waits for: the warm-up is announced as the store is open, so the query waits all the same."""
    from mnemoscope.app.tui import MnemoscopeApp

    opening, warming, release, recalled = threading.Event(), held.warming, held.release, held.recalled
    opened, store_opened = Services.open, MnemoscopeApp.store_opened
    announced = []

    def held_open(self, path=None):
        opening.wait(60)  # a bound, not a pause
        return opened(self, path)

    def opened_then_looked(app, loaded) -> None:
        store_opened(app, loaded)
        app.services.wait_for_warm_up(announced.append, timeout=0)

    monkeypatch.setattr(Services, "open", held_open)
    monkeypatch.setattr(MnemoscopeApp, "store_opened", opened_then_looked)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        status = app.screen.query_one("#query-status")
        app.screen.query_one("#query-input").value = "what did Maya adopt"
        await pilot.press("enter")
        await until(pilot, lambda: "Opening the store" in text_of(status), "the query to wait for the store")
        opening.set()
        await until(pilot, warming.is_set, "the warm-up to start")
        await until(pilot, lambda: "Waiting for the engine to load" in text_of(status),
                    "the query to say what it waits for")
        assert announced == [AFTER_OPEN] and recalled == []
        release.set()
        await settle(pilot)
        assert recalled == ["what did Maya adopt"] and app.screen.recall is not None


async def test_compare_says_what_it_waits_for_and_esc_leaves_it_at_once(demo_app, held):
    """Compare sent during the warm-up waits for it too: it says so, Esc goes back at once, and
    the comparison left is not run for nobody once the warm-up ends."""
    warming, release, recalled = held.warming, held.release, held.recalled
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, warming.is_set, "the warm-up to start")
        app.screen.query_one("#query-input").value = "what did Maya adopt"
        await pilot.press("escape", "c")
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        await until(pilot, lambda: "Waiting for the engine to load" in text_of(compare.query_one("#compare-title")),
                    "Compare to say what it waits for")
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)  # at once, the warm-up still held
        await until(pilot, lambda: "compare" not in app.tasks, "the comparison to be dropped")
        release.set()
        await settle(pilot)
        assert recalled == []  # the comparison left gave up waiting: the engine recalled nothing


async def test_a_query_waiting_for_the_warm_up_after_another_process_changed_the_store_says_so(demo_app, monkeypatch):
    """The wait after the store opens and the one after following another process's change have
    different causes: the status line names the one it waits for."""
    opened, release = threading.Event(), threading.Event()
    warm_up, warming = Services.warm_up, []

    def held_after_open(self) -> None:
        if opened.is_set():  # the warm-ups after the first: hold them
            warming.append(True)
            release.wait(60)  # a bound, not a pause
        warm_up(self)

    monkeypatch.setattr(Services, "warm_up", held_after_open)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        opened.set()
        with Memory(app.services.mem.path) as other:  # another writer of the store: the app follows it
            other.add_note("Maya adopted a second dog, a beagle called Pepper.")
        await until(pilot, lambda: bool(warming), "the warm-up after the change")
        status = app.screen.query_one("#query-status")
        app.screen.query_one("#query-input").value = "what did Maya adopt"
        await pilot.press("enter")
        await until(pilot, lambda: "Waiting for" in text_of(status), "the query to say what it waits for")
        assert "another process" in text_of(status) and "once after the store opens" not in text_of(status)
        release.set()
        await settle(pilot)
        assert app.screen.recall is not None and "Waiting" not in text_of(status)


def test_a_recall_waits_for_an_announced_warm_up_until_it_ends_or_is_cancelled():
    services = Services()
    services.wait_for_warm_up(timeout=0)  # none announced: no wait
    ended = services.warm_up_coming(AFTER_OPEN)
    started = time.monotonic()
    services.wait_for_warm_up(cancelled=lambda: True)  # a replaced query stops waiting
    services.wait_for_warm_up(timeout=0.05)  # a warm-up that never ends holds a recall only so long
    assert time.monotonic() - started < 5
    said = threading.Event()
    waiter = threading.Thread(target=services.wait_for_warm_up, args=(lambda cause: said.set(),))
    waiter.start()
    assert said.wait(5)  # the waiter is in: the warm-up ends after it looked
    ended()
    ended()  # ending twice counts once: a second announced warm-up still holds recalls
    waiter.join(5)
    assert not waiter.is_alive()
    services.warm_up_coming(AFTER_OPEN)
    waited = []
    services.wait_for_warm_up(waited.append, timeout=0.01)
    assert waited == [AFTER_OPEN]  # it says why it waits


def test_a_recall_waits_only_for_the_warm_ups_announced_before_it():
    """Another process writing every second announces a warm-up after each change (the app
    follows it): they overlap, and a recall waiting for every one of them would wait until its
    timeout."""
    services = Services()
    first_ended, said = services.warm_up_coming(AFTER_OPEN), threading.Event()
    waiter = threading.Thread(target=services.wait_for_warm_up, args=(lambda cause: said.set(),), kwargs={"timeout": 60})
    waiter.start()
    assert said.wait(5)  # the recall waits
    services.warm_up_coming(AFTER_CHANGE)  # the next change's warm-up, announced meanwhile (not ended here)
    first_ended()
    waiter.join(5)
    assert not waiter.is_alive()


def hold(monkeypatch, name: str) -> tuple[threading.Event, threading.Event]:
    """Hold the app's Services.NAME until the test releases it: the first event is set once it is
    called, the second releases it (a bound of 60 s, not a pause)."""
    reading, release = threading.Event(), threading.Event()
    read = getattr(Services, name)

    def held(self: Services):
        reading.set()
        release.wait(60)
        return read(self)

    monkeypatch.setattr(Services, name, held)
    return reading, release


async def test_the_warm_up_starts_once_the_first_screen_has_what_it_reads(demo_app, held, monkeypatch):
    """The warm-up reads the saved files from the disk at once: started beside the first screen's
    own reads (the Query screen's sources and strategies), it slowed them, and the screen was
    usable later. It starts once they are shown."""
    reading, read = hold(monkeypatch, "source_names")
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, reading.is_set, "the Query screen to read the sources")
        await until(pilot, lambda: app.store_stats is not None, "the header's counts")
        await pilot.pause()
        await pilot.pause()  # two frames after the counts' paint: a warm-up due then has its worker
        assert not held.warming.is_set() and not [w for w in app.workers if w.group == "warm-up"]
        read.set()
        await until(pilot, held.warming.is_set, "the warm-up to start")
        held.release.set()
        await settle(pilot)
        await ask(pilot, "what did Maya adopt")
        await settle(pilot)
        assert held.recalled == ["what did Maya adopt"] and app.screen.recall is not None


@pytest.mark.parametrize("how", ["replaced", "cancelled with Esc", "cancelled as its owner left"])
async def test_a_task_the_warm_up_waits_for_cancelled_before_it_ran_lets_the_warm_up_start(demo_app, held, how,
                                                                                          monkeypatch):
    """The warm-up waits for the Query screen's first read. A thread worker cancelled before its job
    began never runs it: the read, replaced or cancelled in the tick it started (another process
    committed as the store opened, or Esc at once), must neither hold the announced warm-up, for
    which every query waits, nor stay listed as running."""
    store_opened = MnemoscopeApp.store_opened

    def opened_then_cancelled(self: MnemoscopeApp, loaded) -> None:
        store_opened(self, loaded)
        assert "strategies" in self.tasks  # the read the warm-up waits for, its job not begun
        if how == "replaced":
            self.screen.refresh_data()
        elif how == "cancelled with Esc":
            self.action_cancel_task()
        else:
            self.cancel_task("strategies", self.screen)

    monkeypatch.setattr(MnemoscopeApp, "store_opened", opened_then_cancelled)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, held.warming.is_set, "the warm-up to start", timeout=20)
        held.release.set()
        await settle(pilot, timeout=20)
        assert not app.tasks
        if how == "replaced":  # the read that replaced it is shown
            assert app.screen.strategies


async def test_a_query_sent_before_the_strategies_are_known_runs_with_the_default_one(demo_app, monkeypatch):
    """`mnemoscope --demo`, a question typed at once: the store was open but the strategies not
    read yet, so it ran with the picker's placeholder (hybrid), and the picker then said fused
    beside hybrid's hits. It waits for them now, and runs with the strategy the picker shows."""
    reading, release = hold(monkeypatch, "strategy_names")
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, reading.is_set, "the strategies to be read")
        screen = app.screen
        screen.query_one("#query-input").value = "where does Maya live now"
        await pilot.press("enter")
        assert screen.recall is None and "runs as soon as" in text_of(screen.query_one("#query-status"))
        release.set()
        await settle(pilot)
        picked = screen.query_one("#query-strategy", Select).value
        assert screen.recall is not None and screen.recall.strategy == picked == app.services.default_strategy()


async def test_feedback_with_no_hit_marked_used_is_asked_first(demo_app):
    """`f` with nothing marked sent every hit as ignored at once: a stray f (the first letter of
    "find …" typed on the hits) wrote a feedback event that nothing helped."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog) and "None of the 10 hits" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.press("enter")  # the first choice, Cancel
        await settle(pilot)
        assert not app.titled("Feedback sent") and app.services.memory.ranker.status().events == 0
        await pilot.press("f", "tab", "enter")
        await settle(pilot)
        assert [n.message for n in app.titled("Feedback sent")] == ["0 used, 10 ignored."]
