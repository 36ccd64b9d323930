"""Reflection on a task: the report read from the model's YAML, the trace it reads, real sessions that
reflect through the scripted model, reports kept in memory/reflections/, strategies that become
lessons only after three sessions' reflections suggest them."""

from __future__ import annotations

import pytest
import yaml

from core.events import Record, ReflectionWritten, Usage, UserMessage
from core.llm import ModelError, ModelReply
from core.memory import strategies
from core.memory.longterm import LongTermMemory
from core.memory.reflection import (
    Preference,
    ReflectionUnreadable,
    Report,
    Strategy,
    describe,
    parse,
    trace,
)
from core.render import reflection_note
from core.scripted import ScriptedModel, call, reply
from core.session import CannotRun
from core.spending import spending
from tests.core.helpers import events_of, make_session, wait_for_question

STRATEGY = "Run the failing test alone before changing code"


def report_yaml(strategy: str = STRATEGY, confidence: str = "MEDIUM", achieved: str = "yes",
                when: str = "a test fails") -> str:
    return f"""Here is my analysis.

```yaml
outcome:
  achieved: {achieved}
  assessment: The tests pass again.
efficiency:
  efficient: [read the error first]
  wasteful:
    - listed the folder twice
errors:
  - what: file_read of a missing file
    kind: "C - tool misuse"
    root_cause: guessed the path
strategies:
  - strategy: {strategy}
    when: {when}
    effect: fewer wasted edits
    confidence: {confidence.lower()}
gaps: []
```
"""


def reflection_reply(text: str) -> ModelReply:
    return ModelReply(text, usage=Usage(1200, 300, 0, 0.002))


# --- reading the model's reply -------------------------------------------------------------------

def test_a_fenced_report_is_read_loosely_where_it_can_be():
    report = parse(report_yaml())
    assert report.achieved == "yes"  # YAML 1.1 reads the unquoted yes as true
    assert report.assessment == "The tests pass again."
    assert report.efficient == ("read the error first",) and report.wasteful == ("listed the folder twice",)
    assert report.errors[0].kind == "C" and report.errors[0].root_cause == "guessed the path"
    assert report.strategies == (Strategy(STRATEGY, "a test fails", "fewer wasted edits", "MEDIUM"),)
    assert report.gaps == ()


def test_a_confidence_the_report_does_not_know_counts_toward_nothing():
    report = parse(report_yaml(confidence="certain"))
    assert report.strategies[0].confidence == "LOW" and not report.strategies[0].counts


def test_missing_parts_are_empty_and_bare_texts_are_taken_as_their_main_field():
    report = parse("outcome: it mostly worked\nstrategies:\n  - Keep notes in findings.md\n")
    assert report.achieved == "" and report.assessment == "it mostly worked"
    assert report.strategies == (Strategy("Keep notes in findings.md"),) and report.errors == ()


@pytest.mark.parametrize("reply_text, said", [
    ("outcome: [unclosed\n", "not valid YAML (line"),
    ("I think the run went well overall.", "does not have the report's parts"),
    ("", "an empty reply"),
])
def test_a_reply_that_is_not_the_report_is_a_clear_error(reply_text, said):
    with pytest.raises(ReflectionUnreadable, match=r"(?s).*" + said.replace("(", r"\(")):
        parse(reply_text)


def test_a_reply_that_runs_on_or_holds_odd_values_gives_a_report_of_what_makes_sense():
    runaway = "strategies:\n" + "".join(f"  - strategy: Tip {n}\n    confidence: HIGH\n" for n in range(500))
    assert len(parse(runaway).strategies) == 10
    odd = parse("outcome: {achieved: 42, assessment: [1, 2]}\nerrors: [{what: {nested: x}}, 7]\n"
                "strategies: [{strategy: 3.5, confidence: null}]\ngaps: [null, {a: b}, true]\n")
    assert (odd.achieved, odd.assessment, odd.errors) == ("", "", ())
    assert odd.strategies == (Strategy("3.5", confidence="LOW"),) and odd.gaps == ("True",)
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [*{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}]\n"
        for n in range(8)) + "gaps: *i\n"
    assert parse(laughs).gaps == ()  # aliases nested deep: no text, and no blow-up


