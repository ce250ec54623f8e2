"""Feedback: validation, trust, co-access edges with decay that prunes, persistence."""

import json

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import IngestFailed, Memory
from mnemoscope.engine.rank import FeedbackError
from mnemoscope.engine.transfer import write_records

DAY = 86_400.0


def shown(rec):
    return [h.item.id for h in rec.hits]


def events(mem):
    return mem.store.count_feedback()


def test_a_token_that_is_not_this_stores_is_rejected_and_nothing_is_written(mem, tmp_path):
    with pytest.raises(FeedbackError, match="is not a recall token"):
        mem.feedback("no-such-token", [1])
    rec = mem.recall("border collie dog", strategy="fused")
    head, body, signature = rec.token.split(".")
    altered = f"{head}.{body[:-2]}{'A' if body[-2] != 'A' else 'B'}{body[-1]}.{signature}"
    with pytest.raises(FeedbackError, match="not made by this store, or was altered"):
        mem.feedback(altered, shown(rec)[:1])
    with Memory(tmp_path / "other.db", fused_signals="") as other:  # another store has another key
        with pytest.raises(FeedbackError, match="not made by this store"):
            other.ranker.feedback(rec.token, shown(rec)[:1])
    assert events(mem) == 0


def test_ids_that_were_not_shown_are_rejected(mem):
    rec = mem.recall("border collie dog", strategy="fused", top_k=3)
    stray = max(mem.index.slot_of) if max(mem.index.slot_of) not in shown(rec) else min(mem.index.slot_of)
    with pytest.raises(FeedbackError, match="were not shown"):
        mem.feedback(rec.token, [stray])
    with pytest.raises(FeedbackError, match="both used and ignored"):
        mem.feedback(rec.token, shown(rec)[:1], shown(rec)[:1])
    assert events(mem) == 0
    mem.feedback(rec.token, shown(rec)[:1])  # the token survived the rejected attempts
    assert events(mem) == 1


def test_a_token_takes_one_feedback_and_expires(mem):
    rec = mem.recall("border collie dog", strategy="fused")
    first = mem.feedback(rec.token, shown(rec)[:1])
    with pytest.raises(FeedbackError, match=f"already used \\(feedback event {first.event_id}\\)"):
        mem.feedback(rec.token, shown(rec)[:1])
    old = mem.recall("border collie dog", strategy="fused")
    ttl = mem.settings.token_ttl_hours * 3600
    with pytest.raises(FeedbackError, match="expired"):
        mem.ranker.feedback(old.token, shown(old)[:1], now=mem.ranker.read_token(old.token).created_at + ttl + 1)
    assert events(mem) == 1


def test_a_token_carries_the_shown_features_and_recall_writes_nothing(mem):
    before = mem.store.data_version(), mem.store.ranker_generation()
    rec = mem.recall("sourdough bread class", strategy="fused")
    carried = mem.ranker.read_token(rec.token)
    assert (mem.store.data_version(), mem.store.ranker_generation()) == before
    assert carried.query == "sourdough bread class" and carried.shown == shown(rec)
    assert carried.features is not None and carried.features.shape == (len(rec.hits), len(mem.ranker.names))
    bm25 = mem.ranker.names.index("bm25")
    assert carried.features[:, bm25] == pytest.approx([h.features["bm25"] for h in rec.hits], abs=1e-3)
    assert mem.ranker.read_token(mem.recall("sourdough", strategy="bm25").token).features is None


def test_shown_but_unused_counts_as_ignored_and_moves_trust(mem):
    rec = mem.recall("sourdough bread", strategy="fused")
    used = shown(rec)[2]
    result = mem.feedback(rec.token, [used])
    assert result.used == [used]
    assert set(result.ignored) == set(shown(rec)) - {used}
    trust = {i: t for i, t, _, _ in mem.store.trust_rows()}
    assert trust[used] > 0.5 and all(trust[i] < 0.5 for i in result.ignored)


