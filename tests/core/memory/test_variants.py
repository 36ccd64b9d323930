"""Variants of a skill that works (seed 002, section 4.2): proposed after a reflection on a task that
followed a skill that earned one, tried against the skill on alternate tasks, kept or set aside by
the test, or by the person. Real files, real sessions through the scripted model."""

from __future__ import annotations

import json

import pytest

from core.events import MemoryRecalled, ReflectionWritten, Usage
from core.llm import ModelReply
from core.memory import strategies
from core.memory.layers import Skill, parse_skill
from core.memory.variants import (
    AWAITING,
    DROP_VARIANT,
    TEST_VARIANT,
    TESTING,
    Proposal,
    VariantUnreadable,
    chosen,
    decide,
    eligible,
    give_out,
    parse_variant,
    proposals,
    propose,
    record_use,
    variant_of,
)
from core.render import recall_note, reflection_note
from core.scripted import ScriptedModel, call, reply
from tests.core.helpers import events_of, make_session
from tests.core.memory.test_reflection import report_yaml

SLUG = "fix-failing-tests"
STEPS = ["Run the failing test alone", "Fix the cause", "Run the whole suite"]
REORDERED = ("Read the failing test's code first", "Run the failing test alone", "Fix the cause", "Run the whole suite")
TASK = "Our pytest run shows 3 failures, repair them"  # matches the skill's triggers above 0.8


def write_skill(memory, uses: int = 12, successes: int = 12, recent: str | None = None, status: str = "active") -> Skill:
    skill = Skill(name="Fix failing tests", slug=SLUG,
                  triggers=["the task asks to fix failing unit tests", "pytest reports failures"], steps=list(STEPS),
                  tools=["shell_run"], uses=uses, successes=successes, versions=["v1 2026-11-01 (session s0): first version"],
                  status=status, recent="✓" * successes + "✗" * (uses - successes) if recent is None else recent)
    memory.files.ensure()
    memory.files.skill_path(SLUG).write_text(skill.to_markdown(), encoding="utf-8")
    return skill


def reread(memory) -> Skill:
    return parse_skill(memory.files.skill_path(SLUG).read_text(encoding="utf-8"), SLUG)


def variants_yaml(*items: tuple[str, str, tuple[str, ...]]) -> str:
    body = "".join(f"  - kind: {kind}\n    change: {change}\n    why: it finds the cause sooner\n    risk: a longer first "
                   "step\n    verify: fewer turns\n    steps:\n" + "".join(f"      - {step}\n" for step in steps)
                   for kind, change, steps in items)
    return f"Here you are.\n\n```yaml\nvariants:\n{body}```\n"


REORDER = ("B", "read the failing test's code before running it", REORDERED)
NEW_STRATEGY = ("D", "first list what you do not know", ("List what you do not know", *STEPS))


# --- which skills, and what the model proposes ----------------------------------------------------

def test_a_skill_earns_a_variant_with_ten_uses_or_more_most_of_the_latest_successful(long_memory):
    assert eligible(write_skill(long_memory, uses=10, successes=10))
    assert not eligible(write_skill(long_memory, uses=9, successes=9))  # too few to compare against
    assert not eligible(write_skill(long_memory, uses=20, successes=20, recent="✓✓✗✗✓✓✓✓✓✓"))  # 0.8 of the latest
    assert eligible(write_skill(long_memory, uses=20, successes=18, recent="✓" * 9 + "✗" + "✓" * 10))  # 0.95
    assert not eligible(write_skill(long_memory, status="probation"))
    assert not eligible(write_skill(long_memory, status="deprecated"))


def test_the_variants_in_a_reply_are_read_and_a_lower_risk_one_is_tested_first(long_memory):
    skill = write_skill(long_memory)
    found = proposals(variants_yaml(NEW_STRATEGY, REORDER))
    assert [p.kind for p in found] == ["D", "B"] and found[1].steps == REORDERED
    assert found[1].why == "it finds the cause sooner" and found[1].verify == "fewer turns"
    assert chosen(found, skill) == found[1]
    assert chosen(proposals(variants_yaml(NEW_STRATEGY)), skill).kind == "D"  # the only one: it waits for the person
    assert chosen(proposals(variants_yaml(("A", "nothing really", tuple(STEPS)))), skill) is None  # no change
    with pytest.raises(VariantUnreadable, match="no variant with a kind, a change and steps"):
        proposals("variants:\n  - kind: Z\n    change: x\n    steps: [a]\n  - kind: A\n    change: y\n")
    with pytest.raises(VariantUnreadable, match="not valid YAML"):
        proposals("```yaml\nvariants: [\n```")


