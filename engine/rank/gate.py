"""The λ gate: the learned model gets a say only while it beats the heuristic on held-out pairs.

Which pairs are held out depends only on (event id, pair index) through a seeded hash, never on
the query text, so a person who keeps asking the same question still feeds the referee (the
reference hashed the query, and one repeated query could never open its gate). The referee
looks at the *discordant* held-out pairs — those the model orders right and the heuristic wrong,
or the reverse — and opens the gate only when the Wilson lower bound of the model's share of
them clears a threshold above one half. The bound is strict (z = 3) because the referee looks
again after every event and the pairs of one event share their used item, so a model fitted to
random feedback would otherwise cross it by chance now and then. λ then grows with the margin,
and shrinks back to 0 when the model stops winning on recent pairs.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np


@dataclass
class GateParams:
    holdout_every: int = 4  # one pair in this many is held out (by hash)
    z: float = 3.0  # the referee looks after every event, and pairs of one event are correlated: be strict
    min_discordant: int = 10
    window: int = 512  # recent held-out pairs the referee looks at
    threshold: float = 0.55  # the model must win clearly more than half of the discordant pairs …
    slope: float = 4.0  # … then λ = min(max_lambda, slope · (lower bound − threshold))
    max_lambda: float = 0.9


@dataclass
class GateReading:
    """What the referee saw: the model's and heuristic's wins among discordant pairs, and λ."""

    model_wins: int = 0
    heuristic_wins: int = 0
    held_out: int = 0
    lower_bound: float = 0.0
    lam: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return {"model_wins": self.model_wins, "heuristic_wins": self.heuristic_wins, "held_out": self.held_out,
                "lower_bound": round(self.lower_bound, 4), "lambda": round(self.lam, 4)}


def is_held_out(event_id: int, pair_index: int, every: int, seed: int = 0) -> bool:
    digest = hashlib.blake2b(f"{seed}:{event_id}:{pair_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % every == 0


def wilson_lower(wins: int, n: int, z: float) -> float:
    if n == 0:
        return 0.0
    p = wins / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def referee(model_margin: np.ndarray, heuristic_margin: np.ndarray, params: GateParams) -> GateReading:
    """λ from the margins (better − worse) of the model and the heuristic on held-out pairs."""
    model_right, heuristic_right = model_margin > 0, heuristic_margin > 0
    wins = int(np.sum(model_right & ~heuristic_right))
    losses = int(np.sum(heuristic_right & ~model_right))
    reading = GateReading(wins, losses, len(model_margin))
    n = wins + losses
    if n < params.min_discordant:
        return reading
    reading.lower_bound = wilson_lower(wins, n, params.z)
    reading.lam = float(min(params.max_lambda, max(0.0, params.slope * (reading.lower_bound - params.threshold))))
    return reading
