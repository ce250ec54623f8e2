"""The λ gate: the learned model gets a say only while it beats the heuristic on held-out queries.

Held out are whole *queries*: every event whose (normalised) query hashes into the held-out
bucket feeds the referee and never the learner. Holding out single pairs let the model win
pairs that shared their used item with pairs it had trained on, and random feedback opened the
gate that way. (A person who repeats one question is served by the feedback memory,
:mod:`engine.rank.marks`, at once; the model is for what carries over to other questions.) For the
same reason a list in which the feedback memory moved a shown hit gives no pairs at all
(``RankerArea.issue_token``): the moved hit's learned features carry its marks, so the model would
win its pairs whoever marked it.

The referee looks at the *discordant* held-out pairs — those the model orders right and the
heuristic wrong, or the reverse — and opens the gate only when all of these hold:

* enough of them (``min_discordant``) from enough held-out queries (``min_queries``);
* the model wins a clear share of them (``min_share``, the minimum effect size);
* the Wilson lower bound of that share clears ``threshold`` at z = 3 (the referee looks after
  every event, so it must be strict);
* a permutation check at the level of queries: flipping the sign of each held-out query's
  (wins − losses) at random gives a total as large as the one observed in at most ``max_p``
  of the flips. Pairs of one query are correlated; queries are the honest unit.

λ then grows with the margin, and shrinks back to 0 when the model stops winning. Every reading
carries its reasons, which ``ranker status`` prints.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

from ..text import lexical_tokens


@dataclass
class GateParams:
    holdout_every: int = 4  # one query in this many is held out (by hash)
    z: float = 3.0
    min_discordant: int = 10
    min_queries: int = 5  # held-out queries with discordant pairs
    min_share: float = 0.6  # minimum effect size: the model wins at least this share of discordant pairs
    max_p: float = 0.01  # permutation check over held-out queries
    permutations: int = 2000
    window: int = 512  # recent held-out pairs the referee looks at
    threshold: float = 0.55  # the Wilson lower bound must clear this …
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
    queries: int = 0  # held-out queries with discordant pairs
    p_value: float = 1.0
    reasons: list[str] = field(default_factory=lambda: ["no held-out feedback yet"])

    def to_dict(self) -> dict[str, object]:
        return {"model_wins": self.model_wins, "heuristic_wins": self.heuristic_wins, "held_out": self.held_out,
                "lower_bound": round(self.lower_bound, 4), "lambda": round(self.lam, 4), "queries": self.queries,
                "p_value": round(self.p_value, 4), "reasons": list(self.reasons)}


def query_key(text: str) -> int:
    """One key per query however it is spaced or cased: its lexical tokens, hashed."""
    digest = hashlib.blake2b(" ".join(lexical_tokens(text)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def is_held_out(group: int, every: int, seed: int = 0) -> bool:
    """Whether a query (by :func:`query_key`) feeds the referee instead of the learner."""
    digest = hashlib.blake2b(f"{seed}:{group}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % every == 0


def wilson_lower(wins: int, n: int, z: float) -> float:
    if n == 0:
        return 0.0
    p = wins / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def permutation_p(per_query: np.ndarray, permutations: int, seed: int) -> float:
    """Share of random sign flips of the per-query (wins − losses) whose sum reaches the observed."""
    observed = per_query.sum()
    if observed <= 0:
        return 1.0
    signs = np.random.default_rng(seed).choice((-1.0, 1.0), size=(permutations, len(per_query)))
    return float((np.sum(signs @ per_query >= observed) + 1) / (permutations + 1))


def referee(model_margin: np.ndarray, heuristic_margin: np.ndarray, params: GateParams,
            groups: np.ndarray | None = None, seed: int = 0) -> GateReading:
    """λ from the margins (better − worse) of the model and the heuristic on held-out pairs."""
    groups = np.zeros(len(model_margin), dtype=np.int64) if groups is None else groups
    model_right, heuristic_right = model_margin > 0, heuristic_margin > 0
    win, loss = model_right & ~heuristic_right, heuristic_right & ~model_right
    wins, losses = int(win.sum()), int(loss.sum())
    n = wins + losses
    discordant = win | loss
    keys, inverse = np.unique(groups[discordant], return_inverse=True)
    per_query = np.bincount(inverse, weights=win[discordant].astype(float) - loss[discordant], minlength=len(keys))
    reading = GateReading(wins, losses, len(model_margin), queries=len(keys), reasons=[])
    reading.lower_bound = wilson_lower(wins, n, params.z)
    share = wins / n if n else 0.0
    if n < params.min_discordant:
        reading.reasons.append(f"{n} discordant held-out pair(s); needs {params.min_discordant}")
    if len(keys) < params.min_queries:
        reading.reasons.append(f"{len(keys)} held-out query(ies) with discordant pairs; needs {params.min_queries}")
    if n and share < params.min_share:
        reading.reasons.append(f"model wins {share:.0%} of discordant pairs; needs {params.min_share:.0%}")
    if n and reading.lower_bound <= params.threshold:
        reading.reasons.append(f"Wilson lower bound {reading.lower_bound:.3f}; needs > {params.threshold:.2f}")
    if not reading.reasons:
        reading.p_value = permutation_p(per_query, params.permutations, seed)
        if reading.p_value > params.max_p:
            reading.reasons.append(f"permutation check p {reading.p_value:.3f}; needs ≤ {params.max_p}")
    if reading.reasons:
        return reading
    reading.lam = float(min(params.max_lambda, max(0.0, params.slope * (reading.lower_bound - params.threshold))))
    reading.reasons.append(f"open: model wins {share:.0%} of {n} discordant pairs over {len(keys)} held-out queries, "
                           f"p {reading.p_value:.3f}")
    return reading
