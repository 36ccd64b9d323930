"""A session whose work folder has gone (moved, renamed, an unplugged drive) says so instead of running."""

from __future__ import annotations

import pytest

from core.events import UserMessage
from core.scripted import ScriptedModel, call, reply
from core.session import WorkFolderMissing
from tests.core.helpers import events_of, make_session


async def test_a_gone_work_folder_stops_the_run_before_any_model_call_and_keeps_the_message(store, data_dir, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    model = ScriptedModel([reply("", call("task_done", summary="first"))],
                          default=reply("", call("task_done", summary="again")))
    session = make_session(store, data_dir, project, model)
    assert await session.run() == "done"
    moved = project.rename(tmp_path / "project-moved")
    asked = len(model.requests)

    with pytest.raises(WorkFolderMissing, match=r"project is not there any more.*Put it back"):
        await session.send("Also add a changelog")
    assert len(model.requests) == asked and not session.running  # no call spent on a folder that is gone
    assert [e.text for e in events_of(session, UserMessage)][-1] == "Also add a changelog"  # kept

    moved.rename(project)
    await session.send("The folder is back")
    assert await session.wait() == "done"
    sent = " ".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "Also add a changelog" in sent and "The folder is back" in sent
