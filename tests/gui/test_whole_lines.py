"""A session titled in Chinese keeps its second line in the list (when, how it ended, where)."""

from __future__ import annotations

import pytest

from core.store import SessionRow
from gui.widgets.session_list import SessionList
from gui.widgets.whole_lines import drawn_height, line_heights


def test_the_height_qt_needs_to_draw_every_line():
    assert drawn_height([14, 14]) == 28  # lines alike: their sum
    assert drawn_height([18, 14]) == 36  # Qt wants room for the first line's height twice
    assert drawn_height([14, 18]) == 32
    assert drawn_height([18, 14, 14]) == 46  # (18 + 14 + 14)
    assert drawn_height([14]) == 14


def inked_rows(image, top: int, bottom: int, left: int, right: int) -> int:
    """How many pixel rows between top and bottom hold anything but the background's colour."""
    right = min(right, image.width() - 1)  # (a row is as wide as its text, the list maybe narrower)
    background = image.pixelColor(right, top + 1)
    return sum(1 for y in range(top, bottom)
               if any(image.pixelColor(x, y) != background for x in range(left, right - 4)))


def test_a_chinese_titled_sessions_second_line_is_drawn(qtbot):
    title = "修复 average() 函数：空列表应返回 0.0，并让测试通过。"
    sessions = SessionList()
    qtbot.addWidget(sessions)
    heights = line_heights(f"■ {title}\n    2026-11-28 19:41 · done · work", sessions.list.font())
    if heights[0] <= heights[1]:
        pytest.skip("no font here draws Chinese taller than the list's own (Noto CJK does)")
    sessions.resize(300, 400)
    sessions.show_rows([SessionRow("zh", "2026-11-28T19:41:00", "", title, title, "ended:done", "m", "/w/work"),
                        SessionRow("en", "2026-11-28T19:39:00", "", "Fix it", "Fix it", "ended:done", "m", "/w/work")],
                       current=None)
    sessions.show()
    qtbot.waitExposed(sessions)
    image = sessions.list.viewport().grab().toImage()
    for index in range(2):
        rect = sessions.list.visualItemRect(sessions.list.item(index))
        # one line drawn inks fewer rows than its height; two, more
        assert inked_rows(image, rect.top(), rect.bottom() + 1, rect.left(), rect.right()) > max(heights), index
