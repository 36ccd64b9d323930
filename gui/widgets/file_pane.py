"""One of the three live panes: a file rendered as Markdown, and for the plan and findings an editor.

Rendering happens off the Qt thread and at most every 200 ms, so an agent appending to a large
progress.md cannot freeze the window. After each render the view scrolls to what changed.
"""

from __future__ import annotations

from collections.abc import Callable

from core.memory.working import FINDINGS, PLAN, current_step
from gui.bidi import IsolatesLeftOutOfCopies, aligned_to_its_text
from gui.dialogs.conflict import writer
from gui.dialogs.forms import open_once
from gui.keys import gives_window_keys, keeps_escape
from gui.markdown import (
    STYLE,
    TAIL_CHARS,
    changed_fraction,
    pins_marked,
    render_file,
    to_html,
)
from gui.menus import shortcut_of
from gui.qt import (
    QEvent,
    QHBoxLayout,
    QIcon,
    QLabel,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPoint,
    QScrollBar,
    QStackedWidget,
    Qt,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from gui.tasks import TaskKeeper
from gui.widgets.find_bar import FindBar, TextViewFinder
from gui.widgets.menu_style import spaced
from gui.widgets.snug_button import SnugButton

Loader = Callable[[], tuple[str, int]]
Pins = Callable[[], tuple[str, ...]]  # the lines of the file the person pinned
Author = Callable[[], str]  # who wrote the file's version now: agent | user | external | core


def the_agent() -> str:
    """The author a pane names when it is not told (a pane shown without a session's log)."""
    return "agent"
EDIT_KEYS = {PLAN: shortcut_of("edit_plan"), FINDINGS: shortcut_of("edit_findings")}
APPEND_IN_PLACE_CHARS = 16_000  # larger jumps are rendered anew, in a worker thread


def appendable(shown: str, text: str) -> bool:
    """The new text is the shown one plus a modest end: the view can take just that end."""
    added = len(text) - len(shown)
    return bool(shown) and 0 < added <= APPEND_IN_PLACE_CHARS and text.startswith(shown)


class PaneEditor(QPlainTextEdit):
    """The plan or findings editor. Esc stops the agent everywhere else in the window; here a
    person reaching for Esc mid-edit (to close a menu, out of an editor's habit) would stop the
    run they are steering, so the editor keeps the key, and does nothing with it."""

    def __init__(self):
        super().__init__()
        aligned_to_its_text(self)

    def event(self, event: QEvent) -> bool:
        return keeps_escape(event) or gives_window_keys(self, event) or super().event(event)


class FilePane(QWidget):
    save_requested = Signal(str, str, int)  # file name, text, base version
    pin_requested = Signal(str)  # file name
    history_requested = Signal(str)  # file name
    open_requested = Signal(str)  # file name: to be opened with the program the desktop opens it with
    edit_changed = Signal()  # the open edit was typed in, opened or closed

    def __init__(self, name: str, title: str, keeper: TaskKeeper, editable: bool = False, pinnable: bool = False,
                 log: bool = False):
        super().__init__()
        self.setObjectName(f"pane_{name.split('.')[0]}")
        self.name = name
        self.keeper = keeper
        # A log (progress.md) is read from its end: a session opens there, and what is appended is
        # followed while the view is there. Opened at its start, a long log never followed.
        self.log = log
        self._loader: Loader | None = None
        self._pins: Pins | None = None
        self._author: Author = the_agent
        self._shown_text = ""
        self.version = 0
        self.base_version = 0  # the version the open edit started from
        self._edit_began_as = ""  # its text then: an edit that changed nothing needs no keeping
        self._rendering = False
        self._dirty = False
        self._keep_at: float | None = None  # where to show the file after rendering it again
        # Where the view is meant to be, from the scroll bar's range: Qt lays a long document out
        # in steps after setHtml, and the range grows for a while after the view was placed. The
        # place is taken again at each change of range until the person scrolls.
        self._aim: Callable[[QScrollBar], int] | None = None

        self.title_text = title
        self.title = QLabel(f"<b>{title}</b>")
        self.version_label = QLabel("")  # the version, a link to the file's history
        self.version_label.setObjectName("muted")
        self.version_label.setToolTip("The file's history: every version, who wrote it, what it changed (Ctrl+Shift+H)")
        self.version_label.linkActivated.connect(lambda _link: self.history_requested.emit(self.name))
        self.edit_button = SnugButton("Edit")
        self.edit_button.setCheckable(True)
        self.edit_button.setToolTip(f"Edit this file ({EDIT_KEYS[name]})" if name in EDIT_KEYS else "Edit this file")
        self.edit_button.toggled.connect(self._edit_toggled_by_person)  # (set_editing's are not signalled)
        self.save_button = SnugButton("Save")
        self.save_button.setToolTip("Send your edit to the agent (Ctrl+S)")
        self.save_button.clicked.connect(self.save)
        self.pin_button = SnugButton("Pin…")
        self.pin_button.setToolTip("Pin lines the agent must keep (Ctrl+Shift+P)")
        self.pin_button.clicked.connect(lambda: self.pin_requested.emit(self.name))
        header = QHBoxLayout()
        header.setContentsMargins(4, 2, 4, 2)
        header.addWidget(self.title)
        header.addWidget(self.version_label)
        header.addStretch(1)
        for button, shown in ((self.pin_button, pinnable), (self.edit_button, editable), (self.save_button, editable)):
            button.setVisible(shown)
            header.addWidget(button)
        self.save_button.setEnabled(False)
        self.edit_button.setEnabled(False)  # until a session's file is shown (bind)
        self.pin_button.setEnabled(False)

        self.viewer = IsolatesLeftOutOfCopies()
        self.viewer.setOpenExternalLinks(True)
        self.viewer.setAccessibleName(f"{title} ({name})")
        self.viewer.document().setDefaultStyleSheet(STYLE)
        self.viewer.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.viewer.customContextMenuRequested.connect(
            lambda at: self.viewer_menu(at).exec(self.viewer.viewport().mapToGlobal(at)))
        self.editor = PaneEditor()
        self.editor.textChanged.connect(self.edit_changed)
        self.editor.setObjectName("editor")
        self.editor.setAccessibleName(f"Edit {title} ({name})")
        self.notice = QLabel("")
        self.notice.setObjectName("warning")
        self.notice.setWordWrap(True)
        self.notice.setVisible(False)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.viewer)
        self.stack.addWidget(self.editor)
        self.find_bar = FindBar(title, TextViewFinder(self.stack.currentWidget))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.notice)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.stack, 1)

        self._timer = QTimer(self, singleShot=True, interval=200)
        self._timer.timeout.connect(self._render)
        bar = self.viewer.verticalScrollBar()
        bar.rangeChanged.connect(self._take_aim)
        bar.actionTriggered.connect(self._let_go)  # the wheel, the bar, Page Up/Down: their place wins

    def viewer_menu(self, at: QPoint) -> QMenu:
        """The view's right-click: copying, and the file itself: its history, and the file opened in
        the person's own editor (an edit saved there is taken in, as the pane's own)."""
        menu = spaced(self.viewer.createStandardContextMenu(at))
        menu.setParent(self, menu.windowFlags())  # (freed with the pane, not left to the view)
        menu.addSeparator()
        bound = self._loader is not None
        opened = menu.addAction(f"Open {self.name} in another program", lambda: self.open_requested.emit(self.name))
        opened.setObjectName("open_elsewhere")
        history = menu.addAction(f"History of {self.name}…", lambda: self.history_requested.emit(self.name))
        history.setObjectName("history")
        for action in (opened, history):
            action.setEnabled(bound)
        return menu

    # --- showing --------------------------------------------------------------------------------

    def bind(self, loader: Loader | None, pins: Pins | None = None, author: Author | None = None) -> None:
        """Show another session's file (None: none), its pinned lines marked."""
        self.set_editing(False)
        self._loader, self._pins = loader, pins
        self._author = author or the_agent
        self._shown_text = ""
        self._keep_at = None
        self._aim = None
        for button in (self.edit_button, self.pin_button):  # nothing to edit or pin without a session
            button.setEnabled(loader is not None)
        self.viewer.clear()
        self.version_label.setText("")
        self.version_label.setAccessibleName("")
        if loader is not None:
            self.refresh(now=True)

    def refresh(self, now: bool = False) -> None:
        """The file changed: render again soon (changes within 200 ms are rendered once)."""
        self._dirty = True
        if now:
            self._timer.start(0)
        elif not self._timer.isActive():
            self._timer.start()

    def remember_place(self) -> None:
        """Note where the view is, as a share of the file, before the text size changes: once the
        new font has laid the old text out again, the same scroll value is somewhere else."""
        bar = self.viewer.verticalScrollBar()
        if not bar.maximum():
            self._keep_at = None
        elif bar.value() >= bar.maximum() - 24:  # at the end (progress.md is followed there): it stays there
            self._keep_at = 1.0
        else:
            self._keep_at = bar.value() / bar.maximum()

    def rerender(self) -> None:
        """Render the file again where the view was (after a text size change)."""
        if self._keep_at is None:
            self.remember_place()
        self._shown_text = ""
        self.refresh(now=True)

    def _render(self) -> None:
        if self._loader is None or self._rendering:
            return
        self._dirty = False
        text, version = self._loader()
        if self._pins is not None:  # what is shown, compared and rendered: the lines marked
            text = pins_marked(text, self._pins())
        self.version = version
        self.version_label.setText(f'<a href="history">v{version}</a>')
        self.version_label.setAccessibleName(f"{self.title_text}, version {version}: its history")
        if self.editing and version != self.base_version:
            self.notice.setText(f"{writer(self._author()).saved} version {version} while you edit. "
                                "Saving will show both versions so you can choose.")
            self.notice.setVisible(True)
        if text == self._shown_text:
            return
        self._rendering = True
        loader, shown = self._loader, self._shown_text
        if appendable(shown, text):
            # Only what was appended (progress.md grows this way) is rendered, off this thread;
            # the view then takes it at its end.
            self.keeper.in_thread(to_html, text[len(shown):],
                                  on_success=lambda html: self._append(loader, shown, text, html),
                                  on_failure=lambda error: self._append(loader, shown, text, f"<pre>{error}</pre>"))
            return
        where = 1.0 if self.log and not shown else changed_fraction(shown, text)
        self.keeper.in_thread(render_file, text,
                              on_success=lambda html: self._show(loader, text, html, where),
                              on_failure=lambda error: self._show(loader, text, f"<pre>{error}</pre>", where))

    def _show(self, loader: Loader, text: str, html: str, where: float | None) -> None:
        self._rendering = False
        if loader is not self._loader:
            return  # another session was selected meanwhile
        self._shown_text = text
        self._aim = None
        self.viewer.setHtml(html)
        if self._keep_at is not None:
            keep, self._keep_at = self._keep_at, None
            self._aim = lambda bar: round(keep * bar.maximum())
        elif where is not None and where > 0:  # the change a third of a page down (the end: at the bottom)
            self._aim = lambda bar: int(where * (bar.maximum() + bar.pageStep())) - bar.pageStep() // 3
        self._take_aim()
        if self._dirty:
            self.refresh()

    def _append(self, loader: Loader, shown: str, text: str, html: str) -> None:
        """Add the rendered end of the file to the view, keeping the view to the file's tail."""
        self._rendering = False
        if loader is not self._loader or self._shown_text != shown:
            self.refresh()  # another session, or the view changed meanwhile: render anew
            return
        bar = self.viewer.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 24
        cursor = QTextCursor(self.viewer.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        # A plain new block: one that took the last block's format would put an entry appended
        # after a list (progress.md's entries end in one) inside that list's last item.
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        cursor.insertHtml(html)
        document = self.viewer.document()
        excess = document.characterCount() - TAIL_CHARS
        if excess > TAIL_CHARS // 4:  # trimmed in big steps
            cursor.setPosition(0)
            cursor.setPosition(excess, QTextCursor.MoveMode.KeepAnchor)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        self._shown_text = text
        self._aim = (lambda bar: bar.maximum()) if follow else None
        self._take_aim()
        if self._dirty:
            self.refresh()

    def _take_aim(self) -> None:
        if self._aim is not None:
            bar = self.viewer.verticalScrollBar()
            bar.setValue(max(0, min(bar.maximum(), self._aim(bar))))

    def _let_go(self, _action: int = 0) -> None:
        self._aim = None

    @property
    def shown_text(self) -> str:
        return self._shown_text

    # --- editing --------------------------------------------------------------------------------

    @property
    def editing(self) -> bool:
        return self.stack.currentWidget() is self.editor

    def set_editing(self, editing: bool) -> None:
        if editing and self._loader is None:
            editing = False
        self._check_edit_button(editing)
        self._on_edit_button_toggled(editing)

    def toggle_editing(self) -> None:
        if self.edit_button.isVisible():
            self.leave_editing() if self.editing else self.set_editing(True)

    def leave_editing(self) -> None:
        """The person's Cancel: an edit that changed the file is discarded only once they say so
        (Ctrl+E pressed out of habit, for the end of a line, threw a long edit away unasked)."""
        if self.unsaved_edit() is None:
            self.set_editing(False)
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Discard the edit? — Tripane",
                          f"Your changes to the {self.title_text.lower()} are not saved, and the agent has not "
                          "seen them. Discard them?", QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
                          self)
        keep = box.button(QMessageBox.StandardButton.Cancel)
        keep.setText("Keep editing")
        keep.setIcon(QIcon())  # (not Cancel's cross: it cancels nothing of the person's)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda result: result == QMessageBox.StandardButton.Discard and self.set_editing(False))
        open_once(box)

    def _edit_toggled_by_person(self, editing: bool) -> None:
        if editing:
            self._on_edit_button_toggled(True)
            return
        self._check_edit_button(True)  # still editing, until the edit is left
        self.leave_editing()

    def _check_edit_button(self, checked: bool) -> None:
        """The Edit/Cancel button as the pane is, without signalling it as the person's click."""
        self.edit_button.blockSignals(True)
        self.edit_button.setChecked(checked)
        self.edit_button.blockSignals(False)

    def _on_edit_button_toggled(self, editing: bool) -> None:
        if editing and self._loader is not None:
            text, version = self._loader()
            self.base_version, self._edit_began_as = version, text
            self.editor.setPlainText(text)
            self.stack.setCurrentWidget(self.editor)
            self._cursor_where_edited(text)
            self.editor.setFocus()
        else:
            self.stack.setCurrentWidget(self.viewer)
            self.notice.setVisible(False)
        self.save_button.setEnabled(self.editing)
        self.edit_button.setText("Cancel" if self.editing else "Edit")
        self.edit_changed.emit()

    def _cursor_where_edited(self, text: str) -> None:
        """The cursor where an edit most likely goes: at the end of the plan's current step (the
        one 3-Strike stopped on), at the end of the findings (a finding is added there); at the
        start, the first key typed broke the plan's title."""
        step = current_step(text) if self.name == PLAN else ""
        line = next((n for n, each in enumerate(text.split("\n")) if step and each.strip() == step), None)
        self._cursor_at_end_of_line(line if line is not None else text.count("\n"))

    def _cursor_at_end_of_line(self, line: int) -> None:
        """The editor's cursor at the end of line `line` (from 0), in the middle of the view."""
        cursor = QTextCursor(self.editor.document().findBlockByNumber(line))
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()

    def unsaved_edit(self) -> tuple[str, int] | None:
        """The open edit, if it changed the file: its text and the version it was begun on."""
        if self.editing and self.editor.toPlainText() != self._edit_began_as:
            return self.editor.toPlainText(), self.base_version
        return None

    def take_up_edit(self, text: str, base_version: int) -> None:
        """Open the editor on an edit kept from before (another session was shown, or Tripane
        closed): saving it goes on from the version it was begun on."""
        self.set_editing(True)
        now = self.editor.toPlainText()  # the file as it is
        self.continue_from(text, base_version)
        self._edit_began_as = ""  # (unsaved until saved or cancelled)
        # The cursor where the person was, most likely: at the end of the first line their edit changed.
        mine, its = text.split("\n"), now.split("\n")
        changed = next((n for n, (a, b) in enumerate(zip(mine, its)) if a != b),
                       min(len(mine), len(its)) if len(mine) != len(its) else None)
        if changed is not None:
            self._cursor_at_end_of_line(min(changed, len(mine) - 1))
        self.notice.setText("Your edit, not saved yet: Save (Ctrl+S) sends it to the agent, Cancel drops it.")
        self.notice.setVisible(True)
        self.refresh(now=True)  # (a file changed since says so)

    def save(self) -> None:
        if self.editing:
            self.save_requested.emit(self.name, self.editor.toPlainText(), self.base_version)

    def saved(self) -> None:
        """The edit reached the session: back to the rendered view."""
        self.set_editing(False)
        self.refresh(now=True)

    def continue_from(self, text: str, version: int) -> None:
        """Keep editing `text`, now based on `version` (after a conflict was resolved by hand)."""
        self.base_version = version
        self.editor.setPlainText(text)
        self.notice.setVisible(False)
