"""Areas plug into the core: typed, loaded on first use, and a strategy is offered exactly when it can run."""

import inspect
import threading

import pytest

from mnemoscope.engine import Memory, errors
from mnemoscope.engine.errors import AreaMissing, MnemoscopeError, RecallError
from mnemoscope.engine.knowledge import KnowledgeArea


def test_the_core_alone_offers_exactly_the_strategies_it_can_run(core, corpus):
    core.ingest(corpus)
    offered = core.strategies()
    assert set(offered) == {"bm25", "dense", "hybrid"}
    for strategy in offered:  # each runs (dense finds nothing yet: a store this small has no latent space)
        assert core.recall("starter flour water", strategy=strategy).strategy == strategy
    for strategy in ("fused", "ppr", "walk", "hybrid_walk"):
        with pytest.raises(RecallError, match="unknown strategy"):
            core.recall("starter flour water", strategy=strategy)


def test_every_strategy_offered_with_every_area_runs(tmp_path, corpus):
    with Memory(tmp_path / "full.db") as mem:
        mem.ingest(corpus)
        offered = mem.strategies()
        assert {"fused", "ppr", "walk", "hybrid_walk"} <= set(offered)
        for strategy, description in offered.items():
            assert description, strategy
            assert mem.recall("starter flour water", strategy=strategy).strategy == strategy


def test_a_missing_area_is_a_clear_error_and_probing_loads_nothing(core, tmp_path):
    assert not core.has_area("knowledge")
    with pytest.raises(AreaMissing, match="no knowledge area"):
        core.knowledge.facts()
    with Memory(tmp_path / "lazy.db") as mem:
        assert mem.has_area("knowledge") and mem.loaded_areas() == []
        assert isinstance(mem.knowledge, KnowledgeArea) and mem.loaded_areas() == ["knowledge"]


def test_reading_a_loaded_area_never_waits_for_another_areas_load(tmp_path, monkeypatch):
    with Memory(tmp_path / "locks.db") as mem:
        mem.topics, mem.ranker  # loaded before knowledge starts its slow load
        loading, release = threading.Event(), threading.Event()
        original = KnowledgeArea.load

        def slow_load(self):
            loading.set()
            assert release.wait(10)
            original(self)

        monkeypatch.setattr(KnowledgeArea, "load", slow_load)
        loader = threading.Thread(target=lambda: mem.knowledge)
        loader.start()
        assert loading.wait(10)
        reader = threading.Thread(target=lambda: (mem.topics, mem.ranker))
        reader.start()
        reader.join(5)
        released_late = reader.is_alive()
        release.set()
        loader.join(10)
        assert not released_late


def test_every_engine_error_is_a_mnemoscope_error():
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, Exception)]
    assert len(classes) > 10
    assert all(issubclass(c, MnemoscopeError) for c in classes)
