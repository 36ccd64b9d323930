from __future__ import annotations

import random
import sqlite3

import pytest

import core.store
from core.events import (
    AssistantMessage,
    ModelChanged,
    SessionStarted,
    ToolCall,
    ToolResult,
    UserMessage,
)
from core.store import (
    CHECKPOINT_BYTES,
    DamagedDatabase,
    SessionRow,
    Store,
    StoreError,
    rows_matching,
    set_aside,
)


def test_events_are_appended_in_order_and_survive_reopening(data_dir):
    path = data_dir / "tripane.db"
    store = Store(path)
    store.create_session("s1", task="Task one\nmore", model="m")
    seqs = [store.append("s1", UserMessage(f"m{i}")).seq for i in range(5)]
    store.close()

    reopened = Store(path)
    assert seqs == [1, 2, 3, 4, 5]
    assert [r.event.text for r in reopened.records("s1")] == [f"m{i}" for i in range(5)]
    assert reopened.records("s1", after_seq=3)[0].seq == 4
    assert reopened.session("s1").title == "Task one"
    assert reopened.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reopened.close()


def test_sessions_are_found_by_prefix_and_deleted(store):
    store.create_session("20260101-aaaa", task="a", model="m")
    store.create_session("20260102-bbbb", task="b", model="m")
    assert store.find_session("20260102").id == "20260102-bbbb"
    with pytest.raises(StoreError, match="2 sessions match"):
        store.find_session("2026")
    store.delete_session("20260101-aaaa")
    assert [s.id for s in store.sessions()] == ["20260102-bbbb"]


def test_writes_seen_change_with_every_write_of_any_connection_and_only_then(data_dir):
    mine, other = Store(data_dir / "tripane.db"), Store(data_dir / "tripane.db")  # (another process's)
    mine.create_session("s1", task="a", model="m")
    before = mine.writes_seen()
    mine.sessions()  # reading writes nothing
    assert mine.writes_seen() == before
    other.update_session("s1", status="ended:done")
    after_other = mine.writes_seen()
    assert after_other != before
    mine.update_session("s1", status="running")
    assert mine.writes_seen() != after_other
    mine.close()
    other.close()


@pytest.mark.parametrize("content", [b"hello, not a database", b"\x00\x01\x02" * 100])
def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(data_dir, content):
    path = data_dir / "tripane.db"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not an SQLite database.*left untouched"):
        Store(path)
    assert path.read_bytes() == content


def test_another_applications_sqlite_file_is_refused_and_left_untouched(data_dir):
    path = data_dir / "tripane.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another application"):
        Store(path)
    assert path.read_bytes() == before


def test_a_damaged_database_gives_a_clear_error(data_dir):
    path = data_dir / "tripane.db"
    store = Store(path)
    store.create_session("s1", task="t", model="m")
    for i in range(300):
        store.append("s1", UserMessage("x" * 500))
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    raw = bytearray(path.read_bytes())
    raw[4096:4096 * 6] = b"\xff" * (4096 * 5)  # scribble over pages after the header
    path.write_bytes(bytes(raw))
    damaged = bytes(raw)

    with pytest.raises(StoreError, match="damaged|database error|malformed"):
        opened = Store(path)
        opened.records("s1")
    assert path.read_bytes() == damaged


def test_a_database_damaged_where_it_starts_can_be_set_aside_and_a_new_one_started(data_dir):
    path = data_dir / "tripane.db"
    store = Store(path)
    store.create_session("s1", task="t", model="m")
    store.close()
    raw = bytearray(path.read_bytes())
    raw[100:4096] = b"\xff" * (4096 - 100)  # the schema, on the first page after SQLite's header
    path.write_bytes(bytes(raw))
    with pytest.raises(DamagedDatabase) as refused:
        Store(path)
    assert refused.value.path == path and "damaged" in refused.value.what
    (data_dir / "tripane.db-wal").write_bytes(b"a log that belongs to the damaged file")

    aside = set_aside(path)

    assert aside.parent == data_dir and aside.name.startswith("tripane.db.damaged-")
    assert aside.read_bytes() == bytes(raw)  # kept whole, under a name that says why
    assert aside.with_name(aside.name + "-wal").read_bytes() == b"a log that belongs to the damaged file"
    assert not (data_dir / "tripane.db-wal").exists()
    fresh = Store(path)
    assert fresh.sessions() == []
    fresh.close()
    assert set_aside(path) != aside  # a second one the same second gets a name of its own


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_a_database_whose_damage_reads_as_missing_rows_is_found_damaged_not_refused_for_what_follows(data_dir, seed):
    """Scribbled pages can read as no rows: the record of the schema's migrations, read as empty,
    made Tripane create its tables again, and the person was told 'table "sessions" already
    exists', with nothing to do about it. SQLite's own check finds the damage."""
    path = data_dir / "tripane.db"
    store = Store(path)
    for k in range(3):
        store.create_session(f"s{k}", task=f"task {k}", model="m")
        for i in range(60):
            store.append(f"s{k}", ToolResult(f"c{i}", "shell_run", i % 3 != 0, f"output {i} " * (i % 17 + 1)))
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    raw, scribble = bytearray(path.read_bytes()), random.Random(seed)
    for i in range(4096, len(raw), 7):
        raw[i] = scribble.randrange(256)
    path.write_bytes(bytes(raw))

    with pytest.raises(DamagedDatabase, match="is damaged") as refused:
        Store(path)
    assert "already exists" not in refused.value.what
    assert path.read_bytes() == bytes(raw)  # untouched: the person chooses to set it aside


