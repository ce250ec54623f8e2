"""The intent classifier on a labelled set it was never trained on (≥ 80 phrasings), including
the phrasings BetterMem's substring rules got wrong."""

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine.topics.intents import (INTENTS, IntentClassifier, UnknownIntent, check_intent, classifier,
                                               resolve_intent)
from mnemoscope.engine.topics.intents_data import PHRASINGS

# BetterMem's misfires (reference notes, defect 14): substring rules answered broaden, deepen,
# deepen and neutral here.
MISFIRES = [
    ("contextual embeddings", "neutral"),
    ("the context window size", "neutral"),
    ("explain more simply, I'm confused", "clarify"),
    ("tell me more about the big picture", "broaden"),
    ("I don't get positional encoding", "clarify"),
]

LABELLED = MISFIRES + [
    ("go into more depth on the attention heads", "deepen"),
    ("could you elaborate on sinusoidal encodings", "deepen"),
    ("I'd like a deeper explanation of the decode phase", "deepen"),
    ("break the fine-tuning section down for me", "deepen"),
    ("what precisely goes on inside a feed-forward block", "deepen"),
    ("more detail about stretch and folds", "deepen"),
    ("dig deeper into reranking", "deepen"),
    ("expand on the part about trail markers", "deepen"),
    ("give me the detailed version", "deepen"),
    ("drill into the subtopics of baking", "deepen"),
    ("how exactly does rotary position encoding work", "deepen"),
    ("tell me more details about the levain", "deepen"),
    ("zoom out and give me the overview", "broaden"),
    ("what's the big picture of retrieval augmented generation", "broaden"),
    ("summarize the hiking guide at a high level", "broaden"),
    ("how does the kv cache fit into the overall picture", "broaden"),
    ("give me a general overview of transformers", "broaden"),
    ("what broader topic is this under", "broaden"),
    ("step back, what is this all about", "broaden"),
    ("a high level summary of the sourdough notes", "broaden"),
    ("overview please", "broaden"),
    ("what is the wider context here", "broaden"),
    ("in broad strokes, what does the guide cover", "broaden"),
    ("compare bm25 with embeddings", "compare"),
    ("what's the difference between prefill and decode", "compare"),
    ("rye versus spelt", "compare"),
    ("how does a hut compare to camping", "compare"),
    ("alternatives to a kv cache", "compare"),
    ("contrast learned and sinusoidal positions", "compare"),
    ("which is better for long documents, chunking or long context", "compare"),
    ("what are the differences between the three model families", "compare"),
    ("similar approaches to hybrid retrieval", "compare"),
    ("encoder vs decoder", "compare"),
    ("what other options are there instead of crampons", "compare"),
    ("how is this different from the other one", "compare"),
    ("where would I use retrieval augmented generation", "apply"),
    ("give me an example of attention in action", "apply"),
    ("what are some use cases for a sourdough starter", "apply"),
    ("how do I use this in practice", "apply"),
    ("real-world applications of transformers", "apply"),
    ("show me an example", "apply"),
    ("how can I apply these hiking tips on my trip", "apply"),
    ("when should I use hybrid search", "apply"),
    ("practical examples of chunking", "apply"),
    ("what is this used for in industry", "apply"),
    ("how would a company use rag", "apply"),
    ("I don't understand the kv cache", "clarify"),
    ("what do you mean by hydration", "clarify"),
    ("can you clarify how masking works", "clarify"),
    ("I'm confused by the scaling laws", "clarify"),
    ("explain it like I'm a beginner", "clarify"),
    ("that was unclear, say it again simply", "clarify"),
    ("in simple terms, what is attention", "clarify"),
    ("I'm lost, what is a levain", "clarify"),
    ("I didn't follow that part", "clarify"),
    ("could you explain that more clearly", "clarify"),
    ("I don't get what tokenization does", "clarify"),
    ("what is the kv cache", "neutral"),
    ("when did Maya adopt her dog", "neutral"),
    ("what did Daniel bake for the market", "neutral"),
    ("how long is the hike to the hut", "neutral"),
    ("attention heads and queries", "neutral"),
    ("rotary position embeddings", "neutral"),
    ("sourdough starter feeding schedule", "neutral"),
    ("what is the context length of the model", "neutral"),
    ("where did Maya and Daniel meet", "neutral"),
    ("what is the oven temperature for the bake", "neutral"),
    ("who is Nora", "neutral"),
    ("how does bulk fermentation depend on temperature", "neutral"),
    ("what did Caroline research last week", "neutral"),
    ("the retrieval pipeline", "neutral"),
    ("which gear is needed above the snow line", "neutral"),
    ("what did Melanie paint", "neutral"),
    ("a comparison table in the appendix", "neutral"),
    ("what is an application programming interface", "neutral"),
]


def test_the_labelled_set_is_large_and_apart_from_the_training_phrasings():
    assert len(LABELLED) >= 80
    assert {label for _, label in LABELLED} == set(INTENTS)
    trained = {t.lower() for ts in PHRASINGS.values() for t in ts}
    assert not [text for text, _ in LABELLED if text.lower() in trained]


