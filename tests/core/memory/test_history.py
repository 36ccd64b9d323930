"""A working-memory file's versions, rebuilt from the diffs its events carry (core/memory/history.py)."""

from __future__ import annotations

import os
import random

import pytest

from core.memory.history import (
    Unrebuildable,
    as_version,
    file_versions,
    rebuilt,
    text_at,
)
from core.memory.working import PLAN, PROGRESS, WorkingMemory
from core.scripted import ScriptedModel
from tests.core.helpers import make_session


class Recorder:
    """A session's files, with each version's text as written, and its events' versions."""

    def __init__(self, folder):
        self.memory = WorkingMemory(folder)
        self.texts: dict[tuple[str, int], str] = {}
        self.versions: dict[str, list] = {}
        for change in self.memory.create(title="Port the parser", task="Port the parser to Rust"):
            self.took(change)

    def took(self, change) -> None:
        self.texts[(change.file, change.version)] = self.memory.read(change.file)[0]
        self.versions.setdefault(change.file, []).append(as_version("2026-11-26T04:00:00Z", change))

    def write(self, name: str, text: str, author: str = "agent") -> None:
        self.took(self.memory.write(name, text, base_version=self.memory.version(name), author=author))

    def append(self, name: str, text: str) -> None:
        self.took(self.memory.append(name, text, author="agent"))

    def edit_outside(self, name: str, text: str) -> None:
        path = self.memory.path(name)
        path.write_bytes(text.encode("utf-8"))
        os.utime(path, ns=(1, 1))  # a time Tripane did not see: the edit is noticed
        for change in self.memory.check_external():
            self.took(change)

    def rebuilt(self, name: str) -> dict[int, str]:
        return {version.version: text_at(self.versions[name], version.version) for version in self.versions[name]}

    def written(self, name: str) -> dict[int, str]:
        return {version: text for (file, version), text in self.texts.items() if file == name}


@pytest.fixture
def files(tmp_path):
    return Recorder(tmp_path / "session")


def test_every_version_of_the_plan_is_given_back_as_it_was_written(files):
    files.write(PLAN, "# Plan\n\n- [ ] read the parser\n- [ ] port it\n")
    files.write(PLAN, "# Plan\n\n- [x] read the parser\n- [ ] port it\n- [ ] test it\n", author="user")
    files.write(PLAN, "# Plan\n\n---\n- [x] read the parser\n")  # a removed line may look like a diff's header
    files.write(PLAN, "no newline at the end")
    files.write(PLAN, "no newline at the end\nstill none")
    files.append(PLAN, "appended after a line without a newline")
    files.write(PLAN, "windows\r\nline ends\r\n", author="user")
    files.write(PLAN, "odd\u2028separators\x0cstay\rinside lines\n")
    assert files.rebuilt(PLAN) == files.written(PLAN)
    assert len(files.written(PLAN)) == 9


def test_a_long_log_of_appends_is_given_back_at_any_version(files):
    for step in range(400):
        files.append(PROGRESS, f"- step {step}: ran the tests\n  ---\n  +++ a line like a header")
    rebuilt = files.rebuilt(PROGRESS)
    assert rebuilt == files.written(PROGRESS)
    assert rebuilt[401].count("ran the tests") == 400


def test_an_edit_outside_tripane_is_given_back_too(files):
    files.write(PLAN, "# Plan\n- [ ] one\n")
    files.edit_outside(PLAN, "# Plan\n- [ ] one\n- [ ] two, added in an editor\n")
    files.append(PLAN, "- [ ] three")
    assert files.rebuilt(PLAN) == files.written(PLAN)


def test_a_file_changed_while_tripane_was_away_starts_the_history_again(tmp_path, files):
    files.write(PLAN, "# Plan\n- [ ] one\n")
    # Reopened with a file whose text the log does not know: its next change is diffed against nothing.
    files.memory.path(PLAN).write_text("rewritten while Tripane was closed\n", encoding="utf-8")
    reopened = WorkingMemory(files.memory.folder)
    last = files.versions[PLAN][-1]
    reopened.restore(PLAN, version=last.version, sha256=last.sha256, size=10)
    files.memory = reopened
    for change in reopened.check_external():
        files.took(change)
    files.write(PLAN, "rewritten while Tripane was closed\n- [ ] and then by the agent\n")
    assert files.rebuilt(PLAN) == files.written(PLAN)


