"""Which sessions' conversations hold the text searched for in the sessions list: asked of the
log on a worker thread a moment after the person stops typing (a search reads every event), so the
list shows at once the sessions whose title matches, and soon those that only mention it."""

from __future__ import annotations

import logging

from core.store import Store
from core.text import CJK_CHAR
from gui.qt import QObject, QTimer, Signal
from gui.tasks import TaskKeeper

log = logging.getLogger(__name__)

MIN_CHARS = 3  # fewer match nearly every session, and say little
MIN_CJK_CHARS = 2  # in Chinese or Japanese, two characters are a word ("空行", "解析")
TYPING_PAUSE_MS = 250


def long_enough(needle: str) -> bool:
    """Whether the conversations are searched for `needle` (stripped)."""
    return len(needle) >= (MIN_CJK_CHARS if CJK_CHAR.search(needle) else MIN_CHARS)


class MentionSearch(QObject):
    changed = Signal()  # the sessions found for the text now searched (or none are, any more)

    def __init__(self, keeper: TaskKeeper, store: Store):
        super().__init__()
        self.keeper, self.store = keeper, store
        self._wanted = ""  # the text searched for now
        self._found: tuple[str, frozenset[str]] = ("", frozenset())  # a text, and the sessions mentioning it
        self._timer = QTimer(self, singleShot=True, interval=TYPING_PAUSE_MS)
        self._timer.timeout.connect(self._ask)

    def search(self, text: str) -> None:
        self._wanted = text.strip()
        self._timer.start()

    def stop(self) -> None:
        """No search starts any more (the window closes: the loop that would run it winds down)."""
        self._timer.stop()
        self._timer.timeout.disconnect(self._ask)

    def mentioning(self, text: str) -> frozenset[str]:
        """The sessions whose conversation holds `text`, as far as they are known yet."""
        needle, ids = self._found
        return ids if needle and needle == text.strip() else frozenset()

    def searching(self, text: str) -> bool:
        """Whether what the conversations say about `text` is still to come."""
        needle = text.strip()
        return long_enough(needle) and self._found[0] != needle

    def _ask(self) -> None:
        needle = self._wanted
        if not long_enough(needle):
            if self._found[0]:
                self._found = ("", frozenset())
                self.changed.emit()
            return
        self.keeper.in_thread(self.store.sessions_mentioning, needle, name="search conversations", owner=self,
                              on_success=lambda ids: self._answered(needle, ids),
                              on_failure=lambda error: self._failed(needle, error))

    def _failed(self, needle: str, error: BaseException) -> None:
        log.warning("searching the conversations failed: %s", error)
        self._answered(needle, set())  # found in none: the list no longer says it is searching

    def _answered(self, needle: str, ids: set[str]) -> None:
        if needle == self._wanted:  # not a text typed over since
            self._found = (needle, frozenset(ids))
            self.changed.emit()
