"""A window left open all day looks through many sessions: it keeps those in use and the last few
shown, and lets the others go, so that its memory does not grow with every session it showed."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

from core.events import HumanQuestion
from core.paths import DB_NAME
from core.scripted import ScriptedModel
from core.store import Store
from gui.workspace import KEPT_IDLE, Workspace
from tests.gui.test_opening import WAIT, recorded_earlier, shown_now


def loaded(qtbot, workspace: Workspace, session_id: str):
    opening = asyncio.ensure_future(workspace.load(session_id))
    qtbot.waitUntil(opening.done, timeout=WAIT)
    return opening.result()


def asking(data_dir: Path, session_id: str) -> None:
    """The session's agent asked the person something, not answered yet (as a restart finds it)."""
    store = Store(data_dir / DB_NAME)
    store.append(session_id, HumanQuestion("q1", "ask_user", "Which branch?", ("main", "dev")))
    store.close()


def test_sessions_not_in_use_are_let_go_but_the_last_few_shown(qtbot, workdir, tmp_path):
    data = tmp_path / "data"
    ids = [recorded_earlier(data, workdir, f"Task {i}", turns=3) for i in range(KEPT_IDLE + 5)]
    asking(data, ids[0])
    workspace = Workspace(data, model_factory=lambda: ScriptedModel([]))
    try:
        sessions = [loaded(qtbot, workspace, session_id) for session_id in ids]
        held = sessions[1]  # (as a dialog of its own would hold it)
        freed = [weakref.ref(s) for s in sessions[2:4]]
        del sessions

        gone = workspace.let_go(shown={ids[-1]})
        gc.collect()

        # The one with a question waiting stays, and the shown one, and the KEPT_IDLE shown before it.
        assert gone == ids[1:4]
        assert {s.id for s in workspace.opened()} == {ids[0], held.id, *ids[4:]}
        assert all(ref() is None for ref in freed)  # their memory went with them
        # One still held is the one opened again: never two objects writing one session's log.
        assert loaded(qtbot, workspace, held.id) is held and workspace.already_open(held.id) is held
        again = loaded(qtbot, workspace, ids[2])  # one freed is read again from its log
        assert again.state.turn == 3 and again.state.config.task == "Task 2"
    finally:
        closing = asyncio.ensure_future(workspace.close())
        qtbot.waitUntil(closing.done, timeout=WAIT)


def test_the_window_keeps_the_last_sessions_it_showed_and_their_bridges(qtbot, make_window, workdir, tmp_path):
    data = tmp_path / "data"
    ids = [recorded_earlier(data, workdir, f"Task {i}", turns=3) for i in range(KEPT_IDLE + 3)]
    window = make_window()
    for session_id in ids:
        window.show_session(session_id)
        qtbot.waitUntil(lambda session_id=session_id: shown_now(window) == session_id, timeout=WAIT)
    gc.collect()

    kept = ids[-(KEPT_IDLE + 1):]  # the one shown, and the KEPT_IDLE before it
    assert {s.id for s in window.workspace.opened()} == set(kept)
    assert set(window.bridges) == set(kept)

    window.show_session(ids[0])  # let go: read from its log again, and followed again
    qtbot.waitUntil(lambda: shown_now(window) == ids[0], timeout=WAIT)
    assert window.session.state.config.task == "Task 0" and ids[0] in window.bridges
    assert window.windowTitle().startswith("Task 0")
