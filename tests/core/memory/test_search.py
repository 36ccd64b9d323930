"""The index and hybrid search over real memory files, with the real embedding model."""

from __future__ import annotations

import logging

import pytest

from core import store as store_module
from core.memory.longterm import LongTermMemory
from tests.core.memory.conftest import NOTES


def write_notes(memory: LongTermMemory, notes: dict[str, str] = NOTES) -> None:
    for rel, text in notes.items():
        path = memory.files.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def paths(hits) -> list[str]:
    return [f"{h.path}:{h.start_line}" for h in hits]


# Error codes that look alike to an embedding model: vectors cannot tell ERR_7731 from these.
LOOKALIKES = "# Error codes seen\n\n" + "".join(
    f"## {code}\n- {code} error raised; the error code {code} was logged and the run was retried\n\n"
    for code in ("ERR_7713", "ERR_7371", "ERR_1773", "ERR_7137", "ERR_3177", "ERR_7317", "ERR_1737"))


def test_an_exact_identifier_is_found_by_keywords_even_where_vectors_rank_it_low(long_memory):
    write_notes(long_memory, {**NOTES, "daily/2026-11-11.md": LOOKALIKES})
    target = "daily/2026-11-10.md:8"  # the "Parser crash" entry
    by_vectors = paths(long_memory.search("ERR_7731", mode="vector", top_k=10))
    assert by_vectors.index(target) > 0  # the code means nothing to the embedding model
    hybrid = long_memory.search("ERR_7731", top_k=3)
    assert paths(hybrid)[0] == target
    assert hybrid[0].keyword == 1.0 and hybrid[0].score > hybrid[1].score
    # A function name, too.
    assert paths(long_memory.search("read_header", top_k=1)) == [target]


def test_a_paraphrase_is_found_by_meaning_without_shared_words(long_memory):
    write_notes(long_memory)
    query = "how can builds on the build server get quicker"
    target = "daily/2026-11-12.md:3"  # "Slow pipeline": continuous integration, pip cache
    assert target not in paths(long_memory.search(query, mode="keyword", top_k=10))
    assert paths(long_memory.search(query, top_k=1)) == [target]


def test_an_edited_file_is_reindexed_and_a_deleted_one_leaves_the_index(long_memory):
    write_notes(long_memory)
    assert long_memory.search("mkdocs", top_k=1)[0].path == "daily/2026-11-12.md"
    day = long_memory.files.root / "daily/2026-11-12.md"
    day.write_text(day.read_text(encoding="utf-8").replace("mkdocs", "sphinx"), encoding="utf-8")
    report = long_memory.refresh()
    assert (report.files_indexed, report.files_removed) == (1, 0)
    assert report.sentences_embedded == 1  # only the sentence that changed is embedded again
    assert not long_memory.search("mkdocs", mode="keyword")
    assert long_memory.search("sphinx", top_k=1)[0].path == "daily/2026-11-12.md"
    (long_memory.files.root / "daily/2026-11-10.md").unlink()
    assert long_memory.refresh().files_removed == 1
    assert not long_memory.search("ERR_7731", mode="keyword")
    # Nothing changed: nothing is read again.
    assert long_memory.refresh().files_indexed == 0


def test_without_sqlite_vec_the_exact_fallback_runs_and_says_so(data_dir, embedder, monkeypatch, caplog):
    reference = LongTermMemory(data_dir / "a", embedder)
    assert reference.status().vectors == "sqlite-vec" and reference.status().notice is None
    write_notes(reference)
    expected = paths(reference.search("quicker builds on the server", top_k=4))
    reference.close()

    # This machine's own Python: its sqlite3 has no enable_load_extension.
    import sqlite3
    monkeypatch.setattr(store_module, "_sqlite_module", lambda: sqlite3)
    with caplog.at_level(logging.WARNING, logger="core.memory.index"):
        fallback = LongTermMemory(data_dir / "b", embedder)
    status = fallback.status()
    assert status.vectors == "exact"
    assert "cannot load extensions" in status.notice and "exact" in status.notice
    assert "exact in-memory scan" in caplog.text  # the log says it too
    assert "Note:" in status.describe()
    write_notes(fallback)
    assert paths(fallback.search("quicker builds on the server", top_k=4)) == expected
    fallback.close()


