"""`python -m gui.qt_probe`: load Qt's platform plugin and print its name.

`tripane doctor` runs this in a child process, because a missing system library kills the process
that loads the plugin — and because core never imports Qt.
"""

import sys

from PySide6.QtGui import QGuiApplication


def main() -> None:
    app = QGuiApplication(sys.argv[:1])  # noqa: F841 - the plugin loads when the application exists
    print(QGuiApplication.platformName())


if __name__ == "__main__":
    main()
