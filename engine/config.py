"""One settings object for the whole engine, checked when it is loaded.

Where settings come from, strongest first: explicit arguments (``Settings.load(name=value)``, the
CLI's ``--set``), the environment (``MNEMOSCOPE_<NAME>``), an env file the person named
(``--env-file PATH``: :func:`env_file`), the user's config file (``config.toml`` in the user
config directory: :func:`config_path`), then the defaults. Nothing else: a ``.env`` in whatever
folder Mnemoscope runs from is not read unless it is named, because content found on disk must not
decide which store is opened or where texts and keys are sent.

Every value is checked as it is read: a choice must be one of its choices (``embedder="lsaa"`` is
refused, not a silent zero of dense hits), a boolean one of true/false/yes/no/on/off/1/0, a number
a finite number; a bad one is one line naming where it came from (:class:`engine.errors.ConfigError`).
An ``MNEMOSCOPE_*`` variable that names no setting is warned about, once, in one line.

API keys (``MNEMOSCOPE_LLM_API_KEY``, ``…_EMBED_API_KEY``, ``…_IMAGE_EMBED_API_KEY``, and
``OPENAI_API_KEY``) come from the same places but the defaults, are never written to the store or
to logs, and each goes only to the origin it was configured for (:meth:`Settings.api_key`).
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import math
import os
import threading
import tomllib
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator, Literal, Mapping, get_args, get_origin, get_type_hints

import platformdirs

from . import hosts
from .errors import ConfigError, FileRefused
from .files import other_readers, read_own

log = logging.getLogger(__name__)

ENV_PREFIX = "MNEMOSCOPE_"
MAX_SETTING_NUMBER = 2**63 - 1  # what SQLite and numpy hold
MAX_ENV_FILE_BYTES = 1024 * 1024  # a config or env file larger than this is not one
Embedder = Literal["lsa", "hash", "openai"]
Fusion = Literal["linear", "rrf"]
Endpoint = Literal["llm", "embed", "image_embed"]
ENDPOINTS: tuple[Endpoint, ...] = ("llm", "embed", "image_embed")
OPENAI_ORIGIN = "https://api.openai.com"  # where OPENAI_API_KEY may go (it names no endpoint of its own)
TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def default_store_path() -> Path:
    """The store used when neither ``--store`` nor ``MNEMOSCOPE_STORE`` names one."""
    return platformdirs.user_data_path("mnemoscope") / "memory.db"


def config_path() -> Path:
    """The user's config file: ``config.toml`` in the user config directory (platformdirs)."""
    return platformdirs.user_config_path("mnemoscope") / "config.toml"


