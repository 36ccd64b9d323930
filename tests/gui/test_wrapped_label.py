"""The conversation's label keeps each width's height, and forgets it when what lays it out changes."""

from __future__ import annotations

from gui.qt import QFont, QLabel, Qt
from gui.widgets.wrapped_label import WrappedLabel

SHORT = "<p>One line.</p>"
LONG = "<p>" + " ".join(f"word{i}" for i in range(300)) + "</p>"


def plain_height(html: str, width: int, font: QFont | None = None) -> int:
    """What Qt's own label answers, asked afresh."""
    label = QLabel(html)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(True)
    if font is not None:
        label.setFont(font)
    return label.heightForWidth(width)


def test_heights_follow_the_width_and_the_text(qtbot):
    label = WrappedLabel(SHORT)
    qtbot.addWidget(label)
    short = label.heightForWidth(400)
    assert short == plain_height(SHORT, 400)
    label.setText(LONG)  # a streamed reply grew: the height kept for 400 px no longer holds
    assert label.heightForWidth(400) == plain_height(LONG, 400) > short
    assert label.heightForWidth(200) == plain_height(LONG, 200) > label.heightForWidth(400)
    assert label.sizeHint().height() == label.heightForWidth(label.width())


def test_a_new_font_is_laid_out_anew(qtbot):
    label = WrappedLabel(LONG)
    qtbot.addWidget(label)
    before = label.heightForWidth(400)
    bigger = QFont(label.font())
    bigger.setPointSize(label.font().pointSize() * 2)
    label.setFont(bigger)  # the text size setting, or a theme with another font
    assert label.heightForWidth(400) == plain_height(LONG, 400, bigger) > before


def test_a_style_sheet_font_is_laid_out_anew(qtbot):
    label = WrappedLabel(LONG)
    qtbot.addWidget(label)
    before = label.heightForWidth(400)
    label.setStyleSheet("font-size: 30px")  # the theme's sheet, taken when the label is polished
    label.ensurePolished()
    assert label.heightForWidth(400) > 2 * before
