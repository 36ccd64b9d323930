"""A session that is not open yet is replayed in the background: the one on screen stays until it
is ready, the status bar says what is coming, and a change of mind meanwhile is honoured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.events import (
    AssistantMessage,
    FileChanged,
    SessionStarted,
    ToolCall,
    ToolResult,
    UserMessage,
)
from core.memory.working import FILES, PLAN, PROGRESS, WorkingMemory
from core.paths import DB_NAME
from core.scripted import ScriptedModel, call, reply
from core.session import Session, SessionConfig
from core.store import Store
from gui.drafts import folder_group
from gui.qt import QApplication, QFileDialog, QMessageBox, QSettings, Qt
from gui.session_search import TYPING_PAUSE_MS
from gui.settings import AppSettings
from gui.widgets.chat_items import MessageItem
from tests.gui.test_supporting_screens import chat_says

WAIT = 15_000


def recorded_earlier(data_dir: Path, workdir: Path, task: str, turns: int) -> str:
    """A session an earlier Tripane ran: its events are in the database, nothing of it is open."""
    store = Store(data_dir / DB_NAME)
    session = Session.create(store, data_dir, SessionConfig(task=task, model="scripted", workdir=workdir),
                             ScriptedModel([]))
    for turn in range(1, turns + 1):
        store.append(session.id, AssistantMessage(f"Step {turn}.", (ToolCall(f"c{turn}", "file_list", "{}"),), turn=turn))
        store.append(session.id, ToolResult(f"c{turn}", "file_list", True, "a.py\nb.py\n"))
    store.close()
    return session.id


def showing_a_finished_run(qtbot, make_window, workdir: Path):
    """The window, showing a session it ran to its end: one that is open, as the person looks at it."""
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    here = window.start_session(SessionConfig(task="Tidy the notes", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: here.state.ended, timeout=WAIT)
    return window, here


def shown_now(window) -> str:
    return window.session.id if window.session is not None else ""


def test_a_session_not_open_yet_is_shown_once_its_log_is_replayed(qtbot, make_window, workdir, tmp_path):
    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=1_500)
    window, here = showing_a_finished_run(qtbot, make_window, workdir)

    window.show_session(earlier)
    assert shown_now(window) == here.id  # until the replay is done, the session on screen stays
    assert window.statusBar().currentMessage() == "Opening “Port the parser” …"
    # The session's commands (the list's right-click menu has them) wait for the one chosen.
    assert not any(window.actions_by_name[name].isEnabled() for name in ("export", "copy_markdown", "summary"))
    qtbot.waitUntil(lambda: shown_now(window) == earlier, timeout=WAIT)
    assert all(window.actions_by_name[name].isEnabled() for name in ("export", "copy_markdown", "summary"))
    assert window.session.state.turn == 1_500 and window.sessions.current_id() == earlier
    assert "Port the parser" in window.windowTitle() and window.statusBar().currentMessage() == ""

    window.show_session(here.id)  # open now: shown at once
    assert shown_now(window) == here.id and "Tidy the notes" in window.windowTitle()


def test_the_person_moving_on_before_it_opens_keeps_their_choice(qtbot, make_window, workdir, tmp_path):
    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=1_500)
    window, here = showing_a_finished_run(qtbot, make_window, workdir)

    window.show_session(earlier)
    window.show_session(here.id)  # back to the one on screen before the other one opened
    qtbot.waitUntil(lambda: window.workspace.already_open(earlier) is not None, timeout=WAIT)
    qtbot.wait(200)  # the load's completion has been delivered
    assert shown_now(window) == here.id and window.sessions.current_id() == here.id
    assert window.statusBar().currentMessage() == ""


def test_a_session_deleted_while_it_opens_is_not_shown(qtbot, make_window, workdir, tmp_path, monkeypatch):
    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=1_500)
    window = make_window(ScriptedModel([]))
    monkeypatch.setattr(QMessageBox, "open", lambda box: box.done(QMessageBox.StandardButton.Yes))
    window.sessions.go_to_row(window.sessions.ids().index(earlier))  # starts opening it
    assert "Opening “Port the parser” …" in chat_says(window) and "No session" not in chat_says(window)
    window.delete_session()
    qtbot.waitUntil(lambda: window.sessions.ids() == [], timeout=WAIT)
    qtbot.wait(200)
    assert window.session is None and window.workspace.already_open(earlier) is None
    assert "No session is open" in chat_says(window)
    assert not (tmp_path / "data" / "sessions" / earlier).exists()


def half_written(window, workdir: Path, tmp_path: Path) -> tuple[str, str]:
    """A session whose log has no start event (a crash before its first write)."""
    window.workspace.store.create_session("20260101-000000-dead", task="Half written", model="scripted")
    return "20260101-000000-dead", "was never started (Tripane stopped while creating it)"


def damaged(window, workdir: Path, tmp_path: Path) -> tuple[str, str]:
    """A session one of whose events is no longer readable (the file was damaged)."""
    session_id = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=3)
    window.workspace.store.db.execute("UPDATE events SET data = '{not json' WHERE session_id = ? AND seq = 2",
                                      [session_id])
    return session_id, "event 2 of session"


@pytest.mark.parametrize("broken", [half_written, damaged])
def test_a_session_that_cannot_be_replayed_says_why_and_keeps_the_one_shown(qtbot, make_window, workdir, tmp_path,
                                                                          broken):
    window, here = showing_a_finished_run(qtbot, make_window, workdir)
    session_id, why = broken(window, workdir, tmp_path)
    window.refresh_sessions()

    window.sessions.go_to_row(window.sessions.ids().index(session_id))
    qtbot.waitUntil(lambda: any(box.isVisible() for box in window.findChildren(QMessageBox)), timeout=WAIT)
    told = next(box for box in window.findChildren(QMessageBox) if box.isVisible()).text()
    assert f"{session_id} cannot be opened" in told and why in told
    assert shown_now(window) == here.id and window.sessions.current_id() == here.id
    assert window.workspace.already_open(session_id) is None


def test_a_session_stopped_before_its_files_were_written_opens_with_them_written(qtbot, make_window, workdir):
    """Killed between its start event and its three files' first versions: nothing to replay them
    from, so opening it writes them, as its start would have."""
    window = make_window(ScriptedModel([]))
    store = window.workspace.store
    store.create_session("20260101-000000-cut0", task="Tidy the README\nand its links", model="scripted")
    store.append("20260101-000000-cut0", SessionStarted(task="Tidy the README\nand its links", model="scripted",
                                                         workdir=str(workdir)))
    window.refresh_sessions()
    window.show_session("20260101-000000-cut0")
    qtbot.waitUntil(lambda: shown_now(window) == "20260101-000000-cut0", timeout=WAIT)
    plan = window.panes[PLAN]
    qtbot.waitUntil(lambda: "Task Plan: Tidy the README" in plan.viewer.toPlainText(), timeout=WAIT)
    written = [r.event.file for r in store.records("20260101-000000-cut0") if isinstance(r.event, FileChanged)]
    assert sorted(written) == sorted(FILES) and window.session.read_file(PROGRESS)[1] == 1
    first = window.chat.items()[0]  # the task, atop the conversation
    assert isinstance(first, MessageItem) and first.role == "user" and first.text.startswith("Tidy the README")


def test_a_message_half_written_waits_for_its_session_and_goes_to_no_other(qtbot, make_window, workdir, tmp_path,
                                                                           monkeypatch):
    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=3)
    window, here = showing_a_finished_run(qtbot, make_window, workdir)
    qtbot.keyClicks(window.composer, "Also check the notes' dates")

    window.show_session(earlier)
    qtbot.waitUntil(lambda: shown_now(window) == earlier, timeout=WAIT)
    assert window.composer.toPlainText() == ""  # not this session's to send
    rows = {window.sessions.list.item(i).data(Qt.ItemDataRole.UserRole): window.sessions.list.item(i).text()
            for i in range(window.sessions.list.count())}
    assert rows[here.id].endswith(f" · ✎ draft · {workdir.name}") and "draft" not in rows[earlier]  # which waits
    qtbot.keyClicks(window.composer, "Port the tests too")
    window.show_session(here.id)
    qtbot.waitUntil(lambda: shown_now(window) == here.id, timeout=WAIT)
    assert window.composer.toPlainText() == "Also check the notes' dates"
    assert window.composer.textCursor().atEnd()  # typing goes on where it stopped
    window.show_session(earlier)
    qtbot.waitUntil(lambda: shown_now(window) == earlier, timeout=WAIT)
    assert window.composer.toPlainText() == "Port the tests too"

    monkeypatch.setattr(QMessageBox, "open", lambda box: box.done(QMessageBox.StandardButton.Yes))
    window.delete_session()  # its draft goes with it
    qtbot.waitUntil(lambda: earlier not in window.sessions.ids(), timeout=WAIT)
    assert window.composer.toPlainText() == ""
    window.show_session(here.id)
    qtbot.waitUntil(lambda: shown_now(window) == here.id, timeout=WAIT)
    assert window.composer.toPlainText() == "Also check the notes' dates"


def test_drafts_are_kept_through_a_restart_and_a_crash(qtbot, make_window, workdir, tmp_path, settings):
    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=3)
    group = folder_group(tmp_path / "data")
    # Drafts another window keeps, for sessions of another data folder: left as they are.
    settings.q.setValue("drafts/20260101-000000-else", "to the other folder's session")
    settings.q.setValue(f"{folder_group(tmp_path / 'other')}/20260101-000000-else", "grouped, elsewhere")
    # This folder's draft of a session deleted elsewhere (another window over the folder): dropped.
    settings.q.setValue(f"{group}/20260101-000000-gone", "to a deleted session")
    window, here = showing_a_finished_run(qtbot, make_window, workdir)
    qtbot.keyClicks(window.composer, "Also check the notes' dates")
    window.show_session(earlier)
    qtbot.waitUntil(lambda: shown_now(window) == earlier, timeout=WAIT)
    qtbot.keyClicks(window.composer, "Port the tests")
    # Kept a moment after typing stops, with no close: a crash now would lose neither.
    stored = QSettings(settings.q.fileName(), QSettings.Format.IniFormat)
    qtbot.waitUntil(lambda: (stored.sync(), stored.value(f"{group}/{earlier}"))[1] == "Port the tests", timeout=WAIT)
    assert stored.value(f"{group}/{here.id}") == "Also check the notes' dates"
    assert stored.value(f"{group}/20260101-000000-gone") is None
    qtbot.keyClicks(window.composer, " too")
    window.close_now()  # and closing keeps the last keystrokes at once
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)

    reopened = make_window(settings_=AppSettings(QSettings(settings.q.fileName(), QSettings.Format.IniFormat)))
    qtbot.waitUntil(lambda: shown_now(reopened) == earlier, timeout=WAIT)  # the session shown last
    assert reopened.composer.toPlainText() == "Port the tests too"
    reopened.show_session(here.id)
    qtbot.waitUntil(lambda: shown_now(reopened) == here.id, timeout=WAIT)
    assert reopened.composer.toPlainText() == "Also check the notes' dates"
    reopened.composer.clear()  # sent, or dropped: no draft is kept any more
    qtbot.waitUntil(lambda: (stored.sync(), stored.value(f"{group}/{here.id}"))[1] is None, timeout=WAIT)
    assert stored.value(f"{group}/{earlier}") == "Port the tests too"
    assert stored.value("drafts/20260101-000000-else") == "to the other folder's session"
    assert stored.value(f"{folder_group(tmp_path / 'other')}/20260101-000000-else") == "grouped, elsewhere"


def test_an_unsaved_plan_edit_waits_for_its_session_and_through_a_restart(
        qtbot, make_window, workdir, tmp_path, settings):
    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=3)
    window, here = showing_a_finished_run(qtbot, make_window, workdir)
    pane = window.panes[PLAN]
    pane.set_editing(True)
    pane.editor.setPlainText(pane.editor.toPlainText() + "\n- Person: keep the old API\n")
    window.panes["findings.md"].set_editing(True)  # opened, nothing changed: nothing to keep
    stored = QSettings(settings.q.fileName(), QSettings.Format.IniFormat)
    key = f"{folder_group(tmp_path / 'data', 'pane_edits')}/{here.id}|{PLAN}"
    # Kept a moment after typing stops, with no close: a crash now would not lose it.
    qtbot.waitUntil(lambda: "keep the old API" in str((stored.sync(), stored.value(key))[1]), timeout=WAIT)

    window.show_session(earlier)  # switching sessions dropped the edit without a word
    qtbot.waitUntil(lambda: shown_now(window) == earlier, timeout=WAIT)
    assert not pane.editing
    assert window.sessions.list.item(window.sessions.ids().index(here.id)).text().endswith(
        f" · ✎ draft · {workdir.name}")  # the list says which session has one waiting
    window.show_session(here.id)
    qtbot.waitUntil(lambda: shown_now(window) == here.id, timeout=WAIT)
    assert pane.editing and pane.editor.toPlainText().endswith("- Person: keep the old API\n")
    assert "not saved yet" in pane.notice.text() and not window.panes["findings.md"].editing

    window.close_now()  # closing Tripane did too
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    reopened = make_window(settings_=AppSettings(QSettings(settings.q.fileName(), QSettings.Format.IniFormat)))
    qtbot.waitUntil(lambda: shown_now(reopened) == here.id, timeout=WAIT)
    pane = reopened.panes[PLAN]
    qtbot.waitUntil(lambda: pane.editing, timeout=WAIT)
    assert pane.editor.toPlainText().endswith("- Person: keep the old API\n")
    qtbot.keyClick(pane.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not pane.editing, timeout=WAIT)
    session = reopened.session
    assert session.read_file(PLAN)[0].endswith("- Person: keep the old API\n")
    assert any(isinstance(r.event, FileChanged) and r.event.author == "user" for r in session.records)  # as yours
    qtbot.waitUntil(lambda: (stored.sync(), stored.value(key))[1] is None, timeout=WAIT)  # sent: not kept


def test_a_draft_kept_before_drafts_were_grouped_by_folder_is_taken_in(qtbot, make_window, workdir, tmp_path,
                                                                       settings):
    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=3)
    settings.q.setValue(f"drafts/{earlier}", "Port the tests")
    window = make_window(ScriptedModel([]))
    window.show_session(earlier)
    qtbot.waitUntil(lambda: shown_now(window) == earlier, timeout=WAIT)
    assert window.composer.toPlainText() == "Port the tests"
    stored = QSettings(settings.q.fileName(), QSettings.Format.IniFormat)
    assert stored.value(f"drafts/{earlier}") is None  # moved to this folder's group
    assert stored.value(f"{folder_group(tmp_path / 'data')}/{earlier}") == "Port the tests"


def test_the_sessions_search_finds_what_a_conversation_says_and_shows_where(qtbot, make_window, workdir, tmp_path):
    quiet = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=2)
    failing = recorded_earlier(tmp_path / "data", workdir, "Tidy the imports", turns=400)
    store = Store(tmp_path / "data" / DB_NAME)
    store.append(failing, AssistantMessage("Running the tests.", (ToolCall("t1", "shell_run", '{"command": "pytest"}'),)))
    store.append(failing, ToolResult("t1", "shell_run", False, "E   ImportError: cannot import name 'zed' from 'lib'"))
    for turn in range(401, 600):  # the error is far back: among the records a session opens without
        store.append(failing, AssistantMessage(f"Step {turn}.", (ToolCall(f"c{turn}", "file_list", "{}"),), turn=turn))
        store.append(failing, ToolResult(f"c{turn}", "file_list", True, "a.py\nb.py\n"))
    store.close()
    window = make_window(ScriptedModel([]))
    window.refresh_sessions()
    assert set(window.sessions.ids()) == {quiet, failing}

    found = window.sessions.found
    assert not found.isVisible()
    qtbot.keyClicks(window.sessions.search, "Cannot Import")
    assert window.sessions.ids() == []  # no title says it: at once, nothing
    assert found.isVisible() and found.text() == "No title matches · searching what the conversations say…"
    qtbot.waitUntil(lambda: window.sessions.ids() == [failing], timeout=WAIT)  # its conversation does
    assert found.text() == "1 of 2 sessions"
    row = window.sessions.list.item(0)
    assert row.text().endswith("\n    said in its conversation") and "holds the text searched for" in row.toolTip()

    window.sessions.go_to_row(0)
    qtbot.waitUntil(lambda: shown_now(window) == failing, timeout=WAIT)
    bar = window.chat_find
    qtbot.waitUntil(lambda: bar.property("found") == "yes", timeout=WAIT)
    assert bar.isVisible() and bar.text() == "Cannot Import" and not bar.hasFocus()  # the focus stays in the list
    card = window.chat.cards["t1"]
    assert card.details.hasSelectedText() and card.details.selectedText() == "cannot import"

    window.sessions.search.setText("Cannot Importt")  # a typo: said, once the conversations are searched too
    qtbot.waitUntil(lambda: found.text() == "No session matches “Cannot Importt”.", timeout=WAIT)
    window.sessions.search.setText("zq")
    assert found.text() == "No session matches “zq”. Conversations are searched from 3 characters."
    window.sessions.search.setText("parser")
    assert found.text() == "1 of 2 sessions · searching their conversations…"
    window.sessions.search.setText("")  # every session again, none marked
    qtbot.waitUntil(lambda: set(window.sessions.ids()) == {quiet, failing}, timeout=WAIT)
    assert not found.isVisible()
    assert not any(window.sessions.list.item(i).text().endswith("said in its conversation") for i in range(2))
    window.show_session(quiet)  # what was found was in the other conversation
    qtbot.waitUntil(lambda: shown_now(window) == quiet, timeout=WAIT)
    assert not bar.isVisible()

    # Searching for what the session already shown says shows where, too.
    window.show_session(failing)
    qtbot.waitUntil(lambda: shown_now(window) == failing, timeout=WAIT)
    assert not bar.isVisible()
    qtbot.keyClicks(window.sessions.search, "ImportError")
    qtbot.waitUntil(lambda: bar.isVisible() and bar.property("found") == "yes", timeout=WAIT)
    assert bar.text() == "ImportError" and window.sessions.search.hasFocus()  # typing goes on in the search
    assert window.chat.cards["t1"].details.selectedText() == "ImportError"


def test_a_session_opened_from_the_search_shows_the_match_near_its_end_in_view(qtbot, make_window, workdir, tmp_path):
    noted = recorded_earlier(tmp_path / "data", workdir, "Check the totals", turns=3)
    store = Store(tmp_path / "data" / DB_NAME)
    body = json.dumps({"title": "Totals", "body": "The total is a plain sum; " * 30})
    store.append(noted, AssistantMessage("Noting it.", (ToolCall("f1", "findings_add", body),)))
    store.append(noted, ToolResult("f1", "findings_add", True, "Finding recorded in findings.md (version 2)."))
    for turn in range(4, 6):  # two steps after it: the match is near the end, its card folded
        store.append(noted, AssistantMessage(f"Step {turn}.", (ToolCall(f"c{turn}", "file_list", "{}"),), turn=turn))
        store.append(noted, ToolResult(f"c{turn}", "file_list", True, "a.py\nb.py\n"))
    store.close()
    window = make_window(ScriptedModel([]))
    window.show()
    window.refresh_sessions()
    qtbot.keyClicks(window.sessions.search, "plain sum")
    qtbot.waitUntil(lambda: window.sessions.ids() == [noted], timeout=WAIT)
    window.sessions.go_to_row(0)
    qtbot.waitUntil(lambda: window.chat_find.property("found") == "yes", timeout=WAIT)
    qtbot.wait(200)  # the unfolded card laid out
    details = window.chat.cards["f1"].details
    assert details.selectedText() == "plain sum" and details.isVisible()
    # The match is in the card's first lines, and they are in view: the card's unfolding had the
    # view, which followed the end, go on to the end, past it.
    top = details.mapTo(window.chat.viewport(), details.rect().topLeft()).y()
    assert 0 <= top < window.chat.viewport().height() - 40


def test_a_chinese_word_of_two_characters_is_searched_for_in_the_conversations(qtbot, make_window, workdir, tmp_path):
    quiet = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=2)
    said = recorded_earlier(tmp_path / "data", workdir, "Tidy the imports", turns=2)
    store = Store(tmp_path / "data" / DB_NAME)
    store.append(said, UserMessage("先跳过空行，再运行测试"))
    store.close()
    window = make_window(ScriptedModel([]))
    window.sessions.search.setText("空行")  # two characters: a word (three, in English)
    qtbot.waitUntil(lambda: window.sessions.ids() == [said], timeout=WAIT)
    assert quiet not in window.sessions.ids()


def test_copy_as_markdown_puts_the_conversation_on_the_clipboard(qtbot, make_window, workdir):
    window, here = showing_a_finished_run(qtbot, make_window, workdir)
    QApplication.clipboard().clear()
    window.actions_by_name["copy_markdown"].trigger()
    copied = QApplication.clipboard().text()
    assert copied.startswith("# Tidy the notes\n\n*Session `" + here.id) and "## You\n\nTidy the notes" in copied
    assert copied.rstrip().endswith("**■ Ended, done**: ok") and "clipboard" in window.statusBar().currentMessage()


def test_ctrl_page_keys_go_through_the_sessions_as_listed(qtbot, make_window, workdir, tmp_path):
    older = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=2)
    window, newest = showing_a_finished_run(qtbot, make_window, workdir)
    assert window.sessions.ids() == [newest.id, older]
    window.chat.setFocus()
    qtbot.keyClick(window.chat, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: shown_now(window) == older, timeout=WAIT)
    qtbot.keyClick(window.chat, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)  # the last: stays
    qtbot.keyClick(window.chat, Qt.Key.Key_PageUp, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: shown_now(window) == newest.id, timeout=WAIT)
    assert window.sessions.current_id() == newest.id


def test_a_session_exported_elsewhere_is_imported_and_shown(qtbot, make_window, workdir, tmp_path, monkeypatch):
    from core.export import export_session

    elsewhere = tmp_path / "elsewhere"
    shared = recorded_earlier(elsewhere, workdir, "Port the parser", turns=3)
    store = Store(elsewhere / DB_NAME)
    target = export_session(store, elsewhere, shared, tmp_path / "shared.zip")
    store.close()
    window = make_window(ScriptedModel([]))
    told = []
    monkeypatch.setattr(window, "tell", told.append)

    window.actions_by_name["import"].trigger()  # File → Import a session…
    [dialog] = window.findChildren(QFileDialog)
    assert dialog.isVisible() and dialog.fileMode() == QFileDialog.FileMode.ExistingFile
    dialog.fileSelected.emit(str(target))  # the person chose the file
    qtbot.waitUntil(lambda: shown_now(window) == shared, timeout=WAIT)
    assert window.sessions.ids() == [shared] and "Step 3." in " ".join(
        item.text for item in window.chat.items() if isinstance(item, MessageItem))
    dialog.reject()

    window.import_from(target)  # again: it is here already
    qtbot.waitUntil(lambda: bool(told), timeout=WAIT)
    assert "in this data folder already" in told[0] and window.sessions.ids() == [shared]


def test_a_find_older_than_the_conversation_keeps_goes_on_in_the_progress_pane(qtbot, make_window, workdir, tmp_path):
    failing = recorded_earlier(tmp_path / "data", workdir, "Tidy the imports", turns=2)
    store = Store(tmp_path / "data" / DB_NAME)
    store.append(failing, AssistantMessage("Running the tests.", (ToolCall("t1", "shell_run", '{"command": "pytest"}'),)))
    store.append(failing, ToolResult("t1", "shell_run", False, "E   ImportError: cannot import name 'zed' from 'lib'"))
    # progress.md logs the step, as a run does.
    memory = WorkingMemory(tmp_path / "data" / "sessions" / failing)
    last = [r.event for r in store.records(failing) if isinstance(r.event, FileChanged) and r.event.file == PROGRESS][-1]
    memory.restore(PROGRESS, version=last.version, sha256=last.sha256, size=last.size)
    store.append(failing, memory.append(PROGRESS, "### shell_run ✗\nE   ImportError: cannot import name 'zed'",
                                        author="core"))
    for turn in range(3, 700):  # more than the 600 items the conversation keeps
        store.append(failing, AssistantMessage(f"Step {turn}.", (ToolCall(f"c{turn}", "file_list", "{}"),), turn=turn))
        store.append(failing, ToolResult(f"c{turn}", "file_list", True, "a.py\nb.py\n"))
    store.close()
    window = make_window(ScriptedModel([]))
    window.refresh_sessions()
    window.show_session(failing)
    qtbot.waitUntil(lambda: shown_now(window) == failing, timeout=WAIT)
    progress = window.panes[PROGRESS]
    qtbot.waitUntil(lambda: "cannot import name" in progress.viewer.toPlainText(), timeout=WAIT)

    window.chat_find.open()
    window.chat_find.setText("cannot import name")
    qtbot.waitUntil(lambda: window.chat_find.property("found") == "no", timeout=WAIT)  # not in the conversation
    qtbot.waitUntil(lambda: progress.find_bar.isVisible() and progress.find_bar.property("found") == "yes",
                    timeout=WAIT)
    assert progress.find_bar.text() == "cannot import name"
    assert progress.viewer.textCursor().selectedText() == "cannot import name"
    assert "the Progress pane shows where" in window.statusBar().currentMessage()
    assert window.chat_find.hasFocus()  # the person goes on typing where they were


def test_a_search_typed_just_before_the_window_closes_is_not_started_after(qtbot, make_window, monkeypatch):
    """The search waits for a pause in the typing; by then the loop that would run it winds down."""
    window = make_window(ScriptedModel([]))
    asked = []
    monkeypatch.setattr(window.workspace.store, "sessions_mentioning", lambda text: asked.append(text) or set())
    window.sessions.search.setText("parser")
    window.close_now()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    qtbot.wait(3 * TYPING_PAUSE_MS)
    assert asked == []


def test_a_rows_second_line_ends_with_the_name_of_its_work_folder():
    from core.store import SessionRow
    from gui.widgets.session_list import row_text

    def row(workdir: str) -> str:
        return row_text(SessionRow("s", "2026-11-27T05:15:00", "", "Fix it", "Fix it", "ended:done", "m", workdir))

    assert row("/home/ada/code/shop") == "■ Fix it\n    2026-11-27 05:15 · done · shop"
    assert row("C:\\Users\\ada\\shop\\").endswith("· done · shop")  # imported from Windows
    assert row("").endswith("· done")  # (a row from before: none known)
