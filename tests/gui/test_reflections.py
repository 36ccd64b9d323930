"""Reflections in the real window: Session → Reflect on the task…, the report's dialog, the notice in
the conversation that opens it again, and reflecting on each task as it ends when Settings says so."""

from __future__ import annotations

from core.events import ReflectionWritten
from core.llm import ModelReply
from core.scripted import ScriptedModel, call, reply
from gui.dialogs.reflection import (
    ReflectionDialog,
    lesson_link,
    read_lesson_link,
    skill_link,
)
from gui.qt import QMessageBox, QUrl
from gui.widgets.chat import REFLECTION_LINK
from gui.widgets.wrapped_label import WrappedLabel
from tests.core.helpers import events_of
from tests.core.memory.test_reflection import STRATEGY, report_yaml
from tests.gui.test_window import start, wait_for_dialog

WAIT = 20_000


def failing_then_done(*side: ModelReply) -> ScriptedModel:
    return ScriptedModel([reply("", call("file_read", path="missing.md")),
                          reply("", call("task_done", summary="read what there was"))], side_replies=list(side))


def shown_reflections(window) -> list[ReflectionDialog]:
    return [d for d in window.findChildren(ReflectionDialog) if d.isVisible()]


def ready(qtbot, window, session) -> None:
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    qtbot.waitUntil(lambda: session.long_memory is not None, timeout=WAIT)  # the window loads it after its first frame
    window._update_controls()


def test_reflecting_on_a_task_shows_the_report_and_its_notice_opens_it_again(qtbot, make_window, workdir):
    window = make_window(failing_then_done(ModelReply(report_yaml())))
    session = start(window, workdir, task="Read the notes")
    ready(qtbot, window, session)
    action = window.actions_by_name["reflect"]
    assert action.isEnabled() and action.text() == "Reflect on the t&ask…"

    action.trigger()
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    dialog, = shown_reflections(window)
    assert dialog.windowTitle() == "Reflection — Read the notes"
    assert "**Achieved.** The tests pass again." in dialog.markdown
    assert "wasted edits. — *suggested in 1 of the 3 sessions' reflections" in dialog.markdown
    assert "Achieved." in dialog.text.toPlainText() and STRATEGY in dialog.text.toPlainText()
    event, = events_of(session, ReflectionWritten)
    assert window.statusBar().currentMessage() == "Reflected on “Read the notes”"
    dialog.close()

    # The conversation says it, and its link opens the report again.
    notices = [label for label in window.chat.findChildren(WrappedLabel) if REFLECTION_LINK in label.text()]
    assert len(notices) == 1 and "by scripted: the task was achieved; 1 strategy suggested" in notices[0].text()
    notices[0].linkActivated.emit(f"{REFLECTION_LINK}{event.path}")
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    assert shown_reflections(window)[0].markdown == dialog.markdown


def test_with_nothing_new_to_reflect_on_the_person_is_told(qtbot, make_window, workdir):
    window = make_window(failing_then_done(ModelReply(report_yaml())))
    session = start(window, workdir)
    ready(qtbot, window, session)
    window.reflections.reflect()
    qtbot.waitUntil(lambda: bool(events_of(session, ReflectionWritten)) and not window.reflections.working, timeout=WAIT)
    window.reflections.reflect()
    qtbot.waitUntil(lambda: any("nothing to reflect on" in box.text() for box in window.findChildren(QMessageBox)
                                if box.isVisible()), timeout=WAIT)
    assert len(events_of(session, ReflectionWritten)) == 1


def test_each_task_is_reflected_on_as_it_ends_when_settings_say_so(qtbot, make_window, workdir):
    window = make_window(failing_then_done(ModelReply(report_yaml())))
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    window.prefs.reflect_after_tasks = 1
    session = start(window, workdir, task="Read the notes")
    qtbot.waitUntil(lambda: bool(events_of(session, ReflectionWritten)), timeout=WAIT)
    qtbot.waitUntil(lambda: not window.reflections.working, timeout=WAIT)
    # Nobody asked to see it, and it made no lesson: it waits in the conversation, not in a dialog.
    assert shown_reflections(window) == []
    assert window.statusBar().currentMessage() == "Reflected on “Read the notes”"


