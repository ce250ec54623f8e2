"""``mnemoscope feedback`` and ``ranker status|reset|export`` in process; bad input exits 2."""

import json

import pytest

from tests.support.cli import cli


def run(store, *argv):
    return cli("--store", store, *argv)


@pytest.fixture
def store(built_store, tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("MNEMOSCOPE_FUSED_SIGNALS", "")
    path = tmp_path / "cli.db"
    shutil.copy(built_store, path)
    return path


def recall(store, query="sourdough bread class"):
    code, out = run(store, "recall", query, "--strategy", "fused", "--json")
    assert code == 0
    return json.loads(out)


def test_feedback_across_processes_then_status_and_export(store, tmp_path):
    rec = recall(store)
    used = [h["id"] for h in rec["hits"][1:3]]
    code, out = run(store, "feedback", rec["token"], "--used", ",".join(map(str, used)), "--json")
    payload = json.loads(out)
    assert code == 0 and payload["used"] == used and payload["ignored"] == [rec["hits"][0]["id"]]  # above the lowest used
    code, out = run(store, "ranker", "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["events"] == 1 and status["coaccess_edges"] == 1 and status["lam"] == 0
    code, out = run(store, "ranker", "status")
    assert code == 0 and out.startswith("state learning; λ 0.000; 1 feedback event(s)")
    code, _ = run(store, "ranker", "export", str(tmp_path / "ranker.json"))
    exported = json.loads((tmp_path / "ranker.json").read_text())
    assert code == 0 and len(exported["feedback"]) == 1 and exported["feedback"][0]["used"] == used


def test_the_ignored_ids_given_are_the_ignored_ones(store):
    """--ignored names the hits passed over; the others shown are neither used nor ignored (they
    were all counted as ignored whatever --ignored said)."""
    rec = recall(store)
    ids = [h["id"] for h in rec["hits"]]
    assert len(ids) >= 4
    code, out = run(store, "feedback", rec["token"], "--used", str(ids[1]), "--ignored", str(ids[0]), "--json")
    assert code == 0 and json.loads(out)["ignored"] == [ids[0]]
    rec = recall(store, "how do I feed a starter")
    code, out = run(store, "feedback", rec["token"], "--used", str(rec["hits"][0]["id"]), "--json")
    assert code == 0 and json.loads(out)["ignored"] == []  # without --ignored: none shown above the one used


def test_bad_feedback_exits_2_with_one_line(store, capsys):
    rec = recall(store)
    assert run(store, "feedback", "nope", "--used", "1")[0] == 2
    assert "is not a recall token" in capsys.readouterr().err
    assert run(store, "feedback", rec["token"], "--used", "x,y")[0] == 2
    assert "comma-separated item ids" in capsys.readouterr().err
    assert run(store, "feedback", rec["token"], "--used", "999999")[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "were not shown" in err
    assert json.loads(run(store, "ranker", "status", "--json")[1])["events"] == 0


def test_reset_needs_yes(store):
    rec = recall(store)
    run(store, "feedback", rec["token"], "--used", str(rec["hits"][0]["id"]))
    assert run(store, "ranker", "reset")[0] == 2
    assert run(store, "ranker", "reset", "--yes")[0] == 0
    assert json.loads(run(store, "ranker", "status", "--json")[1])["events"] == 0


def test_eval_learning_json_shape_on_the_demo_conversation(monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("MNEMOSCOPE_FUSED_SIGNALS", "")
    demo = Path(__file__).resolve().parents[2] / "assets" / "demo" / "conversation.json"
    code, out = cli("eval", "learning", demo, "--latency-items", "0", "--repeats", "12", "--json")
    assert code == 0
    r = json.loads(out)
    assert {"before", "after", "lambda", "curve", "repeated_query_mean_rank", "control"} <= r.keys()
    assert set(r["before"]["metrics"]) == set(r["after"]["metrics"]) == {"recall@10", "ndcg@10"}
    assert r["curve"] and r["curve"][0]["events"] == 10 and "lambda" in r["curve"][0]
    assert r["control"]["after"]["ndcg@10"] >= r["before"]["metrics"]["ndcg@10"] - 0.005
    single = r["repeated_query_mean_rank"]
    assert single["after"] <= single["before"]
    (one,) = r["per_conversation"]  # one conversation: its own figures are the pooled ones
    assert one["held_out_questions"] == r["held_out_questions"]
    assert one["ndcg@10"]["after"] == pytest.approx(r["after"]["metrics"]["ndcg@10"], abs=1e-4)
    assert one["ndcg@10"]["control"] == pytest.approx(r["control"]["after"]["ndcg@10"], abs=1e-4)


def corrupted(store, event_id: int) -> None:
    """Event ``event_id``'s used ids made unreadable behind the engine's back (a crash or another tool)."""
    import sqlite3

    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE feedback_events SET used = '[1,' WHERE id = ?", (event_id,))
    conn.close()


def taught_twice(store) -> list[dict]:
    """Two feedback events; the recalls that gave them."""
    recs = [recall(store), recall(store, "what did Maya bake")]
    for rec in recs:
        assert run(store, "feedback", rec["token"], "--used", str(rec["hits"][1]["id"]))[0] == 0
    return recs


def test_a_feedback_event_that_cannot_be_read_is_listed_as_such_and_left_out_of_exports(store, tmp_path, caplog):
    """Before, `feedback list` said "no feedback yet" for a log holding two events, `ranker export`
    wrote none of them, and `export` ended in a traceback (exit 1): the whole store could not be
    backed up for one row. Now the list names the event that cannot be read, and both exports
    write what can be read and say what they left out."""
    taught_twice(store)
    corrupted(store, 1)
    code, out = run(store, "feedback", "list")
    assert code == 0 and out.splitlines()[1] == "    1  feedback event 1 cannot be read (Expecting value: line 1 column 4 (char 3))"
    assert out.splitlines()[0].startswith("    2  ") and "'what did Maya bake'" in out.splitlines()[0]
    listed = json.loads(run(store, "feedback", "list", "--json")[1])
    assert [row["event_id"] for row in listed] == [2, 1] and "cannot be read" in listed[1]["unreadable"]
    code, out = run(store, "ranker", "export", str(tmp_path / "ranker.json"))
    exported = json.loads((tmp_path / "ranker.json").read_text())
    assert code == 0 and [e["id"] for e in exported["feedback"]] == [2]
    assert exported["unreadable_feedback"] == ["feedback event 1 cannot be read (Expecting value: line 1 column 4 (char 3))"]
    assert "1 feedback event(s); left out, as they cannot be read: feedback event 1" in out
    caplog.clear()
    code, _ = run(store, "export", str(tmp_path / "all.jsonl"))
    assert code == 0 and "feedback event 1 cannot be read (Expecting value: line 1 column 4 (char 3)); left out of the export" in caplog.text
    records = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()]
    assert [r["query"] for r in records if r["type"] == "ranker_feedback"] == ["what did Maya bake"]
    assert sum(r["type"] == "item" for r in records) > 0


def test_a_feedback_event_that_cannot_be_read_is_removed_by_its_undo_and_the_others_count_again(store):
    """Before, `feedback undo 1` on an event that cannot be read was refused, as was every other
    undo, and only `ranker reset`, which forgets every event, brought feedback back (fails
    before). Now its undo deletes that row; what was learned is rebuilt from the rest."""
    marked = taught_twice(store)[1]["hits"][1]["id"]
    assert recall(store, "what did Maya bake")["hits"][0]["id"] == marked
    corrupted(store, 1)
    assert recall(store, "what did Maya bake")["hits"][0]["id"] != marked  # no feedback counts
    status = json.loads(run(store, "ranker", "status", "--json")[1])
    assert status["state"].startswith("no feedback") and "`mnemoscope feedback undo 1` removes that event" in status["state"]
    code, out = run(store, "feedback", "undo", "1")
    assert code == 0 and out.startswith("feedback event 1 cannot be read (Expecting value: line 1 column 4 (char 3)): "
                                        "removed from the log, the other events kept; λ "), out
    assert out.endswith("; recall uses their feedback again\n"), out
    status = json.loads(run(store, "ranker", "status", "--json")[1])
    assert status["events"] == 1 and status["state"] == "learning"
    assert [row["event_id"] for row in json.loads(run(store, "feedback", "list", "--json")[1])] == [2]
    first = recall(store, "what did Maya bake")["hits"][0]
    assert first["id"] == marked and "feedback" in first["sources"]  # event 2 counts again


def test_with_two_events_that_cannot_be_read_the_undo_of_one_names_the_other(store):
    taught_twice(store)
    corrupted(store, 1)
    corrupted(store, 2)
    code, out = cli("--store", store, "feedback", "undo", "2", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["removed"].startswith("feedback event 2 cannot be read")
    assert "feedback event 1 cannot be read" in payload["still_unreadable"]
    assert run(store, "feedback", "undo", "1")[0] == 0
    assert json.loads(run(store, "ranker", "status", "--json")[1])["events"] == 0
