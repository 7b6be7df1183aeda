"""The LLM judge of QA benchmarks: a fixed, versioned prompt and a binary verdict.

The prompt text lives in ``labile_bench/prompts/judge_v1.txt`` and never
changes under the same version: a new wording is a new file
(``judge_v2.txt``) and a new `JUDGE_PROMPT_VERSION`, so accuracy figures
stay comparable. Reports carry the version and the text's SHA-256.
"""

from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from labile.plugin import LLMClient

__all__ = [
    "JUDGE_PROMPT_VERSION",
    "JUDGE_SCHEMA",
    "judge",
    "judge_prompt_sha256",
    "load_judge_prompt",
    "render_judge_prompt",
]

#: The prompt file used by `judge` (``prompts/<version>.txt``).
JUDGE_PROMPT_VERSION: Final = "judge_v1"

JUDGE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
    "required": ["verdict"],
}

_FIELD = re.compile(r"\{(question|gold|predicted)\}")


@functools.cache
def load_judge_prompt(version: str = JUDGE_PROMPT_VERSION) -> str:
    """The judge prompt template of ``version`` (placeholders ``{question}``, ``{gold}``,
    ``{predicted}``).

    Raises:
        FileNotFoundError: no such version.
    """
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", version):
        raise FileNotFoundError(f"no judge prompt {version!r}")
    path = resources.files("labile_bench.prompts") / f"{version}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"no judge prompt {version!r}")
    return path.read_text(encoding="utf-8")


def judge_prompt_sha256(version: str = JUDGE_PROMPT_VERSION) -> str:
    """SHA-256 of the prompt text, recorded next to accuracy figures."""
    return hashlib.sha256(load_judge_prompt(version).encode("utf-8")).hexdigest()


def render_judge_prompt(
    question: str, gold: str, predicted: str, *, version: str = JUDGE_PROMPT_VERSION
) -> str:
    """The filled-in judge prompt (one pass, so answers cannot inject placeholders)."""
    values = {"question": question.strip(), "gold": str(gold).strip(),
              "predicted": predicted.strip()}
    return _FIELD.sub(lambda m: values[m.group(1)], load_judge_prompt(version))


def judge(
    llm: LLMClient, question: str, gold: str, predicted: str, *,
    version: str = JUDGE_PROMPT_VERSION,
) -> bool:
    """Whether ``predicted`` answers ``question`` as ``gold`` does, per the LLM judge.

    One ``complete_json`` call with operation ``"judge"`` and schema
    `JUDGE_SCHEMA`. An empty prediction is WRONG without a call.

    Returns:
        ``True`` for CORRECT, ``False`` for WRONG.

    Raises:
        LLMOutputError: the judge's reply stayed invalid (callers record an
            error, never a verdict).
        LLMError: the call failed for good.
    """
    if not predicted.strip():
        return False
    reply = llm.complete_json(render_judge_prompt(question, gold, predicted, version=version),
                              JUDGE_SCHEMA, operation="judge")
    return bool(reply["verdict"] == "CORRECT")
