"""How much an embedder's dense signal earns in hybrid fusion, measured on the store itself.

One constant cannot fit every embedder: the store's own LSA earns a small weight (docs/
benchmarks.md), a real sentence-embedding model much more. So for an external embedder the weight
is calibrated on the store's own items: a seeded sample of items each gives a *pseudo-question*
— about half of its content words, in order, without its two rarest (a person's rewording loses
the distinctive words first), each said in another word where the bundled lexicon knows one that
the sample uses and the item does not (people ask in their own words: with the item's own words
BM25 finds nearly every item and no embedder earns a weight; docs/benchmarks.md) — and the
weight on the grid that finds each item best (mean reciprocal rank, linear fusion over both
signals' candidates) is kept, with the whole curve, in the store and in ``stats``. It is
measured again when the store has grown by half.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from .lexical import top_k
from .query import Lexicon, english_lexicon
from .records import Calibration
from .text import lexical_tokens, words

if TYPE_CHECKING:
    from .index import Index
    from .records import Item

CALIBRATION_KEY = "dense.calibration"
GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
SAMPLE = 64  # pseudo-questions: one embedding batch
MIN_WORDS = 8  # items shorter than this make no pseudo-question
MIN_ITEMS = 200  # a smaller store keeps the dense_weight setting: its few pseudo-questions would say little
DEPTH = 100


def pseudo_question(text: str, index: "Index", rng: np.random.Generator, lexicon: Lexicon | None = None,
                    surface: dict[str, str] | None = None) -> str | None:
    """About half of the item's content words, in order, without its two rarest, each reworded
    when ``lexicon`` knows a related word in ``surface`` (token → a word that says it) that the
    item does not use; None if too short."""
    content = [w for w in words(text) if lexical_tokens(w)]
    if len(content) < MIN_WORDS:
        return None
    df = np.array([_df(index, w) for w in content])
    rarest = set(np.argsort(df, kind="stable")[:2].tolist())
    own = {t for w in content for t in lexical_tokens(w)}
    kept = [_reworded(w, own, lexicon, surface or {}) for n, w in enumerate(content)
            if n not in rarest and rng.random() < 0.5]
    return " ".join(kept) if len(kept) >= 3 else None


def _reworded(word: str, own: set[str], lexicon: Lexicon | None, surface: dict[str, str]) -> str:
    """The word's strongest relative that ``surface`` can say and the item does not use, else the word."""
    if lexicon is None:
        return word
    for related, _ in lexicon.related(lexical_tokens(word)[0]):
        if related in surface and related not in own:
            return surface[related]
    return word


def surface_words(texts: Sequence[str]) -> dict[str, str]:
    """Token → the first word of ``texts`` that gives it: how a pseudo-question says a related token."""
    out: dict[str, str] = {}
    for text in texts:
        for word in words(text):
            tokens = lexical_tokens(word)
            if tokens:
                out.setdefault(tokens[0], word)
    return out


def _df(index: "Index", word: str) -> float:
    tokens = lexical_tokens(word)
    tid = index.vocab.get(tokens[0]) if tokens else None
    return float(index.bm25.document_frequency(tid)) if tid is not None else 0.0


def calibrate(index: "Index", items: Sequence["Item"], signature: str, embed: Callable[[list[str]], np.ndarray],
              seed: int = 0) -> Calibration | None:
    """Measure the grid on pseudo-questions from ``items`` (a seeded sample of live items whose
    vectors are under ``signature``; ``embed`` embeds the questions without caching them); None
    when the store is too small to say."""
    vectors = index.vectors.get(signature)
    if vectors is None or index.n_items < MIN_ITEMS:
        return None
    rng = np.random.default_rng(seed)
    lexicon = english_lexicon() if index.related_words else None
    surface = surface_words([item.text for item in items])
    asked: list[tuple[str, int]] = []
    for item in items:
        if item.id not in index.slot_of:
            continue
        question = pseudo_question(item.text, index, rng, lexicon, surface)
        if question:
            asked.append((question, index.slot_of[item.id]))
        if len(asked) == SAMPLE:
            break
    if len(asked) < 16:
        return None
    query_vectors = embed([q for q, _ in asked])
    reciprocal = np.zeros((len(GRID), len(asked)))
    for n, ((question, target), qv) in enumerate(zip(asked, query_vectors)):
        term_ids, weights = index.query_terms(question)
        bm25 = index.bm25.scores(term_ids, weights)
        dense = np.zeros(index.n_slots)
        scored = vectors.scores(qv)
        dense[: len(scored)] = scored
        dense[~index.alive] = 0.0
        union = np.union1d(top_k(bm25, DEPTH)[0], top_k(dense, DEPTH)[0])
        if not len(union):
            continue
        best = bm25[union].max()
        lexical = bm25[union] / best if best > 0 else np.zeros(len(union))
        for g, w in enumerate(GRID):
            fused = (1 - w) * lexical + w * np.maximum(dense[union], 0.0)
            hit = np.flatnonzero(union == target)
            if len(hit):
                rank = 1 + int((fused > fused[hit[0]]).sum())
                reciprocal[g, n] = 1.0 / rank if rank <= DEPTH else 0.0
    mrr = reciprocal.mean(axis=1)
    best_at = int(np.flatnonzero(mrr >= mrr.max() - 1e-9)[0])  # ties: the smaller weight
    return Calibration(signature, GRID[best_at], index.n_items, len(asked),
                       {f"{w:.1f}": round(float(m), 4) for w, m in zip(GRID, mrr)})
