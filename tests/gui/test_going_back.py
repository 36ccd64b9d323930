"""Going back to before a step of the agent's, in the real window: right-click the step, confirm
what comes back, and the new session opens waiting for the person's word; the agent goes on from
there with its files as they were."""

from __future__ import annotations

from core.events import SessionBranched
from core.scripted import ScriptedModel, call, reply
from gui.qt import QDialog, QLabel, QMenu
from gui.widgets.chat_items import MessageItem
from gui.widgets.tool_card import ToolCard
from tests.gui.test_message_menu import action
from tests.gui.test_supporting_screens import chat_says
from tests.gui.test_window import start
from tests.support.marks import needs_git

pytestmark = needs_git

WAIT = 20_000


def test_going_back_before_a_step_opens_a_new_session_with_the_files_as_they_were(qtbot, make_window, workdir):
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    model = ScriptedModel([
        reply("Fixing the sign.", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("Now rewriting it all.", call("file_write", path="calc.py", content="rewritten\n")),
        reply("", call("task_done", summary="rewrote it")),
        reply("", call("task_done", summary="kept the fix and added a test")),
    ])
    window = make_window(model)
    source = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: source.state.ended and not source.running, timeout=WAIT)
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "rewritten\n"

    said = next(item for item in window.chat.items() if isinstance(item, MessageItem)
                and item.text == "Now rewriting it all.")
    card = next(item for item in window.chat.items() if isinstance(item, ToolCard) and item.call.name == "file_write")
    first = next(item for item in window.chat.items() if isinstance(item, MessageItem) and item.role == "user")
    assert [a.text() for a in first.context_menu().actions() if "back" in a.text()] == []  # the task: no point before
    menu: QMenu = card.context_menu()
    action(menu, "Go back to before this step…")  # the call's card offers it, as its reply does
    action(said.context_menu(), "Go back to before this step…").trigger()

    dialog = None

    def asked():
        nonlocal dialog
        dialog = window.findChild(QDialog, "go_back")
        return dialog is not None and dialog.isVisible()
    qtbot.waitUntil(asked, timeout=WAIT)
    assert dialog.put_back.isChecked() and "1 file the agent changed" in dialog.put_back.text()
    assert "As they were then: calc.py" in dialog.findChild(QLabel, "go_back_files").text()
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "rewritten\n"  # nothing before the person says so
    dialog.go_button.click()

    qtbot.waitUntil(lambda: window.session is not None and window.session.id != source.id, timeout=WAIT)
    branch = window.session
    assert isinstance(branch.records[-1].event, SessionBranched)
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n"
    qtbot.waitUntil(lambda: window.focusWidget() is window.composer, timeout=WAIT)  # to say what to do instead
    assert window.composer.placeholderText().startswith("Tell the agent what to do from here")
    assert "Went back to" in chat_says(window)
    said_now = [item.text for item in window.chat.items() if isinstance(item, MessageItem)]
    assert said_now == ["Write hello.txt", "Fixing the sign."]  # the step gone back before is not there
    titles = [window.sessions.list.item(i).text() for i in range(window.sessions.list.count())]
    assert any(title.startswith("↶ Write hello.txt (from step 2)") and "· went back" in title for title in titles)
    assert window.status.state.text() == "↶ Went back: waiting for your message"

    window.composer.setPlainText("Keep the fix; add a test instead of rewriting.")
    window.send_message()
    qtbot.waitUntil(lambda: branch.state.ended and not branch.running and len(model.requests) == 4, timeout=WAIT)
    told = str(model.requests[-1].messages)
    assert "The person went back to this point of the session" in told
    assert "Keep the fix; add a test instead of rewriting." in told
    assert "Now rewriting it all." not in told  # what the other session did after the point is not in its context
    assert branch.state.status == "ended:done"
    assert not window.composer.placeholderText().startswith("Tell the agent what to do from here")  # under way since


