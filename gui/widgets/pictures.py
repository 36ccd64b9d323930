"""Pictures the person shows the agent: pasted (a screenshot copied) or dropped on the message box,
they wait under it, small, until the message is sent, and the conversation shows them with the
message they came with. core/pictures.py keeps them and sends them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from core import pictures
from core.dropped_files import NotCarried, Scanned, as_carried, dropped_text
from core.given_files import NotGiven, mention
from core.store import DiskFull
from gui.desktop_open import open_on_desktop
from gui.qt import (
    QApplication,
    QBuffer,
    QHBoxLayout,
    QImage,
    QIODevice,
    QLabel,
    QMimeData,
    QPixmap,
    QSize,
    Qt,
    QToolButton,
    QWidget,
    Signal,
)
from gui.widgets.hinted_text import HintedText

LONGEST_SIDE = pictures.LONGEST_SIDE
# A PNG larger than this is kept as a JPEG: a photo's PNG is several MB, and sent as base64 it
# grows by a third, past what providers take.
PNG_AT_MOST = pictures.LARGEST_PICTURE_BYTES * 3 // 4
# Files taken as pictures when dropped or chosen: what providers take, and what screenshot tools
# also save (BMP, TIFF), which the window keeps as PNG like any picture it is given.
READABLE = (*pictures.KINDS, ".bmp", ".tif", ".tiff")
WAITING_SIZE = QSize(72, 48)  # under the message box
SHOWN_SIZE = QSize(240, 160)  # in the conversation


def picture_file(image: QImage) -> tuple[bytes, str]:
    """The picture as it is kept and sent: at most LONGEST_SIDE pixels wide and high, as a PNG
    (screenshots: small and sharp), or a JPEG when the PNG would be large (photos). Its bytes and
    suffix."""
    if max(image.width(), image.height()) > LONGEST_SIDE:
        image = image.scaled(LONGEST_SIDE, LONGEST_SIDE, Qt.AspectRatioMode.KeepAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    data = _encoded(image, "PNG")
    if len(data) <= PNG_AT_MOST:
        return data, ".png"
    return _encoded(image.convertToFormat(QImage.Format.Format_RGB888), "JPG", 85), ".jpg"


def picture_files(images: Sequence[QImage]) -> tuple[list[tuple[bytes, str]], list[str]]:
    """The pictures as they are kept (picture_file), and what is wrong with those that cannot be:
    not read as a picture, or refused by every provider (core.pictures.refusal)."""
    files, problems = [], []
    for image in images:
        if image.isNull():
            problems.append("it is not a picture Tripane can read")
        elif why := pictures.refusal(*(file := picture_file(image))):
            problems.append(why)
        else:
            files.append(file)
    return files, problems


def _encoded(image: QImage, form: str, quality: int = -1) -> bytes:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, form, quality)
    return bytes(buffer.data())


def not_added(problems: list[str]) -> str:
    """What the person reads of pictures that were not taken ("" for none)."""
    return f"Picture not added: {'; '.join(problems)}." if problems else ""


def pictures_in(source: QMimeData) -> tuple[list[QImage], list[Path]]:
    """What a paste or a drop holds: pictures (image files, or an image copied: a screenshot, one
    in a browser) and the other files, by their paths."""
    paths = [Path(url.toLocalFile()) for url in source.urls() if url.isLocalFile()]
    shown = [path for path in paths if path.suffix.lower() in READABLE]
    images = [QImage(str(path)) for path in shown]
    others = [path for path in paths if path not in shown]
    if not paths and source.hasImage():
        data = source.imageData()  # (a QImage, or on some desktops a QPixmap)
        images = [data if isinstance(data, QImage) else data.toImage()]
    return images, others


def holds_pictures(source: QMimeData) -> bool:
    """Whether a drag brings pictures (told before they are read: it is only passing over)."""
    return source.hasImage() or any(url.isLocalFile() and Path(url.toLocalFile()).suffix.lower() in READABLE
                                    for url in source.urls())


class PictureBox(HintedText):
    """A text box that takes pictures pasted or dropped on it (pictures_given) rather than writing
    them; other files dropped are written as their paths, or with their text (write_paths)."""

    pictures_given = Signal(list)  # QImages
    told = Signal(str)  # what dropped files brought as other than text (a scan's pages), and what they could not
    refused = Signal(str)  # what they could not bring alone: a window that shows a scan's pages needs say no more

    def __init__(self) -> None:
        super().__init__()
        self.workdir: Callable[[], Path | None] = lambda: None  # the agent's work folder, once known
        # Files written as their path in the work folder shown when they were dropped: (what was
        # written, the file). The New session's folder can be changed after (see text_for).
        self.written_within: list[tuple[str, Path]] = []
        # A file from outside the work folder that cannot go as text (a support bundle, a database)
        # is given as a copy (core/given_files.py): this keeps it, or holds it until the session
        # is made, and says how the agent names it (NotGiven when it cannot). None: its path goes.
        self.give: Callable[[Path], str] | None = None

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802 (Qt's name)
        return source.hasUrls() or source.hasImage() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802 (Qt's name)
        images, others = pictures_in(source)
        if images:
            self.pictures_given.emit(images)
        if others:
            self.write_paths(others)
        elif not images:
            super().insertFromMimeData(source)

    def write_paths(self, paths: list[Path]) -> None:
        """A file of the work folder by its path relative to it, as the agent's tools take it; one
        from outside it (a log in Downloads) with its text, since the agent reads nothing outside
        (see core/dropped_files.py), or as a copy kept for the agent (a support bundle: see
        `give`). What went otherwise than as written, and what could not go, is said (told)."""
        workdir, written, not_carried = self.workdir(), [], []
        pages: list[QImage] = []  # a scan's, drawn
        went: list[str] = []
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # (a PDF's pages take a moment to read)
        try:
            for path in paths:
                inside = within_folder(path, workdir)
                if inside is not None or workdir is None or path.is_dir():
                    written.append(f"`{inside or path}`")
                    if inside is not None:
                        self.written_within.append((written[-1], path))
                    continue
                try:
                    written.append(as_carried(path, dropped_text(path)))
                except Scanned as scan:  # (its pages wait under the box, as a screenshot pasted does)
                    written.append(f"`{path}`")
                    pages.extend(QImage.fromData(page) for page in scan.pages)
                    went.append(str(scan))
                except NotCarried as why:
                    if (kept := self.given(path, why, not_carried)) is not None:
                        went.append(f"{path.name} went as a copy kept with the session, which the agent reads as {kept}")
                    written.append(as_given(path, kept))
        finally:
            QApplication.restoreOverrideCursor()
        self.insertPlainText(" ".join(written))
        if pages:
            self.pictures_given.emit(pages)
        said = ["; ".join(went)] if went else []
        if not_carried:
            said.append("Only the path went in: " + "; ".join(not_carried))
            self.refused.emit(said[-1] + ".")
        if said:
            self.told.emit(". ".join(said) + ".")

    def given(self, path: Path, why: NotCarried, not_carried: list[str]) -> str | None:
        """How the agent names the copy of `path` given in its stead, or None (with what is said
        added to `not_carried`) when none is given."""
        if not why.givable or self.give is None:
            not_carried.append(str(why))
            return None
        try:
            return self.give(path)
        except (NotGiven, DiskFull) as no:
            not_carried.append(str(no))
            return None


def text_for(box: PictureBox, workdir: Path) -> str:
    """The box's text for the work folder finally chosen: a file written as its path in the folder
    shown when it was dropped is written as it would be for `workdir` (its path there, or with its
    text: a file from ~/Downloads dropped while the New session showed the home folder went as
    `Downloads/spec.md`, which the agent could not read once the project's folder was chosen)."""
    text = box.toPlainText()
    for written, path in box.written_within:
        inside = within_folder(path, workdir)
        if written not in text or written == f"`{inside}`":
            continue
        if inside is not None or path.is_dir():
            now = f"`{inside or path}`"
        else:
            try:
                now = as_carried(path, dropped_text(path))
            except NotCarried as why:  # (a copy for the agent, or its path, as when dropped from outside)
                now = as_given(path, box.given(path, why, []))
        text = text.replace(written, now, 1)
    return text


def as_given(path: Path, kept: str | None) -> str:
    """A dropped file in the message that could not go as text: its path, and how the agent names
    the copy kept for it (`kept`), if one was."""
    return mention(path, kept) if kept else f"`{path}`"


def within_folder(path: Path, workdir: Path | None) -> str | None:
    """The path as a message names a file of the work folder: relative to it (None: not in it)."""
    if workdir is not None:
        try:
            return path.resolve().relative_to(workdir.resolve()).as_posix()
        except (ValueError, OSError):
            pass
    return None


def thumbnail_button(image: QPixmap, name: str, size: QSize, tip: str, spoken: str) -> QToolButton:
    """A picture shown small, `name` under it; `tip` says what a click does, `spoken` too."""
    button = QToolButton()
    button.setObjectName("picture")
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextUnderIcon)
    button.setAutoRaise(True)
    if not image.isNull():
        button.setIcon(image.scaled(size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation))
        button.setIconSize(size)
    button.setText(name if not image.isNull() else f"{name} (missing)")
    button.setToolTip(tip)
    button.setAccessibleName(spoken)
    return button


