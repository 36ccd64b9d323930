"""API keys live in the OS keyring (never in files, logs or events), and the values of secret
environment variables are hidden in what the agent's tools return."""

from __future__ import annotations

import logging
import os
import re
from urllib.parse import urlparse

log = logging.getLogger(__name__)
SERVICE = "Tripane"
_TOLD: set[str] = set()  # why the keyring could not be read, each said once in the log


def provider_of(model: str) -> str:
    """The provider part of a litellm model string: 'anthropic/claude-…' → 'anthropic'."""
    return model.split("/", 1)[0] if "/" in model else "openai"


# Providers that sign in with the cloud's own credentials (an AWS profile, gcloud's login), which
# litellm finds by itself, rather than with a key; and how a person signs in to each.
CLOUD_SIGN_IN = {"bedrock": "AWS", "bedrock_converse": "AWS", "sagemaker": "AWS", "vertex_ai": "Google Cloud",
                 "vertex_ai_beta": "Google Cloud"}
HOW_TO_SIGN_IN = {
    "AWS": "run `aws configure` (or `aws sso login`), or set AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and "
           "AWS_REGION_NAME",
    "Google Cloud": "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
                    "service account's key file (and VERTEXAI_PROJECT, VERTEXAI_LOCATION)",
}


def cloud_of(model: str) -> str | None:
    """The cloud whose own sign-in the model's requests use ("AWS", "Google Cloud"), if any."""
    return CLOUD_SIGN_IN.get(provider_of(model))


def key_name(model: str, api_base: str | None = None) -> str:
    """The name a key is kept under: its provider's ("openai"), or, for a model reached at a server
    of the person's choosing, that server's ("openai@api.deepseek.com"). Keyed by provider alone,
    an `openai/…` model at DeepSeek, Together, a company proxy or a local vLLM was sent the person's
    OpenAI key, and a key typed for that server replaced the OpenAI one."""
    provider = provider_of(model)
    if not api_base or not api_base.strip():
        return provider
    parsed = urlparse(api_base.strip() if "//" in api_base else f"//{api_base.strip()}")
    return f"{provider}@{(parsed.netloc or api_base.strip()).lower()}"


# Keys typed where no keyring could store them (none runs here, or it refused): held by this process
# until it ends, never written anywhere. Without them, a person whose desktop has no keyring service
# could give no key to a window started from the desktop's menu (whose environment has none of the
# variables set in a shell's profile), and never one to a server of their own, which is sent only its
# own key, not an environment variable's.
_HELD: dict[str, str] = {}


def hold_api_key(name: str, key: str) -> None:
    """Keep the key under `name` (see key_name) in this process alone, until it ends."""
    _HELD[name] = key


def is_held(model: str, api_base: str | None = None) -> bool:
    """Whether the model's key is one held for this run (see hold_api_key)."""
    return key_name(model, api_base) in _HELD


def get_api_key(model: str, api_base: str | None = None) -> str | None:
    """The key held or stored for the model's provider, or for the server it is reached at: never
    another server's."""
    return stored_key(key_name(model, api_base))


def stored_key(name: str) -> str | None:
    """The key held or kept in the keyring under `name` (a model's: see key_name; a search
    provider's: see core/web_search.py)."""
    held = _HELD.get(name)
    if held:  # typed in this run, so newer than anything stored
        return held
    try:
        import keyring

        return keyring.get_password(SERVICE, name)
    except Exception as exc:  # no keyring backend: fall back to the provider's environment variable
        if str(exc) not in _TOLD:  # (asked before every request: once is enough for the log)
            _TOLD.add(str(exc))
            log.info("keyring unavailable (%s); using environment variables for API keys", exc)
        return None


def key_source(model: str, api_base: str | None = None) -> str:
    """Where the model's requests would take their key from: "held" (typed in this run, with no
    keyring to store it in), "keyring", "environment" (the
    provider's variable, which litellm reads; never for a server of the person's choosing, which is
    sent only its own key), or "" (none: a local server needs none, a provider refuses the request).
    Asks the keyring, so off the event loop."""
    if is_held(model, api_base):
        return "held"
    if get_api_key(model, api_base):
        return "keyring"
    if not (api_base and api_base.strip()) and os.environ.get(key_variable(model)):
        return "environment"
    return ""


def keyring_backend() -> tuple[str, str | None]:
    """The keyring's backend, and why API keys cannot be stored in it (None: they can). A computer
    with no keyring service (a server, a bare window manager) gets keyring's fail or null backend."""
    try:
        import keyring

        backend = keyring.get_keyring()
    except Exception as exc:  # a broken keyring installation
        return "", f"the keyring does not load ({exc})"
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if "fail" in name.lower() or "null" in name.lower():
        return name, "no keyring service runs on this computer"
    return name, None


def key_variable(model: str) -> str:
    """The environment variable litellm reads a provider's key from, for most providers."""
    return f"{provider_of(model).upper().replace('-', '_')}_API_KEY"


class NoKeyring(Exception):
    """API keys cannot be stored on this computer; the message says why."""


def set_api_key(name: str, key: str) -> None:
    """Store the key in the OS keyring under `name` (see key_name). Raises NoKeyring where there
    is none: keyring's null backend would drop the key without a word, and the person take it for
    stored."""
    _name, problem = keyring_backend()
    if problem:
        raise NoKeyring(problem)
    import keyring

    try:
        keyring.set_password(SERVICE, name, key)
    except Exception as exc:  # the service refused (locked, gone away)
        raise NoKeyring(f"the keyring refused it ({str(exc).rstrip('.')})") from exc
    _HELD.pop(name, None)  # stored now: the one held before it would hide it


def forget_key(name: str) -> None:
    """Remove the key kept under `name`, held or in the keyring (one not there is no error)."""
    _HELD.pop(name, None)
    try:
        import keyring

        keyring.delete_password(SERVICE, name)
    except Exception as exc:  # not there, or no keyring: nothing is kept under that name
        log.debug("no key %s to remove from the keyring: %s", name, exc)


# What an environment variable holding a secret is called (OPENAI_API_KEY, GITHUB_TOKEN,
# AWS_SECRET_ACCESS_KEY, DB_PASSWORD, …). Commands the agent runs inherit Tripane's environment, so
# `env` or a debugging print would put the person's keys into the tool result, and from there into
# the event log, progress.md and the provider's next request.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
MIN_SECRET_CHARS = 8  # shorter values ("1", "true") are settings, and would be found everywhere


class Redactor:
    """Hides the values of secret-named environment variables in text: `[hidden: NAME]`, and any
    other secrets it is given by name (the session's API key from the keyring: a project's .env
    often holds the same key, and a read of it would put it in the log and progress.md)."""

    def __init__(self, environ: dict[str, str], named: dict[str, str] | None = None):
        secrets = {value: name for name, value in sorted(environ.items())
                   if SECRET_NAME.search(name) and len(value) >= MIN_SECRET_CHARS and not os.path.isabs(value)}
        secrets.update({value: name for name, value in (named or {}).items() if len(value) >= MIN_SECRET_CHARS})
        self._names = secrets  # paths (SSH_AUTH_SOCK, XAUTHORITY) are not secrets, and are everywhere
        # Longest first: a key that contains another is hidden whole.
        alternatives = sorted(secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, alternatives))) if alternatives else None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda match: f"[hidden: {self._names[match.group()]}]", text)
