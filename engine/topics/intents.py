"""Intents that steer the walk, and a classifier that infers one from the query's wording.

Substring rules misfire on subjects that contain a trigger ("contextual embeddings" is not a
request to broaden). The classifier is a logistic regression over word 1–2-grams and character
2–5-grams, trained on the phrasings shipped in :mod:`.intents_data`; below a confidence floor
it answers ``neutral``. Training takes a fraction of a second and happens once per process.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypedDict

import numpy as np
import platformdirs

from ..errors import FileRefused, UnknownIntent
from ..files import atomic_writer, make_private_folders, open_regular, others_control
from ..lazy import sparse as sp

INTENTS = ("deepen", "broaden", "compare", "apply", "clarify", "neutral")


def check_intent(name: Any) -> str | None:
    """The intent name normalised, None when not given; an unknown name is refused with the list."""
    if name is None or name == "":
        return None
    key = str(name).strip().lower()
    if key not in INTENTS:
        raise UnknownIntent(f"unknown intent {name!r}; choose one of: {', '.join(INTENTS)}")
    return key


class IntentReport(TypedDict):
    """The intent a recall's topic walk followed: given by the person (``inferred`` false) or
    inferred from the query, with the classifier's probability."""

    name: str
    inferred: bool
    probability: float


@dataclass
class IntentGuess:
    name: str
    probability: float
    inferred: bool = True

    def to_dict(self) -> IntentReport:
        return {"name": self.name, "inferred": self.inferred, "probability": round(self.probability, 4)}


class IntentClassifier:
    """Multinomial logistic regression over TF-IDF word 1–2-grams and character 2–5-grams.

    Written with numpy and scipy's L-BFGS rather than scikit-learn: importing scikit-learn costs
    seconds at a cold start, and the first query of a session must not wait for it. Training on
    the shipped phrasings takes a fraction of a second; answering costs tens of microseconds.
    """

    def __init__(self, min_confidence: float = 0.4, l2_c: float = 10.0) -> None:
        from .intents_data import PHRASINGS

        texts = [t for name in INTENTS for t in PHRASINGS[name]]
        labels = np.array([INTENTS.index(name) for name in INTENTS for _ in PHRASINGS[name]])
        self.classes = list(INTENTS)
        self._parts = [_TfidfBlock(_word_grams, texts), _TfidfBlock(_char_grams, texts)]
        self.coef, self.intercept = _cached_fit(self._training_rows(texts), labels, len(INTENTS), l2_c)
        self.min_confidence = min_confidence

    def probabilities(self, text: str) -> dict[str, float]:
        """P(intent | text): each block's TF-IDF features (sub-linear tf, L2), then softmax."""
        logits = self.intercept.copy()
        offset = 0
        for part in self._parts:
            cols, weights = part.features(text)
            if len(cols):
                logits += weights @ self.coef[cols + offset]
            offset += len(part.vocab)
        p = np.exp(logits - logits.max())
        return dict(zip(self.classes, (p / p.sum()).tolist()))

    def _training_rows(self, texts: list[str]) -> "_Rows":
        """Each phrasing's features, the blocks side by side (the columns of a later block follow
        the earlier blocks' vocabularies), as the three arrays of a CSR matrix."""
        data: list[np.ndarray] = []
        indices: list[np.ndarray] = []
        lengths: list[int] = []
        for text in texts:
            offset = 0
            length = 0
            for part in self._parts:
                cols, weights = part.features(text)
                data.append(weights)
                indices.append(cols + offset)
                offset += len(part.vocab)
                length += len(cols)
            lengths.append(length)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        width = sum(len(part.vocab) for part in self._parts)
        return _Rows(np.concatenate(data), np.concatenate(indices).astype(np.int32), indptr, width)

    def classify(self, text: str) -> IntentGuess:
        p = self.probabilities(text)
        best = max(p, key=p.get)
        if p[best] < self.min_confidence:
            return IntentGuess("neutral", p["neutral"])
        return IntentGuess(best, p[best])


_WORD = re.compile(r"(?u)\b\w+\b")