def test_random_edits_appends_and_outside_edits_all_rebuild(files):
    chance = random.Random(7)
    for _ in range(200):
        name = chance.choice([PLAN, PROGRESS])
        text = files.memory.read(name)[0]
        roll = chance.random()
        if roll < 0.4:
            files.append(name, chance.choice(["x", "crlf\r\nline", "", "---", "\n\ngap"]))
            continue
        lines = text.split("\n")
        for _ in range(3):
            at = chance.randrange(len(lines) + 1)
            if chance.random() < 0.5:
                lines.insert(at, chance.choice(["- [ ] new", "", "---", "é\r", "tab\tx"]))
            elif at < len(lines):
                del lines[at]
        edited = "\n".join(lines).rstrip("\n") if chance.random() < 0.3 else "\n".join(lines)
        if roll < 0.8:
            files.write(name, edited, author=chance.choice(["agent", "user"]))
        elif edited != text:
            files.edit_outside(name, edited)
    for name in (PLAN, PROGRESS):
        assert files.rebuilt(name) == files.written(name)


def test_a_diff_that_does_not_give_the_hashed_text_is_said_so_not_shown(files):
    files.write(PLAN, "# Plan\n- [ ] one\n")
    files.write(PLAN, "# Plan\n- [ ] one\n- [ ] two\n")
    versions = files.versions[PLAN]
    damaged = versions[1].__class__(**{**versions[1].__dict__, "diff": versions[1].diff.replace("one", "uno")})
    versions = [versions[0], damaged, versions[2]]
    assert text_at(versions, 1) == files.written(PLAN)[1]
    with pytest.raises(Unrebuildable, match="version 2 cannot be rebuilt"):
        text_at(versions, 2)
    with pytest.raises(Unrebuildable, match="version 3 cannot be rebuilt"):
        text_at(versions, 3)
    with pytest.raises(Unrebuildable, match="no version 9"):
        text_at(versions, 9)


def test_what_changed_since_a_version_is_its_diff_against_the_newest(files):
    files.write(PLAN, "# Plan\n- [ ] one\n- [ ] two\n")
    files.write(PLAN, "# Plan\n- [x] one\n- [ ] two\n")
    files.write(PLAN, "# Plan\n- [x] one\n- [x] two\n")
    versions = files.versions[PLAN]
    then = rebuilt(versions, 2)
    assert then.text == "# Plan\n- [ ] one\n- [ ] two\n"
    assert [line for line in then.since if line[:1] in "+-"] == ["-- [ ] one", "-- [ ] two", "+- [x] one", "+- [x] two"]
    assert rebuilt(versions, 4).since == []
    damaged = versions[-1].__class__(**{**versions[-1].__dict__, "sha256": "0" * 64})
    cannot = rebuilt([*versions[:-1], damaged], 2)  # the newest cannot be rebuilt: said, the text still given
    assert cannot.text == then.text and cannot.since is None and "version 4 cannot be rebuilt" in cannot.why_not


def test_versions_say_who_changed_the_file_when_and_how_much(files):
    files.write(PLAN, "# Plan\n- [ ] one\n- [ ] two\n")
    files.write(PLAN, "# Plan\n- [x] one\n- [ ] two\n- [ ] three\n", author="user")
    last = files.versions[PLAN][-1]
    assert (last.version, last.author, last.added, last.removed) == (3, "user", 2, 1)


def test_the_versions_are_read_from_the_session_log(store, data_dir, workdir):
    session = make_session(store, data_dir, workdir, ScriptedModel([]))
    text, version = session.read_file(PLAN)
    session.edit_file(PLAN, text + "- [ ] a step the person added\n", base_version=version)
    # A damaged row in the log is passed over, not a failed history.
    store.db.execute("INSERT INTO events (session_id, seq, ts, kind, data) VALUES (?, ?, ?, ?, ?)",
                     [session.id, 10_000, "2026-11-26T04:00:00Z", "file_changed", "{not json"])
    store.db.conn.commit()
    versions = file_versions(store, session.id, PLAN)
    assert [(v.version, v.author) for v in versions] == [(1, "core"), (2, "user")]
    assert versions[1].ts == [r.ts for r in session.records if r.event.kind == "file_changed"][-1]
    assert text_at(versions, 2) == session.read_file(PLAN)[0]
    assert file_versions(store, session.id, PROGRESS)[0].version == 1
