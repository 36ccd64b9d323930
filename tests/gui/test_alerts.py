"""The person looking elsewhere is told when a run needs them or ends; the person looking is not."""

from __future__ import annotations

from core.llm import ModelError
from core.scripted import ScriptedModel, call, reply
from tests.gui.test_window import start

WAIT = 20_000


def watch(window) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    window.attention_requested.connect(lambda title, message: seen.append((title, message)))
    return seen


def test_a_run_that_ends_in_the_background_is_announced(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="hello.txt written"))]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)  # the person is in another app
    seen = watch(window)
    session = start(window, workdir, task="Write hello.txt")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert seen == [("Task done", "Write hello.txt: hello.txt written")]


def test_a_failed_run_is_announced_with_the_providers_reason(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([ModelError("auth", "the API key was refused")]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)
    seen = watch(window)
    session = start(window, workdir, task="Summarise the repo")
    qtbot.waitUntil(lambda: session.state.ended and bool(seen), timeout=WAIT)
    title, message = seen[-1]
    assert title == "Run failed" and message.startswith("Summarise the repo: ") and "API key was refused" in message


def test_a_question_is_announced_with_what_it_asks(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([reply("", call("human_ask", question="Which file?", options=["a", "b"]))]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)
    seen = watch(window)
    start(window, workdir, task="Pick a file")
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert seen[0][0] == "Tripane needs you" and "Which file?" in seen[0][1]


def test_nothing_is_announced_to_a_person_watching_the_window(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: True)
    seen = watch(window)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.wait(200)
    assert seen == []