def test_trust_decays_toward_neutral(mem):
    state = mem.ranker.feedback_state
    rec = mem.recall("sourdough bread", strategy="fused")
    used = shown(rec)[0]
    mem.ranker.feedback(rec.token, [used], now=1_000.0 * DAY)
    fresh = state.trust_and_uses(mem.index.item_ids[[mem.index.slot_of[used]]])[0][0]
    state.clock += 365 * DAY
    aged = state.trust_and_uses(mem.index.item_ids[[mem.index.slot_of[used]]])[0][0]
    assert fresh > 0 and 0 < aged < fresh / 4


def test_coaccess_edges_strengthen_then_decay_and_are_pruned(mem):
    start = 1_000.0 * DAY
    rec = mem.recall("sourdough bread class", strategy="fused")
    a, b = sorted(shown(rec)[:2])
    mem.ranker.feedback(rec.token, [a, b], now=start)
    rec = mem.recall("sourdough bread class", strategy="fused")
    mem.ranker.feedback(rec.token, [a, b], now=start + 1)
    (x, y, w, _), = mem.store.coaccess_edges()
    assert (x, y) == (a, b) and w == pytest.approx(0.3 + 0.3 * 0.7)
    later = start + 400 * DAY  # many half-lives: the edge decays under the prune threshold
    rec = mem.recall("border collie dog", strategy="fused")
    result = mem.ranker.feedback(rec.token, shown(rec)[:1], now=later)
    assert result.edges_pruned == 1
    assert mem.store.coaccess_edges() == [] and len(mem.ranker.feedback_state.edges) == 0


def test_coaccess_feature_reaches_the_partner_of_a_candidate(mem):
    rec = mem.recall("sourdough bread class", strategy="fused")
    a, b = shown(rec)[0], shown(rec)[1]
    mem.feedback(rec.token, [a, b])
    rec = mem.recall("sourdough bread class", strategy="fused")
    features = {h.item.id: h.features for h in rec.hits}
    assert features[a]["coaccess"] > 0 and features[b]["coaccess"] > 0


def test_deleting_an_item_takes_its_edges_and_trust(mem):
    rec = mem.recall("sourdough bread class", strategy="fused")
    a, b = shown(rec)[:2]
    mem.feedback(rec.token, [a, b])
    report = mem.delete_item(a, dry_run=True)
    assert report["coaccess_edges"] == 1 and report["trust_rows"] == 1
    mem.delete_item(a)
    assert mem.store.coaccess_edges() == []
    assert a not in {i for i, *_ in mem.store.trust_rows()}
    assert mem.recall("sourdough bread class", strategy="fused").hits


def test_learning_survives_reopening(mem):
    for _ in range(3):
        rec = mem.recall("sourdough bread class", strategy="fused")
        mem.feedback(rec.token, shown(rec)[3:4])
    before = mem.ranker.status()
    hits = shown(mem.recall("sourdough bread class", strategy="fused"))
    path = mem.path
    mem.close()
    with Memory(path, fused_signals="") as again:
        after = again.ranker.status()
        assert (after.events, after.lam, after.model_steps) == (before.events, before.lam, before.model_steps)
        assert (after.train_pairs, after.held_out_pairs) == (before.train_pairs, before.held_out_pairs)
        assert shown(again.recall("sourdough bread class", strategy="fused")) == hits


def test_feedback_from_another_process_is_picked_up(mem):
    rec = mem.recall("sourdough bread class", strategy="fused")
    with Memory(mem.path, fused_signals="") as other:
        other.feedback(rec.token, shown(rec)[:1])
    mem.recall("anything", strategy="fused")  # refreshes
    assert mem.ranker.status().events == 1


def test_export_and_import_carry_trust_and_coaccess_edges(mem, tmp_path):
    rec = mem.recall("sourdough bread class", strategy="fused")
    a, b = shown(rec)[:2]
    mem.feedback(rec.token, [a, b])
    mem.export(tmp_path / "export.jsonl")
    with Memory(tmp_path / "copy.db", fused_signals="") as copy:
        copy.import_(tmp_path / "export.jsonl")
        keys = {i.id: i.key for s in copy.sources() for i in copy.source_items(s.id)}
        (x, y, w, _), = copy.store.coaccess_edges()
        original = {i.id: i.key for s in mem.sources() for i in mem.source_items(s.id)}
        assert {keys[x], keys[y]} == {original[a], original[b]} and w == pytest.approx(0.3)
        assert len(copy.store.trust_rows()) == len(mem.store.trust_rows())
        assert copy.ranker.status().coaccess_edges == 1