@dataclass
class Settings:
    """Every tunable of the engine, with the defaults the benchmarks were measured at."""

    store: str = ""
    # lexical
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    char_ngrams: bool = False  # also index character trigrams of longer words (typos match); run reindex after a change
    related_words: bool = True  # queries also search related words from the bundled lexicon (engine/query.py)
    # dense
    embedder: Embedder = "lsa"  # which dense signal hybrid fuses
    hash_dim: int = 256
    lsa_dim: int = 128
    # ingest: an ingest of at least this many items stores and indexes them first and leaves the
    # areas' work (extraction, episodes, topics) to a durable queue (Memory.catch_up); 0: never
    defer_above: int = 5000
    # a store of at least this many items keeps its index's arrays in a file beside it
    # (<store>-index, engine/index_file.py) and opens by mapping them; 0: every store
    save_index_above: int = 20_000
    # recall
    default_strategy: str = "fused"  # the best on every benchmark (docs/benchmarks.md)
    # hybrid fusion (docs/benchmarks.md has the comparison these defaults come from):
    # "linear" = (1 − dense_weight) · BM25 / max BM25 + dense_weight · cosine over the union of
    # both candidate lists; "rrf" = Σ weight / (rrf_k + rank) with weight dense_weight for dense.
    fusion: Fusion = "linear"
    rrf_k: float = 60.0
    dense_weight: float = 0.1  # LSA earns only a small weight: more lowers LoCoMo and MuSiQue
    dense_calibrate: bool = True  # an external embedder's weight is measured on the store (engine/calibration.py) instead
    word_vectors_weight: float = 0.5  # hybrid's weight for the bundled English word vectors (engine/wordvec.py; not with embedder "openai"); 0: off
    candidate_k: int = 100
    # ranker (engine/rank): the fused strategy, recall tokens, feedback
    fused_signals: str = "auto"  # extra signals fused besides bm25 and dense: "auto" (every registered one) or a comma list
    token_ttl_hours: float = 168.0  # a recall token accepts feedback this long (one week)
    refresh_interval: float = 0.5  # seconds a recall may lag behind other processes' commits, never its own (0: none; see Memory.recall)
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
    ppr_iterations: int = 10  # power-iteration steps below ppr_local_above (docs/benchmarks.md: 10 rank as 15 did)
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
    # LLM / embedding endpoints (OpenAI-compatible); their keys are in ``api_keys`` (see api_key())
    llm_base_url: str = ""
    llm_model: str = ""
    embed_base_url: str = ""
    embed_model: str = ""
    embed_batch_size: int = 64  # texts per /embeddings request
    # images (engine/images.py): off unless a multimodal model is named; the endpoint defaults to embed_base_url
    image_embed_model: str = ""  # e.g. jina-clip-v2: shared photos are embedded at ingest and searched by text
    image_embed_base_url: str = ""
    image_batch_size: int = 8  # images per /embeddings request (each travels base64-encoded)
    image_allow_hosts: str = ""  # the only hosts a document's image URL is fetched from (comma list: "nas.local,*.example.org,127.0.0.1:8080"; engine/hosts.py)
    request_timeout: float = 30.0
    lock_timeout: float = 30.0  # seconds a write waits for another process's write lock before saying who holds it
    max_retries: int = 3
    # limits
    max_import_bytes: int = 2 * 2**30  # an export larger than this is not imported: import holds it all until it commits (README)
    max_query_chars: int = 20_000
    # what one call or file may add, refused before any work (README): a text or Markdown file or
    # a note (its source is read, chunked and indexed whole, in one transaction) …
    max_text_bytes: int = 10 * 2**20
    # … and one MCP remember, whose transaction holds the store's write lock meanwhile: its text
    # (or its messages as JSON) and its messages
    max_remember_bytes: int = 2**20
    max_remember_messages: int = 5_000
    chunk_tokens: int = 200
    # API keys by endpoint (``llm``, ``embed``, ``image_embed``) and ``openai``; read them with api_key()
    api_keys: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for f in fields(self):
            setattr(self, f.name, _checked(f.name, getattr(self, f.name), f.name))

    def api_key(self, endpoint: Endpoint) -> str:
        """The key to send to ``endpoint``: its own key; else a key configured for another endpoint
        at the same origin (scheme, host and port); else ``OPENAI_API_KEY`` when the endpoint is
        OpenAI's. A key never goes to an origin nobody configured it for."""
        own = self.api_keys.get(endpoint, "")
        url = self.base_url(endpoint)
        if own or not url:
            return own
        from .net import origin

        here = origin(url)
        for other in ENDPOINTS:
            key, other_url = self.api_keys.get(other, ""), self.base_url(other)
            if key and other_url and origin(other_url) == here:
                return key
        openai_key = self.api_keys.get("openai", "")
        return openai_key if openai_key and here == origin(OPENAI_ORIGIN) else ""

    def base_url(self, endpoint: Endpoint) -> str:
        """The endpoint's URL as configured (the image model's defaults to the embedding endpoint)."""
        if endpoint == "image_embed":
            return self.image_embed_base_url or self.embed_base_url
        return self.llm_base_url if endpoint == "llm" else self.embed_base_url

    @property
    def llm_api_key(self) -> str:
        return self.api_key("llm")

    @property
    def embed_api_key(self) -> str:
        return self.api_key("embed")

    @property
    def image_embed_api_key(self) -> str:
        return self.api_key("image_embed")

    @property
    def store_path(self) -> Path:
        return Path(self.store).expanduser() if self.store else default_store_path()

    @classmethod
    def load(cls, *, config_file: str | Path | None = None, **overrides: Any) -> "Settings":
        """Settings from the defaults, the user's config file (``config_file``, default
        :func:`config_path`; read when it exists), the env file named with :func:`env_file`, the
        environment, then ``overrides``, each value checked (:class:`ConfigError` if one is bad)."""
        values: dict[str, Any] = {}
        keys: dict[str, str] = {}
        path = Path(config_file) if config_file is not None else config_path()
        if _is_file(path):
            _take(_read_config(path), values, keys, lambda name: f"{path}: {name}")
        for variables, where in ((_env_file.variables, _env_file.label), (os.environ, "")):
            _take(_settings_of(variables, where), values, keys, lambda name, where=where: where + _variable(name))
        _take(overrides, values, keys, lambda name: name, strict=True)
        return cls(**values, api_keys=keys)

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)


