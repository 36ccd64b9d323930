"""Pictures the person shows the agent: a screenshot of a broken page, of an error dialog, of a
chart. They come with a message, are kept in the session's pictures/ folder, and reach a model that
sees pictures as images; a model that does not is told one is there.

The conversation's text names each picture ("[Picture attached: pictures/0001.png]"), so
the summaries, progress.md and the transcript say it was shown. The request's message also lists
the files under PICTURES_KEY; at the provider's door (core/llm.py) that becomes the image itself,
read from the file: the same bytes each time, so the request's prefix stays byte-identical.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PICTURES_FOLDER = "pictures"
PICTURES_KEY = "pictures"  # a message's pictures (paths in the session folder), taken out before it is sent
# What one picture costs in the context, counted before it is sent: a screenshot scaled to fit
# 1,568 pixels (as the window keeps them) is about 1,600 tokens for Claude, fewer for OpenAI's models.
PICTURE_TOKENS = 1_600
LARGEST_PICTURE_BYTES = 5 * 1024 * 1024  # providers refuse more (Anthropic: 5 MB an image)
# Larger pictures are scaled down to fit this square before they are kept (gui/widgets/pictures.py)
# or drawn (a PDF's page, core/pdf_pages.py): what Claude reads whole (larger ones it scales
# itself, and bills for the upload), and more than OpenAI's high detail takes (2,048, then 768 on
# the short side).
LONGEST_SIDE = 1_568
KINDS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
         ".webp": "image/webp"}
CANNOT_SEE = " This model cannot see pictures: ask the person what it shows, if that matters."
REFUSED = (" The model's provider refused {names}, so it is not shown: ask the person what it shows, if that "
           "matters.")


def not_seen_note(model: str) -> str:
    """What the person reads when pictures go to a model that does not see them."""
    return (f"{model or 'This model'} does not see pictures (by litellm's list of models, its server, or the "
            "pictures it refused): the agent reads only that one is there.")


class PictureRefused(ValueError):
    """A picture that cannot be sent: too large, or not a kind providers take."""


def refusal(data: bytes, suffix: str) -> str:
    """Why no provider takes this picture ("": it may be sent)."""
    if suffix.lower() not in KINDS:
        return f"a {suffix or 'nameless'} file is not a picture a model takes ({', '.join(sorted(KINDS))})"
    if len(data) > LARGEST_PICTURE_BYTES:
        return (f"the picture is {len(data) / 1024 / 1024:.1f} MB; providers take at most "
                f"{LARGEST_PICTURE_BYTES // 1024 // 1024} MB")
    return ""


def keep(session_dir: Path, data: bytes, suffix: str) -> str:
    """The picture `data` (`suffix`: .png, .jpg, …) kept in the session's pictures/ folder, under
    the next free number; its path there (pictures/0003.png)."""
    suffix = suffix.lower()
    if why := refusal(data, suffix):
        raise PictureRefused(why)
    folder = session_dir / PICTURES_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    number = 1 + max((int(p.stem) for p in folder.iterdir() if p.stem.isdigit()), default=0)
    while True:  # (exclusive creation: two windows keeping one at once take two numbers)
        path = folder / f"{number:04d}{suffix}"
        try:
            with open(path, "xb") as fh:
                fh.write(data)
        except FileExistsError:
            number += 1
            continue
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return f"{PICTURES_FOLDER}/{path.name}"


def keep_once(session_dir: Path, data: bytes, suffix: str) -> str:
    """As keep, but a picture kept already (the agent opening the same file again) is not kept
    twice: the same path, so its read is the same output, which the conversation has."""
    folder = session_dir / PICTURES_FOLDER
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            try:
                if path.suffix == suffix.lower() and path.stat().st_size == len(data) and path.read_bytes() == data:
                    return f"{PICTURES_FOLDER}/{path.name}"
            except OSError:
                continue
    return keep(session_dir, data, suffix)


def with_pictures_named(text: str, pictures: Iterable[str]) -> str:
    """A message's text with its pictures named after it, a line each."""
    lines = "\n".join(f"[Picture attached: {picture}]" for picture in pictures)
    return f"{text}\n{lines}" if lines and text else lines or text


@functools.lru_cache(maxsize=8)  # (each at most 6.7 MB: 5 MB in base64; every request of the session sends them)
def _data_url(path: str, mtime_ns: int) -> str:
    data = Path(path).read_bytes()
    return f"data:{KINDS.get(Path(path).suffix.lower(), 'image/png')};base64,{base64.b64encode(data).decode('ascii')}"


def image_part(path: Path) -> dict[str, Any] | None:
    """The picture at `path` as a message's image part; None when it cannot be read (deleted)."""
    try:
        return {"type": "image_url", "image_url": {"url": _data_url(str(path), path.stat().st_mtime_ns)}}
    except OSError:
        return None


