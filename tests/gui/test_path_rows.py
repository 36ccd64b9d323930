"""Rows that name a path and what was done to it keep the file's name and those words when the
list is narrow: the folders between lose their middle."""

from __future__ import annotations

from gui.qt import QFontMetrics, QListWidget, QListWidgetItem, QStyleOptionViewItem
from gui.widgets.path_rows import PathRows, fitted

LONG = "litellm/llms/anthropic/experimental_pass_through/adapters/transformation.py  ·  changed by a command"


def test_a_long_path_keeps_its_name_and_what_was_done_and_loses_its_folders_middle(qtbot):
    view = QListWidget()
    qtbot.addWidget(view)
    metrics = QFontMetrics(view.font())
    whole = metrics.horizontalAdvance(LONG)
    assert fitted(LONG, metrics, whole) == LONG  # (room for it all: as it is)
    cut = fitted(LONG, metrics, whole * 2 // 3)
    assert cut.startswith("litellm/") and "…" in cut
    assert cut.endswith("/transformation.py  ·  changed by a command")
    assert metrics.horizontalAdvance(cut) <= whole * 2 // 3
    # Too narrow even for the name: the path itself loses its middle; what was done stays.
    tight = fitted(LONG, metrics, metrics.horizontalAdvance("  ·  changed by a command") + 40)
    assert tight.endswith("  ·  changed by a command") and "…" in tight and "transformation.py" not in tight


def test_the_list_draws_the_fitted_row_and_keeps_the_whole_text(qtbot):
    view = QListWidget()
    qtbot.addWidget(view)
    view.resize(320, 120)
    view.setItemDelegate(PathRows(view))
    view.addItem(QListWidgetItem(LONG))
    view.show()
    qtbot.waitExposed(view)
    option = QStyleOptionViewItem()
    option.initFrom(view)
    option.rect = view.visualItemRect(view.item(0))
    view.itemDelegate().initStyleOption(option, view.model().index(0, 0))
    assert option.text.endswith("transformation.py  ·  changed by a command") and "…" in option.text
    assert view.item(0).text() == LONG  # (the filter, its tip and a screen reader have it whole)
    assert not view.horizontalScrollBar().isVisible()
