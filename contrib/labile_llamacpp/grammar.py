"""JSON schema → llama.cpp grammar, compiled and checked once per schema.

Three traps of llama-cpp-python 0.3.36 shape this module:

* its Python converter spells a string's ``maxLength`` as one nested optional
  group per character, and llama.cpp's grammar parser refuses the result for
  long limits ("number of rules that are going to be repeated … exceeds sane
  defaults"): REALM's extraction schema (``maxLength`` 1200) fails. Strings
  are therefore bounded in the grammar by ``max_string_chars`` (default 400)
  and longer limits never reach the parser (`grammar_schema`); validation
  still applies the schema's own limits;
* a grammar the parser refuses makes llama-cpp-python add a NULL sampler and
  the process dies with a segmentation fault. Every grammar is therefore
  parsed once by the model's own parser (``check``) before it is used;
* its converter lets strings hold raw control characters (a newline, say),
  which strict JSON forbids, so a reply can satisfy the grammar and still not
  parse; the string character rule is narrowed to what JSON allows
  (`_STRICT_CHAR`), as in llama.cpp's own converter;
* its ``response_format`` path silently falls back to "any JSON" when a
  schema does not convert. Here a schema that does not convert or parse is
  logged (``llamacpp_schema_unsupported``) and counted, and the caller asks
  with the generic JSON grammar and the schema written into the prompt.

The grammar also enforces less than `labile_llm.jsoncheck` validates (integer
``minimum``, number ``minimum`` / ``maximum`` …), so replies are still
validated afterwards, and ids still checked against the prompt by callers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from labile.plugin import get_logger
from labile_llm.schema_bounds import PARSER_MAX_CHARS, grammar_schema

log = get_logger(__name__)

__all__ = ["PARSER_MAX_CHARS", "GrammarCache", "grammar_schema"]

#: The converter's string character rule, and the same without control characters.
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_STRICT_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'


class GrammarCache:
    """Compiled grammars by schema, plus the generic JSON grammar.

    Args:
        grammar_module: ``llama_cpp.llama_grammar``.
        check: Parses a GBNF text with the model's own parser and says whether
            it is usable (``None``: trust the converter).
        max_chars: The longest string the grammars allow (see `grammar_schema`).
    """

    def __init__(self, grammar_module: Any, check: Callable[[str], bool] | None = None,
                 max_chars: int | None = None) -> None:
        self._module = grammar_module
        self._check = check
        self._max_chars = max_chars
        self._lock = threading.Lock()
        self._by_schema: dict[str, Any | None] = {}
        self._json: Any | None = None
        self.unsupported = 0

    def for_schema(self, schema: Mapping[str, Any]) -> Any | None:
        """The grammar of ``schema``, or ``None`` when the converter rejects it."""
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            if key in self._by_schema:
                return self._by_schema[key]
        grammar = None
        try:
            gbnf = self._module.json_schema_to_gbnf(
                json.dumps(grammar_schema(schema, self._max_chars)))
            gbnf = gbnf.replace(_LOOSE_CHAR, _STRICT_CHAR)
        except Exception as exc:  # the converter raises bare Exceptions for unsupported input
            log.warning("llamacpp_schema_unsupported", stage="convert",
                        error_type=type(exc).__name__, error=str(exc)[:200])
        else:
            if self._check is None or self._check(gbnf):
                grammar = self._module.LlamaGrammar.from_string(gbnf, verbose=False)
            else:
                log.warning("llamacpp_schema_unsupported", stage="parse",
                            error="llama.cpp's grammar parser refused the converted schema",
                            grammar_chars=len(gbnf))
        with self._lock:
            if key not in self._by_schema:
                self._by_schema[key] = grammar
                self.unsupported += grammar is None
            return self._by_schema[key]

    def any_json(self) -> Any:
        """The grammar of any JSON value."""
        with self._lock:
            if self._json is None:
                self._json = self._module.LlamaGrammar.from_string(
                    self._module.JSON_GBNF, verbose=False)
            return self._json