def sendable(messages: list[dict[str, Any]], sees_pictures: bool, folder: Path | None,
             refused: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The messages as a provider takes them: each one's pictures (read from the session `folder`)
    as image parts after its text for a model that sees pictures, but for those its provider
    `refused` (their paths); for a model that does not, its text saying so. Messages without
    pictures are passed as they are."""
    if not any(PICTURES_KEY in message for message in messages):
        return messages
    out = []
    for message in messages:
        pictures = message.get(PICTURES_KEY)
        if pictures is None:
            out.append(message)
            continue
        rest = {key: value for key, value in message.items() if key != PICTURES_KEY}
        text = message.get("content") or ""
        if not sees_pictures or folder is None:
            rest["content"] = f"{text}{CANNOT_SEE}"
            out.append(rest)
            continue
        not_shown = [picture for picture in pictures if str(folder / picture) in refused]
        if not_shown:
            text += REFUSED.format(names=" and ".join(not_shown))
        parts = [part for part in (image_part(folder / picture) for picture in pictures if picture not in not_shown)
                 if part]
        rest["content"] = [{"type": "text", "text": text}, *parts] if parts else text
        out.append(rest)
    return out


def shown_in(messages: list[dict[str, Any]], folder: Path | None) -> set[str]:
    """The pictures (paths) a request shows a model that sees pictures: those its messages name
    that are still in the session `folder`."""
    if folder is None:
        return set()
    return {str(folder / picture) for message in messages for picture in message.get(PICTURES_KEY) or ()
            if (folder / picture).is_file()}


# The pictures each model (model, api_base) was shown in this process: those its provider took
# (a request holding them was answered), and those it refused (a request holding them failed, and
# the same request without them was answered: its words said no more than "bad request", perhaps).
# A refused picture is not sent to it again; a model that refused and never took any does not see
# pictures (core.llm.refuses_pictures).
_taken: dict[tuple[str, str | None], set[str]] = {}
_refused: dict[tuple[str, str | None], set[str]] = {}


def taken(model: str, api_base: str | None, paths: set[str]) -> None:
    if paths:  # (every answered request says what it showed: most, nothing)
        _taken.setdefault((model, api_base), set()).update(paths)


def refuse(model: str, api_base: str | None, paths: Iterable[str]) -> None:
    _refused.setdefault((model, api_base), set()).update(paths)


def unrefuse(model: str, api_base: str | None, paths: Iterable[str]) -> None:
    _refused.get((model, api_base), set()).difference_update(paths)


def refused(model: str, api_base: str | None) -> frozenset[str]:
    return frozenset(_refused.get((model, api_base), ()))


def untried(model: str, api_base: str | None, paths: set[str]) -> set[str]:
    """Of the pictures `paths`, those the model has not taken yet."""
    return paths - _taken.get((model, api_base), set())


def refused_every_picture(model: str, api_base: str | None) -> bool:
    """Whether the model's provider refused pictures and took none, in this process."""
    return bool(_refused.get((model, api_base))) and not _taken.get((model, api_base))


# What the session's models refused of its pictures, kept in its pictures/ folder: a reopened
# session (after a restart, in another window) neither sends them again to be refused again nor
# shows them as seen.
REFUSALS_FILE = "refused.json"
TOOK_EARLIER = "(pictures taken in an earlier run)"  # stands for them: the model does see pictures


def keep_refusals(session_dir: Path) -> None:
    """Write down what the models were refused of the session's pictures, when it changed."""
    folder = session_dir / PICTURES_FOLDER
    inside = f"{folder}{os.sep}"
    kept = []
    for (model, api_base), paths in sorted(_refused.items(), key=lambda item: (item[0][0], item[0][1] or "")):
        if names := sorted(path[len(inside):] for path in paths if path.startswith(inside)):
            kept.append({"model": model, "api_base": api_base, "refused": names,
                         "took_some": bool(_taken.get((model, api_base)))})
    text = json.dumps(kept, indent=1) + "\n"
    path = folder / REFUSALS_FILE
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:  # (none yet)
        if not kept:
            return
    from core.memory.working import atomic_write  # (the three files' way of writing)

    atomic_write(path, text)


def recall_refusals(session_dir: Path) -> None:
    """What an earlier run wrote down (keep_refusals), known again in this process. A file that
    cannot be read is as none: the pictures are tried again."""
    folder = session_dir / PICTURES_FOLDER
    try:
        kept = json.loads((folder / REFUSALS_FILE).read_text(encoding="utf-8"))
        for entry in kept:
            model, api_base = str(entry["model"]), entry["api_base"]
            refuse(model, api_base, {str(folder / name) for name in entry["refused"] if "/" not in name and
                                     "\\" not in name})
            if entry.get("took_some"):
                taken(model, api_base, {TOOK_EARLIER})
    except FileNotFoundError:
        return
    except (OSError, ValueError, TypeError, KeyError) as exc:
        log.warning("what the models refused of the pictures in %s is not known (%s): they are tried again",
                    folder, exc)
