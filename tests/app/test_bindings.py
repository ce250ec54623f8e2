"""Every key binding of the app has an id, so that a person can remap it (App.set_keymap): a
binding without one cannot be named in a keymap."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.binding import Binding

import mnemoscope.app.widgets
import mnemoscope.screens

MODULES = ["mnemoscope.app.tui", *(f"{package.__name__}.{m.name}" for package in (mnemoscope.screens, mnemoscope.app.widgets)
                                   for m in pkgutil.iter_modules(package.__path__))]


def test_every_binding_has_an_id():
    seen, missing = 0, []
    for name in MODULES:
        module = importlib.import_module(name)
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != name:
                continue
            for binding in vars(cls).get("BINDINGS", ()):
                if isinstance(binding, Binding):
                    seen += 1
                    if not binding.id:
                        missing.append(f"{name}.{cls_name}: {binding.key}")
    assert seen > 20, seen  # the app's bindings were found
    assert not missing, missing
