"""A Qt binding that gives up references to None is refused before it can crash the window."""

from __future__ import annotations

import ctypes
import sys

import pytest

from gui.binding_check import PROBE_CALLS, binding_problem
from gui.qt import QLabel


def test_the_installed_binding_keeps_none_alive(qtbot):
    assert binding_problem() is None
    label = QLabel()  # and a widget's own calls, the ones a window makes all day
    qtbot.addWidget(label)
    before = sys.getrefcount(None)
    for i in range(PROBE_CALLS):
        label.setText(str(i % 2))
        label.resize(100 + i % 7, 20)
    assert before - sys.getrefcount(None) < PROBE_CALLS // 2


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12: the fault is harmless")
def test_a_call_that_gives_up_a_reference_to_none_is_caught():
    drop, take = ctypes.pythonapi.Py_DecRef, ctypes.pythonapi.Py_IncRef
    for function in (drop, take):
        function.argtypes, function.restype = [ctypes.py_object], None
    try:  # what PySide6 6.12.0 does on Python 3.11, once per call
        problem = binding_problem(lambda: drop(None))
    finally:
        for _ in range(PROBE_CALLS):
            take(None)
    assert problem is not None and "loses a reference to None" in problem and "crash" in problem
