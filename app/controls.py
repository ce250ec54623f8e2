"""The characters that drive a terminal instead of being shown, shared by the CLI (which prints
each as its ``\\uXXXX`` escape) and the app (which drops them: none takes a cell). Text from a
document, a file's name or a fact may hold any of them.

- C0, DEL and C1: ESC sequences retitle the window, clear the screen or set the clipboard; a
  carriage return hides what came before it on the line.
- The bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): a terminal that
  orders text both ways shows what follows one backwards, to the line's end, past the field it
  came in ("a tiny\\u202e flat" in a conflict's evidence, the choices after it), so an item's
  words can be made to read as other words. The marks (LRM, RLM, ALM) reorder nothing past
  themselves and stay.
"""

from __future__ import annotations

RANGES = ((0x00, 0x1F), (0x7F, 0x9F), (0x202A, 0x202E), (0x2066, 0x2069))  # inclusive
