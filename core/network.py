"""What every request needs set before the first: the certificates this computer trusts
(trust_this_computers_certificates), and the proxies the environment names, none of them for this
computer's own servers (loopback_direct). prepare_for_requests does both, at each start of Tripane.

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
from urllib.parse import urlparse

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")
SYSTEM_SETTINGS = "this computer's proxy settings"  # what names the proxy, when no variable does
# How to have servers on this computer (and those NO_PROXY names) reached directly, when this
# computer's settings name the proxy: with a variable naming it, loopback_direct excepts them.
SET_THE_VARIABLES = ("set HTTPS_PROXY and HTTP_PROXY to it in the environment Tripane starts from, and servers "
                     "on this computer (and those NO_PROXY names) are reached directly")
LOOPBACK = ("localhost", "127.0.0.1", "::1")


def prepare_for_requests() -> None:
    """Before any request, in the window and on the command line alike."""
    trust_this_computers_certificates()
    loopback_direct()


def trust_this_computers_certificates() -> None:
    """Verify servers' certificates against this computer's own trusted certificates (Windows'
    certificate store, macOS's keychain, Linux's /etc/ssl), not certifi's list alone.

    A company's IT department installs its network's certificate authority in the computer's store,
    and the browser, curl and git trust it. Python's libraries read certifi's list: behind such a
    network every request failed "not trusted on this computer", of a certificate the computer
    trusts. truststore puts its SSLContext in place of ssl's (as pip does), so litellm's httpx and
    aiohttp and our own requests all verify that way; a file named by SSL_CERT_FILE, and certifi's
    list, are trusted as well."""
    import truststore

    truststore.inject_into_ssl()


def trusting_this_computer() -> bool:
    """Whether requests verify against this computer's certificates (prepared so in this process)."""
    import ssl

    return ssl.SSLContext.__module__.startswith("truststore")


def proxy_named(environ: MutableMapping[str, str]) -> bool:
    """Whether a variable names a proxy (else Windows and macOS use their own settings)."""
    return any(environ.get(variable, "").strip() for variable in PROXY_VARIABLES)


def loopback_direct(environ: MutableMapping[str, str] = os.environ) -> None:
    """Add the loopback names to NO_PROXY (and no_proxy, as both are read) when a proxy is named."""
    if not proxy_named(environ):
        return
    for name in ("NO_PROXY", "no_proxy"):
        listed = [entry.strip() for entry in environ.get(name, "").split(",") if entry.strip()]
        if "*" in listed:  # (nothing goes through a proxy already)
            continue
        environ[name] = ",".join(listed + [host for host in LOOPBACK if host not in listed])


def proxy_for(api_base: str | None) -> tuple[str, str] | None:
    """The environment variable naming the proxy the request to `api_base` (None: a provider's
    own, over https) goes through, and the proxy; None when it goes direct. As httpx and aiohttp
    read them: HTTPS_PROXY or HTTP_PROXY by the scheme, then ALL_PROXY, unless NO_PROXY names
    the host; with none of them, this computer's own settings (SYSTEM_SETTINGS). A person read
    "is the server running?" of a server that was, behind a proxy that was not."""
    import urllib.request  # (here: every start of tripane imports this module, few ask this)

    parsed = urlparse(api_base) if api_base else None
    scheme = parsed.scheme if parsed and parsed.scheme else "https"
    host = parsed.hostname if parsed else ""
    if host and urllib.request.proxy_bypass_environment(host):
        return None
    for name in (f"{scheme}_proxy", "all_proxy"):
        for variable in (name.upper(), name):
            if os.environ.get(variable, "").strip():
                return variable, os.environ[variable].strip()
    # No variable names one: then httpx reads Windows' and macOS's own proxy settings
    # (urllib.request.getproxies), but not their exceptions, and asks the proxy for this
    # computer's servers too. (On Linux the settings are the variables.)
    if not proxy_named(os.environ):
        system = urllib.request.getproxies()
        if address := str(system.get(scheme) or system.get("all") or "").strip():
            return SYSTEM_SETTINGS, address
    return None
