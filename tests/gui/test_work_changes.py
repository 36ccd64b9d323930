"""What the agent changed in the work folder, in the real window: the run's ending links it, the
dialog shows each file's diff, and files are put back as they were (the agent is told)."""

from __future__ import annotations

from core.llm import ModelReply
from core.scripted import ScriptedModel, call, reply
from gui.qt import (
    QApplication,
    QDialog,
    QFileDialog,
    QLabel,
    QMessageBox,
    Qt,
    QTextDocument,
    QUrl,
    qt_alive,
)
from tests.gui.test_supporting_screens import chat_says
from tests.gui.test_window import start
from tests.support.marks import needs_git

WAIT = 20_000


def ending_notice(window):
    return [w for w in window.chat.items() if w.objectName() == "ended"][-1]


def test_the_runs_end_links_what_changed_and_files_are_put_back_from_there(qtbot, make_window, workdir):
    (workdir / "parsing.py").write_text("def parse(text):\n    return text.strip()\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path="parsing.py", old="text.strip()", new="text")),
        reply("", call("file_write", path="tests/test_parsing.py", content="def test(): pass\n")),
        reply("", call("task_done", summary="done")),
        reply("", call("task_done", summary="done again")),
    ], side_replies=[ModelReply("root_cause: the edit dropped strip()\nkind: B\ntry_instead: keep strip()")])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    notice = ending_notice(window)
    assert "see what, save it as a patch, or put files back" in notice.text()

    notice.linkActivated.emit("tripane-changes:")
    dialog = window.findChild(QDialog, "work_changes")
    qtbot.waitUntil(lambda: dialog is not None and dialog.list.count() == 2, timeout=WAIT)
    assert [dialog.list.item(i).text() for i in range(2)] == ["parsing.py  ·  changed",
                                                              "tests/test_parsing.py  ·  created"]
    qtbot.waitUntil(lambda: "return text.strip()" in dialog.diff.toPlainText(), timeout=WAIT)
    assert "-    return text.strip()" in dialog.diff.toPlainText()
    assert "+    return text" in dialog.diff.toPlainText()

    dialog.list.selectAll()
    assert dialog.put_back_button.isEnabled()
    qtbot.mouseClick(dialog.put_back_button, Qt.MouseButton.LeftButton)
    confirm = dialog.findChild(QDialog, "put_back")
    qtbot.waitUntil(lambda: confirm is not None and confirm.isVisible(), timeout=WAIT)
    assert "Put back as before the session: parsing.py" in confirm.said.text()
    assert "Remove (the agent created it): tests/test_parsing.py" in confirm.said.text()
    assert confirm.said.text().endswith("What changed in them since is lost, your own edits too.")  # the two
    assert (workdir / "tests" / "test_parsing.py").exists()  # nothing before the person says so
    confirm.why.setText("strip() is needed: inputs come with newlines")
    qtbot.keyClick(confirm.why, Qt.Key.Key_Return)  # Enter puts back, as the default button
    qtbot.waitUntil(lambda: dialog.list.count() == 2 and "as before" in dialog.list.item(0).text(), timeout=WAIT)
    assert dialog.list.item(1).text() == "tests/test_parsing.py  ·  removed again"
    assert not dialog.put_back_button.isEnabled()  # nothing of the chosen is left to put back
    assert (workdir / "parsing.py").read_text(encoding="utf-8") == "def parse(text):\n    return text.strip()\n"
    assert not (workdir / "tests" / "test_parsing.py").exists()
    qtbot.waitUntil(lambda: "↶ Put back as before the session: parsing.py; removed" in chat_says(window),
                    timeout=WAIT)
    assert "(why: strip() is needed: inputs come with newlines)" in chat_says(window)

    window.composer.setPlainText("Go on.")
    window.send_message()
    # The work undone is diagnosed (one request without tools), then the agent reads both.
    qtbot.waitUntil(lambda: session.state.ended and len(model.requests) == 5 and not session.running, timeout=WAIT)
    told = str(model.requests[-1].messages)
    assert "The person put these files of the work folder back" in told
    assert "Their reason: strip() is needed: inputs come with newlines" in told
    assert "Root cause (wrong strategy): the edit dropped strip(). Try instead: keep strip()." in told
    assert "Changed in the work folder" not in ending_notice(window).text()  # all of it was put back
    qtbot.waitUntil(lambda: "Tripane's diagnosis of the work you put back — parsing.py, "
                            "tests/test_parsing.py (removed)" in chat_says(window), timeout=WAIT)


