"""A screen reader is told what a sighted person sees happen: the agent's replies, a tool failing,
the run's end, the status bar's messages (gui/announcer.py)."""

from __future__ import annotations

import pytest
from PySide6.QtTest import QTest

from core.scripted import ScriptedModel, call, reply
from gui.announcer import REPLY_CHARS, STATUS_SETTLE_MS, spoken
from gui.qt import QAccessible, QApplication, QSettings
from gui.settings import AppSettings
from tests.gui.test_supporting_screens import settings_dialog
from tests.gui.test_window import start

WAIT = 20_000
pytestmark = pytest.mark.usefixtures("screen_reader")


def listen(window) -> list[str]:
    """What the window has a screen reader say, the person being in it."""
    window.activateWindow()
    QTest.qWaitForWindowActive(window)
    said: list[str] = []
    window.announcer.said.connect(said.append)
    return said


def test_a_run_is_told_as_it_goes_its_markdown_not_spoken(qtbot, make_window, workdir):
    model = ScriptedModel([
        reply("I'll read **the totals** in `invoice.py` first.", call("file_read", path="invoice.py")),
        reply("", call("task_done", summary="Totals are summed as Decimal.")),
    ])
    window = make_window(model)
    said = listen(window)
    session = start(window, workdir, task="Fix the totals")
    qtbot.waitUntil(lambda: session.state.ended and len(said) >= 3, timeout=WAIT)
    assert said[0] == "Agent: I'll read the totals in invoice.py first."
    assert said[1].startswith("file_read failed: ") and "invoice.py" in said[1]
    assert said[2] == "Task done: Totals are summed as Decimal."
    window.find()  # Ctrl+F from the message box: in the conversation, the focus staying in the bar
    qtbot.keyClicks(window.chat_find, "invoice.py first")
    qtbot.waitUntil(lambda: said[-1] == "I'll read the totals in invoice.py first.", timeout=WAIT)


def test_a_run_ended_by_its_reply_is_not_told_twice(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("The repository has no tests.")]))
    said = listen(window)
    session = start(window, workdir, task="Are there tests?")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.waitUntil(lambda: any(s.startswith("Task done") for s in said), timeout=WAIT)
    assert said[-2:] == ["Agent: The repository has no tests.", "Task done"]


def test_a_long_reply_is_told_by_its_start(qtbot, make_window, workdir):
    long = " ".join(f"word{n}" for n in range(400))
    window = make_window(ScriptedModel([reply(long, call("task_done", summary="ok"))]))
    said = listen(window)
    session = start(window, workdir, task="Write a lot")
    qtbot.waitUntil(lambda: session.state.ended and len(said) >= 2, timeout=WAIT)
    assert said[0].startswith("Agent: word0 word1") and said[0].endswith("(the rest is in the conversation)")
    assert len(said[0]) < REPLY_CHARS + 60


def test_a_status_message_is_told_once_it_settles(qtbot, make_window):
    window = make_window(ScriptedModel([]))
    said = listen(window)
    qtbot.waitUntil(lambda: not window._last_session_pending)  # (the empty window said how to begin)
    said.clear()
    for number in range(1, 40):  # a count going up: said as it stops, not 39 times
        window.statusBar().showMessage(f"Deleting sessions… {number} of 39")
    qtbot.waitUntil(lambda: bool(said), timeout=WAIT)
    qtbot.wait(STATUS_SETTLE_MS * 2)
    assert said == ["Deleting sessions… 39 of 39"]
    window.statusBar().showMessage("Deleting sessions… 39 of 39")  # the same again at once: not said again
    qtbot.wait(STATUS_SETTLE_MS * 2)
    window.statusBar().showMessage("Exported to /tmp/x.zip")
    qtbot.waitUntil(lambda: len(said) == 2, timeout=WAIT)
    assert said[-1] == "Exported to /tmp/x.zip"
    window.statusBar().showMessage("? Fix the totals: a question for you, shown when you pause typing")
    qtbot.waitUntil(lambda: len(said) == 3, timeout=WAIT)
    assert said[-1] == "Fix the totals: a question for you, shown when you pause typing"  # not "question mark Fix"



def test_a_line_of_the_window_is_said_without_its_marks():
    assert spoken("● Waiting for the model · 36 s") == "Waiting for the model, 36 s"
    assert spoken("■ Ended: done — all tests pass.\nChanged in the work folder: 2 files") == \
        "Ended: done — all tests pass. Changed in the work folder: 2 files"  # (not "pass.. Changed")
    assert spoken("? Why does it fail?\n    2026-11-29 14:40 · waiting · ✎ draft") == \
        "Why does it fail? 2026-11-29 14:40, waiting, draft"  # a question mark in the title is kept


def test_the_session_search_tells_how_many_it_shows(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("Done.")]))
    said = listen(window)
    session = start(window, workdir, task="Fix the totals")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.keyClicks(window.sessions.search, "totals")
    qtbot.waitUntil(lambda: said[-1] == "1 of 1 sessions", timeout=WAIT)
    window.sessions.search.clear()
    qtbot.keyClicks(window.sessions.search, "invoices")
    qtbot.waitUntil(lambda: said[-1].startswith("No session matches “invoices”"), timeout=WAIT)


def test_an_empty_window_says_how_to_begin_after_the_welcome_on_a_first_run(qtbot, make_window, tmp_path):
    fresh = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    window = make_window(settings_=fresh)
    said = listen(window)
    dialog = settings_dialog(qtbot, window)
    qtbot.wait(200)  # the first frame's timer has run: nothing said over the welcome
    assert not any(s.startswith("No session is open") for s in said)
    dialog.model.setCurrentText("openai/gpt-4o-mini")
    dialog.accept()
    qtbot.waitUntil(lambda: bool(said) and said[-1].startswith("No session is open. Pick one on the left, or start "
                                                                "one with New (Ctrl+N)"), timeout=WAIT)


def test_a_start_with_no_session_to_show_says_how_to_begin(qtbot, make_window):
    window = make_window()
    said = listen(window)
    window._last_session_pending = True  # as at the start, before the first frame's timer
    window.show_last_session()
    assert said and said[-1].startswith("No session is open.")


def test_nothing_is_said_while_the_person_is_in_another_application(qtbot, make_window, workdir, monkeypatch):
    """The agent's every reply would be spoken over their work there; the run's end reaches them
    through the taskbar and the tray (tests/gui/test_alerts.py)."""
    window = make_window(ScriptedModel([reply("Reading the code.", call("task_done", summary="ok"))]))
    said = listen(window)
    monkeypatch.setattr(QApplication, "activeWindow", lambda: None)
    session = start(window, workdir, task="Read the code")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.wait(STATUS_SETTLE_MS * 2)
    assert said == []


def test_nothing_is_made_to_be_said_with_no_screen_reader(qtbot, make_window, workdir):
    """A reply is rendered again to be said: not for no one."""
    QAccessible.setActive(False)
    window = make_window(ScriptedModel([reply("Reading the code.", call("task_done", summary="ok"))]))
    said = listen(window)
    session = start(window, workdir, task="Read the code")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.wait(STATUS_SETTLE_MS * 2)
    assert said == []
