"""A window left open all day, on a laptop on battery: when nothing happens it does not keep waking
the computer — the text caret rests after a pause, and a minimized window stops looking for other
Tripanes' changes until it is shown again."""

from __future__ import annotations

import gui.workspace as workspace_module
from core.memory.working import PLAN
from core.paths import DB_NAME
from core.run_lock import run_by_nobody, run_lock
from core.scripted import ScriptedModel
from core.store import Store
from gui.caret_rest import CaretRest
from gui.qt import QApplication, QLineEdit, QPlainTextEdit, Qt, QVBoxLayout, QWidget
from gui.workspace import Workspace
from tests.gui.test_opening import WAIT, recorded_earlier, showing_a_finished_run

REST_MS = 100


def two_fields(qtbot) -> tuple[QWidget, QLineEdit, QPlainTextEdit]:
    form = QWidget()
    line, box = QLineEdit(form), QPlainTextEdit(form)
    layout = QVBoxLayout(form)
    layout.addWidget(line)
    layout.addWidget(box)
    qtbot.addWidget(form)
    with qtbot.waitExposed(form):
        form.show()
    form.activateWindow()
    line.setFocus()
    return form, line, box


def test_the_caret_rests_after_a_pause_and_blinks_again_at_a_key_or_a_click(qtbot):
    app = QApplication.instance()
    desktop = app.cursorFlashTime()
    assert desktop > 0
    _form, line, box = two_fields(qtbot)
    rest = CaretRest(app, rest_after_ms=REST_MS)
    try:
        qtbot.waitUntil(lambda: app.cursorFlashTime() == 0 and rest.resting, timeout=WAIT)
        qtbot.keyClick(line, "a")
        assert app.cursorFlashTime() == desktop and line.text() == "a"  # (the key still types)

        qtbot.waitUntil(lambda: rest.resting, timeout=WAIT)
        qtbot.mouseClick(box.viewport(), Qt.MouseButton.LeftButton)  # into the other field
        assert app.cursorFlashTime() == desktop and box.hasFocus()
        qtbot.waitUntil(lambda: rest.resting, timeout=WAIT)
        qtbot.keyClick(box, "b")  # its keys go to the box, its clicks to its viewport: both watched
        assert app.cursorFlashTime() == desktop and box.toPlainText() == "b"
        qtbot.waitUntil(lambda: rest.resting, timeout=WAIT)
    finally:
        rest.stop()
    assert app.cursorFlashTime() == desktop  # as the desktop has it, for good
    qtbot.wait(3 * REST_MS)
    assert app.cursorFlashTime() == desktop


def test_a_desktop_whose_caret_does_not_blink_is_left_so(qtbot):
    app = QApplication.instance()
    desktop = app.cursorFlashTime()
    app.setCursorFlashTime(0)  # (the desktop's setting for no blinking)
    try:
        _form, line, _box = two_fields(qtbot)
        rest = CaretRest(app, rest_after_ms=REST_MS)
        qtbot.keyClick(line, "a")
        assert app.cursorFlashTime() == 0
        qtbot.wait(3 * REST_MS)
        rest.stop()
        assert app.cursorFlashTime() == 0 and not rest.resting
    finally:
        app.setCursorFlashTime(desktop)


def test_the_window_gives_the_caret_back_to_the_desktop_when_it_closes(qtbot, make_window):
    app = QApplication.instance()
    desktop = app.cursorFlashTime()
    window = make_window()
    window.caret_rest._rest()  # (as after ten seconds without a key)
    assert app.cursorFlashTime() == 0
    window.close_now()
    assert app.cursorFlashTime() == desktop