def test_files_are_not_put_back_while_the_run_works(qtbot, make_window, workdir, monkeypatch):
    import sys

    model = ScriptedModel([
        reply("", call("file_write", path="notes.txt", content="one\n")),
        reply("", call("shell_run", command=f'"{sys.executable}" -c "import time; time.sleep(30)"')),
    ], default=reply("", call("task_done", summary="stopped")))
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: len(model.requests) == 2 and window.status.state.text() == "● Running shell_run",
                    timeout=WAIT)
    dialog = window.show_work_changes()
    qtbot.waitUntil(lambda: dialog.list.count() == 1, timeout=WAIT)
    dialog.put_back(["notes.txt"])
    assert "pause it first (Ctrl+P)" in dialog.note.text()
    assert (workdir / "notes.txt").read_text(encoding="utf-8") == "one\n"
    window.stop()
    qtbot.waitUntil(lambda: not session.running, timeout=WAIT)


def test_the_open_window_follows_the_files_the_run_goes_on_changing(qtbot, make_window, workdir):
    import asyncio

    class HeldModel(ScriptedModel):
        """Its second request waits for `go`."""

        async def complete(self, request, *args, **kwargs):
            if len(self.requests) == 1:
                await go.wait()
            return await super().complete(request, *args, **kwargs)

    go = asyncio.Event()
    model = HeldModel([reply("", call("file_write", path="one.txt", content="1\n")),
                       reply("", call("file_write", path="two.txt", content="2\n")),
                       reply("", call("task_done", summary="done"))])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: (workdir / "one.txt").exists() and len(model.requests) == 1, timeout=WAIT)
    dialog = window.show_work_changes()
    qtbot.waitUntil(lambda: dialog.list.count() == 1, timeout=WAIT)
    assert window.show_work_changes() is dialog  # asked again: the same window, to the front
    go.set()
    qtbot.waitUntil(lambda: dialog.list.count() == 2, timeout=WAIT)
    assert dialog.list.item(1).text() == "two.txt  ·  created"
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)


def changes_after_writing(qtbot, make_window, workdir, *names: str):
    """A run that wrote the files `names` and ended, and its What the agent changed window."""
    model = ScriptedModel([*(reply("", call("file_write", path=name, content=f"{name}\n")) for name in names),
                           reply("", call("task_done", summary="done"))])
    return changes_after(qtbot, make_window, workdir, model, len(names))


def changes_after(qtbot, make_window, workdir, model, files: int, **config):
    """A run of `model` to its end, and its What the agent changed window, once it lists `files`."""
    window = make_window(model)
    session = start(window, workdir, approval="all", **config)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    dialog = window.show_work_changes()
    qtbot.waitUntil(lambda: dialog.list.count() == files, timeout=WAIT)
    return window, session, dialog


def test_deleting_the_session_closes_its_changes_window(qtbot, make_window, workdir, monkeypatch):
    window, session, dialog = changes_after_writing(qtbot, make_window, workdir, "one.txt")
    window.sessions.go_to_row(window.sessions.ids().index(session.id))
    monkeypatch.setattr(QMessageBox, "open", lambda box: box.done(QMessageBox.StandardButton.Yes))
    window.delete_session()
    qtbot.waitUntil(lambda: window.sessions.ids() == [], timeout=WAIT)
    qtbot.waitUntil(lambda: not qt_alive(dialog), timeout=WAIT)  # closed, and gone
    assert (workdir / "one.txt").exists()  # the work folder keeps the agent's file


