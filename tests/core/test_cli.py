"""The command line, in process (as a process where the operating system is the point): every store command,
and every bad input exits 2 with one line."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.app.cli.parsing import Parser
from tests.support.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def run(store, *argv):
    return cli("--store", store, *argv)


@pytest.fixture
def store(tmp_path, corpus):
    path = tmp_path / "cli.db"
    code, _ = run(path, "ingest", str(corpus))
    assert code == 0
    return path


def test_ingest_reports_json(tmp_path, corpus):
    code, out = run(tmp_path / "s.db", "ingest", str(corpus), "--json")
    payload = json.loads(out)
    assert code == 0 and payload["items"] > 0
    assert sorted(s["status"] for s in payload["sources"]) == ["added", "added"]


def test_store_from_the_environment(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("MNEMOSCOPE_STORE", str(tmp_path / "env.db"))
    assert cli("ingest", corpus)[0] == 0
    assert (tmp_path / "env.db").exists()


def test_recall_text_and_json(store):
    code, out = run(store, "recall", "feed the starter", "--strategy", "bm25", "--top-k", "2")
    assert code == 0 and out.splitlines()[0].startswith("2 hit(s)") and "Feed the starter" in out
    code, out = run(store, "recall", "marathon", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["hits"][0]["item"]["speaker"] == "Daniel"
    assert {"query", "strategy", "hits", "timings"} <= payload.keys()


def test_stats_export_import_delete_clear_reindex(store, tmp_path):
    code, out = run(store, "stats", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["sources"] == 2 and stats["items"] > 0
    text = run(store, "stats")[1]
    assert "dense_weight: 0.1" in text and "dense_calibration: –" in text  # the store's own LSA: not calibrated
    export = tmp_path / "e.jsonl"
    code, out = run(store, "export", str(export))
    assert code == 0 and out.startswith(f"wrote {len(export.read_text().splitlines()) - 1} record(s)")  # and a trailer
    code, out = run(tmp_path / "copy.db", "import", str(export))
    assert code == 0 and "2 added" in out
    code, out = run(store, "reindex")
    assert code == 0 and out.startswith(f"reindexed {stats['items']} item(s)")
    item_id = json.loads(run(store, "recall", "marathon", "--json")[1])["hits"][0]["id"]
    code, out = run(store, "delete", str(item_id), "--dry-run", "--json")
    assert code == 0 and json.loads(out)["items"] == 1
    assert run(store, "delete", str(item_id))[0] == 0
    assert run(store, "delete", "source:1")[0] == 0
    assert run(store, "clear", "--yes") == (0, "store cleared\n")
    assert json.loads(run(store, "stats", "--json")[1])["items"] == 0


def bad_inputs(tmp_path, corpus):
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01binary")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    (tmp_path / "latin.md").write_bytes(b"# T\ncaf\xe9\n")
    (tmp_path / "nothing.txt").write_text("\x1b\x07\u200b \u2066\n")  # fails before: stored, an item showing nothing
    (tmp_path / "bad.json").write_text('[{"conversation": {"session_1": [\n{"speaker": "A"\n]}}]', encoding="utf-8")
    (tmp_path / "missing.json").write_text(json.dumps(
        {"conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1"}]}}, indent=1), encoding="utf-8")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "ok.md").write_text("# Fine\nA good file.", encoding="utf-8")
    (mixed / "broken.jsonl").write_text('{"speaker": "A", "text": "x"}\n{nope}\n', encoding="utf-8")
    return {
        "missing file": (["ingest", str(tmp_path / "nope.md")], "no such file"),
        "binary": (["ingest", str(tmp_path / "bin.txt")], "binary file"),
        "non-utf8": (["ingest", str(tmp_path / "latin.md")], "latin.md:2: not UTF-8"),
        "nothing shown": (["ingest", str(tmp_path / "nothing.txt")], "nothing.txt: the file shows nothing (only control"),
        "malformed json": (["ingest", str(tmp_path / "bad.json")], "bad.json:3: malformed JSON"),
        "missing fields": (["ingest", str(tmp_path / "missing.json")], "missing field(s) text"),
        "mixed folder": (["ingest", str(mixed)], "broken.jsonl:2: malformed JSON"),
        "empty query": (["recall", "  "], "the query is empty"),
        "1 MB query": (["recall", "x" * 1_000_000], "the limit is"),
        "unknown strategy": (["recall", "hi", "--strategy", "nope"], "unknown strategy"),
        "image strategy, no model": (["recall", "hi", "--strategy", "image"], "needs an image embedding model"),
        "unknown item": (["delete", "99999"], "no item with id 99999"),
        "bad id": (["delete", "abc"], "is not an item id"),
        "clear without yes": (["clear"], "run it again with --yes"),
        "bad import": (["import", str(tmp_path / "bad.json")], "has no export trailer"),
        "missing import": (["import", str(tmp_path / "none.jsonl")], "no such file"),
        "empty import": (["import", str(tmp_path / "empty.jsonl")], "empty.jsonl: is empty"),
        "folder import": (["import", str(mixed)], "mixed: is a folder"),
        "bad setting": (["eval", "locomo", str(tmp_path / "none.json"), "--set", "bm25_k1=abc"], "bm25_k1: 'abc' is not a number"),
        # a filter naming nothing listed "0 fact(s)", exit 0: a typo read as "none there" (review, newcomer tour)
        "unknown entity": (["facts", "--entity", "Zzqx"], "no entity is named 'Zzqx' or has it in its name"),
        "unknown entity id": (["facts", "--entity", "99999"], "no entity with id 99999"),
        "unknown source": (["episodes", "--source", "99"], "no source with id 99 (`mnemoscope sources` lists them)"),
        "unknown kind": (["entities", "--kind", "nonsense"], "--kind 'nonsense' is no kind of entity; choose one of: speaker,"),
    }


CASES = ["missing file", "binary", "non-utf8", "nothing shown", "malformed json", "missing fields", "mixed folder", "empty query",
         "1 MB query", "unknown strategy", "image strategy, no model", "unknown item", "bad id", "clear without yes", "bad import",
         "missing import", "empty import", "folder import", "bad setting", "unknown entity", "unknown entity id",
         "unknown source", "unknown kind"]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_exits_2_with_one_line_and_leaves_the_store_unchanged(case, store, tmp_path, corpus, capsys, checksum):
    argv, expected = bad_inputs(tmp_path, corpus)[case]
    before = checksum(store)
    capsys.readouterr()
    code, out = run(store, *argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("mnemoscope: error: ") and expected in err, err
    assert "Traceback" not in err and out == ""
    assert checksum(store) == before


def test_an_entity_mistyped_is_refused_with_the_names_nearest_to_it(demo_copy, capsys):
    code, out = run(demo_copy, "facts", "--entity", "Mya")
    assert code == 2 and out == ""
    assert capsys.readouterr().err == "mnemoscope: error: no entity is named 'Mya' or has it in its name; did you mean 'Maya'?\n"
    code, out = run(demo_copy, "facts", "--entity", "aya")  # a part of a name lists that entity's facts
    assert code == 0 and out.startswith("95 fact(s)"), out[:80]


def test_a_mixed_folder_skips_unsupported_files(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nSome text.", encoding="utf-8")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n")
    code, out = run(tmp_path / "s.db", "ingest", str(folder), "--json")
    assert code == 0 and json.loads(out)["skipped"] == [str(folder / "photo.png")]


@pytest.mark.parametrize("value", ["0", "-3"])
def test_top_k_out_of_range_names_the_range_the_command_accepts(store, capsys, value):
    capsys.readouterr()
    code, _ = run(store, "recall", "hi", "--top-k", value)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"argument --top-k: expected a whole number from 1 to 9223372036854775807, not '{value}'" in err, err


@pytest.mark.parametrize("argv, given", [(["recall", "hi", "--as-of", ""], "''"),
                                         (["facts", "--as-of", "2023-13-01"], "'2023-13-01'"),
                                         (["recall", "hi", "--as-of", "2" * 100_000], repr("2" * 40))],
                         ids=["empty", "no such month", "100k characters"])
def test_an_as_of_that_is_no_date_is_one_short_line_naming_the_flag(store, capsys, checksum, argv, given):
    """An empty --as-of (``--as-of "$DATE"``, the variable unset) answered about now as if no date
    had been asked; a bad one was said as "as_of ..." (the code's name), and a 100,000-character
    one was echoed whole (fails before)."""
    before = checksum(store)
    capsys.readouterr()
    assert run(store, *argv) == (2, "")
    err = capsys.readouterr().err
    assert err == (f"mnemoscope {argv[0]}: error: argument --as-of: expected a date such as 2023-06-01, 2023-06 or 2023,"
                   f" not {given} (see mnemoscope {argv[0]} --help)\n")
    assert checksum(store) == before


def test_every_argument_says_what_it_is_for(capsys):
    with pytest.raises(TypeError, match="help"):
        Parser(prog="mnemoscope x").add_argument("--flag")
    assert main(["recall", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "how many hits to show" in shown and "print JSON" in shown


@pytest.mark.parametrize("argv", [["stats", "--json"], ["recall", "starter", "--json"]])
def test_a_reader_that_goes_away_is_no_traceback(store, argv):
    """`mnemoscope facts | head`: when whoever reads the output closes the pipe first, the command
    stops quietly, as `yes | head` does (exit 141, 128 + SIGPIPE), with no traceback. The pipe is
    closed before the command writes, so it always meets the closed pipe (a real process: the
    error comes from the operating system)."""
    command = subprocess.Popen([sys.executable, "-m", "mnemoscope", "--store", str(store), *argv], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert command.stdout is not None and command.stderr is not None
    command.stdout.close()
    err = command.stderr.read().decode()
    assert command.wait(timeout=120) == 141 and err == "", err


# Every command that opens a store and puts nothing in (each subcommand once).
NOTHING_IN = [["recall", "hello"], ["stats"], ["sources"], ["export", "{tmp}/backup.jsonl"], ["delete", "1"],
              ["clear", "--yes"], ["reindex"], ["facts"], ["entities"], ["episodes"], ["extract"],
              ["fact", "add", "A", "likes", "B", "--item", "1"], ["fact", "edit", "1", "--object", "C"],
              ["fact", "delete", "1"], ["entity", "rename", "1", "X"], ["entity", "merge", "A", "B"],
              ["entity", "split", "1", "A"], ["episode", "merge", "1", "2"], ["episode", "split", "1"],
              ["conflicts"], ["conflicts", "accept", "1"], ["conflicts", "undo", "1"], ["conflicts", "log"],
              ["conflicts", "rescan"], ["ranker", "status"], ["ranker", "reset", "--yes"],
              ["ranker", "export", "{tmp}/ranker.json"], ["feedback", "list"], ["feedback", "undo", "1"],
              ["feedback", "abc", "--used", "1"], ["topics"], ["images"]]


@pytest.mark.parametrize("argv", NOTHING_IN, ids=" ".join)
def test_a_command_that_puts_nothing_in_makes_no_store_at_a_mistyped_path(tmp_path, capsys, argv):
    """A mistyped --store made a new empty store and its folders, that answered "0 hit(s)" or
    exported a backup of nothing, exit 0 (review, session 20's F2; fails before for all but export).
    One line, exit 2, no store, folder or file made."""
    typo = tmp_path / "typo" / "memroy.db"
    capsys.readouterr()
    code, out = run(typo, *[a.format(tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and out == ""
    assert err == f"mnemoscope: error: no store at {typo}; nothing was done (a mistyped --store? ingest or import makes a store)\n"
    assert sorted(tmp_path.iterdir()) == []


def test_the_default_store_not_made_yet_is_said_and_not_made(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("MNEMOSCOPE_STORE", raising=False)
    capsys.readouterr()
    assert cli("recall", "hello") == (2, "")
    default = tmp_path / "data" / "mnemoscope" / "memory.db"
    assert capsys.readouterr().err == f"mnemoscope: error: no store at {default}; nothing was done (ingest or import makes a store)\n"
    assert not (tmp_path / "data").exists()


def test_the_supersession_rules_are_shown_before_any_store_is_made(tmp_path):
    """They are settings, not the store's (review, 07:44: a fresh install got "no store at")."""
    code, out = run(tmp_path / "none.db", "conflicts", "rules", "--json")
    assert code == 0 and "home" in json.loads(out)["slots"] and list(tmp_path.iterdir()) == []


def test_ingest_and_import_make_the_store_they_name(tmp_path, corpus):
    assert run(tmp_path / "new" / "a.db", "ingest", str(corpus))[0] == 0
    assert run(tmp_path / "new" / "a.db", "export", str(tmp_path / "e.jsonl"))[0] == 0
    assert run(tmp_path / "other" / "b.db", "import", str(tmp_path / "e.jsonl"))[0] == 0
    assert json.loads(run(tmp_path / "other" / "b.db", "stats", "--json")[1])["sources"] == 2


@pytest.fixture
def no_default_store(tmp_path, monkeypatch):
    """The default store's place under tmp_path, with nothing there and no MNEMOSCOPE_STORE."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("MNEMOSCOPE_STORE", raising=False)
    return tmp_path / "data"


def test_demo_is_the_demo_store_for_a_command_too(no_default_store):
    """`--demo recall` answered from the default store (an empty one made for it: "0 hit(s)"), as
    did every command but the app (fails before). Now each reads the demo content, in a store
    of its own that is gone when the command ends; the default store is not made."""
    code, out = cli("--demo", "recall", "where does Maya live now", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and hits and all(h["item"]["speaker"] for h in hits[:3])
    code, out = cli("--demo", "stats", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["sources"] == 5 and stats["items"] > 300
    code, out = cli("--demo", "conflicts", "--json")
    assert code == 0 and any("Sellwood" in json.dumps(c) for c in json.loads(out))
    assert not Path(stats["store"]).parent.exists() and not no_default_store.exists()


@pytest.mark.parametrize("argv, says", [
    (["ingest", "{tmp}"], "--demo is a temporary store, thrown away when the command ends: what ingest puts in would be lost"),
    (["import", "{tmp}/e.jsonl"], "what import puts in would be lost"),
    (["check"], "check examines a store file of yours"),
    (["eval", "locomo", "{tmp}/x.json"], "eval reads its own data into stores of its own: --demo has no meaning there"),
    (["bench", "--items", "10"], "bench builds a synthetic store of its own"),
    (["--store", "{tmp}/s.db", "stats"], "--demo opens a temporary store with the demo content and --store names another"),
], ids=["ingest", "import", "check", "eval", "bench", "store"])
def test_demo_where_it_cannot_be_is_one_line(tmp_path, capsys, no_default_store, argv, says):
    """Before, these read the default store or ignored --demo: check checked the person's own
    store, ingest put their files into it (fails before)."""
    capsys.readouterr()
    code, out = cli("--demo", *[a.format(tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
