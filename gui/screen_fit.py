"""Windows and dialogs sized to the screen they open on.

A 1920 × 1080 laptop at 150 % scaling offers 1280 × 720 logical pixels, less its taskbar. A window
asked for at a fixed size larger than that opens with its buttons out of reach, and nothing tells
the person why. So every window asks for the size it would like and takes at most what the screen
has; what may grow without bound (a command to approve, an agent's long question) scrolls inside
the window instead of growing it.
"""

from __future__ import annotations

from gui.qt import QApplication, QEvent, QObject, QPoint, QSize, QWidget
from gui.text_size import scaled

CASCADE_STEP = QPoint(36, 36)  # a window opened over others of its kind: below and right of the last

# The title bar and borders the window manager adds around the window Qt sizes.
FRAME_ROOM = QSize(16, 48)


def screen_room(window: QWidget) -> QSize:
    """The size a window may take on the screen it opens on: that of its parent window, if any."""
    parent = window.parentWidget()
    anchor = parent.window() if parent is not None else window
    screen = anchor.screen() or QApplication.primaryScreen()
    return screen.availableGeometry().size() - FRAME_ROOM


def fit_to_screen(window: QWidget, width: int, height: int | None = None) -> None:
    """Resize `window` to width × height as the window is at the platform's text size, that much
    larger with larger text (View → Larger text: at 200 % a list made for 680 pixels cut each
    command's name short), or to less where its screen has less room. No height: the window's own
    (its size hint, which its text already sizes)."""
    room = screen_room(window)
    tall = window.sizeHint().height() if height is None else scaled(height)
    window.resize(min(scaled(width), room.width()), min(tall, room.height()))


class _FollowContent(QObject):
    """Keeps a window as tall as its content needs, up to its screen: taller when a word-wrapped
    text in it gets longer, and back down, no lower than it was, when the text goes again."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.own_height: int | None = None  # the height it had before it grew; None: not grown
        # The heights asked for, oldest first: a window manager grants each later, in turn.
        self.asked: list[int] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if not isinstance(watched, QWidget):
            return False
        kind = event.type()
        # The window's layout has been brought up to date by the time filters see the request.
        if kind in (QEvent.Type.LayoutRequest, QEvent.Type.Show):
            self._follow(watched)
        elif kind == QEvent.Type.Resize and watched.isVisible():
            granted, before = event.size().height(), event.oldSize().height()
            if granted in self.asked:
                del self.asked[:self.asked.index(granted) + 1]
            elif 0 < before < granted <= self._needed(watched):  # Qt grew it to its content's minimum
                if self.own_height is None:
                    self.own_height = before
            else:  # the person's size (or the window manager's) is its own now
                self.own_height = None
                self.asked.clear()
        return False

    @staticmethod
    def _needed(window: QWidget) -> int:
        """The height the window's content needs at its width, up to its screen; 0 for no layout."""
        layout = window.layout()
        if layout is None:
            return 0
        needed = (layout.totalHeightForWidth(window.width()) if layout.hasHeightForWidth()
                  else layout.totalMinimumSize().height())
        return min(needed, screen_room(window).height())

    def _follow(self, window: QWidget) -> None:
        needed = self._needed(window)
        if not needed:
            return
        height = self._height(window)
        if needed > height:
            if self.own_height is None:
                self.own_height = height
            self._resize(window, needed)
        elif self.own_height is not None and needed < height:
            self._resize(window, max(needed, self.own_height))

    def _height(self, window: QWidget) -> int:
        """The window's height, or the last one asked for, if the window manager has not yet granted it."""
        return self.asked[-1] if self.asked else window.height()

    def _resize(self, window: QWidget, height: int) -> None:
        if height != self._height(window):
            self.asked.append(height)
            window.resize(window.width(), height)


def grow_with_content(window: QWidget) -> None:
    """Let `window`, sized once when it opens, grow when a word-wrapped text in it gets longer (a
    connection test's answer, an error), and shrink back when it is gone: its layout's minimum
    ignores the height wrapped text needs at the window's width, so Qt would squeeze the text and
    cut its end off instead; and left grown, the window spreads its rows apart over a gap."""
    window.installEventFilter(_FollowContent(window))


def center_on_screen(window: QWidget) -> None:
    screen = window.screen() or QApplication.primaryScreen()
    area = screen.availableGeometry()
    window.move(area.center() - window.rect().center())


def cascade_over(window: QWidget, others: list[QWidget]) -> None:
    """Move the shown `window` down and right of the lowest of `others` open at the same place
    (two sessions' questions, asked at once): exactly over it, the one beneath would pass unseen.
    Kept on the screen: past its edge, it starts again from the screen's top left."""
    shown = [other for other in others if other is not window and other.isVisible()]
    if not shown:
        return
    spot = max((other.pos() for other in shown), key=lambda p: (p.y(), p.x())) + CASCADE_STEP
    area = (window.screen() or QApplication.primaryScreen()).availableGeometry()
    if spot.x() + window.width() > area.right() or spot.y() + window.height() > area.bottom():
        spot = area.topLeft() + CASCADE_STEP
    window.move(spot)
