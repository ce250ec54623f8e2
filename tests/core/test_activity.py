"""The activity log: every kind of change leaves one line naming its client, inside the change's
own transaction; the log is bounded; and it is the feed another process follows."""

import io

from mnemoscope.app.cli import main
from mnemoscope.engine import Memory
from mnemoscope.engine.activity import ActivityEvent, changes_since


def actions(mem: Memory) -> list[tuple[str, str]]:
    return [(e.client, e.action) for e in reversed(mem.activity.recent())]


def test_each_kind_of_change_is_logged_with_its_client(tmp_path, corpus):
    store = tmp_path / "log.db"
    assert main(["--store", str(store), "ingest", str(corpus)], io.StringIO()) == 0
    with Memory(store) as mem:
        logged = actions(mem)
        assert logged[:2] == [("cli", "source.added"), ("cli", "facts.extracted")]
        assert sum(a == "source.added" for _, a in logged) == 2
        rec = mem.recall("feed the starter", strategy="fused")
        mem.feedback(rec.token, [rec.hits[0].item.id])
        fact = mem.knowledge.facts()[0]
        mem.knowledge.edit_fact(fact.id, predicate="says", dry_run=True)  # a dry run logs nothing
        mem.knowledge.edit_fact(fact.id, predicate="says")
        mem.delete_item(rec.hits[-1].item.id)
        mem.delete_source(mem.sources()[0].id)
        mem.ranker.reset()
        assert actions(mem)[len(logged):] == [("python", "feedback"), ("python", "fact.edited"), ("python", "item.deleted"),
                                              ("python", "source.deleted"), ("python", "ranker.reset")]
        newest = mem.activity.recent(1)[0]
        assert newest.describe() == "ranker reset"
        deleted = next(e for e in mem.activity.recent() if e.action == "source.deleted")
        assert deleted.count == len(deleted.removed) > 0 and deleted.subject.endswith((".md", ".txt"))


def test_the_log_is_bounded_and_its_ids_never_come_back(tmp_path):
    with Memory(tmp_path / "b.db", extensions=False) as mem:
        with mem.store.transaction():
            for n in range(6):
                mem.store.insert_activity(ActivityEvent("source.added", f"s{n}"), keep=3)
        assert [e.subject for e in mem.activity.recent()] == ["s5", "s4", "s3"]
        mem.add_note("after the pruning", "note:x")
        assert mem.activity.recent(1)[0].id == 7


def test_the_feed_folds_lines_into_one_change():
    def line(n, action, added=(), removed=()):
        return ActivityEvent(action, detail={"added": [[a, a] for a in added], "removed": [[r, r] for r in removed]}, id=n)

    events = [line(5, "source.added", added=[10, 11]), line(6, "source.replaced", added=[12], removed=[3, 11]),
              line(7, "feedback"), line(8, "source.added", added=[13])]
    change = changes_since(4, events, own={8})
    assert change.added == [10, 12] and change.removed == [3]  # 11 came and went; 13 is this memory's own
    assert change.reload == {"knowledge", "ranker"} and not change.everything
    assert changes_since(3, events, own=set()).everything  # line 4 was pruned: read everything again
    assert changes_since(4, [line(5, "store.cleared")], own=set()).everything