def test_a_run_the_person_stopped_is_not_reflected_on_by_itself(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("human_ask", question="Which notes?"))],
                                       side_replies=[ModelReply(report_yaml())]))
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    window.prefs.reflect_after_tasks = 1
    session = start(window, workdir)
    wait_for_dialog(qtbot, window, "ask_user")
    window.stop()
    qtbot.waitUntil(lambda: session.state.status == "ended:aborted" and not session.running, timeout=WAIT)
    qtbot.wait(300)
    assert events_of(session, ReflectionWritten) == [] and not window.reflections.working


def test_reflecting_on_each_task_is_a_setting_the_command_line_shares(qtbot, make_window, tmp_path):
    from core.user_settings import read_settings

    window = make_window()
    dialog = window.open_settings()
    assert not dialog.reflect.isChecked()
    dialog.reflect.setChecked(True)
    dialog._accept()
    qtbot.waitUntil(lambda: window.prefs.reflect_after_tasks == 1, timeout=WAIT)
    assert read_settings(window.settings.shared_file)["reflect_after_tasks"] == 1
    assert window.settings.load().reflect_after_tasks == 1


def test_a_strategy_is_made_a_lesson_from_the_reflections_page(qtbot, make_window, workdir):
    window = make_window(failing_then_done(ModelReply(report_yaml())))
    session = start(window, workdir, task="Read the notes")
    ready(qtbot, window, session)
    window.reflections.reflect()
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    dialog, = shown_reflections(window)
    event, = events_of(session, ReflectionWritten)
    link = lesson_link(event.path, 0)
    assert read_lesson_link(link) == (event.path, 0) and read_lesson_link("https://example.com") is None
    assert f"[Make it a lesson now]({link})" in dialog.markdown and f'href="{link}"' in dialog.text.toHtml()
    dialog.text.anchorClicked.emit(QUrl(link))
    qtbot.waitUntil(lambda: "*lesson m1 in MEMORY.md*" in dialog.markdown, timeout=WAIT)
    assert link not in dialog.markdown
    assert window.statusBar().currentMessage() == "Lesson m1 is in MEMORY.md"
    assert window.status.memory.text() == "Memory: 1 lesson, 0 skills"
    assert STRATEGY in window.workspace.long_memory.files.memory_path.read_text(encoding="utf-8")


def test_what_the_agent_learned_makes_a_lesson_too(qtbot, make_window, workdir):
    window = make_window(failing_then_done(ModelReply(report_yaml())))
    session = start(window, workdir, task="Read the notes")
    ready(qtbot, window, session)
    window.reflections.reflect(shown=False)
    qtbot.waitUntil(lambda: bool(events_of(session, ReflectionWritten)) and not window.reflections.working, timeout=WAIT)
    window.actions_by_name["strategies"].trigger()
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    dialog, = shown_reflections(window)
    assert dialog.windowTitle() == "What the agent learned — Lessons, strategies and skills"
    assert f"**{STRATEGY}** When: a test fails. — *1 of 3 sessions*" in dialog.markdown
    event, = events_of(session, ReflectionWritten)
    dialog.text.anchorClicked.emit(QUrl(f"tripane-lesson:{event.path}:0"))
    qtbot.waitUntil(lambda: "### Lessons" in dialog.markdown, timeout=WAIT)
    assert f"**{STRATEGY} (when: a test fails)** — *m1, made a lesson by you from the reflections on {session.id}, " in dialog.markdown


def test_a_reflection_whose_file_is_not_here_is_said_so(qtbot, make_window, workdir):
    window = make_window(failing_then_done(ModelReply(report_yaml())))
    session = start(window, workdir)
    ready(qtbot, window, session)
    window.reflections.show("reflections/20261101-000000-dead-1.yaml")
    qtbot.waitUntil(lambda: any("not in this data folder's long-term memory" in box.text()
                                for box in window.findChildren(QMessageBox) if box.isVisible()), timeout=WAIT)


def test_a_run_stopped_at_three_strike_is_reflected_on_by_itself(qtbot, make_window, workdir):
    import json

    missing = reply("", call("file_read", path="missing.txt"))
    reboot = ModelReply(json.dumps({"goal": "read it", "tried": "the same read", "wrong": "no file",
                                    "differently": "list first", "ask_human": "where is it?"}))
    window = make_window(ScriptedModel([missing, missing, missing], side_replies=[reboot, ModelReply(report_yaml())]))
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    window.prefs.reflect_after_tasks = 1
    session = start(window, workdir)
    wait_for_dialog(qtbot, window, "three_strike").choose("stop")
    qtbot.waitUntil(lambda: bool(events_of(session, ReflectionWritten)), timeout=WAIT)
    assert session.state.status == "ended:aborted"


