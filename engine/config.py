"""One settings object for the whole engine.

Precedence: explicit arguments > environment (``MNEMOSCOPE_*``) > a ``.env`` file > defaults.
API keys are read from the environment only and are never written to the store or to logs.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from .errors import ConfigError

ENV_PREFIX = "MNEMOSCOPE_"


def default_store_path() -> Path:
    """The store used when neither ``--store`` nor ``MNEMOSCOPE_STORE`` names one."""
    return platformdirs.user_data_path("mnemoscope") / "memory.db"


@dataclass
class Settings:
    """Every tunable of the engine, with the defaults the benchmarks were measured at."""

    store: str = ""
    # lexical
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    char_ngrams: bool = False  # also index character trigrams of longer words (typos match); run reindex after a change
    # dense
    embedder: str = "lsa"  # lsa | hash | openai: which dense signal hybrid fuses
    hash_dim: int = 256
    lsa_dim: int = 128
    # recall
    default_strategy: str = "fused"  # LoCoMo dev recall@10 0.756 vs hybrid 0.616 (engine/rank/heuristic.py)
    # hybrid fusion (docs/benchmarks.md has the comparison these defaults come from):
    # "linear" = (1 − dense_weight) · BM25 / max BM25 + dense_weight · cosine over the union of
    # both candidate lists; "rrf" = Σ weight / (rrf_k + rank) with weight dense_weight for dense.
    fusion: str = "linear"
    rrf_k: float = 60.0
    dense_weight: float = 0.1  # LSA earns only a small weight: more lowers LoCoMo and MuSiQue
    candidate_k: int = 100
    # ranker (engine/rank): the fused strategy, recall tokens, feedback
    fused_signals: str = "auto"  # extra signals fused besides bm25 and dense: "auto" (every registered one) or a comma list
    token_ttl_hours: float = 168.0  # a recall token accepts feedback this long (one week)
    refresh_interval: float = 0.0  # seconds a recall may lag behind other processes' commits (0: none; see Memory.recall)
    trust_half_life_days: float = 45.0  # per-item trust decays toward neutral with this half-life
    coaccess_half_life_days: float = 30.0  # co-access edge weights halve in this long; weak edges are pruned
    ranker_seed: int = 7  # seeds the model's initial weights, replay sampling and the held-out split
    # knowledge: episodes, facts, entities, the typed graph (engine/knowledge)
    fact_dedup_threshold: float = 0.93  # stage-two fact dedup: cosine of "s p o" vectors within one subject
    entity_link_threshold: float = 0.9  # synonymy edge between entity names at least this similar
    episode_window: int = 8  # items per rule-built episode (consecutive, same session or section)
    facts_top_k: int = 5  # facts returned with a recall
    ppr_alpha: float = 0.8  # PPR: probability of following an edge (1 - alpha teleports to the seeds)
    ppr_seed_items: int = 3  # top first-stage (BM25) items that seed the walk
    ppr_entity_mass: float = 0.5  # share of the seed mass on the query's entities (the rest on items)
    ppr_local_above: int = 50_000  # graphs with more nodes use local push from the seeds, not whole-graph iteration
    ppr_blend: float = 0.2  # strategy ppr: weight of the normalised first-stage score against PPR (tuned on dev multi-hop)
    supersession_rules: str = ""  # a rules file extending the default (engine/knowledge/supersession.toml); "": the user config dir's supersession.toml
    llm_batch_items: int = 12  # LLM extraction: items per request (one episode at most)
    episode_judge: bool = False  # after LLM extraction, ask the LLM whether neighbouring episodes merge
    # topics: the topic tree (engine/topics)
    topic_dim: int = 64  # dimensions of the tree's own latent space (TF-IDF → SVD of the term counts)
    topic_leaf_size: int = 24  # items per leaf the tree aims at (raised so that leaves stay ≤ topic_max_leaves)
    topic_min_leaf: int = 4  # no leaf smaller than this: small corpora get few, fuller leaves
    topic_max_leaves: int = 1024
    topic_max_branch: int = 8  # children per topic at most
    topic_max_depth: int = 5
    topic_min_items: int = 9  # fewer live items give a flat tree (one topic) with a message
    topic_temperature: float = 0.1  # P(leaf | text) = softmax(cos(text, leaf) / temperature)
    topic_item_leaves: int = 2  # topic–item edges: an item's top leaves …
    topic_item_min_prob: float = 0.15  # … with at least this probability (else its best leaf)
    topic_ancestor_decay: float = 0.7  # an ancestor h levels up gets weight · decay^h
    topic_neighbors: int = 6  # semantic topic–topic edges: centroid kNN outside the topic's own family
    topic_neighbor_min_cos: float = 0.2
    topic_dag_tau: float = 0.0  # > 0: DAG mode, a topic also hangs under other topics one level up this close
    topic_auto_build: bool = True  # build after ingest when there is no tree or the drift …
    topic_rebuild_drift: float = 1.0  # … (items added + removed since the build) / items at the build reaches this
    # navigate: the intent-steered walk over the topic tree (score terms as in BetterMem's policy)
    walk_steps: int = 6  # moves after each start
    walk_alpha: float = 0.5  # α · cos(topic, query)
    walk_beta: float = 0.3  # β · cos(topic, current topic)
    walk_gamma: float = 0.5  # γ · R_intent: 1 for the intent's relation, 0.5 for a fallback
    walk_novelty: float = 0.3  # bonus for a topic not visited yet
    walk_prior_weight: float = 0.2  # · the rolled-up prior P(subtree | query)
    walk_repetition: float = 0.5  # − repetition · visits²
    walk_backtrack: float = 1.0  # − backtrack when returning to the previous topic
    walk_revisits: int = 0  # times a walk may re-enter a topic on its path (0: never, so no oscillation)
    walk_temperature: float = 0.35  # softmax temperature of the policy
    walk_greedy: bool = True  # greedy unless a seed is given (then sampled, same seed same walk)
    walk_max_starts: int = 3  # several starts when the prior is flat: leaves within …
    walk_start_ratio: float = 0.6  # … this fraction of the best leaf's prior start walks too
    walk_clarify_min_cos: float = 0.5  # clarify keeps semantic neighbours at least this close
    walk_markov_weight: float = 0.2  # η: share of the Markov transition model in the move probabilities
    walk_markov_lambda: float = 0.7  # second- vs first-order transitions
    walk_markov_smoothing: float = 0.1  # additive smoothing of the transition counts
    walk_rerank: float = 0.5  # blend of query–item cosine into the visit scores (0: visits only)
    walk_fusion_weight: float = 0.1  # hybrid_walk: hybrid's score (max 1) + this × the walk's item score
    intent_min_confidence: float = 0.4  # an inferred intent below this probability falls back to neutral
    # LLM / embedding endpoints (OpenAI-compatible); keys only from the environment
    llm_base_url: str = ""
    llm_model: str = ""
    embed_base_url: str = ""
    embed_model: str = ""
    embed_batch_size: int = 64  # texts per /embeddings request
    # images (engine/images.py): off unless a multimodal model is named; the endpoint defaults to embed_base_url
    image_embed_model: str = ""  # e.g. jina-clip-v2: shared photos are embedded at ingest and searched by text
    image_embed_base_url: str = ""
    image_batch_size: int = 8  # images per /embeddings request (each travels base64-encoded)
    image_allow_hosts: str = ""  # hosts a document's image URL may name although not public (comma list: "nas.local,10.0.0.5")
    request_timeout: float = 30.0
    lock_timeout: float = 30.0  # seconds a write waits for another process's write lock before saying who holds it
    max_retries: int = 3
    # limits
    max_query_chars: int = 20_000
    chunk_tokens: int = 200
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def llm_api_key(self) -> str:
        return os.environ.get(ENV_PREFIX + "LLM_API_KEY", "") or os.environ.get("OPENAI_API_KEY", "")

    @property
    def embed_api_key(self) -> str:
        return os.environ.get(ENV_PREFIX + "EMBED_API_KEY", "") or self.llm_api_key

    @property
    def image_embed_api_key(self) -> str:
        return os.environ.get(ENV_PREFIX + "IMAGE_EMBED_API_KEY", "") or self.embed_api_key

    @property
    def store_path(self) -> Path:
        return Path(self.store).expanduser() if self.store else default_store_path()

    @classmethod
    def load(cls, dotenv: str | Path | None = ".env", **overrides: Any) -> "Settings":
        """Build settings from defaults, a ``.env`` file, the environment and ``overrides``."""
        values: dict[str, Any] = {}
        if dotenv and Path(dotenv).is_file():
            values.update(_read_dotenv(Path(dotenv)))
        values.update({k[len(ENV_PREFIX):].lower(): v for k, v in os.environ.items() if k.startswith(ENV_PREFIX)})
        known = {f.name: f for f in fields(cls)}
        settings = cls()
        for name, raw in values.items():
            if name in known and name != "extra":
                setattr(settings, name, _coerce(known[name], raw, f"{ENV_PREFIX}{name.upper()}"))
        for name, value in overrides.items():
            if name not in known:
                raise ConfigError(f"unknown setting {name!r}")
            if value is not None:
                setattr(settings, name, _coerce(known[name], value, name))
        return settings

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)


def _coerce(f: dataclasses.Field, raw: Any, where: str) -> Any:
    kind = type(f.default) if f.default is not dataclasses.MISSING else None
    if kind is None or isinstance(raw, kind) and not (kind is int and isinstance(raw, bool)):
        return raw
    try:
        if kind is bool:
            return str(raw).strip().lower() in {"1", "true", "yes", "on"}
        return kind(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected {kind.__name__}, got {raw!r}") from None


def _read_dotenv(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if key.startswith(ENV_PREFIX) and not key.endswith("API_KEY"):
            out[key[len(ENV_PREFIX):].lower()] = value.strip().strip("'\"")
    return out
