"""A table in a message is drawn with its rules: a label's HTML takes no style sheet."""

from __future__ import annotations

from gui.qt import QTextCursor, QTextDocument
from gui.widgets.chat_items import MessageItem


def first_table(html: str):
    document = QTextDocument()
    document.setHtml(html)
    block = document.begin()
    while block.isValid():
        table = QTextCursor(block).currentTable()
        if table is not None:
            return document, table
        block = block.next()
    return document, None


def test_a_table_in_a_reply_has_rules_and_padded_cells(qtbot):
    item = MessageItem("assistant", "| test | status |\n|---|---|\n| test_offset | failed |\n")
    qtbot.addWidget(item)
    _document, table = first_table(item.body.text())
    assert table is not None and (table.rows(), table.columns()) == (2, 2)
    assert table.format().border() >= 1 and table.format().cellPadding() >= 2
