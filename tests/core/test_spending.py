"""What the models cost over all sessions, from the log: by day, by model, by session."""

from __future__ import annotations

import datetime
import json
import sqlite3

from core.events import (
    AssistantMessage,
    Compaction,
    SessionStarted,
    ToolCall,
    Usage,
    UserMessage,
)
from core.spending import report, since_days, spending
from core.store import Store
from core.text import money
from tests.core.test_cli import finish, tripane


def reply(model: str, prompt: int, completion: int, cached: int, cost: float) -> AssistantMessage:
    return AssistantMessage("", (ToolCall("c", "file_list", "{}"),), Usage(prompt, completion, cached, cost), model=model)


def two_sessions(path) -> Store:
    store = Store(path)
    add_two_sessions(store)
    return store


def add_two_sessions(store: Store) -> None:
    for sid, task in (("s1", "Fix the date tests"), ("s2", "Sort the changelog")):
        store.create_session(sid, task=task, model="openai/gpt-4o-mini")
        store.append(sid, SessionStarted(task=task, model="openai/gpt-4o-mini", workdir="/w"))
        store.append(sid, UserMessage("go on"))  # no usage: not a request
    store.append("s1", reply("openai/gpt-4o-mini", 1_000, 100, 800, 0.0003))
    store.append("s1", reply("openai/gpt-4o-mini", 2_000, 100, 1_600, 0.0005))
    # A compaction's summary, by the summary model, counts; one nobody wrote (a list of calls) does not.
    store.append("s1", Compaction("summary", 1, 3, True, usage=Usage(5_000, 300, 0, 0.0009),
                                  summary_model="openai/gpt-4.1-nano"))
    store.append("s1", Compaction("(The summary model failed …)", 4, 5, True))
    store.append("s2", reply("anthropic/claude-sonnet-4-5", 10_000, 500, 0, 0.0375))
    store.append("s2", reply("ollama_chat/llama3.1", 3_000, 200, 0, 0.0))  # a local model: no price


def age(path, session_id: str, days: int) -> None:
    """The session's events as if written `days` days ago."""
    with sqlite3.connect(path) as conn:
        stamp = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=days)).isoformat()
        conn.execute("UPDATE events SET ts = ? WHERE session_id = ?", [stamp, session_id])


def test_spending_adds_up_replies_and_summaries_by_day_model_and_session(tmp_path):
    store = two_sessions(tmp_path / "tripane.db")
    spent = spending(store)
    assert spent.total.requests == 5 and spent.total.tokens == 1_100 + 2_100 + 5_300 + 10_500 + 3_200
    assert round(spent.total.cost_usd, 6) == 0.0392
    assert {model: s.requests for model, s in spent.by_model.items()} == {
        "openai/gpt-4o-mini": 2, "openai/gpt-4.1-nano": 1, "anthropic/claude-sonnet-4-5": 1, "ollama_chat/llama3.1": 1}
    assert round(spent.by_session["s1"].cost_usd, 6) == 0.0017 and spent.by_session["s1"].cached_tokens == 2_400
    assert spent.titles == {"s1": "Fix the date tests", "s2": "Sort the changelog"}
    assert list(spent.by_day) == [datetime.date.today()]

    text = report(spent)
    assert text.startswith("Spent in the whole log: $0.0392, 22,200 tokens in 5 requests; 11% of the prompt tokens")
    by_model = text.split("By model")[1].split("By session")[0].split("\n")
    assert "anthropic/claude-sonnet-4-5" in by_model[1]  # the dearest first
    assert by_model[1].endswith("      1 request") and by_model[-3].endswith("      1 request")  # not "1 requests"
    assert "      2 requests" in text
    assert "$0 is a model litellm has no price for" in text


def test_a_period_counts_the_days_it_covers_only(tmp_path):
    store = two_sessions(tmp_path / "tripane.db")
    age(tmp_path / "tripane.db", "s2", 10)
    week = spending(store, since_days(7))
    assert list(week.by_session) == ["s1"] and week.since == datetime.date.today() - datetime.timedelta(days=6)
    month = spending(store, since_days(30))
    assert set(month.by_session) == {"s1", "s2"} and len(month.by_day) == 2
    age(tmp_path / "tripane.db", "s1", 40)
    age(tmp_path / "tripane.db", "s2", 40)
    assert "No model requests from" in report(spending(store, since_days(30)))
    assert spending(store, since_days(0)).total.requests == 5  # 0: the whole log


def test_a_damaged_event_is_passed_over_and_the_rest_counted(tmp_path):
    store = two_sessions(tmp_path / "tripane.db")
    store.db.execute("UPDATE events SET data = '{not json' WHERE session_id = 's2' AND kind = 'assistant_message' "
                     "AND data LIKE '%anthropic%'")
    spent = spending(store)
    assert spent.total.requests == 4 and "anthropic/claude-sonnet-4-5" not in spent.by_model


def test_tripane_spending_prints_the_report_or_json(tmp_path):
    two_sessions(tmp_path / "tripane.db").close()
    code, out, err = finish(tripane("spending", data_dir=tmp_path))
    assert code == 0, err
    assert out.startswith("Spent from ") and "Fix the date tests" in out and "By day" in out
    code, out, _ = finish(tripane("spending", "--json", "--days", "0", data_dir=tmp_path))
    data = json.loads(out)
    assert code == 0 and data["since"] is None and data["total"]["requests"] == 5
    assert data["by_session"][0] == {"session": "s2", "title": "Sort the changelog", "requests": 2,
                                     "prompt_tokens": 13_000, "completion_tokens": 700, "cached_tokens": 0,
                                     "cost_usd": 0.0375}
    code, _, err = finish(tripane("spending", "--days", "-1", data_dir=tmp_path))
    assert code == 2 and "--days" in err


def test_a_cost_reads_as_people_read_it_and_a_tiny_one_not_as_free():
    assert [money(c) for c in (1234.5, 1, 0.25, 0.00012, 0.00003, 0)] == [
        "$1,234.50", "$1.00", "$0.2500", "$0.0001", "<$0.0001", "$0.0000"]