def test_the_report_written_back_reads_as_itself():
    report = parse(report_yaml())
    assert parse(report.to_yaml()) == report


def test_a_strategy_whose_words_end_a_sentence_reads_with_one_period():
    text = describe(parse(report_yaml(when="A test fails with a traceback.")))
    assert "When: A test fails with a traceback. Effect: fewer wasted edits." in text and ".." not in text


# --- what the model reads ------------------------------------------------------------------------

async def test_the_trace_has_the_task_failures_the_person_and_the_end(store, data_dir, workdir):
    model = ScriptedModel([
        reply("Reading the config", call("file_read", path="missing.toml")),
        reply("", call("human_ask", question="Which config file?")),
        reply("", call("task_done", summary="Used settings.toml")),
    ])
    session = make_session(store, data_dir, workdir, model, task="Fix the settings loader")
    session.start()
    question = await wait_for_question(session)
    await session.answer(question.qid, "answer", "settings.toml, at the root")
    assert await session.wait() == "done"
    text = trace(session.records)
    assert text.startswith("## Task\nFix the settings loader")
    assert "call file_read" in text and "→ file_read FAILED:" in text
    assert "The person answered answer: settings.toml, at the root" in text
    assert "Ended done: Used settings.toml" in text
    assert "1 answer(s) to questions" in text


async def test_files_the_person_put_back_are_in_the_trace_as_the_agents_changes_undone(store, data_dir, workdir):
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_edit", path="calc.py", old="a - b", new="a * b")),
                           reply("", call("file_write", path="extra.py", content="X = 1\n")),
                           reply("", call("task_done", summary="Changed add"))])
    session = make_session(store, data_dir, workdir, model, task="Fix add")
    assert await session.run() == "done"
    session.put_back(["calc.py", "extra.py"], "add must add")
    text = trace(session.records)
    assert "The person undid the agent's changes to files: calc.py, extra.py (removed) — why: add must add" in text
    assert "2 file(s) the agent changed put back as they were (its changes undone)." in text


