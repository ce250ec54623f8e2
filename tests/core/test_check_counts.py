"""``mnemoscope check`` compares the counts the store keeps by triggers (sources and items,
``counts-1``; the knowledge totals, ``knowledge-9``; each entity's, ``knowledge-7``) with a
recount of the rows, says in one line which differ, and ``check --recount`` sets them to the
recount."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemoscope.engine.store import Store
from mnemoscope.engine.store.check import count_drifts, open_read_only
from tests.core.test_processes import make_sources, start_writer
from tests.core.test_record_counts import as_before_the_counts
from tests.support.cli import cli
from tests.support.stores import store_checksum


def kept(path: Path) -> dict[str, int]:
    """The kept counts as the store reads them for the app's header."""
    store = Store(path)
    try:
        return {**store.counts(), **store.knowledge_counts()}
    finally:
        store.close()


def alter(path: Path, *statements: str) -> None:
    """The store edited by hand, past its triggers' reach."""
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def differ(path: Path, listed: str) -> list[str]:
    """check's problem lines for kept counts that differ from a recount, ``listed``."""
    return [f"  problem: the kept counts differ from a recount ({listed}): the app shows them;"
            f" `mnemoscope --store {path} check --recount` sets them to the recount"]


def problems(path: Path) -> tuple[int, list[str]]:
    """check's exit code and problem lines."""
    code, out = cli("--store", path, "check")
    return code, [line for line in out.splitlines() if line.startswith("  problem:")]


def test_check_names_the_kept_counts_that_differ_from_a_recount_and_recount_sets_them(demo_copy: Path):
    code, out = cli("--store", demo_copy, "check")
    assert code == 0 and out.splitlines()[0] == f"{demo_copy}: ok" and "  the kept counts equal a recount" in out.splitlines()
    right = kept(demo_copy)
    assert right["items"] > 0 and right["facts"] > 0
    alter(demo_copy, "UPDATE record_counts SET items = items + 3", "UPDATE knowledge_totals SET facts = facts - 2")
    before = store_checksum(demo_copy)

    code, out = cli("--store", demo_copy, "check")
    lines = out.splitlines()
    assert code == 1 and lines[0] == f"{demo_copy}: 1 problem(s)" and "--salvage" not in out
    assert [line for line in lines if line.startswith("  problem:")] == differ(demo_copy, (
        f"items kept {right['items'] + 3}, counted {right['items']}; facts kept {right['facts'] - 2}, counted {right['facts']}"))
    assert store_checksum(demo_copy) == before  # check itself changes nothing

    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out == (f"recounted {demo_copy}: items {right['items']} (kept {right['items'] + 3}),"
                                 f" facts {right['facts']} (kept {right['facts'] - 2})\n")
    assert kept(demo_copy) == right
    code, out = cli("--store", demo_copy, "check")
    assert code == 0 and out.splitlines()[0] == f"{demo_copy}: ok"
    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out == f"{demo_copy}: the kept counts equal a recount; nothing changed\n"


def test_a_store_from_before_the_kept_counts_checks_ok_and_recount_adds_them(demo_copy: Path):
    """An older store lacks the table: check passes it over (the next open adds it, counted)."""
    right = kept(demo_copy)
    as_before_the_counts(demo_copy)
    code, out = cli("--store", demo_copy, "check")
    assert code == 0 and out.splitlines()[0] == f"{demo_copy}: ok"
    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out == (f"upgraded {demo_copy}: added the kept counts of sources and items and of each source's"
                                 " items, counted from every row; the rest equal a recount\n")
    assert kept(demo_copy) == right
    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out == f"{demo_copy}: the kept counts equal a recount; nothing changed\n"


def test_recount_and_salvage_together_are_one_clear_refusal(demo_copy: Path, tmp_path: Path, capsys):
    alter(demo_copy, "UPDATE record_counts SET sources = sources + 1")
    before = store_checksum(demo_copy)
    code, out = cli("--store", demo_copy, "check", "--recount", "--salvage", tmp_path / "rescue.jsonl")
    err = capsys.readouterr().err
    assert code == 2 and out == "" and err.count("\n") == 1 and "--salvage FILE or --recount, not both" in err
    assert store_checksum(demo_copy) == before and not (tmp_path / "rescue.jsonl").exists()


def kept_rows(path: Path, sql: str) -> list[tuple[int, ...]]:
    """The rows of a kept-counts table, read through a connection of its own."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def entity_counts(path: Path) -> list[tuple[int, ...]]:
    return kept_rows(path, "SELECT entity_id, items, facts FROM entity_counts ORDER BY entity_id")


def test_each_entitys_kept_counts_are_checked_and_recounted_in_one_line(demo_copy: Path):
    """The Facts screen's counts of each entity (knowledge-7): every entity's items off by one and
    the first's facts by two are one line naming the first five and counting the rest."""
    right = entity_counts(demo_copy)
    assert len(right) > 5 and right[0][2] > 0
    (first, items, facts), (second, second_items, _) = right[:2]
    alter(demo_copy, "UPDATE entity_counts SET items = items + 1", f"UPDATE entity_counts SET facts = facts + 2 WHERE entity_id = {first}")
    more = len(right) + 1 - 5

    code, found = problems(demo_copy)
    assert code == 1 and len(found) == 1
    assert found[0].startswith(f"  problem: the kept counts differ from a recount (entity {first}'s items kept {items + 1},"
                                  f" counted {items}; entity {first}'s facts kept {facts + 2}, counted {facts};"
                                  f" entity {second}'s items kept {second_items + 1}, counted {second_items}; ")
    assert f"; and {more} more): " in found[0]

    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out.startswith(f"recounted {demo_copy}: entity {first}'s items {items} (kept {items + 1}),"
                                        f" entity {first}'s facts {facts} (kept {facts + 2}),")
    assert out.endswith(f", and {more} more\n")
    assert entity_counts(demo_copy) == right
    code, out = cli("--store", demo_copy, "check")
    assert code == 0 and out.splitlines()[0] == f"{demo_copy}: ok"


