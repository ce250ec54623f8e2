"""``scipy.sparse``, imported on first use.

Importing scipy.sparse is slow (its array-API layer imports the whole of numpy, f2py and the test
helpers included: a large share of the app's cold-start budget, docs/benchmarks.md), while opening
a store needs numpy alone. The modules that build sparse matrices use :data:`sparse` in its place; the first
attribute read imports the real module, once, under a lock (the app's threads may race to it).
"""

from __future__ import annotations

import importlib
import threading
from typing import Any


class LazyModule:
    """Stands for a module until an attribute is read; from then on each attribute is a plain one."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            with self._lock:
                if self._module is None:
                    self._module = importlib.import_module(self._name)
        value = getattr(self._module, attr)
        setattr(self, attr, value)  # the next read skips __getattr__
        return value


sparse = LazyModule("scipy.sparse")