async def test_the_persons_fix_of_the_agents_file_is_a_reaction_with_its_diff_in_the_trace(store, data_dir, workdir):
    def the_person_fixes_it(request):  # in their editor, while the model thinks
        (workdir / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
        return reply("", call("file_list"))

    model = ScriptedModel([reply("", call("file_write", path="calc.py", content="def add(a, b):\n    return a * b\n")),
                           the_person_fixes_it,
                           reply("", call("task_done", summary="Wrote add"))])
    session = make_session(store, data_dir, workdir, model, task="Write add")
    assert await session.run() == "done"
    text = trace(session.records)
    assert "1 file(s) the agent changed then changed outside its tools (the person's fix, or another program's)." in text
    assert "--- calc.py @@ -1,2 +1,2 @@ def add(a, b): - return a * b + return a + b" in text  # the diff, one line


def test_a_whole_trace_keeps_to_its_cap_however_long_the_task(tmp_path):
    from core.events import SessionStarted

    records = [Record("s", 1, "2026-11-26T07:00:00+00:00", SessionStarted(task="Fix it\n" + "log line\n" * 5000,
                                                                          model="m", workdir="/w"))]
    records += [Record("s", n, "2026-11-26T07:00:00+00:00", UserMessage(f"note {n} " + "x" * 300)) for n in range(2, 400)]
    text = trace(records, limit=10_000)
    assert len(text) <= 10_000 and text.startswith("## Task\nFix it\nlog line\n") and "lines left out" in text


def test_a_long_trace_keeps_its_beginning_and_its_end():
    from core.memory.reflection import fit_lines

    lines = [f"line {i} " + "x" * 90 for i in range(2000)]
    text = fit_lines(lines, 10_000)
    assert len(text) <= 10_000
    assert text.startswith("line 0 ") and text.endswith(lines[-1])
    assert "lines left out" in text


# --- reflecting in real sessions -----------------------------------------------------------------

async def finished_session(store, data_dir, workdir, memory, *side, task="Fix the failing test", **config):
    model = ScriptedModel([
        reply("", call("file_read", path="nope.py")),
        reply("", call("task_done", summary="fixed")),
    ], side_replies=list(side))
    session = make_session(store, data_dir, workdir, model, task=task, long_memory=memory, **config)
    assert await session.run() == "done"
    return session, model


async def test_a_reflection_is_kept_recorded_and_paid_for(store, data_dir, workdir, long_memory):
    session, model = await finished_session(store, data_dir, workdir, long_memory,
                                            reflection_reply(report_yaml()), summary_model="cheap-model")
    event, report, promoted = await session.reflect()

    request = model.requests[-1]
    assert request.model == "cheap-model" and not request.tools  # the summary model, no tools
    assert "→ file_read FAILED" in request.messages[1]["content"]
    assert event.achieved == "yes" and event.strategies == 1 and not event.error and promoted == []
    assert events_of(session, ReflectionWritten) == [event]
    kept = long_memory.files.root / event.path
    assert kept.parent.name == "reflections" and kept.name == f"{session.id}-1.yaml"
    data = yaml.safe_load(kept.read_text(encoding="utf-8"))
    assert data["session"] == session.id and data["model"] == "cheap-model"
    assert parse(kept.read_text(encoding="utf-8")) == report
    # Its request is the session's spending, in the session and in the log's total.
    assert session.state.usage.cost_usd == pytest.approx(0.002)
    assert spending(store).by_model["cheap-model"].prompt_tokens == 1200
    assert reflection_note(event) == (f"reflection by cheap-model: the task was achieved; 1 strategy suggested "
                                      f"(memory/{event.path}; 1,500 tokens, $0.0020)")


async def test_a_reflection_is_not_part_of_the_agents_context(store, data_dir, workdir, long_memory):
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml()))
    before = (await session.inspect_context()).messages
    await session.reflect()
    assert (await session.inspect_context()).messages == before


async def test_nothing_new_to_reflect_on_is_said_and_records_nothing(store, data_dir, workdir, long_memory):
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml()))
    await session.reflect()
    with pytest.raises(CannotRun, match="nothing to reflect on"):
        await session.reflect()
    assert len(events_of(session, ReflectionWritten)) == 1


async def test_without_long_term_memory_there_is_no_reflection(store, data_dir, workdir):
    session, _ = await finished_session(store, data_dir, workdir, None)
    with pytest.raises(CannotRun, match="long-term memory"):
        await session.reflect()


async def test_a_reply_that_is_not_a_report_is_kept_as_it_came(store, data_dir, workdir, long_memory):
    session, _ = await finished_session(store, data_dir, workdir, long_memory,
                                        reflection_reply("The run was fine, I suppose."))
    event, report, promoted = await session.reflect()
    assert report is None and promoted == []
    assert "does not have the report's parts" in event.error
    kept = long_memory.files.root / event.path
    assert kept.suffixes == [".unreadable", ".txt"]
    assert kept.read_text(encoding="utf-8").endswith("The run was fine, I suppose.")


async def test_when_the_summary_model_fails_the_sessions_own_reflects(store, data_dir, workdir, long_memory):
    session, model = await finished_session(
        store, data_dir, workdir, long_memory, ModelError("no_key", "No API key for cheap-model"),
        reflection_reply(report_yaml()), summary_model="cheap-model")
    event, _, _ = await session.reflect()
    assert event.model == "scripted" and [r.model for r in model.requests[-2:]] == ["cheap-model", "scripted"]


