"""What the agent changed as one patch (core/patches.py): applied by the real git (and GNU patch),
it makes a copy of the folder from before as the folder is now, and back again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from core.patches import FILE_MODE, file_patch, path_in_repository, repository_top
from core.scripted import ScriptedModel, call, reply
from core.snapshot import EXECUTABLE_MODE
from tests.core.helpers import make_session
from tests.core.test_snapshot import CRLF, run_with_commands, work_folder_of_a_project
from tests.support.marks import needs_git

pytestmark = needs_git

BEFORE = {
    "calc.py": b"def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
    "windows.ini": CRLF,  # its CRLF must stay
    "no_newline.txt": b"last line",  # "\ No newline at end of file", or the patch adds one
    "latin1.txt": "café\n".encode("latin-1"),  # not UTF-8: diffed as bytes, not as replaced characters
    "progress.log": b"start\n10%\r50%\r100%\ndone\n",  # a lone \r ends no line for git
    "old.log": b"old\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\0\0" + bytes(range(256)) * 8,
    "run.sh": b"#!/bin/sh\necho hi\n",
    'say "hi".txt': b"a\n",  # git quotes such a name
    "with space.txt": b"a\n",  # and ends such a name with a tab
}
NOW = {
    "calc.py": b"def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "windows.ini": b"first\r\nchanged\r\n",
    "no_newline.txt": b"last line, longer",
    "latin1.txt": "cafè\n".encode("latin-1"),
    "progress.log": b"start\n10%\r50%\r100%\ndone, again\n",
    "new.txt": b"made\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\0\0" + bytes(range(255, -1, -1)) * 9,
    "run.sh": b"#!/bin/sh\necho hi\n",  # made runnable, nothing else
    "pkg/tool.sh": b"#!/bin/sh\n",
    'say "hi".txt': b"b\n",
    "with space.txt": b"b\n",
}
MODES = {"run.sh": (FILE_MODE, EXECUTABLE_MODE), "pkg/tool.sh": (FILE_MODE, EXECUTABLE_MODE)}


def folder(root, files):
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def contents(root):
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*")
            if path.is_file() and ".git" not in path.parts}


def a_patch() -> bytes:
    return b"".join(file_patch(path, BEFORE.get(path), NOW.get(path), *MODES.get(path, (FILE_MODE, FILE_MODE)))
                    for path in sorted(BEFORE.keys() | NOW.keys()))


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def test_git_applies_the_patch_byte_for_byte_and_takes_it_back(tmp_path):
    patch = tmp_path / "work.patch"
    patch.write_bytes(b"Words before the first file, as Tripane writes them.\n\n" + a_patch())
    target = folder(tmp_path / "copy", BEFORE)

    done = git("apply", str(patch), cwd=target)
    assert done.returncode == 0, done.stderr
    assert contents(target) == NOW
    if os.name == "posix":
        assert os.access(target / "run.sh", os.X_OK) and os.access(target / "pkg" / "tool.sh", os.X_OK)
    undone = git("apply", "-R", str(patch), cwd=target)
    assert undone.returncode == 0, undone.stderr
    assert contents(target) == BEFORE


def test_a_file_as_it_was_has_no_part_and_names_are_written_as_git_writes_them():
    assert file_patch("same.txt", b"x\n", b"x\n") == b"" and file_patch("never.txt", None, None) == b""
    assert file_patch("run.sh", b"x\n", b"x\n", FILE_MODE, EXECUTABLE_MODE) == (
        b"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n")
    quoted = file_patch('say "hi".txt', b"a\n", b"b\n")
    assert quoted.startswith(b'diff --git "a/say \\"hi\\".txt" "b/say \\"hi\\".txt"\n')
    assert b"\n--- a/with space.txt\t\n+++ b/with space.txt\t\n" in file_patch("with space.txt", b"a\n", b"b\n")
    # git's own id of the file before, which `git apply --3way` looks up
    assert b"index 78981922613b2afb6025042ff6bd878ac1994e85..6178079822" in file_patch("f", b"a\n", b"b\n")


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed here")
def test_gnu_patch_applies_the_text_files(tmp_path):
    text = {path: data for path, data in BEFORE.items() if path != "logo.png"}
    patch = tmp_path / "work.patch"
    patch.write_bytes(b"".join(file_patch(path, text.get(path), NOW.get(path))
                               for path in sorted(text.keys() | NOW.keys()) if path != "logo.png"))
    target = folder(tmp_path / "copy", text)
    done = subprocess.run(["patch", "-p1", "-i", str(patch)], cwd=target, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert contents(target) == {path: data for path, data in NOW.items() if path != "logo.png"}


def test_paths_are_named_from_the_top_of_the_repository_the_work_folder_is_in(tmp_path):
    # `git apply` in a subfolder takes the patch's paths from the repository's top: a patch of
    # shop/app.py written as app.py was skipped, saying nothing but "Skipped patch".
    repository = tmp_path / "repo"
    shop = repository / "apps" / "shop"
    shop.mkdir(parents=True)
    assert git("init", "-q", cwd=repository).returncode == 0
    assert repository_top(shop) == repository and path_in_repository(shop, "app.py") == "apps/shop/app.py"
    assert path_in_repository(repository, "app.py") == "app.py"
    (shop / "app.py").write_bytes(b"x = 1\n")
    (tmp_path / "p.patch").write_bytes(file_patch(path_in_repository(shop, "app.py"), b"x = 1\n", b"x = 2\n"))
    done = git("apply", str(tmp_path / "p.patch"), cwd=repository)
    assert done.returncode == 0, done.stderr
    assert (shop / "app.py").read_bytes() == b"x = 2\n"
    alone = tmp_path / "alone"
    alone.mkdir()
    assert repository_top(alone) is None or repository_top(alone) not in (alone, tmp_path)


async def test_a_sessions_patch_holds_the_file_tools_and_the_commands_changes(store, data_dir, workdir, tmp_path):
    before = tmp_path / "before"
    before.mkdir()
    work_folder_of_a_project(before)
    session, _ = await run_with_commands(store, data_dir, workdir)
    patch = session.changes_patch(session.changed_files())

    heading, how, blank = patch.split(b"\n")[:3]
    assert heading.startswith(f"What the agent changed in {workdir}, in Tripane session {session.id} (".encode())
    assert how == f"4 files. To apply it in a copy of {workdir}: git apply FILE, or patch -p1 < FILE".encode()
    assert blank == b""
    (tmp_path / "p.patch").write_bytes(patch)
    done = git("apply", str(tmp_path / "p.patch"), cwd=before)
    assert done.returncode == 0, done.stderr
    applied, now = contents(before), contents(workdir)
    assert applied.pop("build/out.o") == b"\0obj" and now.pop("build/out.o") == bytes(2)  # ignored, as listed
    assert applied == now
    assert b"-first\r\n-second\r\n+rewritten\n\\ No newline at end of file\n" in patch  # config.ini, byte for byte


async def test_what_a_patch_cannot_hold_is_named_at_its_top(store, data_dir, workdir, monkeypatch):
    from core import originals

    monkeypatch.setattr(originals, "MAX_KEPT_BYTES", 100)
    (workdir / "big.csv").write_bytes(b"a,b\n" * 100)
    model = ScriptedModel([
        reply("", call("file_write", path="big.csv", content="a,b\n")),
        reply("", call("file_write", path="small.txt", content="made\n")),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all", copy_work_folder=False)
    assert await session.run() == "done"
    listed = session.changed_files()
    patch = session.changes_patch(listed)
    assert b"\nNot in it: big.csv (the file from before was too large to keep).\n" in patch
    assert b"diff --git a/small.txt b/small.txt\nnew file mode 100644\n" in patch and b"big.csv b/" not in patch
    with pytest.raises(ValueError, match=r"There is no change to put in a patch: big.csv \(the file from before"):
        session.changes_patch([change for change in listed if change.path == "big.csv"])
    (workdir / "small.txt").unlink()
    with pytest.raises(ValueError, match="There is no change to put in a patch: big.csv"):
        session.changes_patch(session.changed_files())  # small.txt: created, and gone again


def test_the_command_line_prints_the_agents_changes_as_a_patch_or_writes_it(tmp_path, monkeypatch, capsysbinary):
    from core import cli
    from core.store import Store

    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_bytes(b"def add(a, b):\n    return a - b\n")
    command = f'"{sys.executable}" -c "open(\'made.txt\', \'w\').write(\'new\')"'
    monkeypatch.setattr(cli, "_model_client", lambda: ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("shell_run", command=command)),
        reply("", call("task_done", summary="done"))]))
    base = ["--data-dir", str(tmp_path)]
    assert cli.main([*base, "run", "Fix add", "--model", "openai/scripted", "--api-base", "http://127.0.0.1:9/v1",
                     "--workdir", str(work), "--no-memory", "--approve", "all"]) == cli.EXIT_DONE
    session_id = Store(tmp_path / "tripane.db").sessions()[0].id
    (work / "mine.txt").write_bytes(b"the person's own\n")  # not the agent's: left out unless named
    capsysbinary.readouterr()

    assert cli.main([*base, "changes", session_id]) == cli.EXIT_DONE
    assert b"; all the agent did, as one patch: --patch\n" in capsysbinary.readouterr().out  # (how it is found)
    assert cli.main([*base, "changes", session_id, "--patch"]) == cli.EXIT_DONE
    out, err = capsysbinary.readouterr()
    assert b"2 files. To apply it" in out
    assert b"diff --git a/calc.py b/calc.py\n" in out and b"diff --git a/made.txt b/made.txt\n" in out
    assert b"mine.txt" not in out
    assert b"not in the patch, changed not by the agent: mine.txt (name them to put them in)" in err

    written = tmp_path / "agent.patch"
    assert cli.main([*base, "changes", session_id, "mine.txt", "calc.py", "--patch", "-o", str(written)]) \
        == cli.EXIT_DONE
    assert f"The patch is in {written}".encode() in capsysbinary.readouterr().err
    assert written.read_bytes().count(b"diff --git") == 2 and b"a/mine.txt" in written.read_bytes()

    assert cli.main([*base, "changes", session_id, "nowhere.txt", "--patch"]) == cli.EXIT_USAGE
    assert b"nowhere.txt was not changed by the agent" in capsysbinary.readouterr().err
    assert cli.main([*base, "changes", session_id, "-o", str(written)]) == cli.EXIT_USAGE
    assert b"--output goes with --patch" in capsysbinary.readouterr().err
    assert cli.main([*base, "changes", session_id, "--patch", "--put-back", "calc.py"]) == cli.EXIT_USAGE
    assert (work / "calc.py").read_bytes() == b"def add(a, b):\n    return a + b\n"  # nothing put back