def test_after_a_put_back_the_list_keeps_the_file_looked_at(qtbot, make_window, workdir):
    _, _, dialog = changes_after_writing(qtbot, make_window, workdir, "a.txt", "b.txt")
    dialog.list.setCurrentRow(1)
    qtbot.waitUntil(lambda: dialog.diff.toPlainText().startswith("b.txt"), timeout=WAIT)
    dialog.put_back(["b.txt"])
    qtbot.waitUntil(lambda: dialog.list.item(1).text() == "b.txt  ·  removed again", timeout=WAIT)
    assert dialog.list.currentRow() == 1 and [i.text() for i in dialog.list.selectedItems()] == [
        "b.txt  ·  removed again"]
    qtbot.waitUntil(lambda: dialog.diff.toPlainText().startswith("b.txt — removed again"), timeout=WAIT)


def test_files_are_put_back_off_the_window_s_thread_and_it_says_so_meanwhile(qtbot, make_window, workdir,
                                                                            monkeypatch):
    # git reads each file a command changed from the copy: 600 of them held the window still for
    # seconds, the list saying they were still changed.
    import threading

    from core.events import FilesPutBack
    from core.work_changes import WorkChanges

    _, session, dialog = changes_after_writing(qtbot, make_window, workdir, "a.txt", "b.txt")
    release, threads = threading.Event(), []
    putting_back = WorkChanges.put_back

    def held(self, folder, path):
        threads.append(threading.current_thread())
        release.wait(10)
        return putting_back(self, folder, path)

    monkeypatch.setattr(WorkChanges, "put_back", held)
    dialog.list.selectAll()
    dialog.put_back(["a.txt", "b.txt"])
    assert dialog.summary.text() == "Putting back 2 files…" and not dialog.put_back_button.isEnabled()
    qtbot.waitUntil(lambda: len(threads) == 1, timeout=WAIT)
    assert threads[0] is not threading.main_thread()
    diffing, listing = threading.Event(), threading.Event()
    diff_of, listed = type(session).changed_file_diff, type(session).changed_files
    monkeypatch.setattr(type(session), "changed_file_diff", lambda self, change: diffing.wait(10) and diff_of(self, change))
    monkeypatch.setattr(type(session), "changed_files", lambda self: listing.wait(10) and listed(self))
    release.set()
    # The list is read again (seconds, in a large folder): said, and the files not offered again meanwhile.
    qtbot.waitUntil(lambda: dialog.summary.text() == "Put back 2 files; reading the work folder again…", timeout=WAIT)
    assert dialog.list.item(0).text() == "a.txt  ·  created" and not dialog.put_back_button.isEnabled()
    listing.set()
    qtbot.waitUntil(lambda: dialog.list.item(0).text() == "a.txt  ·  removed again", timeout=WAIT)
    # Its diff is read again (seconds, in a large folder): meanwhile not the old one under its old heading.
    assert dialog.diff.toPlainText() == "a.txt — removed again\nReading…"
    diffing.set()
    qtbot.waitUntil(lambda: dialog.diff.toPlainText().startswith("a.txt — removed again\n(no"), timeout=WAIT)
    assert dialog.summary.text().startswith("2 files changed by the agent; 2 of them as before now")
    assert [r.event.removed for r in session.records if isinstance(r.event, FilesPutBack)] == [("a.txt", "b.txt")]


