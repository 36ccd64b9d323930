"""Requests to this computer's own servers go to them directly, whatever proxy the environment names.

A proxy named by HTTPS_PROXY or HTTP_PROXY (a company network's) is asked for every address not
in NO_PROXY, 127.0.0.1 included: httpx and aiohttp, which litellm uses, make no exception for it.
Asked for 127.0.0.1, the proxy connects to itself. A person with a proxy variable set and Ollama,
LM Studio or vLLM on their own computer found the server "not found" and every request failing.
So, at start, the loopback names join NO_PROXY when a proxy is named; commands the agent runs
inherit that too, and are as right to.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")
LOOPBACK = ("localhost", "127.0.0.1", "::1")


def loopback_direct(environ: MutableMapping[str, str] = os.environ) -> None:
    """Add the loopback names to NO_PROXY (and no_proxy, as both are read) when a proxy is named."""
    if not any(environ.get(variable, "").strip() for variable in PROXY_VARIABLES):
        return
    for name in ("NO_PROXY", "no_proxy"):
        listed = [entry.strip() for entry in environ.get(name, "").split(",") if entry.strip()]
        if "*" in listed:  # (nothing goes through a proxy already)
            continue
        environ[name] = ",".join(listed + [host for host in LOOPBACK if host not in listed])
