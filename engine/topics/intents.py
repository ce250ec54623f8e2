"""Intents that steer the walk, and a classifier that infers one from the query's wording.

Substring rules misfire on subjects that contain a trigger ("contextual embeddings" is not a
request to broaden). The classifier is a logistic regression over word 1–2-grams and character
2–5-grams, trained on the phrasings shipped in :mod:`.intents_data`; below a confidence floor
it answers ``neutral``. Training takes a fraction of a second and happens once per process.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

INTENTS = ("deepen", "broaden", "compare", "apply", "clarify", "neutral")


class UnknownIntent(ValueError):
    """An intent name outside :data:`INTENTS`."""


def check_intent(name: Any) -> str | None:
    """The intent name normalised, None when not given; an unknown name is refused with the list."""
    if name is None or name == "":
        return None
    key = str(name).strip().lower()
    if key not in INTENTS:
        raise UnknownIntent(f"unknown intent {name!r}; choose one of: {', '.join(INTENTS)}")
    return key


@dataclass
class IntentGuess:
    name: str
    probability: float
    inferred: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "inferred": self.inferred, "probability": round(self.probability, 4)}


class IntentClassifier:
    """Trained with scikit-learn; answers with plain dictionary look-ups and one small matrix
    product (a scikit-learn pipeline call costs milliseconds, this costs tens of microseconds)."""

    def __init__(self, min_confidence: float = 0.4) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        from .intents_data import PHRASINGS

        texts = [t for name in INTENTS for t in PHRASINGS[name]]
        labels = [name for name in INTENTS for _ in PHRASINGS[name]]
        self.vectorizers = [
            TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b"),
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True),
        ]
        x = sp.hstack([v.fit_transform(texts) for v in self.vectorizers]).tocsr()
        model = LogisticRegression(C=10.0, solver="saga", max_iter=3000, tol=1e-4, random_state=0).fit(x, labels)
        self.classes = [str(c) for c in model.classes_]
        self.coef = model.coef_.T.astype(np.float64)  # (features, classes)
        self.intercept = model.intercept_.astype(np.float64)
        self._parts = []
        offset = 0
        for v in self.vectorizers:
            self._parts.append((v.build_analyzer(), v.vocabulary_, v.idf_, offset))
            offset += len(v.vocabulary_)
        self.min_confidence = min_confidence

    def probabilities(self, text: str) -> dict[str, float]:
        """P(intent | text): the TF-IDF features of each vectoriser (sublinear tf, L2), then softmax."""
        logits = self.intercept.copy()
        for analyze, vocab, idf, offset in self._parts:
            counts: dict[int, int] = {}
            for gram in analyze(text):
                col = vocab.get(gram)
                if col is not None:
                    counts[col] = counts.get(col, 0) + 1
            if not counts:
                continue
            cols = np.fromiter(counts, dtype=np.int64, count=len(counts))
            w = (1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))) * idf[cols]
            logits += (w / np.linalg.norm(w)) @ self.coef[cols + offset]
        p = np.exp(logits - logits.max())
        return dict(zip(self.classes, (p / p.sum()).tolist()))

    def classify(self, text: str) -> IntentGuess:
        p = self.probabilities(text)
        best = max(p, key=p.get)
        if p[best] < self.min_confidence:
            return IntentGuess("neutral", p["neutral"])
        return IntentGuess(best, p[best])


_lock = threading.Lock()
_classifiers: dict[float, IntentClassifier] = {}


def classifier(min_confidence: float = 0.4) -> IntentClassifier:
    """The process-wide classifier (trained on first use)."""
    with _lock:
        if min_confidence not in _classifiers:
            _classifiers[min_confidence] = IntentClassifier(min_confidence)
        return _classifiers[min_confidence]


def resolve_intent(text: str, given: Any, min_confidence: float = 0.4) -> IntentGuess:
    """The given intent, or the one inferred from ``text``."""
    name = check_intent(given)
    if name is not None:
        return IntentGuess(name, 1.0, inferred=False)
    return classifier(min_confidence).classify(text)