@needs_git
def test_what_a_command_changed_is_listed_with_its_diff_and_put_back(qtbot, make_window, workdir):
    import sys

    (workdir / "settings.toml").write_text("debug = false\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("shell_run", command=f'"{sys.executable}" -c "open(\'settings.toml\', \'w\').write(\'debug = true\')"')),
        reply("", call("task_done", summary="done")),
    ])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    # The command's card says what it changed, folded (its header) and unfolded.
    card = next(c for c in window.chat.cards.values() if c.call.name == "shell_run")
    qtbot.waitUntil(lambda: card.header.text().endswith("· changed 1 file"), timeout=WAIT)
    assert "It changed in the work folder" in card.details.text() and "settings.toml" in card.details.text()
    assert "files this command changed" not in card.details.text()  # the line the agent read: said once
    dialog = window.show_work_changes()
    qtbot.waitUntil(lambda: dialog.list.count() == 1, timeout=WAIT)
    assert dialog.list.item(0).text() == "settings.toml  ·  changed by a command"
    assert "Files changed by shell commands (or outside Tripane)" in dialog.summary.text()
    qtbot.waitUntil(lambda: "+debug = true" in dialog.diff.toPlainText(), timeout=WAIT)
    assert "-debug = false" in dialog.diff.toPlainText()
    (workdir / "my_notes.txt").write_text("mine\n", encoding="utf-8")  # the person's, while the window is open
    dialog.reload()
    qtbot.waitUntil(lambda: dialog.list.count() == 2, timeout=WAIT)
    assert dialog.list.item(0).text() == "my_notes.txt  ·  created, not by the agent"
    assert dialog.summary.text().startswith("1 file changed by the agent, 1 not by it.")
    dialog.list.selectAll()
    confirm = dialog._put_back_chosen()
    assert confirm.said.text().startswith("Put back as before the agent's first command: settings.toml\n")
    assert "Not changed by the agent (by you, or another program): my_notes.txt" in confirm.said.text()
    confirm.reject()
    dialog.list.clearSelection()
    dialog.list.item(1).setSelected(True)
    confirm = dialog._put_back_chosen()
    confirm.accept()
    qtbot.waitUntil(lambda: dialog.list.item(1).text() == "settings.toml  ·  as before the first command",
                    timeout=WAIT)
    assert (workdir / "my_notes.txt").exists()  # not chosen: left as the person made it
    assert (workdir / "settings.toml").read_text(encoding="utf-8") == "debug = false\n"


@needs_git
def test_past_the_cap_settings_allow_the_oldest_sessions_copies_go_at_the_start_and_on_save(
        qtbot, make_window, workdir, tmp_path, settings):
    import os

    from core.paths import session_dir
    from core.snapshot import SNAPSHOT_DIR, WorkFolderSnapshot
    from tests.gui.test_opening import recorded_earlier
    from tests.gui.test_supporting_screens import settings_dialog

    (workdir / "blob.bin").write_bytes(os.urandom(700 * 1024))  # (does not compress)
    older, newer, newest = (recorded_earlier(tmp_path / "data", workdir, task, turns=1)
                            for task in ("Older", "Newer", "Newest"))
    copy_of = {sid: session_dir(tmp_path / "data", sid) / SNAPSHOT_DIR for sid in (older, newer, newest)}
    for session_id in (older, newer, newest):
        WorkFolderSnapshot(copy_of[session_id].parent).take(workdir)
    prefs = settings.load()
    prefs.copies_mb = 2
    settings.save(prefs)

    window = make_window(ScriptedModel([]))  # at the start: 2.1 MB of copies, 2 MB allowed
    qtbot.waitUntil(lambda: not copy_of[older].exists(), timeout=WAIT)
    assert copy_of[newer].is_dir() and copy_of[newest].is_dir()
    window.show_session(older)
    qtbot.waitUntil(lambda: window.session is not None and window.session.id == older, timeout=WAIT)
    dialog = window.show_work_changes()
    qtbot.waitUntil(lambda: "was removed on" in dialog.summary.text(), timeout=WAIT)
    assert "to keep such copies under 2.0 MB in all (Settings → Copies of work folders)" in dialog.summary.text()
    dialog.close()

    window.open_settings()
    chosen = settings_dialog(qtbot, window)
    qtbot.waitUntil(lambda: chosen.copies_now.text().startswith("now "), timeout=WAIT)
    assert chosen.copies_now.text().endswith(" MB, for 2 sessions")
    chosen.copies_mb.setValue(1)  # a lower cap applies at once
    chosen._accept()
    qtbot.waitUntil(lambda: not copy_of[newer].exists(), timeout=WAIT)
    assert copy_of[newest].is_dir()


