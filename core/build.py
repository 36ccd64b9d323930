"""Which build of Tripane this is: its version and, where known, the commit it was built from.

The version number has named every build since the first, so a bug report's "Tripane 0.1.0" said
little about the code that had the bug. A checkout (`pip install -e .`) knows its commit from its
own .git folder, read here without git; a bundle knows the one the installer wrote into it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from core import __version__

SOURCE_ROOT = Path(__file__).resolve().parent.parent  # the checkout, when Tripane runs from one
BUILT_FROM = "BUILT_FROM"  # resources/BUILT_FROM: the commit, written by installer/tripane.spec
_COMMIT = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")  # (SHA-1, or SHA-256 in a repository that uses it)
SHOWN_CHARS = 10


def checkout_commit(root: Path) -> str:
    """The commit the git checkout at `root` has out, read from its files: "" when `root` is not
    one (an installed copy) or they say none (an empty repository)."""
    git = root / ".git"
    try:
        if git.is_file():  # a worktree's or a submodule's: "gitdir: <its folder>"
            git = (root / git.read_text(encoding="utf-8").partition(":")[2].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _COMMIT.fullmatch(head) else ""  # detached: the commit itself
        ref = head.partition(":")[2].strip()
        # A worktree keeps its HEAD; the branches are the main repository's (named by commondir).
        common = (git / (git / "commondir").read_text(encoding="utf-8").strip()).resolve() \
            if (git / "commondir").is_file() else git
        if (loose := common / ref).is_file():
            commit = loose.read_text(encoding="utf-8").strip()
        else:  # packed by git gc: "<commit> <ref>" lines
            packed = (common / "packed-refs").read_text(encoding="utf-8").splitlines()
            commit = next((line.split()[0] for line in packed if line.endswith(f" {ref}")), "")
    except (OSError, UnicodeDecodeError, IndexError):
        return ""
    return commit if _COMMIT.fullmatch(commit) else ""


@cache
def built_from() -> str:
    """The commit this Tripane runs from, from its checkout or its bundle ("" when unknown)."""
    return checkout_commit(SOURCE_ROOT) or bundled_commit(_bundled_text())


def bundled_commit(text: str) -> str:
    """The commit a bundle's BUILT_FROM names ("" for none: a bundle built outside a checkout)."""
    return text.strip() if _COMMIT.fullmatch(text.strip()) else ""


def _bundled_text() -> str:
    from core.paths import resource_text

    try:
        return resource_text(BUILT_FROM)
    except (OSError, UnicodeDecodeError):  # (installed from a wheel, or a bundle built before this)
        return ""


def version_text() -> str:
    """The version with the commit's start, as About, the log and `tripane --version` say it:
    "0.1.0 (3c7cca8e1f)"."""
    commit = built_from()
    return f"{__version__} ({commit[:SHOWN_CHARS]})" if commit else __version__
