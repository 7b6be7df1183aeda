"""Where a store lives: a local directory or an object-store URI, and how to reach it.

``[store] path`` is either a local directory (created when missing;
``memory://`` gives a temporary one, an empty path is refused) or a URI of an
object store LanceDB writes to: ``s3://bucket/prefix`` (AWS S3 and
S3-compatible servers such as MinIO), ``gs://bucket/prefix`` (Google Cloud
Storage) or ``az://container/prefix`` (Azure Blob Storage). Object stores need
*storage options* (endpoint, region, credentials, ``allow_http`` for a
plain-HTTP test server): the ones that are not secret may be written in the
config (``storage_options``); secrets are named by environment variable
(``storage_options_env = {aws_secret_access_key = "MY_SECRET_VAR"}``), never
written in the config. Options left out are taken
by LanceDB from the usual environment variables (``AWS_ACCESS_KEY_ID``, …).

`check_options` runs when the config is built (so ``labile check`` reports a
bad scheme or a secret written in the config); `resolve` runs at open and reads
the environment variables (so a missing one fails there, naming it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

import attrs

from labile.plugin import StoreError

__all__ = ["OBJECT_SCHEMES", "StoreLocation", "check_options", "is_object_uri", "resolve"]

#: The URI schemes of the object stores LanceDB writes to (via Rust's object_store).
OBJECT_SCHEMES: Final = ("s3", "gs", "az")
#: Option keys whose values are credentials: refused in ``storage_options``.
_SECRET: Final = re.compile(r"secret|token|password|account_key|access_key_id|"
                            r"service_account_key|sas_key|credential", re.IGNORECASE)
_SCHEME: Final = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_object_uri(path: str) -> bool:
    """Whether ``path`` names an object store (``s3://…``, ``gs://…``, ``az://…``)."""
    m = _SCHEME.match(path)
    return bool(m) and m.group(1).lower() in OBJECT_SCHEMES  # type: ignore[union-attr]


def check_options(path: str, options: dict[str, str], env: dict[str, str]) -> None:
    """Check the location options as written in the config (no environment read).

    Raises:
        ValueError: a URI scheme that is neither local nor a supported object
            store, a credential written as a value in ``storage_options``, an
            option named in both tables, a non-string value, or an invalid
            environment variable name; the message names the option and what
            is allowed.
    """
    if not path.strip():
        raise ValueError(
            f"[store] path is empty ({path!r}): name a directory (created when missing) or "
            "an object-store URI; a temporary store deleted on close must be asked for "
            "explicitly with path = \"memory://\"")
    m = _SCHEME.match(path)
    if m and path != "memory://" and m.group(1).lower() not in (*OBJECT_SCHEMES, "file"):
        raise ValueError(
            f"[store] path {path!r}: the scheme {m.group(1)!r} is not supported; use a "
            f"local directory or one of {', '.join(s + '://' for s in OBJECT_SCHEMES)} "
            "(LanceDB's managed service is reached through its own client, not this store)")
    for table, items in (("storage_options", options), ("storage_options_env", env)):
        for key, value in items.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ValueError(f"[store] {table}: keys and values must be strings, got "
                                 f"{key!r} = {value!r}")
    for key in options:
        if _SECRET.search(key):
            raise ValueError(
                f"[store] storage_options.{key}: credentials are never written in the "
                f"config; name the environment variable that holds it instead: "
                f"storage_options_env = {{{key} = \"VARIABLE\"}}")
    for key, var in env.items():
        if key in options:
            raise ValueError(f"[store] option {key!r} is set in both storage_options and "
                             "storage_options_env; keep one")
        if not _ENV_NAME.match(var):
            raise ValueError(f"[store] storage_options_env.{key}: {var!r} is not an "
                             "environment variable name (letters, digits, underscores)")
    if (options or env) and not is_object_uri(path):
        raise ValueError("[store] storage_options apply to object-store paths only "
                         f"({', '.join(s + '://' for s in OBJECT_SCHEMES)}), not {path!r}")


@attrs.frozen
class StoreLocation:
    """A resolved store location.

    Attributes:
        uri: What LanceDB connects to (the absolute directory, or the URI).
        directory: The local directory; ``None`` for an object store.
        storage_options: Every option, environment values included (secrets:
            never log this).
    """

    uri: str
    directory: Path | None
    storage_options: dict[str, str] = attrs.field(factory=dict, repr=False)

    @property
    def is_object_store(self) -> bool:
        """Whether the store lives in an object store (no shared file system)."""
        return self.directory is None


def resolve(path: str, options: dict[str, str], env: dict[str, str],
            directory: Path | None = None) -> StoreLocation:
    """The location of an object-store ``path`` with its options, the environment
    variables read; or of the local ``directory`` already prepared.

    Raises:
        StoreError: an environment variable named in ``env`` is not set (the
            message names it and the option it feeds).
    """
    if directory is not None:
        return StoreLocation(uri=str(directory), directory=directory)
    resolved = dict(options)
    for key, var in env.items():
        value = os.environ.get(var)
        if value is None:
            raise StoreError(f"[store] storage_options_env.{key} names the environment "
                             f"variable {var}, which is not set")
        resolved[key] = value
    return StoreLocation(uri=path.rstrip("/"), directory=None, storage_options=resolved)
