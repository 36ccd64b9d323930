"""An address the agent writes bare ("served at http://localhost:8766/") is a link to click, in
the conversation and the panes; file names and versions are not taken for web sites."""

from __future__ import annotations

from gui.markdown import to_html
from gui.widgets.chat_items import MessageItem


def test_a_bare_address_is_a_link():
    html = to_html("The site is served at http://localhost:8766/ — have a look (or https://example.org/docs).")
    assert '<a href="http://localhost:8766/">http://localhost:8766/</a>' in html
    assert '<a href="https://example.org/docs">https://example.org/docs</a>)' in html


def test_file_names_versions_and_code_are_not_links():
    html = to_html("Edited app.py and setup.cfg for v1.2 on www.example.com; see `http://localhost:1/in-code`.\n\n"
                   "```\ncurl http://localhost:8766/\n```")
    assert "<a " not in html
    assert "<a " not in to_html("javascript:alert(1) file:///etc/passwd")


def test_the_agents_message_shows_it_as_a_link_that_opens(qtbot):
    item = MessageItem("assistant", "Served at http://127.0.0.1:3000/api?x=1&y=2.")
    qtbot.addWidget(item)
    assert 'href="http://127.0.0.1:3000/api?x=1&amp;y=2"' in item.body.text()
    assert item.body.openExternalLinks()  # (in the person's browser)


def test_without_linkify_it_installed_addresses_stay_text_and_the_rest_renders(monkeypatch, caplog):
    # An install from before it was a dependency (a `git pull` without `pip install -e .`).
    import markdown_it.main

    from gui import markdown

    monkeypatch.setattr(markdown_it.main, "linkify_it", None)
    markdown._parser.cache_clear()
    try:
        assert to_html("see http://localhost:8766/ **now**") == "<p>see http://localhost:8766/ <strong>now</strong></p>\n"
        assert "linkify-it-py is not installed" in caplog.text
    finally:
        markdown._parser.cache_clear()


def test_the_summary_in_the_line_that_ends_a_run_links_its_address(qtbot, make_window, workdir, monkeypatch):
    from core.scripted import ScriptedModel, call, reply
    from core.session import SessionConfig
    from gui import desktop_open
    from gui.qt import QLabel
    from gui.widgets import chat

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toString()) or True)
    window = make_window(ScriptedModel([reply("", call("task_done", summary="Served at http://localhost:8766/ <ok>"))]))
    session = window.start_session(SessionConfig(task="Serve", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=10_000)
    ended = next(item for item in window.chat.items() if isinstance(item, QLabel) and "Ended:" in item.text())
    assert 'Served at <a href="http://localhost:8766/">http://localhost:8766/</a> &lt;ok&gt;' in ended.text()
    changes = []
    window.chat.changes_requested.connect(lambda: changes.append(True))
    ended.linkActivated.emit("http://localhost:8766/")
    assert opened == ["http://localhost:8766/"] and changes == []
    ended.linkActivated.emit(chat.CHANGES_LINK)  # its other link still shows what changed
    assert changes == [True] and opened == ["http://localhost:8766/"]


def test_a_link_in_a_helpers_answer_or_the_agents_question_opens_in_the_browser(qtbot, monkeypatch):
    # Left to the view, a click made the web page its document: it found none, and the answer went blank.
    from gui import desktop_open
    from gui.dialogs.ask_helper import AskHelperDialog
    from gui.dialogs.question import DetailsView
    from gui.qt import QUrl

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toString()) or True)
    dialog = AskHelperDialog("A session")
    qtbot.addWidget(dialog)
    question = DetailsView(to_html("Is https://example.org/api the right one?"))
    qtbot.addWidget(question)
    for view in (dialog.answer, question):
        view.setHtml(to_html("The docs: https://example.org/api"))
        view.anchorClicked.emit(QUrl("https://example.org/api"))
        view.anchorClicked.emit(QUrl("file:///etc/passwd"))  # (not a page: nothing opens)
        assert not view.openLinks() and view.toPlainText().strip() == "The docs: https://example.org/api"
    assert opened == ["https://example.org/api"] * 2


def test_an_address_a_command_printed_is_a_link_on_its_card(qtbot, monkeypatch):
    # `npm run dev` prints where it serves ("Local: http://localhost:5173/"): the person clicks it there.
    from core.events import ToolCall, ToolResult
    from gui import desktop_open
    from gui.widgets.tool_card import ToolCard

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toString()) or True)
    card = ToolCard(ToolCall("s1", "shell_run", '{"command": "npm run dev > /dev/null & sleep 2; npm run dev"}'))
    qtbot.addWidget(card)
    card.add_output("  VITE ready\n  ➜  Local:   http://localhost:5173/\n")
    assert '<a href="http://localhost:5173/">http://localhost:5173/</a>' in card.details.text()
    card.set_result(ToolResult("s1", "shell_run", True, "Local: http://localhost:5173/ <dev>\n[exit code 0]"))
    assert 'Local: <a href="http://localhost:5173/">http://localhost:5173/</a> &lt;dev&gt;' in card.details.text()
    card.details.linkActivated.emit("http://localhost:5173/")
    assert opened == ["http://localhost:5173/"]