def test_a_damaged_index_is_set_aside_and_rebuilt_from_the_files(data_dir, embedder):
    memory = LongTermMemory(data_dir, embedder)
    write_notes(memory)
    memory.refresh()
    memory.close()
    index = data_dir / "memory" / "index.sqlite"
    index.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8000)
    reopened = LongTermMemory(data_dir, embedder)
    assert (data_dir / "memory" / "index.damaged").exists()
    assert paths(reopened.search("ERR_7731", top_k=1)) == ["daily/2026-11-10.md:8"]
    assert (data_dir / "memory" / "daily" / "2026-11-10.md").read_text(encoding="utf-8") == NOTES["daily/2026-11-10.md"]
    reopened.close()


def test_without_an_embedding_model_search_uses_keywords_and_says_so(data_dir):
    memory = LongTermMemory(data_dir, None, embedder_note="no embedding model configured")
    write_notes(memory)
    hits = memory.search("ERR_7731")
    assert hits[0].path == "daily/2026-11-10.md" and hits[0].vector == 0
    assert memory.status().vectors == "none" and "no embedding model" in memory.status().notice
    memory.close()


def test_recency_decay_applies_to_daily_logs_but_never_to_memory_md(long_memory):
    write_notes(long_memory)
    long_memory.remember("Wheels are cached between CI jobs with the pip download cache", kind="fact", source="s-c")
    plain = {h.path: h.score for h in long_memory.search("pip download cache", top_k=10)}
    decayed = {h.path: h.score for h in long_memory.search("pip download cache", top_k=10, half_life_days=7)}
    assert decayed["MEMORY.md"] == plain["MEMORY.md"]
    assert decayed["daily/2026-11-12.md"] < plain["daily/2026-11-12.md"] / 2


def test_memory_get_numbers_lines_and_refuses_paths_outside_memory(long_memory):
    write_notes(long_memory)
    text = long_memory.get("daily/2026-11-10.md", from_line=8, lines=2)
    assert "    8  ## 11:40 – Parser crash" in text and "more lines" in text
    for bad in ("../tripane.db", "/etc/passwd", "index.sqlite"):
        with pytest.raises(ValueError, match="not a memory file"):
            long_memory.get(bad)
    with pytest.raises(FileNotFoundError):
        long_memory.get("daily/1999-01-01.md")


def test_a_query_of_only_punctuation_or_fts_syntax_is_not_an_error(long_memory):
    write_notes(long_memory)
    assert long_memory.search('"NEAR( AND * ^', mode="keyword") == []
    assert long_memory.search("ERR_7731 OR (", top_k=1)[0].path == "daily/2026-11-10.md"
    with pytest.raises(ValueError, match="empty"):
        long_memory.search("   ")


def test_auto_takes_the_in_memory_scan_for_a_large_index_and_says_why(data_dir, embedder, monkeypatch):
    from core.memory import index as index_module

    memory = LongTermMemory(data_dir, embedder)
    write_notes(memory)
    memory.refresh()
    expected = paths(memory.search("quicker builds on the server", top_k=3))
    memory.close()
    monkeypatch.setattr(index_module, "AUTO_EXACT_ABOVE", 3)  # the notes make 7 chunks
    large = LongTermMemory(data_dir, embedder)
    status = large.status()
    assert status.vectors.startswith("exact (") and "faster than sqlite-vec" in status.vectors
    assert status.notice is None  # a choice, not a fallback
    assert paths(large.search("quicker builds on the server", top_k=3)) == expected
    large.close()


def test_huge_and_binary_files_are_skipped_with_the_reason_and_the_rest_is_indexed(long_memory, caplog):
    from core.memory import index as index_module

    write_notes(long_memory)
    root = long_memory.files.root
    (root / "daily" / "2026-11-13.md").write_bytes(b"# 2026-11-13\n\x00\x01\x02binary")
    (root / "pasted.md").write_text("# Pasted\n" + "a line of a long log\n" * 120_000, encoding="utf-8")  # 2.5 MB
    with caplog.at_level(logging.WARNING, logger="core.memory.index"):
        report = long_memory.refresh()
    assert sorted(r.split(":")[0] for r in report.skipped) == ["daily/2026-11-13.md", "pasted.md"]
    assert any("binary" in r for r in report.skipped) and any("MB" in r for r in report.skipped)
    assert len(caplog.records) == 2
    assert long_memory.search("ERR_7731", top_k=1)[0].path == "daily/2026-11-10.md"
    assert index_module.MAX_FILE_BYTES < (root / "pasted.md").stat().st_size
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="core.memory.index"):
        assert len(long_memory.refresh().skipped) == 2
    assert not caplog.records  # said once per version of a file, not at every search


