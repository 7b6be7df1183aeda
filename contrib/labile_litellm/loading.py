"""Importing litellm without touching the network, and telling a local server apart.

`load_litellm` sets litellm's offline variables before the import (unless the
user set them), so importing it never fetches a price map or a tokenizer;
`is_loopback` decides whether an ``api_base`` is this machine (such servers
get `LOCAL_KEY`, never the provider's real key).
"""

from __future__ import annotations

import ipaddress
import os
from types import ModuleType
from typing import Final
from urllib.parse import urlsplit

from labile.plugin import MissingDependencyError
from labile_litellm import redacting

INSTALL_HINT: Final = "pip install 'labile[llm]'"
#: Sent as the key to a loopback ``api_base`` when no ``api_key_env`` is set.
LOCAL_KEY: Final = "sk-local-no-key"
_OFFLINE_ENV: Final = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}

__all__ = ["INSTALL_HINT", "LOCAL_KEY", "is_loopback", "load_litellm"]


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
    redacting.install()
    return litellm
