"""The engine is a library: importing all of it must not pull in Textual or the app."""

import subprocess
import sys


def test_engine_imports_no_textual_and_no_app():
    code = (
        "import pkgutil, importlib, sys, mnemoscope.engine as engine\n"
        "for m in pkgutil.walk_packages(engine.__path__, 'mnemoscope.engine.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] == 'textual' or n.startswith(('mnemoscope.app', 'mnemoscope.screens')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
