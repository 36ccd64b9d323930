"""Whether a folder is on a network file system (NFS, SMB, sshfs…), where the data folder should not be.

SQLite keeps the sessions in write-ahead-log mode, which needs the locks and the shared memory of a
local disk: over a network file system the database can be damaged when the connection drops, or
when two computers use it (a home folder on NFS, as universities and companies have). `tripane
doctor` says so. Linux: from the kernel's mount table; Windows: a share's path (\\\\server\\share) or
a mapped network drive. macOS is not looked at.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The kernel's names of network and cluster file systems (fuse.* are user-space mounts).
NETWORK_TYPES = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "ceph", "glusterfs", "lustre", "gpfs",
    "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "fuse.gcsfuse", "davfs", "fuse.davfs2",
})
MOUNTINFO = Path("/proc/self/mountinfo")
DRIVE_REMOTE = 4  # GetDriveTypeW's answer for a mapped network drive


def network_file_system(folder: Path) -> str | None:
    """The network file system `folder` is on ("nfs4", "a network share"), or None: a local disk, or
    a system not looked at."""
    if sys.platform == "win32":
        return _windows_share(folder)
    if sys.platform.startswith("linux"):
        try:
            table = MOUNTINFO.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        kind = mounted_type(folder.resolve(), table)
        return kind if kind in NETWORK_TYPES else None
    return None


def network_place(folder: Path) -> str | None:
    """"a network file system (nfs4)", "a network share", "a mapped network drive"; None: a local disk."""
    network = network_file_system(folder)
    if network is None:
        return None
    return network if network.startswith("a ") else f"a network file system ({network})"


def mounted_type(path: Path, mountinfo: str) -> str:
    """The type of the file system `path` is on: the mount whose point is the longest that holds it
    (`path` resolved, as the kernel's table names real places). "" when the table names none."""
    best, kind = -1, ""
    for line in mountinfo.splitlines():
        fields = line.split(" - ", 1)
        if len(fields) != 2:
            continue
        parts, after = fields[0].split(), fields[1].split()
        if len(parts) < 5 or not after:
            continue
        point = _unescaped(parts[4])
        if _holds(point, path) and len(point) > best:
            best, kind = len(point), after[0]
    return kind


def _unescaped(field: str) -> str:
    """The kernel writes a space, a tab, a newline and a backslash in a path as \\040, \\011, \\012, \\134."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def _holds(point: str, path: Path) -> bool:
    return point == "/" or path.as_posix() == point or path.as_posix().startswith(point.rstrip("/") + "/")


def _windows_share(folder: Path) -> str | None:
    text = str(folder)
    if text.startswith(("\\\\", "//")) and not text.startswith(("\\\\?\\", "\\\\.\\")):
        return "a network share"
    drive = os.path.splitdrive(os.path.abspath(text))[0]
    if not drive.endswith(":"):
        return None
    try:
        import ctypes

        kind = ctypes.windll.kernel32.GetDriveTypeW(drive + "\\")  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return None
    return "a mapped network drive" if kind == DRIVE_REMOTE else None
