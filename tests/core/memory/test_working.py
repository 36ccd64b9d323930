from __future__ import annotations

import os

import pytest

from core.memory.working import (
    FILES,
    FINDINGS,
    PLAN,
    PROGRESS,
    WorkingMemory,
    WriteRefused,
)


@pytest.fixture
def memory(tmp_path):
    wm = WorkingMemory(tmp_path / "session")
    wm.create(title="Port the parser", task="Port the parser to Rust")
    return wm


def test_files_are_created_from_templates_with_the_seed_sections(memory):
    plan, version = memory.read(PLAN)
    assert version == 1
    for section in ("# Task Plan: Port the parser", "## Goal", "Port the parser to Rust", "## Current Status",
                    "## Execution Plan", "### Phase 1", "## Technical Decisions", "## Risks & Mitigation"):
        assert section in plan
    assert memory.read(FINDINGS)[0].startswith("# Research Findings")
    assert memory.read(PROGRESS)[0].startswith("# Execution Progress Log")
    assert all(memory.path(name).read_text(encoding="utf-8") == memory.read(name)[0] for name in FILES)


def test_writes_are_atomic_and_versioned(memory):
    change = memory.write(PLAN, "new plan\n", base_version=1, author="agent")
    assert change.version == 2 and change.author == "agent"
    assert "-# Task Plan: Port the parser" in change.diff and "+new plan" in change.diff
    assert memory.path(PLAN).read_text(encoding="utf-8") == "new plan\n"
    assert not [p for p in memory.folder.iterdir() if p.name.endswith(".tmp")]


def test_a_file_another_program_holds_for_a_moment_is_still_written(memory, monkeypatch):
    """Windows refuses to rename over a file an editor or a virus scanner has open (a sharing
    violation, PermissionError) until the other program lets go: the write waits for it."""
    real_replace, refusals = os.replace, []

    def held_twice(source, target):
        if len(refusals) < 2:
            refusals.append(target)
            raise PermissionError(13, "The process cannot access the file because it is being used by another process")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", held_twice)
    memory.write(PLAN, "# Plan\n\n- [ ] the new step\n", base_version=1, author="agent")
    assert len(refusals) == 2
    assert memory.read(PLAN) == ("# Plan\n\n- [ ] the new step\n", 2)


@pytest.mark.parametrize("failure", [
    PermissionError(13, "held by another program for good"),
    OSError(28, "No space left on device"),
])
def test_a_write_that_cannot_finish_leaves_the_old_file_and_nothing_beside_it(memory, monkeypatch, failure):
    before = memory.read(PLAN)
    files_before = sorted(p.name for p in memory.folder.iterdir())

    def fails(*args):
        raise failure

    monkeypatch.setattr(os, "replace" if isinstance(failure, PermissionError) else "fsync", fails)
    with pytest.raises(OSError):
        memory.write(PLAN, "# A plan that never lands\n", base_version=1, author="agent")
    monkeypatch.undo()
    assert memory.read(PLAN) == before
    assert sorted(p.name for p in memory.folder.iterdir()) == files_before  # no temporary file left behind


def test_a_stale_write_is_refused_with_the_current_text(memory):
    memory.write(PLAN, "the person's plan\n", base_version=1, author="user")
    with pytest.raises(WriteRefused) as refused:
        memory.write(PLAN, "the agent's plan\n", base_version=1, author="agent")
    assert refused.value.current_text == "the person's plan\n"
    assert refused.value.current_version == 2
    assert memory.read(PLAN) == ("the person's plan\n", 2)


def test_the_agent_cannot_remove_a_pinned_line_but_the_person_can(memory):
    memory.write(PLAN, "# Plan\n- keep me\n- other\n", base_version=1, author="user")
    memory.set_pins(PLAN, ("- keep me",))
    with pytest.raises(WriteRefused, match="pinned"):
        memory.write(PLAN, "# Plan\n- other\n", base_version=2, author="agent")
    memory.write(PLAN, "# Plan\n  - keep me\n- changed\n", base_version=2, author="agent")  # indentation is fine
    memory.write(PLAN, "# Plan\n", base_version=3, author="user")
    assert memory.read(PLAN) == ("# Plan\n", 4)


