"""The message box: Up brings back the messages sent to the session, as a shell its commands."""

from __future__ import annotations

from core.dropped_files import (
    DROPPED_PDF_PAGES_MAX,
    DROPPED_SCAN_PAGES_MAX,
    DROPPED_TEXT_MAX,
)
from core.events import UserMessage
from core.scripted import ScriptedModel, call, reply
from core.session import SessionConfig
from gui.qt import QEvent, QMimeData, QObject, Qt, QUrl
from gui.widgets.composer import Composer
from tests.core.helpers import events_of
from tests.support.office import docx_bytes
from tests.support.pdfs import write_pdf

WAIT = 10_000


def test_up_and_down_walk_the_messages_sent_and_leave_the_persons_own_text_alone(qtbot):
    box = Composer()
    qtbot.addWidget(box)
    box.sent = lambda: ["Check the dates first", "Use PostgreSQL\nnot SQLite"]
    box.show()
    box.setFocus()

    def key(name: Qt.Key) -> str:
        qtbot.keyClick(box, name)
        return box.toPlainText()

    assert key(Qt.Key.Key_Up) == "Use PostgreSQL\nnot SQLite" and box.textCursor().atEnd()
    assert key(Qt.Key.Key_Up) == "Use PostgreSQL\nnot SQLite" and box.textCursor().blockNumber() == 0  # up a line
    assert key(Qt.Key.Key_Up) == "Check the dates first"
    assert key(Qt.Key.Key_Up) == "Check the dates first"  # nothing older
    assert key(Qt.Key.Key_Down) == "Use PostgreSQL\nnot SQLite"
    assert key(Qt.Key.Key_Down) == ""  # past the newest: the empty box again
    assert key(Qt.Key.Key_Down) == ""

    qtbot.keyClick(box, Qt.Key.Key_Up)
    qtbot.keyClicks(box, ", version 16")  # mended: the person's own text now
    assert key(Qt.Key.Key_Up) == "Use PostgreSQL\nnot SQLite, version 16"
    assert box.textCursor().blockNumber() == 0  # the cursor moved; nothing was replaced
    box.clear()
    qtbot.keyClicks(box, "half a thought")
    assert key(Qt.Key.Key_Up) == "half a thought"