async def test_when_no_model_can_reflect_the_person_is_told_why(store, data_dir, workdir, long_memory):
    session, _ = await finished_session(store, data_dir, workdir, long_memory,
                                        ModelError("connection", "The provider is unreachable"))
    with pytest.raises(CannotRun, match="No model could reflect on the task: scripted: The provider is unreachable"):
        await session.reflect()
    assert events_of(session, ReflectionWritten) == []
    assert not strategies.reflections_dir(long_memory).exists() or not any(strategies.reflections_dir(long_memory).iterdir())


# --- strategies becoming lessons -----------------------------------------------------------------

@pytest.mark.parametrize("when", ["a test fails", "a test fails and its error names a file the agent has not read",
                                  "a test fails and the error is not clear"])  # a "not" only in the when
async def test_a_strategy_becomes_a_lesson_once_three_sessions_suggest_it(store, data_dir, workdir, long_memory, when):
    ids = []
    for number in range(3):
        session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml(when=when)),
                                            task=f"Fix failing test {number}")
        event, _, promoted = await session.reflect()
        ids.append(session.id)
        assert bool(promoted) == (number == 2), f"reflection {number + 1}"
    lesson = promoted[0].lesson
    assert event.lessons == (lesson.id,)
    memory_text = long_memory.files.memory_path.read_text(encoding="utf-8")
    assert f"{STRATEGY} (when: {when})" in memory_text
    assert "reflections on " + " + ".join(ids) in memory_text
    assert lesson.section == "Lessons"
    # Found by the memory search of later tasks, and told to the next reflection as known.
    assert any("failing test alone" in hit.text for hit in await long_memory.asearch("run the failing test alone"))
    assert STRATEGY in strategies.active_lessons(long_memory)[0]
    # A fourth suggestion of it makes no second lesson, and its report says which lesson it is.
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml(when=when)))
    event, _, promoted = await session.reflect()
    assert f"*lesson {lesson.id} in MEMORY.md*" in strategies.page(long_memory, event.path)
    assert promoted == [] and long_memory.files.memory_path.read_text(encoding="utf-8").count(STRATEGY) == 1


async def test_reflections_on_one_session_count_once(store, data_dir, workdir, long_memory):
    session, model = await finished_session(store, data_dir, workdir, long_memory, *[reflection_reply(report_yaml())] * 3)
    for _ in range(3):
        _, _, promoted = await session.reflect()
        assert promoted == []
        await session.send("once more")
        await session.wait()
    candidate, = strategies.candidates(long_memory)
    assert len(candidate.suggestions) == 3 and candidate.sessions == [session.id] and not candidate.due


def test_low_confidence_suggestions_and_unlike_strategies_do_not_add_up(data_dir):
    memory = LongTermMemory(data_dir, None)  # keywords only: sameness by shared words
    try:
        for number, (text, confidence) in enumerate([(STRATEGY, "LOW"), (STRATEGY, "LOW"), (STRATEGY, "LOW"),
                                                      ("Cache the pip downloads in CI", "HIGH"),
                                                      ("Ask the person before deleting files", "HIGH")]):
            strategies.save(memory, f"s{number}", "m", "", Report("yes", "", strategies=(Strategy(text, confidence=confidence),)))
        found = strategies.candidates(memory)
        assert sorted(c.strategy.text for c in found) == ["Ask the person before deleting files",
                                                          "Cache the pip downloads in CI"]
        assert strategies.promote_due(memory) == []
    finally:
        memory.close()


def test_the_same_strategy_in_other_words_is_one_candidate_by_shared_words(data_dir):
    memory = LongTermMemory(data_dir, None)
    try:
        for number, text in enumerate(["Run the failing test alone before changing any code",
                                       "Before changing code, run the failing test alone",
                                       "run the failing test alone first, before changing code"]):
            strategies.save(memory, f"s{number}", "m", "", Report("yes", "", strategies=(Strategy(text, confidence="MEDIUM"),)))
        promotion, = strategies.promote_due(memory)
        assert promotion.lesson is not None and promotion.candidate.sessions == ["s0", "s1", "s2"]
    finally:
        memory.close()


