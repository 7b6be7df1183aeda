"""`grammar_schema`: a JSON schema rewritten for grammar-constrained decoding by llama.cpp.

Shared by the in-process client (`labile_llamacpp`, which compiles the result
into a grammar) and by the litellm client's ``json_object_schema`` dialect
(llama.cpp's own server, which compiles it on its side), so a local model
decodes under the same bounds whichever way it is run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["PARSER_MAX_CHARS", "grammar_schema"]

#: Values a number bounded within [0, 1] may take in a grammar: steps of 0.05.
_UNIT_STEPS: tuple[float, ...] = tuple(round(i / 20, 2) for i in range(21))


#: The longest ``maxLength`` llama.cpp's parser accepts from the converter, with margin
#: (one string of 800 parses, 1200 does not).
PARSER_MAX_CHARS: Final = 600


def grammar_schema(schema: Any, max_chars: int | None = None) -> Any:
    """``schema`` rewritten into what llama-cpp-python's converter enforces well.

    Recursively: ``minLength`` is capped at 1 (non-empty stays enforced,
    cheaply); with ``max_chars`` every string gets ``maxLength`` at most
    ``max_chars`` (a small model's loop inside a string then ends there
    instead of at ``max_tokens``), without it a ``maxLength`` above
    `PARSER_MAX_CHARS` is dropped; a number bounded within [0, 1] (edge
    weights, confidences) becomes an enum of steps of 0.05, because the
    converter ignores number bounds and SmolLM2 wrote weights of 2 and 2.5,
    then repeated them when asked to repair. Validation still applies the
    original schema.

    Args:
        schema: A JSON schema (not modified).
        max_chars: The longest string the grammar allows (``None``: the
            schema's own limits, as far as the parser can take them).
    """
    if isinstance(schema, Mapping):
        out = {k: grammar_schema(v, max_chars) for k, v in schema.items()}
        if isinstance(out.get("minLength"), int) and out["minLength"] > 1:
            out["minLength"] = 1
        limit = out.get("maxLength")
        if max_chars is not None and out.get("type") == "string":
            out["maxLength"] = min(limit, max_chars) if isinstance(limit, int) else max_chars
        elif isinstance(limit, int) and limit > PARSER_MAX_CHARS:
            del out["maxLength"]
        low, high = out.get("minimum"), out.get("maximum")
        if (out.get("type") == "number" and isinstance(low, int | float)
                and isinstance(high, int | float) and 0 <= low <= high <= 1):
            return {"enum": [v for v in _UNIT_STEPS if low <= v <= high]}
        return out
    if isinstance(schema, list):
        return [grammar_schema(v, max_chars) for v in schema]
    return schema
