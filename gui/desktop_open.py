"""Files and folders opened with the program the desktop opens them with, and where they are when
nothing does: a Linux desktop without a handler for the file's type, a bare window manager. A link
that opened nothing said nothing, and the person clicked it again and again."""

from __future__ import annotations

from pathlib import Path

from gui.dialogs.forms import open_once
from gui.qt import QDesktopServices, QMessageBox, Qt, QTextBrowser, QUrl, QWidget


def open_on_desktop(path: Path, parent: QWidget, unopened: str) -> QMessageBox | None:
    """`unopened`: what the person is told when nothing opens it, saying where it is (selectable,
    to be copied into a file manager or a terminal). The message box, if shown."""
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return None
    box = QMessageBox(QMessageBox.Icon.Information, "Tripane", unopened, QMessageBox.StandardButton.Ok,
                      parent.window())
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    open_once(box)
    return box


def open_file(path: Path, parent: QWidget) -> QMessageBox | None:
    """A file to look at or edit (one of the three, one the agent wrote) in the person's editor, as
    the desktop opens its kind; when nothing does, where it is, to open it from there."""
    kind = f"{path.suffix} files" if path.suffix else path.name
    return open_on_desktop(path, parent, f"No program on this computer opens {kind}. Open it in your editor from "
                                         f"here:\n{path}")


WEB_SCHEMES = ("http", "https", "mailto")


def opens_web_links(view: QTextBrowser) -> None:
    """A view of what a model wrote (a helper's answer, the agent's question): a link in it opens
    in the person's browser. Left to the view, a click made the web page its document: it found
    none, and the answer went blank. Other links (file:, a scheme of Tripane's) do nothing."""
    view.setOpenLinks(False)
    view.anchorClicked.connect(open_web_link)


def open_web_link(url: QUrl) -> None:
    """A web page's (or a mail's) address a model wrote, in the person's browser; any other
    scheme (file:, a scheme of Tripane's) opens nothing."""
    if url.scheme() in WEB_SCHEMES:
        QDesktopServices.openUrl(url)
