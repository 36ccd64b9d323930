"""A live pane over a growing file: appends render in place, a 1 MB file shows its tail."""

from __future__ import annotations

from gui.markdown import TAIL_CHARS
from gui.qt import QAbstractSlider
from gui.tasks import TaskKeeper
from gui.widgets.file_pane import FilePane


def entry(i: int) -> str:
    return f"\n### Entry {i}\n" + "".join(f"- step {i}.{j}: ran the tests, exit 0\n" for j in range(60))


def test_appends_render_in_place_and_a_megabyte_shows_only_its_tail(qtbot):
    content = {"text": "# Progress\n", "version": 1}
    pane = FilePane("progress.md", "Progress", TaskKeeper())
    qtbot.addWidget(pane)
    pane.show()
    pane.bind(lambda: (content["text"], content["version"]))
    qtbot.waitUntil(lambda: pane.shown_text == "# Progress\n")

    for i in range(600):  # about 1.3 MB, appended entry by entry as the core does
        content["text"] += entry(i)
        content["version"] += 1
        if i % 25 == 0:
            pane.refresh(now=True)
            qtbot.waitUntil(lambda: pane.shown_text == content["text"])
    pane.refresh(now=True)
    qtbot.waitUntil(lambda: pane.shown_text == content["text"])

    shown = pane.viewer.toPlainText()
    assert len(content["text"]) > 1_000_000
    assert "Entry 599" in shown and "step 599.59" in shown  # the newest entry is there, rendered
    assert "Entry 0\n" not in shown  # the oldest is not: the view keeps to the file's tail
    assert pane.viewer.document().characterCount() < TAIL_CHARS * 2
    assert pane.version_label.text() == f'<a href="history">v{content["version"]}</a>'  # a link to its history
    assert pane.version_label.accessibleName() == f"Progress, version {content['version']}: its history"  # not "v600"


def test_a_rewrite_renders_anew_and_an_edit_notice_appears_when_the_file_moves_on(qtbot):
    content = {"text": "# Plan\n- [ ] one\n", "version": 1}
    pane = FilePane("task_plan.md", "Task Plan", TaskKeeper(), editable=True)
    qtbot.addWidget(pane)
    pane.show()
    pane.bind(lambda: (content["text"], content["version"]))
    qtbot.waitUntil(lambda: "☐ one" in pane.viewer.toPlainText())

    pane.set_editing(True)
    content["text"], content["version"] = "# Plan\n- [x] one\n- [ ] two\n", 2
    pane.refresh(now=True)
    qtbot.waitUntil(lambda: pane.notice.isVisible())
    assert pane.notice.text().startswith("The agent saved version 2 while you edit")
    pane.set_editing(False)
    qtbot.waitUntil(lambda: "☑ one" in pane.viewer.toPlainText() and "☐ two" in pane.viewer.toPlainText())


def test_the_progress_log_opens_at_its_end_and_follows_it_the_plan_at_its_start(qtbot):
    long_log = "# Progress\n" + "".join(entry(i) for i in range(40))
    log_content = {"text": long_log, "version": 1}
    log = FilePane("progress.md", "Progress", TaskKeeper(), log=True)
    plan = FilePane("task_plan.md", "Task Plan", TaskKeeper(), editable=True)
    for pane in (log, plan):
        qtbot.addWidget(pane)
        pane.resize(400, 300)
        pane.show()
    log.bind(lambda: (log_content["text"], log_content["version"]))
    plan.bind(lambda: (long_log, 1))
    qtbot.waitUntil(lambda: log.shown_text == long_log and plan.shown_text == long_log)
    log_bar, plan_bar = log.viewer.verticalScrollBar(), plan.viewer.verticalScrollBar()
    assert log_bar.maximum() > 0 and log_bar.value() == log_bar.maximum()  # the newest entries
    assert plan_bar.maximum() > 0 and plan_bar.value() == 0

    log_content["text"] += entry(40)  # the run goes on: the view stays on the end
    log_content["version"] += 1
    log.refresh(now=True)
    qtbot.waitUntil(lambda: log.shown_text == log_content["text"])
    assert "step 40.59" in log.viewer.toPlainText()
    assert log_bar.value() == log_bar.maximum()


def tool_entry(i: int) -> str:
    """An entry as progress.md has them for a tool's result: a long block of output."""
    return f"\n## [12:00] Turn {i}: shell_run — ok\n\n**Result**:\n\n```\n" + "\n".join(map(str, range(100))) + "\n```\n"


def test_a_long_log_opens_at_its_very_end_and_a_scroll_of_the_persons_is_kept(qtbot):
    """Qt lays a long document out in steps, and its scroll range grows after the view is placed:
    the view keeps to the end as it grows, until the person scrolls."""
    content = {"text": "# Progress\n" + "".join(entry(i) + tool_entry(i) for i in range(8)), "version": 1}
    log = FilePane("progress.md", "Progress", TaskKeeper(), log=True)
    qtbot.addWidget(log)
    log.resize(400, 300)
    log.show()
    log.bind(lambda: (content["text"], content["version"]))
    qtbot.waitUntil(lambda: log.shown_text == content["text"])
    bar = log.viewer.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0
    qtbot.wait(200)  # the rest of the layout
    assert bar.value() == bar.maximum()

    bar.triggerAction(QAbstractSlider.SliderAction.SliderPageStepSub)  # the person scrolls up a page
    place = bar.value()
    content["text"] += entry(8) + tool_entry(8)
    content["version"] += 1
    log.refresh(now=True)
    qtbot.waitUntil(lambda: log.shown_text == content["text"])
    qtbot.wait(200)
    assert bar.value() == place < bar.maximum()


