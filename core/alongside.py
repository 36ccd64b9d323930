"""Other sessions at work in the folder a new session is to work in, and what they left running there.

Two agents changing the same files undo each other's work, and each takes the other's changes for
the person's: so the person is told before they start one (the New session dialog, `tripane run`),
and the new session's agent is told among its facts. At work: running, waiting for the person's
answer, or paused (both go on later); a session whose run was interrupted is not.

A task done with the dev server it started running leaves it running for the person (see
BackgroundKept); a new task in the same folder ("now make the button blue") is told of it, or its
agent starts the server again, finds the port taken, and may stop the one the person has open.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from core.agent.running_calls import left_running_by_call
from core.events import BackgroundKept
from core.paths import session_dir
from core.run_lock import live_status
from core.store import SessionRow, Store
from core.text import one_line

AT_WORK = ("running", "waiting", "paused")
NAMED = 3  # sessions named; more are counted


def at_work_in(data_dir: Path, rows: list[SessionRow], folder: Path, but: str = "") -> list[SessionRow]:
    """The sessions of `rows` (but the one `but` names) at work now in `folder`, in a folder within
    it or in one around it: each may change the other's files."""
    try:
        folder = folder.expanduser().resolve()
    except (OSError, RuntimeError):  # (a path that cannot be resolved: nothing to compare)
        return []
    near = [row for row in rows if row.id != but and row.status in AT_WORK and row.workdir
            and _overlap(Path(row.workdir), folder)]
    return [row for row in live_status(data_dir, near) if row.status in AT_WORK]


def sessions_alongside(store: Store, data_dir: Path, folder: Path, but: str = "") -> tuple[str, ...]:
    """The sessions (but `but`) at work now in or around `folder`, as alongside_words names them."""
    return alongside_words(at_work_in(data_dir, store.sessions(), folder, but))


def served_alongside(store: Store, data_dir: Path, folder: Path, but: str = "") -> tuple[str, ...]:
    """What other sessions' (but `but`'s) commands left running for the person in or around `folder`
    as their tasks ended done, still running: "`npm run dev` (left by “Start the dev server”)"."""
    try:
        folder = folder.expanduser().resolve()
    except (OSError, RuntimeError):
        return ()
    done = [row for row in store.sessions() if row.id != but and row.status == "ended:done" and row.workdir]
    # Each folder compared once: a long-time user has hundreds of tasks done in a few folders, and
    # the dialog asks again as the folder is typed.
    near = {workdir for workdir in {row.workdir for row in done} if _overlap(Path(workdir), folder)}
    served = []
    for row in done:
        if row.workdir not in near:
            continue
        running = left_running_by_call(session_dir(data_dir, row.id))  # (its running/ files: none, mostly)
        if not running:
            continue
        kept = {call_id: command for record in store.records_of_kind(row.id, BackgroundKept.kind)
                for call_id, command in zip(record.event.call_ids, record.event.commands)}
        served += [f"`{one_line(kept[call_id], 60)}` (left by “{row.title}”)" for call_id in running if kept.get(call_id)]
    return tuple(served)


def _overlap(workdir: Path, folder: Path) -> bool:
    try:
        workdir = workdir.resolve()
    except (OSError, RuntimeError):
        return False
    return workdir == folder or workdir in folder.parents or folder in workdir.parents


STATE_WORDS = {"running": "running", "waiting": "waiting for the person's answer", "paused": "paused by the person"}


def alongside_words(rows: list[SessionRow], today: str = "") -> tuple[str, ...]:
    """The sessions as the agent's facts and the person's note name them: "“Fix the parser”
    (running)"; one waiting or paused since before `today` (UTC, as the log's times; by default
    now) says since when ("… (waiting for the person's answer since 2026-11-03)"): it may be one
    left so, whose agent goes on only once answered or resumed."""
    today = today or datetime.now(timezone.utc).date().isoformat()
    return tuple(f"“{row.title}” ({STATE_WORDS.get(row.status, row.status)}{_since(row, today)})" for row in rows)


def _since(row: SessionRow, today: str) -> str:
    day = row.updated[:10]
    return f" since {day}" if row.status != "running" and day and day < today else ""


def alongside_note(named: tuple[str, ...], started: bool = False) -> str:
    """What the person is told of the sessions `named` (alongside_words) at work where a session
    is to start, or has `started` ("" for none)."""
    if not named:
        return ""
    more = f" and {len(named) - NAMED} more" if len(named) > NAMED else ""
    which = ", ".join(named[:NAMED]) + more
    verb = "works" if len(named) == 1 else "work"
    then = ("this session's agent is told (another folder, a git worktree or a copy, would keep them apart)"
            if started else "another folder (a git worktree, a copy) keeps them apart. Started here, its agent is told")
    return f"{which} {verb} in this folder now, and two agents changing the same files undo each other's work: {then}."


def served_note(served: tuple[str, ...], started: bool = False) -> str:
    """What the person is told of what other sessions left running for them (served_alongside)
    where a session is to start, or has `started` ("" for none)."""
    if not served:
        return ""
    verb = "runs" if len(served) == 1 else "run"
    agent = "this session's agent is told" if started else "started here, its agent is told"
    return f"{', '.join(served)} {verb} in this folder for you: {agent} to leave {'it' if len(served) == 1 else 'them'} running."


def folder_notes(store: Store, data_dir: Path, folder: Path) -> str:
    """All the person is told of other sessions where a new session is to work: those at work
    there, and what they left running."""
    return " ".join(note for note in (alongside_note(sessions_alongside(store, data_dir, folder)),
                                      served_note(served_alongside(store, data_dir, folder))) if note)
