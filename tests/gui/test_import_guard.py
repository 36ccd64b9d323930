"""An import that works without PySide6 keeps working with it (shiboken's import hook guarded)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The shape of pydantic's import that failed now and then in the window: a module imported while
# another is half done, whose __getattr__ imports from that one (pydantic's migration shim).
PACKAGE = {
    "__init__.py": "from shim import a\n",
    "a.py": "from shim.b import helper\nthing = 1\n",
    "b.py": ("def helper():\n    return 2\n\n\n"
             "def __getattr__(name):\n"
             "    if name == '__path__':\n        raise AttributeError(name)\n"
             "    from shim.a import thing\n    raise AttributeError(name)\n"),
}


def run(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_a_module_whose_getattr_imports_loads_in_the_window_process(tmp_path):
    (tmp_path / "shim").mkdir()
    for name, text in PACKAGE.items():
        (tmp_path / "shim" / name).write_text(text, encoding="utf-8")
    assert run(tmp_path, "import shim").returncode == 0  # plain Python imports it

    bare = run(tmp_path, "import PySide6.QtCore\nimport shim")  # PySide6 alone: how the window used to be
    guarded = run(tmp_path, "import gui.qt\nimport shim\nprint(shim.a.thing)")

    assert guarded.returncode == 0 and guarded.stdout.strip() == "1", (
        f"{guarded.stderr}\n(without the guard: {bare.stderr.strip().splitlines()[-1:] or 'fine'})")