def test_accuracy_on_the_labelled_set_is_at_least_90_percent():
    clf = classifier()
    wrong = [(text, label, clf.classify(text).name) for text, label in LABELLED if clf.classify(text).name != label]
    accuracy = 1 - len(wrong) / len(LABELLED)
    print(f"intent accuracy {accuracy:.3f} on {len(LABELLED)} phrasings; wrong: {wrong}")
    assert accuracy >= 0.90, wrong


@pytest.mark.parametrize("text,label", MISFIRES)
def test_the_reference_misfires_are_classified_right(text, label):
    assert classifier().classify(text).name == label


def test_probabilities_sum_to_one_and_name_every_intent():
    p = classifier().probabilities("compare the two recipes")
    assert set(p) == set(INTENTS)
    assert abs(sum(p.values()) - 1) < 1e-9


def test_a_given_intent_is_used_as_is_and_marked_not_inferred():
    guess = resolve_intent("compare the two recipes", "Deepen")
    assert (guess.name, guess.inferred) == ("deepen", False)
    assert resolve_intent("compare the two recipes", None).inferred is True


def test_an_unknown_intent_is_refused_with_the_valid_names():
    with pytest.raises(UnknownIntent) as err:
        check_intent("sideways")
    assert all(name in str(err.value) for name in INTENTS)


# BetterMem's rule (reference notes, query step 1): lower-case substring match, first hit wins.
REFERENCE_RULES = [
    ("deepen", ["explain more", "go deeper", "more detail", "in depth", "elaborate", "expand on", "tell me more",
                "what exactly", "how does it work", "break down", "dive into", "drill down"]),
    ("broaden", ["big picture", "overview", "high level", "in general", "broaden", "context", "how does this fit",
                 "wider", "summary", "summarize"]),
    ("compare", ["compare", "comparison", "different", "difference", "vs ", " versus ", "alternative", "other approach",
                 "similar", "contrast"]),
    ("apply", ["where is this used", "application", "apply", "example", "use case", "in practice", "real world",
               "how to use", "when to use"]),
    ("clarify", ["didn't understand", "don't understand", "unclear", "clarify", "what do you mean", "confused", "simpler",
                 "simple explanation"]),
]


def substring_intent(text: str) -> str:
    low = text.lower()
    return next((name for name, cues in REFERENCE_RULES if any(c in low for c in cues)), "neutral")


def test_the_classifier_beats_the_reference_substring_rules():
    clf = classifier()
    ours = sum(clf.classify(t).name == label for t, label in LABELLED) / len(LABELLED)
    rules = sum(substring_intent(t) == label for t, label in LABELLED) / len(LABELLED)
    print(f"classifier {ours:.3f} vs substring rules {rules:.3f}")
    assert ours > rules
    assert [substring_intent(t) for t, _ in MISFIRES] != [label for _, label in MISFIRES]


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A user cache directory of the test's own, written under umask 000 (every bit the process
    leaves to the umask is then open to other users)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    before = os.umask(0)
    yield tmp_path / "cache" / "mnemoscope"
    os.umask(before)


def test_the_fit_is_cached_privately_whatever_the_umask(own_cache):
    """The cached weights decide every inferred intent: their folder and file are the person's
    alone (before: 0777 and 0666 under umask 000, so any local user could replace them)."""
    IntentClassifier()
    [cached] = own_cache.glob("intents-*.npz")
    assert stat.S_IMODE(own_cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert stat.S_IMODE(own_cache.parent.stat().st_mode) == 0o700  # the cache home it made too (before: 0777)


def plant(cached: Path) -> np.ndarray:
    """Replace the cached fit by weights that read every query as "deepen"; the fit's intercept."""
    with np.load(cached) as fit:
        coef, intercept = fit["coef"], fit["intercept"]
    planted = np.zeros_like(intercept)
    planted[INTENTS.index("deepen")] = 100.0
    np.savez(cached, coef=np.zeros_like(coef), intercept=planted)
    return intercept


def test_a_cached_fit_others_could_have_written_is_not_loaded(own_cache):
    IntentClassifier()
    [cached] = own_cache.glob("intents-*.npz")
    intercept = plant(cached)
    cached.chmod(0o666)
    assert IntentClassifier().classify("compare bm25 and dense").name == "compare"  # before: deepen
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600  # fitted again and written privately
    with np.load(cached) as fit:
        assert np.allclose(fit["intercept"], intercept)


def test_a_cached_fit_under_a_folder_others_can_change_is_not_loaded(own_cache):
    """Another user who can change a folder above the cache renames its folder and puts one of
    theirs in its place, private-looking (0700, a 0600 file of their weights). The cache is held
    to the rule stores and settings files keep (fails before: the cache's own folder and file
    alone were asked, and the planted weights read every query as "deepen")."""
    IntentClassifier()
    [cached] = own_cache.glob("intents-*.npz")
    plant(cached)
    cached.chmod(0o600)
    own_cache.parent.chmod(0o777)  # the cache home: not sticky, others may rename what it holds
    assert IntentClassifier().classify("compare bm25 and dense").name == "compare"
