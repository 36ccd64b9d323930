"""Themes for someone with low vision: every text readable on what it is drawn on (WCAG's contrast,
measured on the theme as applied), a high-contrast theme that follows the desktop's, and colours in
rich text that change with the theme."""

from __future__ import annotations

import re

import pytest

from core.events import ToolCall
from gui.qt import QApplication, QColor, QLabel, QPalette, Qt
from gui.theme import (
    THEMES,
    accessibility_hints,
    apply_theme,
    contrast,
    html_colour,
    is_high_contrast,
    palette_for,
)
from gui.widgets.chat_items import MessageItem
from gui.widgets.tool_card import ToolCard

_Role = QPalette.ColorRole
AA, AAA = 4.5, 7.0  # WCAG's contrast for text: AA, and AAA (the high-contrast themes)
TEXT_ROLES = (_Role.WindowText, _Role.Text, _Role.PlaceholderText, _Role.Link, _Role.ButtonText)
SURFACE_ROLES = (_Role.Window, _Role.Base, _Role.Button, _Role.AlternateBase)
HTML_ROLES = ("time", "diff_add", "diff_remove", "diff_hunk", "muted")


@pytest.fixture
def app():
    """The application, put back in the light theme after (every window applies its own)."""
    application = QApplication.instance()
    yield application
    apply_theme(application, "light")


def sheet_colours(sheet: str) -> tuple[set[str], set[str], list[tuple[str, str, str]]]:
    """Texts drawn on any surface, surfaces any text may be drawn on, and the rules that set a text
    on a background of their own (selector, text, background)."""
    texts, surfaces, pairs = set(), set(), []
    for selector, body in re.findall(r"([^{}/]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", sheet, flags=re.S)):
        colour = re.search(r"(?:^|;)\s*color:\s*(#[0-9a-fA-F]{6})", body)
        background = re.search(r"background:\s*(#[0-9a-fA-F]{6})", body)
        if colour and background:
            pairs.append((selector.strip(), colour[1], background[1]))
        elif colour:
            texts.add(colour[1])
        elif background:
            surfaces.add(background[1])
    return texts, surfaces, pairs


@pytest.mark.parametrize("theme", [t for t in THEMES if t != "system"])
def test_every_text_of_a_theme_reads_on_every_surface_it_may_be_drawn_on(app, theme):
    apply_theme(app, theme)
    palette = app.palette()
    texts, surfaces, pairs = sheet_colours(app.styleSheet())
    texts |= {palette.color(role).name() for role in TEXT_ROLES} | {html_colour(role) for role in HTML_ROLES}
    surfaces |= {palette.color(role).name() for role in SURFACE_ROLES}
    least = AAA if theme.startswith("contrast") else AA
    assert len(texts) >= (4 if theme.startswith("contrast") else 6) and len(surfaces) >= 2  # (the sheet was read)
    too_faint = [(text, surface, round(contrast(text, surface), 2)) for text in texts for surface in surfaces
                 if contrast(text, surface) < least]
    too_faint += [(selector, text, background, round(contrast(text, background), 2))
                  for selector, text, background in pairs if contrast(text, background) < least]
    # The context inspector's bars and cost line, on the dialog's window: graphics, 3:1 (WCAG 1.4.11)
    too_faint += [(role, html_colour(role), round(contrast(html_colour(role), palette.color(_Role.Window)), 2))
                  for role in ("chart", "chart_cost") if contrast(html_colour(role), palette.color(_Role.Window)) < 3]
    # A disabled control's text: dimmer, not gone (New session's "None in this folder" is one)
    disabled = palette.color(QPalette.ColorGroup.Disabled, _Role.ButtonText)
    too_faint += [("disabled", disabled.name(), surface, round(contrast(disabled, surface), 2))
                  for surface in (palette.color(_Role.Window).name(), palette.color(_Role.Button).name())
                  if contrast(disabled, surface) < 3]
    chosen = (palette.color(_Role.HighlightedText), palette.color(_Role.Highlight))  # a selected session
    if contrast(*chosen) < least:
        too_faint.append(("selection", chosen[0].name(), chosen[1].name(), round(contrast(*chosen), 2)))
    assert not too_faint


def test_the_high_contrast_themes_are_high_contrast_and_their_disabled_text_still_reads(app):
    for theme, window in (("contrast-light", "#ffffff"), ("contrast-dark", "#000000")):
        apply_theme(app, theme)
        palette = app.palette()
        assert is_high_contrast(palette) and palette.color(_Role.Window).name() == window
        disabled = palette.color(QPalette.ColorGroup.Disabled, _Role.ButtonText)
        assert AA <= contrast(disabled, palette.color(_Role.Button)) < contrast(palette.color(_Role.ButtonText),
                                                                                  palette.color(_Role.Button))


