"""Light and dark themes: the Fusion style (the same on every platform), a palette, accents in QSS.
"system" follows the desktop's light or dark mode, and its changes while Tripane runs."""

from __future__ import annotations

from core.paths import resource_text
from gui.qt import QApplication, QColor, QLabel, QPalette, Qt, QWidget

THEMES = ("system", "light", "dark")
_FUSION_SET = "tripaneFusionSet"

_DARK = {
    QPalette.ColorRole.Window: "#1e1f22", QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#17181a", QPalette.ColorRole.AlternateBase: "#232428",
    QPalette.ColorRole.Text: "#e6e6e6", QPalette.ColorRole.Button: "#2b2d31",
    QPalette.ColorRole.ButtonText: "#e6e6e6", QPalette.ColorRole.Highlight: "#2f6db0",
    QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#2b2d31",
    QPalette.ColorRole.ToolTipText: "#e6e6e6", QPalette.ColorRole.Link: "#8cc0ff",
    QPalette.ColorRole.PlaceholderText: "#8a9099",
}


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


def shown_theme(theme: str) -> str:
    """The theme to show for the one chosen: "system" is the desktop's."""
    if theme == "system":
        return "dark" if desktop_is_dark() else "light"
    return theme if theme in THEMES else "light"


def apply_theme(app: QApplication, theme: str) -> None:
    theme = shown_theme(theme)
    _use_fusion(app)
    palette = app.style().standardPalette()
    if theme == "dark":
        for role, colour in _DARK.items():
            palette.setColor(role, QColor(colour))
        palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#6b7079"))
        palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#6b7079"))
    app.setPalette(palette)
    sheet = resource_text("styles", f"{theme}.qss")
    if app.styleSheet() != sheet:  # setting it re-polishes every widget, even to the same sheet
        app.setStyleSheet(sheet)
        _relink(app)


def _relink(app: QApplication) -> None:
    """A label lays out its links in the link colour of the palette it had when its text was set,
    and keeps it: after a change of theme, the plan's "v12" stayed light-theme blue on the dark
    grey. Each label with a link has its text set anew, in the new colour."""
    for widget in app.allWidgets():
        if isinstance(widget, QLabel) and "<a " in (text := widget.text()):
            widget.clear()  # (setting the same text does nothing)
            widget.setText(text)