def test_a_minimized_window_stops_looking_for_changes_and_looks_at_once_when_shown(qtbot, make_window, workdir):
    window, here = showing_a_finished_run(qtbot, make_window, workdir)
    window.showMinimized()
    qtbot.waitUntil(lambda: not window._follow_timer.isActive(), timeout=WAIT)

    # Meanwhile the plan is edited in another editor: nothing looks, so nothing is recorded.
    here.file_path(PLAN).write_text(here.read_file(PLAN)[0] + "\n- [ ] Phase 9: added in an editor\n", encoding="utf-8")
    qtbot.wait(300)
    assert "Phase 9" not in window.panes[PLAN].shown_text

    window.showNormal()  # shown again: looked at once, and from then on
    assert window._follow_timer.isActive()
    qtbot.waitUntil(lambda: "Phase 9" in window.panes[PLAN].shown_text, timeout=WAIT)


def test_a_reply_streamed_while_the_window_is_minimized_is_drawn_when_it_is_shown(qtbot, make_window):
    window = make_window()
    window.chat.stream("Reading the invoice ")
    qtbot.waitUntil(lambda: "Reading the invoice" in window.chat._live.body.text(), timeout=WAIT)

    window.showMinimized()
    qtbot.waitUntil(window.isMinimized, timeout=WAIT)
    window.chat.stream("module, then its tests.")
    qtbot.wait(300)  # several renders' worth: none is made for no one
    assert "its tests" not in window.chat._live.body.text()

    window.showNormal()
    qtbot.waitUntil(lambda: not window.isMinimized(), timeout=WAIT)
    assert "Reading the invoice module, then its tests." in window.chat._live.body.text()
    window.chat.stream(" Done.")  # and it streams on as before
    qtbot.waitUntil(lambda: "its tests. Done." in window.chat._live.body.text(), timeout=WAIT)


def test_interrupted_sessions_are_looked_at_seldom_and_a_run_at_every_look(tmp_path, workdir, monkeypatch):
    data = tmp_path / "data"
    ids = [recorded_earlier(data, workdir, f"Task {i}", turns=1) for i in range(4)]  # logged as running
    workspace = Workspace(data, model_factory=lambda: ScriptedModel([]))
    looked = []
    monkeypatch.setattr(workspace_module, "run_by_nobody", lambda folder, i: looked.append(i) or run_by_nobody(folder, i))
    runner = run_lock(data, ids[0])  # another process runs the first
    runner.acquire()
    try:
        first = workspace.sessions_signature()
        assert set(first[1]) == set(ids[1:]) and set(looked) == set(ids)

        looked.clear()
        assert workspace.sessions_signature() == first
        assert looked == [ids[0]]  # only the run is looked at again, not the interrupted ones
    finally:
        runner.release()
    looked.clear()
    assert set(workspace.sessions_signature()[1]) == set(ids)  # its runner gone: interrupted at once
    assert looked == [ids[0]]

    monkeypatch.setattr(workspace_module, "RECHECK_INTERRUPTED_S", 0)  # (a while later)
    other = run_lock(data, ids[2])  # one is resumed in a terminal
    other.acquire()
    try:
        looked.clear()
        assert set(workspace.sessions_signature()[1]) == {ids[0], ids[1], ids[3]}
        assert set(looked) == set(ids)
    finally:
        other.release()
        workspace.store.close()


def test_the_sessions_logged_as_running_are_read_again_only_after_a_write(tmp_path, workdir, monkeypatch):
    data = tmp_path / "data"
    ids = [recorded_earlier(data, workdir, f"Task {i}", turns=1) for i in range(2)]
    workspace = Workspace(data, model_factory=lambda: ScriptedModel([]))
    reads = []
    session_ids = workspace.store.session_ids
    monkeypatch.setattr(workspace.store, "session_ids", lambda status: reads.append(status) or session_ids(status))
    try:
        first = workspace.sessions_signature()
        assert len(reads) == 1 and set(first[1]) == set(ids)
        assert workspace.sessions_signature() == first and len(reads) == 1  # nothing written: not read
        other = Store(data / DB_NAME)  # another process ends one
        other.update_session(ids[0], status="ended:done")
        other.close()
        assert workspace.sessions_signature()[1] == (ids[1],) and len(reads) == 2
    finally:
        workspace.store.close()
