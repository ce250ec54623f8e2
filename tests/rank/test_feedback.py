"""Feedback: validation, trust, co-access edges with decay that prunes, persistence."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable
from dataclasses import replace

import numpy as np
import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import IngestFailed, Memory
from mnemoscope.engine.rank import FeedbackError
from mnemoscope.engine.arrays import SlotMap
from mnemoscope.engine.errors import EmbeddingUnavailable
from mnemoscope.engine.rank import feedback as feedback_module
from mnemoscope.engine.rank import features as features_module
from mnemoscope.engine.rank.feedback import FeedbackParams, FeedbackState
from mnemoscope.engine.rank.marks import MarkPlan
from mnemoscope.engine.rank.service import RankerArea
from mnemoscope.engine.transfer import write_records
from tests.rank.conftest import SETTINGS

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
    unknown = list(range(10**9, 10**9 + 100_000))  # a list that long names five and counts the rest (fails before: five alone)
    with pytest.raises(FeedbackError, match=r"^used id\(s\) 1000000000, 1000000001, 1000000002, 1000000003, 1000000004"
                                            r" and 99,995 more were not shown by this recall$"):
        mem.feedback(rec.token, unknown)
    with pytest.raises(FeedbackError, match=r"^id\(s\) \d+, \d+ are both used and ignored$"):
        mem.feedback(rec.token, shown(rec)[:2], shown(rec)[:2])
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


def test_the_hits_shown_above_the_lowest_used_count_as_ignored_and_move_trust(mem):
    """Without a list of the ignored hits, those shown above the lowest used one were read and
    passed over; those below it may never have been read, and keep their trust."""
    rec = mem.recall("sourdough bread", strategy="fused")
    ids = shown(rec)
    assert len(ids) >= 5
    result = mem.feedback(rec.token, [ids[2]])
    assert result.used == [ids[2]] and result.ignored == ids[:2]
    trust = {i: t for i, t, _, _ in mem.store.trust_rows()}
    assert trust[ids[2]] > 0.5 and all(trust[i] < 0.5 for i in ids[:2])
    assert not trust.keys() & set(ids[3:])
    rec = mem.recall("sourdough bread", strategy="fused")  # with nothing used, every shown hit was passed over
    assert mem.feedback(rec.token, []).ignored == shown(rec)


def test_the_hits_below_the_one_used_keep_their_places_for_the_same_question(mem):
    """Review (session 22): one mark sank every other shown hit, so that for the same question
    the on-topic hits below the one used (the 6th to 9th) fell beneath turns about nothing asked.
    They were never passed over: asked again, they are shown as before, in the same order."""
    before = shown(mem.recall("sourdough bread", strategy="fused"))
    rec = mem.recall("sourdough bread", strategy="fused")
    assert len(before) >= 5
    mem.feedback(rec.token, [before[1]])
    after = shown(mem.recall("sourdough bread", strategy="fused"))
    assert after[0] == before[1] and [i for i in after if i in before[2:]] == before[2:]


def test_a_mark_is_corroborated_by_every_hit_its_recall_showed(mem):
    """A rewording is told by the hits it finds again of those the taught recall showed, whichever
    of them the person named as ignored: with one named, all ten count (they were two)."""
    rec = mem.recall("sourdough bread", strategy="fused")
    ids = shown(rec)
    assert len(ids) == 10
    mem.feedback(rec.token, [ids[2]], [ids[0]])
    assert "of these 10 hits again" in mem.ranker.feedback_effects()[0].untaught


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


def test_a_store_taught_under_another_feature_set_relearns_from_its_log_when_opened(mem):
    """A new signal changes the ranker's feature set (session 14's ``words`` did): the stored
    model cannot read the new vectors. Before, the learned state started afresh at the next open
    (no SGD step, no pair, an untrained answer prior) and the log's events no longer taught it.
    Now each event's shown hits are described again under the new features (as its recall
    described them: trust, uses and the prior as they were then) and learned in order, the new
    rows (beside the log: its own rows stay as shown) and state are written once, and status says so."""
    for text in ("sourdough bread class", "border collie dog", "what does Maya bake", "trip to Lisbon"):
        rec = mem.recall(text, strategy="fused")
        mem.feedback(rec.token, shown(rec)[3:5])
    before = mem.ranker.status()
    assert before.model_steps > 0 and before.held_out_pairs > 0 and mem.ranker.prior.trained
    assert "signal_answer" not in before.features
    hits = shown(mem.recall("sourdough bread class", strategy="fused"))
    taught = {e.id: e for e in mem.store.feedback_events() if e.features is not None}
    path = mem.path
    mem.close()
    with Memory(path, fused_signals="answer") as upgraded:
        after = upgraded.ranker.status()
        assert after.features == [*before.features[:-5], "signal_answer", *before.features[-5:]]
        assert (after.events, after.model_steps, after.train_pairs, after.held_out_pairs) == (
            before.events, before.model_steps, before.train_pairs, before.held_out_pairs)
        assert upgraded.ranker.prior.trained
        assert after.state == ("learning; the feature set changed (new signal_answer): relearned from its 4 feedback "
                               "event(s), 3 described again under the new features")  # one showed hits the marks moved
        kept = {e.id: e for e in upgraded.store.feedback_events() if e.features is not None}
        assert kept.keys() == taught.keys()
        for event_id, event in taught.items():  # the log's rows untouched
            assert kept[event_id].names == event.names and np.array_equal(kept[event_id].features, event.features)
        relearned = upgraded.store.described_feedback(after.features)
        assert relearned.keys() == taught.keys()
        for event_id, event in taught.items():  # described as the recall did, learned features included
            columns = [after.features.index(name) for name in event.names]
            assert np.allclose(relearned[event_id][:, columns], event.features, atol=1e-3)
        assert [(a.action, a.count) for a in upgraded.activity.recent(5) if a.action.startswith("ranker.")] == [("ranker.relearned", 3)]
        assert shown(upgraded.recall("sourdough bread class", strategy="fused"))[:1] == hits[:1]
    with Memory(path, fused_signals="answer") as again:  # read as written: not relearned again
        status = again.ranker.status()
        assert (status.state, status.model_steps, status.train_pairs) == ("learning", after.model_steps, after.train_pairs)


def test_a_relearning_overtaken_by_another_processs_feedback_relearns_again_with_it(mem):
    """Feedback another process (under the old feature set) gave between this process's load and
    its relearning is not lost: the relearning's write takes in that commit first, finds the log
    moved and relearns from all of it."""
    rec = mem.recall("sourdough bread class", strategy="fused")
    mem.feedback(rec.token, shown(rec)[3:4])
    mem.close()
    with Memory(mem.path, fused_signals="answer") as upgraded:
        assert upgraded.ranker.relearned == ""  # loaded, not relearned yet
        with Memory(mem.path, fused_signals="") as other:
            again = other.recall("border collie dog", strategy="fused")
            other.feedback(again.token, shown(again)[:1])
            taught = other.ranker.status()
        status = upgraded.ranker.status()
        assert status.state.endswith("relearned from its 2 feedback event(s), 2 described again under the new features")
        assert [e.names for e in upgraded.store.feedback_events()] == [taught.features] * 2  # as they were shown
        assert len(upgraded.store.described_feedback(status.features)) == 2
        assert (status.model_steps, status.train_pairs) == (taught.model_steps, taught.train_pairs)


def the_endpoint_fails(monkeypatch) -> Callable[[], None]:
    """Fused's feature build fails as the dense signal does under ``embedder = "openai"`` while the
    endpoint is down (describing hits again builds them); returns what makes it answer again."""
    build = features_module.build

    def endpoint_down(*args, **kwargs):
        raise EmbeddingUnavailable("embedding endpoint failed: HTTP 503")

    monkeypatch.setattr(features_module, "build", endpoint_down)
    return lambda: monkeypatch.setattr(features_module, "build", build)


def test_a_relearning_that_the_embedding_endpoint_holds_up_waits_and_status_still_answers(mem, monkeypatch):
    """Describing the events' hits again reads the dense signal, which under ``embedder = "openai"``
    asks the endpoint: while it fails, status says the relearning waits (the state starts afresh
    meanwhile), and the next use relearns."""
    rec = mem.recall("sourdough bread class", strategy="fused")
    mem.feedback(rec.token, shown(rec)[3:5])
    mem.close()
    with Memory(mem.path, fused_signals="answer") as upgraded:
        answers_again = the_endpoint_fails(monkeypatch)
        waiting = upgraded.ranker.status()
        assert waiting.state == ("learning; the feature set changed: relearning from the log waits for the endpoint "
                                 "(embedding endpoint failed: HTTP 503)") and waiting.model_steps == 0
        answers_again()
        assert upgraded.ranker.status().state.endswith("relearned from its 1 feedback event(s), 1 described again "
                                                       "under the new features")


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


def _same_recall(a, b):
    assert shown(a) == shown(b)
    assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits], rel=1e-9, abs=1e-12)
    assert [h.taught for h in a.hits] == [h.taught for h in b.hits]
    for x, y in zip(a.hits, b.hits):
        assert x.features.keys() == y.features.keys()
        assert list(x.features.values()) == pytest.approx(list(y.features.values()), rel=1e-9, abs=1e-12)


def test_a_store_taught_event_by_event_recalls_as_one_opened_afresh_on_its_log(mem):
    """What recall reads of the feedback log grows with each event instead of being rebuilt; a
    store opened afterwards builds it from the whole log. Both must answer the same, also after
    an ingest (which changes the IDF weights the indexes hold) and an undo."""
    questions = ["sourdough bread class", "border collie dog", "what does Maya bake", "marathon training plan",
                 "sourdough starter feeding", "Maya's dog"]
    taught = []
    for n, text in enumerate(questions):
        rec = mem.recall(text, strategy="fused")
        taught.append(mem.feedback(rec.token, shown(rec)[n % 3:n % 3 + 2]).event_id)
        if n == 3:
            mem.add_note("Maya's collie waits by the oven while the sourdough bakes", title="oven")
        if n == 4:
            mem.ranker.undo(taught[1])
        with Memory(mem.path, **SETTINGS) as fresh:
            for probe in questions:
                _same_recall(mem.recall(probe, strategy="fused", top_k=20), fresh.recall(probe, strategy="fused", top_k=20))
    lifted = mem.recall(questions[-1], strategy="fused")
    assert lifted.hits[0].taught is not None and lifted.hits[0].features["feedback_match"] > 0
    assert any(h.features["trust"] > 0 for h in lifted.hits) and any(h.features["coaccess"] > 0 for h in lifted.hits)


def test_each_event_adds_its_own_words_to_the_used_for_rows_and_matches_a_fresh_build(mem):
    """The items' used-for rows take an event's (item, term) counts only, a term an item was used
    for before included: the IDF is looked up for them and nothing else, and the match equals a
    state built from all the counts at once, and the cosine of the counts written out in full."""
    index = mem.index
    asked = []

    def idf(terms):
        asked.append(len(terms))
        return index.bm25.idf(terms)

    version = (index.n_slots, index.n_items, len(index.vocab))
    grown = FeedbackState(FeedbackParams())
    items = index.item_ids[:12]
    probe = index.query_terms("Maya bakes sourdough for the dog")[0]
    events = [(slice(0, 2), "sourdough bread class"), (slice(1, 3), "what does Maya bake"),
              (slice(0, 1), "border collie dog"), (slice(0, 2), "Maya's sourdough and her dog")]
    counts = np.zeros((len(items), len(index.vocab)))
    for n, (used, text) in enumerate(events):
        terms = index.query_terms(text)[0]
        assert terms.size
        grown.add_query(items[used].tolist(), text, MarkPlan.of(index.plan(text), index.vocab))
        counts[used, terms[:, None]] += 1
        asked.clear()
        match = grown.feedback_match(items, probe, idf, version)
        assert sum(asked) == len(items[used]) * len(terms) + len(probe)  # a rebuild would look up every count held
        fresh = FeedbackState(FeedbackParams())
        for earlier, earlier_text in events[:n + 1]:
            fresh.add_query(items[earlier].tolist(), earlier_text, MarkPlan.of(index.plan(earlier_text), index.vocab))
        assert match == pytest.approx(fresh.feedback_match(items, probe, index.bm25.idf, version), rel=1e-12, abs=1e-15)
    assert counts.max() > 1  # an item was used twice for one term
    weights = index.bm25.idf(np.arange(len(index.vocab)))
    rows, query = counts * weights, np.zeros(len(index.vocab))
    query[probe] = weights[probe]
    norms = np.maximum(np.linalg.norm(rows, axis=1), 1e-12)
    assert match == pytest.approx(rows @ query / norms / np.linalg.norm(query), rel=1e-9, abs=1e-12)
    assert match[:3].min() > 0 and match[3:].max() == 0


def test_the_coaccess_walk_is_the_same_on_a_dense_and_a_sparse_transition(monkeypatch):
    """Few linked items walk on a dense array, many on a sparse matrix: the same walk either way."""
    rng = np.random.default_rng(5)
    ids = np.arange(1, 301)
    slot_of = SlotMap()
    slot_of.assign(ids, ids - 1)
    pairs = {tuple(sorted(p)) for p in rng.choice(ids, size=(400, 2)).tolist() if p[0] != p[1]}
    state = FeedbackState(FeedbackParams())
    state.load([], [(a, b, float(rng.uniform(0.2, 1.0)), 0.0) for a, b in sorted(pairs)], 0.0)
    seeds = np.sort(rng.choice(len(ids), size=40, replace=False))
    restart = rng.random(len(seeds))
    assert len(np.unique(list(pairs))) + 1 > feedback_module.DENSE_WALK  # the sparse transition
    sparse_walk = state.coaccess(slot_of, len(ids), seeds, restart)
    monkeypatch.setattr(feedback_module, "DENSE_WALK", 10_000)
    state.invalidate()
    dense_walk = state.coaccess(slot_of, len(ids), seeds, restart)
    assert sparse_walk.max() > 0 and dense_walk == pytest.approx(sparse_walk, rel=1e-9, abs=1e-12)


def taught_under_core_signals(mem: Memory) -> int:
    for text in ("sourdough bread class", "border collie dog", "what does Maya bake", "trip to Lisbon"):
        rec = mem.recall(text, strategy="fused")
        mem.feedback(rec.token, shown(rec)[3:5])
    return mem.ranker.status().model_steps


def test_an_undo_as_the_first_write_after_a_feature_change_keeps_the_other_events_learning(mem):
    """An undo rebuilds the state from the log: under a new feature set it describes the events
    again as the relearning does (from the review; before, it stored 0 steps and 0 pairs for good)."""
    steps = taught_under_core_signals(mem)
    assert steps > 0
    mem.close()
    with Memory(mem.path, fused_signals="answer") as upgraded:
        first = upgraded.store.feedback_events()[0].id
        upgraded.ranker.undo(first)  # the first thing this process does with the ranker
        status = upgraded.ranker.status()
    assert status.model_steps > 0 and status.train_pairs > 0
    with Memory(mem.path, fused_signals="answer") as again:
        assert (again.ranker.status().model_steps, again.ranker.status().train_pairs) == (
            status.model_steps, status.train_pairs)


def test_an_export_taught_under_another_feature_set_imports_with_its_learning(mem, tmp_path):
    """(from the review; before, the import stored 0 steps)"""
    steps = taught_under_core_signals(mem)
    assert steps > 0
    mem.export(tmp_path / "e.jsonl")
    with Memory(tmp_path / "copy.db", fused_signals="answer") as copy:
        copy.import_(tmp_path / "e.jsonl")
        status = copy.ranker.status()
    assert status.model_steps == steps


def test_while_the_endpoint_holds_the_relearning_up_a_write_of_the_state_is_refused_and_nothing_changes(
        mem, monkeypatch):
    """Feedback and undo build on the learned state; before, they stored the fresh one made
    without the log (and it was never relearned after). Now each is refused in one line, the
    store unchanged; a delete leaves the state to the relearning; once the endpoint answers the
    relearning keeps everything."""
    steps = taught_under_core_signals(mem)
    mem.close()
    with Memory(mem.path, fused_signals="answer") as upgraded:
        answers_again = the_endpoint_fails(monkeypatch)
        rec = upgraded.recall("sourdough bread class", strategy="bm25")
        before = (upgraded.store.ranker_state(), upgraded.store.ranker_generation(), upgraded.store.count_feedback())
        first = upgraded.store.feedback_events()[0]
        writes = [lambda: upgraded.ranker.feedback(rec.token, shown(rec)[:1]), lambda: upgraded.ranker.undo(first.id)]
        for write in writes:
            with pytest.raises(FeedbackError, match="waits for the embedding endpoint .*HTTP 503.*nothing was changed"):
                write()
            assert (upgraded.store.ranker_state(), upgraded.store.ranker_generation(),
                    upgraded.store.count_feedback()) == before
        upgraded.delete_item(first.ignored[0])
        assert upgraded.store.ranker_state() == before[0]
        answers_again()
        rec = upgraded.recall("sourdough bread class", strategy="bm25")
        upgraded.ranker.feedback(rec.token, shown(rec)[:1])
        status = upgraded.ranker.status()  # relearned without the deleted item's events' pairs
        assert status.events == 5 and 0 < status.model_steps < steps and status.train_pairs > 0
        assert [a.action for a in upgraded.activity.recent(3)] == ["feedback", "ranker.relearned", "item.deleted"]


def test_two_processes_with_two_feature_sets_keep_the_logs_rows_and_each_its_own_state(mem):
    """An app with one feature set beside a CLI with another: each relearns at its open, from
    the log's rows as they were shown (never rewritten), and each state is its set's."""
    steps = taught_under_core_signals(mem)
    rows = [(e.names, e.features) for e in mem.store.feedback_events()]
    core = mem.ranker.status().features
    assert [names for names, features in rows if features is not None] == [core] * 3
    mem.close()
    for _ in range(2):
        for signals in ("answer", ""):
            with Memory(mem.path, fused_signals=signals) as opened:
                status = opened.ranker.status()
                assert status.model_steps == steps and status.train_pairs > 0
                assert (signals == "answer") == ("signal_answer" in status.features)
                after = [(e.names, e.features) for e in opened.store.feedback_events()]
    assert rows and len(after) == len(rows)
    for (names, features), (names_after, features_after) in zip(rows, after):
        assert names == names_after and (features is None) == (features_after is None)
        assert features is None or np.array_equal(features, features_after)


def test_the_second_of_two_processes_relearning_the_same_store_says_another_process_relearned_it(mem):
    """Both opened the old store before either relearned: the second finds the first's state and
    says so (before: 'another process taught the ranker since…', which nobody did)."""
    steps = taught_under_core_signals(mem)
    mem.close()
    with Memory(mem.path, fused_signals="answer") as first, Memory(mem.path, fused_signals="answer") as second:
        assert first.ranker.relearned == second.ranker.relearned == ""
        assert first.ranker.status().state.endswith("described again under the new features")
        status = second.ranker.status()
        assert status.state == ("learning; the feature set changed (new signal_answer): relearned from its log by "
                                "another process meanwhile, read from the store")
        assert (status.model_steps, status.train_pairs) == (steps, first.ranker.status().train_pairs)


def test_a_relearning_describes_again_the_newest_events_only_and_says_so(mem):
    """Describing an event again is one fused feature build (tens of ms at a million items): a
    long log is relearned from its newest events' rows; the older teach the rest."""
    steps = taught_under_core_signals(mem)
    mem.close()
    with Memory(mem.path, fused_signals="answer") as upgraded:
        upgraded.ranker.mlp_params = replace(upgraded.ranker.mlp_params, relearn_newest=2)
        status = upgraded.ranker.status()
        assert status.state.endswith("described again under the new features (the newest 2 at most; the older teach "
                                     "trust, edges, the marks and the answer prior)")
        described = upgraded.store.described_feedback(status.features)
        newest = [e.id for e in upgraded.store.feedback_events()][-2:]
        assert described and set(described) <= set(newest)
        assert status.held_out_pairs + status.train_pairs > 0 and status.model_steps < steps
        assert upgraded.ranker.prior.trained