def test_the_window_recalls_the_messages_sent_to_the_session_shown(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = window.start_session(SessionConfig(task="Tidy the notes", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    window.composer.setFocus()
    qtbot.keyClick(window.composer, Qt.Key.Key_Up)
    assert window.composer.toPlainText() == ""  # the task is not a message sent
    qtbot.keyClicks(window.composer, "Sort them by date too")
    qtbot.keyClick(window.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.composer.toPlainText() == "" and session.state.ended
                    and "Sort them by date too" in window._messages_sent(), timeout=WAIT)
    qtbot.keyClick(window.composer, Qt.Key.Key_Up)
    assert window.composer.toPlainText() == "Sort them by date too"


def test_up_brings_back_a_long_message_whole_not_as_the_conversation_keeps_it(qtbot, make_window, workdir):
    """A pasted log the conversation keeps as its start and end: Up gives the person what they sent."""
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = window.start_session(SessionConfig(task="Read the log", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    pasted = "".join(f"line {n}: worker 3 retried the upload\n" for n in range(2000)) + "Why does it retry?"
    window.composer.setPlainText(pasted)
    window.send_message()
    def sent() -> list[UserMessage]:
        return [r.event for r in session.records if isinstance(r.event, UserMessage)]
    qtbot.waitUntil(lambda: bool(sent()) and session.state.ended and not session.running, timeout=WAIT)
    kept = sent()[-1]
    assert kept.offload_path and len(kept.text) < len(pasted)
    window.composer.setFocus()
    qtbot.keyClick(window.composer, Qt.Key.Key_Up)
    assert window.composer.toPlainText() == pasted


def test_files_dropped_or_pasted_are_written_as_paths_the_agents_tools_take(qtbot, tmp_path):
    work = tmp_path / "project"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
    box = Composer()
    qtbot.addWidget(box)
    box.workdir = lambda: work
    qtbot.keyClicks(box, "Look at ")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(work / "src" / "app.py")), QUrl.fromLocalFile(str(work / "src"))])
    assert box.canInsertFromMimeData(files)
    box.insertFromMimeData(files)  # what a drop and a paste both come to
    assert box.toPlainText() == "Look at `src/app.py` `src`"

    text = QMimeData()
    text.setText(" and its tests")
    box.insertFromMimeData(text)  # text is text
    assert box.toPlainText().endswith("`src` and its tests")


def test_a_file_dropped_from_outside_the_work_folder_goes_with_its_text(qtbot, tmp_path):
    # Its path alone: the agent, which reads nothing outside the work folder, was refused the log.
    work = tmp_path / "project"
    work.mkdir()
    log = tmp_path / "Downloads" / "crash.log"
    log.parent.mkdir()
    log.write_text("Traceback (most recent call last):\n  ```weird```\nValueError: bad\n", encoding="utf-8")
    box = Composer()
    qtbot.addWidget(box)
    box.workdir = lambda: work
    said = []
    box.told.connect(said.append)
    qtbot.keyClicks(box, "Why does it crash? ")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(log))])
    box.insertFromMimeData(files)
    assert box.toPlainText() == (f"Why does it crash? `{log}`:\n````\nTraceback (most recent call last):\n  ```weird```\n"
                                 "ValueError: bad\n````\n")  # (its own backticks stay inside the fence)
    assert said == []

    (tmp_path / "core.dump").write_bytes(b"\x7fELF\x00\x00\x01")
    (tmp_path / "huge.log").write_bytes(b"x" * (DROPPED_TEXT_MAX + 1))
    box.clear()
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / name)) for name in ("core.dump", "huge.log", "gone.txt")])
    box.insertFromMimeData(files)
    assert box.toPlainText() == " ".join(f"`{tmp_path / name}`" for name in ("core.dump", "huge.log", "gone.txt"))
    assert said == ["Only the path went in: core.dump is not text: copy it into the work folder if the "
                    f"agent should have it; huge.log is {DROPPED_TEXT_MAX + 1:,} bytes, more than a message carries "
                    f"({DROPPED_TEXT_MAX:,}): copy it into the work folder, where the agent can read it; gone.txt is "
                    "not a file."]


