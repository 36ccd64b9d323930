"""A list's rows that name a path and then what it is ("litellm/llms/anthropic/chat/handler.py ·
changed by a command"): when a row is wider than the list, the path loses its middle, and the file's
name and the words after it stay. Cut at the row's end, as Qt cuts, or at its middle, rows of a
formatter's 600 files all read "litellm/llms/…" alike. The item's text stays whole (its tip, the
filter, a screen reader); only what is drawn is cut.
"""

from __future__ import annotations

from gui.qt import (
    QListWidget,
    QModelIndex,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    Qt,
)

SEPARATOR = "  ·  "  # between the path and what is said of it
LEAST_PATH_CHARS = 8  # of the path, kept at the least: "a/…/x.py"
NAME_SHARE = 0.6  # of a row too narrow for all of it, the file's name may take this much


class PathRows(QStyledItemDelegate):
    def __init__(self, view: QListWidget):
        super().__init__(view)
        self.view = view
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex) -> None:  # noqa: N802 (Qt's name)
        super().initStyleOption(option, index)
        option.text = fitted(option.text, option.fontMetrics, self._room(option))

    def _room(self, option: QStyleOptionViewItem) -> int:
        """The width the row's text has: the list's, not the row's (a row is as wide as its text)."""
        margin = 3 * self.view.style().pixelMetric(self.view.style().PixelMetric.PM_FocusFrameHMargin) + 4
        return min(option.rect.width(), self.view.viewport().width() - option.rect.x()) - margin


def fitted(text: str, metrics, room: int) -> str:
    """`text` as drawn in `room` pixels: whole if it fits; else its path's folders cut in the
    middle, the file's name kept whole while it fits ("litellm/…/transformation.py"), or the
    path itself cut in the middle when even the name does not. The name keeps up to NAME_SHARE
    of the row before the words after it: those are then cut at the row's end (as Qt draws
    what is too long), not the name ("se…og · created by a command, then not by th…")."""
    if metrics.horizontalAdvance(text) <= room:
        return text
    path, separator, rest = text.partition(SEPARATOR)
    tail = separator + rest
    folder, slash, name = path.rpartition("/")
    named = metrics.horizontalAdvance(f"…/{name}" if slash else name)
    path_room = max(room - metrics.horizontalAdvance(tail), metrics.averageCharWidth() * LEAST_PATH_CHARS,
                    min(named, int(room * NAME_SHARE)))
    folder_room = path_room - metrics.horizontalAdvance(slash + name)
    if slash and folder_room >= metrics.averageCharWidth() * 4:
        return metrics.elidedText(folder, Qt.TextElideMode.ElideMiddle, folder_room) + slash + name + tail
    if slash and path_room >= named:
        return f"…/{name}{tail}"
    return metrics.elidedText(path, Qt.TextElideMode.ElideMiddle, path_room) + tail
