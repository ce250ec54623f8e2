"""A small column chart drawn with block characters: y axis, x axis, deterministic."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

BLOCKS = " ▁▂▃▄▅▆▇█"


def column_chart(values: list[float], width: int, height: int, lo: float = 0.0, hi: float = 1.0,
                 style: str = "cyan") -> Text:
    """``values`` (one per event) resampled to ``width`` columns, ``height`` rows, with axes."""
    label_w = 5
    cols = max(1, width - label_w - 1)
    text = Text()
    if not values:
        samples: list[float | None] = [None] * cols
    elif len(values) <= cols:
        samples = list(values) + [None] * (cols - len(values))
    else:
        samples = [values[min(len(values) - 1, int((c + 1) * len(values) / cols) - 1)] for c in range(cols)]
    span = (hi - lo) or 1.0
    levels = [None if v is None else max(0.0, min(1.0, (v - lo) / span)) * height * 8 for v in samples]
    for row in range(height):
        label = f"{hi:.1f}" if row == 0 else f"{lo + span / 2:.1f}" if row == height // 2 else ""
        text.append(f"{label:>{label_w - 1}} ", style="dim")
        text.append("┤" if label else "│", style="dim")
        floor = (height - 1 - row) * 8
        for level in levels:
            fill = 0 if level is None else int(max(0, min(8, round(level - floor))))
            text.append(BLOCKS[fill], style=style)
        text.append("\n")
    text.append(f"{lo:>{label_w - 1}.1f} └" + "─" * cols + "\n", style="dim")
    n = len(values)
    last = f"event {n}" if n else "no events yet"
    shown = min(n, cols) if n <= cols else cols
    pad = max(1, shown - len(last) - 1)
    text.append(" " * (label_w + 1) + ("1" + " " * pad + last if n > 1 else last), style="dim")
    return text


class ColumnChart(Widget):
    """A titled column chart of values in [lo, hi]; set ``values`` to redraw."""

    DEFAULT_CSS = """
    ColumnChart {
        height: 8;
    }
    """

    values: reactive[list[float]] = reactive(list, always_update=True)

    def __init__(self, title: str, lo: float = 0.0, hi: float = 1.0, style: str = "cyan", **kwargs) -> None:
        super().__init__(**kwargs)
        self.title, self.lo, self.hi, self.style = title, lo, hi, style

    def render(self) -> Text:
        height = max(2, self.size.height - 3)
        out = Text(self.title + "\n", style="bold")
        out.append_text(column_chart(self.values, self.size.width, height, self.lo, self.hi, self.style))
        return out