def test_going_back_while_the_run_waits_on_an_approval_stops_it_first(qtbot, make_window, workdir):
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    model = ScriptedModel([
        reply("Fixing the sign.", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("Now rewriting it all.", call("file_write", path="calc.py", content="rewritten\n"),
              call("shell_run", command="echo restructuring")),
    ])
    window = make_window(model)
    source = start(window, workdir)  # risky tools are asked about
    qtbot.waitUntil(lambda: source.state.status == "waiting", timeout=WAIT)
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "rewritten\n"
    said = next(item for item in window.chat.items() if isinstance(item, MessageItem)
                and item.text == "Now rewriting it all.")
    action(said.context_menu(), "Go back to before this step…").trigger()
    qtbot.waitUntil(lambda: window.going_back.dialog is not None and window.going_back.dialog.isVisible(),
                    timeout=WAIT)
    dialog = window.going_back.dialog
    assert "going back ends it first, as Stop does" in dialog.findChild(QLabel).text()
    assert source.running  # nothing stops before the person says so
    dialog.go_button.click()

    qtbot.waitUntil(lambda: window.session is not None and window.session.id != source.id, timeout=WAIT)
    assert not source.running and source.state.ended
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n"
    assert not [d for d in window.dialogs.values() if d.isVisible()]  # the approval no longer asked


def test_going_back_from_a_session_that_asks_since_a_restart_ends_it_and_its_question(
        qtbot, make_window, settings, tmp_path, workdir):
    from tests.gui.test_restart import killed_at_its_question

    killed_at_its_question(tmp_path, settings, workdir, "approval")  # its first step: a command to approve
    window = make_window(ScriptedModel([]))
    window.sessions.go_to_row(0)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.dialogs.values()), timeout=WAIT)
    source = window.session
    assert not source.running
    card = next(item for item in window.chat.items() if isinstance(item, ToolCard))
    action(card.context_menu(), "Go back to before this step…").trigger()
    qtbot.waitUntil(lambda: window.going_back.dialog is not None and window.going_back.dialog.isVisible(),
                    timeout=WAIT)
    assert "going back ends it first" in window.going_back.dialog.findChild(QLabel).text()  # (nothing runs it)
    window.going_back.dialog.go_button.click()
    qtbot.waitUntil(lambda: window.session is not None and window.session.id != source.id, timeout=WAIT)
    assert not [d for d in window.dialogs.values() if d.isVisible()]  # the way left asks nothing more here
    assert source.state.ended and not window.windowTitle().startswith("(")  # "(1 waiting for you)" no more
    assert not (workdir / "ran.txt").exists()


def test_the_question_sets_a_quote_written_right_to_left_apart_from_its_english_words():
    from core.events import AssistantMessage, UserMessage
    from gui.bidi import FSI, PDI
    from gui.going_back import point_words

    assert point_words(UserMessage("اجمع الفواتير")) == f"your message “{FSI}اجمع الفواتير{PDI}”"
    assert point_words(AssistantMessage("Fixing the sign.", (), turn=3)) == "the agent's step 3 (“Fixing the sign.”)"


def test_the_session_menu_lists_the_steps_and_messages_to_go_back_to_before(qtbot, make_window, workdir):
    from gui.qt import QInputDialog

    model = ScriptedModel([reply("Fixing the sign.", call("file_write", path="calc.py", content="a + b\n")),
                           reply("Now rewriting it all.", call("file_write", path="calc.py", content="rewritten\n")),
                           reply("", call("task_done", summary="rewrote it"))])
    window = make_window(model)
    source = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: source.state.ended and not source.running, timeout=WAIT)
    assert window.actions_by_name["go_back"].isEnabled()
    window.actions_by_name["go_back"].trigger()
    chooser = window.findChild(QInputDialog, "go_back_choice")
    qtbot.waitUntil(lambda: chooser is not None and chooser.isVisible(), timeout=WAIT)
    lines = chooser.comboBoxItems()
    assert [line.split(" · ")[0] for line in lines] == ["Step 3", "Step 2", "Step 1"]  # newest first
    assert lines[1].endswith(" · Now rewriting it all.") and lines[0].endswith(" · task_done")
    chooser.setTextValue(lines[1])
    chooser.accept()
    qtbot.waitUntil(lambda: window.going_back.dialog is not None and window.going_back.dialog.isVisible(),
                    timeout=WAIT)
    assert "the agent's step 2 (“Now rewriting it all.”)" in window.going_back.dialog.findChild(QLabel).text()
