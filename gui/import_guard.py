"""Keep PySide6's import hook from breaking other libraries' imports.

Once PySide6 is loaded, every module imported in the process is shown to shiboken's
`feature_imported`, which reads the module's source to see whether it uses PySide (for its
`__feature__` switches). Reading the source looks up `__wrapped__` on the module. A module whose
`__getattr__` imports something — pydantic's migration shim does — then imports in the middle of an
import that is still running, and gets "cannot import name … from partially initialized module".
An import that works without PySide fails with it: in Tripane, now and then, litellm's (pydantic's)
first import in the window, which ended the first run with an internal error.

A module the hook cannot read is not one written for PySide's features, so the guard answers "does
not use PySide" instead of letting the error escape into the import that triggered it. Only this
check of shiboken's is wrapped; if a PySide release renames or drops it, nothing is changed.
"""

from __future__ import annotations

import sys


def guard_pyside_import_hook() -> bool:
    """Wrap shiboken's per-module check once; True if it is (now or already) guarded."""
    feature = sys.modules.get("shibokensupport.feature")
    check = getattr(feature, "_mod_uses_pyside", None)
    if check is None:
        return False
    if getattr(check, "tripane_guarded", False):
        return True

    def uses_pyside(module) -> bool:
        try:
            return check(module)
        except Exception:  # noqa: BLE001 - any failure to read it means: not a PySide-feature module
            return False
    uses_pyside.tripane_guarded = True
    feature._mod_uses_pyside = uses_pyside
    return True