# -- reading and checking values --------------------------------------------------------------

# The range of each numeric setting that has one (inclusive): a count below its least, a share
# outside [0, 1] or a temperature, timeout or half-life that is not positive would fail later, far
# from its cause, or quietly do nothing. Weights of the walk's policy and thresholds a person may set
# beyond reach on purpose (fact_dedup_threshold = 1.1: never merge) have none.
_COUNT, _SOME, _SHARE, _COSINE = (1, math.inf), (0, math.inf), (0, 1), (-1, 1)
_POSITIVE = (math.ulp(0.0), math.inf)
RANGES: dict[str, tuple[float, float]] = {
    "bm25_k1": _SOME, "bm25_b": _SHARE, "hash_dim": _COUNT, "lsa_dim": _COUNT, "defer_above": _SOME, "save_index_above": _SOME,
    "rrf_k": _SOME,
    "dense_weight": _SHARE, "word_vectors_weight": _SHARE, "candidate_k": _COUNT, "token_ttl_hours": _POSITIVE, "refresh_interval": _SOME,
    "trust_half_life_days": _POSITIVE, "coaccess_half_life_days": _POSITIVE, "ranker_seed": _SOME,
    "episode_window": _COUNT, "facts_top_k": _SOME, "ppr_alpha": _SHARE, "ppr_seed_items": _SOME,
    "ppr_entity_mass": _SHARE, "ppr_local_above": _SOME, "ppr_iterations": _COUNT, "ppr_blend": _SHARE, "llm_batch_items": _COUNT,
    "topic_dim": _COUNT, "topic_leaf_size": _COUNT, "topic_min_leaf": _COUNT, "topic_max_leaves": _COUNT,
    "topic_max_branch": (2, math.inf), "topic_max_depth": _COUNT, "topic_min_items": _SOME, "topic_temperature": _POSITIVE,
    "topic_item_leaves": _COUNT, "topic_item_min_prob": _SHARE, "topic_ancestor_decay": _SHARE, "topic_neighbors": _SOME,
    "topic_neighbor_min_cos": _COSINE, "topic_dag_tau": _SOME, "topic_rebuild_drift": _SOME, "walk_steps": _SOME,
    "walk_revisits": _SOME, "walk_temperature": _POSITIVE, "walk_max_starts": _COUNT, "walk_start_ratio": _SHARE,
    "walk_clarify_min_cos": _COSINE, "walk_markov_weight": _SHARE, "walk_markov_lambda": _SHARE,
    "walk_markov_smoothing": _SOME, "walk_rerank": _SHARE, "walk_fusion_weight": _SOME, "intent_min_confidence": _SHARE,
    "embed_batch_size": _COUNT, "image_batch_size": _COUNT, "request_timeout": _POSITIVE, "lock_timeout": _SOME,
    "max_retries": _SOME, "max_import_bytes": _COUNT, "max_query_chars": _COUNT, "chunk_tokens": _COUNT,
    "max_text_bytes": _COUNT, "max_remember_bytes": _COUNT, "max_remember_messages": _COUNT,
}


