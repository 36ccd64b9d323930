"""API keys in the OS keyring, and a clear refusal where there is none."""

from __future__ import annotations

import pytest

from core.secrets import (
    NoKeyring,
    get_api_key,
    key_variable,
    keyring_backend,
    set_api_key,
)


def test_with_no_keyring_service_a_key_is_refused_not_silently_dropped():
    # The tests run on keyring's null backend, which accepts a key and keeps nothing.
    name, problem = keyring_backend()
    assert name == "keyring.backends.null.Keyring" and problem == "no keyring service runs on this computer"
    with pytest.raises(NoKeyring, match="no keyring service"):
        set_api_key("openai", "sk-secret")
    assert get_api_key("openai/gpt-4o-mini") is None


def test_a_key_stored_is_read_back_for_the_models_provider(memory_keyring):
    assert keyring_backend()[1] is None
    set_api_key("anthropic", "sk-ant-secret")
    assert get_api_key("anthropic/claude-3-5-haiku-latest") == "sk-ant-secret"
    assert memory_keyring.secrets == {("Tripane", "anthropic"): "sk-ant-secret"}


def test_the_environment_variable_named_for_a_model():
    assert key_variable("anthropic/claude-3-5-haiku-latest") == "ANTHROPIC_API_KEY"
    assert key_variable("gpt-4o-mini") == "OPENAI_API_KEY"  # litellm's default provider
