"""The settings' warnings, shown by the app: the engine says them with :mod:`logging` (a config or
env file holding an API key others can read, a ``MNEMOSCOPE_*`` variable that is no setting), which
reaches stderr from the command line; while the app runs, Textual holds stderr, and they were lost."""

from __future__ import annotations

import logging
from typing import Callable

from mnemoscope.engine.config import log as settings_log  # light (no numpy); the CLI has imported it already


class SettingWarnings(logging.Handler):
    """Hands each warning of the settings to ``notify(message)`` (the app's, which any thread may
    call) while installed."""

    def __init__(self, notify: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.notify = notify

    def emit(self, record: logging.LogRecord) -> None:
        self.notify(record.getMessage().removeprefix("mnemoscope: "))

    def install(self) -> None:
        settings_log.addHandler(self)

    def uninstall(self) -> None:
        settings_log.removeHandler(self)
