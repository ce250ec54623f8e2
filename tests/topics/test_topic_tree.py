"""The topic tree: shape, labels, small corpora, persistence, incremental assignment, rebuild faults."""

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.dense import l2_normalize
from mnemoscope.engine.topics import RebuildCancelled
from mnemoscope.engine.topics.graph import PARENT, CHILD, TopicGraph
from mnemoscope.engine.topics.tree import TopicTree, dag_parents, fit_tree, shape_for, softmax
from tests.support.stores import DEMO_DIR


def clustered(n_clusters=6, per=40, dim=16, seed=3):
    rng = np.random.default_rng(seed)
    centers = l2_normalize(rng.normal(size=(n_clusters, dim)))
    x = np.repeat(centers, per, axis=0) + 0.15 * rng.normal(size=(n_clusters * per, dim))
    return l2_normalize(x)


def test_fit_gives_path_ids_consistent_parents_and_no_tiny_leaves():
    x = clustered()
    shape = shape_for(len(x), leaf_size=24, min_leaf=4, max_leaves=1024, max_branch=8, max_depth=5)
    paths, parent, centroids, members = fit_tree(x, shape)
    for t, p in enumerate(parent):
        if p >= 0:
            assert paths[t].rsplit(".", 1)[0] == paths[p]
            assert p < t  # breadth first: parents before children
        else:
            assert "." not in paths[t]
    tree = TopicTree(paths, parent, centroids, paths, [[] for _ in paths])
    assert len(tree.leaves) > 1 and tree.depth.max() >= 2
    assert min(len(members[t]) for t in tree.leaves) >= 4
    top = [t for t in range(len(paths)) if parent[t] < 0]
    assert sum(len(members[t]) for t in top) == len(x)
    np.testing.assert_allclose(np.linalg.norm(centroids, axis=1), 1, atol=1e-5)


def test_the_tree_adapts_to_corpus_size():
    small = shape_for(30, 24, 4, 1024, 8, 5)
    large = shape_for(200_000, 24, 4, 1024, 8, 5)
    assert small.leaf_size < 24 and large.leaf_size > 24  # √n on small corpora; ≤ max_leaves on large ones
    paths, *_ = fit_tree(clustered(n_clusters=2, per=15), small)
    assert 2 <= len(paths) <= 12


def test_semantic_edges_never_join_a_topic_to_its_parent_child_or_sibling():
    x = clustered(n_clusters=8, per=30)
    paths, parent, centroids, _ = fit_tree(x, shape_for(len(x), 24, 4, 1024, 4, 5))
    tree = TopicTree(paths, parent, centroids, paths, [[] for _ in paths])
    graph = TopicGraph(tree, neighbors=6, min_cos=-1.0)
    assert sum(len(e) for e in graph.semantic) > 0
    for t, edges in enumerate(graph.semantic):
        family = set(graph.parents[t]) | set(graph.children[t]) | set(graph.siblings[t])
        assert not family & set(edges)
    assert graph.edge_count()["parent_child"] == int((parent >= 0).sum())


def test_dag_mode_adds_parents_one_level_up_and_never_crashes():
    x = clustered(n_clusters=8, per=30)
    paths, parent, centroids, _ = fit_tree(x, shape_for(len(x), 24, 4, 1024, 4, 5))
    tree = TopicTree(paths, parent, centroids, paths, [[] for _ in paths])
    extra = dag_parents(tree, tau=0.01)  # a low threshold: a dense DAG
    assert extra
    for t, ups in extra.items():
        assert all(tree.depth[u] == tree.depth[t] - 1 and u != parent[t] for u in ups)
    tree.extra_parents = extra
    graph = TopicGraph(tree, neighbors=4, min_cos=0.0)
    t, ups = next(iter(extra.items()))
    rels = dict(zip(graph.around[t].nodes.tolist(), graph.around[t].relations.tolist()))
    assert all(rels[u] == PARENT for u in ups)
    assert all(dict(zip(graph.around[u].nodes.tolist(), graph.around[u].relations.tolist()))[t] == CHILD for u in ups)


def test_softmax_is_stable_at_tiny_temperature_and_argmax_at_zero():
    s = np.array([1000.0, 999.0, -1000.0])
    p = softmax(s, 0.001)
    assert np.isfinite(p).all() and p[0] == pytest.approx(1.0)
    np.testing.assert_array_equal(softmax(s, 0.0), [1.0, 0.0, 0.0])