def test_a_lesson_that_may_contradict_memory_is_flagged_for_the_person(data_dir):
    memory = LongTermMemory(data_dir, None)
    try:
        memory.remember("Run the whole test suite with 4 workers", kind="lesson", source="s-old")
        for number in range(3):
            strategies.save(memory, f"s{number}", "m", "",
                            Report("yes", "", strategies=(Strategy("Run the whole test suite with 2 workers", confidence="HIGH"),)))
        promotion, = strategies.promote_due(memory)
        assert [e.text for e in promotion.contradicts] == ["Run the whole test suite with 4 workers"]
        page = strategies.page(memory, strategies.kept(memory)[-1].path.relative_to(memory.files.root).as_posix(),
                               [promotion])
        assert "### To confirm\n- Lesson m2 may contradict m1 “Run the whole test suite with 4 workers”" in page
        overview = strategies.overview(memory)
        assert "### To confirm (MEMORY.md)" in overview
        assert "- m2 may contradict m1: “Run the whole test suite with 2 workers” vs “Run the whole test suite with 4 workers”" in overview
        assert memory.doctor().contradictions == memory.contradictions() != []
        assert "Contradictions to confirm" in memory.files.memory_path.read_text(encoding="utf-8")
    finally:
        memory.close()


def test_a_report_deleted_by_hand_leaves_a_gap_the_next_one_does_not_fill_over_another(data_dir):
    memory = LongTermMemory(data_dir, None)
    try:
        first, second = (strategies.save(memory, "s1", "m", "", Report("yes", str(n))) for n in (1, 2))
        first.unlink()
        third = strategies.save(memory, "s1", "m", "no report", None)
        assert third.name == "s1-3.unreadable.txt" and parse(second.read_text(encoding="utf-8")).assessment == "2"
        assert strategies.save(memory, "s1", "m", "", Report("yes", "4")).name == "s1-4.yaml"
    finally:
        memory.close()


def test_a_reflection_file_damaged_by_hand_is_read_as_unreadable_not_fatal(data_dir):
    memory = LongTermMemory(data_dir, None)
    try:
        folder = strategies.reflections_dir(memory)
        folder.mkdir(parents=True)
        (folder / "s9-1.yaml").write_text("outcome: [broken\n", encoding="utf-8")
        kept, = strategies.kept(memory)
        assert kept.report is None and kept.session_id == "s9"
        assert strategies.candidates(memory) == []
    finally:
        memory.close()


async def test_a_reflections_page_says_where_each_strategy_stands(store, data_dir, workdir, long_memory):
    low = report_yaml(strategy="Guess less", confidence="LOW")
    for number in range(3):
        session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml()),
                                            task=f"Fix failing test {number}")
        event, _, promoted = await session.reflect()
        text = strategies.page(long_memory, event.path, promoted)
        if number == 0:
            assert f"**{STRATEGY}** (medium confidence) When: a test fails. Effect: fewer wasted edits. — *suggested in 1 of the 3 sessions' reflections" in text
            first = event.path
    assert text.startswith(f"*Reflection on session {session.id},") and "**Achieved.** The tests pass again." in text
    assert f"wasted edits. — *lesson {promoted[0].lesson.id} in MEMORY.md*" in text
    # The first one's page, read later, says the same now.
    assert f"lesson {promoted[0].lesson.id} in MEMORY.md" in strategies.page(long_memory, first)
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(low))
    event, _, _ = await session.reflect()
    assert "Effect: fewer wasted edits. — *low confidence: kept in this report, not counted" in strategies.page(
        long_memory, event.path)
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply("no idea"))
    event, _, _ = await session.reflect()
    page = strategies.page(long_memory, event.path)
    assert "could not be read as a report; here it is as it came" in page and "no idea" in page


