"""``--llm TYPE[:key=value,...]``: the model a real-model benchmark run puts in every preset.

Examples::

    llamacpp                                   # the packaged SmolLM2, defaults
    llamacpp:n_threads=1,max_tokens=384        # options of LlamaCppConfig
    litellm:model=openai/smol,api_base=http://127.0.0.1:8080/v1

Values are read as JSON scalars where they parse (``1``, ``0.5``, ``true``,
``null``), else as strings; a value cannot contain a comma. The options are
checked by the component's own config when the memory is built, so a
misspelt option fails there with the names that are allowed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from labile import LabileError

__all__ = ["parse_llm_spec"]

_KEY = re.compile(r"^[a-z_][a-z0-9_]*$")


def parse_llm_spec(spec: str, flag: str = "--llm") -> dict[str, Any]:
    """The ``[llm]`` table of ``spec`` (see the module doc); ``flag`` names the option
    in messages (``--embedder`` reads its component the same way).

    Raises:
        LabileError: an empty type, or an option that is not ``key=value``
            with a lower-case identifier as key.
    """
    kind, _, rest = spec.partition(":")
    kind = kind.strip()
    if not kind:
        raise LabileError(f"{flag} {spec!r}: give a registered component type first, "
                          "e.g. 'llamacpp' or 'litellm:model=openai/NAME,api_base=URL'")
    table: dict[str, Any] = {"type": kind}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not _KEY.match(key):
            raise LabileError(f"{flag} {spec!r}: option {item!r} is not key=value "
                              "(keys are lower-case option names such as n_threads)")
        table[key] = _value(raw.strip())
    return table


def _value(raw: str) -> Any:
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, (int, float, bool)) or value is None else raw
