"""A kernel mount table (/proc/self/mountinfo, as Linux writes it) that Tripane reads in place of the
machine's, naming a folder's drive as NFS: a desktop whose home folder is on a network drive."""

from __future__ import annotations

from pathlib import Path

import core.file_systems

LOCAL_ROOT = "27 1 8:2 / / rw,relatime - ext4 /dev/sda2 rw\n"


def on_nfs(folder: Path, monkeypatch) -> Path:
    """`folder` mounted from NFS, the rest on a local disk; the table's file (rewrite it to change that)."""
    table = folder / "mountinfo"
    table.write_text(LOCAL_ROOT + f"41 27 0:44 / {folder.resolve()} rw,relatime - nfs4 fs.example.edu:/export rw\n",
                     encoding="utf-8")
    monkeypatch.setattr(core.file_systems, "MOUNTINFO", table)
    return table
