"""The JSON-schema subset used to validate LLM output."""

from __future__ import annotations

import pytest

from labile_llm.jsoncheck import validate

SCHEMA = {
    "type": "object",
    "required": ["op", "weight", "ids"],
    "additionalProperties": False,
    "properties": {
        "op": {"type": "string", "enum": ["add", "skip"]},
        "weight": {"type": "number", "minimum": 0, "maximum": 1},
        "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
    },
}


def test_valid_object_passes() -> None:
    assert validate({"op": "add", "weight": 0.5, "ids": [1, 2]}, SCHEMA) == []


def test_each_violation_is_reported_with_its_path() -> None:
    errors = validate({"op": "merge", "weight": 1.5, "ids": [1, "x", 3, 4], "extra": 1}, SCHEMA)
    text = "\n".join(errors)
    assert "$.op: 'merge' is not one of" in text
    assert "$.weight: 1.5 is above the maximum 1" in text
    assert "$.ids[1]: expected integer" in text
    assert "$.ids: more than 3 items" in text
    assert "unexpected key(s) 'extra'" in text


def test_missing_and_bool_is_not_a_number() -> None:
    errors = validate({"op": "add", "weight": True}, SCHEMA)
    assert any("missing required key 'ids'" in e for e in errors)
    assert any("$.weight: expected number, got bool" in e for e in errors)


@pytest.mark.parametrize(("prompt", "expected"), [
    ('Do it.\n\nReply with JSON matching this schema:\n{"type":"object"}',
     "Do it.\n\nReply with one JSON value."),
    ('Do it.\nThe JSON schema:\n{"type": "object", "properties": {}}\n',
     "Do it.\n\nReply with one JSON value."),
    # not a schema, or not at the end, or not one line: unchanged
    ('Do it.\n\nReply matching this schema:\n{"a": 1}', None),
    ('Reply with JSON matching this schema:\n{"type":"object"}\nThen stop.', None),
    ('Do it.\n\nschema:\n{"type":\n"object"}', None),
    ("Do it.\n\nschema:\n{not json}", None),
])
def test_strip_schema_text_drops_only_a_closing_one_line_schema(prompt: str,
                                                                expected: str | None) -> None:
    from labile_llm.json_completion import strip_schema_text

    assert strip_schema_text(prompt) == (prompt if expected is None else expected)