def taken_off(buttons: list[QToolButton]) -> list:
    """The thumbnails out of their row at once (no longer its children), to be made anew; none left."""
    for button in buttons:
        button.setParent(None)
        button.deleteLater()
    return []


class PicturesShown(QWidget):
    """The pictures a message came with, or a tool opened, in the conversation: a click opens
    one full size, in the program the desktop opens pictures with."""

    def __init__(self, files: Sequence[Path]) -> None:
        super().__init__()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 2, 0, 2)
        self._buttons: list[tuple[Path, QToolButton]] = []
        for path in files:
            button = thumbnail_button(QPixmap(str(path)), path.name, SHOWN_SIZE, "Open it full size",
                                      f"Picture {path.name}: open it full size")
            button.clicked.connect(lambda _checked=False, path=path: self.open(path))
            row.addWidget(button)
            self._buttons.append((path, button))
        row.addStretch(1)

    def mark_refused(self, refused: Callable[[Path], bool]) -> None:
        """Under each picture the model's provider `refused`, that the model was not shown it."""
        for path, button in self._buttons:
            shown = not refused(path)
            name = path.name if shown else f"{path.name} · not shown"
            if not button.text().endswith("(missing)"):
                button.setText(name)
            button.setToolTip("Open it full size" if shown else (
                "The model's provider refused this picture, or all it was sent: the model was not shown it, and the "
                "agent read that one is there. Click to open it full size"))
            button.setAccessibleName(f"Picture {name}: open it full size")

    def open(self, path: Path) -> None:
        open_on_desktop(path, self, f"Nothing on this computer opens pictures of this kind. The picture is:\n{path}")


