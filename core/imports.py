"""One lock for the heavy first imports that run in worker threads.

In the window's process PySide6 replaces `__import__` with a hook that reads the source of every
newly imported module (shiboken's feature_imported → inspect.getsource). When two worker threads
import at once — long-term memory loading (NumPy, the embedding model, keyring) and litellm
(pydantic) — that hook re-enters the import system from both, and Python's deadlock avoidance may
hand one of them a partially initialised module. CI saw it once in `tripane --selftest`:
"cannot import name 'import_string' from partially initialized module
'pydantic._internal._validators'". Heavy imports in worker threads take this lock. (The same error
also came from a single thread, the hook itself importing mid-import: gui/import_guard.py.)
"""

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HEAVY_IMPORTS = threading.RLock()


@contextmanager
def without(module: str) -> Iterator[None]:
    """Import inside as if `module` were not installed, unless it is loaded already.

    For a library that imports an optional dependency it does not need here, at a cost the window's
    start would pay. Held under HEAVY_IMPORTS, so no worker thread imports `module` meanwhile."""
    with HEAVY_IMPORTS:
        if module in sys.modules:
            yield
            return
        sys.modules[module] = None  # type: ignore[assignment]  # import raises ModuleNotFoundError
        try:
            yield
        finally:
            if sys.modules.get(module, ...) is None:
                del sys.modules[module]
