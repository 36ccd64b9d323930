"""Showing the agent a picture from the window: a screenshot pasted, or an image file dropped, on
the message box waits under it, small, and goes with the message; the conversation shows it."""

from __future__ import annotations

import os

from core.events import UserMessage
from core.pictures import PICTURES_KEY
from core.scripted import ScriptedModel, call, reply
from core.session import SessionConfig
from gui.qt import QApplication, QColor, QImage, QMimeData, Qt, QToolButton, QUrl
from gui.widgets.pictures import LONGEST_SIDE, PicturesShown, picture_file
from tests.core.helpers import events_of

WAIT = 10_000


def red(width: int = 40, height: int = 30) -> QImage:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    return image


def pasted(image: QImage) -> QMimeData:
    data = QMimeData()
    data.setImageData(image)
    return data


def ended_session(qtbot, window, workdir, model: str):
    session = window.start_session(SessionConfig(task="Fix the page", model=model, workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    return session


def test_a_screenshot_pasted_waits_under_the_box_and_goes_with_the_message(qtbot, make_window, workdir):
    model = ScriptedModel([], default=reply("", call("task_done", summary="ok")))
    window = make_window(model)
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    qtbot.keyClicks(window.composer, "It looks like this:")
    window.composer.insertFromMimeData(pasted(red()))  # what Ctrl+V comes to

    assert window.pictures.waiting(session.id) == ("pictures/0001.png",)
    assert QImage(str(session.dir / "pictures" / "0001.png")).size() == red().size()
    assert window.pictures.isVisible() and not window.pictures.note.isVisible()  # (this model sees pictures)
    assert window.composer.toPlainText() == "It looks like this:"  # nothing written for it

    qtbot.keyClick(window.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(events_of(session, UserMessage)) == 1 and session.state.ended, timeout=WAIT)
    assert events_of(session, UserMessage)[0].pictures == ("pictures/0001.png",)
    assert [m[PICTURES_KEY] for m in model.requests[-1].messages if PICTURES_KEY in m] == [["pictures/0001.png"]]
    assert not window.pictures.isVisible() and window.pictures.waiting(session.id) == ()
    shown = window.chat.findChildren(PicturesShown)
    assert len(shown) == 1 and [b.text() for b in shown[0].findChildren(QToolButton)] == ["0001.png"]
    message = shown[0].parent()
    message.copy_markdown()  # (its right-click: Copy message as Markdown)
    assert QApplication.clipboard().text() == (f"It looks like this:\n\n![0001.png]"
                                               f"({(session.dir / 'pictures' / '0001.png').as_uri()})")


def test_a_picture_alone_is_a_message_and_one_taken_off_is_not_sent(qtbot, make_window, workdir):
    model = ScriptedModel([], default=reply("", call("task_done", summary="ok")))
    window = make_window(model)
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    window.composer.insertFromMimeData(pasted(red()))
    window.composer.insertFromMimeData(pasted(red(20, 20)))
    first = window.pictures.findChildren(QToolButton)[0]
    assert first.text() == "✕ 0001.png"
    first.click()  # taken off: it was never sent, so its file goes too
    assert window.pictures.waiting(session.id) == ("pictures/0002.png",)
    assert not (session.dir / "pictures" / "0001.png").exists()

    window.send_button.click()  # (no words: the picture is the message)
    qtbot.waitUntil(lambda: len(events_of(session, UserMessage)) == 1 and session.state.ended, timeout=WAIT)
    assert events_of(session, UserMessage)[0].pictures == ("pictures/0002.png",)


def test_a_model_that_does_not_see_pictures_is_said_so_under_the_box(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = ended_session(qtbot, window, workdir, "deepseek/deepseek-coder")
    window.composer.insertFromMimeData(pasted(red()))
    assert window.pictures.note.isVisible()
    assert window.pictures.note.text() == (
        "deepseek/deepseek-coder does not see pictures (by litellm's list of models, its server, or the pictures it "
        "refused): the agent reads only that one is there.")
    # Each session has its own: another one shown, none wait under the box, and the list marks the
    # one whose picture waits.
    other = ended_session(qtbot, window, workdir, "scripted")
    assert window.session is other and not window.pictures.isVisible()
    rows = {window.sessions.list.item(i).data(Qt.ItemDataRole.UserRole): window.sessions.list.item(i).text()
            for i in range(window.sessions.list.count())}
    assert "✎ draft" in rows[session.id] and "draft" not in rows[other.id]
    window.show_session(session.id)
    qtbot.waitUntil(lambda: window.session is session, timeout=WAIT)
    assert window.pictures.isVisible() and window.pictures.waiting(session.id) == ("pictures/0001.png",)


def test_an_image_file_dropped_is_a_picture_and_another_file_its_path(qtbot, make_window, workdir, tmp_path):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    red().save(str(tmp_path / "broken page.png"))
    (workdir / "notes.txt").write_text("n\n", encoding="utf-8")
    dropped = QMimeData()
    dropped.setUrls([QUrl.fromLocalFile(str(tmp_path / "broken page.png")), QUrl.fromLocalFile(str(workdir / "notes.txt"))])
    window.composer.insertFromMimeData(dropped)
    assert window.pictures.waiting(session.id) == ("pictures/0001.png",)
    assert window.composer.toPlainText() == "`notes.txt`"


def test_a_bitmap_a_screenshot_tool_saved_is_taken_and_kept_as_png(qtbot, make_window, workdir, tmp_path):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    red().save(str(tmp_path / "snip.bmp"))
    dropped = QMimeData()
    dropped.setUrls([QUrl.fromLocalFile(str(tmp_path / "snip.bmp"))])
    window.composer.insertFromMimeData(dropped)
    assert window.pictures.waiting(session.id) == ("pictures/0001.png",)  # (providers take no BMP)
    assert window.composer.toPlainText() == ""


def test_a_file_that_only_looks_like_a_picture_is_said_so(qtbot, make_window, workdir, tmp_path):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    (tmp_path / "fake.png").write_text("not a picture", encoding="utf-8")
    dropped = QMimeData()
    dropped.setUrls([QUrl.fromLocalFile(str(tmp_path / "fake.png"))])
    window.composer.insertFromMimeData(dropped)
    assert window.pictures.waiting(session.id) == ()
    assert window.statusBar().currentMessage() == "Picture not added: it is not a picture Tripane can read."


def test_a_large_picture_is_scaled_to_what_providers_read_and_a_photo_kept_as_jpeg(qtbot):
    data, suffix = picture_file(red(4000, 3000))
    kept = QImage.fromData(data)
    assert suffix == ".png" and (kept.width(), kept.height()) == (LONGEST_SIDE, LONGEST_SIDE * 3 // 4)

    raw = os.urandom(1500 * 1500 * 4)  # (random colours: their PNG is several MB, as a photo's is)
    data, suffix = picture_file(QImage(raw, 1500, 1500, 1500 * 4, QImage.Format.Format_RGB32).copy())
    assert suffix == ".jpg" and QImage.fromData(data).width() == 1500


def test_a_picture_the_agent_opened_is_shown_on_its_calls_card(qtbot, make_window, workdir):
    red().save(str(workdir / "chart.png"))
    window = make_window(ScriptedModel([reply("", call("file_read", path="chart.png"))],
                                       default=reply("", call("task_done", summary="ok"))))
    session = window.start_session(SessionConfig(task="Check the chart", model="openai/gpt-4o-mini", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    card = next(card for card in window.chat.cards.values() if card.call.name == "file_read")
    shown = card.findChildren(PicturesShown)
    assert len(shown) == 1 and [b.text() for b in shown[0].findChildren(QToolButton)] == ["0001.png"]
    assert QImage(str(session.dir / "pictures" / "0001.png")).size() == red().size()


def test_pictures_waiting_when_tripane_closed_wait_again_when_it_opens(qtbot, make_window, workdir):
    model = ScriptedModel([], default=reply("", call("task_done", summary="ok")))
    window = make_window(model)
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    window.composer.insertFromMimeData(pasted(red()))
    window.send_button.click()  # this one is sent…
    qtbot.waitUntil(lambda: len(events_of(session, UserMessage)) == 1 and session.state.ended, timeout=WAIT)
    window.composer.insertFromMimeData(pasted(red(10, 10)))  # …this one waits, as Tripane closes (or crashes)
    window.close_now()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)

    reopened = make_window(model)
    reopened.show_session(session.id)
    qtbot.waitUntil(lambda: reopened.session is not None and reopened.session.id == session.id, timeout=WAIT)
    assert reopened.pictures.waiting(session.id) == ("pictures/0002.png",)
    assert reopened.pictures.isVisible()


def test_a_screenshot_pasted_in_a_new_sessions_task_goes_with_the_task(qtbot, make_window, workdir):
    from gui.dialogs.new_session import NewSessionDialog
    from gui.settings import Preferences

    dialog = NewSessionDialog(Preferences(model="openai/gpt-4o-mini", workdir=str(workdir)))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.task, "The button overlaps the text, as here")
    dialog.task.insertFromMimeData(pasted(red()))
    dialog.task.insertFromMimeData(pasted(red(8, 8)))
    assert dialog.task.toPlainText() == "The button overlaps the text, as here"
    buttons = dialog.pictures.findChildren(QToolButton)
    assert dialog.pictures.isVisible() and [b.text() for b in buttons] == ["✕ picture 1", "✕ picture 2"]
    buttons[1].click()  # taken off
    dialog._accept()
    assert dialog.result() == dialog.DialogCode.Accepted.value, dialog.error.text()
    assert len(dialog.config.pictures) == 1 and QImage.fromData(dialog.config.pictures[0][0]).size() == red().size()

    model = ScriptedModel([], default=reply("", call("task_done", summary="ok")))
    window = make_window(model)
    session = window.start_session(dialog.config)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    assert [m[PICTURES_KEY] for m in model.requests[0].messages if PICTURES_KEY in m] == [["pictures/0001.png"]]
    shown = window.chat.findChildren(PicturesShown)  # under the task, at the top of the conversation
    assert len(shown) == 1 and [b.text() for b in shown[0].findChildren(QToolButton)] == ["0001.png"]
    assert window.pictures.waiting(session.id) == ()  # (the task's picture is not waiting to be sent again)


def test_a_picture_can_be_chosen_from_the_disk_as_well(qtbot, make_window, workdir):
    # For one who does not drag and drop (the keyboard alone), and to find that pictures go at all.
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    assert not window.actions_by_name["picture"].isEnabled()  # (no session shown: none to show it to)
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    assert window.actions_by_name["picture"].isEnabled()
    red().save(str(workdir / "page.png"))
    window.sessions.search.setFocus()  # (where the focus went back to as the file dialog closed, under openbox)
    qtbot.waitUntil(window.sessions.search.hasFocus, timeout=WAIT)
    dialog = window.choose_pictures()
    assert dialog.directory().absolutePath() == str(workdir)
    dialog.filesSelected.emit([str(workdir / "page.png")])  # (what choosing it and pressing Open does)
    assert window.pictures.waiting(session.id) == ("pictures/0001.png",)
    dialog.close()
    qtbot.waitUntil(window.composer.hasFocus, timeout=WAIT)  # to say what it shows


def test_a_picture_dropped_anywhere_on_the_window_goes_with_the_message(qtbot, make_window, workdir):
    # On the conversation, say: the message box is a small target to drop a screenshot on.
    from tests.gui.test_supporting_screens import drag

    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    red().save(str(workdir / "page.png"))
    assert not drag(window, "enter", workdir / "page.png")  # no session shown: none to show it to
    session = ended_session(qtbot, window, workdir, "openai/gpt-4o-mini")
    assert drag(window, "enter", workdir / "page.png")
    drag(window, "drop", workdir / "page.png")
    assert window.pictures.waiting(session.id) == ("pictures/0001.png",)


def test_a_screenshot_pasted_in_the_answer_to_the_agents_question_goes_with_it(qtbot, make_window, workdir):
    from core.events import HumanAnswer, ToolResult
    from tests.gui.test_window import wait_for_dialog

    model = ScriptedModel([reply("", call("human_ask", question="What does the page show now?")),
                           reply("", call("task_done", summary="ok"))])
    window = make_window(model)
    session = window.start_session(SessionConfig(task="Fix the page", model="openai/gpt-4o-mini", workdir=workdir))
    dialog = wait_for_dialog(qtbot, window, "ask_user")
    qtbot.keyClicks(dialog.text, "Still broken, see")
    dialog.text.insertFromMimeData(pasted(red()))  # what Ctrl+V in the answer comes to
    assert dialog.pictures.isVisible() and dialog.text.toPlainText() == "Still broken, see"
    dialog.choose("answer")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    assert events_of(session, HumanAnswer)[0].pictures == ("pictures/0001.png",)
    assert [r.pictures for r in events_of(session, ToolResult) if r.name == "human_ask"] == [("pictures/0001.png",)]
    card = next(card for card in window.chat.cards.values() if card.call.name == "human_ask")
    assert [b.text() for b in card.findChildren(PicturesShown)[0].findChildren(QToolButton)] == ["0001.png"]


def test_a_file_from_outside_the_work_folder_pasted_in_an_answer_goes_with_its_text(qtbot, make_window, workdir,
                                                                                   tmp_path):
    # "Where are the figures?" answered with the workbook from Downloads: its path alone, which the
    # agent could not read (the answer box did not know the work folder).
    from core.events import HumanAnswer
    from tests.gui.test_window import wait_for_dialog
    from tests.support.office import xlsx_bytes

    model = ScriptedModel([reply("", call("human_ask", question="Where are the revenue figures?")),
                           reply("", call("task_done", summary="ok"))])
    window = make_window(model)
    session = window.start_session(SessionConfig(task="Check the figures", model="scripted", workdir=workdir))
    dialog = wait_for_dialog(qtbot, window, "ask_user")
    figures = tmp_path / "Downloads" / "figures.xlsx"
    figures.parent.mkdir()
    figures.write_bytes(xlsx_bytes({"Q3": [["Region", "Revenue"], ["EU", 1200]]}))
    (workdir / "notes.md").write_text("n\n", encoding="utf-8")
    (tmp_path / "Downloads" / "core.dump").write_bytes(b"\x7fELF\x00\x00\x01")
    qtbot.keyClicks(dialog.text, "Here: ")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(figures)), QUrl.fromLocalFile(str(workdir / "notes.md"))])
    dialog.text.insertFromMimeData(files)
    assert dialog.text.toPlainText() == (f"Here: `{figures}`:\n```\n[sheet 1 of 1: Q3, 2 rows × 2 columns]\n"
                                         "Region,Revenue\nEU,1200\n```\n `notes.md`")
    # One that cannot go as text goes as a copy kept with the session, which the agent reads.
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / "Downloads" / "core.dump"))])
    dialog.text.insertFromMimeData(files)
    assert not dialog.error.isVisible()
    assert (session.dir / "offload" / "given" / "core.dump").read_bytes() == b"\x7fELF\x00\x00\x01"
    dialog.choose("answer")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    answered = events_of(session, HumanAnswer)[0]
    assert "EU,1200" in answered.choice + answered.text
    assert "(copied for the agent as `offload:given/core.dump`)" in answered.choice + answered.text


