"""Modal dialogs: a choice (confirm, dry-run reports, errors), a prompt, a note, the help."""

from __future__ import annotations

from typing import Callable, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from .chrome import KeyBar, TextBox

ResultType = TypeVar("ResultType")


class Dialog(ModalScreen[ResultType]):
    """A modal dialog with its own key bar over the screen's: the screen's keys do not act while
    the dialog is open, so the bar at the bottom names the dialog's. Subclasses write
    ``compose_dialog``."""

    def compose(self) -> ComposeResult:
        yield from self.compose_dialog()
        yield KeyBar()

    def compose_dialog(self) -> ComposeResult:
        yield from ()


class ChoiceDialog(Dialog[str | None]):
    """A title, a body and a row of buttons; dismisses with the chosen button's id (Esc: None)."""

    # the choices are buttons: the key bar says how to reach and press one (a newcomer on "Withdraw
    # feedback event 1?" saw only "esc Close", the safe first button focused)
    BINDINGS = [Binding("escape", "dismiss_none", "Close", id="dialog-close"),
                Binding("tab,right", "app.focus_next", "Next choice", id="dialog-next"),
                Binding("shift+tab,left", "app.focus_previous", "Previous choice", id="dialog-previous", show=False),
                Binding("enter", "choose", "Choose", id="dialog-choose", priority=True)]

    def __init__(self, title: str, body: str, choices: list[tuple[str, str]], *, danger: str | None = None,
                 markup: bool = False) -> None:
        super().__init__(classes="dialog")
        self.title_text, self.body, self.choices, self.danger, self.markup = title, body, choices, danger, markup

    def compose_dialog(self) -> ComposeResult:
        with Vertical(id="dialog-box") as box:
            box.border_title = self.title_text
            with VerticalScroll(id="dialog-body"):
                yield Static(self.body, markup=self.markup, id="dialog-text")
            with Horizontal(id="dialog-buttons"):
                for n, (choice, label) in enumerate(self.choices):
                    variant = "error" if choice == self.danger else "primary" if n == 0 else "default"
                    yield Button(label, id=f"choice-{choice}", variant=variant)

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def action_choose(self) -> None:
        """Enter: the focused choice (its button pressed, as a click would)."""
        if isinstance(self.focused, Button):
            self.focused.press()


