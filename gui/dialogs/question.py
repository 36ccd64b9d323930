"""The person-in-the-loop dialog: one non-modal window per open `human_question`.

It never runs a nested event loop (no exec()): it is shown, and its `answered` signal carries the
choice back; the window passes it to `Session.answer`. What it shows depends on why the agent stopped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.agent.options import option_label
from core.agent.rules import failures_grouped, for_the_person
from core.agent.state import asked_by_helper, more_budget_words
from core.events import HumanQuestion
from core.text import one_line
from gui.bidi import IsolatesLeftOutOfCopies, isolated
from gui.desktop_open import opens_web_links
from gui.dialogs.forms import on_ctrl_enter
from gui.keys import give_window_keys
from gui.markdown import inline_html, to_html
from gui.mnemonics import give_labels_keys, with_keys
from gui.qt import (
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSize,
    QSpinBox,
    Qt,
    QTextOption,
    QVBoxLayout,
    QWidget,
    Signal,
)
from gui.screen_fit import screen_room
from gui.text_size import scaled
from gui.widgets.hinted_text import HintedText
from gui.widgets.pictures import PictureBox, PicturesToGo, not_added

TITLES = {
    "three_strike": "3-Strike: the same error three times",
    "danger_turn": "The turn threshold is reached",
    "ask_user": "The agent asks you",
    "approval": "Approve a tool call?",
    "budget": "The budget cap is reached",
}
TEXT_PROMPTS = {
    "three_strike": "Hint, or the new model name for “Change model”:",
    "danger_turn": "Guidance for the agent (optional):",
    "approval": "Reason, if you deny (the agent sees it):",
    "ask_user": "Your answer:",
    "budget": "Note for the agent (optional):",
}
# The button that takes what the person typed, which Ctrl+Enter presses: in an approval, the text
# is the reason for a denial (never an approval by a chord pressed by habit).
TYPED_ANSWERS = {"ask_user": "answer", "three_strike": "retry_with_hint", "danger_turn": "guidance",
                 "approval": "deny"}
NOTHING_TYPED = {"ask_user": "Type an answer, or pick one of the options.",
                 "three_strike": "Type the hint first, or pick one of the options.",
                 "danger_turn": "Type the guidance first, or pick one of the options.",
                 "approval": "Type the reason for denying first, or pick one of the options."}
# A research helper's read asks: the helper reads the reason, and its report tells the agent.
HELPER_TEXT_PROMPT = "Reason, if you deny (the research helper sees it):"
REBOOT_LABELS = {"goal": "Goal", "tried": "Tried", "wrong": "What went wrong", "differently": "Would do differently",
                 "ask_human": "Asks you", "error": "Note",
                 "text": "Its answer"}  # a reply that was not the JSON asked for, kept whole


_STEP_MARKS = re.compile(r"^\s*(\d+\.|[-*])\s*\[ \]\s*")

SAID_CHARS = 1000  # of the question said as its window opens (all of it is in the window)
DETAILS_WIDTH = 540  # the dialog's minimum width, less its margins, at the platform's text size


def details_width(window: QWidget) -> int:
    """DETAILS_WIDTH as much wider as the text is larger (at 200 % the question ran down a narrow
    column), within the screen."""
    return min(scaled(DETAILS_WIDTH), screen_room(window).width() - 40)


def _escape(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _block(text: str, name: str = "detail") -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class DetailsView(IsolatesLeftOutOfCopies):
    """What the agent asks and why, in one read-only view. It is as tall as its text up to half the
    screen, and scrolls beyond: a command to approve may be a whole file, and a model may write a
    question of any length. Long words and lines wrap, so the dialog never grows wider than the
    screen either."""

    def __init__(self, html: str):
        super().__init__()
        self.setObjectName("details")
        self.setAccessibleName("What the agent asks, and why")
        opens_web_links(self)  # the text is the agent's: a link in it must not navigate the view
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setHtml(html)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        # Before the dialog is laid out the view has no width of its own: use the one it will have.
        width = self.viewport().width() if self.isVisible() else details_width(self.window())
        document = self.document().clone(self)
        document.setTextWidth(width)
        height = int(document.size().height()) + 2 * self.frameWidth() + 2
        document.deleteLater()
        return QSize(details_width(self.window()), min(height, screen_room(self.window()).height() // 2))


class QuestionDialog(QDialog):
    answered = Signal(str, str, str)  # qid, choice, text
    # 3-Strike's "Edit the plan": the person edits it in its pane, and saving it answers (qid, text).
    plan_edit_requested = Signal(str, str)

    def __init__(self, question: HumanQuestion, session_title: str = "", parent: QWidget | None = None,
                 session_id: str = "", workdir: str = "", answer_wait_min: int = 0):
        super().__init__(parent)
        self.question = question
        self.answer_wait_min = answer_wait_min  # how long the agent waits before its fallback (0: for you)
        self.session_id = session_id
        self.workdir = workdir  # where an approved command runs
        self.setObjectName(f"question_{question.reason}")
        self.setModal(False)
        # Named by its session too: two sessions' questions are two windows alike in the taskbar.
        named = f" — {isolated(session_title)}" if session_title else ""
        self.setWindowTitle(f"{TITLES.get(question.reason, 'A question')}{named} — Tripane")
        self.setMinimumWidth(details_width(self) + 20)
        layout = QVBoxLayout(self)
        heading = _block(f"<h3>{TITLES.get(question.reason, 'A question')}</h3>"
                         + (f"<span>{_escape(session_title)}</span>" if session_title else ""))
        layout.addWidget(heading)
        self.details = DetailsView(self._question_html() + self._context_html())
        layout.addWidget(self.details, 1)
        # Said with the window's title as it opens (the focus goes to the answer box, under it).
        self.setAccessibleDescription(one_line(self.details.toPlainText(), SAID_CHARS))
        self.more_turns: QSpinBox | None = None
        self.more_usd: QDoubleSpinBox | None = None
        self.more_tokens: QSpinBox | None = None
        if question.reason == "danger_turn":
            self.more_turns = QSpinBox()
            self.more_turns.setRange(1, 500)
            self.more_turns.setValue(10)
            row = QFormLayout()
            row.addRow("Continue for this many more turns:", self.more_turns)
            layout.addLayout(row)
        elif question.reason == "budget":
            layout.addLayout(self._more_budget_rows())
        prompt = QLabel(HELPER_TEXT_PROMPT if asked_by_helper(question)
                        else TEXT_PROMPTS.get(question.reason, "Details (optional):"))
        layout.addWidget(prompt)
        # The agent's own question may be answered with a picture too (what the page looks like).
        shows = question.reason == "ask_user" and not asked_by_helper(question)
        self.text = PictureBox() if shows else HintedText()
        self.text.setObjectName("answer_text")
        prompt.setBuddy(self.text)  # the prompt names the box for a screen reader
        self.text.show_lines(3.5)
        self.text.setTabChangesFocus(True)  # Tab goes on to the buttons, as in any form
        give_window_keys(self.text)  # (Ctrl+K finds a session, as everywhere, not Linux's "delete to the end")
        layout.addWidget(self.text)
        self.pictures = PicturesToGo()  # (shown while there are any)
        if shows:
            self.text.pictures_given.connect(self._take_pictures)
            # A file from outside the work folder (a log, a workbook in Downloads) goes with its text,
            # as in the message box: its path alone is one the agent cannot read.
            self.text.workdir = lambda: Path(workdir) if workdir else None
            self.text.refused.connect(self.show_error)  # (a scan's pages show under the answer, in no red line)
        layout.addWidget(self.pictures)
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        row.addStretch(1)
        options = self._options()
        for option, label in zip(options, with_keys([self._label(option) for option in options])):
            button = QPushButton(label)  # (with its Alt key: a dialog answered from the keyboard)
            button.setObjectName(f"answer_{option}")
            button.setAutoDefault(False)  # no answer by the Enter key: approving a command takes a click
            button.clicked.connect(lambda _=False, choice=option: self.choose(choice))
            self.buttons[option] = button
            row.addWidget(button)
        layout.addLayout(row)
        self.error = _block("", "error")
        self.error.setVisible(False)
        layout.addWidget(self.error)
        self.text.setFocus()  # typing goes to the answer, not to the details above it
        give_labels_keys(self)  # (the turns or the budget granted, after the buttons' own keys)
        if (typed := TYPED_ANSWERS.get(question.reason)) in self.buttons:  # the button the text is for
            on_ctrl_enter(self, lambda: self._send_typed(typed))
            self.text.setPlaceholderText(("Ctrl+Enter to send" if typed == "answer" else f"Ctrl+Enter: {self._label(typed)}")
                                         + ("; paste a screenshot to show it" if shows else ""))

    def _send_typed(self, choice: str) -> None:
        """Ctrl+Enter: the typed text goes with the button it is for; with nothing typed, a word on
        what to type (a chord pressed by habit answers nothing unasked)."""
        if not self.text.toPlainText().strip():
            return self.show_error(NOTHING_TYPED[self.question.reason])
        self.choose(choice)

    def _more_budget_rows(self) -> QFormLayout:
        """How much more the person grants if they continue: as much again as the session started
        with, to change (one row a cap in force)."""
        rows = QFormLayout()
        context = self.question.context
        if usd := float(context.get("more_usd") or 0):
            self.more_usd = QDoubleSpinBox()
            self.more_usd.setDecimals(2 if usd >= 0.01 else 4)  # (a cap below a cent, set on the command line)
            self.more_usd.setRange(10 ** -self.more_usd.decimals(), 100000)
            self.more_usd.setPrefix("$")
            self.more_usd.setValue(usd)
            rows.addRow("Continue until this much more is spent:", self.more_usd)
        if tokens := int(context.get("more_tokens") or 0):
            self.more_tokens = QSpinBox()
            self.more_tokens.setRange(1, 2_000_000_000)
            self.more_tokens.setGroupSeparatorShown(True)
            self.more_tokens.setSuffix(" tokens")
            self.more_tokens.setValue(tokens)
            rows.addRow("Continue until this many more are used:", self.more_tokens)
        return rows

    def _options(self) -> tuple[str, ...]:
        if self.question.reason == "ask_user":
            return tuple(self.question.options) + ("answer",)
        return tuple(self.question.options)

    def _label(self, option: str) -> str:
        if option == "answer":
            return "Send answer"
        return option_label(option, self.question)

    def _question_html(self) -> str:
        """The question as its asker wrote it: the agent's own (or a research helper's) in
        Markdown, as models write (`average()`, **this**), rendered as its messages are; Tripane's
        (an approval, 3-Strike, whose errors hold names like __init__) as plain text."""
        if self.question.reason == "ask_user":
            return to_html(self.question.question)
        return f"<p>{_escape(self.question.question)}</p>"

    def _context_html(self) -> str:
        context, reason = self.question.context, self.question.reason
        parts = []
        if reason == "three_strike":
            if context.get("step"):  # the plan's line, without its list number and open checkbox
                step = _STEP_MARKS.sub("", context["step"])
                parts.append(f"<p><b>Failing step:</b> {isolated(inline_html(step))}</p>")  # (the plan's Markdown)
            if groups := failures_grouped([str(error) for error in context.get("errors") or []]):
                items = "".join(
                    f"<li>{f'<i>{count} times, the latest:</i>' if count > 1 else ''}"
                    f"<pre dir='ltr' style='white-space: pre-wrap; margin-top: 0'>{_escape(chr(10).join(lines))}</pre></li>"  # (its spacing)
                    for lines, count in groups)
                parts.append(f"<p><b>Last errors:</b></p><ol>{items}</ol>")
            if diagnosis := for_the_person(str(context.get("diagnosis") or "")):
                parts.append(f"<p><b>Diagnosed when it happened before:</b> {isolated(_escape(diagnosis))}</p>")
            reboot = context.get("reboot") or {}
            rows = "".join(f"<tr><td><b>{REBOOT_LABELS.get(k, k)}</b></td><td>{_escape(v)}</td></tr>"
                           for k, v in reboot.items() if v)
            if rows:
                parts.append(f"<p><b>The agent's 5-Question Reboot:</b></p><table cellpadding='2'>{rows}</table>")
        elif reason == "approval":
            where = f" &nbsp; <b>in</b> {_escape(self.workdir)}" if self.workdir else ""
            parts.append(f"<p><b>Tool:</b> {_escape(context.get('tool', ''))}{where}</p>")
            if described := str(context.get("described") or "").strip():  # a tool server's tool
                parts.append(f"<p><b>What it does:</b> {isolated(_escape(one_line(described, 600)))}</p>")
            parts.append(f"<pre dir='ltr' style='white-space: pre-wrap'>{_escape(self._arguments_text())}</pre>")
        elif reason == "ask_user" and (fallback := str(context.get("fallback", "")).strip()):
            wait = (f" The agent goes on with it after {self.answer_wait_min} minute"
                    f"{'s' * (self.answer_wait_min != 1)} without an answer (Settings → Supervision)."
                    if self.answer_wait_min else "")
            parts.append(f"<p><b>If you do not answer:</b> {isolated(inline_html(fallback.rstrip('.')))}.{wait}</p>")
        elif reason in ("danger_turn", "budget"):
            if status := context.get("status"):
                items = "".join(f"<li>{inline_html(str(line).lstrip('-* '))}</li>" for line in status)
                parts.append(f"<p><b>Where the plan stands:</b></p><ul>{items}</ul>")
            if context.get("step"):
                parts.append(f"<p><b>Working on:</b> {isolated(_escape(_STEP_MARKS.sub('', context['step'])))}</p>")
            if recent := context.get("recent"):
                items = "".join(f"<li><code>{_escape(str(line))}</code></li>" for line in recent)
                parts.append(f"<p><b>The latest steps:</b></p><ol>{items}</ol>")
        return "".join(parts)

    def _arguments_text(self) -> str:
        raw = self.question.context.get("arguments", "")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            return str(raw)
        if isinstance(arguments, dict) and set(arguments) & {"command", "content", "url"}:
            return "\n".join(f"{k}:\n{v}" if "\n" in str(v) else f"{k}: {v}" for k, v in arguments.items())
        return json.dumps(arguments, indent=2, ensure_ascii=False)

    def choose(self, choice: str) -> None:
        text = self.text.toPlainText().strip()
        reason = self.question.reason
        if reason == "danger_turn" and choice == "continue" and self.more_turns is not None:
            text = f"{self.more_turns.value()} more turns" + (f". {text}" if text else "")
        if reason == "budget" and choice == "continue" and (granted := self._granted()):
            text = f"{granted}" + (f". {text}" if text else "")
        if reason == "ask_user" and choice == "answer":
            if not text:
                return self.show_error(NOTHING_TYPED["ask_user"])
            choice, text = text, ""
        if reason == "three_strike" and choice in ("retry_with_hint", "change_model") and not text:
            return self.show_error("Type the hint, or the model to change to, first.")
        if reason == "three_strike" and choice == "edit_plan":  # answered by the edit, once saved
            self.hide()  # out of the pane's way; the question stays open (Ctrl+Shift+A shows it again)
            return self.plan_edit_requested.emit(self.question.qid, text)
        if self.focusWidget() in self.buttons.values():
            # A disabled button passes the focus to the next, which is disabled in turn: a screen
            # reader said every button as the answer went. It waits on the question instead.
            self.details.setFocus()
        self._set_buttons_enabled(False)  # one answer per question; an error re-enables them
        self.answered.emit(self.question.qid, choice, text)

    def _granted(self) -> str:
        """The budget granted, in the words the core reads: "$2.00 more"."""
        return more_budget_words(self.more_tokens.value() if self.more_tokens else 0,
                                 self.more_usd.value() if self.more_usd else 0.0)

    def _take_pictures(self, images: list) -> None:
        if problems := self.pictures.add(images):
            self.show_error(not_added(problems))

    def show_error(self, message: str) -> None:
        self.error.setText(f"<span>{_escape(message)}</span>")
        self.error.setVisible(True)
        self._set_buttons_enabled(True)

    def _set_buttons_enabled(self, enabled: bool) -> None:
        for button in self.buttons.values():
            button.setEnabled(enabled)