def test_a_picture_the_models_provider_refused_is_marked_not_shown(qtbot, make_window, workdir):
    # A text-only model on vLLM, which says nothing of pictures: the picture is tried, refused, and
    # the request asked again without it; the conversation says the model was not shown it.
    from core.llm import LiteLLMClient
    from tests.core.test_pictures import png
    from tests.support.openai_server import Failure, ScriptedServer, Turn, tool

    def answer(body: dict):
        if any(isinstance(message.get("content"), list) for message in body["messages"]):
            return Failure(400, "Qwen/Qwen2.5-7B-Instruct is not a multimodal model")
        return Turn(tool_calls=(tool("task_done", summary="asked what it shows"),))

    with ScriptedServer(answer) as server:
        window = make_window(LiteLLMClient(retries=0))
        session = window.start_session(SessionConfig(task="Fix the page", model="openai/qwen2.5-7b", workdir=workdir,
                                                     api_base=server.url, pictures=((png(), ".png"),)))
        qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    assert session.state.status == "ended:done"
    shown = window.chat.findChildren(PicturesShown)[0].findChildren(QToolButton)
    assert [button.text() for button in shown] == ["0001.png · not shown"]
    assert shown[0].toolTip().startswith("The model's provider refused this picture")
    # The next one pasted is said not to be seen, before it is sent.
    window.composer.insertFromMimeData(pasted(red()))
    assert window.pictures.note.isVisible() and "or the pictures it refused" in window.pictures.note.text()
    # Another model, which sees pictures: the conversation no longer says this one is not shown.
    import asyncio

    asyncio.ensure_future(session.change_model("openai/gpt-4o-mini"))
    qtbot.waitUntil(lambda: shown[0].text() == "0001.png", timeout=WAIT)
    assert shown[0].toolTip() == "Open it full size"
