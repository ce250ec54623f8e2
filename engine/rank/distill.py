"""Distillation: fit the local embedding to teacher vectors some items carry.

A teacher vector is an embedding a user already paid for (e.g. from an API). The local
embedding stays computable offline for any text: it is the store's latent semantic vector
followed by a projection ``P`` fitted by ridge regression so that ``lsa(item) · P`` points where
the item's teacher vector points. ``distill`` holds out a seeded fifth of the teacher items and
swaps the projection in only if the held-out *geometry* improves — the Pearson correlation
between pairwise cosines under the local embedding and under the teachers rises by more than
``min_gain`` — and then stores the projection in one transaction and re-embeds every item
from it (item vectors are derived in memory from the latent vectors, as the latent vectors are).

The projection belongs to one latent model (its ``fit_id``); when the latent model is refitted
the projection no longer applies and the dense signal falls back to plain LSA until the next
``distill``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..vectors import VectorIndex
from ..errors import DistillError

if TYPE_CHECKING:
    from ..area import Engine

KV_KEY = "rank.distilled_projection"
MIN_TEACHERS = 24


@dataclass
class DistillReport:
    teachers: int
    held_out: int
    before: float  # held-out geometry correlation of the current local embedding
    after: float  # … of the fitted one
    swapped: bool
    reembedded: int

    def summary(self) -> str:
        verdict = f"swapped in, {self.reembedded} item(s) re-embedded" if self.swapped else "kept the current embedding"
        return (f"distill: {self.teachers} teacher vector(s), {self.held_out} held out; geometry "
                f"{self.before:.4f} → {self.after:.4f}; {verdict}")


def geometry(local: np.ndarray, teacher: np.ndarray) -> float:
    """Pearson correlation of pairwise cosines (upper triangle) under two embeddings."""
    def cosines(m: np.ndarray) -> np.ndarray:
        unit = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        return (unit @ unit.T)[np.triu_indices(len(m), 1)]

    a, b = cosines(local), cosines(teacher)
    if a.std() < 1e-12 or b.std() < 1e-12:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def fit_projection(local: np.ndarray, teacher: np.ndarray, ridge: float) -> np.ndarray:
    """P minimising |local · P − unit(teacher)|² + ridge · |P|²."""
    target = teacher / np.maximum(np.linalg.norm(teacher, axis=1, keepdims=True), 1e-12)
    gram = local.T @ local + ridge * np.eye(local.shape[1])
    return np.linalg.solve(gram, local.T @ target)


class Distilled:
    """The active projection and the item vectors it gives (None when there is none)."""

    def __init__(self, projection: np.ndarray, fit_id: str) -> None:
        self.projection = projection
        self.fit_id = fit_id
        self.vectors = VectorIndex()

    def embed_items(self, mem: "Engine", slots: np.ndarray | None = None) -> int:
        """(Re-)embed these slots (default: every live item) from their latent vectors."""
        slots = np.flatnonzero(mem.index.alive) if slots is None else slots
        if len(slots):
            self.vectors.set(slots, mem.index.lsa_vectors.rows(slots) @ self.projection)
        return len(slots)

    def query(self, mem: "Engine", term_ids: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
        vec = mem.index.lsa_query(term_ids, weights)
        return None if vec is None else vec @ self.projection

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, projection=self.projection, fit_id=np.frombuffer(self.fit_id.encode(), dtype=np.uint8))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> "Distilled":
        arrays = np.load(io.BytesIO(blob), allow_pickle=False)
        return cls(arrays["projection"], bytes(arrays["fit_id"]).decode())


def load(mem: "Engine") -> Distilled | None:
    """The stored projection if it still matches the store's latent model."""
    blob = mem.store.get_kv(KV_KEY)
    lsa = mem.index.lsa
    if not blob or lsa is None:
        return None
    distilled = Distilled.from_bytes(blob)
    if distilled.fit_id != lsa.fit_id:
        return None
    distilled.embed_items(mem)
    return distilled


def distill(mem: "Engine", current: Distilled | None, seed: int, ridge: float = 1.0,
            min_gain: float = 0.01) -> tuple[DistillReport, Distilled | None]:
    """Fit, referee on held-out teachers, and swap in (one transaction) only if geometry improves."""
    lsa = mem.index.lsa
    if lsa is None:
        raise DistillError("distill needs the store's latent model (ingest at least 16 items first)")
    ids, teacher = mem.store.teacher_vectors()
    keep = np.array([i in mem.index.slot_of for i in ids.tolist()], dtype=bool)
    ids, teacher = ids[keep], teacher[keep]
    if len(ids) < MIN_TEACHERS:
        raise DistillError(f"distill needs at least {MIN_TEACHERS} items with teacher vectors; the store has {len(ids)}")
    slots = mem.index.slots(ids.tolist())
    local = mem.index.lsa_vectors.rows(slots).astype(np.float64)
    order = np.random.default_rng(seed).permutation(len(ids))
    n_held = max(len(ids) // 5, 8)
    held, train = order[:n_held], order[n_held:]
    now = local if current is None else local @ current.projection
    projection = fit_projection(local[train], teacher[train].astype(np.float64), ridge)
    before = geometry(now[held], teacher[held])
    after = geometry(local[held] @ projection, teacher[held])
    report = DistillReport(len(ids), n_held, before, after, False, 0)
    if after <= before + min_gain:
        return report, current
    fresh = Distilled(projection.astype(np.float32), lsa.fit_id)
    with mem.store.transaction():
        mem.store.set_kv(KV_KEY, fresh.to_bytes())
    report.reembedded = fresh.embed_items(mem)
    report.swapped = True
    return report, fresh
