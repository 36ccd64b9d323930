"""Parts of a window in the order a screen reader goes through them."""

from __future__ import annotations

from gui.qt import QSplitter


def in_reading_order(splitter: QSplitter) -> None:
    """A splitter keeps its widgets in reverse (each one added is put under the others), and a
    screen reader goes through a window's parts in that order: the Progress pane first, the sessions
    list last. Its handles stay above the widgets, where the mouse grabs them."""
    for index in range(splitter.count()):
        splitter.widget(index).raise_()
    for index in range(splitter.count()):
        splitter.handle(index).raise_()