# --- the test --------------------------------------------------------------------------------------

def run_uses(memory, results: list[tuple[bool, int]]) -> list[str]:
    """Tasks that follow the skill one after another: (succeeded, turns) for each; what each end said."""
    said = []
    for succeeded, turns in results:
        on_variant = give_out(memory.files, SLUG) is not None
        said.append(record_use(memory.files, SLUG, succeeded, turns, on_variant=on_variant))
    return said


def test_tasks_alternate_between_the_skill_and_its_variant_and_one_in_fewer_turns_is_kept(long_memory):
    skill = write_skill(long_memory)
    variant = propose(long_memory.files, skill, Proposal(*REORDER[:2], REORDER[2]), "2026-11-26, session s9, by cheap")
    assert variant.status == TESTING and variant_of(long_memory.files, SLUG) == variant
    assert propose(long_memory.files, skill, Proposal(*REORDER[:2], REORDER[2]), "again") is None  # one at a time

    given = [give_out(long_memory.files, SLUG) is not None for _ in range(4)]
    assert given == [False, True, False, True]  # the original first, then the variant, in turn
    for on_variant, turns in ((False, 15), (True, 9), (False, 14), (True, 8)):
        assert record_use(long_memory.files, SLUG, True, turns, on_variant=on_variant) == ""
    assert (reread(long_memory).uses, reread(long_memory).successes) == (14, 14)  # the original's uses only
    said = run_uses(long_memory, [(True, 16), (True, 10)])
    assert said[-1] == ("its variant (the steps reordered: read the failing test's code before running it) was kept: "
                        "it succeeded as often in fewer turns")

    kept = reread(long_memory)
    assert kept.steps == list(REORDERED) and kept.status == "active"
    assert kept.versions[-1].startswith("v2 ") and "a tested variant kept, the steps reordered" in kept.versions[-1]
    assert "variant 3 of 3 succeeded, 9.0 turns on average; original 3 of 3 succeeded, 15.0 turns" in kept.versions[-1]
    assert variant_of(long_memory.files, SLUG) is None
    results = (long_memory.files.skills_dir / "variants" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    logged = json.loads(results[0])
    assert logged["kept"] is True and logged["kind"] == "B" and logged["variant"] == {"uses": 3, "successes": 3, "turns": 27}
    assert give_out(long_memory.files, SLUG) is None  # no test now: every task has the skill


def test_a_variant_that_succeeds_less_often_is_set_aside_and_the_skill_keeps_its_steps(long_memory):
    skill = write_skill(long_memory)
    propose(long_memory.files, skill, Proposal(*REORDER[:2], REORDER[2]), "")
    said = run_uses(long_memory, [(True, 12), (False, 6), (True, 12), (True, 6), (True, 12), (False, 6)])
    assert said[-1].endswith("was set aside: it succeeded less often")
    skill = reread(long_memory)
    assert skill.steps == STEPS and len(skill.versions) == 1
    assert skill.tried[0].endswith("— it succeeded less often (variant 1 of 3 succeeded, 6.0 turns on average; "
                                   "original 3 of 3 succeeded, 12.0 turns on average)")
    assert "## Variants tried" in long_memory.files.skill_path(SLUG).read_text(encoding="utf-8")


def test_a_test_that_shows_no_difference_ends_after_six_uses_each_with_the_skill_as_it_was(long_memory):
    skill = write_skill(long_memory)
    propose(long_memory.files, skill, Proposal(*REORDER[:2], REORDER[2]), "")
    said = run_uses(long_memory, [(True, 10), (True, 11)] * 5)
    assert not any(said) and variant_of(long_memory.files, SLUG).variant.uses == 5
    said = run_uses(long_memory, [(True, 10), (True, 11)])
    assert said[-1].endswith("was set aside: after 6 uses each it did no better")
    assert reread(long_memory).steps == STEPS


def test_a_new_strategy_waits_for_the_person_who_tests_it_or_sets_it_aside(long_memory):
    skill = write_skill(long_memory)
    waiting = propose(long_memory.files, skill, proposals(variants_yaml(NEW_STRATEGY))[0], "")
    assert waiting.status == AWAITING
    assert [give_out(long_memory.files, SLUG) for _ in range(2)] == [None, None]  # not tested before they say so
    assert "waiting for you — a new strategy is tested once you let it be" in \
        long_memory.files.variant_path(SLUG).read_text(encoding="utf-8")
    line = strategies.overview(long_memory, skill_link=lambda slug, action: f"do:{slug}:{action}")
    assert (f"  \n  *Variant waiting for you*, a new strategy: first list what you do not know. Why: it finds the cause "
            f"sooner. Risk: a longer first step. · skills/variants/{SLUG}.md [Test it](do:{SLUG}:{TEST_VARIANT}) "
            f"[Set it aside](do:{SLUG}:{DROP_VARIANT})") in line

    assert decide(long_memory.files, SLUG, test=True).status == TESTING
    assert [give_out(long_memory.files, SLUG) is not None for _ in range(2)] == [False, True]
    line = strategies.overview(long_memory, skill_link=lambda slug, action: f"do:{slug}:{action}")
    assert (f"*Variant on test*, a new strategy: first list what you do not know — original not used yet; variant "
            f"not used yet · skills/variants/{SLUG}.md [Stop the test](do:{SLUG}:{DROP_VARIANT})") in line

    decide(long_memory.files, SLUG, test=False)
    assert variant_of(long_memory.files, SLUG) is None
    assert reread(long_memory).tried[0].endswith("a new strategy: first list what you do not know — set aside by you")
    with pytest.raises(ValueError, match="has no variant"):
        decide(long_memory.files, SLUG, test=True)


def test_a_new_version_of_the_skill_ends_its_variants_test(long_memory):
    skill = write_skill(long_memory)
    propose(long_memory.files, skill, Proposal(*REORDER[:2], REORDER[2]), "")
    long_memory.save_skill("Fix failing tests", skill.triggers, ["Run the whole suite first"], [], source="s2")
    assert variant_of(long_memory.files, SLUG) is None
    assert reread(long_memory).tried[0].endswith("a variant's test ended when v2 changed the skill")


def test_a_variant_reads_back_as_written_and_memory_search_does_not_find_it(long_memory):
    skill = write_skill(long_memory)
    variant = propose(long_memory.files, skill, Proposal("C", "run pytest with -x", ("Run pytest -x on the failing "
                                                                                    "module", "Fix the cause")), "")
    variant.given, variant.original.uses, variant.original.turns = 3, 2, 21
    variant.variant.uses = variant.variant.successes = variant.variant.turns = 1  # "1 use, 1 succeeded, 1 turn"
    assert parse_variant(variant.to_markdown(), SLUG) == variant
    hits = long_memory.search("pytest -x on the failing module", mode="keyword")
    assert hits and not any("variants" in hit.path for hit in hits)  # a task given the original must not read it
    path = long_memory.files.variant_path(SLUG)
    path.write_text(path.read_text(encoding="utf-8").split("## Steps")[0], encoding="utf-8")  # steps deleted by hand
    assert [give_out(long_memory.files, SLUG) for _ in range(2)] == [None, None]  # every task has the skill's


# --- through real sessions -------------------------------------------------------------------------

def variant_reply(text: str) -> ModelReply:
    return ModelReply(text, usage=Usage(900, 200, 0, 0.001))


async def followed_task(store, data_dir, workdir, memory, *side):
    model = ScriptedModel([reply("", call("task_done", summary="fixed"))], side_replies=list(side))
    session = make_session(store, data_dir, workdir, model, task=TASK, long_memory=memory)
    assert await session.run() == "done"
    return session, model


async def test_a_reflection_on_a_task_that_followed_a_proven_skill_proposes_a_variant_to_test(
        store, data_dir, workdir, long_memory):
    write_skill(long_memory)
    session, model = await followed_task(store, data_dir, workdir, long_memory,
                                         ModelReply(report_yaml(), usage=Usage(1200, 300, 0, 0.002)),
                                         variant_reply(variants_yaml(NEW_STRATEGY, REORDER)))
    event, _, _ = await session.reflect()

    asked = model.requests[-1].messages[1]["content"]
    assert "## The skill\n# Skill: Fix failing tests" in asked and "1. Run the failing test alone" in asked
    assert "- Wasted: listed the folder twice" in asked and "shell_run" in asked  # the reflection, the tools
    assert event.variant == ("a variant of the skill “Fix failing tests” to test, the steps reordered: read the "
                             "failing test's code before running it")
    assert event.usage == Usage(2100, 500, 0, 0.003)  # both requests are the session's spending
    assert events_of(session, ReflectionWritten) == [event]
    assert event.variant in reflection_note(event)
    variant = variant_of(long_memory.files, SLUG)
    assert variant.status == TESTING and variant.proposal.steps == REORDERED
    assert variant.proposed.endswith(f", session {session.id}, by {session.state.model}")


async def test_the_variant_request_reads_what_the_reflections_on_earlier_tasks_that_followed_the_skill_said(
        store, data_dir, workdir, long_memory):
    write_skill(long_memory)
    for achieved in ("yes", "no"):  # two earlier tasks that followed it, reflected on; no variant came of them
        earlier, _ = await followed_task(store, data_dir, workdir, long_memory,
                                         ModelReply(report_yaml(achieved=achieved)), variant_reply("None."))
        await earlier.reflect()
    other = make_session(store, data_dir, workdir, ScriptedModel([reply("", call("task_done", summary="ok"))],
                         side_replies=[ModelReply(report_yaml(strategy="Write the notes from the changelog"))]),
                         task="Write the release notes for version 2", long_memory=long_memory)
    assert await other.run() == "done" and not other.state.injected_skills
    await other.reflect()

    session, model = await followed_task(store, data_dir, workdir, long_memory, ModelReply(report_yaml()),
                                         variant_reply(variants_yaml(REORDER)))
    await session.reflect()
    asked = model.requests[-1].messages[1]["content"]
    earlier = asked.split("## Earlier tasks that followed it, latest first\n", 1)[1].split("\n\n## ", 1)[0]
    assert earlier.splitlines() == [
        "- Outcome: not achieved — The tests pass again. · Wasted: listed the folder twice · Causes: file_read of a "
        "missing file (tool misuse): guessed the path",
        "- Outcome: achieved — The tests pass again. · Wasted: listed the folder twice · Causes: file_read of a "
        "missing file (tool misuse): guessed the path"]  # latest first; not this task's, not the other task's
    assert store.sessions_following(SLUG) == {r.id for r in store.sessions()} - {other.id}


async def test_a_variant_reply_that_cannot_be_read_is_said_and_the_reflection_stands(store, data_dir, workdir,
                                                                                      long_memory):
    write_skill(long_memory)
    session, _ = await followed_task(store, data_dir, workdir, long_memory,
                                     ModelReply(report_yaml(), usage=Usage(1200, 300, 0, 0.002)),
                                     variant_reply("I would not change a thing."))
    event, report, _ = await session.reflect()
    assert report is not None and event.achieved == "yes"
    assert event.variant.startswith("no variant of the skill “Fix failing tests”: The reply has no variant")
    assert event.usage.prompt_tokens == 2100 and variant_of(long_memory.files, SLUG) is None


async def test_no_variant_is_asked_for_a_skill_on_trial(store, data_dir, workdir, long_memory):
    write_skill(long_memory, uses=2, successes=2, status="probation")
    session, model = await followed_task(store, data_dir, workdir, long_memory,
                                         ModelReply(report_yaml(), usage=Usage(1200, 300, 0, 0.002)))
    event, _, _ = await session.reflect()
    assert event.variant == "" and len(model.requests) == 2  # the task's step and the reflection, nothing more


async def test_tasks_given_the_variant_follow_its_steps_and_their_end_counts_in_its_test(store, data_dir, workdir,
                                                                                          long_memory):
    skill = write_skill(long_memory)
    propose(long_memory.files, skill, Proposal(*REORDER[:2], REORDER[2]), "")
    first, first_model = await followed_task(store, data_dir, workdir, long_memory)
    second, second_model = await followed_task(store, data_dir, workdir, long_memory)

    def recalled(model) -> str:
        return next(str(m["content"]) for m in model.requests[0].messages if "Skill to follow" in str(m["content"]))

    assert "1. Run the failing test alone" in recalled(first_model) and REORDERED[0] not in recalled(first_model)
    assert f"1. {REORDERED[0]}\n2. Run the failing test alone" in recalled(second_model)
    assert events_of(first, MemoryRecalled)[0].variants == ()
    assert events_of(second, MemoryRecalled)[0].variants == (SLUG,)
    assert recall_note(events_of(second, MemoryRecalled)[0]) == f"skills injected: {SLUG} (its variant on test)"
    variant = variant_of(long_memory.files, SLUG)
    assert (variant.original.uses, variant.variant.uses, variant.variant.successes) == (1, 1, 1)
    assert variant.variant.turns == second.state.turn == 1
    assert reread(long_memory).uses == 13  # the first task's use; the variant's is the test's only


def test_failing_as_often_in_fewer_turns_is_no_gain():
    from core.memory.variants import Arm, Variant, judge

    variant = Variant(SLUG, "Fix failing tests", Proposal(*REORDER[:2], REORDER[2]),
                      original=Arm(3, 0, 30), variant=Arm(3, 0, 9))
    assert judge(variant) is None  # not kept for failing faster; undecided until six uses each
    variant.original, variant.variant = Arm(6, 0, 60), Arm(6, 0, 18)
    assert judge(variant) == (False, "after 6 uses each it did no better")


async def test_work_put_back_after_a_task_that_followed_a_skill_counts_that_use_a_failure(
        store, data_dir, workdir, long_memory):
    skill = write_skill(long_memory)
    propose(long_memory.files, skill, Proposal(*REORDER[:2], REORDER[2]), "")
    sessions = []
    for _ in range(2):  # the first follows the skill as it is, the second its variant
        model = ScriptedModel([reply("", call("file_write", path="fix.py", content="x = 1\n")),
                               reply("", call("task_done", summary="fixed"))])
        session = make_session(store, data_dir, workdir, model, task=TASK, long_memory=long_memory, approval="all")
        assert await session.run() == "done"
        sessions.append(session)
    assert (reread(long_memory).uses, reread(long_memory).successes, reread(long_memory).recent[:1]) == (13, 13, "✓")
    assert variant_of(long_memory.files, SLUG).variant.successes == 1

    sessions[0].put_back(["fix.py"], "not a fix")
    assert (reread(long_memory).uses, reread(long_memory).successes, reread(long_memory).recent[:2]) == (13, 12, "✗✓")
    sessions[0].put_back(["fix.py"])  # again: the use is counted a failure once
    assert reread(long_memory).successes == 12
    sessions[1].put_back(["fix.py"])
    variant = variant_of(long_memory.files, SLUG)
    assert (variant.variant.uses, variant.variant.successes) == (1, 0) and reread(long_memory).successes == 12


def test_a_success_taken_back_counts_in_the_trial_and_in_a_run_of_failures(long_memory):
    from tests.core.memory.test_layers import save_fix_skill

    save_fix_skill(long_memory)
    long_memory.files.record_skill_use(SLUG, True)
    assert long_memory.files.take_back_skill_success(SLUG) == ""
    assert (reread(long_memory).why, reread(long_memory).recent) == ("trial: 1 of 3 uses, 0 succeeded", "✗")
    assert long_memory.files.take_back_skill_success(SLUG) == ""  # the latest use is a failure already
    long_memory.files.record_skill_use(SLUG, True)
    assert long_memory.files.record_skill_use(SLUG, True) == "active — passed its trial at use 3: 2 of 3 uses succeeded"
    # The success taken back is the use that passed the trial: the trial is judged again without it.
    assert long_memory.files.take_back_skill_success(SLUG) == (
        "deprecated — failed its trial at use 3: 1 of 3 uses succeeded (a success taken back)")
    assert (reread(long_memory).status, reread(long_memory).successes) == ("deprecated", 1)


def test_a_trial_judged_again_without_a_success_taken_back_may_still_pass(long_memory):
    from tests.core.memory.test_layers import save_fix_skill

    save_fix_skill(long_memory)
    for _ in range(3):
        long_memory.files.record_skill_use(SLUG, True)
    assert long_memory.files.take_back_skill_success(SLUG) == ""  # 2 of 3: still passed
    assert (reread(long_memory).status, reread(long_memory).why) == (
        "active", "passed its trial at use 3: 2 of 3 uses succeeded (a success taken back)")
    long_memory.files.record_skill_use(SLUG, True)  # a later use is not the trial's
    assert long_memory.files.take_back_skill_success(SLUG) == ""
    assert reread(long_memory).status == "active" and reread(long_memory).successes == 2
    for _ in range(2):  # with the two taken back: five failures in a row, the last taken back
        long_memory.files.record_skill_use(SLUG, False)
    assert reread(long_memory).status == "active"
    long_memory.files.record_skill_use(SLUG, True)
    assert long_memory.files.take_back_skill_success(SLUG) == "deprecated — 5 failed uses in a row"