def test_the_warm_up_relearns_aside_and_recall_does_not_wait_for_it(mem, monkeypatch):
    """At a million items the relearning after a feature change took ~12 s of CPU, inside the
    first recall, and the app's first query waits for its warm-up. Now the warm-up starts it in a
    thread of its own: recall meanwhile ranks without the learned model (the marks still move
    hits), status says so, a write waits for it. Before, the warm-up did not start it and the
    recall ran it (this test's recall would wait for the held relearning)."""
    steps = taught_under_core_signals(mem)
    mem.close()
    started, release = threading.Event(), threading.Event()
    relearned = RankerArea._relearned

    def held(self, *args):
        started.set()
        assert release.wait(30)
        return relearned(self, *args)

    monkeypatch.setattr(RankerArea, "_relearned", held)
    with Memory(mem.path, fused_signals="answer") as upgraded:
        upgraded.warm_up()
        assert started.wait(5)
        answered = []
        asking = threading.Thread(target=lambda: answered.append(upgraded.recall("sourdough bread class", strategy="fused")))
        asking.start()
        asking.join(10)
        assert answered and answered[0].lam == 0.0 and answered[0].hits
        status = upgraded.ranker.status()
        assert status.state == ("learning; the feature set changed: relearning from the feedback log in the "
                                "background, recall ranks without the learned model until it ends")
        assert status.model_steps == 0
        release.set()
        upgraded.ranker.feedback(answered[0].token, shown(answered[0])[:1])  # waits for the relearning
        status = upgraded.ranker.status()
        assert status.events == 5 and status.model_steps >= steps
        assert "relearned from its 4 feedback event(s)" in status.state


