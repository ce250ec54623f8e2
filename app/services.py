"""The app's one way to the engine.

``Services`` owns the open :class:`engine.Memory` and offers the few calls the screens make.
Everything here runs in worker threads (it may block); nothing here imports Textual. Tests
build the app with their own ``Services`` (a temporary store) or a subclass that fakes a call.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from mnemoscope.engine.errors import MnemoscopeError  # a leaf: importing it loads no numpy

if TYPE_CHECKING:  # the engine (numpy, scipy) is imported on first use, in a worker: the UI paints first
    from mnemoscope.engine import Memory, Settings
    from mnemoscope.engine.pipeline import Recall
    from mnemoscope.engine.ingest import FilesRead
    from mnemoscope.engine.records import Counts, IngestReport, ParsedSource, Stats
    from mnemoscope.engine.store.activity import ChangeWatch

DEMO_DIR = Path(__file__).resolve().parents[1] / "assets" / "demo"

Progress = Callable[[int, int, str], None]
Cancelled = Callable[[], bool]
WARM_UP_WAIT = 120.0  # seconds a recall waits at most for the warm-up (it takes a few at a million items)
WARM_UP_POLL = 0.1  # seconds between two looks at whether a waiting recall was cancelled
RELEARNING_POLL = 0.5  # seconds between two looks at whether a wait for the ranker's relearning was cancelled
# why a warm-up runs, as a waiting query says it ("Waiting for …"): each announcement names its cause
AFTER_OPEN = "the engine to load its graph, topic tree and ranker (once after the store opens)"
AFTER_CHANGE = "the engine to take in a change another process made to the store (its matrices built again)"

class NoStore(MnemoscopeError, RuntimeError):
    """A call needs an open store and none is open."""

    def __init__(self) -> None:
        super().__init__("no store is open (open one with Ctrl+P → Open store)")


@dataclass(frozen=True)
class RecallRequest:
    """What the query screen asks beside the text (a comparison changes the strategy and intent of
    each side); the app always asks for the trace."""

    strategy: str
    mode: str = "pro"
    top_k: int = 10
    intent: str | None = None  # None: the engine infers it
    as_of: str | None = None  # answer as of this date (what was said by then, the facts that held then); None: now


@dataclass
class LLMStatus:
    configured: bool
    reachable: bool | None  # None: not checked (not configured)
    detail: str


def short_path(path: str | Path) -> str:
    """A path as a person reads it: the home folder as ``~``."""
    text = str(path)
    home = str(Path.home())
    return "~" + text[len(home):] if home != "/" and text.startswith(home + "/") else text


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all, readable by its owner only: a screenshot shows the
    memory's texts, so it is kept as private as the store (a refusal is a MnemoscopeError's one line)."""
    from mnemoscope.engine.files import atomic_writer

    with atomic_writer(path) as fh:
        fh.write(text.encode("utf-8"))