def test_a_pdf_or_word_file_dropped_from_outside_the_work_folder_goes_with_its_text(qtbot, tmp_path):
    # A paper from Downloads went by its path, which the agent could not read (and as a binary file).
    work = tmp_path / "project"
    work.mkdir()
    paper = write_pdf(tmp_path / "paper.pdf", [["Abstract", "Prefix caching cut the cost by 31x."], None])
    box = Composer()
    qtbot.addWidget(box)
    box.workdir = lambda: work
    said = []
    box.told.connect(said.append)
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(paper))])
    box.insertFromMimeData(files)
    assert box.toPlainText() == (f"`{paper}`:\n```\n[page 1 of 2]\nAbstract\nPrefix caching cut the cost by 31x.\n\n"
                                 "[page 2 of 2: no text, a picture only (a scan, a figure)]\n```\n")
    assert said == []

    report = tmp_path / "report.docx"
    report.write_bytes(docx_bytes([("1", "Findings"), "The cache works."]))
    box.clear()
    files.setUrls([QUrl.fromLocalFile(str(report))])
    box.insertFromMimeData(files)
    assert box.toPlainText() == f"`{report}`:\n```\n# Findings\nThe cache works.\n```\n"

    # An old Word file, however large, is said to be one (not "more than a message carries").
    (tmp_path / "minutes.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(2_000_000))
    box.clear()
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / "minutes.doc"))])
    box.insertFromMimeData(files)
    assert said[-1] == ("Only the path went in: minutes.doc is not text. It is an Office file (the format before "
                        "2007) or one locked with a password: saved as .docx, .xlsx or .pptx without a password (or "
                        "as PDF), it can be read.")
    said.clear()

    # A scan has no text: its pages go as pictures, as a screenshot pasted does (a scanned letter).
    write_pdf(tmp_path / "scan.pdf", [None, None])
    write_pdf(tmp_path / "book.pdf", [["A page."]] * (DROPPED_PDF_PAGES_MAX + 1))
    write_pdf(tmp_path / "archive.pdf", [None] * (DROPPED_SCAN_PAGES_MAX + 1))
    box.clear()
    given = []
    box.pictures_given.connect(given.append)
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / name)) for name in ("scan.pdf", "book.pdf", "archive.pdf")])
    box.insertFromMimeData(files)
    assert box.toPlainText() == f"`{tmp_path / 'scan.pdf'}` `{tmp_path / 'book.pdf'}` `{tmp_path / 'archive.pdf'}`"
    assert [(image.width(), image.height()) for image in given[0]] == [(1109, 1568)] * 2  # (A4, fitted to 1,568)
    assert said == ["scan.pdf is a scan with no text: its 2 pages went as pictures. Only the path went in: book.pdf is "
                    f"a PDF of {DROPPED_PDF_PAGES_MAX + 1} pages, more than a message carries ({DROPPED_PDF_PAGES_MAX}): "
                    "copy it into the work folder, where the agent reads it page by page; archive.pdf is a scan of "
                    f"{DROPPED_SCAN_PAGES_MAX + 1} pages, no text and more pages than a message carries as pictures "
                    f"({DROPPED_SCAN_PAGES_MAX}): copy it into the work folder, where the agent can see its pages one "
                    "by one."]


def linux_editing_keys(base):
    """A text field's event() claiming Ctrl+E and Ctrl+K as Linux's key bindings make every Qt
    text field do ("end of line", "delete to the end of the line"); the tests' offscreen platform
    has Windows' bindings, which claim neither."""
    from gui.qt import QEvent

    def event(self, event):
        if (event.type() == QEvent.Type.ShortcutOverride and event.modifiers() == Qt.KeyboardModifier.ControlModifier
                and event.key() in (Qt.Key.Key_E, Qt.Key.Key_K)):
            event.accept()
            return True
        return base(self, event)
    return event


def test_the_windows_shortcuts_win_over_a_text_fields_editing_keys(qtbot, make_window, workdir, monkeypatch):
    from gui.qt import QLineEdit, QPlainTextEdit

    monkeypatch.setattr(QPlainTextEdit, "event", linux_editing_keys(QPlainTextEdit.event))
    monkeypatch.setattr(QLineEdit, "event", linux_editing_keys(QLineEdit.event))
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = window.start_session(SessionConfig(task="Tidy up", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=10_000)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)

    composer = window.composer
    composer.setPlainText("Check the tests, then the docs")
    composer.setFocus()
    qtbot.keyClick(composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)  # Find a session
    assert window.sessions.search.hasFocus()
    assert composer.toPlainText() == "Check the tests, then the docs"
    qtbot.keyClick(window.sessions.search, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)  # Edit plan
    assert window.panes["task_plan.md"].editing


