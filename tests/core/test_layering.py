"""core/ must not import Qt (or the GUI), and must not import litellm until a model is called."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

IMPORT_ALL_CORE = """
import importlib, pkgutil, sys
import core
for module in pkgutil.walk_packages(core.__path__, "core."):
    importlib.import_module(module.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "qasync", "gui", "litellm"))
print(len([m for m in sys.modules if m.startswith("core.")]), loaded)
"""


def test_importing_all_of_core_loads_no_qt_no_gui_and_no_litellm():
    result = subprocess.run([sys.executable, "-c", IMPORT_ALL_CORE], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    count, loaded = result.stdout.strip().split(" ", 1)
    assert int(count) >= 20  # the walk really imported the core
    assert loaded == "[]"


def test_only_llm_imports_litellm_and_only_store_imports_sqlite():
    offenders = {"litellm": [], "sqlite_utils": [], "sqlite3": []}
    for path in (ROOT / "core").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in offenders:
            if f"import {name}" in text or f"from {name} " in text:
                offenders[name].append(path.relative_to(ROOT).as_posix())
    assert offenders["litellm"] == ["core/llm.py"]
    assert offenders["sqlite_utils"] == ["core/store.py"]
    assert offenders["sqlite3"] == ["core/store.py"]


def test_a_module_can_be_kept_from_a_library_s_import_and_loads_normally_after():
    import importlib

    from core.imports import without

    sys.modules.pop("tabnanny", None)  # a standard module with no side effects, not loaded here
    with without("tabnanny"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("tabnanny")
    assert importlib.import_module("tabnanny").check  # the real module, afterwards
    with without("tabnanny"):  # already loaded: nothing is hidden
        assert importlib.import_module("tabnanny") is sys.modules["tabnanny"]
