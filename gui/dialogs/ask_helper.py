"""Session → Ask a helper…: the person's own question, answered by a research helper that reads the
work folder, the agent's three files and long-term memory (core/agent/research.py), aside from
the agent, which never sees it. The same dialog shows an earlier answer again (its notice in the
conversation links here)."""

from __future__ import annotations

from gui.bidi import IsolatesLeftOutOfCopies, isolated
from gui.desktop_open import opens_web_links
from gui.dialogs.forms import on_ctrl_enter
from gui.keys import give_window_keys
from gui.markdown import to_html
from gui.qt import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from gui.screen_fit import fit_to_screen
from gui.widgets.chat_items import escape_html
from gui.widgets.hinted_text import HintedText

ABOUT = ("A helper with a short context of its own reads the work folder, the agent's plan, findings and "
         "progress, and long-term memory (web pages too: where the session asks before a fetch, you are "
         "asked) to answer you. The agent does not see your question or the answer, and goes on working; "
         "the helper's requests count in the session's spending.")
LIVE_LINES = 8  # of the helper's reads, shown while it works


class AskHelperDialog(QDialog):
    ask_requested = Signal(str)  # the question
    stop_requested = Signal()  # report what it has found so far

    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ask_helper")
        self.setWindowTitle(f"Ask a helper — {isolated(title)}")
        self.setModal(False)
        heading = QLabel(f"<b>Ask a helper</b><br>{escape_html(title)}")
        heading.setWordWrap(True)
        about = QLabel(ABOUT)
        about.setWordWrap(True)
        prompt = QLabel("Your &question:")
        self.question = HintedText()
        give_window_keys(self.question)  # (Ctrl+K finds a session, as everywhere, not Linux's "delete to the end")
        self.question.setObjectName("helper_question")
        self.question.setPlaceholderText("For example: which files has the agent changed for the date parser, and "
                                         "does its plan still match them? (Ctrl+Enter to ask)")
        self.question.show_lines(3.5)
        self.question.setTabChangesFocus(True)
        prompt.setBuddy(self.question)
        self.ask_button = QPushButton("&Ask")
        self.ask_button.clicked.connect(self.ask)
        self.stop_button = QPushButton("&Report now")
        self.stop_button.setToolTip("The helper stops reading and answers from what it has found so far")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.stop_button)
        row.addWidget(self.ask_button)
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setObjectName("helper_status")
        self.status.setWordWrap(True)
        self.error = QLabel("")
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        self.answer = IsolatesLeftOutOfCopies()
        self.answer.setAccessibleName("The helper's answer")
        opens_web_links(self.answer)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (heading, about, prompt, self.question):
            layout.addWidget(widget)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.error)
        layout.addWidget(self.answer, 1)
        layout.addWidget(self.buttons)
        on_ctrl_enter(self, self.ask)
        fit_to_screen(self, 720, 600)
        self._reads: list[str] = []
        self.working = False

    def ask(self) -> None:
        question = self.question.toPlainText().strip()
        if self.working:
            return
        if not question:
            self.show_error("Type a question first.")
            return
        self.ask_requested.emit(question)

    def started(self) -> None:
        self.error.setVisible(False)
        self.working = True
        self._reads = []
        self.ask_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.question.setReadOnly(True)
        self.answer.clear()
        self.status.setText("The helper is reading…")

    def read(self, line: str) -> None:
        """A read the helper started: its latest ones are shown while it works."""
        self._reads.append(line.strip())
        shown = "\n".join(self._reads[-LIVE_LINES:])
        self.status.setText(f"The helper is reading ({len(self._reads)} so far)…")
        self.answer.setPlainText(shown)

    def show_answer(self, markdown: str, said: str) -> None:
        """The report (Markdown), and a line on what it took."""
        self.working = False
        self.ask_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.question.setReadOnly(False)
        self.error.setVisible(False)
        self.status.setText(said)
        self.answer.setHtml(to_html(markdown))

    def show_error(self, message: str) -> None:
        self.working = False
        self.ask_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.question.setReadOnly(False)
        self.status.setText("")
        self.error.setText(message)
        self.error.setVisible(True)

    def show_earlier(self, question: str, markdown: str, said: str) -> None:
        """An answer given before (its notice in the conversation was clicked): read, then ask anew."""
        self.question.setPlainText(question)
        self.show_answer(markdown, said)