def test_paraphrases_are_one_strategy_and_neighbours_are_not_by_meaning(long_memory):
    neighbours = ["List the work folder before reading files by guessed paths",
                  "Check which folder the tests live in before reading them", "Prefer pytest -x for a quick first signal"]
    paraphrases = [STRATEGY, "Before changing code, run the failing test by itself", "Run the failing test alone first"]
    for number, (text, other) in enumerate(zip(paraphrases, neighbours)):
        strategies.save(long_memory, f"s{number}", "m", "", Report("yes", "", strategies=(
            Strategy(text, confidence="HIGH"), Strategy(other, confidence="HIGH"))))
    found = {c.strategy.text: c.sessions for c in strategies.candidates(long_memory)}
    assert found == {STRATEGY: ["s0", "s1", "s2"], **{text: [f"s{i}"] for i, text in enumerate(neighbours)}}


def make(rel_path: str, index: int) -> str:
    return f"make:{rel_path}:{index}"


async def test_the_person_makes_a_lesson_of_a_strategy_now(store, data_dir, workdir, long_memory):
    low = report_yaml(strategy="Guess less, list more", confidence="LOW")
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml()))
    event, _, _ = await session.reflect()
    page = strategies.page(long_memory, event.path, lesson_link=make)
    assert f"reflections it takes to become a lesson* [Make it a lesson now](make:{event.path}:0)" in page

    promotion = strategies.make_lesson(long_memory, event.path, 0)
    memory_text = long_memory.files.memory_path.read_text(encoding="utf-8")
    assert f"{STRATEGY} (when: a test fails) — source: you from reflections on {session.id}," in memory_text
    page = strategies.page(long_memory, event.path, lesson_link=make)
    assert f"*lesson {promotion.lesson.id} in MEMORY.md*" in page and "make:" not in page
    # Made twice, it is one lesson; later suggestions of it count toward that one.
    assert strategies.make_lesson(long_memory, event.path, 0).lesson == promotion.lesson
    for number in range(2):
        other, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml()))
        _, _, promoted = await other.reflect()
        assert promoted == []
    assert long_memory.files.memory_path.read_text(encoding="utf-8").count(STRATEGY) == 1

    # One the reflection was not sure of can be made a lesson too.
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(low))
    event, _, _ = await session.reflect()
    assert f"[Make it a lesson now](make:{event.path}:0)" in strategies.page(long_memory, event.path, lesson_link=make)
    assert strategies.make_lesson(long_memory, event.path, 0).lesson.text.startswith("Guess less, list more")
    with pytest.raises(ValueError, match="has no strategy 2"):
        strategies.make_lesson(long_memory, event.path, 1)


def test_the_overview_lists_lessons_strategies_on_their_way_and_skills(data_dir):
    memory = LongTermMemory(data_dir, None)
    try:
        assert "No lesson yet, and no strategy suggested" in strategies.overview(memory, make)
        memory.remember("Keep commits small", kind="lesson", source="s0")
        for number in range(3):
            strategies.save(memory, f"s{number}", "m", "", Report("yes", "", strategies=(
                Strategy(STRATEGY, "a test fails", confidence="HIGH"),
                *((Strategy("Cache the pip downloads in CI", confidence="MEDIUM"),) if number else ()))))
        strategies.save(memory, "s9", "m", "", Report("yes", "", strategies=(Strategy("Guess", confidence="LOW"),)))
        strategies.promote_due(memory)
        memory.save_skill("Fix failing tests", ["pytest reports failures"], ["Run the failing test alone"], [],
                          source="s1")
        memory.files.record_skill_use("fix-failing-tests", False)
        text = strategies.overview(memory, make)
        assert text.startswith("*4 reflections kept in memory/reflections/.")
        lessons, rest = text.split("### Lessons (MEMORY.md)\n")[1].split("### Strategies on their way\n")
        waiting, skills = rest.split("### Skills\n")
        assert "- **Keep commits small** — *m1, from s0, " in lessons
        assert f"- **{STRATEGY} (when: a test fails)** — *m2, suggested in 3 sessions' reflections, " in lessons
        assert "**Cache the pip downloads in CI** — *2 of 3 sessions* [Make it a lesson now](make:reflections/s1-1.yaml:1)" in waiting
        assert ("- **Fix failing tests** — *probation (trial: 1 of 3 uses, 0 succeeded); 0 of 1 uses succeeded, "
                "latest first ✗* · skills/fix-failing-tests.md") in skills
        assert "Guess" not in text
    finally:
        memory.close()