def structure(pane: FilePane) -> list[tuple[str, bool, int]]:
    """Each block of the view: its text, whether it is a list item, and its weight (headings are bold)."""
    blocks, block = [], pane.viewer.document().begin()
    while block.isValid():
        if block.text().strip():
            blocks.append((block.text().strip(), block.textList() is not None, block.begin().fragment().charFormat().fontWeight()))
        block = block.next()
    return blocks


def test_an_entry_appended_after_a_list_is_rendered_as_the_whole_file_renders_it(qtbot):
    start = "# Progress\n\n## [10:00] Session started\n- Model: m\n- Task: t\n"
    added = "\n## [10:01] Asked the person (approval)\nAllow shell_run?\n\n- one more item\n"
    content = {"text": start, "version": 1}
    growing, whole = (FilePane("progress.md", "Progress", TaskKeeper(), log=True) for _ in range(2))
    for pane in (growing, whole):
        qtbot.addWidget(pane)
    growing.bind(lambda: (content["text"], content["version"]))
    qtbot.waitUntil(lambda: growing.shown_text == start)
    content["text"], content["version"] = start + added, 2
    growing.refresh(now=True)  # appended in place
    qtbot.waitUntil(lambda: growing.shown_text == start + added)
    whole.bind(lambda: (start + added, 2))  # rendered whole
    qtbot.waitUntil(lambda: whole.shown_text == start + added)

    heading = next(b for b in structure(whole) if b[0].startswith("[10:01]"))
    assert heading[1] is False and heading[2] > 400  # a bold heading, not a list item
    assert heading in structure(growing)
    assert structure(growing) == structure(whole)


def test_the_editor_opens_with_the_cursor_where_an_edit_most_likely_goes(qtbot):
    plan = ("# Task Plan: Fix the zed import\n\n## Goal\nFix it.\n\n## Execution Plan\n### Phase 1\n"
            "- [x] Read the sources\n- [ ] Run the tests until they pass\n- [ ] Write the notes\n")
    findings = "# Research Findings\n\n## [2026-11-27] zed\nNot installed.\n"
    panes = {}
    for name, title, text in (("task_plan.md", "Task Plan", plan), ("findings.md", "Findings", findings)):
        pane = panes[name] = FilePane(name, title, TaskKeeper(), editable=True)
        qtbot.addWidget(pane)
        pane.show()
        pane.bind(lambda text=text: (text, 1))
        pane.set_editing(True)
    # The plan's: at the end of its current step (what 3-Strike stopped on), not before its title.
    cursor = panes["task_plan.md"].editor.textCursor()
    assert cursor.block().text() == "- [ ] Run the tests until they pass" and cursor.atBlockEnd()
    assert panes["findings.md"].editor.textCursor().atEnd()  # a finding is added at the end
    qtbot.keyClicks(panes["task_plan.md"].editor, " (pin zed first)")
    assert "- [ ] Run the tests until they pass (pin zed first)\n" in panes["task_plan.md"].editor.toPlainText()


def test_an_edit_taken_up_again_opens_with_the_cursor_where_it_changed_the_file(qtbot):
    plan = "# Task Plan: Port\n\n## Execution Plan\n- [ ] Port the parser\n- [ ] Port the tests\n"
    pane = FilePane("task_plan.md", "Task Plan", TaskKeeper(), editable=True)
    qtbot.addWidget(pane)
    pane.show()
    pane.bind(lambda: (plan, 3))
    pane.take_up_edit(plan.replace("Port the parser", "Port the parser (keep the old API)"), 3)
    cursor = pane.editor.textCursor()
    assert cursor.block().text() == "- [ ] Port the parser (keep the old API)" and cursor.atBlockEnd()
    pane.set_editing(False)
    pane.take_up_edit(plan + "- [ ] Write the notes\n", 3)  # lines added at the end: there
    assert pane.editor.textCursor().block().text() == "- [ ] Write the notes"


def test_leaving_an_edit_that_changed_the_plan_asks_before_discarding_it(qtbot):
    from gui.qt import QMessageBox, Qt

    pane = FilePane("task_plan.md", "Task Plan", TaskKeeper(), editable=True)
    qtbot.addWidget(pane)
    pane.show()
    pane.bind(lambda: ("# Plan\n- [ ] one\n", 1))
    qtbot.waitUntil(lambda: "☐ one" in pane.viewer.toPlainText())
    assert pane.edit_button.toolTip() == "Edit this file (Ctrl+E)"

    def asked() -> QMessageBox | None:
        return next((box for box in pane.findChildren(QMessageBox) if box.isVisible()), None)

    pane.toggle_editing()  # Ctrl+E
    pane.editor.insertPlainText("\n- [ ] two, which took a while to write")
    qtbot.mouseClick(pane.edit_button, Qt.MouseButton.LeftButton)  # Cancel
    qtbot.waitUntil(lambda: asked() is not None)
    assert pane.editing and pane.edit_button.isChecked()
    qtbot.mouseClick(asked().button(QMessageBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)  # Keep editing
    qtbot.waitUntil(lambda: asked() is None)
    assert pane.editing and "two, which took a while" in pane.editor.toPlainText()

    pane.toggle_editing()  # Ctrl+E again, out of habit
    qtbot.waitUntil(lambda: asked() is not None)
    qtbot.mouseClick(asked().button(QMessageBox.StandardButton.Discard), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not pane.editing)
    assert not pane.edit_button.isChecked() and pane.edit_button.text() == "Edit"

    pane.toggle_editing()  # an edit that changed nothing is left at once
    pane.toggle_editing()
    assert not pane.editing and asked() is None

    findings = FilePane("findings.md", "Findings", TaskKeeper(), editable=True)
    qtbot.addWidget(findings)
    assert findings.edit_button.toolTip() == "Edit this file (Ctrl+Shift+E)"
