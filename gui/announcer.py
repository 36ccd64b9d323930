"""What a screen reader says without being asked: what a sighted person sees happen at a glance.

A screen reader speaks what has the keyboard focus, and a dialog that takes it. The rest of what
changes on screen it does not say: the agent's reply appearing in the conversation, a tool failing,
the run ending, a message in the status bar. Someone who cannot see the window heard nothing of a
run between its questions. Here those are announced (Qt's announcement event: Orca through AT-SPI,
Narrator and NVDA through UI Automation, VoiceOver), politely, after what is being said, except a
failed run, which interrupts.

Nothing is sent while no assistive technology listens, nor while the person is in another
application (see listening). Debian 12's Orca 43 ignores announcements (later ones speak them):
its users hear the focused items, the questions and the dialogs' descriptions.
"""

from __future__ import annotations

import re
import time

from core.events import AssistantMessage, Event, SessionEnded, ToolResult, ended_word
from core.text import one_line
from gui.markdown import to_html
from gui.qt import (
    QAccessible,
    QAccessibleAnnouncementEvent,
    QApplication,
    QLabel,
    QObject,
    QTextDocumentFragment,
    QTimer,
    QWidget,
    Signal,
)

REPLY_CHARS = 600  # of an agent's reply said; the rest is in the conversation, to read there
FAILURE_CHARS = 160  # of a tool's error: its first words say what went wrong
# How a run's end is told: in the tray's message, and to a screen reader.
RUN_ENDED_TITLES = {"done": "Task done", "capped": "Run stopped at its limit", "aborted": "Run stopped",
                    "error": "Run failed"}
STATUS_SETTLE_MS = 400  # a status message counting up ("Deleting sessions… 3 of 400") is said as it settles
SAME_AGAIN_S = 5.0  # the same status message again this soon is not said twice


# The marks the window puts before a state or a kind of line (● running, ■ ended, ✓ done, ✎ draft…):
# a sighted reader's glance, a screen reader's "black circle", "black square".
_MARKS = re.compile(r"(?:^|(?<=\s))[●○■?‖↻✓✗…⚠↳✎▸⌕⟳✦]\s+")


def spoken(text: str) -> str:
    """A line of the window as a screen reader should say it: without its marks, its " · "
    separators as commas, its lines as sentences."""
    said = _MARKS.sub("", text)
    said = re.sub(r"\s+·\s+", ", ", said)
    return re.sub(r"([.!?:;…]?)\s*\n\s*", lambda line: f"{line[1] or '.'} ", said).strip()


def said_with(field: QWidget, notes: tuple[QLabel, ...], within: QWidget, own: str = "") -> None:
    """The lines shown under a field (a warning, a note) said with it, after its `own` description:
    a screen reader does not read them unasked. `within`: the window they are shown in."""
    shown = [spoken(note.text()) for note in notes if note.isVisibleTo(within) and note.text()]
    field.setAccessibleDescription(" ".join(filter(None, [own, *shown])))


def html_said(html: str) -> str:
    """What a rich text reads as, its tags gone and its entities read."""
    return QTextDocumentFragment.fromHtml(html).toPlainText().strip()


def plain(markdown: str) -> str:
    """A reply as it reads: its Markdown's marks (asterisks, backticks, #) are not to be spoken."""
    return html_said(to_html(markdown))


def reply_said(text: str) -> str:
    said = plain(text)
    if len(said) > REPLY_CHARS:
        said = one_line(said, REPLY_CHARS) + " (the rest is in the conversation)"
    return f"Agent: {said}"


def what_to_say(event: Event, last_reply: str = "") -> tuple[str, bool]:
    """What a record of the shown session says, and whether it interrupts; ("", False): nothing.
    `last_reply`: the agent's last reply, which a run ended by it gives as its summary."""
    match event:
        case AssistantMessage(text=text) if text.strip():
            return reply_said(text), False
        case ToolResult(ok=False, name=name, content=content):
            return f"{name} failed: {one_line(content, FAILURE_CHARS)}", False
        case SessionEnded(status=status, summary=summary):
            said = run_ended_title(status)
            summary = summary.strip()
            if summary and summary != last_reply.strip():
                said += f": {one_line(plain(summary), REPLY_CHARS)}"
            return said, status == "error"
    return "", False


def listening() -> bool:
    """Whether a screen reader (or another assistive technology) listens, and the person is in one
    of Tripane's windows. In another application, the agent's every reply would be spoken over their
    work: a run's end and a question reach them there through the taskbar and the tray
    (MainWindow.alert), as they reach a sighted person."""
    return QAccessible.isActive() and QApplication.activeWindow() is not None


def run_ended_title(status: str) -> str:
    return RUN_ENDED_TITLES.get(status, f"Run ended: {ended_word(status)}")


class Announcer(QObject):
    said = Signal(str)  # each announcement as it is made

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._window = window
        self._last_reply = ""
        self._settling = ""  # the status bar's latest message (or a search's result), said once it settles
        self._again = False  # whether it is said even if it was just said (a search's "Not found")
        self._settled_said: tuple[str, float] = ("", float("-inf"))
        self._settle = QTimer(self, singleShot=True, interval=STATUS_SETTLE_MS)
        self._settle.timeout.connect(self._say_settled)

    def record(self, event: Event) -> None:
        """A record of the session the window shows, as it comes."""
        # (what a reply says is rendered again to be said: a few milliseconds at a turn's end, not
        # spent for no one)
        text, interrupts = what_to_say(event, self._last_reply) if listening() else ("", False)
        if isinstance(event, AssistantMessage) and event.text.strip():
            self._last_reply = event.text
        if text:
            self.say(text, interrupts)

    def session_shown(self) -> None:
        self._last_reply = ""

    def status_message(self, message: str) -> None:
        """The status bar's message changed (QStatusBar.messageChanged): said once it stays a moment."""
        if message:
            self._settling, self._again = spoken(message), False  # ("? … a question for you", "↻ Retrying")
            self._settle.start()

    def once_settled(self, text: str) -> None:
        """Said once nothing else comes for a moment: what a search found as its text is typed."""
        self._settling, self._again = text, True
        self._settle.start()

    def _say_settled(self) -> None:
        said, when = self._settled_said
        if not self._again and self._settling == said and time.monotonic() - when < SAME_AGAIN_S:
            return
        self._settled_said = (self._settling, time.monotonic())
        self.say(self._settling)

    def say(self, text: str, interrupts: bool = False) -> None:
        if not listening():
            return
        self.said.emit(text)
        event = QAccessibleAnnouncementEvent(self._window, text)
        if interrupts:
            event.setPoliteness(QAccessible.AnnouncementPoliteness.Assertive)
        QAccessible.updateAccessibility(event)