async def test_a_reflections_digest_goes_to_the_daily_log_where_memory_search_finds_it(store, data_dir, workdir,
                                                                                     long_memory):
    from datetime import date

    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml()),
                                        task="Fix the flaky upload test\nIt fails one run in five")
    event, _, _ = await session.reflect()
    daily = long_memory.files.daily_path(date.today()).read_text(encoding="utf-8")
    entry = daily.split("– Reflection on: Fix the flaky upload test\n", 1)[1]
    assert entry.startswith("- Outcome: achieved — The tests pass again.\n- Wasted: listed the folder twice\n"
                            "- Causes: file_read of a missing file (tool misuse): guessed the path\n"
                            f"- Strategies: {STRATEGY} (medium)\n")
    assert f"- session {session.id}; the report is {event.path.split('/')[-1]} in the reflections folder\n" in entry
    assert "left out" not in entry
    hits = await long_memory.asearch("why did file_read of a missing file fail: guessed the path")
    assert any(hit.path.startswith("daily/") and "guessed the path" in hit.text for hit in hits)


def test_which_ended_runs_are_reflected_on_by_themselves():
    from core.events import HumanAnswer, SessionEnded
    from core.memory.reflection import reflected_on_by_itself

    def records(*events):
        return [Record("s", n, "2026-11-26T07:00:00+00:00", e) for n, e in enumerate(events, 1)]

    assert reflected_on_by_itself(records(SessionEnded("done"))) and reflected_on_by_itself(records(SessionEnded("error")))
    assert not reflected_on_by_itself(records(UserMessage("hi")))  # not ended
    assert not reflected_on_by_itself(records(SessionEnded("aborted", "Stopped by the person.")))
    assert not reflected_on_by_itself(records(HumanAnswer("q1", "approve"), SessionEnded("aborted")))
    assert reflected_on_by_itself(records(HumanAnswer("q2", "stop"), SessionEnded("aborted", "The person chose to stop.")))


async def test_a_session_another_process_runs_is_not_reflected_on_here(store, data_dir, workdir, long_memory):
    import subprocess
    import sys

    from core.paths import RUN_LOCK
    from core.session import SessionBusy
    from tests.core.test_one_writer import HOLD

    session, model = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(report_yaml()))
    asked = len(model.requests)
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(session.dir / RUN_LOCK)], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(SessionBusy, match="reflect on it there, or once that run ends"):
            await session.reflect()
    finally:
        other.kill()
        other.wait()
    assert len(model.requests) == asked and not strategies.reflections_dir(long_memory).exists()
    await session.reflect()  # once it let go
    assert len(events_of(session, ReflectionWritten)) == 1


def with_preferences(*said: tuple[str, str]) -> Report:
    return Report("yes", "", preferences=tuple(Preference(text, "they said so", strength) for text, strength in said))


def test_the_person_s_preferences_are_read_from_a_reflection():
    report = parse("outcome: fine\npreferences:\n  - preference: Keep commits small\n    evidence: 'said: one change a commit'"
                   "\n    strength: high\n  - Answer in French\n")
    assert report.preferences == (Preference("Keep commits small", "said: one change a commit", "HIGH"),
                                  Preference("Answer in French"))
    assert parse(report.to_yaml()) == report
    assert "### What you showed you want\n- Keep commits small (high signal): said: one change a commit" in describe(report)


