"""The real main window driving the real core, with a scripted model at the core/llm.py boundary."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

from core.events import Compaction, HumanAnswer, ToolCall, ToolResult, Usage
from core.llm import ModelError, ModelReply, Retry
from core.memory.working import FINDINGS, PLAN, PROGRESS
from core.scripted import ScriptedModel, call, reply
from core.session import SessionConfig
from gui.dialogs.conflict import ConflictDialog
from gui.dialogs.question import QuestionDialog
from gui.qt import (
    QApplication,
    QDialog,
    QFileDialog,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    Qt,
    QUrl,
    qt_alive,
)
from gui.widgets.chat_items import MessageItem
from gui.widgets.tool_card import ToolCard
from tests.gui.test_supporting_screens import chat_says

WAIT = 15_000  # ms; the first model turn loads the tokenizer in a worker thread


def start(window, workdir, task="Write hello.txt", **config):
    return window.start_session(SessionConfig(task=task, workdir=workdir, **{"model": "scripted", **config}))


def start_paused(qtbot, make_window, workdir):
    """A session listing files turn after turn, paused after its first request."""
    model = ScriptedModel([], default=reply("", call("file_list")))
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: len(model.requests) >= 1, timeout=WAIT)
    window.pause()
    qtbot.waitUntil(lambda: session.state.status == "paused", timeout=WAIT)
    return model, window, session


def wait_for_dialog(qtbot, window, reason: str, after: QuestionDialog | None = None) -> QuestionDialog:
    def found():
        return next((d for d in window.dialogs.values()
                     if d.question.reason == reason and d.isVisible() and d is not after), None)
    qtbot.waitUntil(lambda: found() is not None, timeout=WAIT)
    return found()


def test_a_task_runs_and_the_three_panes_fill(qtbot, make_window, workdir):
    model = ScriptedModel([
        reply("I will **write** the file.", call("file_write", path="hello.txt", content="hi\n")),
        reply("", call("findings_add", title="hello.txt", body="Written with a greeting.")),
        reply("", call("task_done", summary="hello.txt written")),
    ])
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)

    assert session.state.status == "ended:done"
    panes = window.panes
    qtbot.waitUntil(lambda: "Written with a greeting" in panes[FINDINGS].shown_text, timeout=WAIT)
    qtbot.waitUntil(lambda: "hello.txt written" in panes[PROGRESS].shown_text, timeout=WAIT)
    assert "## Goal" in panes[PLAN].shown_text and "Write hello.txt" in panes[PLAN].shown_text
    assert "Written with a greeting" in panes[FINDINGS].viewer.toPlainText()  # rendered, not just loaded
    assert "☐" in panes[PLAN].viewer.toPlainText()  # task-list boxes rendered as checkboxes
    cards = [w for w in window.chat.items() if isinstance(w, ToolCard)]
    assert [c.call.name for c in cards] == ["file_write", "findings_add", "task_done"]
    assert all(c.status == "ok" for c in cards)
    # Each header names what the call is about (the path written, not the text), folded or not.
    assert [c.header.text().split("  ", 2)[2] for c in cards] == ["hello.txt", "hello.txt", "hello.txt written"]
    said = [w for w in window.chat.items() if isinstance(w, MessageItem) and w.role == "assistant"]
    assert said and "<b>write</b>" in said[0].body.text() or "<strong>write</strong>" in said[0].body.text()
    assert window.status.state.text().startswith("■ Ended: done")
    assert window.sessions.ids() == [session.id]
    ended = [w for w in window.chat.items() if w.objectName() == "ended"]
    assert "Changed in the work folder: hello.txt (created)" in ended[-1].text()
    window.chat.show_records(list(session.records))  # shown again from the log: the same summary
    ended = [w for w in window.chat.items() if w.objectName() == "ended"]
    assert "Changed in the work folder: hello.txt (created)" in ended[-1].text()


def test_long_lines_wrap_and_never_make_the_conversation_wider_than_its_pane(qtbot, make_window, workdir):
    long_line = " ".join(f"word{i}" for i in range(300))  # about 2,400 characters on one line
    (workdir / "wide.txt").write_text(long_line + "\n", encoding="utf-8")
    model = ScriptedModel([
        reply(f"A long line in a code block:\n\n```\n{long_line}\n```", call("file_read", call_id="wide", path="wide.txt")),
        reply("", call("file_read", call_id="again", path="wide.txt")),
        reply("", call("file_read", call_id="long-name", path="missing-" + "x" * 300 + ".txt")),
        reply("", call("task_done", summary="ok")),
    ])
    window = make_window(model)
    window.resize(1200, 800)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    for card in window.chat.cards.values():
        card.header.setChecked(True)  # unfolded: the widest they can be
    chat = window.chat

    def fits() -> bool:  # once Qt has laid out what was just added and unfolded
        return max([chat.widget().width()] + [item.width() for item in chat.items()]) <= chat.viewport().width()
    qtbot.waitUntil(fits, timeout=WAIT)
    again = chat.cards["again"]
    assert again.status == "ok" and again.header.text().endswith("unchanged, shown earlier")
    read = chat.cards["wide"]
    assert read.status == "ok" and read.details.height() > 3 * read.details.fontMetrics().height()  # wrapped
    # A file name longer than the system allows is refused plainly (Linux and macOS say "File name
    # too long"; Windows may just find no such file), not reported as a bug in the tool.
    refused = chat.cards["long-name"].details.text()
    assert chat.cards["long-name"].status == "error" and "OSError" not in refused
    assert "The system refused: File name too long" in refused or "No such file" in refused


def test_a_plan_edit_in_the_pane_reaches_the_next_request_as_a_diff(qtbot, make_window, workdir):
    model, window, session = start_paused(qtbot, make_window, workdir)
    asked_before = len(model.requests)

    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    pane = window.panes[PLAN]
    assert pane.editing
    pane.editor.setPlainText(pane.editor.toPlainText() + "\n- Person: use PostgreSQL, not SQLite\n")
    qtbot.keyClick(pane.editor, Qt.Key.Key_Escape)  # Esc stops the run elsewhere; in the editor, nothing
    assert pane.editing and session.running and "PostgreSQL" in pane.editor.toPlainText()
    qtbot.keyClick(pane.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert not pane.editing
    window.resume()
    qtbot.waitUntil(lambda: len(model.requests) > asked_before, timeout=WAIT)

    request = model.requests[asked_before]
    diff_messages = [m["content"] for m in request.messages if "The person edited task_plan.md" in str(m.get("content"))]
    assert diff_messages and "+- Person: use PostgreSQL, not SQLite" in diff_messages[0]
    assert "use PostgreSQL" in request.messages[-1]["content"]  # and the tail recites the new plan
    # The conversation says so too, where the person follows what the agent was told.
    assert ('✎ You edited task_plan.md (<a href="tripane-history:task_plan.md:2">version 2</a>: +2 −0 lines); '
            "the agent reads the change") in chat_says(window)  # (the version: a link to the file's history)
    window.stop()
    qtbot.waitUntil(lambda: not session.running, timeout=WAIT)


def test_ctrl_f_finds_in_the_focused_pane_or_the_conversation_and_esc_there_only_closes_the_bar(qtbot, make_window, workdir):
    model, window, session = start_paused(qtbot, make_window, workdir)
    plan = window.panes[PLAN]
    qtbot.waitUntil(lambda: "Steps" in plan.viewer.toPlainText(), timeout=WAIT)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    plan.viewer.setFocus()

    qtbot.keyClick(plan.viewer, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = plan.find_bar
    assert bar.isVisible() and bar.hasFocus()
    qtbot.keyClicks(bar, "Steps")
    cursor = plan.viewer.textCursor
    assert cursor().selectedText() == "Steps"
    found_at = [cursor().selectionStart()]
    for _ in range(3):  # the template's three phases each have their Steps; the fourth wraps around
        qtbot.keyClick(bar, Qt.Key.Key_Return)
        found_at.append(cursor().selectionStart())
    assert found_at[0] < found_at[1] < found_at[2] and found_at[3] == found_at[0]
    qtbot.keyClick(bar, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert cursor().selectionStart() == found_at[2]  # Shift+Enter goes back, around the start
    bar.setText("nowhere in the plan")
    assert bar.property("found") == "no" and cursor().selectionStart() == found_at[2]  # the view stays

    qtbot.keyClick(bar, Qt.Key.Key_Escape)
    assert not bar.isVisible() and session.running and session.state.status == "paused"  # not stopped
    window.composer.setFocus()
    qtbot.keyClick(window.composer, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.chat_find.isVisible() and window.chat_find.hasFocus()  # from the message box: the conversation
    qtbot.keyClicks(window.chat_find, "write HELLO")  # the task, in any case
    assert window.chat_find.property("found") == "yes"
    qtbot.keyClick(window.chat_find, Qt.Key.Key_Escape)
    assert not window.chat_find.isVisible() and window.chat.hasFocus() and session.running
    qtbot.keyClick(window.chat, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.sessions.search.hasFocus()  # Ctrl+K: find a session
    qtbot.keyClicks(window.sessions.search, "hello")
    qtbot.keyClick(window.sessions.search, Qt.Key.Key_Escape)
    assert window.sessions.search.text() == "" and not session.control.stop_requested  # cleared; the run goes on
    window.stop()
    qtbot.waitUntil(lambda: not session.running, timeout=WAIT)


def test_a_conflicting_agent_write_shows_both_versions_and_keeps_the_persons_choice(qtbot, make_window, workdir):
    model, window, session = start_paused(qtbot, make_window, workdir)
    pane = window.panes[PLAN]
    pane.set_editing(True)
    mine = pane.editor.toPlainText() + "\n- Mine: keep this line\n"
    pane.editor.setPlainText(mine)
    # Meanwhile the plan moves on (as if the agent wrote it).
    text, version = session.read_file(PLAN)
    session.memory.write(PLAN, text + "\n- Agent: its own line\n", base_version=version, author="agent")
    pane.save()
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(ConflictDialog)), timeout=WAIT)
    dialog = next(d for d in window.findChildren(ConflictDialog) if d.isVisible())
    assert "Mine: keep this line" in dialog.findChild(QPlainTextEdit, "mine").toPlainText()
    assert "Agent: its own line" in dialog.findChild(QPlainTextEdit, "agents").toPlainText()
    qtbot.mouseClick(dialog.findChild(QPushButton, "keep_mine"), Qt.MouseButton.LeftButton)

    saved, _ = session.read_file(PLAN)
    assert "Mine: keep this line" in saved and "Agent: its own line" not in saved
    assert not pane.editing
    window.stop()
    qtbot.waitUntil(lambda: not session.running, timeout=WAIT)


def test_three_strike_dialog_shows_the_errors_and_its_answer_reaches_the_agent(qtbot, make_window, workdir):
    missing = reply("", call("file_read", path="missing.txt"))
    model = ScriptedModel(
        [missing, missing, missing, reply("", call("task_done", summary="gave up on missing.txt"))],
        side_replies=[reply("root_cause: the file was never there\nkind: A\ntry_instead: list the folder"),
                      reply('{"goal": "read missing.txt", "tried": "reading it three times", '
                            '"wrong": "it does not exist", "differently": "ask", "ask_human": "where is it?"}')],
    )
    window = make_window(model)
    session = start(window, workdir)
    dialog = wait_for_dialog(qtbot, window, "three_strike")

    shown = dialog.details.toPlainText()
    assert "missing.txt" in shown and "it does not exist" in shown  # the errors and the reboot answers
    # and what the diagnosis at the failure before told the agent, also in the chat
    assert "Diagnosed when it happened before: Tripane's diagnosis of a failure that happened twice" in shown
    assert "Try instead: list the folder." in shown
    assert "Tripane's diagnosis of a failure that happened twice" in chat_says(window)  # 🩺, or its stand-in
    assert "once more stops the run" not in shown + chat_says(window)  # said to the agent, not to the person
    assert set(dialog.buttons) == {"retry_with_hint", "skip_step", "edit_plan", "change_model", "stop"}
    # The first failure is unfolded; the same one again is folded, its error line saying which try.
    def unfolded() -> list[bool]:  # the failed calls' cards, in the order they ran
        failed = [r.event.call_id for r in session.records if isinstance(r.event, ToolResult) and not r.event.ok]
        cards = window.chat.cards
        return [cards[i].header.isChecked() for i in failed if i in cards and cards[i].status == "error"]
    assert unfolded() == [True, False, False] and "Error, attempt 3" in chat_says(window)
    window.chat.show_records(session.records, folder=session.dir)  # as when the session is opened again
    qtbot.waitUntil(lambda: len(unfolded()) == 3, timeout=WAIT)
    assert unfolded() == [True, False, False]
    dialog.text.setPlainText("The file is called present.txt")
    qtbot.mouseClick(dialog.buttons["retry_with_hint"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)

    answers = [r.event for r in session.records if isinstance(r.event, HumanAnswer)]
    assert [(a.choice, a.text) for a in answers] == [("retry_with_hint", "The file is called present.txt")]
    last_request = "\n".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "The file is called present.txt" in last_request
    qtbot.waitUntil(lambda: not qt_alive(dialog), timeout=WAIT)  # answered, closed and gone
    # The person reads the stop and their answer as the dialog said them, in the chat and in progress.md.
    assert "? Question for you</b> (3-Strike)" in chat_says(window)
    assert "Asked the person (3-Strike)" in session.read_file(PROGRESS)[0]
    assert "You answered <b>Retry with a hint</b> — The file is called present.txt" in chat_says(window)
    assert "The person answered: Retry with a hint — The file is called present.txt" in session.read_file(PROGRESS)[0]


def test_three_strikes_edit_the_plan_opens_the_plan_and_its_save_answers(qtbot, make_window, workdir):
    missing = reply("", call("file_read", path="missing.txt"))
    model = ScriptedModel([missing, missing, missing, reply("", call("task_done", summary="read present.txt"))],
                          side_replies=[reply("root_cause: no such file\nkind: A\ntry_instead: list the folder"),
                                        reply('{"goal": "read missing.txt", "tried": "three reads"}')])
    window = make_window(model)
    session = start(window, workdir)
    dialog = wait_for_dialog(qtbot, window, "three_strike")
    dialog.text.setPlainText("It was renamed")
    qtbot.mouseClick(dialog.buttons["edit_plan"], Qt.MouseButton.LeftButton)

    pane = window.panes[PLAN]
    assert not dialog.isVisible() and pane.editing and "Save (Ctrl+S) sends it and answers" in pane.notice.text()
    assert session.state.open_question is not None  # the agent waits for the edit
    pane.editor.setPlainText(pane.editor.toPlainText() + "\n- Read present.txt, not missing.txt\n")
    pane.save()

    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    answers = [r.event for r in session.records if isinstance(r.event, HumanAnswer)]
    assert [(a.choice, a.text) for a in answers] == [("edit_plan", "It was renamed")]
    told = "\n".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "+- Read present.txt, not missing.txt" in told  # the edit, as a diff
    assert told.index("+- Read present.txt") < told.index("edit_plan (the person edits the plan: go on from")
    assert not pane.editing


def test_pinned_lines_are_marked_in_the_plan_and_the_chat_says_what_was_pinned(qtbot, make_window, workdir):
    from gui.dialogs.pins import PinDialog
    from gui.markdown import displayable

    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    pane = window.panes[PLAN]
    qtbot.mouseClick(pane.pin_button, Qt.MouseButton.LeftButton)
    dialog = next(d for d in window.findChildren(PinDialog) if d.isVisible())
    for i in range(dialog.lines.count()):
        item = dialog.lines.item(i)
        if item.text() in ("Write hello.txt", "1. [ ] Check the result against the goal"):
            item.setCheckState(Qt.CheckState.Checked)
    dialog.accept()

    pin = displayable("📌")
    qtbot.waitUntil(lambda: f"Check the result against the goal {pin}" in pane.viewer.toPlainText(), timeout=WAIT)
    shown = pane.viewer.toPlainText()
    assert f"\nWrite hello.txt {pin}\n" in shown and f"Call task_done with a summary {pin}" not in shown
    assert ("2 lines of the plan pinned, which the agent must keep (it may tick a step off): “Write hello.txt”, "
            "“1. [ ] Check the result against the goal”") in chat_says(window)
    # The step ticked off stays pinned, and marked.
    text, version = session.read_file(PLAN)
    session.edit_file(PLAN, text.replace("1. [ ] Check the result", "1. [x] Check the result"), version)
    qtbot.waitUntil(lambda: "☑ Check the result" in pane.viewer.toPlainText(), timeout=WAIT)
    assert f"Check the result against the goal {pin}" in pane.viewer.toPlainText()
    # Opened again (Session → Pin plan lines…, Ctrl+Shift+P), the pinned lines are checked, the ticked step too.
    window.actions_by_name["pin_plan"].trigger()
    again = next(d for d in window.findChildren(PinDialog) if d.isVisible() and d is not dialog)
    assert again.chosen() == ["Write hello.txt", "1. [x] Check the result against the goal"]
    again.reject()


def test_turn_thirty_opens_the_danger_dialog(qtbot, make_window, workdir):
    model = ScriptedModel([], default=reply("", call("file_list")))
    window = make_window(model)
    session = start(window, workdir)
    dialog = wait_for_dialog(qtbot, window, "danger_turn")
    assert session.state.turn == 30
    assert window.status.turn.property("level") == "danger"
    shown = dialog.details.toPlainText()
    assert "Where the plan stands:" in shown and "Phase: 1" in shown
    assert "Working on: " in shown and "The latest steps:" in shown and "✓ file_list" in shown

    dialog.more_turns.setValue(2)
    qtbot.mouseClick(dialog.buttons["continue"], Qt.MouseButton.LeftButton)
    second = wait_for_dialog(qtbot, window, "danger_turn", after=dialog)
    assert second is not dialog and session.state.turn == 32
    qtbot.mouseClick(second.buttons["stop"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert session.state.status == "ended:aborted"
    # The person stopped it: said so, not "aborted", as a run that failed reads.
    ended = [w for w in window.chat.items() if w.objectName() == "ended"][-1]
    assert ended.text().startswith("■ <b>Ended: stopped</b> — The person chose to stop.")
    qtbot.waitUntil(lambda: window.status.state.text() == "■ Ended: stopped", timeout=WAIT)
    qtbot.waitUntil(lambda: " · stopped · " in window.sessions.list.item(0).text(), timeout=WAIT)
    window.sessions.search.setText("stopped")
    assert window.sessions.ids() == [session.id]


def test_the_budget_dialog_shows_the_latest_steps_and_grants_what_the_person_sets(qtbot, make_window, workdir):
    costly = ModelReply("", (ToolCall("c", "file_list", "{}"),), usage=Usage(prompt_tokens=400, completion_tokens=100))
    window = make_window(ScriptedModel([], default=costly))
    session = start(window, workdir, budget_tokens=1200)
    dialog = wait_for_dialog(qtbot, window, "budget")
    shown = dialog.details.toPlainText()
    assert "1,500 tokens used" in shown and "The latest steps:" in shown and "✓ file_list" in shown
    assert "Working on: " in shown and dialog.more_usd is None
    assert dialog.more_tokens.value() == 1200  # as much again, unless the person sets another

    dialog.more_tokens.setValue(600)
    qtbot.mouseClick(dialog.buttons["continue"], Qt.MouseButton.LeftButton)
    second = wait_for_dialog(qtbot, window, "budget", after=dialog)
    assert session.state.turn == 5  # 1,500 + 600 → asked at 2,100
    qtbot.mouseClick(second.buttons["stop"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)


def test_a_question_closed_unanswered_comes_back_and_its_answer_still_counts(qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("shell_run", command="echo approved")),
                           reply("", call("task_done", summary="ran it"))])
    window = make_window(model)
    session = start(window, workdir, approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # closed, to answer later
    assert not dialog.isVisible() and session.state.open_question is not None
    assert "Ctrl+Shift+A" in window.status.state.toolTip()

    qtbot.mouseClick(window.status.state, Qt.MouseButton.LeftButton)  # "? Waiting for you"
    assert dialog.isVisible()
    dialog.close()
    window.activateWindow()  # the person comes back to the window
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    qtbot.keyClick(window, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert dialog.isVisible()
    qtbot.mouseClick(dialog.buttons["approve"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    assert session.state.status == "ended:done"
    window.show_open_question()
    assert window.statusBar().currentMessage() == "No session is waiting for an answer."


def test_answer_the_question_goes_to_the_session_that_waits_when_the_one_shown_asks_nothing(qtbot, make_window,
                                                                                             workdir):
    model = ScriptedModel([reply("", call("shell_run", command="echo approved"))],
                          default=reply("", call("task_done", summary="done")))
    window = make_window(model)
    waiting = start(window, workdir, task="Run the script", approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")
    dialog.close()  # to answer later; meanwhile another session is started, and ends
    other = start(window, workdir, task="Tidy up")
    qtbot.waitUntil(lambda: other.state.ended, timeout=WAIT)
    assert window.session is other and window.windowTitle().startswith("(1 waiting for you)")

    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    qtbot.keyClick(window, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.session is waiting and dialog.isVisible(), timeout=WAIT)
    qtbot.mouseClick(dialog.buttons["approve"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: waiting.state.ended, timeout=WAIT)


def test_an_approval_denied_is_never_executed(qtbot, make_window, workdir):
    marker = workdir / "ran.txt"
    model = ScriptedModel([
        reply("", call("shell_run", command=f"echo ran > {marker.name}")),
        reply("", call("task_done", summary="did not run it")),
    ])
    window = make_window(model)
    session = start(window, workdir, approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")

    assert f"echo ran > {marker.name}" in dialog.details.toPlainText()
    assert f"Tool: shell_run   in {workdir}" in dialog.details.toPlainText()  # where it would run
    assert [b.text() for b in dialog.buttons.values()] == [  # each with its Alt key
        "&Approve", "&Deny", "Always allow &this command in this folder", "Always allow &shell_run"]
    dialog.text.setPlainText("not on my machine")
    qtbot.mouseClick(dialog.buttons["deny"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)

    assert not marker.exists()
    result = next(r.event for r in session.records if isinstance(r.event, ToolResult) and r.event.name == "shell_run")
    assert "denied" in result.content and "not on my machine" in result.content
    card = window.chat.cards[result.call_id]
    assert card.status == "error" and card.details.isVisible()  # a refusal is shown, not folded


def test_two_sessions_asking_their_question_of_the_same_number_each_have_their_own_dialog(
        qtbot, make_window, workdir):
    # Each session numbers its questions from its events (q3 in both): the second's was taken for
    # the first's, shown again instead of its own, and answering one closed the other's.
    model = ScriptedModel([], default=reply("", call("shell_run", command="echo hi")))
    window = make_window(model)
    # Both recall from long-term memory (loaded after the first frame): the same events, numbered alike.
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    first = start(window, workdir, task="First", approval="ask")
    first_dialog = wait_for_dialog(qtbot, window, "approval")
    second = start(window, workdir, task="Second", approval="ask")
    second_dialog = wait_for_dialog(qtbot, window, "approval", after=first_dialog)
    assert first_dialog.question.qid == second_dialog.question.qid
    assert (first_dialog.session_id, second_dialog.session_id) == (first.id, second.id)
    assert "— First —" in first_dialog.windowTitle() and "— Second —" in second_dialog.windowTitle()  # (taskbar)
    # Not exactly over the first, which would pass unseen beneath it; and on the screen.
    assert second_dialog.pos() != first_dialog.pos()
    assert second_dialog.screen().availableGeometry().contains(second_dialog.geometry().topLeft())

    qtbot.mouseClick(second_dialog.buttons["deny"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: second_dialog.question.qid in second.state.answers, timeout=WAIT)
    assert first_dialog.isVisible() and first.state.open_question is not None  # still asked, still waiting
    first.stop()
    second.stop()
    qtbot.waitUntil(lambda: not first.running and not second.running, timeout=WAIT)


def test_a_run_ended_on_a_provider_error_goes_on_with_resume(qtbot, make_window, workdir):
    down = ModelError("connection", "Could not reach the server at http://127.0.0.1:9/v1 (Connection error): "
                      "is it running, and is the API base right?", retryable=True)
    window = make_window(ScriptedModel([down, reply("", call("task_done", summary="went on"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.status == "ended:error" and not session.running, timeout=WAIT)
    # (the controls follow the run's end as the window hears of it, a moment after the session's own state)
    qtbot.waitUntil(lambda: window.resume_button.isEnabled(), timeout=WAIT)
    assert not window.pause_button.isEnabled()
    assert "Resume (Ctrl+R) tries the failed step again" in chat_says(window)
    assert "Ctrl+Shift+L, takes the key, another model or the server's new address" in chat_says(window)

    qtbot.mouseClick(window.resume_button, Qt.MouseButton.LeftButton)  # the server is up again
    qtbot.waitUntil(lambda: session.state.status == "ended:done", timeout=WAIT)
    assert not window.resume_button.isEnabled()  # a run that ended otherwise goes on with a message


def test_a_message_sent_mid_run_reaches_the_agent(qtbot, make_window, workdir):
    model = ScriptedModel([], default=reply("", call("file_list")))
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: len(model.requests) >= 2, timeout=WAIT)
    window.composer.setPlainText("Also count the files, please.")
    qtbot.keyClick(window.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.composer.toPlainText() == ""
    qtbot.waitUntil(lambda: any("Also count the files" in str(m.get("content"))
                                for m in model.requests[-1].messages), timeout=WAIT)
    window.composer.setPlainText("And then")  # the next message, half written
    qtbot.keyClick(window.composer, Qt.Key.Key_Escape)  # there, Esc does not stop the run …
    assert not session.control.stop_requested and window.composer.toPlainText() == "And then"
    window.composer.clear()
    qtbot.keyClick(window.composer, Qt.Key.Key_Escape)  # … from an empty box, it does
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert session.state.status == "ended:aborted"
    assert any(isinstance(w, MessageItem) and w.role == "user" for w in window.chat.items())


def test_a_session_started_leaves_the_keys_in_the_message_box_where_esc_stops_it(qtbot, make_window, workdir):
    """The window starts in the sessions' search, where Esc only leaves the search: after Start, the
    person steers the run with a message, or stops it with Esc, from where the keys are."""
    model = ScriptedModel([], default=reply("", call("file_list")))
    window = make_window(model)
    window.prefs.model = "openai/local-coder"
    window.find_session()
    dialog = window.new_session()
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    dialog.task.setPlainText("List the files, again and again")
    dialog.workdir.setText(str(workdir))
    dialog._accept()
    qtbot.waitUntil(lambda: window.session is not None and len(model.requests) >= 1, timeout=WAIT)
    assert window.focusWidget() is window.composer
    window.activateWindow()  # as the closing dialog gives it back
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.session.state.ended and not window.session.running, timeout=WAIT)
    assert window.session.state.status == "ended:aborted"


def test_a_compaction_shows_in_the_chat_with_the_context_size_before_and_after(qtbot, make_window, workdir):
    """A local model's 8k window: long reads fill it within a few turns and the context is compacted."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(200)),
                                      encoding="utf-8")
    reads = [reply("", call("file_read", path="wide.txt", offset=1 + i * 20, limit=20)) for i in range(8)]
    # A flush turn takes the next scripted reply too (its read is refused there), so the script ends
    # in task_done for as long as needed rather than at a fixed turn.
    model = ScriptedModel(reads, default=reply("", call("task_done", summary="read")),
                          side_replies=[ModelReply("Goal: read wide.txt. Pending: report.")] * 5)
    window = make_window(model)
    session = start(window, workdir, context_window=8_000, reserve_output=1000)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)

    compactions = [r.event for r in session.records if isinstance(r.event, Compaction)]
    notices = [w.text() for w in window.chat.items() if isinstance(w, QLabel) and "compacted" in w.text()]
    assert compactions and notices == [
        f"⇊ Context compacted ({e.tokens_before:,} → {e.tokens_after:,} tokens); the summary is in "
        "compaction/summaries.jsonl" for e in compactions]
    assert all(0 < e.tokens_after < e.tokens_before for e in compactions)


