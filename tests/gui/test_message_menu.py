"""A chat item's right-click menu: copy the selection, a message as its Markdown, a tool call's
arguments or its whole result."""

from __future__ import annotations

import json

from core.events import ToolCall, ToolResult
from gui.qt import QApplication, QContextMenuEvent, QMenu
from gui.theme import html_colour
from gui.widgets.chat_items import SETTLE_CHARS, MessageItem
from gui.widgets.tool_card import PREVIEW_CHARS, ToolCard

REPLY = "The fix:\n\n```python\ndef parse_date(text):\n    return datetime.fromisoformat(text)\n```\n\n**Done.**\n"


def action(menu: QMenu, text: str):
    return next(a for a in menu.actions() if a.text().replace("&", "") == text)


def test_copy_message_as_markdown_gives_the_text_the_agent_wrote(qtbot):
    item = MessageItem("assistant", REPLY)
    qtbot.addWidget(item)
    item.show()

    menu = item.context_menu()
    assert not action(menu, "Copy").isEnabled()  # nothing selected yet
    action(menu, "Copy message as Markdown").trigger()
    assert QApplication.clipboard().text() == REPLY  # the fence, the ** and all

    item.body.setSelection(0, 8)
    action(item.context_menu(), "Copy").trigger()
    assert QApplication.clipboard().text() == "The fix:"


def test_a_streamed_reply_in_parts_copies_whole(qtbot):
    long_reply = "".join(f"Paragraph {i}: " + "words " * 40 + "\n\n" for i in range(3 * SETTLE_CHARS // 250))
    item = MessageItem("assistant", "")
    qtbot.addWidget(item)
    for end in range(0, len(long_reply) + 80, 80):
        item.stream_text(long_reply[:end])
    assert item.settled  # shown in several labels
    action(item.context_menu(), "Copy message as Markdown").trigger()
    assert QApplication.clipboard().text() == long_reply


def test_a_right_click_on_the_text_opens_the_messages_menu(qtbot):
    item = MessageItem("assistant", REPLY)
    qtbot.addWidget(item)
    with qtbot.waitExposed(item):
        item.show()
    where = item.body.rect().center()
    QApplication.sendEvent(item.body, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, where,
                                                        item.body.mapToGlobal(where)))
    menus = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible()]
    assert len(menus) == 1 and "Copy message as Markdown" in [a.text().replace("&", "") for a in menus[0].actions()]
    menus[0].close()


def test_a_tool_card_copies_its_arguments_and_its_whole_result(qtbot):
    card = ToolCard(ToolCall("c1", "shell_run", '{"command": "pytest -q"}'))
    qtbot.addWidget(card)
    menu = card.context_menu()
    assert not action(menu, "Copy result").isEnabled()  # still running: no result yet
    action(menu, "Copy arguments").trigger()
    assert QApplication.clipboard().text() == '{\n  "command": "pytest -q"\n}'

    output = "".join(f"tests/test_{i}.py::test_case PASSED\n" for i in range(400))
    assert len(output) > PREVIEW_CHARS  # the card shows only its start
    card.set_result(ToolResult("c1", "shell_run", True, output))
    action(card.context_menu(), "Copy result").trigger()
    assert QApplication.clipboard().text() == output


def test_an_edit_card_shows_a_diff_and_a_written_file_its_lines(qtbot):
    edit = ToolCard(ToolCall("e1", "file_edit", json.dumps(
        {"path": "calc.py", "old": "def add(a, b):\n    return a - b\n", "new": "def add(a, b):\n    return a + b\n"})))
    qtbot.addWidget(edit)
    shown = edit.details.text()
    assert "<b>calc.py</b>" in shown and "\\n" not in shown
    assert f'style="color: {html_colour("diff_remove")}">-    return a - b</span>' in shown
    assert f'style="color: {html_colour("diff_add")}">+    return a + b</span>' in shown
    assert "\n def add(a, b):" in shown  # context, uncoloured
    write = ToolCard(ToolCall("w1", "file_write", json.dumps({"path": "notes.md", "content": "# Notes\n- one\n"})))
    qtbot.addWidget(write)
    assert '"path": "notes.md"' in write.details.text() and "<b>content</b>" in write.details.text()
    assert "# Notes\n- one" in write.details.text()  # as it reads, not "# Notes\\n- one"
    write.copy_arguments()
    assert json.loads(QApplication.clipboard().text())["content"] == "# Notes\n- one\n"  # copied as sent


def test_a_failed_card_shows_why_before_its_arguments(qtbot):
    plan = "# Plan\n\n## Goal\nWrite hello.py.\n" + "".join(f"- [ ] step {n}\n" for n in range(60))
    card = ToolCard(ToolCall("p1", "plan_update", json.dumps({"content": plan})))
    qtbot.addWidget(card)
    card.set_result(ToolResult("p1", "plan_update", False, "plan_update replaces the whole file, and this text "
                                                          "drops the section(s) ## Current Status."))
    shown = card.details.text()
    # A failed card opens to show why; the 60 steps of the plan came first and pushed it out of sight.
    assert card.header.isChecked()
    assert shown.index("drops the section(s) ## Current Status") < shown.index("<div><b>Arguments</b></div>") < shown.index(
        "step 59")
    card.set_result(ToolResult("p1", "plan_update", True, "Plan updated (version 2)."))
    assert card.details.text().index("step 59") < card.details.text().index("<b>Result</b>")  # (a result: after)


def test_a_file_tools_card_opens_its_file(qtbot, tmp_path, monkeypatch):
    # To look at what the agent wrote in the person's own editor, from where the conversation shows it.
    from gui import desktop_open

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "parse.py").write_text("x = 1\n", encoding="utf-8")
    card = ToolCard(ToolCall("w1", "file_write", json.dumps({"path": "app/parse.py", "content": "x = 1\n"})),
                    workdir=lambda: tmp_path)
    qtbot.addWidget(card)
    action(card.context_menu(), "Open the file").trigger()
    assert opened == [str(tmp_path / "app" / "parse.py")]

    gone = ToolCard(ToolCall("w2", "file_edit", json.dumps({"path": "app/old.py", "old": "a", "new": "b"})),
                    workdir=lambda: tmp_path)
    qtbot.addWidget(gone)
    assert not action(gone.context_menu(), "Open the file").isEnabled()  # (deleted since)
    for other in (ToolCall("s1", "shell_run", json.dumps({"command": "ls"})),
                  ToolCall("r1", "file_read", json.dumps({"path": "offload:out-0001.txt"}))):
        card = ToolCard(other, workdir=lambda: tmp_path)
        qtbot.addWidget(card)
        assert "Open the file" not in [a.text().replace("&", "") for a in card.context_menu().actions()]


def test_in_the_window_a_written_files_card_opens_it_from_the_work_folder(qtbot, make_window, workdir, monkeypatch):
    from core.scripted import ScriptedModel, call, reply
    from core.session import SessionConfig
    from gui import desktop_open

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    window = make_window(ScriptedModel([reply("", call("file_write", "w1", path="notes.md", content="n\n")),
                                        reply("", call("task_done", summary="ok"))]))
    session = window.start_session(SessionConfig(task="Write notes", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=10_000)
    action(window.chat.cards["w1"].context_menu(), "Open the file").trigger()
    assert opened == [str(workdir / "notes.md")]
