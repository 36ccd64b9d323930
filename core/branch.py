"""Going back to an earlier point of a session, to take another way from there.

The agent went down a wrong road at step 12: the person wants step 11 again, with another word
from them. The event log is append-only and the session that went on stays as it was (its run may
be worth reading, or going back to); so going back makes a new session that begins as the other
did, up to the point: its events as they were recorded, the plan, findings and progress as they
were then (rebuilt from the log), and the work folder's files the agent changed after the point
put back as they were then. Its last event (SessionBranched) tells the agent where it stands; the
run waits for the person's message.

What the files were at a point: the copy of the work folder keeps the folder as the agent left it
at each step since the first command (core/snapshot.py marks). Before the copy, or in a session
recorded before the marks were kept, a file the agent had not changed before the point was then
as before the session (originals/, or the copy); one it changed before and after is said not to
be put back, never guessed.

The copied events keep their stamps and usage; what the spending counts (core/spending.py) leaves
them to the session that made the requests. The model's requests from the point on open with the
same bytes as the other session's did there, so a provider's cache may still hold them.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from core.agent.state import SessionState
from core.changes import SHELL_TOOL, ChangeTally
from core.context.compaction import save_summary
from core.events import (
    AssistantMessage,
    Compaction,
    FilesPutBack,
    Record,
    SessionBranched,
    ToolResult,
    UserMessage,
    framed_as,
)
from core.memory.history import Unrebuildable, file_versions, text_at
from core.memory.working import FILES, atomic_write
from core.offload import OFFLOAD_FOLDER
from core.originals import INDEX_NAME, ORIGINALS_DIR, Originals, OriginalsUnreadable
from core.paths import RUN_LOCK, remove_folder, session_dir
from core.pictures import PICTURES_FOLDER
from core.run_lock import lock_taken, run_lock
from core.session import claim_session_id
from core.snapshot import (
    MARKS_NAME,
    SNAPSHOT_DIR,
    Held,
    SnapshotFailed,
    WorkFolderSnapshot,
)
from core.store import Store
from core.text import one_line

log = logging.getLogger(__name__)

# Files written once and never changed in place: linked where the disk allows, not copied (the
# copies of given files and offloaded outputs may take hundreds of MB; git's objects, more).
WRITTEN_ONCE = (OFFLOAD_FOLDER, PICTURES_FOLDER, f"{SNAPSHOT_DIR}/objects")
SUMMARIES = "compaction/summaries.jsonl"  # (core/context/compaction.py save_summary)
TITLE_CHARS = 80
BRANCHED = "ended:branched"  # the new session's status until the person's message starts its run


class CannotGoBack(ValueError):
    """The point is not one to go back to, or the session cannot be gone back in now."""


@dataclass
class GoingBack:
    """What going back to a point would do, for the person to confirm (blocking to find: git)."""

    source: str
    before_seq: int  # the first event left out: the agent's step, or the person's message, gone back before
    back_to: str  # the time of the last event taken over
    workdir: Path
    step: int = 1  # the agent's step the new session takes first (its turn)
    held: dict[str, Held] = field(default_factory=dict)  # path → how it was at the point (None bytes: not there)
    not_put_back: dict[str, str] = field(default_factory=dict)  # path → why not
    # Of those held: changed after the point by someone else than the agent too (the person, in
    # their editor): putting them back takes that change back too.
    changed_by_others: set[str] = field(default_factory=set)
    unnamed: int = 0  # files commands changed after the point beyond those their events name

    @property
    def changed(self) -> list[str]:
        return sorted({*self.held, *self.not_put_back})

    @property
    def as_then(self) -> list[str]:
        """The files written back as they were at the point."""
        return sorted(path for path, (_, data) in self.held.items() if data is not None)

    @property
    def removed(self) -> list[str]:
        """The files removed: made after the point."""
        return sorted(path for path, (_, data) in self.held.items() if data is None)


def point_of(records: list[Record], before_seq: int) -> tuple[int, SessionState]:
    """The index in `records` of the event gone back before: the agent's step (its reply with
    its calls) or the person's message, after the start, with no call under way; and the session's
    state just before it. CannotGoBack."""
    index = next((i for i, record in enumerate(records) if record.seq == before_seq), None)
    if index is None:
        raise CannotGoBack(f"the session has no event {before_seq}")
    if not isinstance(records[index].event, AssistantMessage | UserMessage):
        raise CannotGoBack("a session goes back to before one of the agent's steps or one of your messages")
    state = replayed(records[0].session_id, records[:index])
    if state.pending_calls:  # (a message sent while a command ran, in a log of an older version)
        raise CannotGoBack("the agent's calls were under way at that point; go back to before its step instead")
    return index, state


def step_seq(records: list[Record], step: int) -> int:
    """The seq of the agent's step `step` (its turn: `tripane show` prints [turn N])."""
    steps = [record for record in records if isinstance(record.event, AssistantMessage)]
    found = next((record for record in steps if record.event.turn == step), None)
    if found is None:
        raise CannotGoBack(f"the session has no step {step}: its agent took {len(steps)} (`tripane show` numbers them)")
    return found.seq


