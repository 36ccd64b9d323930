"""Test-wide guards: no real provider, no real keyring, Qt offscreen."""

import os

# Before any Qt import (pytest-qt loads Qt when the plugin starts).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# No test may reach a real model: the model client refuses anything not on 127.0.0.1.
os.environ["TRIPANE_MODELS_LOCAL_ONLY"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# Never read or write the developer's real keyring.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
for _key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "MISTRAL_API_KEY"):
    os.environ.pop(_key, None)