def _word_grams(text: str) -> list[str]:
    words = _WORD.findall(text.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


def _char_grams(text: str) -> list[str]:
    """Character 2–5-grams inside each space-padded word (as scikit-learn's ``char_wb``)."""
    out: list[str] = []
    for word in text.lower().split():
        out.extend(_word_char_grams(word))
    return out


@functools.lru_cache(maxsize=65_536)
def _word_char_grams(word: str) -> tuple[str, ...]:
    """One word's grams, in order: questions reuse their words, and every query is classified."""
    padded = f" {word} "
    return tuple(padded[i : i + n] for n in range(2, 6) for i in range(len(padded) - n + 1))


class _TfidfBlock:
    """One feature block: a vocabulary with smooth idf, sub-linear tf, rows L2-normalised."""

    def __init__(self, analyze: Callable[[str], list[str]], texts: list[str]) -> None:
        self.analyze = analyze
        grams = sorted({g for t in texts for g in analyze(t)})
        self.vocab = {g: n for n, g in enumerate(grams)}
        df = np.zeros(len(grams))
        for t in texts:
            df[[self.vocab[g] for g in set(analyze(t))]] += 1
        self.idf = np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0

    def features(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        counts: dict[int, int] = {}
        for gram in self.analyze(text):
            col = self.vocab.get(gram)
            if col is not None:
                counts[col] = counts.get(col, 0) + 1
        cols = np.fromiter(counts, dtype=np.int64, count=len(counts))
        w = (1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))) * self.idf[cols]
        return cols, w / (np.linalg.norm(w) or 1.0)



@dataclass(frozen=True)
class _Rows:
    """The training phrasings' features as a CSR matrix's arrays. Kept as plain arrays because
    the fit is usually read from the cache: only a refit needs scipy.sparse, whose import would
    otherwise be paid by every process that opens a store with topics."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    width: int

    def matrix(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=(len(self.indptr) - 1, self.width))


def _fit_softmax(x: sp.csr_matrix, y: np.ndarray, n_classes: int, l2_c: float) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression, loss Σ cross-entropy + ||W||² / (2C), by L-BFGS.

    With far fewer phrasings than features the optimum lies in the span of the rows
    (W = Xᵀ A), so the fit runs over A with the Gram matrix K = X Xᵀ: a few hundred
    parameters per class instead of thousands, the same minimum, a hundred times faster.
    """
    from scipy.optimize import minimize

    n = x.shape[0]
    gram = np.asarray((x @ x.T).todense())
    onehot = np.eye(n_classes)[y]

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        a, b = flat[: n * n_classes].reshape(n, n_classes), flat[n * n_classes :]
        ka = gram @ a
        logits = ka + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        value = -np.sum(onehot * np.log(p + 1e-300)) + np.sum(a * ka) / (2 * l2_c)
        residual = p - onehot
        grad_a = gram @ (residual + a / l2_c)
        return value, np.concatenate([grad_a.ravel(), residual.sum(axis=0)])

    start = np.zeros(n * n_classes + n_classes)
    flat = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 1000}).x
    a = flat[: n * n_classes].reshape(n, n_classes)
    return np.asarray(x.T @ a), flat[n * n_classes :]


def _cached_fit(rows: _Rows, y: np.ndarray, n_classes: int, l2_c: float) -> tuple[np.ndarray, np.ndarray]:
    """The fit, kept in the user cache directory under a digest of its inputs.

    The weights are a pure function of the shipped phrasings, so a later process loads them in
    a millisecond instead of fitting again; a missing or unreadable cache file is simply refitted.
    The weights decide every inferred intent, so only a file no one else could have written is
    loaded (:func:`_load_own`), and the folder and the file are made private (0700, 0600) whatever
    the process's umask (under umask 000 the defaults would open them to every local user).
    """
    digest = hashlib.sha1(rows.data.tobytes() + rows.indices.tobytes() + y.tobytes() + repr(l2_c).encode()).hexdigest()[:16]
    folder = platformdirs.user_cache_path("mnemoscope")
    path = folder / f"intents-{digest}.npz"
    cached = _load_own(path)
    if cached is not None:
        return cached
    coef, intercept = _fit_softmax(rows.matrix(), y, n_classes, l2_c)
    try:
        make_private_folders(folder)
        folder.chmod(0o700)  # made under another umask, or by an older version: ours, so private
        with atomic_writer(path) as fh:
            np.savez(fh, coef=coef, intercept=intercept)
    except (OSError, FileRefused):
        pass  # a read-only cache directory only costs the next process a refit
    return coef, intercept


def _load_own(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """The cached weights, read only from a regular file that no other user could have written
    or put in place, by the rule stores and settings files keep (:func:`engine.files.others_control`:
    the file, its folder and every folder above it); None otherwise, or when unreadable."""
    try:
        with open_regular(path) as fh:
            if others_control(path, os.fstat(fh.fileno())):
                return None
            with np.load(fh, allow_pickle=False) as cached:
                return cached["coef"], cached["intercept"]
    except (FileRefused, OSError, ValueError, KeyError):
        return None


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