def test_a_lesson_quoted_at_a_tasks_start_is_said_in_the_conversation(qtbot, make_window, workdir, tmp_path):
    from core.memory.embedding import LocalEmbedder
    from core.memory.longterm import LongTermMemory

    memory = LongTermMemory(tmp_path / "data", LocalEmbedder())
    memory.remember("Cache the pip downloads in CI (when: the CI takes long)", kind="lesson", source="s1")
    memory.close()
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    session = start(window, workdir, task="Why does CI take forty minutes?")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    notices = [label.text() for label in window.chat.findChildren(WrappedLabel) if "Long-term memory" in label.text()]
    assert len(notices) == 1  # (its brain is drawn as a stand-in where the fonts have none)
    assert notices[0].endswith(" Long-term memory recalled for this task: lessons quoted: m1 (appended to the context)")


def test_a_skill_is_retired_and_taken_back_from_what_the_agent_learned(qtbot, make_window):
    window = make_window()
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    window.workspace.long_memory.save_skill("Fix failing tests", ["pytest reports failures"], ["Run it alone"], [],
                                            source="s1")
    window.actions_by_name["strategies"].trigger()
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    dialog, = shown_reflections(window)
    assert f"[Retire it]({skill_link('fix-failing-tests', 'deprecated')})" in dialog.markdown
    dialog.text.anchorClicked.emit(QUrl(skill_link("fix-failing-tests", "deprecated")))
    qtbot.waitUntil(lambda: "*deprecated (set by you)" in dialog.markdown, timeout=WAIT)
    assert f"[Take it back]({skill_link('fix-failing-tests', 'active')})" in dialog.markdown
    assert window.statusBar().currentMessage() == "The skill “Fix failing tests” is retired: neither offered nor followed"
    assert window.status.memory.text() == "Memory: 0 lessons, 0 skills"
    dialog.text.anchorClicked.emit(QUrl(skill_link("fix-failing-tests", "active")))
    qtbot.waitUntil(lambda: "*active (set by you)" in dialog.markdown, timeout=WAIT)


def test_a_task_that_ends_before_memory_has_loaded_is_reflected_on_once_it_has(qtbot, make_window, workdir,
                                                                                monkeypatch):
    import threading

    from gui.workspace import Workspace

    gate = threading.Event()
    opened = Workspace._open_memory
    monkeypatch.setattr(Workspace, "_open_memory", lambda self: (gate.wait(30), opened(self))[1])
    try:
        window = make_window(failing_then_done(ModelReply(report_yaml())))
        window.prefs.reflect_after_tasks = 1
        session = start(window, workdir)
        qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
        assert session.long_memory is None and list(window.reflections.due) == [session.id]
    finally:
        gate.set()
    qtbot.waitUntil(lambda: bool(events_of(session, ReflectionWritten)), timeout=WAIT)
    assert window.reflections.due == {}


def test_a_skills_variant_that_waits_for_the_person_is_tested_then_stopped_from_what_the_agent_learned(
        qtbot, make_window):
    from core.memory.variants import (
        DROP_VARIANT,
        TEST_VARIANT,
        proposals,
        propose,
        variant_of,
    )
    from tests.core.memory.test_variants import (
        NEW_STRATEGY,
        SLUG,
        variants_yaml,
        write_skill,
    )

    window = make_window()
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    memory = window.workspace.long_memory
    propose(memory.files, write_skill(memory), proposals(variants_yaml(NEW_STRATEGY))[0], "")
    window.actions_by_name["strategies"].trigger()
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    dialog, = shown_reflections(window)
    assert "*Variant waiting for you*, a new strategy: first list what you do not know." in dialog.markdown
    dialog.text.anchorClicked.emit(QUrl(skill_link(SLUG, TEST_VARIANT)))
    qtbot.waitUntil(lambda: "*Variant on test*" in dialog.markdown, timeout=WAIT)
    assert window.statusBar().currentMessage() == ("The variant of “Fix failing tests” is tested: the tasks the skill "
                                                   "fits alternate between the two")
    assert f"[Stop the test]({skill_link(SLUG, DROP_VARIANT)})" in dialog.markdown
    dialog.text.anchorClicked.emit(QUrl(skill_link(SLUG, DROP_VARIANT)))
    qtbot.waitUntil(lambda: "Variant" not in dialog.markdown, timeout=WAIT)
    assert variant_of(memory.files, SLUG) is None
    assert window.statusBar().currentMessage() == ("The variant of “Fix failing tests” is set aside; the skill's file "
                                                   "says it was tried")


