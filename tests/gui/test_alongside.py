"""The New session dialog says which session's agent works in the folder chosen already."""

from __future__ import annotations

from tests.gui.test_window import WAIT, start_paused


def test_the_new_session_dialog_names_the_session_at_work_in_the_folder(qtbot, make_window, workdir):
    _model, window, _session = start_paused(qtbot, make_window, workdir)
    dialog = window.new_session()
    note = dialog.alongside_note
    dialog.workdir.setText(str(workdir))
    qtbot.waitUntil(lambda: note.isVisible(), timeout=WAIT)
    assert note.text().startswith("“Write hello.txt” (paused by the person) works in this folder now, and two "
                                  "agents changing the same files undo each other's work")
    other = workdir.parent / "other"
    other.mkdir()
    dialog.workdir.setText(str(other))
    assert not note.isVisible() and note.text() == ""
    dialog.workdir.setText(str(workdir / "src"))  # (within it, not there yet: the same files all the same)
    assert note.isVisible()
    dialog.task.setPlainText("Restyle the page")
    dialog.workdir.setText(str(workdir))
    dialog._accept()
    started = window.session
    assert started.state.config.alongside == ("“Write hello.txt” (paused by the person)",)
