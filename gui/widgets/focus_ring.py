"""A ring around the conversation's item that the keyboard is on.

Tab goes through the conversation's messages, cards and notices, but a label with the focus draws
nothing to say so: someone reading by the keyboard without a screen reader could not see where
they were. The ring is drawn over the item (a child of it, so that it moves with it), in the
palette's highlight colour; it is shown for the keyboard only, not for a click that selects text.
"""

from __future__ import annotations

from collections.abc import Callable

from gui.qt import (
    QApplication,
    QEvent,
    QObject,
    QPainter,
    QPalette,
    QPen,
    QRectF,
    Qt,
    QWidget,
    qt_alive,
)

RING_WIDTH = 2


class FocusRing(QWidget):
    def __init__(self):
        super().__init__()
        self.setObjectName("focus_ring")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    def around(self, item: QWidget | None) -> None:
        """Drawn over `item` (a child of it, moving with it); None: nowhere."""
        if self.parent() is not None:
            self.parent().removeEventFilter(self)
        self.hide()
        self.setParent(item)
        if item is not None:
            item.installEventFilter(self)
            self.setGeometry(item.rect())
            self.raise_()
            self.show()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize and watched is self.parent():
            self.setGeometry(self.parentWidget().rect())
        return False

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), RING_WIDTH))
        half = RING_WIDTH / 2
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(half, half, -half, -half), 5, 5)


class FocusRings(QObject):
    """The ring of one view's items: `item_of` names the item a focused widget is in (None: none
    of the view's). A child of the view: its watch of the focus ends with the view."""

    def __init__(self, view: QWidget, item_of: Callable[[QWidget], QWidget | None]):
        super().__init__(view)
        self._item_of = item_of
        self._ring: FocusRing | None = None
        QApplication.instance().focusChanged.connect(self._focus_moved)

    def _focus_moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        item = self._item_of(new) if new is not None else None
        if item is not None and QApplication.mouseButtons() != Qt.MouseButton.NoButton:
            item = None  # a click, to select text or follow a link: the mouse is where the person looks
        self.put_on(item)

    def put_on(self, item: QWidget | None) -> None:
        if self._ring is None or not qt_alive(self._ring):  # (gone with the item it was around)
            self._ring = FocusRing()
        if self._ring.parent() is not item:
            self._ring.around(item)

    def ringed(self) -> QWidget | None:
        """The item the ring is around, if any."""
        return self._ring.parentWidget() if self._ring is not None and qt_alive(self._ring) else None
