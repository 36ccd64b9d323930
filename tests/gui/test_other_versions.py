"""The window beside another version of Tripane on the same data folder."""

from __future__ import annotations

import logging

from core.scripted import ScriptedModel, call, reply
from gui.qt import QMessageBox
from tests.gui.test_window import start

WAIT = 15_000


def test_a_later_version_running_the_session_shown_is_said_once_not_logged_every_poll(qtbot, make_window, workdir,
                                                                                      caplog):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    # A later version goes on with it in a terminal, and records what this one does not know.
    last = session.records[-1].seq
    window.workspace.store.db.execute(
        "INSERT INTO events (session_id, seq, ts, kind, data) VALUES (?, ?, '2027-01-01T00:00:00', "
        "'session_archived', '{}')", [session.id, last + 1])
    with caplog.at_level(logging.WARNING, logger="gui.window"):
        for _ in range(3):  # (the window looks every 1.5 s)
            window._follow_others()
    said = [r.getMessage() for r in caplog.records if "could not follow" in r.getMessage()]
    assert len(said) == 1 and "was recorded by a later version of Tripane" in said[0]
    assert window.statusBar().currentMessage().startswith(
        f"Other Tripanes' changes are not shown: Session {session.id} was recorded by a later version of Tripane")


def test_a_last_session_that_cannot_be_opened_is_not_tried_again_at_the_next_start(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    window.workspace.store.db.execute(
        "INSERT INTO events (session_id, seq, ts, kind, data) VALUES (?, ?, '2027-01-01T00:00:00', "
        "'session_archived', '{}')", [session.id, session.records[-1].seq + 1])
    window.close_now()  # closed on it: the next start shows it again
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    assert window.settings.load().last_session == session.id

    again = make_window()
    qtbot.waitUntil(lambda: any("cannot be opened" in box.text() for box in again.findChildren(QMessageBox)),
                    timeout=WAIT)
    # Said once; the start after this one does not say it again.
    assert again.settings.load().last_session == ""