def _out_of_range(number: float, low: float, high: float) -> str:
    if low <= number <= high:
        return ""
    if high == math.inf:
        return "more than 0" if low == _POSITIVE[0] else f"at least {low:g}"
    return f"between {low:g} and {high:g}"


_KEY_SETTINGS = {f"{e}_api_key": e for e in ENDPOINTS}
_warned: set[str] = set()


def _take(raw: Mapping[str, Any], values: dict[str, Any], keys: dict[str, str], where: Any, strict: bool = False) -> None:
    """Check ``raw`` settings (by lower-case name) into ``values`` and API keys into ``keys``."""
    known = _hints()
    for name, value in raw.items():
        if value is None and strict:
            continue
        if name in _KEY_SETTINGS or name == "openai_api_key":
            keys[_KEY_SETTINGS.get(name, "openai")] = _checked(name, value, where(name), str)
        elif name in known and name != "api_keys":
            values[name] = _checked(name, value, where(name))
        else:
            raise ConfigError(f"{where(name)}: unknown setting{_did_you_mean(name)}")


def _settings_of(variables: Mapping[str, str], where: str) -> dict[str, str]:
    """The settings named by environment variables (``MNEMOSCOPE_<NAME>``, and ``OPENAI_API_KEY``);
    a ``MNEMOSCOPE_`` variable that names no setting is warned about once and left out."""
    known = set(_hints()) - {"api_keys"} | set(_KEY_SETTINGS)
    out = {"openai_api_key": variables["OPENAI_API_KEY"]} if variables.get("OPENAI_API_KEY") else {}
    for variable, value in variables.items():
        if not variable.startswith(ENV_PREFIX):
            continue
        name = variable[len(ENV_PREFIX):].lower()
        if name in known:
            out[name] = value
        elif variable not in _warned:
            _warned.add(variable)
            log.warning("mnemoscope: %s%s is not a setting (ignored)%s", where, variable, _did_you_mean(name))
    return out


def _variable(name: str) -> str:
    return "OPENAI_API_KEY" if name == "openai_api_key" else ENV_PREFIX + name.upper()


def _did_you_mean(name: str) -> str:
    close = difflib.get_close_matches(name, [n for n in _hints() if n != "api_keys"], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _hints() -> dict[str, Any]:
    global _HINTS
    if _HINTS is None:
        _HINTS = get_type_hints(Settings)
    return _HINTS


_HINTS: dict[str, Any] | None = None


def _checked(name: str, value: Any, where: str, kind: Any = None) -> Any:
    """``value`` as the type setting ``name`` is declared with, or :class:`ConfigError` naming ``where``."""
    kind = kind or _hints()[name]
    if get_origin(kind) is Literal:
        choices = get_args(kind)
        if value not in choices:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(choices)}")
        return value
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower() if isinstance(value, (str, int)) else None
        if text in TRUE | FALSE:
            return text in TRUE
        raise ConfigError(f"{where}: {value!r} is not a boolean (true or false)")
    if kind in (int, float):
        text = value.strip() if isinstance(value, str) else None
        try:  # plain ASCII: Python's int and float also read '1_000' and other scripts' digits ('١٢')
            number = value if text is None else kind(text) if text.isascii() and "_" not in text else None
        except ValueError:
            number = None
        if (isinstance(number, bool) or not isinstance(number, (int, float)) or (kind is int and not isinstance(number, int))
                or not math.isfinite(number) or abs(number) > MAX_SETTING_NUMBER):
            raise ConfigError(f"{where}: {value!r} is not {'an integer' if kind is int else 'a number'}")
        if name in RANGES and (wanted := _out_of_range(number, *RANGES[name])):
            raise ConfigError(f"{where}: {value!r} is out of range (it must be {wanted})")
        return kind(number)
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {value!r} is not text")
        if name == hosts.SETTING:
            try:
                hosts.HostList.parse(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        return value
    return value


def _is_file(path: Path) -> bool:
    """Whether the config file is there; a folder on its way that this user may not enter
    (another user's config directory) is a clear refusal, not a traceback."""
    try:
        return path.is_file()
    except OSError as exc:
        raise ConfigError(f"{path}: not a readable TOML config file ({exc.strerror})") from None


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = read_own(path, MAX_ENV_FILE_BYTES)
    except FileRefused as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc})") from None
    try:
        read = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable TOML config file ({exc})") from None
    _warn_if_keys_readable(path, read)
    return read


