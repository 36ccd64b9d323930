"""Setting a damaged database aside reads back what it still holds into the new one."""

from __future__ import annotations

import random
import sqlite3

from core.events import SessionStarted, ToolResult, UserMessage, encode
from core.salvage import salvage
from core.store import Store, set_aside

PAGE = 4096


def filled(path, workdir) -> dict[str, list[tuple]]:
    """Three sessions of 150 events each; what each holds, as stored."""
    store = Store(path)
    for k in range(3):
        session_id = f"2026112{k}-080000-abc{k}"
        store.create_session(session_id, task=f"Task {k}", model="openai/gpt-4o-mini")
        store.append(session_id, SessionStarted(f"Task {k}", "openai/gpt-4o-mini", str(workdir)))
        for i in range(150):
            store.append(session_id, ToolResult(f"c{i}", "shell_run", i % 5 != 0, f"marker-{k}-{i} " + "output " * 30))
        store.append(session_id, UserMessage("the last word"))
    store.update_session("20261121-080000-abc1", title="Renamed by the person")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    held = {row.id: [(r.seq, r.ts, r.event.kind, encode(r.event)) for r in store.records(row.id)] for row in store.sessions()}
    store.close()
    return held


def damage_the_record_of_migrations(path) -> None:
    """Scribble over the page of the table that records the database's migrations: the first SQLite
    reads at opening. (Found by its root: page 2 is SQLite's own map, the file being set to give
    back the room of deleted sessions.)"""
    with sqlite3.connect(path) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = '_sqlite_migrations'").fetchone()
    raw = bytearray(path.read_bytes())
    raw[(root - 1) * PAGE:root * PAGE] = b"\xa5" * PAGE
    path.write_bytes(bytes(raw))


def read_back(path) -> tuple:
    aside = set_aside(path)
    fresh = Store(path)
    try:
        saved = salvage(aside, fresh)
        held = {row.id: [(r.seq, r.ts, r.event.kind, encode(r.event)) for r in fresh.records(row.id)]
                for row in fresh.sessions()}
        return saved, held, {row.id: row for row in fresh.sessions()}
    finally:
        fresh.close()


def test_a_sound_database_is_read_back_whole(data_dir, workdir):
    path = data_dir / "tripane.db"
    before = filled(path, workdir)
    saved, after, rows = read_back(path)
    assert after == before and (saved.sessions, saved.events, saved.incomplete) == (3, 3 * 152, False)
    assert rows["20261121-080000-abc1"].title == "Renamed by the person"  # the person's name kept
    assert saved.words() == "3 sessions (456 events) were read back from it"


def test_a_damaged_page_costs_only_the_events_on_it(data_dir, workdir):
    path = data_dir / "tripane.db"
    before = filled(path, workdir)
    raw = bytearray(path.read_bytes())
    page = raw.index(b"marker-1-75 ") // PAGE  # a page in the middle of the second session's log
    scribble = random.Random(7)
    raw[page * PAGE:(page + 1) * PAGE] = bytes(scribble.randrange(256) for _ in range(PAGE))
    path.write_bytes(bytes(raw))

    saved, after, rows = read_back(path)

    assert saved.incomplete and saved.sessions == 3 and "some sessions may lack steps" in saved.words()
    first, second, third = sorted(before)
    assert after[first] == before[first] and after[third] == before[third]  # untouched: whole
    kept = after[second]
    assert 100 < len(kept) < len(before[second]) and set(kept) < set(before[second])  # all but that page
    assert not any("marker-1-75 " in data for _, _, _, data in kept)
    assert kept[-1][3] == before[second][-1][3]  # what came after the damage is back
    assert rows[second].title == "Renamed by the person" and rows[first].status == "running"  # as its log says


def test_a_file_with_nothing_readable_gives_an_empty_database(data_dir, workdir):
    path = data_dir / "tripane.db"
    filled(path, workdir)
    raw = bytearray(path.read_bytes())
    raw[100:] = b"\xff" * (len(raw) - 100)  # the schema and everything after it
    path.write_bytes(bytes(raw))
    saved, after, _ = read_back(path)
    assert after == {} and saved.sessions == 0 and saved.words() == "nothing could be read back from it"


def test_the_command_line_sets_a_damaged_database_aside_and_reads_it_back(data_dir, workdir):
    from tests.core.test_cli import finish, tripane

    path = data_dir / "tripane.db"
    before = filled(path, workdir)
    damage_the_record_of_migrations(path)
    code, out, err = finish(tripane("list", data_dir=data_dir))
    assert code != 0 and "is damaged" in err and "tripane doctor --set-aside-damaged" in err

    code, out, err = finish(tripane("doctor", "--set-aside-damaged", data_dir=data_dir))

    assert "was damaged: it was set aside as tripane.db.damaged-" in out
    assert "and 3 sessions (456 events) were read back from it." in out
    assert "intact, 3 sessions" in out  # the checks then find the new one sound
    code, out, err = finish(tripane("list", data_dir=data_dir))
    assert code == 0 and all(session_id in out for session_id in before)
    code, out, err = finish(tripane("doctor", "--set-aside-damaged", data_dir=data_dir))
    assert "is intact: nothing was set aside" in out