class Services:
    """Open, close and reach the store. One instance per app."""

    def __init__(self, store_path: str | Path | None = None, *, demo: bool = False, label: str | None = None,
                 settings: "Settings | None" = None) -> None:
        self.store_path = Path(store_path) if store_path else None
        self.demo = demo
        self.fixed_label = label
        self.settings = settings
        self.mem: Memory | None = None
        self.watch: "ChangeWatch | None" = None  # asks SQLite whether anyone committed (see follow)
        self._tempdir: str | None = None
        self._lock = threading.Lock()
        self._warming = threading.Condition()  # guards the two below
        self._warm_ups_announced = 0  # warm-ups announced so far (warm_up_coming): each one's number
        self._warm_ups_running: dict[int, str] = {}  # the numbers of those announced and not yet ended: their causes

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def label(self) -> str:
        """The store as the header shows it."""
        if self.fixed_label:
            return self.fixed_label
        if self.mem is None:
            return "no store"
        if self._tempdir:
            return "demo (temporary store)"
        return short_path(self.mem.path)

    def target_path(self) -> Path:
        """The store to open: the one given, else the configured one (environment, env file,
        config file), else the default."""
        if self.store_path:
            return self.store_path
        from mnemoscope.engine.config import Settings

        return (self.settings or Settings.load()).store_path

    def missing_store(self, path: str | Path | None = None) -> Path | None:
        """The store :meth:`open` would make anew: ``path`` (or the configured store) where no
        file is, unless it is the default store, which the first run makes without asking (and
        never the demo's temporary one). The app asks before making it: a mistyped ``--store``
        or Open store path was made into an empty store and its folders, with no word of it."""
        from mnemoscope.engine.config import default_store_path

        if path is None and self.demo:
            return None
        target = Path(path if path is not None else self.target_path()).expanduser()
        if os.path.lexists(target) or target == default_store_path():
            return None
        return target

    def open(self, path: str | Path | None = None) -> "Memory":
        """Open ``path`` (or the configured store); the previous store is closed only on success."""
        with self._lock:
            if path is not None:
                target, tempdir = Path(path).expanduser(), None
            elif self.demo:
                tempdir = tempfile.mkdtemp(prefix="mnemoscope-demo-")
                target = Path(tempdir) / "demo.db"
            else:
                target, tempdir = self.target_path(), None
            mem = self._memory(target)
            old, old_temp = self.mem, self._tempdir
            self.mem, self._tempdir = mem, tempdir
            self.store_path = target if path is not None else self.store_path
        if old is not None:
            old.close()
        if old_temp:
            shutil.rmtree(old_temp, ignore_errors=True)
        return mem

    def open_temporary(self) -> "Memory":
        """A fresh empty store in a temporary folder (the way out of a locked or corrupt store)."""
        with self._lock:
            tempdir = tempfile.mkdtemp(prefix="mnemoscope-")
            mem = self._memory(Path(tempdir) / "memory.db")
            old, old_temp = self.mem, self._tempdir
            self.mem, self._tempdir = mem, tempdir
        if old is not None:
            old.close()
        if old_temp:
            shutil.rmtree(old_temp, ignore_errors=True)
        return mem

    def _memory(self, path: Path) -> "Memory":
        from mnemoscope.engine import Memory
        from mnemoscope.engine.store.activity import ChangeWatch

        mem = Memory(path, settings=self.settings.replace() if self.settings else None, client="app")
        old, self.watch = self.watch, ChangeWatch(mem.path)
        if old is not None:
            old.close()
        return mem

    def changed_elsewhere(self) -> bool:
        """Whether any connection committed since the last look (one PRAGMA on a connection of its
        own: cheap enough for the UI thread, and never waiting for a write that holds the store)."""
        watch = self.watch
        return watch is not None and self.mem is not None and watch.changed()

    def follow(self) -> Counts | None:
        """Take in what other processes committed (a worker calls this); the store's new counts,
        or None when nothing came from elsewhere (this app's own writes are shown already)."""
        mem = self.mem
        if mem is None or not mem.refresh():
            return None
        return mem.counts()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch = None
        if self.mem is not None:
            self.mem.close()
            self.mem = None
        if self._tempdir:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    @property
    def memory(self) -> "Memory":
        if self.mem is None:
            raise NoStore()
        return self.mem

    def read_only_reason(self) -> str:
        """Why the open store is not written to (another user could change it, the file or its
        folder may not be written), or "" (a change refused says it too, but a person should
        know before changing anything)."""
        return self.mem.store.why_read_only if self.mem is not None else ""

    def ranker_problem(self) -> str:
        """Why recall uses less than was taught (a feedback log or learned state that cannot be
        read: no feedback, or the heuristic alone), or "". A person should hear it when the store
        opens, not only on the Ranker screen, or a mark sent meanwhile is refused unexplained."""
        return self.mem.ranker.state_problem if self.has("ranker") else ""

    def has(self, area: str) -> bool:
        """Whether the open engine has an area (knowledge, topics, ranker)."""
        return self.mem is not None and self.mem.has_area(area)

    # -- reading ------------------------------------------------------------------------------

    def wait_relearned(self, cancelled: Cancelled) -> bool:
        """Wait for the ranker's relearning in the background to end (True), or until
        ``cancelled()`` (False): a screen shows its end without reloading meanwhile."""
        ranker = self.memory.ranker
        while not ranker.wait_relearned(RELEARNING_POLL):
            if cancelled():
                return False
        return True

    def stats(self) -> Stats | None:
        return self.memory.stats() if self.mem is not None else None

    def counts(self) -> Counts | None:
        """The header's counts, read from the store without loading the engine's areas."""
        return self.memory.counts() if self.mem is not None else None

    @staticmethod
    def as_of_date(text: str) -> str | None:
        """A date typed in the app as recall reads it (YYYY-MM-DD, "now": None); a ValueError
        of one line when it is no date."""
        from mnemoscope.engine.as_of import parse_as_of

        return parse_as_of(text)

    @staticmethod
    def later(a: str, b: str) -> bool:
        """Whether date ``a`` lies after ``b`` as an as-of date reads them: at the precision both
        give ("2023-05-06" is not after "2023-05", which means all of May)."""
        from mnemoscope.engine.as_of import later

        return later(a, b)

    def warm_up_coming(self, cause: str) -> Callable[[], None]:
        """Announce a warm-up (on the UI thread, before its worker starts): from now on a recall
        waits for it, and a waiting query says ``cause`` (:data:`AFTER_OPEN`, :data:`AFTER_CHANGE`).
        Returns what the warm-up's worker calls when it has ended, whatever its outcome."""
        with self._warming:
            self._warm_ups_announced += 1
            number = self._warm_ups_announced
            self._warm_ups_running[number] = cause

        def end() -> None:
            with self._warming:
                self._warm_ups_running.pop(number, None)
                self._warming.notify_all()

        return end

    def wait_for_warm_up(self, waiting: Callable[[str], None] | None = None, cancelled: Cancelled | None = None,
                         timeout: float = WARM_UP_WAIT) -> None:
        """Wait for the warm-ups announced so far to end (``waiting`` is called first if there is
        one, with the cause of the oldest). A recall beside one would build the very matrices it
        is building, both threads on one GIL: the two then end later than one after the other.
        Warm-ups announced during the wait do not hold it (another process writing every second
        announces one after each change: they overlap, and the recall would wait for all of
        them). The wait ends early when ``cancelled`` says so, and after ``timeout`` seconds the
        recall goes ahead all the same (a warm-up whose worker never ran must not hold queries,
        nor the app's exit)."""
        deadline = time.monotonic() + timeout
        with self._warming:
            if not self._warm_ups_running:
                return
            last = self._warm_ups_announced
            cause = self._warm_ups_running[min(self._warm_ups_running)]

        def held() -> bool:
            return min(self._warm_ups_running, default=last + 1) <= last

        if waiting is not None:  # outside the lock: it may wait for the UI thread, which may announce a warm-up
            waiting(cause)
        with self._warming:
            while held() and time.monotonic() < deadline and not (cancelled and cancelled()):
                self._warming.wait(WARM_UP_POLL)

    def warm_up(self) -> None:
        """Load the engine's areas (graph, topic tree, ranker) so the first query need not."""
        mem = self.mem
        if mem is None:
            return
        try:
            mem.warm_up()
        except Exception:
            if mem is self.mem:  # a store closed meanwhile (another was opened) needs no warming
                raise

    def strategies(self) -> dict[str, str]:
        """The recall strategies the open engine can run, each with what it does in the engine's
        own words (builds every area: its strategies are its methods)."""
        return self.memory.strategies()

    def strategy_names(self) -> list[str]:
        """The recall strategies the open engine can run, fused first when it exists (cheap: no
        area is built for them)."""
        return sorted(self.memory.strategy_names(), key=lambda n: (n != "fused", n != "hybrid", n))

    def default_strategy(self) -> str:
        return getattr(self.mem, "default_strategy", None) or "hybrid"

    def source_names(self) -> dict[int, str]:
        """Every source's name by id (a hit names its source with it)."""
        return {s.id: s.name for s in self.memory.sources()}

    def recall(self, query: str, request: RecallRequest, waiting: Callable[[str], None] | None = None,
               cancelled: Cancelled | None = None) -> "Recall | None":
        """Recall, once the warm-ups announced before have ended (see :meth:`wait_for_warm_up`,
        which ``waiting`` and ``cancelled`` are for); None when cancelled while it waited (the
        person left, or a newer query replaced this one): the recall is not run for nobody."""
        self.wait_for_warm_up(waiting, cancelled)
        if cancelled is not None and cancelled():
            return None
        return self.memory.recall(query, top_k=request.top_k, strategy=request.strategy, mode=request.mode,
                                  trace=True, intent=request.intent, as_of=request.as_of)

    # -- writing ------------------------------------------------------------------------------

    def load_demo(self, progress: Progress | None = None, cancelled: Cancelled | None = None) -> IngestReport:
        """Ingest the demo content shipped in ``assets/demo`` into the open store."""
        return self.memory.ingest([DEMO_DIR], strict=False, progress=progress, cancelled=cancelled)

    def parse(self, paths: Iterable[str | Path]) -> FilesRead:
        return self.memory.parse(paths)

    # -- LLM endpoint -------------------------------------------------------------------------

    def llm_status(self, timeout: float = 2.0) -> LLMStatus:
        """Whether an LLM endpoint is configured, and whether ``GET {base}/models`` answers: through
        the same client as every other request to it, so the key never leaves its origin."""
        from mnemoscope.engine import Settings

        settings = self.mem.settings if self.mem is not None else (self.settings or Settings.load())
        base = (settings.llm_base_url or "").rstrip("/")
        if not base:
            # the setting first: a narrow terminal cuts the line's end
            return LLMStatus(False, None, "none configured (set MNEMOSCOPE_LLM_BASE_URL): rule-based extraction")
        # Imported only when there is an endpoint to ask: importing the client takes seconds on a busy machine.
        from openai import APIConnectionError, APIStatusError, OpenAIError

        from mnemoscope.engine.net import endpoint_client

        model = settings.llm_model or "(no model set)"
        try:
            with endpoint_client(base, settings.llm_api_key, timeout=timeout, max_retries=0) as client:
                client.models.list()
        except APIStatusError as exc:
            if exc.status_code in (401, 403):
                return LLMStatus(True, False, f"{base} refused the key (HTTP {exc.status_code}); model {model}")
            return LLMStatus(True, True, f"{base} answers (HTTP {exc.status_code} on /models); model {model}")
        except APIConnectionError as exc:
            reason = exc.__cause__ or exc
            return LLMStatus(True, False, f"{base} unreachable ({reason}); model {model}")
        except (OpenAIError, ValueError) as exc:
            return LLMStatus(True, False, f"{base}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}; model {model}")
        return LLMStatus(True, True, f"{base} reachable; model {model}")


def describe_error(exc: BaseException) -> str:
    """One line for the person. A ``MnemoscopeError`` is written for them; anything else is a bug,
    named by its type (the app logs its traceback)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, MnemoscopeError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