def test_a_file_that_is_not_sqlite_is_a_damaged_database(data_dir):
    path = data_dir / "tripane.db"
    path.write_bytes(b"a shopping list")
    with pytest.raises(DamagedDatabase):
        Store(path)


def test_a_locked_database_is_refused_but_never_called_damaged(data_dir, monkeypatch):
    """Another program holding the file locked: setting it aside would lose a good database."""
    path = data_dir / "tripane.db"
    Store(path).close()
    monkeypatch.setattr(core.store, "BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked") as refused:
            Store(path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not isinstance(refused.value, DamagedDatabase)
    Store(path).close()  # and it opens once the other program lets go


def events_in_database_file(path) -> int:
    """The events the database file itself holds, not counting those still only in its WAL."""
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'events'").fetchone():
            return 0  # even the tables are still only in the WAL
        return conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    finally:
        conn.close()


def test_the_wal_is_copied_into_the_database_by_a_worker_not_by_an_append(data_dir):
    """Copying the WAL and syncing the file took up to 25 ms inside an append, on the thread that
    runs the window; the writer's connection no longer does it."""
    path = data_dir / "tripane.db"
    store = Store(path)
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    store.create_session("s1", task="t", model="m")
    text = "x" * 4_000
    count = CHECKPOINT_BYTES // len(text) + 1  # just over the amount that calls for a checkpoint
    for i in range(count):
        store.append("s1", UserMessage(f"{i} {text}"))
    # The worker's passes, to their end. Not wait(): that tells the worker the store is closing, and
    # a worker told so before its first pass copies nothing (the close does) - this test's old flake.
    store._checkpoints._worker.join()
    assert events_in_database_file(path) == count
    assert [r.event.text[:2] for r in store.records("s1")[:2]] == ["0 ", "1 "]  # and readable as ever
    store.close()


def test_a_store_closes_while_a_checkpoint_runs(data_dir):
    path = data_dir / "tripane.db"
    store = Store(path)
    store.create_session("s1", task="t", model="m")
    for i in range(CHECKPOINT_BYTES // 4_000 + 1):
        store.append("s1", UserMessage("y" * 4_000))
    store.close()  # waits for the worker's current pass, then closes
    assert events_in_database_file(path) == CHECKPOINT_BYTES // 4_000 + 1  # the last close copies the rest


def test_sessions_mentioning_searches_what_conversations_say_not_the_events_fields(store):
    for sid in ("a", "b", "c", "d"):
        store.create_session(sid, task="t", model="m")
    store.append("a", SessionStarted(task="Fix the parser", model="openai/gpt-4o-mini", workdir="/w"))
    store.append("b", AssistantMessage("ok", (ToolCall("c1", "shell_run", '{"command": "pytest -k \\"slow_tests\\""}'),),
                                       model="m", reasoning="The fixture is stale."))
    store.append("b", ToolResult("c1", "shell_run", False, "E   ImportError: cannot import name 'zed'\n100% done"))
    store.append("c", UserMessage("Use PostgreSQL, not SQLite — 数据库; журнал of the été"))
    store.append("d", UserMessage("nothing to see"))
    store.db.execute("UPDATE events SET data = '{not json' WHERE session_id = 'd'")  # a damaged row is passed over
    found = {text: store.sessions_mentioning(text) for text in (
        "PARSER", "importerror", "slow_tests", "100%", "fixture is", "name 'zed'", "数据库", "\"slow_tests\"",
        "content", "model", "tool_calls", "gpt-4o", "nothing", "ab%cd", "1_0", "ЖУРНАЛ", "ÉTÉ", "étÉ")}
    assert found == {"importerror": {"b"}, "slow_tests": {"b"}, "100%": {"b"}, "fixture is": {"b"},
                     "PARSER": set(),  # the task: the sessions list matches it with the title
                     "name 'zed'": {"b"}, "数据库": {"c"}, "\"slow_tests\"": {"b"},
                     # field names every event has, and values that are not what was said, find nothing
                     "content": set(), "model": set(), "tool_calls": set(), "gpt-4o": set(),
                     "nothing": set(),  # only in the damaged row
                     "ab%cd": set(), "1_0": set(),  # LIKE's wildcards are taken as they are
                     "ЖУРНАЛ": {"c"}, "ÉTÉ": {"c"}, "étÉ": {"c"}}  # any case beyond ASCII too



def test_a_search_finds_words_whatever_marks_they_are_written_with(store):
    for sid in ("a", "b", "c"):
        store.create_session(sid, task="t", model="m")
    store.append("a", AssistantMessage("قرّب المبالغ إلى سنتين", model="m"))  # the agent's shadda
    store.append("b", UserMessage("احسب الإجمالي في الملف"))  # alef with hamza
    store.append("c", UserMessage("שָׁלוֹם, le café est prêt"))
    found = {text: store.sessions_mentioning(text) for text in (
        "قرب", "قَرِّب", "اجمالي", "שלום", "café", "PRÊT", "cafe est", "CAFÉ", "le cafe", "prete")}
    assert found == {"قرب": {"a"}, "قَرِّب": {"a"}, "اجمالي": {"b"}, "שלום": {"c"}, "café": {"c"}, "PRÊT": {"c"},
                     "cafe est": {"c"}, "CAFÉ": {"c"}, "le cafe": {"c"}, "prete": set()}
    rows = [SessionRow(id=sid, created="", updated="", task=task, title=task, status="ended:done", model="m")
            for sid, task in (("a", "قرّب المبالغ"), ("b", "Résumé the café's orders"))]
    assert [r.id for r in rows_matching(rows, "قرب")] == ["a"]
    assert [r.id for r in rows_matching(rows, "cafe")] == ["b"] and [r.id for r in rows_matching(rows, "RESUME")] == ["b"]

def test_a_long_task_is_titled_by_its_first_line_cut_between_words(store, data_dir, workdir):
    from core.memory.working import FINDINGS, PLAN
    from core.scripted import ScriptedModel
    from tests.core.helpers import make_session

    task = ("Fix the rounding bug in calc.py: total() must round half up to cents. Tests in test_calc.py.\n"
            "Do not touch average().")
    session = make_session(store, data_dir, workdir, ScriptedModel([]), task=task)

    title = store.session(session.id).title
    assert title == "Fix the rounding bug in calc.py: total() must round half up to cents. Tests in…"
    assert session.read_file(FINDINGS)[0].splitlines()[2] == f"Task: {title}"
    plan = session.read_file(PLAN)[0]
    assert plan.startswith(f"# Task Plan: {title}\n")
    assert task in plan  # the goal keeps the whole task


def test_a_session_is_found_by_its_work_folder_and_once_moved_by_its_new_place(store, data_dir, tmp_path):
    from core.scripted import ScriptedModel
    from tests.core.helpers import make_session

    shop, blog = tmp_path / "code" / "shop", tmp_path / "code" / "blog"
    shop.mkdir(parents=True)
    blog.mkdir()
    in_shop = make_session(store, data_dir, shop, ScriptedModel([]), task="Fix the cart")
    make_session(store, data_dir, blog, ScriptedModel([]), task="Write a post")

    assert store.session(in_shop.id).workdir == str(shop.resolve())
    assert [row.id for row in rows_matching(store.sessions(), "SHOP")] == [in_shop.id]
    (tmp_path / "code" / "shop").rename(tmp_path / "code" / "store-front")
    in_shop.move_workdir(tmp_path / "code" / "store-front")
    assert rows_matching(store.sessions(), "shop") == []
    assert [row.id for row in rows_matching(store.sessions(), "store-front")] == [in_shop.id]


def test_sessions_from_before_their_rows_held_the_work_folder_get_it_from_their_log(store, data_dir, tmp_path):
    from core.scripted import ScriptedModel
    from tests.core.helpers import make_session

    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    moved = make_session(store, data_dir, tmp_path / "old", ScriptedModel([]), task="Moved since")
    moved.move_workdir(tmp_path / "new")
    stayed = make_session(store, data_dir, tmp_path / "old", ScriptedModel([]), task="Stayed")
    # The database as an earlier Tripane left it: no such column, and its migration not applied.
    store.db.execute("ALTER TABLE sessions DROP COLUMN workdir")
    store.db.execute("DELETE FROM _sqlite_migrations WHERE name = 'add_session_workdir'")
    path = store.path
    store.close()

    again = Store(path)
    assert again.session(moved.id).workdir == str((tmp_path / "new").resolve())
    assert again.session(stayed.id).workdir == str((tmp_path / "old").resolve())
    again.close()


def test_sessions_started_in_the_same_second_with_the_same_random_part_get_ids_of_their_own(
        store, data_dir, workdir, monkeypatch):
    import core.session
    from core.paths import session_dir
    from core.scripted import ScriptedModel
    from tests.core.helpers import make_session

    drawn = iter(["20261127-140000-abcd", "20261127-140000-abcd", "20261127-140000-dead", "20261127-140000-beef"])
    monkeypatch.setattr(core.session, "new_session_id", lambda: next(drawn))
    session_dir(data_dir, "20261127-140000-dead").mkdir(parents=True)  # left by a deleted session
    first = make_session(store, data_dir, workdir, ScriptedModel([]), task="first")
    second = make_session(store, data_dir, workdir, ScriptedModel([]), task="second")  # a script's loop

    assert (first.id, second.id) == ("20261127-140000-abcd", "20261127-140000-beef")
    assert store.session(first.id).task == "first" and store.session(second.id).task == "second"


def test_each_sessions_model_and_server_as_they_stand(store):
    store.create_session("s1", task="a", model="openai/gpt-5.4-mini")
    store.append("s1", SessionStarted(task="a", model="openai/gpt-5.4-mini", workdir="/w"))
    store.create_session("s2", task="b", model="ollama_chat/llama3.1")
    store.append("s2", SessionStarted(task="b", model="ollama_chat/llama3.1", workdir="/w",
                                      api_base="http://127.0.0.1:11434"))
    store.append("s2", ModelChanged(model="openai/qwen3", api_base="http://10.0.0.5:8000/v1",
                                    previous="ollama_chat/llama3.1"))
    store.create_session("s3", task="c", model="m")
    assert store.servers_used(["s1", "s2", "s3"]) == {
        "s1": ("openai/gpt-5.4-mini", ""), "s2": ("openai/qwen3", "http://10.0.0.5:8000/v1")}
    assert store.servers_used([]) == {}


def _database_bytes(path) -> int:
    """The database file's size once its WAL is copied in (as at the next checkpoint)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def _fill(store: Store, sessions: int, events: int = 150) -> None:
    for s in range(sessions):
        store.create_session(f"s{s}", task="t", model="m")
        for _ in range(events):
            store.append(f"s{s}", ToolResult(call_id="c", name="file_read", ok=True, content="x = 1\n" * 1200))


def test_deleting_sessions_gives_their_room_back_to_the_disk(data_dir):
    path = data_dir / "tripane.db"
    store = Store(path)
    _fill(store, 6)
    full = _database_bytes(path)
    for s in range(1, 6):
        store.delete_session(f"s{s}")
    store.close()
    assert _database_bytes(path) < full / 3  # (one session of six is left)
    assert len(Store(path).records("s0")) == 150


def test_a_database_an_earlier_version_made_is_set_to_give_room_back(data_dir):
    path = data_dir / "tripane.db"
    store = Store(path)
    _fill(store, 3)
    store.close()
    with sqlite3.connect(path) as conn:  # as versions before this one made it: deleted sessions' room kept
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 0

    store = Store(path)
    full = _database_bytes(path)
    store.delete_session("s1")
    store.delete_session("s2")
    store.close()
    assert _database_bytes(path) < full / 2
    assert [r.seq for r in Store(path).records("s0")][-1] == 150


def test_a_database_another_process_writes_to_opens_and_is_set_to_give_room_back_later(data_dir):
    path = data_dir / "tripane.db"
    store = Store(path)
    _fill(store, 1, events=5)
    store.update_session("s0", workdir="/work")  # (as a started session's row has it)
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another Tripane, writing now
    try:
        opened = Store(path)  # opens all the same; the rewrite waits for another time
        assert len(opened.records("s0")) == 5
        assert opened.db.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
        opened.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    reopened = Store(path)
    assert reopened.db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    reopened.close()
