"""Commands allowed in a work folder, kept for the sessions to come there."""

from __future__ import annotations

import json
import logging

from core.folder_approvals import FILE_NAME, FolderApprovals


def test_allowed_commands_are_kept_by_folder_and_can_be_removed(tmp_path):
    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir()
    other.mkdir()
    approvals = FolderApprovals(tmp_path / "data")
    approvals.allow(work, "shell_run\ncommand=pytest -q")
    approvals.allow(work / ".", "shell_run\ncommand=pytest -q")  # the same folder, spelled otherwise: once
    assert FolderApprovals(tmp_path / "data").allowed(work) == {"shell_run\ncommand=pytest -q"}
    assert approvals.allowed(other) == frozenset()
    approvals.revoke(work, "shell_run\ncommand=pytest -q")
    assert approvals.allowed(work) == frozenset() and approvals.everything() == {}


def test_an_unreadable_file_allows_nothing_and_is_set_aside_not_overwritten(tmp_path, caplog):
    data = tmp_path / "data"
    data.mkdir()
    (data / FILE_NAME).write_text('{"folders": {"/w": "rm -rf /"}}', encoding="utf-8")  # not lists
    approvals = FolderApprovals(data)
    with caplog.at_level(logging.WARNING):
        assert approvals.allowed("/w") == frozenset()
    assert "cannot be read" in caplog.text
    assert (data / f"{FILE_NAME}.unreadable").read_text(encoding="utf-8").startswith('{"folders"')
    approvals.allow(tmp_path, "shell_run\ncommand=make")
    assert json.loads((data / FILE_NAME).read_text(encoding="utf-8"))["folders"] == {
        str(tmp_path.resolve()): ["shell_run\ncommand=make"]}


def test_commands_allowed_at_the_same_moment_are_all_kept(tmp_path):
    """The window and a terminal's `tripane resume` may write at once; neither drops the other's."""
    from concurrent.futures import ThreadPoolExecutor

    def allow(i: int) -> None:
        FolderApprovals(tmp_path / "data").allow(tmp_path, f"shell_run\ncommand=step {i}")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(allow, range(16)))
    assert len(FolderApprovals(tmp_path / "data").allowed(tmp_path)) == 16