def replayed(session_id: str, records: list[Record]) -> SessionState:
    state = SessionState(session_id)
    for record in records:
        state.apply(record)
    return state


def going_back(store: Store, data_dir: Path, source: str, before_seq: int) -> GoingBack:
    """What going back to before event `before_seq` of `source` would put back. Blocking."""
    records = store.records(source)
    index, then = point_of(records, before_seq)
    kept, after = records[:index], records[index:]
    earlier = _tally(kept, "")
    later = _tally(after, earlier.workdir)
    workdir = Path(later.workdir)  # where it is now (moved since, perhaps)
    if not workdir.is_dir():
        raise CannotGoBack(f"the work folder {workdir} is not there (moved or deleted?): its files cannot be put back")
    changed = set(later.changed)
    for record in after:  # put back as before the session by the person: changed, all the same
        if isinstance(record.event, FilesPutBack):
            changed |= {*record.event.paths, *record.event.removed}
    found = GoingBack(source, before_seq, kept[-1].ts, workdir, then.turn + 1,
                      changed_by_others=later.changed_since & changed, unnamed=later.unnamed)
    folder = session_dir(data_dir, source)
    snapshot, originals = WorkFolderSnapshot(folder), Originals(folder)
    tree = snapshot.tree_at(found.back_to) if snapshot.taken else None
    try:
        if tree is not None:  # the folder as the agent left it then
            found.held = snapshot.held_many(workdir, changed, tree) if changed else {}
            return found
        from_copy = []
        first_command = next((r.ts for r in records if isinstance(r.event, ToolResult) and r.event.name == SHELL_TOOL),
                             None)
        if first_command is not None and first_command <= found.back_to:  # copied before the point (an older log)
            between: set[str] = set()
            unknown = set(earlier.changed)
        else:  # the copy, if any, was made after the point: a file the tools left alone until then is as it was
            between = set(_tally([r for r in after if first_command is None or r.ts < first_command],
                                 earlier.workdir).changed)
            unknown = between & set(earlier.changed)
        calls_after = {call.id for r in after if isinstance(r.event, AssistantMessage) for call in r.event.tool_calls}
        for path in sorted(changed):
            if later.first_changed_by.get(path) == "tool":  # just before that write, as the file tools kept it
                try:
                    kept_then, data = originals.before_first_write_after(path, found.back_to, calls_after)
                except ValueError as exc:
                    found.not_put_back[path] = str(exc)
                    continue
                if kept_then:
                    found.held[path] = (None, data)
                    continue
            if snapshot.taken and path not in between and path not in unknown:
                from_copy.append(path)
            elif path not in unknown and originals.kept(path):
                try:
                    found.held[path] = (None, originals.before(path))
                except ValueError as exc:  # too large to have been kept
                    found.not_put_back[path] = str(exc)
            elif path in unknown:
                found.not_put_back[path] = ("the agent changed it before that point and after, before Tripane kept "
                                            "the folder at each step")
            else:
                found.not_put_back[path] = "no copy of it from then was kept (the work folder was not copied)"
        if from_copy:
            found.held |= snapshot.held_many(workdir, from_copy)
    except (SnapshotFailed, OriginalsUnreadable) as exc:
        raise CannotGoBack(f"what the files were then cannot be read: {exc}") from exc
    return found


def _tally(records: list[Record], workdir: str) -> ChangeTally:
    tally = ChangeTally(workdir=workdir)
    for record in records:
        tally.add(record)
    return tally