def test_a_long_paste_sent_is_said_to_be_kept_in_a_file_the_agent_reads(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = window.start_session(SessionConfig(task="Tidy up", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=10_000)
    log = "".join(f"line {i}: connection reset\n" for i in range(2_000))
    window.composer.setPlainText(f"Here is the log:\n{log}What broke?")
    window.send_message()
    qtbot.waitUntil(lambda: "Your message is long (" in window.statusBar().currentMessage(), timeout=10_000)
    assert "the agent reads its start and end, and the rest from a file" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: (session.dir / "offload" / "message-0001.txt").exists(), timeout=10_000)


def test_a_file_from_elsewhere_that_cannot_go_as_text_goes_as_a_copy_the_agent_reads(qtbot, make_window, workdir,
                                                                                     tmp_path, monkeypatch):
    # A customer's support bundle dragged from Downloads went by its path alone, "copy it into the
    # work folder": the agent reads nothing outside it.
    import zipfile

    from core import given_files
    from core.events import ToolResult

    model = ScriptedModel([reply("", call("task_done", summary="ok")),
                           reply("", call("file_read", path="offload:given/bundle.zip/logs/app.log")),
                           reply("", call("task_done", summary="read it"))])
    window = make_window(model)
    session = window.start_session(SessionConfig(task="Tidy up", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=10_000)
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    with zipfile.ZipFile(downloads / "bundle.zip", "w") as bundle:
        bundle.writestr("logs/app.log", "10:07 ERROR pool exhausted\n")
    (downloads / "core.dump").write_bytes(b"\x7fELF\x00\x00\x01")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(downloads / "bundle.zip")), QUrl.fromLocalFile(str(downloads / "core.dump"))])
    window.composer.insertFromMimeData(files)
    assert window.composer.toPlainText() == (
        f"`{downloads / 'bundle.zip'}` (copied for the agent as `offload:given/bundle.zip`) "
        f"`{downloads / 'core.dump'}` (copied for the agent as `offload:given/core.dump`)")
    assert window.statusBar().currentMessage() == (
        "bundle.zip went as a copy kept with the session, which the agent reads as offload:given/bundle.zip; "
        "core.dump went as a copy kept with the session, which the agent reads as offload:given/core.dump.")
    given = session.dir / "offload" / "given"
    assert (given / "bundle.zip").read_bytes() == (downloads / "bundle.zip").read_bytes()
    window.send_message()
    qtbot.waitUntil(lambda: len(events_of(session, ToolResult)) == 3, timeout=10_000)
    assert "10:07 ERROR pool exhausted" in events_of(session, ToolResult)[1].content
    # Another bundle of the same name (from another machine) is kept beside it; one too large for a
    # copy goes by its path, said.
    (tmp_path / "bundle.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / "bundle.zip"))])
    window.composer.insertFromMimeData(files)
    assert window.composer.toPlainText().endswith("(copied for the agent as `offload:given/bundle-2.zip`)")
    monkeypatch.setattr(given_files, "GIVEN_MAX_BYTES", 10)
    files.setUrls([QUrl.fromLocalFile(str(downloads / "bundle.zip"))])
    window.composer.insertFromMimeData(files)
    assert window.statusBar().currentMessage().startswith(
        "Only the path went in: bundle.zip is 1") and "more than Tripane copies for the agent" in \
        window.statusBar().currentMessage()


def test_a_file_dropped_on_the_task_before_the_folder_is_chosen_goes_as_that_folder_needs(qtbot, make_window,
                                                                                            workdir, tmp_path):
    # Dropped while the New session showed the home folder, a spec in ~/Downloads went as
    # `Downloads/spec.md`; the project's folder chosen after, the agent could not read it.
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    dialog = window.new_session()
    home = tmp_path / "home"
    (home / "Downloads").mkdir(parents=True)
    spec = home / "Downloads" / "spec.md"
    spec.write_text("The CSV has a header row.\n", encoding="utf-8")
    (workdir / "src").mkdir()
    (workdir / "src" / "main.py").write_text("x = 1\n", encoding="utf-8")
    bundle = home / "Downloads" / "bundle.zip"  # (a customer's support bundle: no text to carry)
    bundle.write_bytes(b"PK\x05\x06" + bytes(18))
    files = QMimeData()
    dialog.workdir.setText(str(home))
    files.setUrls([QUrl.fromLocalFile(str(spec)), QUrl.fromLocalFile(str(bundle))])
    dialog.task.insertFromMimeData(files)
    dialog.workdir.setText(str(workdir / "src"))
    files.setUrls([QUrl.fromLocalFile(str(workdir / "src" / "main.py"))])
    dialog.task.insertFromMimeData(files)
    assert dialog.task.toPlainText() == "`Downloads/spec.md` `Downloads/bundle.zip``main.py`"
    dialog.workdir.setText(str(workdir))  # (the project's top, after all)
    dialog._accept()
    dialog._accept()  # (Start again, after a refusal, say: the bundle is given once)
    assert dialog.config.task == (f"`{spec}`:\n```\nThe CSV has a header row.\n```\n `{bundle}` (copied for the agent as "
                                  "`offload:given/bundle.zip`)`src/main.py`")
    assert dialog.config.given == ((str(bundle), "bundle.zip"),)


def test_a_spec_dropped_on_a_new_sessions_task_from_another_folder_goes_with_its_text(qtbot, make_window, workdir,
                                                                                       tmp_path):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    dialog = window.new_session()
    dialog.workdir.setText(str(workdir))
    spec = tmp_path / "elsewhere" / "spec.md"
    spec.parent.mkdir()
    spec.write_text("# Export\n\nThe CSV has a header row.\n", encoding="utf-8")
    (workdir / "README.md").write_text("r\n", encoding="utf-8")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(spec)), QUrl.fromLocalFile(str(workdir / "README.md"))])
    dialog.task.insertFromMimeData(files)
    assert dialog.task.toPlainText() == f"`{spec}`:\n```\n# Export\n\nThe CSV has a header row.\n```\n `README.md`"
    # A file that cannot go as text goes as a copy, made with the session: not said in the red line.
    (tmp_path / "core.dump").write_bytes(b"\x7fELF\x00\x00\x01")
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / "core.dump"))])
    dialog.task.insertFromMimeData(files)
    assert dialog.task.toPlainText().endswith(
        f"`{tmp_path / 'core.dump'}` (copied for the agent as `offload:given/core.dump`)")
    assert dialog.error.text() == ""
    # A scan's pages go as pictures, shown under the task: not said in the red line for what did not go.
    from tests.support.pdfs import write_pdf

    files.setUrls([QUrl.fromLocalFile(str(write_pdf(tmp_path / "scan.pdf", [None])))])
    dialog.task.insertFromMimeData(files)
    assert len(dialog.pictures.held()) == 1 and dialog.error.text() == ""
    # A folder goes by its path, said (nothing of it is copied).
    files.setUrls([QUrl.fromLocalFile(str(tmp_path / "elsewhere"))])
    dialog.task.insertFromMimeData(files)
    assert dialog.task.toPlainText().endswith(f"`{tmp_path / 'elsewhere'}`") and dialog.error.text() == ""
    dialog._accept()
    session = window.session
    assert session is not None and (session.dir / "offload" / "given" / "core.dump").read_bytes() == b"\x7fELF\x00\x00\x01"
    assert "`offload:given/core.dump`" in session.state.config.task


def test_a_new_hint_in_the_empty_box_is_drawn_at_once(qtbot):
    """Qt repaints a text box when its hint comes or goes, not when another hint takes its place:
    the message box went on saying "Tell the agent what to do from here" after the run began."""
    box = Composer()
    qtbot.addWidget(box)
    box.setPlaceholderText("Tell the agent what to do from here")
    with qtbot.waitExposed(box):
        box.show()
    painted = []

    class Painted(QObject):
        def eventFilter(self, watched, event):  # noqa: N802 - Qt's name
            # (the caret's blinking repaints a sliver of it: not the hint)
            if event.type() == QEvent.Type.Paint and event.rect().width() > box.viewport().width() // 2:
                painted.append(event.rect())
            return False
    watcher = Painted()
    box.viewport().installEventFilter(watcher)
    qtbot.wait(50)
    painted.clear()
    box.setPlaceholderText("Message the agent")
    qtbot.waitUntil(lambda: bool(painted), timeout=2000)
