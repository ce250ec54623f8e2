"""bench/app_bench.py, the app's cold-start harness: a start that shows a dialog instead of the
Query screen is reported with the dialog's words, and an A/B against another checkout never has
this checkout open (and so migrate) the store that checkout starts on."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from mnemoscope.engine import Memory

ROOT = Path(__file__).resolve().parents[2]


def app_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "app_bench.py"), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_a_start_that_shows_a_dialog_is_reported_with_its_words(tmp_path: Path):
    """A store of a newer Mnemoscope (what an older checkout sees of a store this one migrated):
    the app says it cannot open it; the harness says so, not NoMatches on the dialog."""
    store = tmp_path / "newer.db"
    Memory(store, extensions=False).close()
    with sqlite3.connect(store) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('records-99', 0)")
    out = app_bench("--store", str(store), "--runs", "1", "--queries", "0", "--json")
    assert out.returncode != 0
    assert "showed a dialog, not the Query screen: The store cannot be opened:" in out.stderr
    assert "records-99" in out.stderr and "NoMatches" not in out.stderr


def test_another_checkouts_cold_starts_are_timed_alone(tmp_path: Path):
    out = app_bench("--store", str(tmp_path / "s.db"), "--code", str(tmp_path), "--queries", "3")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].endswith("--code times another checkout's cold starts alone: add --queries 0")
    assert not (tmp_path / "s.db").exists()


def test_a_cold_start_reports_the_items_the_app_counted(demo_copy: Path):
    """With --queries 0 the report's item count is the one the app's header showed (the harness
    does not open the store with its own code)."""
    out = app_bench("--store", str(demo_copy), "--runs", "1", "--queries", "0", "--code", str(ROOT), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    with Memory(demo_copy) as mem:
        assert report["items"] == mem.counts().items > 0
    assert report["cold_start"]["median_s"] > 0 and report["query_to_rendered"] == {}


def test_no_cold_start_to_time_is_one_line(tmp_path: Path):
    out = app_bench("--store", str(tmp_path / "s.db"), "--runs", "0", "--queries", "0")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].endswith("--runs: at least one cold start to time")
    assert not (tmp_path / "s.db").exists()
