"""The ranker's learned state as it is persisted: the model, the gate's reading, the learning
curve and the answer prior in one checksummed blob, and the pair buffers the learner and the
referee keep (rebuilt from the feedback log at load, never stored)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..store.ranker import state_checksum
from .gate import GateReading
from .mlp import MLPParams, PairwiseMLP
from .prior import AnswerPrior

STATE_VERSION = 1


@dataclass
class CurvePoint:
    event: int
    lam: float
    lower_bound: float
    loss: float


class PairBuffer:
    """(better, worse) feature rows with the query each pair came from, most recent ``cap`` kept."""

    def __init__(self, n_features: int, cap: int) -> None:
        self.cap = cap
        self.better = np.zeros((0, n_features))
        self.worse = np.zeros((0, n_features))
        self.groups = np.zeros(0, dtype=np.int64)  # a key of the pair's query: the referee's unit

    def __len__(self) -> int:
        return len(self.better)

    def with_added(self, better: np.ndarray, worse: np.ndarray, group: int = 0) -> "PairBuffer":
        out = PairBuffer(self.better.shape[1], self.cap)
        out.better = np.concatenate([self.better, better])[-self.cap:]
        out.worse = np.concatenate([self.worse, worse])[-self.cap:]
        out.groups = np.concatenate([self.groups, np.full(len(better), group, dtype=np.int64)])[-self.cap:]
        return out


@dataclass
class LearnedState:
    """Everything one feedback event changes besides trust and edges; replaced whole, never
    edited in place, so a failed write leaves the previous state in use."""

    model: PairwiseMLP
    reading: GateReading
    prior: AnswerPrior
    train: PairBuffer
    held_out: PairBuffer
    curve: list[CurvePoint] = field(default_factory=list)

    def blob(self, names: tuple[str, ...]) -> bytes:
        meta = {"version": STATE_VERSION, "features": list(names), "gate": asdict(self.reading),
                "curve": [[c.event, c.lam, c.lower_bound, c.loss] for c in self.curve]}
        return pack(meta, {**self.model.arrays(), "answer_prior": self.prior.weights})


class StateMismatch(ValueError):
    """A stored state made for another feature set (new signals since): the model cannot read
    the new feature vectors, so the ranker learns again from the feedback log (``stored``: the
    feature names the state was made for)."""

    def __init__(self, message: str, stored: tuple[str, ...]) -> None:
        super().__init__(message)
        self.stored = stored


def unblob(blob: bytes, checksum: str, names: tuple[str, ...],
           params: MLPParams) -> tuple[PairwiseMLP, GateReading, list[CurvePoint], AnswerPrior]:
    """The stored model, reading, curve and prior; ValueError (or KeyError, TypeError) if corrupt."""
    if state_checksum(blob) != checksum:
        raise ValueError("checksum mismatch")
    meta, arrays = unpack(blob)
    if meta["version"] != STATE_VERSION:
        raise ValueError(f"state version {meta['version']}")
    if tuple(meta["features"]) != names:
        raise StateMismatch("the feature set changed (new signals)", tuple(meta["features"]))
    prior = AnswerPrior(arrays.pop("answer_prior"))
    return (PairwiseMLP.from_arrays(arrays, params), GateReading(**meta["gate"]),
            [CurvePoint(*row) for row in meta["curve"]], prior)


def pack(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """A JSON header line (meta, array names and shapes) and the arrays' float64 bytes.

    Written on every feedback event, so it must be cheap: a zip archive (np.savez) is not."""
    header = {**meta, "arrays": [[name, list(a.shape)] for name, a in arrays.items()]}
    body = b"".join(np.ascontiguousarray(a, dtype=np.float64).tobytes() for a in arrays.values())
    return json.dumps(header).encode() + b"\n" + body


def unpack(blob: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    head, _, body = blob.partition(b"\n")
    meta = json.loads(head.decode())
    arrays, offset = {}, 0
    for name, shape in meta.pop("arrays"):
        size = int(np.prod(shape)) * 8
        if offset + size > len(body):
            raise ValueError("truncated state")
        arrays[name] = np.frombuffer(body[offset:offset + size], dtype=np.float64).reshape(shape).copy()
        offset += size
    return meta, arrays
