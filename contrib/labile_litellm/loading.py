"""Importing litellm without touching the network, and telling a local server apart.

`load_litellm` sets litellm's offline variables before the import (unless the
user set them), so importing it never fetches a price map or a tokenizer;
`is_loopback` decides whether an ``api_base`` is this machine (such servers
get `LOCAL_KEY`, never the provider's real key); `silence_verbose` keeps
litellm's stdout prints, which bypass logging and its redaction, off.
"""

from __future__ import annotations

import ipaddress
import os
from types import ModuleType
from typing import Any, Final
from urllib.parse import urlsplit

from labile.plugin import MissingDependencyError, get_logger
from labile_litellm import redacting

INSTALL_HINT: Final = "pip install 'labile[llm]'"
#: Sent as the key to a loopback ``api_base`` when no ``api_key_env`` is set.
LOCAL_KEY: Final = "sk-local-no-key"
_OFFLINE_ENV: Final = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}

__all__ = ["INSTALL_HINT", "LOCAL_KEY", "is_loopback", "load_litellm", "silence_verbose"]


def is_loopback(url: str | None) -> bool:
    """Whether ``url``'s host is this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if not url:
        return False
    host = urlsplit(url if "//" in url else f"//{url}").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_litellm() -> ModuleType:
    """Import litellm offline-safely.

    Sets ``LITELLM_LOCAL_MODEL_COST_MAP`` and ``LITELLM_OFFLINE_MODE`` (unless
    already set) before the import, and silences litellm's debug prints
    (``suppress_debug_info``), which would otherwise write to stdout.

    Raises:
        MissingDependencyError: litellm is not installed.
    """
    for name, value in _OFFLINE_ENV.items():
        os.environ.setdefault(name, value)
    try:
        import litellm
    except ImportError:
        raise MissingDependencyError(
            f"the 'litellm' llm needs the litellm package: {INSTALL_HINT}"
        ) from None
    litellm.suppress_debug_info = True
    silence_verbose(litellm)
    redacting.install()
    return litellm


def silence_verbose(litellm: ModuleType) -> None:
    """Turn litellm's ``set_verbose`` off, on the package and in ``litellm._logging``.

    With it on, litellm ``print``s provider errors to stdout, where a provider that
    quotes the key ("Incorrect API key provided: sk-…") puts it past every logging
    filter. The client calls this before every request, since an application may
    switch it on at any time; litellm's debug output through logging
    (``LITELLM_LOG=DEBUG``) is unaffected and redacted (`labile_litellm.redacting`).
    """
    switched = False
    modules: tuple[Any, ...] = (litellm, getattr(litellm, "_logging", None))
    for module in modules:
        if module is not None and getattr(module, "set_verbose", False):
            module.set_verbose = False
            switched = True
    if switched:
        get_logger(__name__).warning(
            "litellm_set_verbose_turned_off",
            reason="it prints provider errors, API keys included, to stdout; set "
                   "LITELLM_LOG=DEBUG for litellm's debug log, which labile redacts")
