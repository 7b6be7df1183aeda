"""Shared ``complete_json`` logic: extract JSON from text, validate, repair, fail closed."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any, Final

from labile.plugin import LLMOutputError, get_logger
from labile_llm.jsoncheck import validate
from labile_llm.replies import ReplyCutError, ReplyTally
from labile_llm.retry import LLMCallError

log = get_logger(__name__)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_LENIENT = json.JSONDecoder(strict=False)


def extract_json(text: str) -> Any:
    """Parse the JSON value in a model's reply.

    Tries, in order: the whole text; the first fenced code block; the span from
    the first ``{``/``[`` to the last ``}``/``]``; then the same span with
    trailing commas removed and single-quoted strings re-quoted (the commonest
    breakages of local models). Each is also read leniently, allowing raw
    control characters (newlines, tabs) inside strings.

    Raises:
        LLMOutputError: no JSON value could be recovered.
    """
    candidates = [text.strip()]
    fence = _FENCE.search(text)
    if fence:
        candidates.append(fence.group(1).strip())
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(text.rfind("}"), text.rfind("]"))
        if end > start:
            span = text[start : end + 1]
            candidates.append(span)
            repaired = re.sub(r",\s*([}\]])", r"\1", span)
            repaired = re.sub(r"(?<![\w\"])'([^'\"]*)'(?![\w\"])", r'"\1"', repaired)
            candidates.append(repaired)
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            pass
        try:
            # Raw newlines or tabs inside strings: strict JSON forbids them, and
            # llama-cpp-python's schema grammars let a model emit them.
            return _LENIENT.decode(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
    raise LLMOutputError("the model's reply holds no parsable JSON", raw=text[:2000])


def repair_prompt(prompt: str, reply: str, problems: list[str], schema: Mapping[str, Any]) -> str:
    """The follow-up prompt asking the model to fix its JSON."""
    return (
        f"{prompt}\n\nYour previous reply was not valid:\n- "
        + "\n- ".join(problems[:10])
        + f"\n\nPrevious reply:\n{reply[:4000]}\n\n"
        "Reply again with only a JSON value that satisfies this JSON schema:\n"
        + json.dumps(schema)
    )


def json_instruction(schema: Mapping[str, Any]) -> str:
    """The sentence appended to a prompt when the provider cannot enforce ``schema``.

    Used by clients in JSON-object and prompt-only modes (and as a reminder in
    schema mode); `repair_prompt` already carries the schema, so callers skip
    it when the prompt contains the schema text.
    """
    return (
        "Reply with only a JSON value (no prose, no code fence) that satisfies this "
        "JSON schema:\n" + json.dumps(schema, sort_keys=True)
    )


#: A prompt's closing request that spells out the reply's schema: a line ending in
#: "schema:" followed by the schema as one line of JSON (REALM's prompts end so).
_SCHEMA_TAIL = re.compile(r"\n+[^\n]*\bschema:[ \t]*\n(\{[^\n]*\})\s*$", re.IGNORECASE)
SCHEMA_ENFORCED_TAIL: Final = "Reply with one JSON value."


def strip_schema_text(prompt: str) -> str:
    """``prompt`` without a closing schema, for a client whose decoding enforces the schema.

    The schema text costs hundreds of prompt tokens per call (247 of REALM's
    ~1,000-token extraction prompt) and tells a grammar-constrained model
    nothing the grammar does not. Only a final "…schema:" line followed by a
    one-line JSON object with a ``type`` goes; anything else is returned
    unchanged.
    """
    match = _SCHEMA_TAIL.search(prompt)
    if match is None:
        return prompt
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return prompt
    if not isinstance(value, dict) or "type" not in value:
        return prompt
    return f"{prompt[: match.start()]}\n\n{SCHEMA_ENFORCED_TAIL}"


def schema_in_prompt(prompt: str, schema: Mapping[str, Any]) -> bool:
    """Whether ``prompt`` already spells out ``schema`` (a repair prompt does, and so do
    prompts that embed it compactly, as REALM's do)."""
    return any(json.dumps(schema, sort_keys=keys, separators=seps) in prompt
               for keys in (False, True) for seps in (None, (",", ":")))


_TALLY_LOCK = threading.Lock()
_ATTEMPT = threading.local()


def json_attempt() -> int:
    """Which request of the running ``complete_json`` this thread is making.

    0 for the first request (and outside ``complete_json``), 1 for the first
    repair, and so on. A client may decode repairs differently: re-asking a
    greedy model with the same settings repeats its error.
    """
    return int(getattr(_ATTEMPT, "value", 0))


class JSONCompletion:
    """Mixin: ``complete_json`` on top of a subclass's ``_complete_raw``.

    Subclasses implement ``_complete_raw(prompt, *, operation, system,
    json_schema, max_tokens) -> str`` and set ``max_repairs``. Every
    ``complete_json`` outcome is counted in `replies` (`ReplyTally`);
    ``_complete_raw`` may raise `ReplyCutError` for a reply cut at its token
    budget, which fails closed at once, without a repair.
    """

    max_repairs: int = 1
    _reply_tally: ReplyTally | None = None

    @property
    def replies(self) -> ReplyTally:
        """The outcomes of this client's ``complete_json`` calls (made on first use)."""
        if self._reply_tally is None:
            with _TALLY_LOCK:
                if self._reply_tally is None:
                    self._reply_tally = ReplyTally()
        return self._reply_tally

    def _complete_raw(
        self,
        prompt: str,
        *,
        operation: str,
        system: str | None,
        json_schema: Mapping[str, Any] | None,
        max_tokens: int | None,
    ) -> str:
        raise NotImplementedError

    def complete_json(
        self,
        prompt: str,
        schema: Mapping[str, Any],
        *,
        operation: str,
        system: str | None = None,
        max_tokens: int | None = None,
    ) -> Any:
        """Ask for JSON matching ``schema``; repair at most ``max_repairs`` times.

        ``max_tokens`` overrides the client's reply length for this call. The
        outcome is counted in `replies`.

        Raises:
            LLMOutputError: still invalid after the repairs, or cut at the
                token budget (`ReplyCutError`): fail closed.
            LLMCallError: the call itself failed (counted with its kind).
        """
        tally = self.replies
        try:
            value, attempts = self._complete_json(prompt, schema, operation=operation,
                                                  system=system, max_tokens=max_tokens)
        except ReplyCutError:
            tally.add(operation, "rejected:truncated")
            raise
        except LLMOutputError:
            tally.add(operation, "rejected:invalid")
            raise
        except LLMCallError as err:
            tally.add(operation, f"rejected:{err.kind.value}")
            raise
        tally.add(operation, "valid" if attempts == 1 else "repaired")
        return value

    def _complete_json(
        self,
        prompt: str,
        schema: Mapping[str, Any],
        *,
        operation: str,
        system: str | None,
        max_tokens: int | None,
    ) -> tuple[Any, int]:
        """``(value, attempts)``: the validated reply and how many requests it took."""
        current = prompt
        problems: list[str] = []
        reply = ""
        for attempt in range(self.max_repairs + 1):
            _ATTEMPT.value = attempt
            try:
                reply = self._complete_raw(
                    current, operation=operation, system=system, json_schema=schema,
                    max_tokens=max_tokens,
                )
            finally:
                _ATTEMPT.value = 0
            try:
                value = extract_json(reply)
            except LLMOutputError:
                problems = ["the reply is not valid JSON"]
            else:
                problems = validate(value, schema)
                if not problems:
                    return value, attempt + 1
            log.info("llm_json_invalid", operation=operation, attempt=attempt,
                     problems=problems[:3])
            current = repair_prompt(prompt, reply, problems, schema)
        raise LLMOutputError(
            f"{operation}: output invalid after {self.max_repairs} repair(s): "
            + "; ".join(problems[:5]),
            raw=reply[:2000],
        )

    def complete_text(
        self,
        prompt: str,
        *,
        operation: str,
        system: str | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Ask for free text."""
        return self._complete_raw(
            prompt, operation=operation, system=system, json_schema=None, max_tokens=max_tokens
        )