def test_feedback_on_a_recall_that_showed_an_item_deleted_since_is_one_line_and_writes_nothing(mem):
    """Before: sqlite3.IntegrityError (FOREIGN KEY) from the deleted item's trust row."""
    rec = mem.recall("sourdough bread class", strategy="fused")
    hits = shown(rec)
    assert len(hits) > 5
    mem.delete_item(hits[5])
    generation = mem.store.ranker_generation()
    with pytest.raises(FeedbackError, match=f"item\\(s\\) {hits[5]} this recall showed were deleted since; recall again"):
        mem.feedback(rec.token, hits[:1])
    assert (events(mem), mem.store.ranker_generation()) == (0, generation)
    again = mem.recall("sourdough bread class", strategy="fused")
    assert mem.feedback(again.token, shown(again)[:1]).event_id > 0


READ_ONLY_STATUS = """
import json, os, sys
from mnemoscope.engine import Memory

def opened(path):
    with Memory(path, fused_signals="answer") as mem:
        status = mem.ranker.status()
        return [status.state, status.model_steps, len(mem.recall("sourdough bread class", strategy="fused").hits)]

opened(sys.argv[2])  # a writable copy first: every module this reads is imported before the user changes
if os.geteuid() == 0:  # root writes anything: become a user who may only read
    os.setgid(65534)
    os.setuid(65534)
print(json.dumps(opened(sys.argv[1])))
"""


