"""Stand-ins for the markers that no font on this machine can draw.

progress.md marks its entries with emoji (✅ ❌ 🔧 🧠 ❓ 💬 🏁 🚨 ⏹ ⏵ 🔓 🔌). Windows and macOS always have an emoji
font; a Linux desktop may not (a minimal install, WSLg, a remote X session), and there each marker
was an empty box at the start of every Progress heading. The files keep their markers; only what
the window shows changes, and only for a marker Qt would draw as a box.
"""

from __future__ import annotations

import sys

from gui.markdown import set_stand_ins
from gui.qt import QApplication, QFont, QTextLayout

# Every emoji core/ writes, each with a plain symbol (DejaVu Sans has them all; each is checked).
STAND_INS = {"✅": "✔", "❌": "✘", "🔧": "⚙", "🧠": "✱", "⏹": "■", "📌": "⚲", "❓": "?", "💬": "↳", "🏁": "⚑",
             "🚨": "⚠", "🔓": "✓", "⏱": "◷", "🩺": "✚", "⏵": "▸", "🔌": "⌁"}


def drawable(text: str, font: QFont) -> bool:
    """Whether Qt draws every character of `text` with a real glyph, after its font fallback."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    runs = layout.glyphRuns()
    return bool(runs) and all(0 not in run.glyphIndexes() for run in runs)  # glyph 0: the box


def stand_ins_for(font: QFont) -> dict[int, str]:
    """A str.translate table: each marker `font` cannot draw → a plain symbol it can."""
    if sys.platform in ("win32", "darwin"):  # Segoe UI Emoji, Apple Color Emoji: always there
        return {}
    return {ord(marker): plain for marker, plain in STAND_INS.items()
            if not drawable(marker, font) and drawable(plain, font)}


_checked = False


def check_markers() -> None:
    """Find the stand-ins once, on the Qt thread, before the first session is shown: asking for a
    glyph no font has makes Qt search every font (15 ms here), so not before the first frame."""
    global _checked
    if not _checked:
        _checked = True
        set_stand_ins(stand_ins_for(QApplication.font()))