def test_beliefs_grow_with_signals_and_a_contradicted_one_is_the_persons_to_confirm(data_dir):
    memory = LongTermMemory(data_dir, None)
    try:
        for session, said in [("s1", [("Keep commits small", "MEDIUM"), ("Answer in French", "HIGH"),
                                      ("Prefer tabs", "LOW")]),
                              ("s2", [("Keep commits small", "MEDIUM"), ("Use pytest -q", "MEDIUM")]),
                              ("s3", [("Do not keep commits small", "MEDIUM"), ("Prefer tabs", "LOW")])]:
            strategies.save(memory, session, "m", "", with_preferences(*said))
        found = {b.text: b for b in strategies.beliefs(memory)}
        french, commits, pytest_q, tabs = (found[t] for t in ("Answer in French", "Keep commits small", "Use pytest -q",
                                                               "Prefer tabs"))
        assert (round(french.confidence, 2), french.evidence, french.believed) == (0.9, 1, True)  # said outright
        assert (round(commits.confidence, 2), commits.evidence, commits.contradictions) == (0.7, 2, 1)
        assert commits.to_confirm and not commits.believed  # 1 of 2 against: past 0.3
        assert (pytest_q.evidence, pytest_q.believed) == (1, False)  # one choice is not yet a preference
        assert (round(tabs.confidence, 2), tabs.evidence, tabs.believed) == (0.4, 2, False)  # hints stay hints
        text = strategies.overview(memory)
        assert "- **Answer in French** — *confidence 0.90 from 1 signal; confirmed*" not in text  # 0.9 is not past it
        assert "- **Answer in French** — *confidence 0.90 from 1 signal; told to the agent*" in text
        assert "- **Keep commits small** — *confidence 0.70 from 2 signals, 1 contradicting; to confirm" in text
        strategies.save(memory, "s4", "m", "", with_preferences(("Log in with token=ghp_abcdefghijklmnopqrstuvwx1234", "HIGH")))
        recalled = memory.recall_for_task("Translate the changelog").text
        assert "ghp_" not in recalled  # the guard's terms hold for what a reflection wrote too
        assert "## What the person wants (learned from reflections on earlier tasks)\n- Answer in French (confidence 0.90)" \
            in recalled and "commits" not in recalled and "tabs" not in recalled
    finally:
        memory.close()


URGENT = "Never print the contents of .env files into the conversation"


@pytest.mark.parametrize("confidence, urgent, at_once", [("HIGH", "true", True), ("MEDIUM", "true", False),
                                                         ("HIGH", "false", False)])
async def test_an_urgent_strategy_of_high_confidence_is_a_lesson_at_once(
        store, data_dir, workdir, long_memory, confidence, urgent, at_once):
    reply_text = report_yaml(strategy=URGENT, confidence=confidence).replace(
        "    confidence:", f"    urgent: {urgent}\n    confidence:")
    session, _ = await finished_session(store, data_dir, workdir, long_memory, reflection_reply(reply_text))
    event, report, promoted = await session.reflect()
    assert report.strategies[0].urgent == (urgent == "true")
    assert bool(promoted) == at_once and bool(event.lessons) == at_once  # one session's reflection only
    page = strategies.page(long_memory, event.path)
    assert (f"({confidence.lower()} confidence, urgent)" in page) == (urgent == "true")
    if at_once:
        assert ", made at once as urgent*" in page
        assert f"urgent: reflections on {session.id}" in long_memory.files.memory_path.read_text(encoding="utf-8")
        assert "made a lesson at once, as urgent, from the reflections on" in strategies.overview(long_memory)


def test_how_many_sessions_suggested_a_strategy_is_said_in_good_english():
    from core.memory.strategies import suggested_in

    assert suggested_in(1) == "suggested in one session's reflection"
    assert suggested_in(3) == "suggested in 3 sessions' reflections"
