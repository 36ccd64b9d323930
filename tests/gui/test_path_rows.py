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
    # Too narrow for the name and what was done: the name keeps its share, and what was done is
    # cut at the row's end as Qt draws it. Both cut, a short name read "se…og".
    room = int(metrics.horizontalAdvance("…/transformation.py") / 0.6) + 2
    assert room < metrics.horizontalAdvance("…/transformation.py  ·  changed by a command")
    assert fitted(LONG, metrics, room) == "…/transformation.py  ·  changed by a command"
    short = fitted("server.log  ·  created by a command, then not by the agent", metrics,
                   metrics.horizontalAdvance("server.log  ·  created by a command"))
    assert short.startswith("server.log  ·  created")
    # Too narrow even for the name: the path itself loses its middle.
    narrow = fitted(LONG, metrics, metrics.horizontalAdvance("transformation.py"))
    assert "…" in narrow.partition("  ·  ")[0] and "transformation.py" not in narrow


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


def test_a_tool_cards_header_keeps_the_files_name_of_a_long_path(qtbot):
    import json

    from core.events import ToolCall
    from gui.widgets.tool_card import ToolCard

    path = "litellm/llms/anthropic/experimental_pass_through/adapters/transformation.py"
    card = ToolCard(ToolCall("w1", "file_write", json.dumps({"path": path, "content": "x\n"})))
    qtbot.addWidget(card)
    # It was cut at the end ("…/adapters/transformati…"), then in its middle by the header itself.
    assert card.header.text() == "…  file_write  litellm/llms/anthropic/exp…ntal_pass_through/adapters/transformation.py"


def test_a_search_cards_header_says_where_it_searched_when_not_the_whole_folder(qtbot):
    import json

    from core.events import ToolCall
    from gui.widgets.tool_card import ToolCard

    def header(**arguments) -> str:
        card = ToolCard(ToolCall("s1", "file_search", json.dumps(arguments, sort_keys=True)))
        qtbot.addWidget(card)
        return card.header.text()

    # A search of one log or of a customer's bundle said only its text: where it looked was folded away.
    assert header(query="ERROR", path="support/acme-bundle-2026-11-28.zip") == \
        "…  file_search  ERROR  in support/acme-bundle-2026-11-28.zip"
    assert header(query="ERROR", path=".") == header(query="ERROR") == "…  file_search  ERROR"
    long = header(query="pool exhausted|connection refused|timed out waiting", path=f"support/{'x' * 60}/orders.log.1.gz")
    assert long.startswith("…  file_search  pool exhausted|connection…  in support/xxx") and \
        long.endswith("/orders.log.1.gz") and len(long) <= len("…  file_search  ") + 71


def test_a_long_path_is_shortened_in_its_folders_and_a_long_name_in_its_middle():
    from core.paths import shortened_path

    path = "litellm/llms/anthropic/experimental_pass_through/adapters/transformation.py"
    assert shortened_path(path, 200) == path
    assert shortened_path(path, 40) == "litellm/llm…h/adapters/transformation.py"  # (40 characters)
    assert shortened_path("C:\\Users\\ada\\projects\\website\\src\\components\\header.tsx", 30).endswith("\\header.tsx")
    name = "a_generated_file_name_that_is_much_longer_than_the_limit_allows.json"
    assert shortened_path(f"data/{name}", 30) == f"data/{name}"[:14] + "…" + f"data/{name}"[-15:]
