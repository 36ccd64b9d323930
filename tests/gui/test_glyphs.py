"""Every marker the core writes is drawn: by an emoji font, or else by a plain stand-in."""

from __future__ import annotations

from pathlib import Path

from gui.glyphs import STAND_INS, drawable, stand_ins_for
from gui.qt import QApplication

ROOT = Path(__file__).resolve().parents[2]


def test_every_symbol_the_core_writes_can_be_drawn_here(qtbot):
    font = QApplication.font()
    written = {ch for path in (ROOT / "core").rglob("*.py") for ch in path.read_text(encoding="utf-8")
               if ord(ch) > 0x2000}
    shown = "".join(sorted(written)).translate(stand_ins_for(font))
    assert [ch for ch in shown if not drawable(ch, font)] == []


def test_stand_ins_are_plain_symbols_and_markers_are_not_replaced_where_they_can_be_drawn(qtbot):
    font = QApplication.font()
    table = stand_ins_for(font)
    for marker, plain in STAND_INS.items():
        assert drawable(plain, font)  # the basic fonts have them; a stand-in that is a box helps nobody
        assert (ord(marker) in table) == (not drawable(marker, font))
    assert not drawable("\U000f0000", font)  # a private-use character: what a box looks like to the check