def test_a_reflection_that_proposes_a_new_strategy_for_a_skill_links_to_where_the_person_decides(
        qtbot, make_window, workdir):
    from gui.widgets.chat import LEARNED_LINK
    from tests.core.memory.test_variants import (
        NEW_STRATEGY,
        TASK,
        variants_yaml,
        write_skill,
    )

    window = make_window(ScriptedModel([reply("", call("task_done", summary="fixed"))],
                                       side_replies=[ModelReply(report_yaml()),
                                                     ModelReply(variants_yaml(NEW_STRATEGY))]))
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    write_skill(window.workspace.long_memory)
    session = start(window, workdir, task=TASK)
    ready(qtbot, window, session)
    window.reflections.reflect(shown=False)
    qtbot.waitUntil(lambda: bool(events_of(session, ReflectionWritten)) and not window.reflections.working,
                    timeout=WAIT)
    notice, = [label for label in window.chat.findChildren(WrappedLabel) if REFLECTION_LINK in label.text()]
    assert (f'a variant of the skill “Fix failing tests” to test, a new strategy: first list what you do not know '
            f'(it waits for you in View → <a href="{LEARNED_LINK}">What the agent learned</a>)'
            in notice.text())
    notice.linkActivated.emit(LEARNED_LINK)
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    dialog, = shown_reflections(window)
    assert "*Variant waiting for you*, a new strategy: first list what you do not know." in dialog.markdown


def test_the_days_work_is_reviewed_from_the_view_menu_and_its_report_opens(qtbot, make_window):
    from tests.core.memory.test_review import DAY, log_tasks

    window = make_window(ScriptedModel([], side_replies=[ModelReply(report_yaml())]))
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    memory = window.workspace.long_memory
    log_tasks(memory.files, DAY, "s1")
    window.actions_by_name["review_day"].trigger()  # one task: nothing to look across
    qtbot.waitUntil(lambda: any("There is no day left to review" in box.text()
                                for box in window.findChildren(QMessageBox) if box.isVisible()), timeout=WAIT)
    for box in window.findChildren(QMessageBox):
        box.close()
    log_tasks(memory.files, DAY, "s2")
    window.actions_by_name["review_day"].trigger()
    qtbot.waitUntil(lambda: bool(shown_reflections(window)), timeout=WAIT)
    dialog, = shown_reflections(window)
    assert dialog.windowTitle() == "Review — The work of 2026-11-25"
    assert dialog.markdown.startswith("*Review of the work of 2026-11-25 (2 tasks), ")
    assert "**Achieved.** The tests pass again." in dialog.markdown
    assert window.statusBar().currentMessage() == "Reviewed the work of 2026-11-25"
    assert (memory.files.root / "reflections" / "day-2026-11-25-1.yaml").exists()


def test_a_finished_day_is_reviewed_when_the_window_opens_after_it_when_settings_say_so(
        qtbot, make_window, settings, tmp_path):
    import datetime

    from core.memory.layers import MemoryFiles
    from tests.core.memory.test_review import log_tasks

    yesterday = datetime.date.today() - datetime.timedelta(days=1)
    files = MemoryFiles(tmp_path / "data" / "memory")
    log_tasks(files, yesterday, "s1", "s2")
    log_tasks(files, datetime.date.today(), "s3", "s4")  # today is not over
    prefs = settings.load()
    prefs.review_days = 1
    settings.save(prefs)
    model = ScriptedModel([], side_replies=[ModelReply(report_yaml())])
    window = make_window(model)
    reviewed = files.root / "reflections" / f"day-{yesterday:%Y-%m-%d}-1.yaml"
    qtbot.waitUntil(lambda: reviewed.exists() and not window.reflections.reviewing, timeout=WAIT)
    assert window.statusBar().currentMessage() == f"Reviewed the work of {yesterday:%Y-%m-%d}"
    assert shown_reflections(window) == []  # nobody asked to see it, and it made no lesson
    assert len(model.requests) == 1 and f"The log of {yesterday:%Y-%m-%d}" in model.requests[0].messages[1]["content"]

    dialog = window.open_settings()
    assert dialog.review.isChecked()
    dialog.review.setChecked(False)
    dialog._accept()
    qtbot.waitUntil(lambda: window.prefs.review_days == 0, timeout=WAIT)
