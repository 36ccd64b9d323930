"""Archives the agent reads into: a zip or a tar (.tar, .tar.gz, .tgz, .tar.bz2, .tar.xz). A customer's
support bundle (logs, configs, a crash report), a release's files, a dataset, CI's artifacts come as
one; to the file tools it was a binary file, and each look inside a command the person approved
(`unzip -l`, then `unzip -p` for each file), or files unpacked into the project.

An archive reads as the list of its files; a file in it is named by the archive's path and its own,
`bundle.zip/logs/app.log`, and read, searched (file_search of the archive searches its files) and
listed as a file of the work folder is; a file in an archive in it, `bundle.zip/inner.tar.gz/x.log`,
too. Nothing is unpacked into the work folder: a file read is unpacked once per version of the
archive into the session's offload/documents/, under a name of ours (an archive's names may climb
out of any folder, `../../.bashrc`). Files in an archive are read, never changed.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from io import BytesIO
from pathlib import Path
from typing import IO

from core.documents import (
    ARCHIVE_MEMBER_PREFIX,
    HEAD_BYTES,
    ZIP_SIGNATURE,
    DocumentText,
    NoText,
    cache_stem,
    kind_of,
    packing,
)

MEMBER_MAX_BYTES = 512 * 2**20  # a file unpacked from an archive: more is a disk image or a zip bomb, for a command
LISTED_MAX = 100_000  # of an archive's files, listed (a dataset of a million pictures is listed in part, and said)
_EMPTY_ZIP = b"PK\x05\x06"  # (a zip of no files is its end record alone)
_TAR_MAGIC = b"ustar"  # at byte 257 of a tar's first header (POSIX and GNU tar)
_DATA_ZIPS = (".npz",)  # a zip that is data: read with its own library (core/tools/files.py says how)


class NotInArchive(Exception):
    """Why a file in an archive cannot be read (said to the agent)."""


@dataclass(frozen=True)
class Member:
    name: str  # its path in the archive, with "/" and no leading "./"
    size: int  # unpacked
    when: str  # "2026-11-28 14:02"
    locked: bool = False  # a zip's file encrypted with a password


def archive_kind(source: Path | bytes, name: str = "") -> str | None:
    """"zip" or "tar" for an archive (a tar compressed with gzip, bzip2 or xz too), a file or a
    download's bytes (`name`: its file name or address); None for any other, an Office document (a
    zip) among them."""
    name = name or (source.name if isinstance(source, Path) else "")
    try:
        if isinstance(source, Path):
            with open(source, "rb") as fh:
                head = fh.read(HEAD_BYTES)
        else:
            head = source[:HEAD_BYTES]
    except OSError:
        return None
    if head.startswith((ZIP_SIGNATURE, _EMPTY_ZIP)):
        return None if name.lower().endswith(_DATA_ZIPS) or kind_of(head, name, whole=source) else "zip"
    if head[257:262] == _TAR_MAGIC:
        return "tar"
    if packing(head):  # (a tar compressed: its first header, unpacked)
        try:
            with (tarfile.open(source, "r:*") if isinstance(source, Path)
                  else tarfile.open(fileobj=BytesIO(source), mode="r:*")) as archive:
                return "tar" if archive.next() is not None else None
        except (tarfile.TarError, OSError, EOFError, zlib.error):
            return None
    return None


def members(path: Path, kind: str) -> list[Member]:
    """The files in the archive, in its order (folders and links left out). NotInArchive when it
    cannot be opened."""
    with _opened(path, kind) as archive:
        return [_member(name, info) for name, info in archive.files.items()]


def _member(name: str, info: zipfile.ZipInfo | tarfile.TarInfo) -> Member:
    if isinstance(info, zipfile.ZipInfo):
        return Member(name, info.file_size, _when(info.date_time), bool(info.flag_bits & 1))
    return Member(name, info.size, _tar_when(info.mtime))


def listing(path: Path, name: str, kind: str) -> DocumentText:
    """What file_read shows of an archive: a line for each of its files, its path, size and time."""
    try:
        found = members(path, kind)
    except NotInArchive as why:
        raise NoText(str(why)) from None
    lines = [f"{member.name}  {member.size:,} bytes  {member.when}" + ("  (locked with a password)" if member.locked else "")
             for member in found[:LISTED_MAX]]
    more = len(found) - LISTED_MAX
    total = sum(member.size for member in found)
    what = f"a {kind} archive of {len(found):,} file{'s' * (len(found) != 1)} ({_size(total)} unpacked)" + \
        (f", the first {LISTED_MAX:,} of them listed" if more > 0 else "")
    return DocumentText("".join(line + "\n" for line in lines), what,
                        f"a line for each file: its path in the archive, size and time; read one as {name}/PATH, "
                        f"search them all with {name} as file_search's path")


def found_in_archive(target: Path, root: Path) -> tuple[Path, str] | None:
    """For a path that names no file: the archive among its folders, and the path within it
    (`bundle.zip/logs/app.log` → bundle.zip, "logs/app.log"); None when no folder of it is one."""
    for parent in target.parents:
        if parent == root or not parent.is_relative_to(root):
            return None
        if parent.is_file():
            return (parent, target.relative_to(parent).as_posix()) if archive_kind(parent) else None
    return None


def member_file(path: Path, kind: str, member: str, cache_dir: Path, shown: str) -> Path:
    """The file `member` of the archive `path`, unpacked into `cache_dir` (once for each version of
    the archive); a file of an archive in it (`inner.zip/x.log`) too. `shown`: how the agent named
    the archive. NotInArchive when it is not there, or cannot be unpacked."""
    member = _normal(member)
    kept = _kept_as(path, kind, member, cache_dir)
    if kept.is_file():
        return kept
    path, kind, member, shown, found = _descend(path, kind, member, cache_dir, shown)
    if entry := found.get(member):
        return _unpacked(path, kind, entry, _kept_as(path, kind, member, cache_dir), f"{shown}/{member}")
    raise NotInArchive(_missing(shown, member, found))


def files_under(path: Path, kind: str, folder: str, cache_dir: Path, shown: str) -> tuple[Path, str, list[Member]]:
    """The archive holding the folder `folder` of the archive `path` (an archive in it, when the
    folder is in that one, or is that one), and the files under the folder, their names relative to
    it. NotInArchive when it holds no such folder."""
    path, kind, folder, shown, found = _descend(path, kind, _normal(folder).rstrip("/"), cache_dir, shown)
    if folder in found:  # (an archive in the archive, listed as a folder)
        inner = _unpacked(path, kind, found[folder], _kept_as(path, kind, folder, cache_dir), f"{shown}/{folder}")
        if not (inner_kind := archive_kind(inner)):
            raise NotInArchive(f"{shown}/{folder} is a file in the archive, not a folder: read it with file_read.")
        path, kind, folder, found = inner, inner_kind, "", {entry.name: entry for entry in members(inner, inner_kind)}
    prefix = f"{folder}/" if folder else ""
    under = [Member(entry.name[len(prefix):], entry.size, entry.when, entry.locked)
             for name, entry in found.items() if name.startswith(prefix)]
    if folder and not under:
        raise NotInArchive(_missing(shown, folder, found))
    return path, prefix, under


def _descend(path: Path, kind: str, member: str, cache_dir: Path,
             shown: str) -> tuple[Path, str, str, str, dict[str, Member]]:
    """The archive `member` is in, through the archives in archives (a bundle of bundles): (the
    archive, its kind, the member's name in it, how the agent names it, its files by name)."""
    found = {entry.name: entry for entry in members(path, kind)}
    if member in found:
        return path, kind, member, shown, found
    for name in sorted((name for name in found if member.startswith(name + "/")), key=len, reverse=True):
        inner = _unpacked(path, kind, found[name], _kept_as(path, kind, name, cache_dir), f"{shown}/{name}")
        if inner_kind := archive_kind(inner):
            return _descend(inner, inner_kind, member[len(name) + 1:], cache_dir, f"{shown}/{name}")
    return path, kind, member, shown, found


def member_files(path: Path, kind: str, cache_dir: Path, prefix: str,
                 wanted: list[Member]) -> Iterator[tuple[Member, Path | None, str]]:
    """Each of the `wanted` files of the archive (named without `prefix`, the folder they are in),
    unpacked (or kept from before), in the archive's order (a compressed tar is read once through,
    not once for each file): (the file, where it is unpacked, ""), or (the file, None, why not)."""
    with _opened(path, kind) as archive:
        for entry in wanted:
            name = prefix + entry.name
            kept = _kept_as(path, kind, name, cache_dir)
            try:
                if not kept.is_file():
                    _copy_out(archive, Member(name, entry.size, entry.when, entry.locked), kept, name)
            except NotInArchive as why:
                yield entry, None, str(why)
                continue
            yield entry, kept, ""


def first_bytes(path: Path, kind: str, prefix: str, entries: list[Member],
                count: int) -> Iterator[tuple[Member, bytes | None]]:
    """The first `count` bytes of each of `entries` (named without `prefix`), unpacked: what tells a
    text from a binary file before the whole of it is. (None for a file that cannot be unpacked:
    unpacking it says why.)"""
    with _opened(path, kind) as archive:
        for entry in entries:
            try:
                with _member_source(archive, prefix + entry.name) as source:
                    head = _read(source, count, prefix + entry.name)
            except NotInArchive:
                head = None
            yield entry, head


def plain_name(name: str, longest: int = 80) -> str:
    """`name` as a file name on any system: letters, digits, ".", "_" and "-" (its end kept: the
    suffix tells a PDF, a notebook, a picture, a gzip from a text)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[-longest:]


def _kept_as(path: Path, kind: str, member: str, cache_dir: Path) -> Path:
    # The member's own name last: its suffix tells a PDF, a notebook, a picture, a gzip from a text.
    key = hashlib.sha1(f"{cache_stem(path, kind)}|{member}".encode()).hexdigest()[:16]
    return cache_dir / f"{ARCHIVE_MEMBER_PREFIX}{key}-{plain_name(member.rsplit('/', 1)[-1])}"


def _unpacked(path: Path, kind: str, entry: Member, kept: Path, shown: str) -> Path:
    if kept.is_file():
        return kept
    with _opened(path, kind) as archive:
        _copy_out(archive, entry, kept, shown)
    return kept


def _copy_out(archive: _Open, entry: Member, kept: Path, shown: str) -> None:
    """Unpacks `entry` to `kept`, whole or not at all: a file half unpacked (a killed process, a full
    disk) would pass for the file."""
    if entry.locked:
        raise NotInArchive(f"{shown} is locked with a password in its zip: ask the person to unpack it, or for the "
                           "password (then unpack it with a command: unzip -P).")
    if entry.size > MEMBER_MAX_BYTES:
        raise NotInArchive(_too_large(shown, entry.size))
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_name(kept.name + ".part")
    try:
        # (No more than its stated size is unpacked: zipfile and tarfile read that much, and a zip
        # bomb's lie about it fails its checksum.)
        with _member_source(archive, entry.name, shown) as source, open(partial, "wb") as target:
            while block := _read(source, 1 << 20, shown):
                target.write(block)
        os.replace(partial, kept)
    finally:
        partial.unlink(missing_ok=True)


@dataclass
class _Open:
    archive: zipfile.ZipFile | tarfile.TarFile
    files: dict[str, zipfile.ZipInfo | tarfile.TarInfo]  # by name as Member gives it, in the archive's order


def _member_source(opened: _Open, name: str, shown: str = "") -> IO[bytes]:
    """The file `name` of the archive, opened to be read (with _read)."""
    shown = shown or name
    try:
        info = opened.files[name]
        source = opened.archive.open(info) if isinstance(info, zipfile.ZipInfo) else opened.archive.extractfile(info)
    except KeyError:
        raise NotInArchive(f"{shown} is not in its archive.") from None
    except NotImplementedError as exc:  # (Windows' Explorer packs files over 2 GB with Deflate64)
        raise NotInArchive(f"{shown} is packed in a way Python cannot unpack ({exc}): unpack it with a command "
                           "(7z x, or unzip).") from None
    except _DAMAGED as exc:
        raise NotInArchive(_damaged(shown, exc)) from None
    if source is None:
        raise NotInArchive(f"{shown} is not a file in its archive.")
    return source


def _read(source: IO[bytes], count: int, shown: str) -> bytes:
    """Up to `count` bytes of a file in an archive, unpacked. (Only the reading's errors are the
    archive's: a full disk, writing them, is said as such.)"""
    try:
        return source.read(count)
    except NotImplementedError as exc:
        raise NotInArchive(f"{shown} is packed in a way Python cannot unpack ({exc}): unpack it with a command "
                           "(7z x, or unzip).") from None
    except _DAMAGED as exc:
        raise NotInArchive(_damaged(shown, exc)) from None


_DAMAGED = (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error)  # (a checksum, a stream cut short)


def _damaged(shown: str, exc: BaseException) -> str:
    return f"{shown} cannot be unpacked from its archive ({exc}): the archive is damaged or cut short."


@contextmanager
def _opened(path: Path, kind: str) -> Iterator[_Open]:
    try:
        archive: zipfile.ZipFile | tarfile.TarFile = zipfile.ZipFile(path) if kind == "zip" else tarfile.open(path, "r:*")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise NotInArchive(f"{path.name} is a {kind} archive that cannot be opened ({exc}): damaged or cut "
                           "short.") from None
    with archive:
        try:
            if isinstance(archive, zipfile.ZipFile):
                files = {_normal(info.filename): info for info in archive.infolist() if not info.is_dir()}
            else:  # (a tar's headers are read through the whole of it: a cut one fails here)
                files = {_normal(info.name): info for info in archive.getmembers() if info.isreg()}
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise NotInArchive(f"{path.name} is a {kind} archive that cannot be read to its end ({exc}): damaged "
                               "or cut short.") from None
        yield _Open(archive, files)


def _missing(shown: str, member: str, found: dict[str, Member]) -> str:
    if any(name.startswith(member.rstrip("/") + "/") for name in found):
        return (f"{shown}/{member} is a folder in the archive: list its files with file_list(path=\"{shown}/"
                f"{member.rstrip('/')}\"), or read one of them.")
    base = member.rsplit("/", 1)[-1]
    alike = [name for name in found if name.rsplit("/", 1)[-1] == base][:3]
    return (f"No file {member!r} in the archive {shown}." +
            (f" It has {', '.join(f'{shown}/{name}' for name in alike)}." if alike else
             f" Read {shown} for the list of its files."))


def _too_large(shown: str, size: int) -> str:
    return (f"{shown} is {size:,} bytes unpacked, more than the file tools unpack ({MEMBER_MAX_BYTES:,}): unpack it "
            "with a command (unzip, tar x) where it fits, or read a part of it in one (unzip -p … | head).")


def _normal(name: str) -> str:
    """A file's name in an archive as read: "/" between folders, no "./", "../" or leading "/" (as
    unzip and tar take them off: `../../.bashrc` is `.bashrc`)."""
    return "/".join(part for part in name.replace("\\", "/").split("/") if part not in ("", ".", ".."))


def _when(date_time: tuple[int, ...]) -> str:
    year, month, day, hour, minute = date_time[:5]
    return f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}"


def _tar_when(mtime: float) -> str:
    try:
        return _when(datetime.fromtimestamp(mtime).timetuple()[:6])
    except (OverflowError, OSError, ValueError):  # (a time no calendar has: a tar made by a broken tool)
        return "no time"


def _size(count: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count:,} bytes"
