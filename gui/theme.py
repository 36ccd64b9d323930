"""Themes: the Fusion style (the same on every platform), a palette, Tripane's accents in QSS.

"system" follows the desktop: its light or dark mode, and its high contrast (a Windows contrast
theme, macOS's Increase contrast, GNOME's High Contrast; Qt 6.10 and later say so), and their
changes while Tripane runs. A high-contrast theme takes the desktop's own colours where the desktop
gives a high-contrast palette (the contrast theme a person chose on Windows), else Tripane's: black
on white or white on black, with a strong highlight; its accents are the palette's colours, set off
by weight and borders rather than by hue.

Every text colour of a theme reads at WCAG's AA contrast (4.5:1) on each surface it may be drawn
on, 7:1 in the high-contrast themes (AAA); tests/gui/test_theme_contrast.py measures them.
"""

from __future__ import annotations

import re
from string import Template

from core.paths import resource_text
from gui.qt import QApplication, QColor, QLabel, QPalette, Qt, QWidget

THEMES = ("system", "light", "dark", "contrast-light", "contrast-dark")
CONTRAST_THEMES = ("contrast-light", "contrast-dark")
OTHER_THEME = {"light": "dark", "dark": "light", "contrast-light": "contrast-dark", "contrast-dark": "contrast-light"}
_FUSION_SET = "tripaneFusionSet"
_Role = QPalette.ColorRole

# Fusion's light palette, as Qt has it on a light desktop: every theme starts from it, not from
# the style's standard palette, which on a dark desktop is Fusion's dark one ("Light" then showed a
# dark grey window, its messages' text white on white).
_FUSION_LIGHT = {
    _Role.WindowText: "#000000", _Role.Button: "#efefef", _Role.Light: "#ffffff", _Role.Midlight: "#cacaca",
    _Role.Dark: "#9f9f9f", _Role.Mid: "#b8b8b8", _Role.Text: "#000000", _Role.BrightText: "#ffffff",
    _Role.ButtonText: "#000000", _Role.Base: "#ffffff", _Role.Window: "#efefef", _Role.Shadow: "#767676",
    _Role.Highlight: "#308cc6", _Role.HighlightedText: "#ffffff", _Role.Link: "#0000ff",
    _Role.LinkVisited: "#ff00ff", _Role.AlternateBase: "#f7f7f7", _Role.ToolTipBase: "#ffffdc",
    _Role.ToolTipText: "#000000", _Role.PlaceholderText: "#80000000", _Role.Accent: "#308cc6",
}
_FUSION_LIGHT_DISABLED = {
    _Role.WindowText: "#bebebe", _Role.Text: "#bebebe", _Role.ButtonText: "#bebebe", _Role.Dark: "#bebebe",
    _Role.Base: "#efefef", _Role.Shadow: "#b1b1b1", _Role.Highlight: "#919191", _Role.Accent: "#919191",
}
_LIGHT = {  # over Fusion's: its selection (white on #308cc6, 3.7:1) and its hint text (half black)
    _Role.Highlight: "#1f6fc0", _Role.HighlightedText: "#ffffff", _Role.PlaceholderText: "#5c636b",
    _Role.Accent: "#1f6fc0",
}
_DARK = {
    _Role.Window: "#1e1f22", _Role.WindowText: "#e6e6e6",
    _Role.Base: "#17181a", _Role.AlternateBase: "#232428",
    _Role.Text: "#e6e6e6", _Role.Button: "#2b2d31",
    _Role.ButtonText: "#e6e6e6", _Role.Highlight: "#2f6db0",
    _Role.HighlightedText: "#ffffff", _Role.ToolTipBase: "#2b2d31",
    _Role.ToolTipText: "#e6e6e6", _Role.Link: "#8cc0ff",
    _Role.PlaceholderText: "#a7adb6",
}
# A disabled control's text, dimmer than the rest yet legible (3:1): Fusion's #bebebe on #efefef
# (1.6:1) hid what a disabled line says, such as New session's "None in this folder" beside
# Project rules.
_LIGHT_DISABLED = "#848484"
_DARK_DISABLED = "#7a808a"


