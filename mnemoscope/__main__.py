"""``python -m mnemoscope``: the command line, as the ``mnemoscope`` command runs it."""

from mnemoscope.app.cli import run

run()
