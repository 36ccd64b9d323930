"""Writing the layers: the guard, MEMORY.md's entries, skills, the lifecycle."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest

from core.memory.chunking import chunk_markdown, estimate_tokens
from core.memory.guard import MemoryRefused, check
from core.memory.layers import Episode, Skill, parse_skill
from core.memory.longterm import LongTermMemory


@pytest.mark.parametrize("text, what", [
    ("The OpenAI key is sk-proj-AbCdEf0123456789GhIjKl", "API key"),
    ("deploy with AKIAIOSFODNN7EXAMPLE", "AWS access key"),
    ("use ghp_16C7e42F292c6912E7710c838347Ae178B4a for pushes", "GitHub token"),
    ("login with password: hunter2hunter2", "password or secret"),
    ("the db is postgres://admin:s3cretpw@db.internal/app", "credentials in a URL"),
    ("header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU", "bearer"),
    ("the value Zx8Qp2Lm9Rt5Vb3Nk7Hg1Jd6Fs4Wc0Ya is needed", "key or token"),
    ("results are in /tmp/pytest-of-root/pytest-3/out.txt", "temporary path"),
    ("the server runs as pid 48213", "process id"),
])
def test_the_guard_refuses_secrets_and_temporary_values(text, what):
    with pytest.raises(MemoryRefused, match=what):
        check(text)


def test_the_guard_lets_ordinary_technical_facts_through():
    for text in ("parse_config raises ERR_4821 when the YAML has tabs",
                 "Commit 4f2a9c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d fixed the race in the scheduler",
                 "The CI uses Python 3.11 and pytest 8 with --strict-markers",
                 "https://docs.python.org/3/library/sqlite3.html documents enable_load_extension"):
        check(text, fact=True)
    with pytest.raises(MemoryRefused, match="unverified"):
        check("The flaky test is probably caused by a race", fact=True)


def test_a_secret_is_refused_by_the_writer_and_memory_md_is_unchanged(long_memory):
    before = long_memory.files.memory_path.read_text(encoding="utf-8")
    with pytest.raises(MemoryRefused, match="API key"):
        long_memory.remember("Use sk-ant-api03-AbCdEfGhIjKlMnOpQrSt to call Claude", kind="fact", source="s1")
    with pytest.raises(MemoryRefused):
        long_memory.save_skill("Deploy", ["deploying"], ["export TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a"],
                               [], source="s1")
    assert long_memory.files.memory_path.read_text(encoding="utf-8") == before
    assert not list(long_memory.files.skills_dir.glob("*.md"))


def test_new_information_supersedes_without_overwriting_and_contradictions_are_flagged(long_memory):
    first, _ = long_memory.remember("The CI runs on Python 3.11", kind="fact", source="s1")
    pref, _ = long_memory.remember("The person wants answers in French", kind="preference", source="s1")
    assert (first.id, pref.id, pref.section) == ("m1", "m2", "Preferences")
    # Same subject, a different number, no `supersedes`: kept, and flagged for the person.
    second, contradicts = long_memory.remember("The CI runs on Python 3.12", kind="fact", source="s2")
    assert [e.id for e in contradicts] == ["m1"]
    text = long_memory.files.memory_path.read_text(encoding="utf-8")
    assert "- [m1] The CI runs on Python 3.11 — source: s1," in text  # the old entry is still there
    assert "- m3 may contradict m1" in text.split("## Contradictions to confirm")[1]
    # Declared as superseding: the old entry is marked, not removed.
    third, contradicts = long_memory.remember("The CI runs on Python 3.13", kind="fact", source="s3",
                                              supersedes="m3")
    entries = {e.id: e for e in long_memory.files.entries()}
    assert entries["m3"].superseded_by == "m4" and entries["m4"].supersedes == "m3"
    assert entries["m1"].text == "The CI runs on Python 3.11"
    # The same fact again is not a duplicate entry.
    again, _ = long_memory.remember("the ci runs on python 3.13", kind="fact", source="s4")
    assert again.id == "m4"
    with pytest.raises(MemoryRefused, match="no entry m99"):
        long_memory.remember("Something else", kind="fact", source="s4", supersedes="m99")


def test_skills_are_versioned_and_match_tasks_by_their_triggers(long_memory):
    skill = long_memory.save_skill("Fix failing tests", ["the task asks to fix failing unit tests",
                                                         "pytest reports failures"],
                                   ["Run the failing test alone", "Fix the cause", "Run the whole suite"],
                                   ["shell_run", "file_edit"], source="s1")
    assert skill.versions[0].startswith("v1 ")
    skill = long_memory.save_skill("Fix failing tests", ["the task asks to fix failing unit tests",
                                                         "pytest reports failures"],
                                   ["Run the failing test alone", "Read the first error", "Fix the cause",
                                    "Run the whole suite"], ["shell_run", "file_edit"], source="s2",
                                   change="read the first error before fixing")
    reread = parse_skill(long_memory.files.skill_path("fix-failing-tests").read_text(encoding="utf-8"),
                         "fix-failing-tests")
    assert [v.split(" ")[0] for v in reread.versions] == ["v1", "v2"] and len(reread.steps) == 4
    assert "read the first error" in reread.versions[1]

    strong = long_memory.skills_for("Our pytest run shows 3 failures, repair them")
    assert strong and strong[0].skill.slug == "fix-failing-tests" and strong[0].injected
    assert long_memory.skills_for("Translate the README into French") == []

    long_memory.files.record_skill_use("fix-failing-tests", succeeded=True)
    long_memory.files.record_skill_use("fix-failing-tests", succeeded=False)
    record = parse_skill(long_memory.files.skill_path("fix-failing-tests").read_text(encoding="utf-8"), "x")
    assert (record.successes, record.uses) == (1, 2)


def test_an_episode_is_appended_to_the_daily_log(long_memory):
    episode = Episode(title="Parser crash", asked="find the crash", done="stripped the BOM",
                      failed=("shell_run:error: pytest failed",), tool_calls=12, errors=1, minutes=14.2,
                      session_id="s-b", status="done")
    when = datetime(2026, 11, 22, 10, 30)
    path = long_memory.files.append_episode(episode, when)
    long_memory.files.append_episode(episode, when.replace(hour=11))
    text = path.read_text(encoding="utf-8")
    assert path.name == "2026-11-22.md" and text.startswith("# 2026-11-22\n")
    assert text.count("## ") == 2 and "## 10:30 – Parser crash" in text
    assert "- Failed: shell_run:error: pytest failed" in text and "12 tool calls, 1 error, 14 min" in text


def test_doctor_proposes_merges_and_summarises_logs_older_than_thirty_days(long_memory):
    long_memory.remember("Releases are tagged from the main branch after the changelog is written", kind="fact",
                         source="s1")
    long_memory.remember("Releases are tagged from the main branch after the changelog is written down",
                         kind="fact", source="s2")
    today = date(2026, 11, 22)
    old_day = today - timedelta(days=45)
    episode = Episode(title="Old work", asked="an old request", done="x" * 400, failed=("a failure",),
                      tool_calls=3, errors=1, minutes=2, session_id="s-old", status="done")
    old = long_memory.files.append_episode(episode, datetime.combine(old_day, datetime.min.time()))
    recent = long_memory.files.append_episode(episode, datetime.combine(today, datetime.min.time()))
    full_text = old.read_text(encoding="utf-8")

    report = long_memory.doctor(today=today)
    assert [(a.id, b.id) for a, b, _ in report.duplicates] == [("m1", "m2")]
    assert report.old_logs == [f"daily/{old.name}"] and not report.clean

    applied = long_memory.doctor(apply=True, today=today)
    assert applied.summarised == [f"daily/{old.name}"]
    summary = old.read_text(encoding="utf-8")
    assert "- Asked: an old request" in summary and "- Failed: a failure" in summary and "x" * 300 not in summary
    assert (long_memory.files.daily_dir / "archive" / old.name).read_text(encoding="utf-8") == full_text
    assert recent.read_text(encoding="utf-8").count("x" * 400) == 1
    assert long_memory.doctor(today=today).old_logs == []  # summarised once
    # The archive is kept on disk but not searched.
    assert all("archive" not in h.path for h in long_memory.search("an old request", top_k=10))


def test_chunks_follow_headings_and_long_sections_overlap():
    body = "\n".join(f"Line {i} " + "word " * 20 for i in range(60))  # ~1,700 tokens
    text = f"# Title\nintro\n\n## Long part\n{body}\n\n## Short part\none line\n"
    chunks = chunk_markdown(text)
    long_chunks = [c for c in chunks if c.heading == "Long part"]
    assert len(long_chunks) >= 4
    assert all(estimate_tokens(c.text) <= 420 for c in long_chunks)
    for first, second in zip(long_chunks, long_chunks[1:]):
        assert second.start_line <= first.end_line  # overlapping windows
        assert second.text.startswith("## Long part")  # each window keeps its heading
    assert chunks[-1].heading == "Short part" and chunks[-1].start_line == chunks[-1].end_line - 1


WRITES = 100


def _write_facts(root: str, prefix: str, go) -> None:
    from pathlib import Path

    from core.memory.layers import MemoryFiles

    files = MemoryFiles(Path(root))
    go.wait()  # both start together, so their writes interleave
    for i in range(WRITES):
        files.remember(f"Fact {prefix} number {i} about the build", kind="fact", source=prefix)


def test_concurrent_writers_in_two_processes_lose_no_entry(long_memory):
    """The window and a `tripane run` adding facts at the same moment: each read-modify-write of
    MEMORY.md holds the folder's lock, so no entry is lost and no id is given twice."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    go = context.Event()
    workers = [context.Process(target=_write_facts, args=(str(long_memory.files.root), name, go))
               for name in ("window", "cli")]
    for worker in workers:
        worker.start()
    go.set()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    entries = long_memory.files.entries()
    assert len(entries) == 2 * WRITES and len({e.id for e in entries}) == 2 * WRITES


