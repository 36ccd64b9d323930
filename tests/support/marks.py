"""Skip marks more than one test module needs, with their reasons in one place."""

from __future__ import annotations

import shutil

import pytest

# The copy of the work folder before the first command (core/snapshot.py) is made by git.
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="the copy of the work folder is made by git, "
                               "not installed here")
