"""Test-wide guards: no real provider, no real keyring, Qt offscreen."""

import atexit
import os
import shutil
import tempfile

import pytest

# Before any Qt import (pytest-qt loads Qt when the plugin starts).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# No test may reach a real model: the model client refuses anything not on 127.0.0.1.
os.environ["TRIPANE_MODELS_LOCAL_ONLY"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# Nor a cloud's metadata service, where a CI machine runs on one (a cloud VM signs its SDKs in).
os.environ["NO_GCE_CHECK"] = "true"
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
# Never read or write the developer's real keyring.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
# Never read or write the person's settings (the ones the window and `tripane run` share).
os.environ["TRIPANE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="tripane-test-settings-")
atexit.register(shutil.rmtree, os.environ["TRIPANE_CONFIG_DIR"], ignore_errors=True)  # (each run left one in /tmp)
# Nor keep the developer's computer from sleeping while the tests' agents work (core/stay_awake.py).
os.environ["TRIPANE_KEEP_AWAKE"] = "0"
for _key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "MISTRAL_API_KEY"):
    os.environ.pop(_key, None)


@pytest.fixture
def use_keyring():
    """Puts a keyring backend of the test's in place (the function it gives); the previous one comes
    back after the test."""
    import keyring

    previous = keyring.get_keyring()
    yield keyring.set_keyring
    keyring.set_keyring(previous)


@pytest.fixture
def memory_keyring(use_keyring):
    """API keys kept in this process, through the real keyring API."""
    from tests.support.memory_keyring import MemoryKeyring

    backend = MemoryKeyring()
    use_keyring(backend)
    return backend


@pytest.fixture(autouse=True)
def models_of_2026_11_25(monkeypatch):
    """Every test runs as on the day these were written: litellm's map dates models' deprecation
    (gpt-4o-mini's is 2027-01-14), which changes what is offered and what the window says of a
    model, and a test that names one must not fail on that day. (Named where a test needs the day.)"""
    import core.model_names

    monkeypatch.setattr(core.model_names, "today", lambda: "2026-11-25")


@pytest.fixture(autouse=True)
def pictures_untried(monkeypatch):
    """Each test starts with no model having taken or refused a picture (the process keeps that,
    by model and server address, and a later test's scripted server may get an earlier's port)."""
    from core import pictures

    monkeypatch.setattr(pictures, "_taken", {})
    monkeypatch.setattr(pictures, "_refused", {})


@pytest.fixture(autouse=True)
def no_keys_held(monkeypatch):
    """Each test starts with no key held for the run (the process keeps those typed where no keyring
    could store them)."""
    from core import secrets

    monkeypatch.setattr(secrets, "_HELD", {})