CHINESE = {"daily/2026-11-13.md": "# 2026-11-13\n\n## 解析器崩溃\n- 导入CSV文件时解析器崩溃，原因是空行\n- 修复：跳过空行\n\n"
                                  "## 发布\n- 打了v2.3.0标签，写了更新日志\n"}


def test_chinese_words_within_a_clause_are_found_by_keywords(long_memory):
    # Written without spaces, a whole clause was one token: no word within it was found.
    write_notes(long_memory, {**NOTES, **CHINESE})
    crash = "daily/2026-11-13.md:3"
    for query in ("解析器", "空行", "CSV 解析器", "解析器为什么崩溃"):  # a word, a word beside Latin, a question
        assert paths(long_memory.search(query, mode="keyword", top_k=1)) == [crash], query
    assert paths(long_memory.search("更新日志", mode="keyword", top_k=1)) == ["daily/2026-11-13.md:7"]
    assert paths(long_memory.search("read_header", mode="keyword", top_k=1)) == ["daily/2026-11-10.md:8"]


def test_a_keyword_index_of_an_older_form_is_made_again_without_embedding_again(data_dir, embedder):
    from core.memory.index import searchable

    memory = LongTermMemory(data_dir, embedder)
    write_notes(memory, CHINESE)
    memory.refresh()
    conn = memory.index.conn  # as an older Tripane left it: the clauses whole, and no form noted
    conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')")
    conn.execute("INSERT INTO chunks_fts (rowid, heading, text) SELECT id, heading, text FROM chunks")
    conn.execute("DELETE FROM meta WHERE key = 'fts_form'")
    assert not memory.search("空行", mode="keyword") and searchable("空行") != "空行"
    memory.close()

    again = LongTermMemory(data_dir, embedder)
    try:
        report = again.refresh()  # cut into chunks again, as Chinese now is, its vectors from the cache
        assert report.files_indexed == 1 and report.sentences_embedded == 0
        assert paths(again.search("空行", mode="keyword", top_k=1)) == ["daily/2026-11-13.md:3"]
    finally:
        again.close()


def test_vectors_of_sentences_no_note_holds_any_more_are_dropped_and_the_rest_kept(long_memory, monkeypatch):
    """The sentence cache kept the vector of every wording a note ever had, for as long as the index lived."""
    from core.memory import index as index_module

    monkeypatch.setattr(index_module, "CACHE_PRUNE_AT", 10)
    write_notes(long_memory)
    long_memory.refresh()
    cache = long_memory.index.conn
    held = lambda: cache.execute("SELECT count(*) FROM sentence_cache").fetchone()[0]  # noqa: E731
    before = held()
    day = long_memory.files.root / "daily/2026-11-12.md"
    for version in range(12):  # a day's notes rewritten again and again
        day.write_text("# 2026-11-12\n\n## Notes\n" + "".join(
            f"- Build {n} took {version} minutes on the old runner.\n" for n in range(10)), encoding="utf-8")
        long_memory.refresh()
    assert held() < before + 60  # 120 wordings came and went
    # What the notes hold now is kept: written again, the file needs no sentence embedded anew.
    day.write_text(day.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    report = long_memory.refresh()
    assert report.files_indexed == 1 and report.sentences_embedded == 0
    assert long_memory.search("how slow was the build", top_k=1)[0].path == "daily/2026-11-12.md"
    assert long_memory.search("ERR_7731", top_k=1)[0].path == "daily/2026-11-10.md"


def test_arabic_and_hebrew_words_are_found_whatever_marks_they_are_written_with(long_memory):
    # FTS5 cut a word at each of its marks: "قرّب" was two words, and neither "قرب".
    write_notes(long_memory, {**NOTES, "daily/2026-11-14.md": "# 2026-11-14\n\n## الفواتير\n"
                              "- قرّب المبالغ إلى سنتين قبل الإجمالي\n- שָׁלוֹם: ברכת הפתיחה\n"})
    for query in ("قرب المبالغ", "الاجمالي", "قَرِّب", "שלום"):
        assert paths(long_memory.search(query, mode="keyword", top_k=1)) == ["daily/2026-11-14.md:3"], query
