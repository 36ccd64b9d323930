"""Light and dark themes: the Fusion style (the same on every platform), a palette, accents in QSS."""

from __future__ import annotations

from core.paths import resource_text
from gui.qt import QApplication, QColor, QPalette, QWidget

THEMES = ("light", "dark")

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
    widget.style().unpolish(widget)
    widget.style().polish(widget)


def apply_theme(app: QApplication, theme: str) -> None:
    theme = theme if theme in THEMES else "light"
    app.setStyle("Fusion")
    palette = app.style().standardPalette()
    if theme == "dark":
        for role, colour in _DARK.items():
            palette.setColor(role, QColor(colour))
        palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#6b7079"))
        palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#6b7079"))
    app.setPalette(palette)
    app.setStyleSheet(resource_text("styles", f"{theme}.qss"))