def test_a_diff_and_a_messages_time_take_the_colours_of_the_theme_they_are_shown_in(qtbot, app):
    apply_theme(app, "light")
    card = ToolCard(ToolCall("c1", "file_edit", '{"path": "a.py", "old": "x = 1", "new": "x = 2"}'))
    message = MessageItem("assistant", "Done.", when="14:48")
    qtbot.addWidget(card)
    qtbot.addWidget(message)

    def colours_shown() -> str:
        return " ".join(label.text() for widget in (card, message) for label in widget.findChildren(QLabel))

    light = {role: html_colour(role) for role in ("diff_add", "diff_remove", "time")}
    assert all(colour in colours_shown() for colour in light.values())
    apply_theme(app, "dark")
    dark = {role: html_colour(role) for role in light}
    shown = colours_shown()
    assert all(dark[role] in shown and light[role] not in shown for role in light)  # redrawn, not kept


def test_the_system_theme_goes_high_contrast_when_the_desktop_asks_and_back(qtbot, make_window, monkeypatch):
    hints = accessibility_hints()
    if hints is None:
        pytest.skip("Qt before 6.10 does not say whether the desktop asks for high contrast")
    window = make_window()
    assert not is_high_contrast(QApplication.palette()) or QApplication.palette().color(_Role.Window).name() != "#ffffff"
    monkeypatch.setattr("gui.theme.desktop_wants_contrast", lambda: True)  # Settings → Accessibility → High contrast
    hints.contrastPreferenceChanged.emit(Qt.ContrastPreference.HighContrast)
    palette = QApplication.palette()
    assert is_high_contrast(palette) and palette.color(_Role.Window).name() == "#ffffff"  # the desktop is light
    assert "3px solid" in QApplication.instance().styleSheet()  # a failed card stands out by its frame
    monkeypatch.setattr("gui.theme.desktop_wants_contrast", lambda: False)
    hints.contrastPreferenceChanged.emit(Qt.ContrastPreference.NoPreference)
    assert QApplication.palette().color(_Role.Window).name() == "#efefef"  # Fusion's light grey again
    window.prefs.theme = "light"
    monkeypatch.setattr("gui.theme.desktop_wants_contrast", lambda: True)
    hints.contrastPreferenceChanged.emit(Qt.ContrastPreference.HighContrast)
    assert QApplication.palette().color(_Role.Window).name() == "#efefef"  # a theme chosen stays chosen


def test_a_persons_own_contrast_colours_are_kept_and_a_palette_that_is_not_high_contrast_is_not(app, monkeypatch):
    def palette_of(window: str, text: str, highlight: str, chosen: str) -> QPalette:
        palette = QPalette(app.palette())
        for role, colour in ((_Role.Window, window), (_Role.Base, window), (_Role.WindowText, text),
                             (_Role.Text, text), (_Role.Highlight, highlight), (_Role.HighlightedText, chosen)):
            palette.setColor(role, QColor(colour))
        return palette

    monkeypatch.setattr("gui.theme.desktop_wants_contrast", lambda: True)
    desert = palette_of("#fffaef", "#3d3d3d", "#903909", "#fffaef")  # Windows' "Desert" contrast theme
    monkeypatch.setattr("gui.theme.desktop_palette", lambda _app: desert)
    apply_theme(app, "contrast-light")
    assert app.palette().color(_Role.Window).name() == "#fffaef"
    assert app.palette().color(_Role.Highlight).name() == "#903909"
    grey = palette_of("#efefef", "#8a8a8a", "#308cc6", "#ffffff")  # a desktop that says so, with no such colours
    monkeypatch.setattr("gui.theme.desktop_palette", lambda _app: grey)
    apply_theme(app, "contrast-light")
    assert app.palette().color(_Role.Window).name() == "#ffffff"  # Tripane's own
    assert app.palette().color(_Role.WindowText).name() == "#000000"


def test_the_light_theme_is_light_on_a_dark_desktop(app):
    class DarkDesktop:
        """What a dark desktop gives: Fusion's standard palette is its dark one there."""
        def style(self):
            return self

        def standardPalette(self) -> QPalette:  # noqa: N802 (Qt's name)
            return QPalette(QColor("#323232"))

    light = palette_for(DarkDesktop(), "light")  # it showed a dark grey window, its messages' text white on white
    assert light.color(_Role.Window).name() == "#efefef" and light.color(_Role.Text).name() == "#000000"
    assert palette_for(DarkDesktop(), "contrast-light").color(_Role.Window).name() == "#ffffff"
