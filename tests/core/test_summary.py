"""A session at a glance (core/summary.py): what a person reads first after a long run."""

from __future__ import annotations

from core.scripted import ScriptedModel, call, reply
from core.summary import summarize, summary_rows
from tests.core.helpers import make_session, wait_for_question


async def test_a_runs_summary_counts_its_turns_calls_failures_questions_and_changes(store, data_dir, workdir):
    model = ScriptedModel([
        reply("", call("file_list", call_id="l1"), prompt_tokens=1_000, cached_tokens=0),
        reply("", call("file_read", call_id="r1", path="missing.txt"), prompt_tokens=1_200, cached_tokens=900),
        reply("", call("file_write", call_id="w1", path="notes.md", content="x\n"), prompt_tokens=1_400,
              cached_tokens=1_100),
        reply("", call("human_ask", call_id="a1", question="Keep the old notes?", options=["yes", "no"]),
              prompt_tokens=1_500, cached_tokens=1_300),
        reply("Done.", call("task_done", call_id="d1", summary="notes written"), prompt_tokens=1_600,
              cached_tokens=1_400),
    ])
    session = make_session(store, data_dir, workdir, model, task="Write the notes")
    session.start()
    question = await wait_for_question(session)
    await session.answer(question.qid, "no")
    assert await session.wait() == "done"

    summary = summarize(session.records)
    assert (summary.turns, summary.requests, summary.messages, summary.edits) == (5, 5, 0, 0)
    assert summary.calls["file_read"] == 1 and summary.failed["file_read"] == 1 and sum(summary.failed.values()) == 1
    assert summary.questions == {"ask_user": 1} and summary.answered == 1
    rows = dict(summary_rows(summary))
    assert rows["State"] == "ended: done — notes written"
    assert rows["Model"] == "scripted"
    assert rows["Turns"] == "5 (5 requests)"
    assert rows["Tool calls"].startswith("5, 1 failed: ") and "file_read 1 (1 failed)" in rows["Tool calls"]
    assert rows["Questions to you"].startswith("1 (") and rows["Questions to you"].endswith("; 1 answered")
    assert rows["Tokens"].startswith("6,700 in (70% cached, as the provider reported); ")
    assert rows["Changed in the work folder"] == "notes.md (created)"
    assert " to " in rows["Time"] and "pauses included" in rows["Time"]
    assert "Put back by you" not in rows

    session.put_back(["notes.md"])
    assert dict(summary_rows(summarize(session.records)))["Put back by you"] == "1 file: notes.md"


def test_a_session_with_no_events_says_so_without_failing():
    rows = dict(summary_rows(summarize([])))
    assert rows["State"] == "new" and rows["Time"] == "—" and rows["Model"] == "—" and rows["Cost"] == "$0.0000"


async def test_a_model_without_a_price_or_cache_figures_is_not_said_to_be_free_or_missing_its_cache(
        store, data_dir, workdir):
    model = ScriptedModel([reply("", call("task_done", summary="ok"), prompt_tokens=1_000, cached_tokens=0)])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    rows = dict(summary_rows(summarize(session.records)))
    assert rows["Cost"].startswith("unknown: litellm has no price for the model")
    assert rows["Tokens"].startswith("1,000 in; ")  # not "0% cached": the server never said
    assert rows["Turns"] == "1 (1 request)"


def test_hundreds_of_files_put_back_are_counted_with_a_few_named():
    # The 622 names of a formatter's put-back filled the summary window.
    from core.events import FilesPutBack, Record

    paths = tuple(f"src/llms/m{i:03}.py" for i in range(622))
    rows = dict(summary_rows(summarize([Record("s", 1, "", FilesPutBack(paths=paths))])))
    assert rows["Put back by you"] == ", ".join(paths[:12]) + " and 610 more (622 files, all in src/llms/)"
