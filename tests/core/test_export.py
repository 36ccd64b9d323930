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
    assert row.workdir == str(workdir.resolve())  # found by its folder's name there too
    assert row.created == session.records[0].ts  # listed when it started, not when it was imported
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
        # A later version's export: said so, not "damaged, or not Tripane's".
        rewritten("later.zip", lambda name, data: data + (
            f'{{"session": "{session.id}", "seq": 999, "ts": "2027-01-01T00:00:00+00:00", '
            '"kind": "session_archived", "data": {}}\n').encode() if name == log else data):
            r"is of a kind of event this version does not know \('session_archived'\): a later version of Tripane "
            r"exported this session\. Update Tripane to import it\.$",
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


async def reflected(store, data_dir, workdir):
    """A session that ended and was reflected on: it, and its reflection event."""
    from core.llm import ModelReply
    from core.memory.longterm import LongTermMemory
    from tests.core.memory.test_reflection import report_yaml

    memory = LongTermMemory(data_dir, None)
    try:
        model = ScriptedModel([reply("", call("task_done", summary="noted"))], side_replies=[ModelReply(report_yaml())])
        session = make_session(store, data_dir, workdir, model, long_memory=memory)
        assert await session.run() == "done"
        event, _, _ = await session.reflect()
    finally:
        memory.close()
    return session, event


async def test_the_reports_of_a_sessions_reflections_go_with_it_and_only_them(store, data_dir, workdir, tmp_path):
    from core.events import ReflectionWritten
    from core.memory.longterm import LongTermMemory
    from core.memory.strategies import kept, page
    from tests.core.memory.test_reflection import STRATEGY

    session, event = await reflected(store, data_dir, workdir)
    (data_dir / "memory" / "reflections" / "20261101-000000-beef-1.yaml").write_text("outcome: other's\n")
    target = export_session(store, data_dir, session.id, tmp_path / "shared.zip")
    with zipfile.ZipFile(target) as archive:
        reports = [name for name in archive.namelist() if "/memory/" in name]
    assert reports == [f"{session.id}/memory/{event.path}"]

    elsewhere = tmp_path / "elsewhere"
    there = Store(elsewhere / "tripane.db")
    assert import_session(there, elsewhere, target) == session.id
    memory_there = LongTermMemory(elsewhere, None)
    try:
        assert [k.session_id for k in kept(memory_there)] == [session.id]  # counted there as one of its sessions'
        assert f"**{STRATEGY}**" in page(memory_there, event.path)  # its notice opens it there
        assert not (elsewhere / "sessions" / session.id / "memory").exists()  # not among the session's files
    finally:
        memory_there.close()

    # Imported again into a folder that has its report already: the one there is kept, as it is.
    (elsewhere / "memory" / event.path).write_text("outcome: edited by hand there\n", encoding="utf-8")
    there.delete_session(session.id)
    assert import_session(there, elsewhere, target) == session.id
    assert (elsewhere / "memory" / event.path).read_text(encoding="utf-8") == "outcome: edited by hand there\n"
    assert isinstance(there.records(session.id)[-1].event, ReflectionWritten)


async def test_a_failed_import_takes_back_the_reflection_reports_it_brought(store, data_dir, workdir, tmp_path):
    session, event = await reflected(store, data_dir, workdir)
    target = export_session(store, data_dir, session.id, tmp_path / "shared.zip")
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(target) as source, zipfile.ZipFile(broken, "w") as out:
        for info in sorted(source.infolist(), key=lambda i: "/memory/" not in i.filename):  # the report first
            out.writestr(info.filename, source.read(info.filename))
        out.writestr(f"{session.id}/findings.md/oops", "a file where a folder cannot be")
    elsewhere = tmp_path / "elsewhere"
    there = Store(elsewhere / "tripane.db")
    with pytest.raises(OSError):
        import_session(there, elsewhere, broken)
    assert there.sessions() == [] and not (elsewhere / "memory" / event.path).exists()


async def test_the_pictures_shown_to_the_agent_go_with_the_export(store, data_dir, workdir, tmp_path):
    from tests.core.test_pictures import png

    model = ScriptedModel([reply("", call("task_done", summary="seen"))])
    session = make_session(store, data_dir, workdir, model, pictures=((png(4, 4), ".png"),))
    assert await session.run() == "done"
    target = export_session(store, data_dir, session.id, tmp_path / "shared.zip")
    elsewhere = tmp_path / "elsewhere"
    import_session(Store(elsewhere / "tripane.db"), elsewhere, target)
    shown = elsewhere / "sessions" / session.id / "pictures" / "0001.png"
    assert shown.read_bytes() == (session.dir / "pictures" / "0001.png").read_bytes() == png(4, 4)


async def test_files_unpacked_from_an_archive_of_the_work_folder_do_not_go_with_the_export(store, data_dir, workdir,
                                                                                           tmp_path):
    # A customer's support bundle, read by the agent: what it read is in the events, the unpacked
    # files are the project's (as the copy of the work folder is), not sent with a bug report.
    with zipfile.ZipFile(workdir / "bundle.zip", "w") as bundle:
        bundle.writestr("logs/app.log", "10:07 ERROR pool exhausted\n" + "10:08 INFO ok\n" * 2000)
    model = ScriptedModel([reply("", call("file_read", path="bundle.zip/logs/app.log", limit=1)),
                           reply("", call("task_done", summary="read it"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    unpacked = [path for path in (session.dir / "offload" / "documents").iterdir() if path.name.startswith("member-")]
    assert [path.name.endswith("-app.log") for path in unpacked] == [True]
    target = export_session(store, data_dir, session.id, tmp_path / "shared.zip")
    with zipfile.ZipFile(target) as archive:
        names = archive.namelist()
        events = archive.read(f"{session.id}/events.jsonl").decode("utf-8")
    assert not [name for name in names if "/member-" in name]
    assert "10:07 ERROR pool exhausted" in events