class WaitingPictures(QWidget):
    """The pictures to go with the message being written, for each session: under the message
    box, each with a click to take it off again; for a model that does not see pictures, a line
    that says so. Hidden while there are none."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("waiting_pictures")
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self.note = QLabel()
        self.note.setObjectName("pictures_note")
        self.note.setWordWrap(True)
        self._buttons: list[QToolButton] = []
        self._waiting: dict[str, list[str]] = {}  # by session id: paths in its folder
        self._folder: Path | None = None
        self._session_id = ""
        self._sees: Callable[[], bool] = lambda: True
        self._model: Callable[[], str] = str
        self._row.addWidget(self.note, 10)
        self._row.addStretch(1)  # (the pictures at the left, under the start of the message)
        self.setVisible(False)

    def show_for(self, session_id: str, folder: Path | None, model: Callable[[], str] = str,
                 sees: Callable[[], bool] = lambda: True, shown: Callable[[], Iterable[str]] = tuple) -> None:
        """The session shown now (its id "" and `folder` None: none), its model, and whether that
        model sees pictures (both asked when there are pictures to say it of: Change model).
        `shown`: the pictures its log names (sent); the first time it is shown, those in its
        folder that it does not name were waiting when Tripane closed, or crashed, and wait again."""
        self._session_id, self._folder, self._model, self._sees = session_id, folder, model, sees
        if folder is not None and session_id not in self._waiting:
            sent = set(shown())
            unsent = sorted(f"{pictures.PICTURES_FOLDER}/{path.name}" for path in (folder / pictures.PICTURES_FOLDER).glob("*")
                            if path.suffix.lower() in pictures.KINDS)
            self._waiting[session_id] = [picture for picture in unsent if picture not in sent]
        self._refresh()

    def add(self, keep: Callable[[bytes, str], str], images: Sequence[QImage]) -> list[str]:
        """Keep `images` for the shown session (`keep`: its keep_picture) and show them; what went
        wrong with any, in words."""
        files, problems = picture_files(images)
        for data, suffix in files:
            try:
                self._waiting.setdefault(self._session_id, []).append(keep(data, suffix))
            except (pictures.PictureRefused, OSError) as exc:
                problems.append(str(exc))
        self._refresh()
        return problems

    def waiting(self, session_id: str) -> tuple[str, ...]:
        return tuple(self._waiting.get(session_id, ()))

    def waiting_elsewhere(self) -> set[str]:
        """The sessions not shown now with pictures waiting for them (the list marks their drafts)."""
        return {session_id for session_id, waiting in self._waiting.items() if waiting and session_id != self._session_id}

    def take(self, session_id: str) -> tuple[str, ...]:
        """The session's pictures, to be sent with its message: no longer waiting."""
        taken = tuple(self._waiting.get(session_id, ()))
        self._waiting[session_id] = []
        self._refresh()
        return taken

    def give_back(self, session_id: str, taken: Sequence[str]) -> None:
        """Pictures whose message was not sent (refused): waiting again, as they were."""
        self._waiting[session_id] = [*taken, *self._waiting.get(session_id, ())]
        self._refresh()

    def remove(self, picture: str) -> None:
        """Taken off the message before it went: its file goes too (nothing refers to it)."""
        waiting = self._waiting.get(self._session_id, [])
        if picture in waiting:
            waiting.remove(picture)
            if self._folder is not None:
                (self._folder / picture).unlink(missing_ok=True)
        self._refresh()

    def _refresh(self) -> None:
        self._buttons = taken_off(self._buttons)
        waiting = self._waiting.get(self._session_id, []) if self._folder is not None else []
        for index, picture in enumerate(waiting):
            path = self._folder / picture
            button = thumbnail_button(QPixmap(str(path)), f"✕ {path.name}", WAITING_SIZE,
                                      "Goes with your message. Click to take it off",
                                      f"Picture {path.name}, going with your message: take it off")
            button.clicked.connect(lambda _checked=False, picture=picture: self.remove(picture))
            self._row.insertWidget(index, button)
            self._buttons.append(button)
        blind = bool(waiting) and not self._sees()
        self.note.setText(pictures.not_seen_note(self._model()) if blind else "")
        self.note.setVisible(blind)
        self.setVisible(bool(waiting))


