"""Skip marks more than one test module needs, with their reasons in one place."""

from __future__ import annotations

import shutil
import sys

import pytest

# The copy of the work folder before the first command (core/snapshot.py) is made by git.
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="the copy of the work folder is made by git, "
                               "not installed here")

# Whether a folder is on a network drive is read from Linux's mount table (core/file_systems.py).
reads_mount_table = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                       reason="the kernel's mount table is read on Linux only")
