"""The app icon, drawn rather than shipped: three panes beside a chat column."""

from __future__ import annotations

from gui.qt import QColor, QIcon, QPainter, QPixmap, QRectF, Qt


def app_pixmap(size: int = 256) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    unit = size / 16
    painter.setBrush(QColor("#1f4e8c"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawRoundedRect(QRectF(0, 0, size, size), 3 * unit, 3 * unit)
    painter.setBrush(QColor("#eaf2fb"))
    painter.drawRoundedRect(QRectF(2 * unit, 2 * unit, 6.5 * unit, 12 * unit), unit, unit)
    for i, colour in enumerate(("#7fb3e6", "#a8d5ba", "#f2c48d")):
        painter.setBrush(QColor(colour))
        painter.drawRoundedRect(QRectF(9.5 * unit, (2 + i * 4.1) * unit, 4.5 * unit, 3.6 * unit), unit * 0.7, unit * 0.7)
    painter.end()
    return pixmap


def app_icon() -> QIcon:
    icon = QIcon()
    for size in (16, 32, 64, 256):
        icon.addPixmap(app_pixmap(size))
    return icon