def save_fix_skill(memory, change: str = ""):
    return memory.save_skill("Fix failing tests", ["the task asks to fix failing unit tests", "pytest reports failures"],
                             ["Run the failing test alone", "Fix the cause", "Run the whole suite"], ["shell_run"],
                             source="s1", change=change)


def reread(memory) -> Skill:
    return parse_skill(memory.files.skill_path("fix-failing-tests").read_text(encoding="utf-8"), "fix-failing-tests")


def test_a_new_skill_is_on_trial_and_becomes_active_when_most_of_its_trial_succeeds(long_memory):
    assert save_fix_skill(long_memory).status == "probation"
    text = long_memory.files.skill_path("fix-failing-tests").read_text(encoding="utf-8")
    assert "## Status\nprobation — trial: 0 of 3 uses, 0 succeeded" in text
    message = long_memory.recall_for_task("Our pytest run shows 3 failures, repair them").text
    assert "on trial, use 1 of 3" in message
    assert long_memory.files.record_skill_use("fix-failing-tests", True) == ""
    assert long_memory.files.record_skill_use("fix-failing-tests", False) == ""
    assert reread(long_memory).why == "trial: 2 of 3 uses, 1 succeeded"
    assert long_memory.files.record_skill_use("fix-failing-tests", True) == (
        "active — passed its trial at use 3: 2 of 3 uses succeeded")
    skill = reread(long_memory)
    assert (skill.status, skill.uses, skill.successes, skill.recent) == ("active", 3, 2, "✓✗✓")
    assert "2 of 3 uses succeeded; latest first: ✓ ✗ ✓" in long_memory.files.skill_path(skill.slug).read_text(encoding="utf-8")