def test_an_entity_without_its_kept_counts_or_counts_of_a_gone_entity_are_named_and_recounted(demo_copy: Path):
    """An entity with no row of kept counts is missing from the Facts screen's list (which reads
    the counts' index); a row of an entity that is gone is counted nowhere. Both are named, and
    ``--recount`` adds the one and drops the other."""
    right = entity_counts(demo_copy)
    assert len(right) > 1 and right[0][1] > 0
    (first, items, facts), gone = right[0], right[-1][0] + 100
    alter(demo_copy, f"DELETE FROM entity_counts WHERE entity_id = {first}",
          f"INSERT INTO entity_counts (entity_id, items, facts) VALUES ({gone}, 3, 1)")

    assert problems(demo_copy) == (1, differ(demo_copy, (
        f"entity {first}'s items not kept, counted {items}; entity {first}'s facts not kept, counted {facts};"
        f" entity {gone}'s items kept 3, the entity is gone; entity {gone}'s facts kept 1, the entity is gone")))

    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out == (f"recounted {demo_copy}: entity {first}'s items {items} (not kept),"
                                 f" entity {first}'s facts {facts} (not kept), entity {gone}'s items dropped (kept 3;"
                                 f" the entity is gone), entity {gone}'s facts dropped (kept 1; the entity is gone)\n")
    assert entity_counts(demo_copy) == right
    code, out = cli("--store", demo_copy, "check")
    assert code == 0 and out.splitlines()[0] == f"{demo_copy}: ok"


def test_each_sources_kept_count_of_items_is_checked_and_recounted(demo_copy: Path):
    """The Sources screen's column (counts-2): a count off, a source without its row."""
    right = source_counts(demo_copy)
    assert len(right) > 1 and right[0][1] > 0 and right[1][1] > 0
    (first, items), (second, second_items) = right[:2]
    alter(demo_copy, f"UPDATE source_counts SET items = items + 2 WHERE source_id = {first}",
          f"DELETE FROM source_counts WHERE source_id = {second}")

    assert problems(demo_copy) == (1, differ(demo_copy, (
        f"source {first}'s items kept {items + 2}, counted {items}; source {second}'s items not kept, counted {second_items}")))
    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out == (f"recounted {demo_copy}: source {first}'s items {items} (kept {items + 2}),"
                                 f" source {second}'s items {second_items} (not kept)\n")
    assert source_counts(demo_copy) == right


def source_counts(path: Path) -> list[tuple[int, ...]]:
    return kept_rows(path, "SELECT source_id, items FROM source_counts ORDER BY source_id")


def test_a_check_beside_a_writing_process_finds_no_difference(tmp_path: Path):
    """Each table's counts and their recount are one statement, one snapshot: another process
    committing sources all the while never makes them differ (two statements would, when a commit
    lands between them), each source's included."""
    store = tmp_path / "shared.db"
    Store(store).close()
    written = make_sources(tmp_path / "a", n_files=40, lines=8)
    writer = start_writer(store, tmp_path / "a")
    seen: set[int] = set()
    try:
        conn = open_read_only(store)
        try:
            while writer.poll() is None:
                assert count_drifts(conn) == []
                seen.add(conn.execute("SELECT items FROM record_counts").fetchone()[0])
        finally:
            conn.close()
    finally:
        writer.wait(timeout=180)
    assert writer.returncode == 0, writer.stderr.read()
    assert len(seen) > 2  # the checks ran while the sources were being written
    assert kept(store)["items"] == sum(written.values())


def test_the_stores_row_of_kept_counts_deleted_is_named_and_recount_restores_it(demo_copy: Path):
    """record_counts and knowledge_totals keep one row each: with it gone the header's counts cannot
    be read, so check names every count of it and --recount puts the row back, counted."""
    right = kept(demo_copy)
    alter(demo_copy, "DELETE FROM record_counts")
    code, out = cli("--store", demo_copy, "check")
    assert code == 1 and out.splitlines()[0] == f"{demo_copy}: 1 problem(s)", out
    code, out = cli("--store", demo_copy, "check", "--recount")
    assert code == 0 and out.startswith(f"recounted {demo_copy}: sources "), out
    assert kept(demo_copy) == right
    code, out = cli("--store", demo_copy, "check")
    assert code == 0 and out.splitlines()[0] == f"{demo_copy}: ok"
