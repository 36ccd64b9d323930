"""View → Spending in the window: the log's figures by day, model and session; a session's row opens it."""

from __future__ import annotations

from gui.qt import Qt
from tests.core.test_spending import add_two_sessions

WAIT = 10_000


def test_spending_shows_each_way_of_counting_and_opens_a_session(qtbot, make_window):
    window = make_window()
    add_two_sessions(window.workspace.store)
    window.refresh_sessions()
    assert window.spending is None
    qtbot.mouseClick(window.status.cost, Qt.MouseButton.LeftButton)  # the status bar's cost opens it too
    dialog = window.spending
    assert dialog is not None and dialog.isVisible() and window.open_spending() is dialog
    qtbot.waitUntil(lambda: "$0.0392" in dialog.summary.text(), timeout=WAIT)
    assert "22,200 tokens in 5 requests, over 2 sessions" in dialog.summary.text()
    models = dialog.tables["model"]
    assert [models.item(row, 0).text() for row in range(models.rowCount())][0] == "anthropic/claude-sonnet-4-5"
    assert dialog.note.isVisible() and "ollama_chat/llama3.1" in dialog.note.text()  # priced at $0: said why
    sessions = dialog.tables["session"]
    assert [sessions.item(row, 0).text() for row in range(2)] == ["Sort the changelog", "Fix the date tests"]
    assert sessions.item(1, 1).text() == "$0.0017" and sessions.item(1, 4).text() == "30%"

    dialog.period.setCurrentIndex(0)  # today: the same, all of it was today
    qtbot.waitUntil(lambda: dialog.summary.text().endswith("in today: 22,200 tokens in 5 requests, over 2 sessions."),
                    timeout=WAIT)
    dialog.tabs.setCurrentWidget(sessions)
    sessions.setCurrentCell(1, 0)
    sessions.setFocus()
    qtbot.keyClick(sessions, Qt.Key.Key_Return)  # as a double-click: the session opens in the window
    qtbot.waitUntil(lambda: window.session is not None and window.session.id == "s1", timeout=WAIT)
