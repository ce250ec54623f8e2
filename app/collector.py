"""Garbage collection that does not hold the screen still.

Python's full collection looks at every object that can be in a cycle. In the app they are
mostly objects that live as long as it does (the engine's areas, each screen's widgets, Textual's
styles and caches), and each full collection looked at all of them again, holding the UI thread
every second or two while a person paged through a table or typed into the palette: the longest
stalls of every screen (docs/scaling.md, "The app at 1M, the UI thread").

So what survives a full collection is frozen (``gc.freeze``): the next ones look only at what was
made since. A cycle that dies among the frozen (a page of rows replaced, a dialog closed) is not
freed by them; a *sweep* (the frozen objects unfrozen and collected once more) frees it, when the
frozen objects have doubled since the last sweep (its cost, which grows with them, stays a small
share of the work: as a list doubling its room), at a moment the app is idle.
"""

from __future__ import annotations

import gc
import time
from typing import Any

OLDEST = 2  # the generation a full collection collects (Python has three: 0, 1, 2)


class QuietCollector:
    """Freezes what each full collection leaves; sweeps when :attr:`sweep_due` (the app decides when)."""

    def __init__(self) -> None:
        self.installed = False
        self.found_frozen = False  # objects were frozen before the install (a test run freezes its imports)
        self.swept_at = 0  # the frozen objects after the last sweep (or the install)
        self.sweeps = 0

    def install(self) -> None:
        """From now on, what a full collection leaves is frozen (what lives now, at once)."""
        if self.installed:
            return
        self.found_frozen = gc.get_freeze_count() > 0
        gc.freeze()
        self.swept_at = gc.get_freeze_count()
        gc.callbacks.append(self._collected)
        self.installed = True

    def uninstall(self) -> None:
        """Python's collection as it was (the process may go on without the app: a test run, a
        program that embeds it): every object looked at again; or, when objects were frozen
        before the install, what lives frozen again once the app's dead cycles are freed."""
        if not self.installed:
            return
        gc.callbacks.remove(self._collected)
        gc.unfreeze()
        if self.found_frozen:
            gc.collect()
            gc.freeze()
        self.installed = False

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        """A full collection has ended (in whichever thread made it): what it left is frozen."""
        if phase == "stop" and info["generation"] == OLDEST:
            gc.freeze()

    @property
    def sweep_due(self) -> bool:
        """The frozen objects have doubled since the last sweep (counting them walks them: a few
        milliseconds for half a million)."""
        return self.installed and gc.get_freeze_count() >= 2 * max(self.swept_at, 1)

    def sweep(self) -> float:
        """Free the cycles that died among the frozen objects: a full collection of everything
        (the UI thread waits for it: call it when the app is idle). Returns its seconds."""
        started = time.perf_counter()
        gc.unfreeze()
        gc.collect()  # its end freezes what is left (_collected)
        self.swept_at = gc.get_freeze_count()
        self.sweeps += 1
        return time.perf_counter() - started
