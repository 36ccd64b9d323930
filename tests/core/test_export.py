"""A session exported as a zip holds its three files, offloads and the whole event log."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from core.export import ImportRefused, export_session, import_session
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from core.store import Store
from tests.core.helpers import make_session


async def test_export_zips_the_files_and_every_event(store, data_dir, workdir, tmp_path):
    (workdir / "big.txt").write_text("line\n" * 5000, encoding="utf-8")
    model = ScriptedModel([reply("", call("shell_run", command="cat big.txt")),  # 25 KB of output: offloaded
                           reply("", call("findings_add", title="Big", body="5,000 lines.")),
                           reply("", call("task_done", summary="read it"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    target = export_session(store, data_dir, session.id[:10], tmp_path / "out.zip")

    with zipfile.ZipFile(target) as archive:
        names = set(archive.namelist())
        prefix = f"{session.id}/"
        assert {prefix + n for n in ("task_plan.md", "findings.md", "progress.md", "events.jsonl")} <= names
        assert any(n.startswith(prefix + "offload/") for n in names)
        events = [json.loads(line) for line in archive.read(prefix + "events.jsonl").decode("utf-8").splitlines()]
        assert [e["seq"] for e in events] == [r.seq for r in session.records]
        assert events[0]["kind"] == "session_started" and events[-1]["kind"] == "session_ended"
        assert "5,000 lines." in archive.read(prefix + "findings.md").decode("utf-8")
        told = archive.read(prefix + "transcript.md").decode("utf-8")  # for people: the conversation
        assert told.startswith(f"# {store.session(session.id).title}\n") and "**shell_run** ✓" in told
        offloaded = next(e["data"]["offload_path"] for e in events if e["kind"] == "tool_result")
        assert f"*The whole output: `{offloaded}` in the session's folder.*" in told
    assert not (tmp_path / "out.zip.partial").exists()


async def exported(store, data_dir, workdir, tmp_path) -> tuple[Session, Path]:
    model = ScriptedModel([reply("I'll note it.", call("findings_add", title="Dates", body="Offsets are dropped.")),
                           reply("", call("task_done", summary="noted"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    return session, export_session(store, data_dir, session.id, tmp_path / "shared.zip")


async def test_an_export_imported_elsewhere_is_the_same_session_there(store, data_dir, workdir, tmp_path):
    session, target = await exported(store, data_dir, workdir, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    there = Store(elsewhere / "tripane.db")
    assert import_session(there, elsewhere, target) == session.id

    assert [(r.seq, r.ts, r.event) for r in there.records(session.id)] == [(r.seq, r.ts, r.event) for r in session.records]
    row = there.session(session.id)
    assert (row.title, row.status, row.model) == (store.session(session.id).title, "ended:done", "scripted")
    opened = Session.open(there, elsewhere, session.id, ScriptedModel([]))  # and opens as it was
    assert opened.read_file("findings.md") == session.read_file("findings.md")
    assert "Offsets are dropped." in opened.read_file("findings.md")[0] and opened.state.status == "ended:done"
    assert not (elsewhere / "sessions" / session.id / "events.jsonl").exists()  # the log is in the database

    with pytest.raises(ImportRefused, match="in this data folder already"):
        import_session(there, elsewhere, target)


async def test_what_is_not_a_whole_export_is_refused_and_nothing_is_left(store, data_dir, workdir, tmp_path):
    session, target = await exported(store, data_dir, workdir, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    there = Store(elsewhere / "tripane.db")

    def rewritten(name: str, change) -> Path:
        """The export with its entries as `change` makes them (None: left out)."""
        copy = tmp_path / name
        with zipfile.ZipFile(target) as source, zipfile.ZipFile(copy, "w") as out:
            for info in source.infolist():
                data = change(info.filename, source.read(info.filename))
                if data is not None:
                    out.writestr(info.filename, data)
        return copy

    not_zip = tmp_path / "notes.zip"
    not_zip.write_text("not a zip", encoding="utf-8")
    log = f"{session.id}/events.jsonl"
    cases = {
        not_zip: "cannot be read as a zip file",
        rewritten("no-log.zip", lambda name, data: None if name == log else data): "not a Tripane export",
        rewritten("torn.zip", lambda name, data: data[:len(data) // 2] if name == log else data): "Line ",
        rewritten("headless.zip", lambda name, data: data.split(b"\n", 1)[1] if name == log else data):
            "does not start with the session's start",
    }
    for source, why in cases.items():
        with pytest.raises(ImportRefused, match=why):
            import_session(there, elsewhere, source)
        assert there.sessions() == [] and not (elsewhere / "sessions" / session.id).exists()  # nothing left

    # An entry that would land outside the session's folder is not written (the rest is imported).
    sneaky = rewritten("sneaky.zip", lambda name, data: data)
    with zipfile.ZipFile(sneaky, "a") as out:
        out.writestr(f"{session.id}/../../escaped.txt", "out")
        out.writestr(f"{session.id}/..\\..\\windows.txt", "out")  # on Windows a backslash climbs too
        out.writestr(f"{session.id}/C:/drive.txt", "out")
    assert import_session(there, elsewhere, sneaky) == session.id
    assert not (elsewhere / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()
    unpacked = {path.name for path in (elsewhere / "sessions" / session.id).rglob("*")}
    assert not {name for name in unpacked if "windows" in name or "drive" in name or name == "C:"}
    assert {"task_plan.md", "findings.md", "progress.md"} <= unpacked