def test_a_skill_that_fails_its_trial_or_keeps_failing_is_neither_offered_nor_followed(long_memory):
    save_fix_skill(long_memory)
    task = "Our pytest run shows 3 failures, repair them"
    for _ in range(2):
        long_memory.files.record_skill_use("fix-failing-tests", False)
    assert long_memory.files.record_skill_use("fix-failing-tests", True) == (
        "deprecated — failed its trial at use 3: 1 of 3 uses succeeded")
    assert long_memory.skills_for(task) == []
    assert "Fix failing tests" not in (long_memory.recall_for_task(task).text or "")

    # The person sets it back by hand; five failures in a row deprecate it again.
    path = long_memory.files.skill_path("fix-failing-tests")
    path.write_text(path.read_text(encoding="utf-8").replace("deprecated — failed its trial at use 3: 1 of 3 uses succeeded",
                                                             "active"), encoding="utf-8")
    assert long_memory.skills_for(task)[0].skill.status == "active"
    said = [long_memory.files.record_skill_use("fix-failing-tests", False) for _ in range(5)]
    assert said[:4] == [""] * 4 and said[4] == "deprecated — 5 failed uses in a row"
    assert long_memory.skills_for(task) == []

    # A new version is on trial again, its record kept.
    skill = save_fix_skill(long_memory, change="read the first error before fixing")
    assert (skill.status, skill.uses) == ("probation", 8) and long_memory.skills_for(task)[0].injected


def test_a_skill_written_before_skills_had_a_status_gets_the_one_its_record_earns(long_memory):
    folder = long_memory.files.skills_dir
    folder.mkdir(parents=True, exist_ok=True)
    old = "# Skill: Deploy\n\n## Triggers\n- deploy the site\n\n## Steps\n1. Build\n2. Push\n\n## Success record\n"
    (folder / "deploy.md").write_text(old + "3 of 4 uses succeeded\n", encoding="utf-8")
    (folder / "fresh.md").write_text(old.replace("Deploy", "Fresh") + "1 of 1 uses succeeded\n", encoding="utf-8")
    found = {s.slug: (s.status, s.trial_uses) for s in long_memory.files.skills()}
    assert found == {"deploy": ("active", 0), "fresh": ("probation", 1)}


