"""The keyboard's way to a form's field: Alt and its label's underlined letter."""

from __future__ import annotations

from gui.dialogs.new_session import NewSessionDialog
from gui.mnemonics import with_keys
from gui.qt import QFormLayout, QKeySequence, QLabel, Qt
from gui.settings import Preferences


def keyed_labels(window) -> dict[str, str]:
    """Each form label's text as shown (no mark), with its key: {"Model:": "Alt+M"}."""
    return {label.text().replace("&", ""): QKeySequence.mnemonic(label.text()).toString()
            for form in window.findChildren(QFormLayout) for row in range(form.rowCount())
            if (item := form.itemAt(row, QFormLayout.ItemRole.LabelRole)) is not None
            and isinstance(label := item.widget(), QLabel) and label.text()}


def test_alt_and_a_labels_letter_moves_to_its_field_in_the_new_session_dialog(qtbot, workdir):
    dialog = NewSessionDialog(Preferences(model="openai/gpt-4o-mini", workdir=str(workdir)))
    qtbot.addWidget(dialog)
    with qtbot.waitActive(dialog):
        dialog.show()
        dialog.activateWindow()
    keys = keyed_labels(dialog)
    assert keys["Task:"] == "Alt+T" and keys["Work folder:"] == "Alt+W" and keys["Model:"] == "Alt+M"
    assert len(set(keys.values())) == len(keys) and "" not in keys.values()  # every label one, none alike
    assert dialog.focusWidget() is dialog.task
    qtbot.keyClick(dialog.task, Qt.Key.Key_M, Qt.KeyboardModifier.AltModifier)
    assert dialog.focusWidget() is dialog.model  # (its text field, the combo box's own)
    qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_W, Qt.KeyboardModifier.AltModifier)
    assert dialog.focusWidget() is dialog.recent  # a row of the folder's field and its Browse… button
    qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_T, Qt.KeyboardModifier.AltModifier)
    assert dialog.focusWidget() is dialog.task and dialog.task.toPlainText() == ""  # nothing typed


def test_the_settings_labels_keep_clear_of_its_tabs_keys(qtbot, make_window):
    window = make_window()
    dialog = window.open_settings()
    keys = keyed_labels(dialog)
    tabs = {QKeySequence.mnemonic(dialog.pages.tabText(i)).toString() for i in range(dialog.pages.count())}
    assert tabs == {"Alt+M", "Alt+V", "Alt+W", "Alt+T", "Alt+A"}
    assert keys["Model:"] not in tabs and keys["Model:"] == "Alt+O"
    assert keys["Search with:"] and keys["Search with:"] not in tabs  # (on the Web search tab)
    # Rows of a field and what goes beside it (Browse…, what the copies take now) have theirs too
    assert keys["Data folder:"] and keys["Copies of work folders, at most:"]
    page = dialog.pages.widget(0)  # on one tab, no two alike
    shown = [key for text, key in keyed_labels(page).items()]
    assert len(set(shown)) == len(shown)


def test_a_word_starts_letter_first_then_any_of_its_letters():
    assert with_keys(["Work folder:", "Context window:", "Reasoning effort:"], taken="c") == [
        "&Work folder:", "C&ontext window:", "&Reasoning effort:"]