@needs_git
def test_a_file_the_person_changes_while_the_agent_thinks_is_said_in_the_chat(qtbot, make_window, workdir):
    import sys

    (workdir / "notes.txt").write_text("first\n", encoding="utf-8")

    def while_the_model_thinks(request):  # the person saves in their editor
        (workdir / "notes.txt").write_text("second\n", encoding="utf-8")
        return reply("", call("file_write", path="out.txt", content="made\n"))

    model = ScriptedModel([reply("", call("file_read", path="notes.txt")),
                           reply("", call("shell_run", command=f'"{sys.executable}" -c "print(1)"')),
                           while_the_model_thinks, reply("", call("task_done", summary="done"))])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    # (the agent's own out.txt is not among them)
    qtbot.waitUntil(lambda: "⟳ Changed outside the agent's tools since its last step: notes.txt; the agent is told, "
                    "with how those it had read or written changed" in chat_says(window), timeout=WAIT)
    line = next(label for label in window.chat.findChildren(QLabel) if label.text().startswith("⟳"))
    assert line.toolTip() == "<pre>--- notes.txt\n@@ -1 +1 @@\n-first\n+second</pre>"  # what the agent was told


def test_a_file_changed_since_the_agent_did_is_named_before_it_is_put_back(qtbot, make_window, workdir):
    (workdir / "notes.md").write_text("notes\n", encoding="utf-8")

    def the_person_saves(request):
        (workdir / "notes.md").write_text("NOTES, and the person's line\n", encoding="utf-8")
        return reply("", call("file_list", path="."))

    model = ScriptedModel([
        reply("", call("file_edit", path="notes.md", old="notes", new="NOTES")),
        the_person_saves,
        reply("", call("task_done", summary="done")),
    ])
    window, session, dialog = changes_after(qtbot, make_window, workdir, model, 1, copy_work_folder=False)
    assert dialog.list.item(0).text() == "notes.md  ·  changed, then not by the agent"
    dialog.list.selectAll()
    confirm = dialog._put_back_chosen()
    assert "Changed since the agent did, by you or another program: notes.md" in confirm.said.text()
    confirm.reject()


def test_putting_back_hundreds_of_files_asks_in_a_few_lines_with_its_buttons_on_screen(qtbot):
    # All 600 files a formatter changed, named, made the question taller than the screen, its
    # Put back and Cancel below the bottom edge.
    from core.originals import Change
    from gui.dialogs.work_changes import PutBackDialog
    from gui.qt import QWidget

    parent = QWidget()
    qtbot.addWidget(parent)
    chosen = [Change(f"src/pkg/llms/module_{i:03}.py", existed=True, kept=True, now="changed", by_command=True)
              for i in range(600)] + [Change("src/main.py", existed=True, kept=True, now="changed")]
    confirm = PutBackDialog(chosen, parent)
    lines = confirm.said.text().splitlines()
    assert lines[0] == "Put back as before the session: src/main.py"
    assert lines[1] == ("Put back as before the agent's first command: "
                        + ", ".join(f"src/pkg/llms/module_{i:03}.py" for i in range(8))
                        + " and 592 more (600 files, all in src/pkg/llms/)")
    assert confirm.sizeHint().height() < 400


