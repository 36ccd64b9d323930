"""Menus whose shortcuts keep their distance from the text in large text.

Fusion leaves the same few pixels between a menu item's text and its shortcut whatever the font:
at 200 % text the longest item ran into its keys ("Find in the conversation or the focused
paneCtrl+F"). A menu given `spaced()` adds four spaces' width, in its own font, to an item that has
a shortcut. Only menus take this style; every other widget keeps the application's.
"""

from __future__ import annotations

from gui.qt import QMenu, QProxyStyle, QStyle

_kept: list[QProxyStyle] = []  # a widget does not own the style it is given: one, kept while Tripane runs


class _ShortcutGap(QProxyStyle):
    def sizeFromContents(self, kind, option, size, widget):  # noqa: N802 (Qt's name)
        size = super().sizeFromContents(kind, option, size, widget)
        if kind == QStyle.ContentsType.CT_MenuItem and "\t" in option.text:  # (text\tshortcut)
            size.setWidth(size.width() + 2 * option.fontMetrics.horizontalAdvance("  "))
        return size


def spaced(menu: QMenu) -> QMenu:
    if not _kept:
        _kept.append(_ShortcutGap("Fusion"))
    menu.setStyle(_kept[0])
    return menu
