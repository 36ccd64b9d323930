"""A dev server the agent started runs on for the person once the task is done, in the window:
said on its command's card and in the conversation, stopped there, or with Tripane (which asks
first)."""

from __future__ import annotations

import sys

import pytest

from core.events import BackgroundStopped
from core.scripted import ScriptedModel, call, reply
from gui.qt import QLabel, QMessageBox, Qt, QUrl
from tests.core.helpers import events_of
from tests.core.tools.test_shell_and_web import BEATING
from tests.gui.test_alerts import quit_box
from tests.gui.test_restart import qtbot_left
from tests.gui.test_supporting_screens import chat_says
from tests.gui.test_window import WAIT, start

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="on Windows what a command leaves running is the "
                                                                "agent's to stop: Tripane neither stops nor keeps it")

COMMAND = f'"{sys.executable}" serve.py'


def served(qtbot, make_window, workdir, then: int = 0, server: str = BEATING):
    """A window whose agent started a server (and took `then` steps more) and said the task is done."""
    (workdir / "serve.py").write_text(server, encoding="utf-8")
    window = make_window(ScriptedModel([reply("", call("shell_run", "serve", command=COMMAND)),
                                        *[reply(f"Looking at part {n}.", call("file_list")) for n in range(then)],
                                        reply("", call("task_done", summary="The page is served."))]))
    session = start(window, workdir, task="Serve the page", approval="all")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    card = window.chat.cards["serve"]
    qtbot.waitUntil(lambda: "· still runs in the background" in card.header.text(), timeout=WAIT)
    return window, session, card


def test_a_server_kept_for_the_person_is_said_and_stopped_from_its_card(qtbot, make_window, workdir):
    window, session, card = served(qtbot, make_window, workdir)
    assert "keeps running for you now the task is done, until you stop it or quit Tripane" in chat_says(window)
    assert "so they run on for you to try, until you stop them or quit Tripane" in card.details.text()
    qtbot.waitUntil(lambda: card.stop_button.isVisible(), timeout=WAIT)
    assert card.stop_button.text() == "Stop it" and "without Tripane" not in card.stop_button.toolTip()
    assert beating(qtbot, workdir)  # the page the agent pointed to is there
    assert "· ▸ left running" in listed(window, session)  # found again among many sessions
    assert "runs on for you: Stop it on the command's card" in listed(window, session, Qt.ItemDataRole.ToolTipRole)

    qtbot.mouseClick(card.stop_button, qtbot_left())
    assert "· you stopped what it left running" in card.header.text()
    assert "ran on after the task, until you stopped it" in card.details.text()
    qtbot.waitUntil(lambda: events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,), by="person")],
                    timeout=WAIT)
    assert session.kept_running() == [] and not beating(qtbot, workdir)
    qtbot.waitUntil(lambda: "left running" not in listed(window, session), timeout=WAIT)
    assert "You stopped what" in chat_says(window)

    window.close()  # nothing runs on: no question
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    assert quit_box(window) is None


def test_quitting_while_a_server_runs_on_for_the_person_asks_and_stops_it(qtbot, make_window, workdir):
    window, session, _ = served(qtbot, make_window, workdir)

    window.close()
    qtbot.waitUntil(lambda: quit_box(window) is not None, timeout=WAIT)
    assert f"What the agent left running for you in the background stops with Tripane: `{COMMAND}`." in \
        quit_box(window).text()
    quit_box(window).button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: quit_box(window) is None, timeout=WAIT)
    assert window.isVisible() and session.kept_running() == [COMMAND]

    window.close()
    qtbot.waitUntil(lambda: quit_box(window) is not None, timeout=WAIT)
    next(b for b in quit_box(window).buttons() if b.text() == "Quit").click()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    assert events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,), by="quit")]
    assert not any((session.dir / "running").iterdir()) and not beating(qtbot, workdir)


def listed(window, session, role=Qt.ItemDataRole.DisplayRole) -> str:
    """The session's row in the list (its text, or its tooltip)."""
    return next(window.sessions.list.item(i).data(role) for i in range(window.sessions.list.count())
                if window.sessions.list.item(i).data(Qt.ItemDataRole.UserRole) == session.id)


def beating(qtbot, folder) -> bool:
    """Whether the stand-in server still writes its heartbeat (see BEATING)."""
    before = (folder / "beat").stat().st_size
    qtbot.wait(600)
    return (folder / "beat").stat().st_size > before


def test_shown_again_its_card_still_offers_to_stop_it(qtbot, make_window, workdir):
    # Another session shown meanwhile: back on this one, the card had lost its Stop it.
    window, session, _ = served(qtbot, make_window, workdir)
    other = start(window, workdir, task="Something else")
    qtbot.waitUntil(lambda: window.session is other and other.state.ended, timeout=WAIT)
    window.show_session(session.id)
    qtbot.waitUntil(lambda: window.session is session and "serve" in window.chat.cards, timeout=WAIT)
    card = window.chat.cards["serve"]  # (built with the conversation's older part, after the first)
    assert "· still runs in the background" in card.header.text()
    assert "so they run on for you to try" in card.details.text()
    qtbot.waitUntil(lambda: card.stop_button.isVisible(), timeout=WAIT)


