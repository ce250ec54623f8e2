"""A small ranking model in numpy, trained online by pairwise logistic SGD.

score(x) = x · lin + MLP(normalise(x)), with a one-hidden-layer GELU MLP. ``lin`` starts as the
heuristic floor's weights on the static features, held near them by their own L2 pull, plus a
prior on the learned features (an item used before for a similar query is likelier to be used
again); the MLP's output layer starts at zero. So the model starts at the heuristic wherever no
feedback has touched the candidates, differs from it only where feedback has, and learns a
correction from "used beats ignored" pairs. Whether that prior holds for a store is exactly what
the gate's referee checks before the model gets any say. Each feedback event
trains on its new pairs plus a seeded sample from a replay buffer of recent pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .features import Normaliser


@dataclass
class MLPParams:
    hidden: int = 16
    lr: float = 0.05
    l2: float = 1e-2  # on the MLP: with tens of events, an unchecked MLP mostly fits noise
    lin_pull: float = 0.5  # L2 pulling the static features' linear weights toward the heuristic
    replay: int = 32  # replayed pairs per event
    steps: int = 3  # SGD passes per event
    buffer: int = 4096
    # after a feature change, only the newest events are described again (one fused feature build
    # each, tens of ms at a million items): the buffer holds about their pairs; older events
    # teach trust, edges, the marks and the answer prior, and the model what the kept rows give
    relearn_newest: int = 300


def _gelu(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """tanh-GELU and its derivative."""
    c = np.sqrt(2 / np.pi)
    inner = c * (z + 0.044715 * z ** 3)
    t = np.tanh(inner)
    value = 0.5 * z * (1 + t)
    grad = 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * 0.044715 * z * z)
    return value, grad


class PairwiseMLP:
    def __init__(self, n_features: int, heuristic: np.ndarray, anchored: np.ndarray, prior: np.ndarray,
                 params: MLPParams | None = None, seed: int = 7) -> None:
        self.params = params or MLPParams()
        rng = np.random.default_rng(seed)
        h = self.params.hidden
        self.w1 = rng.normal(0, 1 / np.sqrt(n_features), (n_features, h))
        self.b1 = np.zeros(h)
        self.w2 = np.zeros(h)  # the correction starts at exactly zero
        self.heuristic = heuristic.astype(np.float64)
        self.lin = self.heuristic + prior
        self.anchored = anchored.astype(np.float64)  # 1 for features held near the heuristic, 0 for learned ones
        self.norm = Normaliser(n_features)
        self.steps = 0

    # -- scoring ------------------------------------------------------------------------------

    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        z = self.norm(x)
        a, da = _gelu(z @ self.w1 + self.b1)
        return x @ self.lin + a @ self.w2, (z, a), da

    def score(self, x: np.ndarray) -> np.ndarray:
        return self._forward(x)[0]

    # -- learning -----------------------------------------------------------------------------

    def train(self, better: np.ndarray, worse: np.ndarray, rng: np.random.Generator,
              replay_better: np.ndarray, replay_worse: np.ndarray) -> float:
        """SGD on new pairs (better ≻ worse) plus a replay sample; returns the mean loss."""
        p = self.params
        if len(replay_better):
            pick = rng.choice(len(replay_better), size=min(p.replay, len(replay_better)), replace=False)
            better = np.concatenate([better, replay_better[pick]])
            worse = np.concatenate([worse, replay_worse[pick]])
        if not len(better):
            return 0.0
        loss = 0.0
        for _ in range(p.steps):
            loss = self._step(better, worse)
        return loss

    def _step(self, xb: np.ndarray, xw: np.ndarray) -> float:
        p = self.params
        sb, (zb, ab), dab = self._forward(xb)
        sw, (zw, aw), daw = self._forward(xw)
        margin = sb - sw
        g = -1.0 / (1.0 + np.exp(np.clip(margin, -30, 30)))  # d loss / d margin
        n = len(margin)
        grad_lin = (g[:, None] * (xb - xw)).sum(0) / n + p.lin_pull * self.anchored * (self.lin - self.heuristic)
        grad_w2 = (g[:, None] * (ab - aw)).sum(0) / n + p.l2 * self.w2
        hb, hw = g[:, None] * dab * self.w2, g[:, None] * daw * self.w2
        grad_w1 = (zb.T @ hb - zw.T @ hw) / n + p.l2 * self.w1
        grad_b1 = (hb - hw).sum(0) / n
        self.lin -= p.lr * grad_lin
        self.w2 -= p.lr * grad_w2
        self.w1 -= p.lr * grad_w1
        self.b1 -= p.lr * grad_b1
        self.steps += 1
        return float(np.mean(np.logaddexp(0.0, -margin)))

    # -- persistence --------------------------------------------------------------------------

    def arrays(self) -> dict[str, np.ndarray]:
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "lin": self.lin, "heuristic": self.heuristic,
                "anchored": self.anchored,
                "norm_mean": self.norm.mean, "norm_var": self.norm.var,
                "counts": np.array([self.norm.count, self.steps], dtype=np.float64)}

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray], params: MLPParams | None = None) -> "PairwiseMLP":
        model = cls(a["w1"].shape[0], a["heuristic"], a["anchored"], np.zeros_like(a["lin"]), params)
        model.w1, model.b1, model.w2, model.lin = a["w1"], a["b1"], a["w2"], a["lin"]
        model.norm = Normaliser(a["w1"].shape[0], a["norm_mean"], a["norm_var"], float(a["counts"][0]))
        model.steps = int(a["counts"][1])
        return model
