"""Dependencies point one way (the import-linter contracts in pyproject.toml hold), and SQL stays in engine/store/.

The contracts name the installed layout (``mnemoscope.engine``, ``mnemoscope.app``, …); the
checkout keeps the folders at the top and links them into ``mnemoscope/`` (``mnemoscope/engine ->
../engine``, …), so ``lint-imports`` run from the repository's root, as a person runs it, reads
the package as installed.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold_as_lint_imports_checks_them_from_the_root():
    """``lint-imports`` alone, from the repository's root. Before the links in ``mnemoscope/`` it
    stopped at "Module 'mnemoscope.engine' does not exist", and only a copy laid out as installed
    could be checked."""
    command = shutil.which("lint-imports", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    assert command, "lint-imports is not installed beside this Python or on PATH (pip install -e '.[dev]')"
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, env={"PATH": "", "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True,
                          timeout=120)
    report = done.stdout + done.stderr
    assert "Analyzed" in report and "BROKEN" not in report and " kept, 0 broken." in report, report
    assert done.returncode == 0, report
    assert sorted(p.name for p in (ROOT / "mnemoscope").iterdir() if p.is_symlink()) == ["app", "assets", "engine",
                                                                                          "screens"]


@pytest.fixture(scope="module")
def fresh_imports() -> list[str]:
    """What a fresh interpreter loads: first the engine's light modules (numpy, scipy, the memory
    loaded by then), then ``Memory`` and the error base (their modules), then every engine module
    (the Textual and app modules loaded by then): one line each. One interpreter for two checks
    (the tests that read it share an xdist group, so it starts once)."""
    code = (
        "import importlib, pkgutil, sys, mnemoscope.engine.errors, mnemoscope.engine.config\n"
        "heavy = sorted(n for n in ('numpy', 'scipy', 'mnemoscope.engine.memory') if n in sys.modules)\n"
        "from mnemoscope.engine import Memory, MnemoscopeError\n"
        "print(','.join(heavy), Memory.__module__, MnemoscopeError.__module__)\n"
        "import mnemoscope.engine as engine\n"
        "for m in pkgutil.walk_packages(engine.__path__, 'mnemoscope.engine.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] == 'textual' or n.startswith(('mnemoscope.app', 'mnemoscope.screens')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.split("\n")
    assert len(lines) == 3 and lines[2] == "", out.stdout  # two lines, each ended
    return lines[:2]


@pytest.mark.xdist_group("fresh-imports")
def test_engine_imports_no_textual_and_no_app(fresh_imports: list[str]):
    assert fresh_imports[1] == ""


SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|WITH)\s+[A-Za-z_*(]")


def test_sql_lives_only_in_the_store():
    """Every SQL statement is in engine/store/: the rest of the code asks the store."""
    files = [p for folder in ("engine", "app", "screens") for p in (ROOT / folder).rglob("*.py")
             if (ROOT / "engine" / "store") not in p.parents]
    assert len(files) > 50
    found = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.strip()[:60]}"
             for path in files for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.match(node.value)]
    assert found == []


@pytest.mark.xdist_group("fresh-imports")
def test_the_engines_light_modules_import_without_numpy(fresh_imports: list[str]):
    """``engine/__init__`` loads its public names on first use: the CLI and the app import the
    errors and the settings at start without paying for numpy, scipy or the memory."""
    assert fresh_imports[0].split() == ["mnemoscope.engine.memory", "mnemoscope.engine.errors"]


def imported_modules(path: Path, module: str, modules: set[str]) -> set[str]:
    """The project modules ``path`` imports anywhere in it: at the top, inside functions and under
    ``TYPE_CHECKING`` (a cycle there is still two modules that cannot be read apart)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            name = name.removeprefix("mnemoscope.")
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + ".") and not name.startswith(module + "."):
                found.add(name)
    return found


def test_the_import_graph_has_no_cycles():
    import networkx as nx

    files = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for folder in ("engine", "app", "screens") for p in (ROOT / folder).rglob("*.py")}
    graph = nx.DiGraph()
    for module, path in files.items():
        graph.add_edges_from((module, target) for target in imported_modules(path, module, set(files)))
    assert graph.number_of_edges() > 200
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []
