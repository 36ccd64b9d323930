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

import threading

HEAVY_IMPORTS = threading.RLock()
