"""`python -m gui.qt_probe`: load Qt's platform plugin and print its name; exit
QT_PROBE_BROKEN_BINDING with the fault and its fix on two lines of stderr if the binding itself would crash the window
(gui.binding_check).

`tripane doctor` runs this in a child process, because a missing system library kills the process
that loads the plugin — and because core never imports Qt.
"""

import sys

from PySide6.QtGui import QGuiApplication

from core.doctor import QT_PROBE_BROKEN_BINDING
from gui.binding_check import FIX, binding_problem


def main() -> None:
    app = QGuiApplication(sys.argv[:1])  # noqa: F841 - the plugin loads when the application exists
    print(QGuiApplication.platformName())
    problem = binding_problem()
    if problem:
        print(f"{problem}\n{FIX}", file=sys.stderr)
        sys.exit(QT_PROBE_BROKEN_BINDING)


if __name__ == "__main__":
    main()
