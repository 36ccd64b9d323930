"""A file's history in the window: every version of the plan (or findings, or progress), who wrote
it, what it changed and the whole text it left; an earlier plan taken back through the editor."""

from __future__ import annotations

import re
from string import Template

from core.memory.working import PLAN, PROGRESS
from core.paths import resource_text
from core.scripted import ScriptedModel, call, reply
from gui.qt import QApplication, QLabel, QMessageBox, Qt
from tests.gui.test_window import WAIT, start

TASK = "Port the parser"
FIRST = Template(resource_text("templates", PLAN)).safe_substitute(title=TASK, task=TASK)
SECOND = FIRST.replace("1. [ ] (the agent fills this in)", "1. [ ] Port the lexer\n2. [ ] Port the grammar")
THIRD = SECOND.replace("1. [ ] Port the lexer", "1. [x] Port the lexer").replace("- Phase: 1", "- Phase: 2")


def rows(dialog) -> list[str]:
    return [dialog.list.item(row).text() for row in range(dialog.list.count())]


def run_two_plan_updates(qtbot, make_window, workdir):
    """A session whose agent rewrote the plan twice and is then held at its next step."""
    model = ScriptedModel([reply("", call("plan_update", content=SECOND)),
                           reply("", call("plan_update", content=THIRD))],
                          default=reply("", call("file_list")))
    window = make_window(model)
    session = start(window, workdir, task=TASK)
    qtbot.waitUntil(lambda: session.read_file(PLAN)[1] == 3, timeout=WAIT)
    window.pause()
    qtbot.waitUntil(lambda: session.state.status == "paused", timeout=WAIT)
    return model, window, session