def test_export_and_import_carry_the_feedback_log_and_what_it_taught(mem, tmp_path):
    rec = mem.recall("sourdough bread class", strategy="fused")
    marked = shown(rec)[-1]
    mem.feedback(rec.token, [marked])
    other = mem.recall("border collie dog", strategy="fused")
    withdrawn = mem.feedback(other.token, shown(other)[-1:]).event_id
    mem.ranker.undo(withdrawn)
    mem.export(tmp_path / "export.jsonl")
    with Memory(tmp_path / "copy.db", fused_signals="") as copy:
        copy.import_(tmp_path / "export.jsonl")
        log = copy.ranker.feedback_log()
        assert [(e.query, e.withdrawn_at is not None) for e in log] == [("border collie dog", True),
                                                                        ("sourdough bread class", False)]
        assert [e.features is not None for e in log] == [True, True]
        top = copy.recall("sourdough bread class", strategy="fused").hits[0]
        assert top.item.text == mem.items([marked])[marked].text and top.taught is not None
        assert copy.ranker.status().model_steps == mem.ranker.status().model_steps
        assert copy.store.trust_rows() and len(copy.store.trust_rows()) == len(mem.store.trust_rows())
        copy.import_(tmp_path / "export.jsonl")  # the same export again adds no event
        assert len(copy.ranker.feedback_log()) == 2


@pytest.mark.parametrize("field, value, says", [
    ("used", [10**9], "used and ignored ids must be among the shown ones"),
    ("features", "not base64!", "features are not base64"),
    ("features", "AAAA", "features hold 3 bytes"),
    ("created_at", None, "created_at missing or not a number"),
])
def test_a_bad_feedback_record_in_an_export_is_one_line_and_imports_nothing(mem, tmp_path, field, value, says):
    rec = mem.recall("sourdough bread class", strategy="fused")
    mem.feedback(rec.token, shown(rec)[:1])
    mem.export(tmp_path / "export.jsonl")
    records = [json.loads(text) for text in (tmp_path / "export.jsonl").read_text().splitlines()[:-1]]
    line = next(n for n, r in enumerate(records, 1) if r["type"] == "ranker_feedback")
    records[line - 1][field] = value
    write_records(tmp_path / "bad.jsonl", records)
    with Memory(tmp_path / "copy.db", fused_signals="") as copy:
        with pytest.raises(IngestFailed, match=rf"bad.jsonl:{line}: ranker_feedback record: {says}"):
            copy.import_(tmp_path / "bad.jsonl")
        assert copy.sources() == [] and copy.ranker.feedback_log() == []


def test_a_corrupt_ranker_record_in_an_export_is_one_line_and_imports_nothing(mem, tmp_path, capsys):
    rec = mem.recall("sourdough bread class", strategy="fused")
    mem.feedback(rec.token, shown(rec)[:2])
    mem.export(tmp_path / "export.jsonl")
    lines = (tmp_path / "export.jsonl").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if '"ranker_trust"' in text)
    record = json.loads(lines[line - 1])
    del record["uses"]
    lines[line - 1] = json.dumps(record)
    write_records(tmp_path / "bad.jsonl", [json.loads(text) for text in lines[:-1]])  # sealed again
    with Memory(tmp_path / "copy.db", fused_signals="") as copy:
        with pytest.raises(IngestFailed, match=rf"bad.jsonl:{line}: ranker_trust record: uses missing or not a number"):
            copy.import_(tmp_path / "bad.jsonl")
        assert copy.sources() == [] and copy.store.trust_rows() == []
    assert main(["--store", str(tmp_path / "cli.db"), "import", str(tmp_path / "bad.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"bad.jsonl:{line}: ranker_trust record" in err