def test_the_files_of_one_folder_are_found_by_a_filter_and_put_back_together(qtbot, make_window, workdir):
    # A formatter's 600 files all begin litellm/llms/: typing a name's start in the list found none.
    _, _, dialog = changes_after_writing(qtbot, make_window, workdir, "web/a.ts", "web/b.ts", "api/c.py")
    qtbot.keyClick(dialog, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert dialog.filter.hasFocus()
    qtbot.keyClicks(dialog.filter, "WEB/")
    shown = [dialog.list.item(row).text() for row in range(dialog.list.count()) if not dialog.list.item(row).isHidden()]
    assert shown == ["web/a.ts  ·  created", "web/b.ts  ·  created"]
    qtbot.keyClicks(dialog.filter, "b")  # the file looked at is filtered out: the diff follows the list
    qtbot.waitUntil(lambda: dialog.diff.toPlainText().startswith("web/b.ts — created"), timeout=WAIT)
    qtbot.keyClick(dialog.filter, Qt.Key.Key_Backspace)
    dialog.list.selectAll()
    confirm = dialog._put_back_chosen()
    assert confirm.said.text().startswith("Remove (the agent created them): web/a.ts, web/b.ts\n")
    confirm.accept()
    qtbot.waitUntil(lambda: dialog.list.item(0).text() == "web/a.ts  ·  removed again", timeout=WAIT)
    assert (workdir / "api" / "c.py").exists() and not (workdir / "web" / "a.ts").exists()
    # A reload keeps the filter: the list shows what it says.
    assert [dialog.list.item(row).isHidden() for row in range(3)] == [False, False, True]


@needs_git
def test_a_session_an_earlier_version_recorded_says_its_changes_were_not_kept(qtbot, make_window, tmp_path):
    from tests.core.test_earlier_versions import SESSION_ID, earlier_data_folder

    earlier_data_folder(tmp_path)  # (tmp_path/data: the folder the window opens)
    window = make_window()
    window.show_session(SESSION_ID)
    qtbot.waitUntil(lambda: any(w.objectName() == "ended" for w in window.chat.items()), timeout=WAIT)
    assert "hello.py (created); 3 shell commands ran" in ending_notice(window).text()

    ending_notice(window).linkActivated.emit("tripane-changes:")
    dialog = window.findChild(QDialog, "work_changes")
    qtbot.waitUntil(lambda: dialog is not None and "Not listed" in dialog.summary.text(), timeout=WAIT)
    # It said "The agent has changed no file in this session. No shell command has run in this session."
    assert dialog.summary.text() == (
        "Not listed: hello.py (created), changed by the agent's file tools as the log says; no copy of it was kept, "
        "so it cannot be put back from here. What the 3 shell commands changed is not listed: no copy of the work "
        "folder was made before them. This session was recorded by an earlier version of Tripane, which kept no such "
        "copies.")
    assert dialog.list.count() == 0 and not dialog.put_back_button.isEnabled()


def test_the_chosen_files_changes_are_saved_as_a_patch_the_button_saying_how_many(qtbot, make_window, workdir,
                                                                                   tmp_path):
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("file_write", path="notes.txt", content="made\n")),
        reply("", call("task_done", summary="done")),
    ])
    window, session, dialog = changes_after(qtbot, make_window, workdir, model, 2, copy_work_folder=False)
    assert dialog.patch_button.text() == "Save patch of 1 file…"  # the first file, chosen as the window opens
    dialog.list.selectAll()
    assert dialog.patch_button.text() == "Save patch of 2 files…" and dialog.patch_button.isEnabled()

    qtbot.keyClick(dialog.list, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    chooser = next(child for child in dialog.findChildren(QFileDialog) if child.isVisible())
    assert chooser.selectedFiles()[0].endswith(f"tripane-{session.id}.patch")
    target = tmp_path / "calc-fix.patch"
    chooser.fileSelected.emit(str(target))
    chooser.reject()
    qtbot.waitUntil(lambda: dialog.note.text().startswith("Saved the patch in"), timeout=WAIT)
    assert dialog.note.text() == f"Saved the patch in {target}; its first lines say where to apply it (git apply)."
    assert dialog.note.objectName() != "error"
    saved = target.read_bytes()
    assert b"\n2 files. To apply it" in saved
    assert b"-    return a - b\n+    return a + b\n" in saved and b"+++ b/notes.txt\n@@ -0,0 +1 @@\n+made\n" in saved

    assert dialog.copy_patch_action in dialog.list.actions()  # (its right-click menu)
    dialog.copy_patch_action.trigger()
    qtbot.waitUntil(lambda: dialog.note.text() == "Copied the patch of 2 files.", timeout=WAIT)
    copied = QApplication.clipboard().text()
    assert copied.split("\n", 1)[1] == saved.decode().split("\n", 1)[1]  # (the first line has the minute)

    dialog.save_patch(session.changed_files(), tmp_path / "no such folder" / "x.patch")
    qtbot.waitUntil(lambda: dialog.note.text().startswith("The patch was not saved:"), timeout=WAIT)
    assert "No such file or directory" in dialog.note.text() and dialog.note.objectName() == "error"


def test_back_in_front_the_window_reads_the_files_again(qtbot, make_window, workdir, monkeypatch):
    # The person undid a file in their editor and came back: the list still said it was changed.
    from gui.dialogs import work_changes

    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
                           reply("", call("task_done", summary="done"))])
    window, session, dialog = changes_after(qtbot, make_window, workdir, model, 1, copy_work_folder=False)
    qtbot.waitUntil(lambda: dialog.list.item(0).text() == "calc.py  ·  changed", timeout=WAIT)
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    window.activateWindow()
    qtbot.waitUntil(lambda: window.isActiveWindow(), timeout=WAIT)
    monkeypatch.setattr(work_changes, "REREAD_GAP_S", 0.0)
    dialog.activateWindow()
    qtbot.waitUntil(lambda: dialog.list.item(0).text() == "calc.py  ·  as before the session", timeout=WAIT)


