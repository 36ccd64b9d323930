"""Text shown as written on a button, and the Alt+letter keys that press a row of buttons.

Qt reads "&" in a button's text as the mark of its keyboard shortcut: it hides the "&" and
underlines the next character, so an agent's `python -m http.server 8000 &` showed on its card as
`8000 _`, and an option "Tests & docs" gave the dialog an Alt+D nobody chose. "&&" shows one "&".
"""

from __future__ import annotations

import re

from gui.qt import (
    QAbstractButton,
    QFormLayout,
    QLabel,
    QTabBar,
    QWidget,
)


def as_written(text: str) -> str:
    """`text` for a button's label, its ampersands shown rather than taken as shortcut marks."""
    return text.replace("&", "&&")


def with_keys(labels: list[str], taken: str = "") -> list[str]:
    """`labels` for a row of buttons, each shown as written with one letter marked as its Alt key,
    no two alike (nor any of `taken`): a word's first letter where one is free ("Retry with a hint"
    → Alt+R, then "Skip the step" → Alt+S, "Stop" → Alt+T). A label with no free letter or digit of
    the keyboard's (an option written in Chinese) gets none; Tab still reaches its button."""
    used = set(taken.lower())
    keyed = []
    for label in labels:
        at = _free_key(label, used)
        if at is None:
            keyed.append(as_written(label))
            continue
        used.add(label[at].lower())
        keyed.append(f"{as_written(label[:at])}&{as_written(label[at:])}")
    return keyed


_WORD_STARTS = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]")


def _free_key(label: str, used: set[str]) -> int | None:
    """Where in `label` its key is: the first free word start, else the first free letter."""
    starts = [match.start() for match in _WORD_STARTS.finditer(label)]
    rest = [i for i, char in enumerate(label) if char.isascii() and char.isalnum() and i not in starts]
    return next((i for i in starts + rest if label[i].lower() not in used), None)


def give_labels_keys(window: QWidget) -> None:
    """Each label of `window`'s forms that names a field (its buddy: QFormLayout makes a field
    widget its label's) an Alt key that moves to that field: the keyboard's way to a field further
    down than Tab goes comfortably (the New session dialog's model, its budget). None in a form is
    alike, nor like a key the window's buttons and tabs have. (A form on a tab of its own may share
    keys with another's: Qt offers a hidden label's none.)"""
    taken = _keys_in(window)
    for form in window.findChildren(QFormLayout):
        items = (form.itemAt(row, QFormLayout.ItemRole.LabelRole) for row in range(form.rowCount()))
        labels = [label for item in items if item is not None and isinstance(label := item.widget(), QLabel)
                  and label.text() and label.buddy() is not None and not _key_of(label.text())]
        for label, text in zip(labels, with_keys([label.text() for label in labels], taken)):
            label.setText(text)


def _key_of(text: str) -> str:
    """The letter `text` marks as its Alt key ("" for none)."""
    match = re.search(r"(?<!&)&([^&])", text.replace("&&", ""))
    return match.group(1).lower() if match else ""


def _keys_in(window: QWidget) -> str:
    """The Alt keys `window`'s buttons and tabs already have."""
    texts = [button.text() for button in window.findChildren(QAbstractButton)]
    for tabs in window.findChildren(QTabBar):
        texts += [tabs.tabText(index) for index in range(tabs.count())]
    return "".join(_key_of(text) for text in texts)