def test_the_person_retires_a_skill_or_takes_it_back(long_memory):
    save_fix_skill(long_memory)
    task = "Our pytest run shows 3 failures, repair them"
    skill = long_memory.files.set_skill_status("fix-failing-tests", "deprecated")
    assert (skill.status, skill.why) == ("deprecated", "set by you") and long_memory.skills_for(task) == []
    assert reread(long_memory).status == "deprecated"
    long_memory.files.set_skill_status("fix-failing-tests", "active")
    assert long_memory.skills_for(task)[0].skill.status == "active"  # trusted without a trial
    with pytest.raises(ValueError, match="active or deprecated"):
        long_memory.files.set_skill_status("fix-failing-tests", "probation")
    with pytest.raises(ValueError, match="there is no skill 'deploy'"):
        long_memory.files.set_skill_status("deploy", "active")


def test_past_fifty_kilobytes_the_doctor_moves_superseded_entries_out_of_memory_md(data_dir, capsys):
    from core.memory.cli import _doctor

    long_memory = LongTermMemory(data_dir)  # keywords only: embedding 50 KB would only make the test slow

    syllables = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa")
    words = [a + b + c for a in syllables for b in syllables for c in syllables]
    facts = [f"- [m{i + 1}] Project {words[i * 9]} uses " + " ".join(words[(i * 61 + k * 7) % 1000] for k in range(66))
             + " — source: s1, 2026-11-20" + (f" — superseded by m{111 + i}" if i < 8 else "") for i in range(110)]
    renamed = [f"- [m{111 + i}] Project {words[i * 9]} was renamed — source: s2, 2026-11-21 — supersedes m{i + 1}"
               for i in range(8)]
    long_memory.files.memory_path.write_text("# Long-term memory\n\n## Facts\n\n" + "\n".join(facts + renamed) + "\n",
                                             encoding="utf-8")
    report = long_memory.doctor()
    assert report.oversized and not report.clean and len(report.superseded) == 8 and report.archived == []
    before = long_memory.files.memory_path.read_text(encoding="utf-8")

    assert _doctor(long_memory, apply=False) == 0
    assert "over the 50 KB (about 12,000 tokens) it should stay under: run with --apply" in capsys.readouterr().out
    assert _doctor(long_memory, apply=True) == 0
    assert "8 superseded entries moved to archive/MEMORY.md." in capsys.readouterr().out

    text = long_memory.files.memory_path.read_text(encoding="utf-8")
    assert "superseded by" not in text and len(text) < len(before)
    assert f"- [m111] Project {words[0]} was renamed — source: s2" in text  # what superseded them stays
    archive = (long_memory.files.root / "archive" / "MEMORY.md").read_text(encoding="utf-8")
    assert archive.count("— superseded by m11") == 8 and f"- [m1] Project {words[0]} uses " in archive
    assert len(long_memory.files.entries()) == 110
    hits = long_memory.search(f"Project {words[18]} uses", mode="keyword", top_k=20)
    assert hits and all(not h.path.startswith("archive/") for h in hits)  # kept, not searched
    assert long_memory.doctor().superseded == []
    long_memory.close()


def test_chinese_notes_are_cut_into_chunks_and_compared_by_their_words():
    from core.memory.longterm import word_overlap

    # Written without spaces, a page of Chinese was one "word": about one token, never cut.
    section = "# 笔记\n\n" + "解析器在导入CSV文件时崩溃，原因是空行没有被跳过。" * 60
    assert estimate_tokens(section) > 1200  # (1,560 characters)
    chunks = chunk_markdown(section)
    assert len(chunks) >= 4 and all(estimate_tokens(c.text) <= 420 for c in chunks)
    line = section.split("\n\n", 1)[1]
    for chunk in chunks:  # windows of the text as it is, cut where words allow, from its start to its end
        assert chunk.text.split("笔记\n", 1)[1].replace("\n", "").strip() in line
    assert chunks[0].text.split("\n\n", 1)[1].startswith("解析器") and chunks[-1].text.endswith("被跳过。")
    # Alike in words (a skill's trigger and a task, two lessons), where before it was all or nothing.
    assert word_overlap("导入CSV时解析器崩溃", "解析器崩溃于导入CSV") > 0.5
    assert word_overlap("完全不同的事情", "解析器崩溃") == 0.0
    assert estimate_tokens("parse the header") == 4  # English counted as before
