"""What shell commands change in the work folder is found against a copy made before the session's
first command, and put back: real sessions, real commands, real git, the scripted model."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from core import snapshot as snapshot_module
from core.events import FilesPutBack
from core.originals import Change
from core.scripted import ScriptedModel, call, reply
from core.session import CannotRun
from core.snapshot import NOTE_NAME, SNAPSHOT_DIR, WorkFolderSnapshot
from tests.core.helpers import events_of, make_session
from tests.support.marks import needs_git

pytestmark = needs_git

CRLF = b"first\r\nsecond\r\n"  # as a Windows editor wrote it: it must come back byte for byte


def command(code: str):
    """A shell_run call of a Python one-liner (the same on every system)."""
    return reply("", call("shell_run", command=f'"{sys.executable}" -c "{code}"'))


def work_folder_of_a_project(workdir):
    (workdir / "config.ini").write_bytes(CRLF)
    (workdir / "old.log").write_text("old\n", encoding="utf-8")
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (workdir / ".gitignore").write_text("build/\n", encoding="utf-8")
    (workdir / "build").mkdir()
    (workdir / "build" / "out.o").write_bytes(b"\0obj")


async def run_with_commands(store, data_dir, workdir, **config):
    work_folder_of_a_project(workdir)
    model = ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),  # the file tools' own
        command("open('config.ini', 'w').write('rewritten')"),
        command("import os; os.remove('old.log'); open('made.txt', 'w').write('new')"),
        command("open('build/out.o', 'wb').write(bytes(2))"),  # ignored: neither copied nor listed
        command("open('calc.py', 'a').write('# and a command')"),  # kept by the file tools already
        reply("", call("task_done", summary="done")),
        reply("", call("task_done", summary="done again")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all", **config)
    assert await session.run() == "done"
    return session, model


async def test_what_commands_changed_is_listed_shown_and_put_back_byte_for_byte(store, data_dir, workdir):
    session, model = await run_with_commands(store, data_dir, workdir)

    listed = session.changed_files()
    assert [(c.path, c.what()) for c in listed] == [
        ("calc.py", "changed"),  # told by the file tools, whose copy is from before the session
        ("config.ini", "changed by a command"),
        ("made.txt", "created by a command"),
        ("old.log", "deleted by a command"),
    ]
    about = session.changes_not_listed().commands
    assert about.startswith("Files changed by shell commands (or outside Tripane)")
    assert re.search(r"made before it \(\d+(\.\d)? [KM]B in the session's folder\)", about)
    by_path = {c.path: c for c in listed}
    assert session.changed_file_diff(by_path["config.ini"]) == ["@@ -1,2 +1 @@", "-first", "-second", "+rewritten"]
    assert session.changed_file_diff(by_path["made.txt"]) == ["@@ -0,0 +1 @@", "+new"]
    assert "+    return a + b" in session.changed_file_diff(by_path["calc.py"])

    event = session.put_back(["config.ini", "made.txt", "old.log", "calc.py"], "undo it all")
    assert event.paths == ("config.ini", "old.log", "calc.py") and event.removed == ("made.txt",)
    assert (workdir / "config.ini").read_bytes() == CRLF
    assert (workdir / "old.log").read_text(encoding="utf-8") == "old\n" and not (workdir / "made.txt").exists()
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a - b\n"
    assert (workdir / "build" / "out.o").read_bytes() == bytes(2)  # ignored: left as the command made it
    with pytest.raises(CannotRun, match="build/out.o was not put back: build/out.o is not one of the files"):
        session.put_back(["build/out.o"])  # not in the copy: "as before" would be deleted
    assert (workdir / "build" / "out.o").exists()
    assert [(c.path, c.what()) for c in session.changed_files()] == [
        ("calc.py", "as before the session"), ("config.ini", "as before the first command"),
        ("made.txt", "removed again"), ("old.log", "as before the first command")]

    await session.send("Go on.")
    assert await session.run() == "done"
    told = str(model.requests[-1].messages)
    assert ("[The person put these files of the work folder back as they were before this session: calc.py; and put "
            "these back as they were before your first shell command: config.ini, old.log; and removed these files, "
            "created since your first shell command: made.txt.") in told
    from core.render import render

    line = render(next(r for r in session.records if r.event == event))
    assert line == ("  ↶ put back as before the session: calc.py; put back as before the agent's first command: "
                    "config.ini, old.log; removed (created since the agent's first command): made.txt (why: undo it "
                    "all); the agent is told at its next step")
    progress_text = (session.dir / "progress.md").read_text(encoding="utf-8")
    assert "- Put back as before the agent's first command: config.ini, old.log\n" in progress_text
    from core.events import FilesChangedOutside

    assert events_of(session, FilesChangedOutside) == []  # what was put back is told once, as put back


async def test_the_persons_own_repository_is_not_touched(store, data_dir, workdir, monkeypatch):
    def git(*args):
        return subprocess.run(["git", "-C", str(workdir), *args], capture_output=True, check=True).stdout

    work_folder_of_a_project(workdir)
    git("init", "-q")
    git("-c", "user.name=p", "-c", "user.email=p@example.com", "add", ".")
    git("-c", "user.name=p", "-c", "user.email=p@example.com", "commit", "-q", "-m", "mine")
    (workdir / "calc.py").write_text("staged\n", encoding="utf-8")
    git("add", "calc.py")
    (workdir / "notes.txt").write_text("untracked\n", encoding="utf-8")
    before = (git("rev-parse", "HEAD"), git("status", "--porcelain"), git("for-each-ref"),
              (workdir / ".git" / "index").read_bytes(), git("count-objects"))
    # A shell of the person's that points git at their repository, as a git hook's would.
    monkeypatch.setenv("GIT_DIR", str(workdir / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(workdir / ".git" / "index"))
    model = ScriptedModel([command("open('notes.txt', 'w').write('changed')"),
                           reply("", call("task_done", summary="done"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")

    assert [(c.path, c.what()) for c in session.changed_files()] == [("notes.txt", "changed by a command")]
    assert ".git" not in str(session.changed_files())
    session.put_back(["notes.txt"])
    assert (workdir / "notes.txt").read_text(encoding="utf-8") == "untracked\n"
    after = (git("rev-parse", "HEAD"), git("status", "--porcelain"), git("for-each-ref"),
             (workdir / ".git" / "index").read_bytes(), git("count-objects"))
    assert after == before


async def test_a_folder_too_large_to_copy_or_no_git_keeps_nothing_and_says_why(store, data_dir, workdir,
                                                                                 monkeypatch):
    monkeypatch.setattr(snapshot_module, "MAX_FILES", 3)
    session, _ = await run_with_commands(store, data_dir, workdir)
    assert [c.path for c in session.changed_files()] == ["calc.py"]  # the file tools' alone
    assert session.changes_not_listed().commands == ("What shell commands changed is not listed: the work folder has "
                                                 "more than 3 files outside its .gitignore.")
    assert not (session.dir / SNAPSHOT_DIR).exists()
    with pytest.raises(Exception, match="config.ini was not put back"):
        session.put_back(["config.ini"])
    assert (workdir / "config.ini").read_text(encoding="utf-8") == "rewritten"

    monkeypatch.setattr(snapshot_module.shutil, "which", lambda name: None)
    other = workdir.parent / "other"
    other.mkdir()
    session, _ = await run_with_commands(store, data_dir, other)
    assert session.changes_not_listed().commands == ("What shell commands changed is not listed: git is not installed "
                                                 "on this computer.")


async def test_a_session_without_commands_copies_nothing(store, data_dir, workdir):
    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_write", path="a.txt", content="b\n")),
                           reply("", call("task_done", summary="done"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    assert not (session.dir / SNAPSHOT_DIR).exists() and not (session.dir / NOTE_NAME).exists()
    assert session.changes_not_listed().commands == "No shell command has run in this session."


def test_a_copy_left_half_made_by_a_killed_process_is_made_again(tmp_path):
    workdir, session_dir = tmp_path / "work", tmp_path / "session"
    workdir.mkdir()
    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    (session_dir / SNAPSHOT_DIR / "objects").mkdir(parents=True)
    (session_dir / SNAPSHOT_DIR / "HEAD").write_text("garbage", encoding="utf-8")  # no note: never finished
    copy = WorkFolderSnapshot(session_dir)
    copy.take(workdir)
    assert copy.taken
    (workdir / "a.txt").write_text("changed\n", encoding="utf-8")
    assert [(c.path, c.now) for c in copy.changes(workdir)] == [("a.txt", "changed")]


async def test_an_export_leaves_the_copy_out_and_the_imported_session_says_why(store, data_dir, workdir, tmp_path):
    import zipfile

    from core.export import export_session, import_session
    from core.session import Session
    from core.store import Store

    session, _ = await run_with_commands(store, data_dir, workdir)
    archive = export_session(store, data_dir, session.id, tmp_path / "run.zip")
    names = zipfile.ZipFile(archive).namelist()
    assert not any(f"/{SNAPSHOT_DIR}/" in name for name in names)
    elsewhere = tmp_path / "elsewhere"
    other = Store(elsewhere / "tripane.db")
    imported = Session.open(other, elsewhere, import_session(other, elsewhere, archive), ScriptedModel([]))
    assert "stays on the computer the session was exported from" in imported.changes_not_listed().commands
    assert [c.path for c in imported.changed_files()] == ["calc.py"]
    other.close()


async def test_the_put_back_of_a_commands_change_is_recorded_like_any_other(store, data_dir, workdir):
    session, _ = await run_with_commands(store, data_dir, workdir)
    session.put_back(["made.txt"], "")
    [event] = events_of(session, FilesPutBack)
    assert event.removed == ("made.txt",) and event.paths == ()


async def test_a_session_told_not_to_copy_the_work_folder_lists_only_the_file_tools_changes(store, data_dir, workdir):
    session, _ = await run_with_commands(store, data_dir, workdir, copy_work_folder=False)
    assert not (session.dir / SNAPSHOT_DIR).exists() and not (session.dir / NOTE_NAME).exists()
    assert [c.path for c in session.changed_files()] == ["calc.py"]
    assert session.changes_not_listed().commands == ("What shell commands changed is not listed: this session does not copy "
                                                "the work folder before them (Settings → Copy the work folder).")


async def test_a_session_folder_with_its_copy_is_removed_whole(store, data_dir, workdir):
    from core.paths import remove_folder

    session, _ = await run_with_commands(store, data_dir, workdir)
    objects = [p for p in (session.dir / SNAPSHOT_DIR / "objects").rglob("*") if p.is_file()]
    assert objects and not any(p.stat().st_mode & 0o200 for p in objects)  # git writes its objects read-only
    await session.close()
    remove_folder(session.dir)
    assert not session.dir.exists()
    remove_folder(session.dir)  # gone already: nothing to do, and no error


def test_on_macos_the_stand_in_for_git_is_not_run_without_the_command_line_tools(monkeypatch):
    ran = []

    def run(args, **kwargs):
        ran.append(args)
        return subprocess.CompletedProcess(args, 2)  # xcode-select -p: no command line tools

    monkeypatch.setattr(snapshot_module.sys, "platform", "darwin")
    monkeypatch.setattr(snapshot_module.shutil, "which", lambda name: "/usr/bin/git")
    monkeypatch.setattr(snapshot_module.os.path, "realpath", lambda path: path)
    monkeypatch.setattr(snapshot_module.subprocess, "run", run)
    assert snapshot_module.git_installed() is False and ran == [["xcode-select", "-p"]]
    monkeypatch.setattr(snapshot_module.shutil, "which", lambda name: "/opt/homebrew/bin/git")
    assert snapshot_module.git_installed() is True and len(ran) == 1  # a git of its own: nothing asked


async def test_the_first_commands_card_says_the_work_folder_is_being_copied_and_only_the_first(store, data_dir, workdir):
    from core.journal import ToolOutput

    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    model = ScriptedModel([command("print('one')"), command("print('two')"), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    said: dict[str, str] = {}
    session.subscribe(lambda notice: isinstance(notice, ToolOutput) and said.update(
        {notice.call_id: said.get(notice.call_id, "") + notice.text}))
    assert await session.run() == "done"
    first, second = (said[call_id] for call_id in sorted(said, key=list(said).index))
    assert first.startswith("[Tripane copies the work folder before the session's first command") and "one" in first
    assert "copies the work folder" not in second and "two" in second


async def test_each_command_is_told_with_the_files_it_changed_and_no_others(store, data_dir, workdir):
    from core.events import CommandChangedFiles, ToolResult
    from core.render import render

    session, _ = await run_with_commands(store, data_dir, workdir)
    told = events_of(session, CommandChangedFiles)
    calls = [r.event.call_id for r in session.records if isinstance(r.event, ToolResult) and r.event.name == "shell_run"]
    # The ignored build file's command changed nothing listed: no event; nor did the file tool's edit
    # of calc.py before the last command count as that command's.
    assert [(e.call_id, e.changed, e.created, e.deleted) for e in told] == [
        (calls[0], ("config.ini",), (), ()),
        (calls[1], (), ("made.txt",), ("old.log",)),
        (calls[3], ("calc.py",), (), ()),
    ]
    record = next(r for r in session.records if r.event == told[1])
    result = next(r for r in session.records if isinstance(r.event, ToolResult) and r.event.call_id == calls[1])
    assert result.seq < record.seq  # told after the command's result
    assert render(record) == "    ↳ it changed made.txt (created), old.log (deleted)"
    from core.transcript import transcript
    assert "> ↳ The command changed made.txt (created), old.log (deleted)" in transcript(session.records, "t")
    # The agent reads them at the end of each command's result, as nothing else tells it of them.
    results = {r.event.call_id: r.event.content for r in session.records if isinstance(r.event, ToolResult)}
    assert results[calls[1]].endswith("\n[files this command changed in the work folder: made.txt (created), "
                                      "old.log (deleted)]")
    assert results[calls[0]] == ("[no output; exit code 0]\n[files this command changed in the work folder: config.ini]")
    assert "files this command changed" not in results[calls[2]]  # the ignored build file only
    # calc.py the agent knew (it edited it): how the command changed it too, as it cannot see that otherwise.
    assert results[calls[3]].endswith(
        "\n[files this command changed in the work folder: calc.py]\nHow those you had read or written changed "
        "(-: before the command, +: after):\n--- calc.py\n@@ -1,2 +1,3 @@\n def add(a, b):\n     return a + b\n"
        "+# and a command")
    # The person reads the files once, on their own line (the CLI, the transcript), not in the output too.
    assert "files this command changed" not in render(result) and render(result).endswith("[no output; exit code 0]")
    last = next(r.event for r in session.records if isinstance(r.event, ToolResult) and r.event.call_id == calls[3])
    assert last.shown == "[no output; exit code 0]"  # nor the diff
    assert "files this command changed" not in transcript(session.records, "t")


def test_a_command_that_changes_many_files_is_told_with_a_count_of_the_rest(tmp_path, monkeypatch):

    monkeypatch.setattr(snapshot_module, "COMMAND_FILES_LISTED", 5)
    workdir, copy = tmp_path / "work", WorkFolderSnapshot(tmp_path / "session")
    workdir.mkdir()
    copy.take(workdir)
    copy.mark(workdir)
    for n in range(8):
        (workdir / f"f{n}.txt").write_text("x", encoding="utf-8")
    told = copy.command_changes(workdir, "c1")
    assert told.created == tuple(f"f{n}.txt" for n in range(5)) and told.more == 3 and told.count() == 8
    assert told.words(listed=2) == "f0.txt (created), f1.txt (created) and 6 more"
    copy.mark(workdir)
    assert copy.command_changes(workdir, "c2") is None  # nothing since
    # The folder they are all in is told, for the files only counted.
    assert told.within == ""
    for n in range(8):
        (workdir / "src" / "gen" / f"m{n}").mkdir(parents=True)
        (workdir / "src" / "gen" / f"m{n}" / "out.py").write_text("x", encoding="utf-8")
    told = copy.command_changes(workdir, "c3")
    assert told.within == "src/gen" and told.words(listed=2).endswith(" and 6 more, all in src/gen/")


def test_in_a_folder_without_a_gitignore_environments_and_caches_are_neither_copied_nor_listed(tmp_path):
    workdir, copy = tmp_path / "work", WorkFolderSnapshot(tmp_path / "session")
    (workdir / "node_modules" / "left-pad").mkdir(parents=True)
    (workdir / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n", encoding="utf-8")
    (workdir / "data.csv").write_text("a,b\n", encoding="utf-8")
    copy.take(workdir)
    copy.mark(workdir)
    assert copy._git(workdir, "ls-tree", "-r", "--name-only", snapshot_module.COPY_REF).split() == [b"data.csv"]
    # What a command makes of them (a virtual environment, bytecode, a test cache) is not its change.
    for made in (".venv/bin/python", "venv/lib/site.py", "__pycache__/m.cpython-311.pyc", "pkg/mod.pyc",
                 ".pytest_cache/v/lastfailed", ".DS_Store", "node_modules/left-pad/index.js", "out.txt"):
        (workdir / made).parent.mkdir(parents=True, exist_ok=True)
        (workdir / made).write_text("made\n", encoding="utf-8")
    told = copy.command_changes(workdir, "c1")
    assert (told.changed, told.created, told.deleted, told.more) == ((), ("out.txt",), (), 0)


async def test_a_file_no_command_changed_is_told_as_not_the_agents(store, data_dir, workdir):
    session, _ = await run_with_commands(store, data_dir, workdir)
    (workdir / "mine.txt").write_text("the person's own note\n", encoding="utf-8")  # in their editor
    (workdir / "old.log").write_text("made again\n", encoding="utf-8")  # a command deleted it: still the agent's
    listed = {c.path: c.what() for c in session.changed_files()}
    assert listed["mine.txt"] == "created, not by the agent"
    assert listed["config.ini"] == "changed by a command" and listed["old.log"] == "changed by a command"


async def test_a_failed_command_is_told_with_the_files_it_changed_before_it_failed(store, data_dir, workdir):
    from core.events import ToolResult

    work_folder_of_a_project(workdir)
    model = ScriptedModel([command("open('half.txt', 'w').write('half'); raise SystemExit(3)"),
                           reply("", call("task_done", summary="done"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    result = next(r.event for r in session.records if isinstance(r.event, ToolResult) and r.event.name == "shell_run")
    assert not result.ok and "exit code 3" in result.content
    assert result.content.endswith("\n[files this command changed in the work folder: half.txt (created)]")


async def test_the_reflections_trace_says_what_each_command_changed(store, data_dir, workdir):
    from core.memory.reflection import trace_lines

    session, _ = await run_with_commands(store, data_dir, workdir)
    trace = list(trace_lines(session.records))
    at = trace.index("    it changed made.txt (created), old.log (deleted)")
    assert trace[at - 1].startswith("  → shell_run ok, ") and trace[at - 1].endswith(" chars")  # its command's result


def test_a_git_repository_within_the_work_folder_is_said_to_be_left_out_not_listed_as_a_file(tmp_path):
    """git copies a folder that is a repository of its own (a clone, a submodule) as a reference to
    its commit: what changes in it cannot be told or put back, and it must not pass for a file."""
    def git(folder, *args):
        subprocess.run(["git", "-C", str(folder), "-c", "user.name=p", "-c", "user.email=p@example.com", *args],
                       capture_output=True, check=True)

    workdir, copy = tmp_path / "work", WorkFolderSnapshot(tmp_path / "session")
    (workdir / "vendor" / "lib").mkdir(parents=True)
    git(workdir / "vendor" / "lib", "init", "-q")
    (workdir / "vendor" / "lib" / "lib.py").write_text("x = 1\n", encoding="utf-8")
    git(workdir / "vendor" / "lib", "add", ".")
    git(workdir / "vendor" / "lib", "commit", "-q", "-m", "lib")
    (workdir / "top.txt").write_text("top\n", encoding="utf-8")
    copy.take(workdir)
    copy.mark(workdir)
    assert copy.nested == ["vendor/lib"]

    (workdir / "vendor" / "lib" / "lib.py").write_text("x = 2\n", encoding="utf-8")  # a command's changes
    (workdir / "top.txt").write_text("changed\n", encoding="utf-8")
    (workdir / "clone").mkdir()
    git(workdir / "clone", "init", "-q")  # a repository a command made
    (workdir / "clone" / "c.txt").write_text("c\n", encoding="utf-8")
    told = copy.command_changes(workdir, "c1")
    assert (told.changed, told.created, told.deleted) == (("top.txt",), (), ())
    assert [change.path for change in copy.changes(workdir)] == ["top.txt"]
    from core.work_changes import WorkChanges

    assert WorkChanges(tmp_path / "session").not_listed({}).commands.endswith(
        "files its .gitignore leaves out are not, nor those in the git repositories within it (vendor/lib), which "
        "git does not copy.")


@pytest.mark.skipif(sys.platform == "win32", reason="making a symbolic link needs a privilege on Windows")
@pytest.mark.parametrize("read_ahead", [False, True])  # each file read from the copy as put back, or all first
def test_a_symbolic_link_is_put_back_as_a_link_and_never_through_one(tmp_path, read_ahead):
    """A link a command re-pointed comes back as the link it was, and the file it points to now is
    left alone; a link a command made is removed, not the person's file it points to."""
    import os

    workdir, copy = tmp_path / "work", WorkFolderSnapshot(tmp_path / "session")
    workdir.mkdir()
    for name, text in (("target.txt", "t\n"), ("other.txt", "o\n"), ("important.txt", "precious\n")):
        (workdir / name).write_text(text, encoding="utf-8")
    os.symlink("target.txt", workdir / "link")
    (workdir / "plain.txt").write_text("plain\n", encoding="utf-8")
    copy.take(workdir)
    copy.mark(workdir)

    os.remove(workdir / "link")
    os.symlink("other.txt", workdir / "link")
    os.symlink("important.txt", workdir / "new_link")
    os.remove(workdir / "plain.txt")
    os.symlink("other.txt", workdir / "plain.txt")  # a file made a link
    told = copy.command_changes(workdir, "c1")
    assert (told.changed, told.created) == (("link", "plain.txt"), ("new_link",))

    paths = ("link", "new_link", "plain.txt")
    held = copy.held_many(workdir, paths)
    assert held == {path: copy._held(workdir, path) for path in paths}  # two runs of git, or six: the same
    for path in paths:
        copy.put_back(workdir, path, held[path] if read_ahead else None)
    assert os.readlink(workdir / "link") == "target.txt"
    assert not os.path.lexists(workdir / "new_link")
    assert not (workdir / "plain.txt").is_symlink() and (workdir / "plain.txt").read_text(encoding="utf-8") == "plain\n"
    assert [(workdir / n).read_text(encoding="utf-8") for n in ("other.txt", "important.txt", "target.txt")] == [
        "o\n", "precious\n", "t\n"]
    assert copy.changes(workdir) == [Change(p, p != "new_link", True, "as before", by_command=True)
                                     for p in ("link", "new_link", "plain.txt")]