# The high-contrast palettes, as Windows' own "High Contrast White" and "High Contrast Black" are
# made: text and frames in the one colour, a selection that stands out, links of their own colour.
def _contrast_palette(ground: str, ink: str, alternate: str, highlight: str, chosen: str, link: str,
                      hint: str) -> dict:
    grounds = (_Role.Window, _Role.Base, _Role.Button, _Role.ToolTipBase)
    inks = (_Role.WindowText, _Role.Text, _Role.ButtonText, _Role.ToolTipText, _Role.BrightText,
            _Role.Light, _Role.Midlight, _Role.Mid, _Role.Dark, _Role.Shadow)  # (Fusion's frames)
    return {**dict.fromkeys(grounds, ground), **dict.fromkeys(inks, ink), _Role.AlternateBase: alternate,
            _Role.Highlight: highlight, _Role.HighlightedText: chosen, _Role.Link: link, _Role.PlaceholderText: hint}


_CONTRAST = {
    "contrast-light": _contrast_palette("#ffffff", "#000000", "#f0f0f0", "#37006e", "#ffffff", "#00009f", "#3c3c3c"),
    "contrast-dark": _contrast_palette("#000000", "#ffffff", "#141414", "#1aebff", "#000000", "#ffff00", "#d0d0d0"),
}
_CONTRAST_DISABLED = {"contrast-light": "#4a4a4a", "contrast-dark": "#b0b0b0"}  # dimmer, still over 7:1

# Tripane's own colours (resources/styles/accents.qss, and the rich texts that colour a diff's lines
# or a message's time): surfaces (…_bg), their borders, and texts drawn on them.
ACCENTS = {
    "light": {
        "user_bg": "#eaf2fb", "assistant_bg": "#ffffff", "assistant_border": "#dde3ea",
        "card_bg": "#f6f7f9", "card_border": "#d5d9df", "error_bg": "#fdf0ee", "error_border": "#c0392b",
        "ok_border": "#2e8b57", "command_bg": "#f3f4f6", "find_missing_bg": "#f8d7da",
        "muted": "#555b63", "error": "#b03a2e", "question": "#1f4e8c", "warn": "#8a5300",
        "running": "#1e7045", "time": "#5c636b", "diff_add": "#17753a", "diff_remove": "#b42318",
        "diff_hunk": "#5c636b", "fill_text": "#ffffff", "danger_bg": "#c0392b", "waiting_bg": "#1f6fc0",
        "to_latest_bg": "#1f6fc0", "chart": "#1f6fc0", "chart_cost": "#b35a00",
    },
    "dark": {
        "user_bg": "#24364d", "assistant_bg": "#2b2d31", "assistant_border": "#3d4047",
        "card_bg": "#26282c", "card_border": "#41454d", "error_bg": "#3a2624", "error_border": "#e0665a",
        "ok_border": "#4fbf7f", "command_bg": "#1f2124", "find_missing_bg": "#5c2b29",
        "muted": "#a7adb6", "error": "#ff8a7a", "question": "#8cc0ff", "warn": "#ffb84d",
        "running": "#5fd38d", "time": "#b4bac2", "diff_add": "#5fd38d", "diff_remove": "#ff8a7a",
        "diff_hunk": "#a7adb6", "fill_text": "#ffffff", "danger_bg": "#c0392b", "waiting_bg": "#2568b8",
        "to_latest_bg": "#2f6db0", "chart": "#6fa8e8", "chart_cost": "#ffb84d",
    },
}
_shown_accents = dict(ACCENTS["light"])  # the theme's on screen (the rich texts colour with them)


def set_style_property(widget: QWidget, name: str, value: object) -> None:
    """Set a property the style sheets select on (#turn[level="warn"], …) and apply them anew:
    Qt does not restyle a widget when only a property changed."""
    widget.setProperty(name, value)
    restyle(widget)