class PromptDialog(Dialog[str | None]):
    """One line of input (a path, a new name); Enter accepts, Esc cancels."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="dialog-cancel")]

    def __init__(self, title: str, prompt: str, value: str = "", placeholder: str = "") -> None:
        super().__init__(classes="dialog")
        self.title_text, self.prompt, self.value, self.placeholder = title, prompt, value, placeholder

    def compose_dialog(self) -> ComposeResult:
        with Vertical(id="dialog-box") as box:
            box.border_title = self.title_text
            yield Label(self.prompt, markup=False)
            yield TextBox(self.value, placeholder=self.placeholder, id="prompt-input")
            with Horizontal(id="dialog-buttons"):
                yield Button("OK", id="prompt-ok", variant="primary")
                yield Button("Cancel", id="prompt-cancel")

    @on(Input.Submitted)
    @on(Button.Pressed, "#prompt-ok")
    def accept(self) -> None:
        value = self.query_one(Input).value.strip()
        self.dismiss(value or None)

    @on(Button.Pressed, "#prompt-cancel")
    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class FormDialog(Dialog[None]):
    """A few labelled inputs (a fact to add or edit); Enter in one or OK submits them. The dialog
    stays open meanwhile: ``submit(values)`` checks them (the engine's dry run) and either closes
    it or calls :meth:`refuse` with the reason, shown above the buttons with the text as typed, so
    that a refused request is mended, not typed again."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="form-cancel")]

    def __init__(self, title: str, fields: list[tuple[str, str, str]], submit: Callable[[dict[str, str]], None]) -> None:
        super().__init__(classes="dialog")
        self.title_text, self.fields, self.submit = title, fields, submit

    def compose_dialog(self) -> ComposeResult:
        with Vertical(id="dialog-box", classes="form") as box:
            box.border_title = self.title_text
            with VerticalScroll(id="dialog-body", can_focus=False):  # scrolls in a short terminal; OK stays
                for key, label, value in self.fields:
                    yield Label(label, markup=False)
                    yield TextBox(value, id=f"form-{key}")
            reason = Static("", id="form-reason", markup=False)
            reason.display = False
            yield reason
            with Horizontal(id="dialog-buttons"):
                yield Button("OK", id="form-ok", variant="primary")
                yield Button("Cancel", id="form-cancel")

    def on_mount(self) -> None:
        # focusing the first field scrolled its label out of view
        self.call_after_refresh(self.query_one("#dialog-body").scroll_home, animate=False)

    @on(Input.Submitted)
    @on(Button.Pressed, "#form-ok")
    def accept(self) -> None:
        self.submit({key: self.query_one(f"#form-{key}", Input).value.strip() for key, _l, _v in self.fields})

    def refuse(self, reason: str) -> None:
        """The values were refused: say why; the dialog stays open with them."""
        line = self.query_one("#form-reason", Static)
        line.update(f"Refused: {reason}")
        line.display = True

    @on(Button.Pressed, "#form-cancel")
    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class NoteDialog(Dialog[tuple[str, str] | None]):
    """Paste or type a note: a title and the text. Ctrl+S saves."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="note-cancel"),
                Binding("ctrl+s", "save", "Save note", id="note-save", priority=True)]

    def compose_dialog(self) -> ComposeResult:
        from textual.widgets import TextArea  # imported when first needed: keeps start-up short

        with Vertical(id="dialog-box", classes="wide") as box:
            box.border_title = "New note"
            yield TextBox(placeholder="Title (optional)", id="note-title")
            # the cursor starts here (a pasted note keeps its lines), under the title's box: say so
            yield TextArea(id="note-text", soft_wrap=True, placeholder="Type or paste the note here; Ctrl+S saves it.")
            with Horizontal(id="dialog-buttons"):
                yield Button("Save note (Ctrl+S)", id="note-save", variant="primary")
                yield Button("Cancel", id="note-cancel")

    def on_mount(self) -> None:
        self.query_one("#note-text").focus()

    @on(Button.Pressed, "#note-save")
    def action_save(self) -> None:
        text = self.query_one("#note-text").text
        if not text.strip():
            self.notify("The note is empty.", severity="warning")
            return
        self.dismiss((self.query_one("#note-title", Input).value.strip(), text))

    @on(Button.Pressed, "#note-cancel")
    def action_dismiss_none(self) -> None:
        self.dismiss(None)


GLOBAL_KEYS = """\
| key | does |
|---|---|
| `1`…`8` | Ingest · Sources · Topics · Facts · Memories · Query · Ranker · Activity (in a text box they are text: `Esc` first) |
| `/` | jump to the query box |
| `Ctrl+P` | command palette: every action (ingest, open store, export, theme, …) |
| `Ctrl+O` | open another store |
| `Esc` | cancel the running task, leave a text box, or close a dialog |
| `?` / `F1` | this help |
| `F12` | save an SVG screenshot of the screen |
| `Ctrl+Q` | quit |
"""


class HelpScreen(Dialog[None]):
    """The keys of the current screen and of the whole app. In a short terminal the text scrolls:
    the box and the key bar say so, and the arrows scroll it wherever the focus is (on the Close
    button too, which has no use for them)."""

    SCROLLS = "↑ ↓ PgUp PgDn scroll"  # under the box, when the text is longer than it
    BINDINGS = [Binding("escape,question_mark,f1,q", "close", "Close", id="help-close"),
                Binding("down", "scroll('down')", "Scroll", key_display="↑↓", id="help-scroll", priority=True),
                *[Binding(key, f"scroll('{how}')", "Scroll", id=f"help-scroll-{how}", show=False, priority=True)
                  for key, how in (("up", "up"), ("pagedown", "page_down"), ("pageup", "page_up"))]]

    def __init__(self, title: str, screen_help: str) -> None:
        super().__init__(classes="dialog")
        self.title_text, self.screen_help = title, screen_help

    def compose_dialog(self) -> ComposeResult:
        from textual.widgets import Markdown  # imported when first needed: keeps start-up short

        with Vertical(id="dialog-box", classes="wide") as box:
            box.border_title = f"Help · {self.title_text}"
            with VerticalScroll(id="dialog-body"):
                yield Markdown(self.screen_help + "\n\n### Everywhere\n\n" + GLOBAL_KEYS)
            with Horizontal(id="dialog-buttons"):
                yield Button("Close", id="help-close", variant="primary")

    def on_mount(self) -> None:
        self.watch(self.query_one("#dialog-body"), "show_vertical_scrollbar", self._scrolls)

    def _scrolls(self, scrolls: bool) -> None:
        """The text became longer than the box (or fits again: a resize)."""
        self.query_one("#dialog-box").border_subtitle = self.SCROLLS if scrolls else ""
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "scroll":  # (asked before the body is composed too)
            return any(body.show_vertical_scrollbar for body in self.query("#dialog-body"))
        return True

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one("#dialog-body", VerticalScroll), f"scroll_{how}")()

    @on(Button.Pressed, "#help-close")
    def action_close(self) -> None:
        self.dismiss(None)