class PicturesToGo(QWidget):
    """The pictures given with a new session's task, held until it starts (it has no folder yet):
    each small, a click takes it off. Hidden while there are none."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("task_pictures")
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        self._held: list[tuple[bytes, str]] = []
        self._buttons: list[QToolButton] = []
        self.setVisible(False)

    def add(self, images: Sequence[QImage]) -> list[str]:
        """Hold `images` for the task; what went wrong with any, in words."""
        files, problems = picture_files(images)
        self._held.extend(files)
        self._refresh()
        return problems

    def held(self) -> tuple[tuple[bytes, str], ...]:
        """Each picture's bytes and suffix, as SessionConfig takes them."""
        return tuple(self._held)

    def _remove(self, index: int) -> None:
        del self._held[index]
        self._refresh()

    def _refresh(self) -> None:
        self._buttons = taken_off(self._buttons)
        for index, (data, _suffix) in enumerate(self._held):
            image = QPixmap()
            image.loadFromData(data)
            button = thumbnail_button(image, f"✕ picture {index + 1}", WAITING_SIZE,
                                      "Goes with the task. Click to take it off",
                                      f"Picture {index + 1}, going with the task: take it off")
            button.clicked.connect(lambda _checked=False, index=index: self._remove(index))
            self._row.insertWidget(index, button)
            self._buttons.append(button)
        self.setVisible(bool(self._held))