def test_the_agent_may_tick_off_a_pinned_step_but_not_reword_it(memory):
    memory.write(PLAN, "# Plan\n- [ ] Run the tests again\n1. [ ] Ship it\n", base_version=1, author="user")
    memory.set_pins(PLAN, ("- [ ] Run the tests again", "1. [ ] Ship it"))
    memory.write(PLAN, "# Plan\n- [x] Run the tests again\n1. [X] Ship it\n", base_version=2, author="agent")
    with pytest.raises(WriteRefused, match="a step may be ticked off"):  # its words stay as written
        memory.write(PLAN, "# Plan\n- [x] Run some tests\n1. [X] Ship it\n", base_version=3, author="agent")
    with pytest.raises(WriteRefused, match="Ship it"):  # and the step stays in the plan
        memory.write(PLAN, "# Plan\n- [x] Run the tests again\n", base_version=3, author="agent")
    assert memory.read(PLAN) == ("# Plan\n- [x] Run the tests again\n1. [X] Ship it\n", 3)


def test_appends_need_no_base_version_and_carry_a_small_diff(memory):
    _, before = memory.read(PROGRESS)
    change = memory.append(PROGRESS, "## entry one", author="core")
    assert change.version == before + 1
    added = [line for line in change.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+## entry one"] and "@@ -4,0 +5,1 @@" in change.diff
    assert memory.read(PROGRESS)[0].endswith("## entry one\n")


def test_edits_made_outside_tripane_are_detected_once(memory):
    assert memory.check_external() == []
    path = memory.path(FINDINGS)
    path.write_text(path.read_text(encoding="utf-8") + "- edited in vim\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))  # make sure the stat differs even on coarse clocks
    changes = memory.check_external()
    assert [(c.file, c.author, c.version) for c in changes] == [(FINDINGS, "external", 2)]
    assert "+- edited in vim" in changes[0].diff
    assert memory.check_external() == []
    assert memory.read(FINDINGS)[0].endswith("- edited in vim\n")


def _saved_elsewhere(path, data: bytes) -> None:
    path.write_bytes(data)
    os.utime(path, ns=(1, 1))  # make sure the stat differs even on coarse clocks


def test_an_outside_edit_saved_with_windows_line_ends_is_the_lines_it_changed(memory):
    """An editor on Windows may save the plan with CRLF line ends (or a byte order mark): the
    agent is told of the line the person added, not of a whole file changed, and the file goes back
    to LF, so that the appends after it and the log agree with it."""
    path = memory.path(PLAN)
    edited = path.read_text(encoding="utf-8").replace("## Technical Decisions\n", "## Technical Decisions\n- Keep the names\n")
    _saved_elsewhere(path, b"\xef\xbb\xbf" + edited.replace("\n", "\r\n").encode("utf-8"))
    [change] = memory.check_external()
    changed = [line for line in change.diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["+- Keep the names"]
    assert memory.read(PLAN)[0] == edited
    assert path.read_bytes() == edited.encode("utf-8")
    assert memory.check_external() == []


def test_a_save_that_changed_only_the_line_ends_is_no_change(memory):
    path = memory.path(FINDINGS)
    text, version = memory.read(FINDINGS)
    _saved_elsewhere(path, text.replace("\n", "\r\n").encode("utf-8"))
    assert memory.check_external() == []
    assert memory.read(FINDINGS) == (text, version)
    assert memory.append(FINDINGS, "## next", author="agent").diff.endswith("@@\n+## next\n")
    assert path.read_bytes() == memory.read(FINDINGS)[0].encode("utf-8")


def test_an_outside_edit_saved_as_utf16_is_read_as_text(memory):
    """Windows' Notepad saves "Unicode" as UTF-16 with a byte order mark."""
    path = memory.path(FINDINGS)
    edited = memory.read(FINDINGS)[0] + "- café noted\n"
    _saved_elsewhere(path, edited.replace("\n", "\r\n").encode("utf-16"))
    [change] = memory.check_external()
    assert "+- café noted" in change.diff.splitlines()
    assert memory.read(FINDINGS)[0] == edited and path.read_bytes() == edited.encode("utf-8")


def test_an_outside_edit_saved_in_the_systems_code_page_keeps_its_letters(memory, monkeypatch):
    """Notepad's "ANSI" is the system's code page (cp1252 on a Western Windows), not UTF-8."""
    monkeypatch.setattr("locale.getencoding", lambda: "cp1252")
    path = memory.path(FINDINGS)
    edited = memory.read(FINDINGS)[0] + "- café noted\n"
    _saved_elsewhere(path, edited.encode("cp1252"))
    [change] = memory.check_external()
    assert change.diff.splitlines()[-1] == "+- café noted"
    assert path.read_bytes() == edited.encode("utf-8")


def test_restore_takes_over_the_logged_version(tmp_path):
    first = WorkingMemory(tmp_path / "s")
    changes = first.create(title="t", task="t")
    second = WorkingMemory(tmp_path / "s")
    for change in changes:
        second.restore(change.file, version=change.version, sha256=change.sha256, size=change.size)
    assert second.read(PLAN) == first.read(PLAN)
    assert second.check_external() == []


def test_an_append_the_log_never_saw_is_cut_off_on_restore(tmp_path):
    first = WorkingMemory(tmp_path / "s")
    first.create(title="t", task="t")
    logged = first.append(PROGRESS, "## logged entry", author="core")
    with open(first.path(PROGRESS), "ab") as fh:  # a process killed half-way through its next append
        fh.write("\n## half an entr".encode("utf-8"))

    second = WorkingMemory(tmp_path / "s")
    second.restore(PROGRESS, version=logged.version, sha256=logged.sha256, size=logged.size)
    on_disk = first.path(PROGRESS).read_text(encoding="utf-8")
    assert on_disk.endswith("## logged entry\n") and "half an entr" not in on_disk
    assert second.read(PROGRESS) == (on_disk, logged.version)
    assert second.check_external() == []
    assert second.append(PROGRESS, "## next", author="core").version == logged.version + 1


def test_a_file_edited_while_tripane_was_closed_is_reported_as_external(tmp_path):
    first = WorkingMemory(tmp_path / "s")
    change = first.create(title="t", task="t")[1]  # findings.md
    first.path(FINDINGS).write_text("# Rewritten elsewhere\n", encoding="utf-8")
    second = WorkingMemory(tmp_path / "s")
    second.restore(FINDINGS, version=change.version, sha256=change.sha256, size=change.size)
    changes = second.check_external()
    assert [(c.author, c.version) for c in changes] == [("external", 2)]
    assert second.read(FINDINGS)[0] == "# Rewritten elsewhere\n"


def test_appends_a_power_cut_lost_are_reported_as_an_outside_change(tmp_path):
    """Appends are not synced to the disk (neither are the log's last commits): after a power cut
    the file may lack entries the log knows of. The session reopens on what the disk has."""
    first = WorkingMemory(tmp_path / "s")
    first.create(title="t", task="t")
    kept = first.path(PROGRESS).read_bytes()
    logged = first.append(PROGRESS, "## an entry the disk never got", author="core")
    first.path(PROGRESS).write_bytes(kept)  # what the disk held when the power went

    second = WorkingMemory(tmp_path / "s")
    second.restore(PROGRESS, version=logged.version, sha256=logged.sha256, size=logged.size)
    changes = second.check_external()
    assert [(c.file, c.author, c.version) for c in changes] == [(PROGRESS, "external", logged.version + 1)]
    assert second.read(PROGRESS) == (kept.decode("utf-8"), logged.version + 1)
    assert second.append(PROGRESS, "## next", author="core").version == logged.version + 2
