"""API keys live in the OS keyring (never in files, logs or events)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)
SERVICE = "Tripane"


def provider_of(model: str) -> str:
    """The provider part of a litellm model string: 'anthropic/claude-…' → 'anthropic'."""
    return model.split("/", 1)[0] if "/" in model else "openai"


def get_api_key(model: str, api_base: str | None = None) -> str | None:
    try:
        import keyring

        return keyring.get_password(SERVICE, provider_of(model))
    except Exception as exc:  # no keyring backend: fall back to the provider's environment variable
        log.info("keyring unavailable (%s); using environment variables for API keys", exc)
        return None


def set_api_key(provider: str, key: str) -> None:
    import keyring

    keyring.set_password(SERVICE, provider, key)