def restyle(widget: QWidget) -> None:
    """Apply the style sheets to `widget` again, after what they select it by changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


def _use_fusion(app: QApplication) -> None:
    """Fusion, once per application. Setting the style again re-creates it under every widget that
    is alive, and one that is being torn down at that moment (a dialog just closed) crashed the
    process now and then; a change of theme needs only a new palette and style sheet."""
    if app.property(_FUSION_SET):
        return
    app.setStyle("Fusion")
    app.setProperty(_FUSION_SET, True)


def desktop_is_dark() -> bool:
    """Whether the desktop is in dark mode (Qt asks the platform; where it cannot tell: light)."""
    return QApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


_style_hints: list = []


def accessibility_hints():
    """Qt's accessibility hints (the desktop's contrast), or None before Qt 6.10."""
    hints = QApplication.styleHints()
    if not hasattr(hints, "accessibility"):
        return None
    # PySide takes the hints' object for gone once the wrapper of the style hints it came from is
    # collected ("Internal C++ object already deleted"): that wrapper is kept.
    _style_hints[:] = [hints]
    return hints.accessibility()


def desktop_wants_contrast() -> bool:
    """Whether the desktop asks for high contrast (where Qt cannot tell: no)."""
    hints = accessibility_hints()
    return hints is not None and hints.contrastPreference() == Qt.ContrastPreference.HighContrast


def shown_theme(theme: str) -> str:
    """The theme to show for the one chosen: "system" is the desktop's."""
    if theme == "system":
        scheme = "dark" if desktop_is_dark() else "light"
        return f"contrast-{scheme}" if desktop_wants_contrast() else scheme
    return theme if theme in THEMES else "light"


def contrast(first: QColor | str, second: QColor | str) -> float:
    """WCAG's contrast ratio of two colours, from 1 (the same) to 21 (black and white)."""
    def luminance(colour: QColor | str) -> float:
        channels = QColor(colour).getRgbF()[:3]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def is_high_contrast(palette: QPalette) -> bool:
    """A palette whose text and window text read at 7:1 or more (WCAG's AAA)."""
    return (contrast(palette.color(_Role.Text), palette.color(_Role.Base)) >= 7
            and contrast(palette.color(_Role.WindowText), palette.color(_Role.Window)) >= 7
            and contrast(palette.color(_Role.HighlightedText), palette.color(_Role.Highlight)) >= 4.5)


def desktop_palette(app: QApplication) -> QPalette:
    """The desktop's own palette (as the platform gives it, over the style's), read by taking ours
    away: an application's palette once set hides it."""
    app.setPalette(QPalette())
    return QPalette(app.palette())


def _same_colours(first: QPalette, second: QPalette) -> bool:
    roles = (_Role.Window, _Role.WindowText, _Role.Base, _Role.Text, _Role.Highlight)
    return all(first.color(role) == second.color(role) for role in roles)


def _paint(palette: QPalette, colours: dict, group: QPalette.ColorGroup = QPalette.ColorGroup.All) -> None:
    for role, colour in colours.items():
        palette.setColor(group, role, QColor(colour))


def fusion_light() -> QPalette:
    palette = QPalette()
    _paint(palette, _FUSION_LIGHT)
    _paint(palette, _FUSION_LIGHT_DISABLED, QPalette.ColorGroup.Disabled)
    return palette


def palette_for(app: QApplication, shown: str) -> QPalette:
    palette = fusion_light()
    if shown in CONTRAST_THEMES:
        if desktop_wants_contrast():
            desktop = desktop_palette(app)
            if is_high_contrast(desktop) and not _same_colours(desktop, app.style().standardPalette()):
                return desktop  # the person's own contrast colours
        colours, disabled = _CONTRAST[shown], _CONTRAST_DISABLED[shown]
    else:
        colours, disabled = (_DARK, _DARK_DISABLED) if shown == "dark" else (_LIGHT, _LIGHT_DISABLED)
    _paint(palette, colours)
    _paint(palette, dict.fromkeys((_Role.Text, _Role.ButtonText, _Role.WindowText), disabled),
           QPalette.ColorGroup.Disabled)
    return palette