def test_a_store_not_upgraded_to_keep_relearnings_opens_read_only_and_relearns_in_memory(mem, tmp_path):
    """A store taught before ranker-3 (the kept re-descriptions) could not be opened read-only at
    all: the upgrade needs a write ("needs a schema upgrade and is read-only"). It opens now, the
    ranker relearns in memory, status says so, and the file is not changed."""
    steps = taught_under_core_signals(mem)
    with mem.store.transaction():  # as a store made before ranker-3 was
        mem.store.conn.execute("DROP TABLE feedback_described")
        mem.store.conn.execute("DELETE FROM schema_migrations WHERE name = 'ranker-3'")
    mem.close()
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # outside pytest's private folders, so another user can read
    try:
        os.chmod(folder, 0o755)
        path = Path(shutil.copy(mem.path, folder / "old.db"))
        os.chmod(path, 0o444)
        before = path.read_bytes()
        scratch = shutil.copy(mem.path, tmp_path / "scratch.db")
        run = subprocess.run([sys.executable, "-c", READ_ONLY_STATUS, str(path), scratch], capture_output=True, text=True,
                             timeout=120, cwd=Path(__file__).parents[2],
                             env={**os.environ, "XDG_CONFIG_HOME": str(folder)})  # a config folder it may read
        assert run.returncode == 0, run.stderr
        state, model_steps, hits = json.loads(run.stdout.splitlines()[-1])
        assert state == ("learning; the feature set changed (new signal_answer): relearned from its 4 feedback event(s), "
                         "3 described again under the new features, in memory only: the store is read-only, and not "
                         "yet upgraded to keep a relearning (open it once with write access)")
        assert model_steps == steps and hits == 10
        assert path.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == ["old.db"]
    finally:
        shutil.rmtree(folder)


def test_a_damaged_kept_description_is_left_out_not_a_traceback_at_open(mem):
    """The relearning's kept descriptions are derived rows: one whose length is no whole number of
    hits (a damaged or hand-edited store) raised ValueError from the first status or recall; it is
    left out now: the stored model loads as written, and only that event's pairs are missing from
    the held buffers."""
    taught_under_core_signals(mem)
    mem.close()
    with Memory(mem.path, fused_signals="answer") as upgraded:
        relearned = upgraded.ranker.status()
    with sqlite3.connect(mem.path) as conn:
        conn.execute("UPDATE feedback_described SET features = substr(features, 1, length(features) - 3)"
                     " WHERE event_id = (SELECT MIN(event_id) FROM feedback_described)")
    with Memory(mem.path, fused_signals="answer") as damaged:
        status = damaged.ranker.status()
        assert damaged.recall("sourdough bread class", strategy="fused").hits
    assert status.model_steps == relearned.model_steps and 0 < status.train_pairs < relearned.train_pairs