def test_a_damaged_copy_read_ahead_fails_as_git_failing_does_and_says_so(tmp_path):
    workdir, copy = tmp_path / "work", WorkFolderSnapshot(tmp_path / "session")
    workdir.mkdir()
    for name in ("a.txt", "b.txt"):
        (workdir / name).write_text(f"{name}\n", encoding="utf-8")
    copy.take(workdir)
    blob = copy._git(workdir, "rev-parse", f"{copy._tree()}:a.txt").decode().strip()
    (copy.git_dir / "objects" / blob[:2] / blob[2:]).unlink()  # (a disk error, a hand in the folder)
    with pytest.raises(snapshot_module.SnapshotFailed, match="git could not read the copy of a file"):
        copy.held_many(workdir, ["a.txt", "b.txt"])


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no permission to run a file")
@pytest.mark.parametrize("read_ahead", [False, True])
def test_a_file_put_back_may_be_run_again_as_it_could_before(tmp_path, read_ahead):
    workdir, copy = tmp_path / "work", WorkFolderSnapshot(tmp_path / "session")
    workdir.mkdir()
    (workdir / "run.sh").write_text("#!/bin/sh\necho one\n", encoding="utf-8")
    (workdir / "run.sh").chmod(0o755)
    (workdir / "data.txt").write_text("d\n", encoding="utf-8")
    copy.take(workdir)
    copy.mark(workdir)
    (workdir / "run.sh").unlink()  # rewritten by a command, as a new file: not executable
    (workdir / "run.sh").write_text("#!/bin/sh\necho two\n", encoding="utf-8")
    (workdir / "data.txt").chmod(0o755)
    held = copy.held_many(workdir, ["run.sh", "data.txt"]) if read_ahead else {}
    for path in ("run.sh", "data.txt"):
        copy.put_back(workdir, path, held.get(path))
    assert (workdir / "run.sh").read_text(encoding="utf-8") == "#!/bin/sh\necho one\n"
    assert (workdir / "run.sh").stat().st_mode & 0o111 and not (workdir / "data.txt").stat().st_mode & 0o111


