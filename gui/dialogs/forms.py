"""Form pieces more than one dialog uses."""

from __future__ import annotations

from gui.qt import QComboBox, QLabel

APPROVAL_CHOICES = (("ask", "Ask me before risky tools"), ("all", "Allow all tools"), ("none", "Refuse risky tools"))


def approval_combo(current: str) -> QComboBox:
    combo = QComboBox()
    for value, label in APPROVAL_CHOICES:
        combo.addItem(label, value)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


def error_label() -> QLabel:
    """Where a dialog says what is wrong with the input, in words, above its buttons."""
    label = QLabel("")
    label.setObjectName("error")
    label.setWordWrap(True)
    return label