def go_back(store: Store, data_dir: Path, plan: GoingBack, put_back: bool = True) -> str:
    """Begin a new session from the point `plan` (going_back) found, and put back the files it
    holds unless `put_back` is False. Returns the new session's id. Refused (CannotGoBack) while
    a process runs the session; the new session and its folder are made whole or not at all."""
    source = plan.source
    if lock_taken(run_lock(data_dir, source)):
        raise CannotGoBack("the session is at work (here, or in `tripane run`): stop its run first")
    records = store.records(source)
    index, state = point_of(records, plan.before_seq)
    kept = records[:index]
    row = store.session(source)
    assert state.config is not None  # (point_of: the start is among them)
    new_id = claim_session_id(store, data_dir, state.config.task, state.model)
    folder = session_dir(data_dir, new_id)
    try:
        store.add_recorded(new_id, [(record.ts, record.event) for record in kept])
        _copy_folder(session_dir(data_dir, source), folder, plan.back_to)
        _write_files_as_then(store, source, state, session_dir(data_dir, source), folder)
        for record in kept:  # the summaries of the compactions taken over, not of those after the point
            if isinstance(record.event, Compaction):
                save_summary(folder, record.event)
        _keep_originals_of(folder, _tally(kept, "").changed.keys())
    except BaseException:
        store.delete_session(new_id)
        remove_folder(folder)
        raise
    put, removed, not_put = [], [], dict(plan.not_put_back)
    if put_back:
        snapshot = WorkFolderSnapshot(folder)
        for path, held in sorted(plan.held.items()):
            try:
                snapshot.write_held(plan.workdir, path, held)
            except (OSError, ValueError) as exc:
                not_put[path] = f"it could not be written: {exc}"
                continue
            (put if held[1] is not None else removed).append(path)
        try:
            snapshot.mark(plan.workdir)  # as it is now: what changes next is told the agent
        except OSError as exc:
            log.warning("the work folder was not marked after going back: %s", exc)
    branched = SessionBranched(
        source=source, back_to=plan.back_to, step=plan.step, source_title=row.title, put_back=tuple(put),
        removed=tuple(removed),
        not_put_back=tuple(sorted(not_put)) if put_back else tuple(plan.changed), left_as_they_are=not put_back,
        framed_as=(*framed_as(records), (plan.before_seq, source)))
    store.append(new_id, branched)
    store.update_session(new_id, title=branch_title(row.title, plan.step), status=BRANCHED,
                         workdir=str(plan.workdir))
    return new_id


def branch_title(title: str, step: int) -> str:
    """"Fix final_price (from step 4)": the list tells it from the session it went back in."""
    return f"{one_line(title, TITLE_CHARS)} (from step {step})"


def _copy_folder(source: Path, target: Path, back_to: str) -> None:
    """The session's files, but its lock, the three files (written as they were then) and what
    its copy of the work folder kept after the point."""
    skipped = {RUN_LOCK, *FILES, ORIGINALS_DIR}
    target.mkdir(parents=True, exist_ok=True)
    if not source.is_dir():
        return
    for path in sorted(source.rglob("*")):
        inside = path.relative_to(source)
        if inside.parts[0] in skipped or path.name.endswith(".tmp") or not path.is_file():
            continue
        copy = target / inside
        copy.parent.mkdir(parents=True, exist_ok=True)
        if inside.as_posix().startswith(WRITTEN_ONCE):
            _link_or_copy(path, copy)
        elif inside.as_posix() == SUMMARIES:
            continue  # written again from the compactions taken over (_copy_folder's caller)
        elif inside.as_posix() == f"{SNAPSHOT_DIR}/{MARKS_NAME}":
            copy.write_text("".join(f"{line}\n" for line in path.read_text(encoding="utf-8").splitlines()
                                    if _marked_by(line, back_to)), encoding="utf-8")
        else:
            shutil.copy2(path, copy)
    (target / ORIGINALS_DIR).mkdir(exist_ok=True)
    if (source / ORIGINALS_DIR).is_dir():
        for path in (source / ORIGINALS_DIR).iterdir():
            if path.is_file():
                _link_or_copy(path, target / ORIGINALS_DIR / path.name)


def _marked_by(line: str, back_to: str) -> bool:
    try:
        return str(json.loads(line)["at"]) <= back_to
    except (ValueError, KeyError, TypeError):
        return False


def _link_or_copy(path: Path, copy: Path) -> None:
    try:
        os.link(path, copy)
    except OSError:  # another disk, or one without links (FAT)
        shutil.copy2(path, copy)


def _write_files_as_then(store: Store, source: str, state: SessionState, source_folder: Path, folder: Path) -> None:
    """task_plan.md, findings.md and progress.md as the point left them, from the log."""
    for name in FILES:
        info = state.files.get(name)
        if info is None:
            continue
        try:
            text = text_at(file_versions(store, source, name), info.version)
        except Unrebuildable as exc:  # the session opens it as it is, as an edit from outside
            log.warning("session %s: %s version %d cannot be rebuilt (%s); going back keeps it as it is now",
                        source, name, info.version, exc)
            now = source_folder / name
            if now.exists():
                shutil.copy2(now, folder / name)
            continue
        atomic_write(folder / name, text)


def _keep_originals_of(folder: Path, paths) -> None:
    """originals/index.json with the files the agent changed before the point only: one it first
    changed after is, in the new session, a file it has not changed (its copy stays unlisted)."""
    index_path = folder / ORIGINALS_DIR / INDEX_NAME
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(index, dict):
        return
    wanted = set(paths)
    kept = {path: entry for path, entry in index.items() if path in wanted}
    index_path.unlink()  # (a link to the other session's: written anew, not through it)
    if kept:
        atomic_write(index_path, json.dumps(kept, indent=1, ensure_ascii=False))

