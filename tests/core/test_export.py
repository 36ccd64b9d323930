"""A session exported as a zip holds its three files, offloads and the whole event log."""

from __future__ import annotations

import json
import zipfile

from core.export import export_session
from core.scripted import ScriptedModel, call, reply
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