@pytest.mark.parametrize("n", [0, 1, 2])
def test_too_few_items_give_a_flat_tree_with_a_message(tmp_path, n):
    with Memory(tmp_path / "s.db") as mem:
        for i in range(n):
            mem.add_note(f"note number {i} about bread and hiking", name=f"n{i}")
        report = mem.topics.rebuild()
        assert report.message and "too few" in report.message or (n == 0 and "no items" in report.message)
        tree = mem.topics.tree()
        assert len(tree) == (1 if n else 0)
        result = mem.recall("bread", strategy="walk", top_k=5)
        assert len(result.hits) == n  # a flat topic still answers: the walk stays on it
        assert mem.stats().totals()["topics"] == (1 if n else 0)


def test_demo_tree_is_a_labelled_hierarchy(demo):
    topics = demo.topics.tree()
    assert max(t.depth for t in topics) >= 2 and len(topics) >= 8
    assert all(t.label and " · " in t.label for t in topics)
    words = {w for t in topics for w in t.terms}
    assert {"starter", "attention", "retrieval"} & words  # the guides' subjects name topics
    assert not {"maya", "daniel"} & words  # speaker names do not
    assert not {"now", "got", "yesterday", "like", "thanks"} & words  # nor the chat's small talk
    top = [t for t in topics if t.parent is None]
    assert sum(t.size for t in top) == demo.stats().items
    child = next(t for t in topics if t.parent)
    assert demo.topics.parent(child.id).id == child.parent
    assert child.id in [c.id for c in demo.topics.children(child.parent)]
    assert all(s.parent == child.parent for s in demo.topics.siblings(child.id))
    assert demo.topics.items(child.id, limit=3)


def test_a_reopened_store_walks_exactly_like_the_live_one(tmp_path):
    path = tmp_path / "r.db"
    with Memory(path) as live:
        live.ingest(DEMO_DIR)
        before = {intent: live.recall("how do I feed a sourdough starter", strategy="walk", intent=intent).to_dict()
                  for intent in ("neutral", "deepen", "broaden")}
        tree = [t.to_dict() for t in live.topics.tree()]
    with Memory(path) as reopened:
        after = {intent: reopened.recall("how do I feed a sourdough starter", strategy="walk", intent=intent).to_dict()
                 for intent in ("neutral", "deepen", "broaden")}
        assert [t.to_dict() for t in reopened.topics.tree()] == tree
    for intent in before:
        assert [h["id"] for h in after[intent]["hits"]] == [h["id"] for h in before[intent]["hits"]]
        assert after[intent]["trace"] == before[intent]["trace"]


def test_new_items_are_assigned_at_ingest_without_a_rebuild(topic_store, tmp_path):
    import shutil

    path = tmp_path / "copy.db"
    shutil.copy(topic_store, path)
    with Memory(path) as mem:
        built = mem.stats().totals()["topics"]
        item = mem.add_note("Feed the sourdough starter with equal flour and water; the levain doubles in six hours.", name="tip")
        assert mem.topics.drift() > 0 and mem.stats().totals()["topics"] == built
        leaves = mem.topics.topic_of(item.id)
        assert leaves and leaves[0][0].id.startswith("t:")
    with Memory(path) as again:
        assert [t.id for t, _ in again.topics.topic_of(item.id)] == [t.id for t, _ in leaves]


def test_a_cancelled_or_failed_rebuild_leaves_the_previous_tree(topic_store, tmp_path, monkeypatch):
    import shutil

    path = tmp_path / "copy.db"
    shutil.copy(topic_store, path)
    with Memory(path) as mem:
        before = [t.to_dict() for t in mem.topics.tree()]
        with pytest.raises(RebuildCancelled):
            mem.topics.rebuild(cancelled=lambda: True)

        def fail(*_a, **_k):
            raise OSError("disk full")

        monkeypatch.setattr(mem.store, "replace_topic_transitions", fail)
        with pytest.raises(OSError):
            mem.topics.rebuild(progress=lambda *_: None)
        assert [t.to_dict() for t in mem.topics.tree()] == before
    with Memory(path) as reopened:
        assert [t.to_dict() for t in reopened.topics.tree()] == before


def test_a_rebuild_killed_inside_its_transaction_leaves_the_previous_tree(topic_store, tmp_path):
    import shutil
    import subprocess
    import sys

    path = tmp_path / "killed.db"
    shutil.copy(topic_store, path)
    with Memory(path) as mem:
        before = [t.to_dict() for t in mem.topics.tree()]
    script = (
        "import os, signal, sys\n"
        "from mnemoscope.engine import Memory\n"
        "mem = Memory(sys.argv[1], topic_max_branch=3)\n"
        "def die(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "mem.store.insert_topic_assignments = die\n"
        "mem.topics.rebuild()\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True)
    assert done.returncode == -9
    with Memory(path) as reopened:
        assert [t.to_dict() for t in reopened.topics.tree()] == before
        assert reopened.store.integrity_ok()
