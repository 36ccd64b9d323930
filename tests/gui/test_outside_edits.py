"""The plan edited in another editor while the window shows the session: the pane shows it without a
step of the agent's, and a save in the window begun on the text before it asks, naming who wrote it."""

from __future__ import annotations

from pathlib import Path

from core.memory.working import FINDINGS, PLAN
from core.scripted import ScriptedModel, call, reply
from gui.dialogs.conflict import ConflictDialog
from gui.qt import (
    QAction,
    QApplication,
    QDesktopServices,
    QEvent,
    QLabel,
    QObject,
    QPlainTextEdit,
    QPoint,
    QPushButton,
    Qt,
    QUrl,
    Slot,
)
from tests.gui.test_supporting_screens import chat_says
from tests.gui.test_window import start

WAIT = 15_000


def test_an_ended_sessions_plan_edited_elsewhere_is_shown_and_a_stale_save_asks(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="hello.txt written"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    pane = window.panes[PLAN]
    path = session.file_path(PLAN)

    path.write_text(path.read_text(encoding="utf-8") + "- [ ] Saved in VS Code\n", encoding="utf-8")
    qtbot.waitUntil(lambda: "Saved in VS Code" in pane.viewer.toPlainText(), timeout=WAIT)
    assert "A program outside Tripane changed task_plan.md (<a href" in chat_says(window)

    pane.set_editing(True)  # the person begins an edit…
    pane.editor.setPlainText(pane.editor.toPlainText() + "- [ ] Typed in Tripane\n")
    path.write_text(path.read_text(encoding="utf-8") + "- [ ] Saved in Emacs\n", encoding="utf-8")  # …and saves
    qtbot.waitUntil(pane.notice.isVisible, timeout=WAIT)  # the pane says so while the edit is open
    assert pane.notice.text().startswith("Another program (an editor outside Tripane) saved version 3 while you edit")
    path.write_text(path.read_text(encoding="utf-8") + "- [ ] Saved in vim\n", encoding="utf-8")  # …vim saves
    pane.save()  # before the window looked again: the save must not write over vim's
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(ConflictDialog)), timeout=WAIT)
    dialog = next(d for d in window.findChildren(ConflictDialog) if d.isVisible())
    assert "Saved in vim" in dialog.findChild(QPlainTextEdit, "agents").toPlainText()
    assert "Typed in Tripane" in dialog.findChild(QPlainTextEdit, "mine").toPlainText()
    summary = dialog.findChild(QLabel, "summary").text()
    assert summary.startswith("Another program (an editor outside Tripane) saved version") and "agent" not in summary
    take = dialog.findChild(QPushButton, "take_agents")
    assert take.text() == "Take that version"
    qtbot.mouseClick(take, Qt.MouseButton.LeftButton)

    assert not pane.editing
    on_disk = path.read_text(encoding="utf-8")
    assert "Saved in vim" in on_disk and "Saved in Emacs" in on_disk and "Typed in Tripane" not in on_disk
    qtbot.waitUntil(lambda: "Saved in vim" in pane.viewer.toPlainText(), timeout=WAIT)


class Opened(QObject):
    """Where the desktop was asked to open a file: Qt's own hook for a scheme's handler."""

    def __init__(self):
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_a_panes_right_click_opens_its_file_in_the_persons_editor(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="hello.txt written"))]))
    unbound = window.panes[PLAN].viewer_menu(QPoint(4, 4))
    assert not unbound.findChild(QAction, "open_elsewhere").isEnabled()  # no session shown: no file
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)

    menu = window.panes[FINDINGS].viewer_menu(QPoint(4, 4))
    opening = menu.findChild(QAction, "open_elsewhere")
    assert opening.isEnabled() and opening.text() == "Open findings.md in another program"
    opened = Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        opening.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(url.toLocalFile()) for url in opened.urls] == [session.file_path(FINDINGS)]
    menu.findChild(QAction, "history").trigger()
    history = window.histories.open[(session.id, FINDINGS)]
    assert history.isVisible()
    history.close()


def test_a_file_another_program_holds_is_said_once_and_no_more_once_read(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="hello.txt written"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    path = session.file_path(FINDINGS)
    text = path.read_text(encoding="utf-8")
    path.unlink()
    path.mkdir()  # (unreadable for now: on Windows, a file another program holds mid-save)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith(
        "A file of this session changed outside Tripane and cannot be read now (findings.md: "), timeout=WAIT)
    path.rmdir()
    path.write_text(text + "## Saved at last\n", encoding="utf-8")
    qtbot.waitUntil(lambda: "Saved at last" in window.panes[FINDINGS].viewer.toPlainText(), timeout=WAIT)
    assert "cannot be read now" not in window.statusBar().currentMessage()


def test_coming_back_to_the_window_shows_another_editors_save_at_once(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="hello.txt written"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    window._follow_timer.stop()  # (only the coming back looks now)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    path = session.file_path(PLAN)
    path.write_text(path.read_text(encoding="utf-8") + "- [ ] Saved in VS Code, then back to Tripane\n",
                    encoding="utf-8")
    QApplication.sendEvent(window, QEvent(QEvent.Type.ActivationChange))  # the person switches back
    assert session.file_author(PLAN) == "external"
    qtbot.waitUntil(lambda: "then back to Tripane" in window.panes[PLAN].viewer.toPlainText(), timeout=WAIT)