def contrast_accents(palette: QPalette) -> dict[str, str]:
    """A high-contrast theme's accents: the palette's own colours (a person's contrast theme has
    only these), told apart by weight and borders (accents_contrast.qss)."""
    text, window = palette.color(_Role.WindowText).name(), palette.color(_Role.Window).name()
    link = palette.color(_Role.Link).name()
    fill, fill_text = palette.color(_Role.Highlight).name(), palette.color(_Role.HighlightedText).name()
    return {
        "text": text, "window": window, "base": palette.color(_Role.Base).name(),
        "muted": text, "error": text, "question": link, "warn": text, "running": text, "time": text,
        "diff_add": link, "diff_remove": text, "diff_hunk": text, "fill_text": fill_text, "fill": fill,
        "disabled": palette.color(QPalette.ColorGroup.Disabled, _Role.ButtonText).name(),
        "chart": fill, "chart_cost": link,
    }


def accents_for(shown: str, palette: QPalette) -> dict[str, str]:
    if shown in CONTRAST_THEMES:
        return contrast_accents(palette)
    return {**ACCENTS[shown], "text": palette.color(_Role.WindowText).name()}


def style_sheet(shown: str, accents: dict[str, str]) -> str:
    name = "accents_contrast.qss" if shown in CONTRAST_THEMES else "accents.qss"
    return Template(resource_text("styles", name)).substitute(accents)


def html_colour(role: str) -> str:
    """The shown theme's colour for `role` (time, diff_add, diff_remove, diff_hunk, muted; chart and
    chart_cost, which the context inspector draws with)."""
    return _shown_accents[role]


def coloured(role: str, html: str) -> str:
    """`html` in the shown theme's colour for `role`, marked so a change of theme recolours it."""
    return f'<span data-colour="{role}" style="color: {html_colour(role)}">{html}</span>'


_COLOURED = re.compile(r'data-colour="(\w+)" style="color: #[0-9a-fA-F]{6}')


def recoloured(html: str) -> str:
    return _COLOURED.sub(lambda m: f'data-colour="{m[1]}" style="color: {html_colour(m[1])}', html)


def _ask_for_scheme(shown: str | None) -> None:
    """Tell Qt the scheme the theme is in (None: the desktop's). On a dark desktop, Fusion's own
    palette, which the light theme starts from, was dark: "Light" showed dark grey, its white
    messages' text white on white; the title bar, where the platform draws it, follows too."""
    hints = QApplication.styleHints()
    if shown is None:
        hints.unsetColorScheme()
    else:
        wanted = Qt.ColorScheme.Dark if shown.endswith("dark") else Qt.ColorScheme.Light
        if hints.colorScheme() != wanted:
            hints.setColorScheme(wanted)


def apply_theme(app: QApplication, theme: str) -> None:
    _ask_for_scheme(None if theme == "system" else shown_theme(theme))  # ("system": to read the desktop's)
    shown = shown_theme(theme)
    _use_fusion(app)
    palette = palette_for(app, shown)
    app.setPalette(palette)
    _shown_accents.clear()
    _shown_accents.update(accents_for(shown, palette))
    sheet = style_sheet(shown, _shown_accents)
    if app.styleSheet() != sheet:  # setting it re-polishes every widget, even to the same sheet
        app.setStyleSheet(sheet)
        _redraw_labels(app)


def _redraw_labels(app: QApplication) -> None:
    """A label lays out its links in the link colour of the palette it had when its text was set,
    and keeps it: after a change of theme, the plan's "v12" stayed light-theme blue on the dark
    grey. Each label with a link, or with text in a theme's colour (a diff's lines, a message's
    time), has its text set anew, in the new colours."""
    for widget in app.allWidgets():
        if isinstance(widget, QLabel) and ("<a " in (text := widget.text()) or "data-colour=" in text):
            widget.clear()  # (setting the same text does nothing)
            widget.setText(recoloured(text))
