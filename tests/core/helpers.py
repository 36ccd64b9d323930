"""Shared helpers for core tests: building sessions and reading their logs."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.events import Event, HumanQuestion
from core.scripted import ScriptedModel
from core.session import Session, SessionConfig


def make_session(store, data_dir: Path, workdir: Path, client, *, long_memory=None, settings=None,
                 **config) -> Session:
    config.setdefault("task", "Test task")
    config.setdefault("model", "scripted")
    return Session.create(store, data_dir, SessionConfig(workdir=workdir, **config), client,
                          long_memory=long_memory, **({"settings": settings} if settings is not None else {}))


def events_of(session: Session, kind: type[Event]) -> list:
    return [r.event for r in session.records if isinstance(r.event, kind)]


async def wait_for_question(session: Session, timeout: float = 5.0,
                            other_than: HumanQuestion | None = None) -> HumanQuestion:
    """The question the session asks (the latest open one), once there is one besides `other_than`."""
    async def poll() -> HumanQuestion:
        while session.state.open_question in (None, other_than):
            if session._task is not None and session._task.done():
                raise AssertionError(f"session ended ({session.state.status}) without asking")
            await asyncio.sleep(0.005)
        return session.state.open_question
    return await asyncio.wait_for(poll(), timeout)


def last_user_text(model: ScriptedModel, index: int = -1) -> str:
    """The tail anchor of a request: the last message, regenerated each turn."""
    return model.requests[index].messages[-1]["content"]


def person_edits_plan(session: Session, change) -> None:
    """The person saves an edit of task_plan.md (`change` maps the current text to the new one)."""
    from core.memory.working import PLAN

    text, version = session.read_file(PLAN)
    session.edit_file(PLAN, change(text), base_version=version)
