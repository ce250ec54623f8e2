"""Areas plug into the core: typed, loaded on first use, and a strategy is offered exactly when it can run."""

import inspect
import json
import subprocess
import sys
import threading

import pytest

from mnemoscope.engine import Memory, errors
from mnemoscope.engine.area import Area
from mnemoscope.engine.extensions import AREAS
from tests.support.stores import ROOT
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


@pytest.mark.parametrize("name", [plug.name for plug in AREAS])
def test_an_area_of_another_kind_under_a_built_in_name_is_a_missing_area(core, name):
    """``mem.knowledge`` and the other typed accessors promise their area's class: an extension
    of another class plugged in under the name is no such area."""
    impostor = type("Impostor", (Area,), {"name": name})
    core.add_extension(impostor(core))
    with pytest.raises(AreaMissing, match=f"no {name} area"):
        getattr(core, name)


def test_asking_a_memory_without_areas_for_one_imports_none(tmp_path):
    """A memory opened with the core alone answers ``mem.knowledge`` (and the others) with
    AreaMissing before importing the area's module (the rule extractor, the topic tree, ...)."""
    script = ("import json, sys\n"
              "from mnemoscope.engine import Memory\n"
              "from mnemoscope.engine.errors import AreaMissing\n"
              "mem = Memory(sys.argv[1], extensions=False)\n"
              "missing = []\n"
              "for name in ('knowledge', 'topics', 'ranker', 'images'):\n"
              "    try:\n"
              "        getattr(mem, name)\n"
              "    except AreaMissing:\n"
              "        missing.append(name)\n"
              "areas = [m for m in sys.modules if m.split('.')[2:3] in (['knowledge'], ['topics'], ['rank'], ['images'])]\n"
              "print(json.dumps({'missing': missing, 'areas': areas}))\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "core.db")], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120).stdout
    assert json.loads(out) == {"missing": ["knowledge", "topics", "ranker", "images"], "areas": []}


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


@pytest.mark.parametrize("image_model", ["", "clip-test"])
def test_each_areas_plug_counts_and_names_its_strategies_as_the_area_does(demo_copy, image_model):
    with Memory(demo_copy, image_embed_model=image_model) as mem:
        plugged = {plug.name: (plug.counts(mem), plug.offers(mem)) for plug in AREAS}
        names = mem.strategy_names()
        assert mem.loaded_areas() == [] and plugged["knowledge"][0].facts > 0
        areas = {plug.name: getattr(mem, plug.name) for plug in AREAS}  # mem.knowledge, ...: loaded
        built = {name: (area.counts(), tuple(area.strategies())) for name, area in areas.items()}
        assert plugged == built
        assert names == mem.strategy_names() == list(mem.strategies())
        assert ("image" in names) == bool(image_model)


def test_a_store_opens_and_gives_its_counts_and_strategy_names_without_importing_an_area(demo_copy):
    """The areas' modules are most of the engine's import: the app's cold start opens the store,
    shows its counts and lists the strategies before any area is used (nor are the bundled word
    vectors read: the first query or the warm-up reads them)."""
    script = ("import json, sys\n"
              "from mnemoscope.engine import Memory\n"
              "mem = Memory(sys.argv[1])\n"
              "counts, names, default = mem.counts(), mem.strategy_names(), mem.default_strategy\n"
              "areas = [m for m in sys.modules if m.split('.')[2:3] in (['knowledge'], ['topics'], ['rank'], ['images'])]\n"
              "from mnemoscope.engine.wordvec import english_vectors\n"
              "words = english_vectors.cache_info().currsize\n"
              "print(json.dumps({'areas': areas, 'facts': counts.knowledge.facts, 'names': names, 'default': default,"
              " 'word_vectors_read': words}))\n")
    out = json.loads(subprocess.run([sys.executable, "-c", script, str(demo_copy)], cwd=ROOT, capture_output=True,
                                    text=True, check=True, timeout=120).stdout)
    with Memory(demo_copy) as mem:
        assert out == {"areas": [], "facts": mem.counts().knowledge.facts, "names": list(mem.strategies()),
                       "default": mem.default_strategy, "word_vectors_read": 0}