async def test_files_the_person_changes_between_the_agents_steps_are_told_to_it_and_its_own_are_not(
        store, data_dir, workdir):
    from core.events import FilesChangedOutside, ToolResult
    from core.render import render
    from core.transcript import transcript

    work_folder_of_a_project(workdir)

    def while_the_model_thinks(request):  # the person, in their editor
        (workdir / "config.ini").write_text("edited by the person\n", encoding="utf-8")
        (workdir / "notes.txt").write_text("mine\n", encoding="utf-8")
        return reply("", call("file_edit", path="calc.py", old="a - b", new="a + b"))

    model = ScriptedModel([
        command("open('made.txt', 'w').write('new')"),  # the copy is made before it
        while_the_model_thinks,
        command("open('calc.py', 'a').write('# more')"),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    told = events_of(session, FilesChangedOutside)
    assert [(e.changed, e.created, e.deleted) for e in told] == [(("config.ini",), ("notes.txt",), ())]
    record = next(r for r in session.records if r.event == told[0])
    edit = next(r for r in session.records if isinstance(r.event, ToolResult) and r.event.name == "file_edit")
    assert record.seq < edit.seq  # found before the agent's edit ran, and the edit not taken for the person's
    later = str(model.requests[2].messages)
    assert ("[Files of the work folder changed since your last step, not by your tools (by the person, or another "
            "program): config.ini, notes.txt (created). What you read of them before is stale: read a file again "
            "before you change it.]") in later
    assert render(record) == ("  ⟳ changed outside the agent's tools since its last step: config.ini, notes.txt "
                              "(created); the agent is told")
    assert "> ⟳ Changed outside the agent's tools since its last step: config.ini" in transcript(session.records, "t")
    assert "⟳ Files changed outside the agent's tools" in (session.dir / "progress.md").read_text(encoding="utf-8")
    from core.memory.reflection import trace_lines

    assert "The person, or another program, changed files: config.ini, notes.txt (created)" in list(
        trace_lines(session.records))


async def test_the_persons_fix_of_a_file_the_agent_knew_reaches_it_as_a_diff(store, data_dir, workdir):
    from core.events import FilesChangedOutside
    from core.memory.reflection import trace_lines
    from core.render import render

    work_folder_of_a_project(workdir)
    body = "".join(f"    total += {i}\n" for i in range(30))
    agents = f"def total():\n    total = 0\n{body}    return round(total, 2)\n"

    def the_person_fixes_it(request):  # in their editor, while the model thinks
        (workdir / "calc.py").write_text(agents.replace("round(total, 2)", "total"), encoding="utf-8")
        (workdir / "config.ini").write_text("edited by the person\n", encoding="utf-8")  # never read by the agent
        return reply("", call("file_list"))

    model = ScriptedModel([
        reply("", call("file_write", path="calc.py", content=agents)),
        command("print('tests ran')"),  # the copy is made before it
        the_person_fixes_it,
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    [told] = events_of(session, FilesChangedOutside)
    assert told.changed == ("calc.py", "config.ini")
    assert told.diff == ("--- calc.py\n@@ -31,3 +31,3 @@\n     total += 28\n     total += 29\n"
                         "-    return round(total, 2)\n+    return total")  # the few lines around the change only
    note = model.requests[3].messages[-2]["content"]
    assert note.endswith("read a file again before you change it.]\nHow those you had read or written changed "
                         f"(-: as you left them, +: now):\n{told.diff}")
    assert "-    return round(total, 2)\n+    return total" in (session.dir / "progress.md").read_text(encoding="utf-8")
    assert render(next(r for r in session.records if r.event == told)).endswith(
        "calc.py, config.ini; the agent is told, with how those it had read or written changed")
    assert any("how those the agent had read or written changed: --- calc.py" in line
               for line in trace_lines(session.records))


async def test_a_rewrite_of_a_file_the_person_just_changed_is_refused_and_an_edit_is_not(store, data_dir, workdir):
    from core.events import ToolResult

    work_folder_of_a_project(workdir)
    (workdir / "notes.md").write_text("# Notes\n", encoding="utf-8")

    def while_the_model_thinks(request):  # the person adds a line in their editor
        (workdir / "notes.md").write_text("# Notes\nthe person's line\n", encoding="utf-8")
        (workdir / "calc.py").write_text("# the person's comment\ndef add(a, b):\n    return a - b\n", encoding="utf-8")
        return reply("", call("file_write", path="./notes.md", content="# Notes\nthe agent's line\n"),
                     call("file_edit", path="calc.py", old="a - b", new="a + b"))

    model = ScriptedModel([
        command("print('first')"),  # the copy is made before it
        while_the_model_thinks,
        reply("", call("file_read", path="notes.md")),
        reply("", call("file_write", path="notes.md", content="# Notes\nthe person's line\nthe agent's line\n")),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    results = [r.event for r in session.records if isinstance(r.event, ToolResult) and r.event.name != "shell_run"]
    refused = results[0]
    assert not refused.ok and refused.content.startswith(
        "Not written: notes.md was changed outside your tools since your last step (by the person, or another "
        "program), and this rewrite would lose that change. Read it again")
    assert results[1].ok and results[1].name == "file_edit"  # it replaces only its text, in the file as it is
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "# the person's comment\ndef add(a, b):\n    return a + b\n"
    assert results[-2].ok and results[-2].name == "file_write"  # read again first: written
    assert (workdir / "notes.md").read_text(encoding="utf-8") == "# Notes\nthe person's line\nthe agent's line\n"


async def test_files_a_server_left_running_writes_may_be_its_and_are_told_once_while_they_keep_changing(
        store, data_dir, workdir):
    import time

    from core.events import FilesChangedOutside
    from tests.core.tools.test_shell_and_web import BEATING

    (workdir / "serve.py").write_text(BEATING, encoding="utf-8")

    def while_the_model_thinks(request):  # the server goes on writing
        time.sleep(0.3)
        return reply("", call("file_list", path="."))

    def the_person_saves(request):
        (workdir / "notes.txt").write_text("mine\n", encoding="utf-8")
        return while_the_model_thinks(request)

    model = ScriptedModel([
        reply("", call("shell_run", command=f'"{sys.executable}" serve.py')),
        while_the_model_thinks,
        while_the_model_thinks,
        the_person_saves,
        while_the_model_thinks,
        reply("", call("shell_run", command=f'"{sys.executable}" -c "import time; time.sleep(0.3)"')),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    told = events_of(session, FilesChangedOutside)
    # Told once, not at every step while it goes on changing; the person's file beside it, as ever.
    assert [(e.background, e.paths()) for e in told] == [(1, {"beat"}), (1, {"notes.txt"})]
    # Nor is a later command said to have changed it, though it changed while the command ran.
    from core.events import CommandChangedFiles, ToolResult

    last = [e for e in events_of(session, ToolResult) if e.name == "shell_run"][-1]
    assert last.ok and "files this command changed" not in last.content
    assert [e for e in events_of(session, CommandChangedFiles) if e.call_id == last.call_id] == []
    assert ("not by your tools (by the person, another program, or a process your commands left running): beat"
            in str(model.requests[-1].messages))
    assert "By the person, another program, or a process its commands left running" in (
        session.dir / "progress.md").read_text(encoding="utf-8")
    from core.render import render

    shown = render(next(r for r in session.records if r.event == told[0]))
    assert shown == "  ⟳ changed outside the agent's tools since its last step (maybe by a process its commands left " \
                    f"running): {told[0].words()}; the agent is told"


def test_the_diff_told_of_files_changed_outside_is_capped_and_names_each_file():
    from core.diffs import TOLD_DIFF_LINES, diff_told

    diffs = {"a.py": ["@@ -1 +1 @@", "-x", "+y"], "big.txt": [f"+line {i}" for i in range(200)], "unasked": ["+z"]}
    told = diff_told(diffs, ["a.py", "big.txt", "gone.py"]).split("\n")
    assert told[:4] == ["--- a.py", "@@ -1 +1 @@", "-x", "+y"] and told[4] == "--- big.txt"
    assert len(told) == TOLD_DIFF_LINES + 1
    assert told[-1] == f"… {4 + 1 + 200 - TOLD_DIFF_LINES:,} more lines (read the files)"
    assert diff_told(diffs, ["gone.py"]) == ""


def test_at_most_ten_changed_files_are_diffed_a_git_call_each(tmp_path):
    from core.diffs import DIFFED_FILES

    workdir, copy = tmp_path / "work", WorkFolderSnapshot(tmp_path / "session")
    workdir.mkdir()
    for n in range(DIFFED_FILES + 2):
        (workdir / f"f{n:02}.txt").write_text("before\n", encoding="utf-8")
    copy.take(workdir)
    copy.mark(workdir)
    for n in range(DIFFED_FILES + 2):
        (workdir / f"f{n:02}.txt").write_text("after\n", encoding="utf-8")
    diffs = copy.diffs_since_mark(workdir, [f"f{n:02}.txt" for n in range(DIFFED_FILES + 2)])
    assert sorted(diffs) == [f"f{n:02}.txt" for n in range(DIFFED_FILES)]
    assert diffs["f00.txt"] == ["@@ -1 +1 @@", "-before", "+after"]


async def test_a_work_folder_holding_tripanes_data_folder_leaves_it_out(tmp_path):
    """A home folder as the work folder holds Tripane's data folder (~/Library/Tripane): its
    copy held its own growing self, and at every step Tripane's own writes were told the agent as
    changed by another; the file tools do not write there either."""
    from core.events import CommandChangedFiles, FilesChangedOutside, ToolResult
    from core.paths import DB_NAME
    from core.store import Store

    home = tmp_path / "home me"  # (a space, which the left-out path escapes)
    data_dir = home / "Library" / "Tripane [test]"  # (as on macOS: not a hidden folder)
    data_dir.mkdir(parents=True)
    (home / "notes.txt").write_text("mine\n", encoding="utf-8")
    store = Store(data_dir / DB_NAME)
    model = ScriptedModel([
        command("open('made.txt', 'w').write('new')"),
        reply("", call("file_list")),
        reply("", call("file_write", path="Library/Tripane [test]/tripane.db", content="gone")),
        command("open('notes.txt', 'a').write('more')"),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, home, model, approval="all")
    assert await session.run() == "done"

    told = events_of(session, CommandChangedFiles)
    assert [(e.changed, e.created, e.deleted) for e in told] == [((), ("made.txt",), ()), (("notes.txt",), (), ())]
    assert not events_of(session, FilesChangedOutside)  # Tripane's own writes between the steps are not told
    listed = next(e for e in events_of(session, ToolResult) if e.name == "file_list").content
    assert listed.startswith("made.txt\nnotes.txt\n") and "tripane.db" not in listed  # nor listed
    assert "Library/Tripane [test]/ (Tripane's own data folder)" in listed
    refused = next(e for e in events_of(session, ToolResult) if e.name == "file_write")
    assert not refused.ok and "is in Tripane's own data folder" in refused.content
    assert store.sessions()[0].id == session.id  # the database is as Tripane left it
    copied = WorkFolderSnapshot(session.dir)._git(home, "ls-tree", "-r", "--name-only", snapshot_module.COPY_REF)
    assert copied.split() == [b"notes.txt"]
    store.close()


def test_tripanes_data_folder_or_its_own_folders_are_refused_as_a_work_folder(store, data_dir):
    from core.session import usable_workdir

    inside = data_dir / "sessions"
    inside.mkdir(exist_ok=True)
    for refused in (inside, data_dir):
        with pytest.raises(ValueError, match="is Tripane's own data folder, or one of its folders"):
            make_session(store, data_dir, refused, ScriptedModel([]))
    assert usable_workdir(data_dir.parent, data_dir) == data_dir.parent.resolve()  # holding it is fine
    (data_dir / "projects" / "shop").mkdir(parents=True)  # and so is being beside it
    assert usable_workdir(data_dir / "projects" / "shop", data_dir) == (data_dir / "projects" / "shop").resolve()
