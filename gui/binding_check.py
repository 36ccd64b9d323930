"""Refuse a Qt binding that would crash the window later, and say how to replace it.

PySide6 6.12.0 under Python 3.11 gives up one reference to None on every call to a Qt method
that returns nothing (setText, resize, updateGeometry, …) and on every return from a Python
override of a Qt virtual. None's count runs down with use — a few per second when the window is
idle, hundreds for each resize or streamed render — and when it reaches zero the interpreter aborts
("Fatal Python error: none_dealloc: deallocating None"), taking unsaved edits with it. From Python
3.12 on None is immortal and the same fault is harmless. pyproject.toml keeps pip from choosing
that release; this check catches it in an environment made some other way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

PROBE_CALLS = 200
FIX = ('install a release without this fault: python -m pip install "PySide6-Essentials>=6.8,<6.12" '
       "(or use Python 3.12 or newer)")


def lost_none_references(call: Callable[[], object], times: int = PROBE_CALLS) -> int:
    """How many references to None `times` calls gave up without taking them (0 on Python 3.12+,
    where None's count never changes)."""
    before = sys.getrefcount(None)
    for _ in range(times):
        call()
    return before - sys.getrefcount(None)


def binding_problem(call: Callable[[], object] | None = None) -> str | None:
    """What is wrong with the Qt binding in this process, in one line (FIX says what to do), or
    None. `call` is the Qt method probed; by default one that returns nothing, on a fresh object."""
    import PySide6

    from gui.qt import QObject

    if call is None:
        probe = QObject()
        call = lambda: probe.setObjectName("probe")  # noqa: E731
    # Other threads may take or drop a few references meanwhile; the fault drops one per call.
    if lost_none_references(call) < PROBE_CALLS // 2:
        return None
    python = ".".join(map(str, sys.version_info[:3]))
    return (f"PySide6 {PySide6.__version__} under Python {python} loses a reference to None on every Qt call: "
            "Tripane would crash after some minutes of use ('deallocating None')")
