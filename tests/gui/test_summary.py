"""Session → Summary in the window: the session at a glance (core/summary.py)."""

from __future__ import annotations

from gui.qt import QApplication
from tests.gui.test_file_history import TASK, WAIT, run_two_plan_updates


def test_the_summary_says_the_session_at_a_glance(qtbot, make_window, workdir):
    _model, window, session = run_two_plan_updates(qtbot, make_window, workdir)
    window.actions_by_name["summary"].trigger()
    dialog = None

    def shown():
        nonlocal dialog
        dialog = next((w for w in QApplication.topLevelWidgets() if w.objectName() == "session_summary"
                       and w.isVisible()), None)
        return dialog is not None
    qtbot.waitUntil(shown, timeout=WAIT)
    said = dialog.table.toPlainText()
    assert f"Summary — {TASK}" == dialog.windowTitle()
    assert "Tool calls" in said and "plan_update 2" in said and "Turns" in said and "Cost" in said
    dialog.close()