def test_a_changed_file_opens_in_the_persons_editor_from_the_list(qtbot, make_window, workdir, monkeypatch):
    # The window showed the diff; to look closer, or finish the edit by hand, nothing opened the file.
    from gui import desktop_open

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    _, _, dialog = changes_after_writing(qtbot, make_window, workdir, "app/parse.py", "app/io.py")
    dialog.filter.setFocus()
    qtbot.keyClicks(dialog.filter, "parse")
    qtbot.keyClick(dialog.filter, Qt.Key.Key_Return)  # on to the list, at the file it leaves
    assert dialog.list.hasFocus() and dialog.list.currentItem().data(Qt.ItemDataRole.UserRole) == "app/parse.py"
    qtbot.keyClick(dialog.list, Qt.Key.Key_Return)
    assert opened == [str(workdir / "app" / "parse.py")]
    # (Enter went to the dialog's default button too, and a Save dialog opened over the file.)
    assert not any(child.isVisible() for child in dialog.findChildren(QFileDialog))
    dialog.list.itemDoubleClicked.emit(dialog.list.currentItem())
    assert opened == [str(workdir / "app" / "parse.py")] * 2
    assert dialog.open_action in dialog.list.actions()  # and the right-click menu
    (workdir / "app" / "parse.py").unlink()
    dialog.open_action.trigger()
    assert opened == [str(workdir / "app" / "parse.py")] * 2
    assert dialog.note.text() == "parse.py is not in the work folder now: there is nothing to open."


@needs_git
def test_a_picture_a_command_drew_again_is_seen_before_and_now(qtbot, make_window, workdir, tmp_path):
    # A chart the agent's script redrew was "(a binary or very large file: 1,234 bytes before, 2,345
    # now)": the person could not see what the agent had made of it.
    import sys

    from gui.qt import QColor, QImage

    def png(path, width, color):
        image = QImage(width, width // 2, QImage.Format.Format_RGB32)
        image.fill(QColor(color))
        assert image.save(str(path), "PNG")

    png(workdir / "chart.png", 200, "red")
    png(tmp_path / "redrawn.png", 1600, "blue")  # (wider than the pane: scaled to fit)
    copy = f"import shutil; shutil.copy(r'{tmp_path / 'redrawn.png'}', 'chart.png')"
    model = ScriptedModel([reply("", call("shell_run", command=f'"{sys.executable}" -c "{copy}"')),
                           reply("", call("task_done", summary="done"))])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    dialog = window.show_work_changes()
    qtbot.waitUntil(lambda: dialog.list.count() == 1, timeout=WAIT)
    qtbot.waitUntil(lambda: "Now (1,600 × 800" in dialog.diff.toPlainText(), timeout=WAIT)
    assert "Before (200 × 100, " in dialog.diff.toPlainText()
    names = [name for name in dialog.diff.toHtml().split("src=\"")[1:]]
    assert len(names) == 2
    shown = [dialog.diff.document().resource(QTextDocument.ResourceType.ImageResource, QUrl(name.split('"')[0]))
             for name in names]
    half = max(120, (dialog.diff.viewport().width() - 40) // 2)
    assert shown[0].width() == min(200, half) and shown[1].width() == half < 1600  # (each fits its half of the pane)
    assert abs(shown[1].height() * 2 - shown[1].width()) <= 1
    assert [QColor(image.pixel(5, 5)) for image in shown] == [QColor("red"), QColor("blue")]