def test_the_plans_history_shows_each_version_and_an_old_one_goes_back_to_the_agent(qtbot, make_window, workdir):
    model, window, session = run_two_plan_updates(qtbot, make_window, workdir)
    pane = window.panes[PLAN]
    qtbot.waitUntil(lambda: pane.version_label.text().endswith(">v3</a>"), timeout=WAIT)
    window.activateWindow()
    pane.viewer.setFocus()
    qtbot.keyClick(pane.viewer, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    dialog = window.histories.open[(session.id, PLAN)]
    qtbot.waitUntil(lambda: dialog.list.count() == 3, timeout=WAIT)
    assert [row.split("  ·  ")[:2] for row in rows(dialog)] == [["v3", "Agent"], ["v2", "Agent"], ["v1", "Tripane"]]
    assert rows(dialog)[0].endswith("+2 −2") and rows(dialog)[2].endswith("created")
    said = dialog.list.item(2).data(Qt.ItemDataRole.AccessibleTextRole)  # as a screen reader says it
    assert said.startswith("version 1, Tripane, ") and said.endswith(", created")
    assert "task_plan.md: 3 versions" in dialog.summary.text()
    # The newest is chosen: what it changed, and the file as it is now, which needs no restoring.
    changes = dialog.changes.toPlainText()
    assert "-1. [ ] Port the lexer" in changes and "+1. [x] Port the lexer" in changes
    qtbot.waitUntil(lambda: dialog.text.toPlainText() == THIRD, timeout=WAIT)
    assert not dialog.restore.isEnabled() and "as it is now" in dialog.note.text()

    assert "newest version: nothing changed since" in dialog.since.toPlainText()
    dialog.list.setCurrentRow(1)  # v2
    qtbot.waitUntil(lambda: dialog.text.toPlainText() == SECOND, timeout=WAIT)
    assert dialog.tabs.tabText(1) == "Whole text at v2" and dialog.tabs.tabText(2) == "Since v2"
    assert "+2. [ ] Port the grammar" in dialog.changes.toPlainText()
    since = dialog.since.toPlainText()  # from v2 to the file as it is now
    assert "-1. [ ] Port the lexer" in since and "+1. [x] Port the lexer" in since and "Port the grammar" in since
    assert dialog.restore.isEnabled()
    qtbot.keyClick(dialog.list, Qt.Key.Key_Return)  # (it pressed the dialog's default button, Restore)
    assert not pane.editing and (session.id, PLAN) in window.histories.open
    qtbot.mouseClick(dialog.restore, Qt.MouseButton.LeftButton)
    # v2 waits in the editor, based on the current version, until the person saves it.
    assert pane.editing and pane.editor.toPlainText() == SECOND and pane.base_version == 3
    assert "v2 is in the editor" in pane.notice.text() and session.read_file(PLAN)[1] == 3
    qtbot.waitUntil(lambda: (session.id, PLAN) not in window.histories.open, timeout=WAIT)
    asked_before = len(model.requests)
    qtbot.keyClick(pane.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert not pane.editing and session.read_file(PLAN) == (SECOND, 4)
    window.resume()
    qtbot.waitUntil(lambda: len(model.requests) > asked_before, timeout=WAIT)
    told = [m["content"] for m in model.requests[asked_before].messages if "The person edited task_plan.md" in str(m.get("content"))]
    assert told and "-1. [x] Port the lexer" in told[0] and "+1. [ ] Port the lexer" in told[0]

    # Opened again, it has the person's version too, on top.
    window.pause()
    dialog = window.histories.show(PLAN)
    qtbot.waitUntil(lambda: dialog.list.count() == 4, timeout=WAIT)
    assert rows(dialog)[0].startswith("v4  ·  You")
    assert "1 of them your edits" in dialog.summary.text()
    dialog.close()
    qtbot.waitUntil(lambda: not window.histories.open, timeout=WAIT)

    # The conversation's notice of the edit links to the history at that version.
    notice = next(label for label in window.chat.findChildren(QLabel) if "You edited task_plan.md" in label.text())
    link = re.search(r'href="([^"]+)">version 4</a>', notice.text())
    assert link and not notice.openExternalLinks()
    notice.linkActivated.emit(link.group(1))
    dialog = window.histories.open[(session.id, PLAN)]
    qtbot.waitUntil(lambda: dialog.chosen_version() == 4 and dialog.text.toPlainText() == SECOND, timeout=WAIT)
    dialog.list.setCurrentRow(3)  # v1; the link to v4 again chooses v4 in the open dialog
    notice.linkActivated.emit(link.group(1))
    assert dialog.chosen_version() == 4 and window.histories.open[(session.id, PLAN)] is dialog


def test_restoring_over_an_unsaved_edit_asks_first(qtbot, make_window, workdir):
    _model, window, session = run_two_plan_updates(qtbot, make_window, workdir)
    pane = window.panes[PLAN]
    pane.set_editing(True)
    pane.editor.setPlainText("the person's own plan, not saved yet\n")
    dialog = window.histories.show(PLAN)
    qtbot.waitUntil(lambda: dialog.list.count() == 3, timeout=WAIT)
    dialog.list.setCurrentRow(2)  # v1
    qtbot.waitUntil(dialog.restore.isEnabled, timeout=WAIT)
    dialog.restore.click()
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    assert "Your edit of task_plan.md is not saved. Replace it with v1?" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert pane.editor.toPlainText() == "the person's own plan, not saved yet\n"
    dialog.restore.click()
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: pane.editor.toPlainText() == FIRST, timeout=WAIT)
    assert session.read_file(PLAN)[1] == 3  # nothing written until Save


def test_the_progress_history_grows_as_the_run_appends_and_offers_no_restore(qtbot, make_window, workdir):
    model, window, session = run_two_plan_updates(qtbot, make_window, workdir)
    pane = window.panes[PROGRESS]
    pane.version_label.linkActivated.emit("history")  # the version in the pane's header is its link
    dialog = window.histories.open[(session.id, PROGRESS)]
    assert dialog.restore.isHidden()
    versions = session.read_file(PROGRESS)[1]
    qtbot.waitUntil(lambda: dialog.list.count() == versions, timeout=WAIT)
    window.resume()  # each step the agent takes is appended to progress.md: the list follows
    qtbot.waitUntil(lambda: dialog.list.count() >= versions + 2, timeout=WAIT)
    window.pause()
    qtbot.waitUntil(lambda: session.state.status == "paused", timeout=WAIT)
    qtbot.waitUntil(lambda: dialog.list.count() == session.read_file(PROGRESS)[1], timeout=WAIT)
    qtbot.waitUntil(lambda: dialog.text.toPlainText() == session.read_file(PROGRESS)[0], timeout=WAIT)
    assert dialog.chosen_version() == session.read_file(PROGRESS)[1]  # the newest stayed chosen

    # Deleting the session closes its histories.
    window._delete([session.id])
    assert not window.histories.open