def _warn_if_keys_readable(path: Path, settings: Mapping[str, Any]) -> None:
    """Warn once that the settings file ``path`` holds an API key (a setting or variable named
    ``…api_key`` that is not empty) other users can read: the key is theirs too. It is read all
    the same (a file others could change is refused, for it decides where texts go; this one has
    already told what it holds)."""
    if not any(name.lower().endswith("api_key") and value for name, value in settings.items()) or str(path) in _warned:
        return
    try:
        info = os.stat(path)
    except OSError:
        return
    readers = other_readers(info)
    if readers:
        _warned.add(str(path))
        log.warning("mnemoscope: %s holds an API key and %s can read it (mode %o): chmod 600 %s",
                    path, readers, info.st_mode & 0o777, path)


# -- an env file the person named ---------------------------------------------------------------


class _EnvFile:
    """The env file this process reads settings from (``--env-file``), if any."""

    def __init__(self) -> None:
        self.variables: dict[str, str] = {}
        self.label = ""
        self.lock = threading.Lock()


_env_file = _EnvFile()


@contextmanager
def env_file(path: str | Path | None) -> Iterator[list[str]]:
    """Within the block, every :meth:`Settings.load` in this process also reads ``path``, a file of
    ``NAME=value`` lines (``#`` comments, optional quotes, an optional ``export``), under the
    environment; yields the names of the settings it holds (``MNEMOSCOPE_*`` and ``OPENAI_API_KEY``:
    other lines are left alone), so that the caller can say it was read. With ``None`` nothing is
    read (a ``.env`` is never read unless named). Its settings are checked here, before anything
    says the file was read: a bad value is the one line (:class:`ConfigError`)."""
    variables = _read_env_file(Path(path)) if path is not None else {}
    label = f"{path}: " if path is not None else ""
    _take(_settings_of(variables, label), {}, {}, lambda name: label + _variable(name))
    with _env_file.lock:
        previous = _env_file.variables, _env_file.label
        _env_file.variables, _env_file.label = variables, label
    try:
        yield sorted(v for v in variables if v.startswith(ENV_PREFIX) or v == "OPENAI_API_KEY")
    finally:
        with _env_file.lock:
            _env_file.variables, _env_file.label = previous


def _read_env_file(path: Path) -> dict[str, str]:
    try:  # a regular file only: a FIFO would wait for a writer forever, /dev/zero never ends
        data = read_own(path, MAX_ENV_FILE_BYTES)
    except FileRefused as exc:
        raise ConfigError(f"{path}: cannot read the env file ({exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read the env file ({exc})") from None
    out: dict[str, str] = {}
    for number, line in enumerate(text.split("\n"), 1):  # lines end at \n (not at U+2028, as str.splitlines has it)
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.removeprefix("export ").partition("=")
        if not sep or not name.strip().replace("_", "").isalnum():
            raise ConfigError(f"{path}:{number}: expected NAME=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[name.strip()] = value
    _warn_if_keys_readable(path, {n: v for n, v in out.items() if n.startswith(ENV_PREFIX) or n == "OPENAI_API_KEY"})
    return out