def test_a_retried_model_call_says_why_and_drops_the_half_streamed_reply(qtbot, make_window, workdir):
    go_on = asyncio.Event()

    class FlakyModel(ScriptedModel):
        """The first call breaks off after a few words, as a stalled provider does, and is tried again."""

        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if not self.requests:
                on_text("Half a rep")
                on_retry(Retry(ModelError("timeout", "The provider did not answer within 2 s."), 2, 5, 4.0))
                await go_on.wait()
                on_text("The whole reply.")
            return await super().complete(request, on_text, on_retry)

    model = FlakyModel([reply("The whole reply.", call("task_done", summary="ok"))])
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: window.status.state.text() == "↻ Retrying the model", timeout=WAIT)
    assert window.statusBar().currentMessage() == (
        "↻ The provider did not answer within 2 s. Trying again in 4 s (attempt 2 of 5).")
    assert not any(isinstance(w, MessageItem) and w.role == "assistant" for w in window.chat.items())

    go_on.set()
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    replies = [w for w in window.chat.items() if isinstance(w, MessageItem) and w.role == "assistant"]
    assert [r.text for r in replies] == ["The whole reply."]
    assert window.statusBar().currentMessage() == ""


def test_once_a_retrys_wait_is_over_the_model_is_seen_asked_again(qtbot, make_window, workdir):
    go_on = asyncio.Event()

    class FlakyModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if not self.requests:
                on_retry(Retry(ModelError("timeout", "The provider did not answer within 2 s."), 2, 5, 0.6))
                await asyncio.sleep(0.6)  # the client's wait, then the call made again
                await go_on.wait()
            return await super().complete(request, on_text, on_retry)

    window = make_window(FlakyModel([reply("Done.", call("task_done", summary="ok"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: window.status.state.text() == "↻ Retrying the model", timeout=WAIT)
    qtbot.waitUntil(lambda: window.status.state.text().startswith("● Waiting for the model · "), timeout=WAIT)
    assert window.statusBar().currentMessage() == ""  # the retry's reason goes with it
    go_on.set()
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)


def test_a_retry_made_at_once_leaves_its_why_in_the_status_bar(qtbot, make_window, workdir):
    # A reply the computer slept through is asked for again at once: the half-shown reply went, and
    # the person, back at the laptop, read no reason why it started over.
    go_on = asyncio.Event()
    slept = ModelError("slept", "The computer slept for 1 h 00 min while the reply was on its way, and the reply "
                                "did not go on after it woke.")

    class SleptThrough(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if not self.requests:
                on_text("Half a rep")
                on_retry(Retry(slept, 2, 5, 0.0))
                await go_on.wait()
            return await super().complete(request, on_text, on_retry)

    window = make_window(SleptThrough([reply("The whole reply.", call("task_done", summary="ok"))]))
    session = start(window, workdir)
    # Once the run waits for the model again, the why is still there. (Both waited for: the run says
    # "Waiting for the model" before its first request too, and on a busy machine a wait for that
    # alone ended before the retry.)
    qtbot.waitUntil(lambda: window.status.state.text().startswith("● Waiting for the model · ")
                    and window.statusBar().currentMessage() == f"↻ {slept} Trying again now (attempt 2 of 5).",
                    timeout=WAIT)
    go_on.set()
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert window.statusBar().currentMessage().startswith("↻ The computer slept for 1 h 00 min")


def test_a_slow_model_is_seen_waited_for_then_thinking_then_writing(qtbot, make_window, workdir):
    """A model on this computer may read for minutes before its first word: the status bar counts
    the wait, then says whether it thinks or writes, and how much."""
    thought, wrote, calls, go_on = asyncio.Event(), asyncio.Event(), asyncio.Event(), asyncio.Event()

    class SlowModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if not self.requests:
                await thought.wait()
                on_reasoning("The person wants")
                await wrote.wait()
                on_text("x" * 1200)
                await calls.wait()
                on_call("file_write", '{"content": "' + "y" * 20000)
                await go_on.wait()
            return await super().complete(request, on_text, on_retry)

    window = make_window(SlowModel([reply("x" * 1200, call("task_done", summary="ok"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: window.status.state.text() == "● Waiting for the model · 1 s", timeout=WAIT)
    assert "has not begun its reply" in window.status.state.toolTip()
    thought.set()
    qtbot.waitUntil(lambda: window.status.state.text().startswith("● Thinking · "), timeout=WAIT)
    wrote.set()
    qtbot.waitUntil(lambda: window.status.state.text().startswith("● Writing its reply · 1,200 characters · "),
                    timeout=WAIT)
    calls.set()  # then a long file, in its call's arguments
    qtbot.waitUntil(lambda: window.status.state.text().startswith("● Writing a call to file_write · 20,013 characters"),
                    timeout=WAIT)
    go_on.set()
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    qtbot.wait(1100)  # the clock stopped with the reply: the end stays said
    assert window.status.state.text() == "■ Ended: done"


def test_a_pause_asked_during_a_long_reply_says_it_waits_for_the_step_and_can_be_taken_back(qtbot, make_window,
                                                                                           workdir):
    """A pause takes effect after the step the run is in: with a slow model, minutes later. Until
    then the status bar says so, Pause is not offered twice, and Resume takes the pause back."""
    go_on = asyncio.Event()

    class SlowModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if not self.requests:
                await go_on.wait()
            return await super().complete(request, on_text, on_retry)

    window = make_window(SlowModel([reply("", call("file_list"))], default=reply("", call("task_done", summary="ok"))))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: window.status.state.text().startswith("● Waiting for the model"), timeout=WAIT)
    window.pause()
    assert window.status.state.text().startswith("‖ Pausing after this step · waiting for the model · ")
    assert not window.pause_button.isEnabled() and window.resume_button.isEnabled()
    window.resume()  # taken back
    assert window.status.state.text().startswith("● Waiting for the model")
    assert window.pause_button.isEnabled() and not window.resume_button.isEnabled()
    window.pause()
    go_on.set()
    qtbot.waitUntil(lambda: session.state.status == "paused", timeout=WAIT)
    assert window.status.state.text() == "‖ Paused" and window.resume_button.isEnabled()


def test_a_compaction_and_a_diagnosis_count_their_seconds_too(qtbot):
    """A summary of a long history by a local model takes minutes as well."""
    from types import SimpleNamespace

    from core.journal import CallsWritten
    from gui.widgets.status import SessionStatusBar

    bar = SessionStatusBar()
    qtbot.addWidget(bar)
    bridge = SimpleNamespace(activity="compacting", since=time.monotonic() - 95, thinking="", writing="",
                             call=CallsWritten())
    bar.follow_activity(bridge)
    assert bar.state.text() == "● Compacting the context · 95 s"
    bridge.activity, bridge.since = "diagnosing", time.monotonic() - 3
    qtbot.waitUntil(lambda: bar.state.text() == "● Diagnosing a repeated failure · 4 s", timeout=3000)
    bridge.activity = "running_tool"  # its card counts; the bar leaves the text the window sets
    bar.state.setText("● Running shell_run")
    qtbot.wait(1100)
    assert bar.state.text() == "● Running shell_run"


def ended_by(qtbot, make_window, workdir, error: ModelError):
    """A run the model's error ended, then done once it goes on; and the chat's ending notice."""
    model = ScriptedModel([error, reply("", call("task_done", summary="done once it went on"))])
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    ended = [w for w in window.chat.items() if w.objectName() == "ended"][-1].text()
    return model, window, session, ended


def test_a_run_ended_by_a_refused_key_says_how_to_continue_and_a_message_does(qtbot, make_window, workdir):
    from core.llm import ModelError

    model, window, session, ended = ended_by(qtbot, make_window, workdir,
                                             ModelError("auth", "The provider refused the API key: invalid key"))
    assert "refused the API key" in ended and "send a message: the agent continues from here" in ended

    # The menu offers what the buttons do: Ctrl+P on the ended run does not hold the next one.
    actions = window.actions_by_name
    qtbot.waitUntil(lambda: not window.pause_button.isEnabled(), timeout=WAIT)  # the run's end is taken in
    assert not actions["pause"].isEnabled() and not actions["stop"].isEnabled() and actions["send"].isEnabled()
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    window.composer.setPlainText("The key is fixed, go on.")
    window.send_message()
    qtbot.waitUntil(lambda: session.state.status == "ended:done" and not session.running, timeout=WAIT)
    assert "The key is fixed, go on." in str(model.requests[-1].messages)


def test_a_session_whose_model_is_gone_goes_on_with_another_chosen_from_the_session_menu(qtbot, make_window,
                                                                                        workdir):
    model, window, session, ended = ended_by(
        qtbot, make_window, workdir, ModelError("not_found", "The provider does not know this model: gpt-4-32k"))
    assert "a model the provider does not know: Session → Change model, Ctrl+Shift+L, takes the key" in ended

    qtbot.waitUntil(lambda: window.actions_by_name["change_model"].isEnabled(), timeout=WAIT)
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    dialog = window.findChild(QDialog, "change_model")
    qtbot.waitUntil(lambda: dialog.isVisible(), timeout=WAIT)
    assert dialog.model.currentText() == "scripted"  # the session's own, to edit
    window.prefs.remember_model("openai/local-coder", "http://127.0.0.1:8080/v1")
    dialog.model.addItem("openai/local-coder")
    dialog.model.textActivated.emit("openai/local-coder")  # picked from the list: its server comes along
    assert dialog.api_base.text() == "http://127.0.0.1:8080/v1"
    dialog.api_base.clear()
    dialog.model.setCurrentText("openai/gpt-4o-mini")
    dialog.context_window.setValue(2_048)
    assert dialog.reasoning_effort.currentText() == "the model's own"  # the session's
    dialog.reasoning_effort.setCurrentIndex(dialog.reasoning_effort.findData("low"))
    change = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Change model")
    qtbot.mouseClick(change, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and "at least 4,096" in dialog.error.text()  # too small to hold the prompt
    dialog.context_window.setValue(32_768)
    qtbot.mouseClick(change, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: window.status.model.text() == "Model: openai/gpt-4o-mini · effort low", timeout=WAIT)
    assert ("Model changed by the person from scripted to openai/gpt-4o-mini, a 32,768-token window, reasoning "
            "effort low") in chat_says(window)
    assert session.state.reasoning_effort == "low"
    qtbot.waitUntil(lambda: "send a message to go on" in window.statusBar().currentMessage(), timeout=WAIT)
    window.composer.setPlainText("Go on with the other model.")
    window.send_message()
    qtbot.waitUntil(lambda: session.state.status == "ended:done" and not session.running, timeout=WAIT)
    assert (model.requests[-1].model, model.requests[-1].window) == ("openai/gpt-4o-mini", 32_768)
    assert model.requests[-1].reasoning_effort == "low"
    # the scripted model, like gpt-4o-mini, takes no effort: the status bar says so once it answered
    qtbot.waitUntil(lambda: window.status.model.text() == "Model: openai/gpt-4o-mini · effort low (not taken)",
                    timeout=WAIT)
    assert window.prefs.models_used()[0] == ("openai/gpt-4o-mini", "")  # offered first next time


def test_a_model_its_provider_deprecates_soon_is_pointed_out_and_a_click_changes_it(qtbot, make_window, workdir):
    from core.llm import load_litellm

    day = load_litellm().model_cost["claude-sonnet-4-5"]["deprecation_date"]  # within 30 days of the tests' day
    model = ScriptedModel([reply("", call("task_done", summary="done"))])
    window = make_window(model)
    session = start(window, workdir, model="anthropic/claude-sonnet-4-5")
    label = window.status.model
    qtbot.waitUntil(lambda: label.text() == f"Model: anthropic/claude-sonnet-4-5 · deprecated from {day}", timeout=WAIT)
    assert label.property("level") == "warn"
    assert f"Its provider deprecates this model on {day} (litellm's model map)" in label.toolTip()
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)

    qtbot.mouseClick(label, Qt.MouseButton.LeftButton)
    dialog = window.findChild(QDialog, "change_model")
    qtbot.waitUntil(lambda: dialog.isVisible(), timeout=WAIT)
    dialog.model.setCurrentText("anthropic/claude-haiku-4-5")
    qtbot.mouseClick(next(b for b in dialog.findChildren(QPushButton) if b.text() == "Change model"),
                     Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: label.text() == "Model: anthropic/claude-haiku-4-5", timeout=WAIT)  # none dated
    assert label.property("level") == "" and "deprecat" not in label.toolTip()


def test_a_session_moved_to_another_provider_takes_that_providers_key_in_the_change_model_dialog(
        qtbot, make_window, workdir, memory_keyring):
    from tests.support.openai_server import ScriptedServer, Turn

    memory_keyring.secrets[("Tripane", "openai")] = "sk-the-persons-openai-key"
    model, window, session, ended = ended_by(
        qtbot, make_window, workdir, ModelError("auth", "The provider refused the API key: invalid x-api-key"))
    assert "a missing or refused API key" in ended and "Ctrl+Shift+L" in ended
    dialog = window.change_model()
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    key = dialog.api_key
    # The field says which key the chosen model would be sent, asked of the keyring as typing pauses.
    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")
    qtbot.waitUntil(lambda: key.placeholderText() == "none stored for anthropic yet: paste its key here",
                    timeout=WAIT)
    dialog.model.setCurrentText("openai/gpt-4o-mini")
    qtbot.waitUntil(lambda: key.placeholderText() == "a key is stored for openai: leave empty to keep it",
                    timeout=WAIT)

    # Test connection, with a key typed for a server of the person's choosing that wants one: the
    # key is stored under that server's name first, and sent to it.
    with ScriptedServer(lambda request: Turn(text="ready"), served_key="sk-the-servers-key") as server:
        dialog.api_base.setText(server.url)
        qtbot.waitUntil(lambda: key.placeholderText().startswith("none needed"), timeout=WAIT)  # on this computer
        key.setText("sk-the-servers-key")
        qtbot.mouseClick(dialog.connection.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.connection.test_result.text().startswith(("✓", "✗")), timeout=30_000)
        assert dialog.connection.test_result.text().startswith("✓ Connected. The model replied: ready")
        server_key = ("Tripane", f"openai@{server.url.split('//')[1].split('/')[0]}")
        assert memory_keyring.secrets[server_key] == "sk-the-servers-key"
        assert key.text() == ""
        qtbot.waitUntil(lambda: key.placeholderText().startswith("a key is stored for openai@127.0.0.1"),
                        timeout=WAIT)

    dialog.api_base.clear()
    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")
    key.setText("sk-ant-typed-here")
    change = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Change model")
    qtbot.mouseClick(change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.status.model.text() == "Model: anthropic/claude-3-5-haiku-latest", timeout=WAIT)
    # Kept under Anthropic's name; the OpenAI key is where it was.
    assert memory_keyring.secrets == {("Tripane", "openai"): "sk-the-persons-openai-key",
                                      server_key: "sk-the-servers-key",
                                      ("Tripane", "anthropic"): "sk-ant-typed-here"}
    assert not any("sk-ant-typed-here" in path.read_text(encoding="utf-8", errors="replace")
                   for path in session.dir.rglob("*") if path.is_file())


def test_progress_markers_are_drawn_or_shown_by_a_plain_stand_in(qtbot, make_window, workdir):
    from gui.glyphs import STAND_INS, drawable
    from gui.qt import QApplication

    model = ScriptedModel([reply("", call("file_read", path="missing.txt")),
                           reply("", call("task_done", summary="looked"))])
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    qtbot.waitUntil(lambda: "looked" in window.panes[PROGRESS].shown_text, timeout=WAIT)

    on_disk = (session.dir / PROGRESS).read_text(encoding="utf-8")
    shown = window.panes[PROGRESS].viewer.toPlainText()
    for marker in ("✅", "❌", "🔧"):
        assert marker in on_disk  # the file keeps its markers whatever this machine draws
        if drawable(marker, QApplication.font()):
            assert marker in shown
        else:  # it would be a box: a Linux desktop without an emoji font
            assert marker not in shown and STAND_INS[marker] in shown
    assert drawable(shown, QApplication.font())


def test_deleting_a_session_that_waits_for_an_answer_takes_its_question_away(qtbot, make_window, workdir,
                                                                             monkeypatch):
    marker = workdir / "ran.txt"
    window = make_window(ScriptedModel([reply("", call("shell_run", command=f"echo ran > {marker.name}"))]))
    session = start(window, workdir, approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")

    window.sessions.go_to_row(window.sessions.ids().index(session.id))
    monkeypatch.setattr(QMessageBox, "open", lambda box: box.done(QMessageBox.StandardButton.Yes))
    window.delete_session()
    qtbot.waitUntil(lambda: window.sessions.ids() == [], timeout=WAIT)

    qtbot.waitUntil(lambda: not qt_alive(dialog), timeout=WAIT)  # nothing left to answer
    assert window.dialogs == {} and not session.dir.exists() and not marker.exists()


def test_the_status_bar_shows_the_providers_cached_share_only_once_it_reports_one(qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("shell_run", command="echo hi"), prompt_tokens=1000),  # no cache reported
                           reply("", call("task_done", summary="ok"), prompt_tokens=1000, cached_tokens=900)])
    window = make_window(model)
    session = start(window, workdir, approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")  # the run waits here, after one request
    assert window.status.reuse.text().startswith("Cache reuse: ") and "cached" not in window.status.reuse.text()
    qtbot.mouseClick(dialog.buttons["approve"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert window.status.reuse.text().endswith(" · cached 45%")  # 900 of the 2,000 prompt tokens so far


def test_the_status_bar_says_the_cost_is_unknown_until_a_request_has_a_price(qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("shell_run", command="echo hi"), prompt_tokens=1000),  # no price known
                           ModelReply("", (call("task_done", summary="ok"),), Usage(1000, 10, 0, 0.0125))])
    window = make_window(model)
    session = start(window, workdir, approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")
    assert window.status.cost.text() == "Cost: unknown"  # not "$0.0000", which would read as free
    assert "no price for scripted" in window.status.cost.toolTip()
    qtbot.mouseClick(dialog.buttons["approve"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert window.status.cost.text() == "Cost: $0.0125"


def test_a_long_output_card_links_to_the_file_with_all_of_it(qtbot, make_window, workdir):
    printing = f'"{sys.executable}" -c "for i in range(300): print(f\'line {{i:04d}} \' + \'x\' * 40)"'
    model = ScriptedModel([reply("", call("shell_run", command=printing)), reply("", call("task_done", summary="ok"))])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    card = next(w for w in window.chat.items() if isinstance(w, ToolCard) and w.call.name == "shell_run")
    assert "line 0150" not in card.details.text()  # the card, like the context, holds its head and tail

    href = re.search(r'<a href="([^"]+)">offload/', card.details.text()).group(1)
    full = Path(QUrl(href).toLocalFile())
    assert full.parent == session.dir / "offload" and "line 0150" in full.read_text(encoding="utf-8")
    card.copy_result()  # right-click, Copy result: all of it
    assert QApplication.clipboard().text() == full.read_text(encoding="utf-8")


def command_running(qtbot, make_window, workdir, command: str, printed: str):
    """A session whose agent runs `command`, once the card shows it has printed `printed`."""
    model = ScriptedModel([reply("", call("shell_run", "c1", command=command)),
                           reply("", call("task_done", summary="ran it"))])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: "c1" in window.chat.cards, timeout=WAIT)
    card = window.chat.cards["c1"]
    qtbot.waitUntil(lambda: printed in card.details.text(), timeout=WAIT)
    return session, card


def test_a_session_shown_again_mid_command_shows_what_it_printed_meanwhile_and_what_it_does(
        qtbot, make_window, workdir):
    (workdir / "suite.py").write_text(
        "import pathlib, time\n"
        "def wait(name):\n"
        "    deadline = time.monotonic() + 30\n"
        "    while not pathlib.Path(name).exists() and time.monotonic() < deadline:\n"
        "        time.sleep(0.05)\n"
        "print('collected 3 items', flush=True)\n"
        "wait('step')\n"
        "print('test_one PASSED', flush=True)\n"
        "wait('go')\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("shell_run", "c1", command=f'"{sys.executable}" suite.py')),
                           reply("", call("task_done", summary="nothing to do")),
                           reply("", call("task_done", summary="ran it"))])
    window = make_window(model)
    first = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: "c1" in window.chat.cards and "collected" in window.chat.cards["c1"].details.text(),
                    timeout=WAIT)
    second = start(window, workdir, task="Another task")  # shown instead
    qtbot.waitUntil(lambda: window.session is second and second.state.ended, timeout=WAIT)
    (workdir / "step").write_text("", encoding="utf-8")  # the first prints on, unseen
    qtbot.waitUntil(lambda: "PASSED" in window.bridges[first.id].output.get("c1", ""), timeout=WAIT)

    window.show_session(first.id)
    qtbot.waitUntil(lambda: window.session is first and "c1" in window.chat.cards, timeout=WAIT)
    shown = window.chat.cards["c1"].details.text()
    assert "collected 3 items" in shown and "test_one PASSED" in shown  # not only what it prints from now on
    assert window.status.state.text() == "● Running shell_run"  # not idle
    (workdir / "go").write_text("", encoding="utf-8")
    qtbot.waitUntil(lambda: first.state.ended and not first.running, timeout=WAIT)
    assert not window.bridges[first.id].output  # (kept only while the call runs)


def test_a_session_shown_again_mid_reply_shows_the_reply_from_its_start(qtbot, make_window, workdir):
    gate = asyncio.Event()

    class HalfWritten(ScriptedModel):
        """Its first reply streams its first words, then waits for the gate."""
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if self._main_calls == 0:
                self._main_calls += 1
                on_text("I am writing the **report** on")
                await gate.wait()
                return reply("I am writing the **report** on the parser.", call("task_done", summary="reported"))
            return await super().complete(request, on_text, on_retry, on_reasoning)

    window = make_window(HalfWritten([None, reply("", call("task_done", summary="nothing to do"))]))
    first = start(window, workdir)
    qtbot.waitUntil(lambda: first.id in window.bridges and bool(window.bridges[first.id].writing), timeout=WAIT)
    second = start(window, workdir, task="Another task")  # shown instead
    qtbot.waitUntil(lambda: window.session is second and second.state.ended, timeout=WAIT)

    window.show_session(first.id)
    qtbot.waitUntil(lambda: window.session is first, timeout=WAIT)
    assert window.chat._live_text == "I am writing the **report** on"  # from its start, not from now on
    gate.set()
    qtbot.waitUntil(lambda: first.state.ended, timeout=WAIT)
    assert window.chat._live_text == "" and not window.bridges[first.id].writing


def test_a_running_command_shows_its_output_and_time_as_it_goes(qtbot, make_window, workdir):
    """A test suite that runs for minutes: the card says how long it has run and shows what the
    command prints, then folds to its result like any card."""
    (workdir / "suite.py").write_text(
        "import pathlib, time\n"
        "print('collected 3 items', flush=True)\n"
        "deadline = time.monotonic() + 30\n"
        "while not pathlib.Path('go').exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "print('3 passed', flush=True)\n", encoding="utf-8")
    session, card = command_running(qtbot, make_window, workdir, f'"{sys.executable}" suite.py', "collected 3 items")
    assert card.header.isChecked() and card.details.isVisible() and "Output so far" in card.details.text()
    assert card.window().status.state.text() == "● Running shell_run"
    qtbot.waitUntil(lambda: re.search(r"· running [1-9] s$", card.header.text()) is not None, timeout=WAIT)

    (workdir / "go").write_text("", encoding="utf-8")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert card.status == "ok" and not card.header.isChecked()  # folded again, as results are
    assert "running" not in card.header.text() and "Output so far" not in card.details.text()
    assert "3 passed" in card.details.text()


def test_a_card_the_person_folded_stays_folded_while_output_comes(qtbot):
    card = ToolCard(ToolCall("c1", "shell_run", '{"command": "pip install x"}'))
    qtbot.addWidget(card)
    card.header.click()  # open
    card.header.click()  # and fold again: their choice
    card.add_output("Downloading 10%\rDownloading 55%\r")
    assert not card.header.isChecked() and "Downloading 55%" in card.details.text()
    assert "10%" not in card.details.text()  # a progress bar drawn in place shows as it stands
    card.add_output("\n{" + '"k": 1, ' * 2000 + "}")  # one line of minified JSON: its end, not all of it
    assert len(card.details.text()) < 2000 and '"k": 1, }' in card.details.text()
    card.set_result(ToolResult("c1", "shell_run", True, "Installed\n[exit code 0]"))
    assert not card.header.isChecked() and "Output so far" not in card.details.text()


def test_the_whole_output_opens_from_its_card_or_says_where_it_is_when_nothing_opens_it(qtbot, tmp_path,
                                                                                          monkeypatch):
    # Under a bare window manager nothing opens a .txt file: the link did nothing, and said nothing.
    from gui import desktop_open

    (tmp_path / "offload").mkdir()
    (tmp_path / "offload" / "turn0001-c1.txt").write_text("line\n" * 100_000, encoding="utf-8")
    card = ToolCard(ToolCall("c1", "shell_run", '{"command": "find /"}'), folder=tmp_path)
    qtbot.addWidget(card)
    card.set_result(ToolResult("c1", "shell_run", True, "line\n… [cut]", offload_path="offload/turn0001-c1.txt",
                               size=500_000))
    href = re.search(r'<a href="([^"]+)">offload/turn0001-c1.txt</a>', card.details.text()).group(1)
    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    card.details.linkActivated.emit(href)
    assert opened == [str(tmp_path / "offload" / "turn0001-c1.txt")]
    assert not [box for box in QApplication.topLevelWidgets() if isinstance(box, QMessageBox) and box.isVisible()]
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: False)
    card.details.linkActivated.emit(href)
    shown = [box for box in QApplication.topLevelWidgets() if isinstance(box, QMessageBox) and box.isVisible()]
    assert len(shown) == 1 and shown[0].text() == (
        f"No program could open turn0001-c1.txt. It is in:\n{tmp_path / 'offload' / 'turn0001-c1.txt'}")
    shown[0].close()


def echo_awaiting_approval(qtbot, make_window, workdir):
    """A window whose session asks to run `echo hi`: (window, session, the approval dialog)."""
    model = ScriptedModel([reply("", call("shell_run", "c1", command="echo hi")),
                           reply("", call("task_done", summary="ok"))])
    window = make_window(model)
    session = start(window, workdir, approval="ask")
    return window, session, wait_for_dialog(qtbot, window, "approval")


def test_a_call_waiting_for_approval_says_so_on_its_card(qtbot, make_window, workdir):
    window, session, dialog = echo_awaiting_approval(qtbot, make_window, workdir)
    assert window.chat.cards["c1"].header.text().endswith("· waiting for your approval")
    window.chat.show_records(session.records, folder=session.dir)  # as when the session is opened again
    qtbot.waitUntil(lambda: "c1" in window.chat.cards, timeout=WAIT)
    assert window.chat.cards["c1"].header.text().endswith("· waiting for your approval")

    qtbot.mouseClick(dialog.buttons["approve"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert window.chat.cards["c1"].header.text() == "✓  shell_run  echo hi"


def test_the_status_bar_counts_the_reads_since_the_last_finding(qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("file_list", "l1")), reply("", call("file_search", "s1", query="x")),
                           reply("", call("shell_run", "c1", command="echo hi")),
                           reply("", call("findings_add", title="Layout", body="One folder.")),
                           reply("", call("task_done", summary="ok"))])
    window = make_window(model)
    session = start(window, workdir, approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")
    reads = window.status.reads
    assert reads.text() == "Reads since a finding: 2" and reads.property("level") == "warn"  # the agent is reminded
    qtbot.mouseClick(dialog.buttons["approve"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert reads.text() == "Reads since a finding: 0" and reads.property("level") == "normal"


def test_the_person_stops_a_hanging_command_from_its_card(qtbot, make_window, workdir):
    hang = f'"{sys.executable}" -c "import time; print(\'waiting for the server\', flush=True); time.sleep(60)"'
    session, first_card = command_running(qtbot, make_window, workdir, hang, "waiting for the server")
    window = first_card.window()
    other = window.workspace.create(SessionConfig(task="Another task", model="scripted", workdir=workdir))
    window.show_session(other.id)
    window.show_session(session.id)  # back to it: its card is built anew, the command still running
    card = window.chat.cards["c1"]
    assert card is not first_card and card.started and not card.stop_button.isHidden()  # at once, not at new output
    qtbot.waitUntil(lambda: re.search(r"· running [1-9] s$", card.header.text()) is not None, timeout=WAIT)
    menu = card.context_menu()
    assert "&Stop this command" in [action.text() for action in menu.actions()]
    menu.close()
    qtbot.mouseClick(card.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert session.state.status == "ended:done"  # the run went on to its end
    assert card.status == "error" and not card.stop_button.isVisible()
    assert "Stopped by the person after" in card.details.text()


def test_a_command_allowed_in_a_folder_is_listed_in_settings_and_can_be_taken_back(qtbot, make_window, workdir):
    window, session, dialog = echo_awaiting_approval(qtbot, make_window, workdir)
    button = re.sub("&(.)", r"\1", dialog.buttons["always_call"].text())  # as shown, without its Alt key's mark
    qtbot.mouseClick(dialog.buttons["always_call"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    # the answer reads as the button did, in the chat and in progress.md
    assert button == "Always allow this command in this folder"
    assert f"You answered <b>{button}</b>" in chat_says(window)
    assert f"The person answered: {button}" in session.read_file(PROGRESS)[0]

    settings = window.open_settings()
    listed = settings.allowed.list
    assert [listed.item(i).text() for i in range(listed.count())] == [f"shell_run: echo hi\n    in {workdir.resolve()}"]
    listed.setCurrentRow(0)
    qtbot.mouseClick(settings.allowed.remove, Qt.MouseButton.LeftButton)
    assert listed.count() == 0 and session.approvals.allowed(workdir)  # taken back on Save, not before
    settings._accept()
    assert not session.approvals.allowed(workdir)


def test_a_full_disk_stops_the_run_says_so_keeps_the_persons_edit_and_resume_goes_on(qtbot, make_window, workdir):
    from tests.core.test_disk_full import fill_disk, make_room

    command = f'"{sys.executable}" -c "import time; print(1, flush=True); time.sleep(1); print(20000 * chr(120))"'
    model = ScriptedModel([reply("", call("shell_run", "c1", command=command))],
                          default=reply("", call("task_done", summary="done once there was room")))
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: "c1" in window.chat.cards and window.chat.cards["c1"].started, timeout=WAIT)
    store = window.workspace.store
    fill_disk(store)  # while the command runs: its result finds no room

    # The run stops, and a message says why and how to go on; the command's card stops counting.
    def told():
        return [box for box in window.findChildren(QMessageBox) if box.isVisible() and "ran out of room" in box.text()]
    qtbot.waitUntil(lambda: bool(told()) and not session.running, timeout=WAIT)
    assert "Free some space, then press Resume (Ctrl+R)" in told()[0].text()
    card = window.chat.cards["c1"]
    assert card.header.text().endswith("· unfinished: the run stopped") and card.stop_button.isHidden()
    told()[0].accept()

    # The person's plan edit cannot be recorded either: it stays in the editor, and the pane says why.
    window.activateWindow()  # as closing the message gives the window back
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT)
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    pane = window.panes[PLAN]
    pane.editor.setPlainText(pane.editor.toPlainText() + "\n- Person: keep the old API\n" + "x" * 20_000)
    qtbot.keyClick(pane.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert pane.editing and "keep the old API" in pane.editor.toPlainText()
    assert "Not saved. The disk holding" in pane.notice.text() and pane.notice.isVisible()

    make_room(store)
    qtbot.keyClick(pane.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # saved now
    assert not pane.editing, pane.notice.text()
    qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: session.state.status == "ended:done", timeout=WAIT)
    assert "keep the old API" in str(model.requests[-1].messages)  # the edit reached the agent
    assert card.status == "error" and "Tripane stopped while this call was in progress" in card.details.text()


def test_a_reasoning_models_thinking_is_counted_as_it_comes_and_folded_above_its_answer(qtbot, make_window, workdir):
    go_on = asyncio.Event()
    thinking = "The plan says read first, so I read the file. " * 30

    class ThinkingModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if not self.requests:
                on_reasoning(thinking)
                await go_on.wait()
            return await super().complete(request, on_text, on_retry, on_reasoning)

    done = reply("Read it; done.", call("task_done", summary="ok"))
    model = ThinkingModel([ModelReply(done.text, done.tool_calls, done.usage, reasoning=thinking)])
    window = make_window(model)
    session = start(window, workdir)

    def live_item():
        return next((w for w in window.chat.items() if isinstance(w, MessageItem) and w.role == "assistant"), None)
    qtbot.waitUntil(lambda: live_item() is not None and live_item().reasoning_header is not None, timeout=WAIT)
    item = live_item()
    assert item.reasoning_header.text() == "Thinking… (300 words)" and not item.reasoning_body.isVisible()

    go_on.set()
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert item.reasoning_header.text() == "Thought (300 words)" and item.text == "Read it; done."
    qtbot.waitUntil(lambda: item.reasoning_header.height() > 0, timeout=WAIT)  # laid out: a click can land
    qtbot.mouseClick(item.reasoning_header, Qt.MouseButton.LeftButton)  # unfolded: the thinking, as written
    assert item.reasoning_body.isVisible() and "The plan says read first" in item.reasoning_body.text()
    assert "The plan says read first" not in str(model.requests[-1].messages)  # never sent back


def test_a_reply_that_only_thought_and_called_leaves_no_empty_line_for_its_answer(qtbot, make_window, workdir):
    """The thinking streamed and the reply ended before the chat drew it (Claude's thinking, then
    a call): the message shows its thinking, and no blank line where an answer would be."""
    class ThinkingModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            on_reasoning("Read the file first.")
            return await super().complete(request, on_text, on_retry, on_reasoning)

    read = reply("", call("file_read", path="notes.txt"))
    (workdir / "notes.txt").write_text("notes\n", encoding="utf-8")
    model = ThinkingModel([ModelReply("", read.tool_calls, read.usage, reasoning="Read the file first."),
                           reply("Done.", call("task_done", summary="ok"))])
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    first = next(w for w in window.chat.items() if isinstance(w, MessageItem) and w.role == "assistant")
    assert first.reasoning_header.text() == "Thought (4 words)"
    assert first.body.isHidden()


def test_thinking_the_provider_encrypted_is_folded_as_hidden_not_left_out(qtbot, make_window, workdir):
    redacted = ({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},)
    done = reply("Done.", call("task_done", summary="ok"))
    window = make_window(ScriptedModel([ModelReply(done.text, done.tool_calls, done.usage, thinking_blocks=redacted)]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    item = next(w for w in window.chat.items() if isinstance(w, MessageItem) and w.role == "assistant")
    assert item.reasoning_header.text() == "Thought (hidden by the provider)"
    window.chat.clear()
    window.chat.show_records(session.records)  # drawn again from the log, as when the session is opened later
    redrawn = next(w for w in window.chat.items() if isinstance(w, MessageItem) and w.role == "assistant")
    assert redrawn is not item and redrawn.reasoning_header.text() == "Thought (hidden by the provider)"


def test_a_moved_work_folder_is_given_its_new_place_from_the_refusal(qtbot, make_window, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    model = ScriptedModel([reply("", call("task_done", summary="first")),
                           reply("", call("file_write", path="notes.md", content="written\n")),
                           reply("", call("task_done", summary="written there"))])
    window = make_window(model)
    session = start(window, project, task="Write the notes")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    moved = project.rename(tmp_path / "renamed")
    window.composer.setPlainText("Write notes.md")
    window.send_message()
    box = None

    def refusal():
        nonlocal box
        box = next((w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.isVisible() and "not there any more" in w.text()), None)
        return box is not None
    qtbot.waitUntil(refusal, timeout=WAIT)
    choose = next(b for b in box.buttons() if b.text() == "Choose its new place…")
    choose.click()
    dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QFileDialog) and w.isVisible())
    dialog.fileSelected.emit(str(moved))  # the folder chosen in it
    assert session.state.workdir == str(moved.resolve())
    qtbot.waitUntil(lambda: "Work folder moved from" in chat_says(window), timeout=WAIT)
    assert window._shown_workdir() == moved.resolve()
    assert "works in" in window.statusBar().currentMessage()

    window.composer.setPlainText("Write notes.md")  # (the refused message was kept in the log)
    window.send_message()
    qtbot.waitUntil(lambda: session.state.ended and (moved / "notes.md").exists(), timeout=WAIT)
    assert not project.exists()


def test_a_question_that_comes_while_the_person_types_waits_for_a_pause(qtbot, make_window, workdir):
    """Opened at once, the question took the keyboard: the message being typed went on in its
    answer box, and the Ctrl+Enter meant to send the message sent it as the answer."""
    release = asyncio.Event()

    class Held(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            await release.wait()
            return await super().complete(request, *args, **kwargs)

    window = make_window(Held([reply("", call("human_ask", question="Also update the docs?", options=["yes", "no"])),
                               reply("", call("task_done", summary="ok"))]))
    window.show()
    session = start(window, workdir, task="List the files")
    qtbot.waitUntil(lambda: window.session is session and window.composer.isEnabled(), timeout=WAIT)
    release.set()
    typed = ""
    for _ in range(100):  # typing, a key now and then, as the question comes
        qtbot.keyClicks(window.composer, "a")
        typed += "a"
        if session.state.open_question is not None:
            break
        qtbot.wait(200)
    for _ in range(3):  # and on
        qtbot.wait(400)
        assert not any(d.isVisible() for d in window.dialogs.values())  # held while the person types
        qtbot.keyClicks(window.composer, "b")
        typed += "b"
    assert "a question for you, shown when you pause typing" in window.statusBar().currentMessage()
    dialog = wait_for_dialog(qtbot, window, "ask_user")  # the pause came: now it opens
    assert window.composer.toPlainText() == typed and dialog.text.toPlainText() == ""

    window.show_open_question()  # asked for (Ctrl+Shift+A), it opens even as the person types
    dialog.close()
    qtbot.keyClicks(window.composer, "!")
    window.show_open_question()
    assert dialog.isVisible()
