"""An App that restyles its widgets only when their styles may have changed.

Textual restyles the whole app (``App.refresh_css``: the stylesheet parsed again from every
source, every shown widget's styles applied again) each time a mode's screen is first shown,
twice: once for the screen it leaves, once for the new one. Nothing has changed then — a new
screen's widgets take the stylesheet's rules as they mount — yet it was most of the cost of a
screen's first showing. The restyle exists for a screen that was hidden while the theme changed;
that case is kept: each screen remembers what its styles were made from, and a screen shown after
a change is restyled as before.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from textual import events
from textual.app import App, ScreenError
from textual.message import Message
from textual.screen import Screen

ReturnType = TypeVar("ReturnType")

CssInputs = tuple[object, ...]


class RestyleOnChangeApp(App[ReturnType]):
    """``refresh_css`` is skipped while the shown screen's styles come from the same theme, app
    classes and terminal colours as the last restyle."""

    _restyled_with: CssInputs | None = None  # what the last restyle was made from

    @cached_property
    def _styled_with(self) -> WeakKeyDictionary[Screen, CssInputs]:
        """What each screen's styles were made from: the last restyle it was shown or stacked at,
        or, for a screen made since, that restyle's."""
        return WeakKeyDictionary()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._parsed_with = self.get_css_variables()  # what Textual made the stylesheet with

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's restyle, when the shown screen may have styles of before (see the module)."""
        inputs = self.css_inputs()
        try:
            screen = self.screen
        except ScreenError:  # no screen yet
            screen = None
        if screen is not None and self.styles_current(screen, inputs):
            return  # (a screen met here first is new: every screen passes here when first shown)
        if (self._restyled_with is None and (screen is None or not screen.is_mounted)
                and self.get_css_variables() == self._parsed_with):
            # the first screen is being made: the stylesheet was parsed with these very variables,
            # so only what is styled already (the app, the screen) takes the theme's classes
            self.stylesheet.update(self, animate=animate)
        else:
            super().refresh_css(animate)
        self._restyled_with = inputs
        for shown in self.screen_stack:
            self._styled_with[shown] = inputs

    def styles_current(self, screen: Screen, inputs: CssInputs | None = None) -> bool:
        """Whether ``screen``'s styles were made from what they would be made from now (a screen
        met here first is new: its widgets take the stylesheet's rules as they mount)."""
        inputs = inputs or self.css_inputs()
        return inputs == self._restyled_with and self._styled_with.setdefault(screen, inputs) == inputs

    def css_inputs(self) -> CssInputs:
        """What every widget's styles depend on: the theme's variables, the app's classes (the
        theme's among them) and the terminal's colours. Not the stylesheet's sources: those a new
        kind of widget adds as it mounts are its own rules, applied to it as it mounts."""
        return tuple(self.get_css_variables().items()), frozenset(self.classes), self.ansi_theme


class RestyledScreen(Screen[ReturnType]):
    """A screen of a :class:`RestyleOnChangeApp` that is not restyled for nothing either.

    Textual restyles every widget of a screen each time it is shown (``ScreenResume``), and once
    more at its first resize, when it gains its breakpoint class (``-narrow``, ``-wide``): two
    passes over every widget at each screen's first showing, the Query screen's at the cold start.
    Here the screen is born with the breakpoint class of the app's width, and a showing restyles
    it only when its styles are not current (see :meth:`RestyleOnChangeApp.styles_current`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        classes = " ".join(filter(None, (kwargs.pop("classes", None), self._breakpoint_class())))
        super().__init__(*args, classes=classes or None, **kwargs)

    def _breakpoint_class(self) -> str | None:
        """The class Textual gives the screen at its first resize (the widest breakpoint the
        app's width reaches), if the screen uses the app's horizontal breakpoints alone."""
        app = self.app
        if self.HORIZONTAL_BREAKPOINTS is not None or self.VERTICAL_BREAKPOINTS or app.VERTICAL_BREAKPOINTS:
            return None
        width = app.size.width
        return next((name for least, name in sorted(app.HORIZONTAL_BREAKPOINTS or [], reverse=True) if width >= least),
                    None)

    def post_message(self, message: Message) -> bool:
        app = self.app
        if (isinstance(message, events.ScreenResume) and message.refresh_styles
                and isinstance(app, RestyleOnChangeApp) and app.styles_current(self)):
            message = events.ScreenResume(refresh_styles=False)
        return super().post_message(message)
