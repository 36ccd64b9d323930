"""A list's rows of several lines, each drawn, when one line is taller than the others.

A title in Chinese is drawn in a fallback font taller than the list's own (18 pixels against 14), so
its row's first line is taller than its second. Qt sizes the row to the sum of its lines (32), but
when drawing it assumes each next line as tall as the one before (18 + 18 > 32), and so it drew the
title alone, with "…", and left out the line that says when and how the session ended. Each row
is made as tall as Qt's drawing wants it.
"""

from __future__ import annotations

import math

from gui.qt import (
    QModelIndex,
    QSize,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTextLayout,
    QTextOption,
)


class WholeLines(QStyledItemDelegate):
    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().sizeHint(option, index)
        shown = QStyleOptionViewItem(option)
        self.initStyleOption(shown, index)
        heights = line_heights(shown.text, shown.font)
        if len(heights) < 2:
            return hint
        padding = max(0, hint.height() - math.ceil(sum(heights)))  # (the style's, over the text)
        return QSize(hint.width(), max(hint.height(), math.ceil(drawn_height(heights)) + padding))


def drawn_height(heights: list[float]) -> float:
    """How tall lines of these heights need to be drawn all by Qt: Qt draws the next line only
    when, after a line, the room left holds another of that line's height."""
    return max([sum(heights)] + [sum(heights[:i + 1]) + heights[i] for i in range(len(heights) - 1)])


def line_heights(text: str, font) -> list[float]:
    """The heights of `text`'s lines (as an item's text is shown: "\\n" made a line separator) in
    `font`, each as tall as the fonts its characters are drawn in."""
    layout = QTextLayout(text.replace("\n", "\u2028"), font)
    wrap = QTextOption()
    wrap.setWrapMode(QTextOption.WrapMode.ManualWrap)  # (a line is cut, not wrapped, in these lists)
    layout.setTextOption(wrap)
    heights = []
    layout.beginLayout()
    while (line := layout.createLine()).isValid():
        line.setLineWidth(1_000_000)
        heights.append(line.height())
    layout.endLayout()
    return heights
