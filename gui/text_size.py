"""Text size: the window's font scaled in steps (View menu, Ctrl+= / Ctrl+- / Ctrl+0), remembered.

One font for the whole window, the platform's own at 100 %: the chat, the three panes, the editors
and the lists grow together, and Markdown headings are sized from it (gui/markdown.py).
"""

from __future__ import annotations

from gui import markdown
from gui.qt import QApplication, QFont

STEPS = (0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0)
_BASE_PROPERTY = "tripane_base_point_size"  # the platform's size, kept on the app before any change
FALLBACK_POINTS = 10.0  # a platform font given in pixels has no point size


def nearest_step(scale: float) -> float:
    return min(STEPS, key=lambda step: abs(step - scale))


def next_step(scale: float, direction: int) -> float:
    """One step larger (direction 1) or smaller (-1), stopping at the ends; 0: actual size."""
    if direction == 0:
        return 1.0
    index = STEPS.index(nearest_step(scale)) + direction
    return STEPS[max(0, min(len(STEPS) - 1, index))]


def base_points(app: QApplication) -> float:
    stored = app.property(_BASE_PROPERTY)
    if stored:
        return float(stored)
    points = app.font().pointSizeF()
    points = points if points > 0 else FALLBACK_POINTS
    app.setProperty(_BASE_PROPERTY, points)
    return points


def text_scale(app: QApplication) -> float:
    """How much larger the window's text is than the platform's (1.0: as large)."""
    points = app.font().pointSizeF()
    return points / base_points(app) if points > 0 else 1.0


def scaled(pixels: float) -> int:
    """`pixels` made for the platform's text size, as many more as the window's text is larger."""
    return round(pixels * text_scale(QApplication.instance()))


def apply_text_size(app: QApplication, scale: float) -> float:
    """Set the window's text to `scale` × the platform size; returns the size in points."""
    points = round(base_points(app) * nearest_step(scale), 1)
    if app.font().pointSizeF() != points:  # each change re-polishes every widget alive
        font = QFont(app.font())
        font.setPointSizeF(points)
        app.setFont(font)
        # Under a style sheet (the theme's) widgets do not take a new application font by
        # themselves; setting the sheet again polishes them anew, from it.
        app.setStyleSheet(app.styleSheet())
    markdown.set_text_size(points)
    return points