def test_the_notices_link_stops_it_and_shows_its_card(qtbot, make_window, workdir):
    window, session, card = served(qtbot, make_window, workdir, then=20)
    bar = window.chat.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT)
    bar.setValue(bar.maximum())
    top = card.mapTo(window.chat.widget(), card.rect().topLeft()).y()
    assert top < bar.value()  # scrolled past it, to the end where the notice is
    notice = next(item for item in window.chat.items() if isinstance(item, QLabel) and "stop it now" in item.text())
    notice.linkActivated.emit("stop")
    assert "· you stopped what it left running" in card.header.text()
    qtbot.waitUntil(lambda: events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,), by="person")],
                    timeout=WAIT)
    assert bar.value() <= top  # its card in view, saying so


def test_the_session_menu_stops_it_from_the_keyboard(qtbot, make_window, workdir):
    window, session, card = served(qtbot, make_window, workdir)
    qtbot.waitUntil(lambda: card.stop_button.isVisible(), timeout=WAIT)
    window.actions_by_name["stop_left"].trigger()
    assert "· you stopped what it left running" in card.header.text()
    qtbot.waitUntil(lambda: events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,), by="person")],
                    timeout=WAIT)
    window.actions_by_name["stop_left"].trigger()  # nothing left: said, not a silent click
    assert window.statusBar().currentMessage() == "Nothing the agent left running in the background runs now."


def test_the_notice_says_when_it_has_stopped(qtbot, make_window, workdir):
    # Its "stop it now" stayed, and seemed to do nothing, after the server had stopped.
    window, session, card = served(qtbot, make_window, workdir)
    assert "stop it now" in notice_of(window)
    qtbot.waitUntil(lambda: card.stop_button.isVisible(), timeout=WAIT)
    qtbot.mouseClick(card.stop_button, qtbot_left())
    assert notice_of(window).endswith("until you stop it or quit Tripane — it has stopped since")
    other = start(window, workdir, task="Something else")
    qtbot.waitUntil(lambda: window.session is other and other.state.ended, timeout=WAIT)
    window.show_session(session.id)  # built again, it says so too
    qtbot.waitUntil(lambda: window.session is session and
                    notice_of(window).endswith("— it has stopped since"), timeout=WAIT)


def notice_of(window) -> str:
    """The text of the conversation's kept notice."""
    return next(item.text() for item in window.chat.items() if isinstance(item, QLabel)
                and "keeps running for you" in item.text())


def test_a_new_session_in_the_folder_says_the_server_left_running_there(qtbot, make_window, workdir):
    window, session, card = served(qtbot, make_window, workdir)
    dialog = window.new_session()
    dialog.workdir.setText(str(workdir))
    qtbot.waitUntil(lambda: dialog.alongside_note.isVisible(), timeout=WAIT)
    assert dialog.alongside_note.text() == (f"`{COMMAND}` (left by “Serve the page”) runs in this folder for you: "
                                            "started here, its agent is told to leave it running.")
    dialog.reject()
    qtbot.mouseClick(card.stop_button, qtbot_left())
    qtbot.waitUntil(lambda: bool(events_of(session, BackgroundStopped)), timeout=WAIT)
    dialog = window.new_session()
    dialog.workdir.setText(str(workdir))
    assert dialog.alongside_note.text() == "" and not dialog.alongside_note.isVisible()
    dialog.reject()


def test_the_card_of_a_command_that_left_a_server_running_links_to_what_it_prints(qtbot, make_window, workdir):
    window, session, card = served(qtbot, make_window, workdir)
    log = session.dir / "offload" / "background-serve.log"
    assert log.is_file()
    assert "What it prints from then on: <a href=" in card.details.text()
    assert QUrl.fromLocalFile(str(log)).toString(QUrl.ComponentFormattingOption.FullyEncoded) in card.details.text()
    qtbot.mouseClick(card.stop_button, qtbot_left())
    qtbot.waitUntil(lambda: bool(events_of(session, BackgroundStopped)), timeout=WAIT)


def test_the_card_of_a_server_kept_for_the_person_shows_what_it_prints_now(qtbot, make_window, workdir):
    from tests.core.test_cli import TALKING

    window, session, card = served(qtbot, make_window, workdir, server=TALKING)
    card.header.setChecked(True)
    qtbot.waitUntil(lambda: "What it prints now" in card.details.text(), timeout=WAIT)
    first = card.details.text()
    qtbot.waitUntil(lambda: card.details.text() != first, timeout=WAIT)  # as it goes on printing
    later = card.details.text()
    assert "GET /page " in later and later.index("What it prints now") > later.index("<b>Result</b>")
    qtbot.mouseClick(card.stop_button, qtbot_left())
    qtbot.waitUntil(lambda: bool(events_of(session, BackgroundStopped)), timeout=WAIT)
    assert "What it prints now" not in card.details.text()  # stopped: nothing prints any more
