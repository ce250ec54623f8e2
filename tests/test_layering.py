"""Dependencies point one way: the import-linter contracts in pyproject.toml hold.

The contracts name the installed layout (``mnemoscope.engine``, ``mnemoscope.app``, …), while the
checkout keeps the folders at the top; so the check runs on a copy of the sources laid out as the
wheel installs them.
"""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def installed_layout(target: Path) -> Path:
    package = target / "mnemoscope"
    shutil.copytree(ROOT / "mnemoscope", package, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("engine", "app", "screens"):
        shutil.copytree(ROOT / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_import_contracts_hold(tmp_path):
    site = installed_layout(tmp_path / "site")
    lint = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    done = subprocess.run([sys.executable, "-c", lint, str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=site, env={"PYTHONPATH": str(site), "PATH": ""}, capture_output=True, text=True, timeout=120)
    report = done.stdout + done.stderr
    assert "Analyzed" in report and "BROKEN" not in report, report
    assert done.returncode == 0, report


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
